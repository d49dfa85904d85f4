//! The server against hostile clients on loopback, with short limits so that each bound is
//! reached quickly. Assertions are on what the clients see (answers, closed connections),
//! with generous bounds for "soon".

use super::*;
use axum::routing::{get, post};
use std::io::{Read, Write};
use std::net::TcpStream as StdStream;
use std::time::Instant as StdInstant;

fn short() -> Limits {
    Limits {
        max_connections: 16,
        header_read_timeout: Duration::from_millis(500),
        idle_timeout: Duration::from_secs(1),
        max_header_bytes: 8 * 1024,
        max_headers: 16,
        max_body_bytes: 1024,
        request_timeout: Duration::from_secs(1),
        shutdown_grace: Duration::from_millis(300),
    }
}

fn app() -> Router {
    Router::new()
        .route("/m", get(|| async { "metrics\n" }))
        .route(
            "/echo",
            post(|b: axum::body::Bytes| async move { format!("{}\n", b.len()) }),
        )
}

fn start(limits: Limits) -> Server {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    Server::start(l, app(), limits, "upktgen-http-test").unwrap()
}

fn connect(s: &Server) -> StdStream {
    let c = StdStream::connect(s.addr()).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    c.set_write_timeout(Some(Duration::from_secs(10))).unwrap();
    c
}

/// Sends `request` on a new connection and reads until the server closes it.
fn exchange(s: &Server, request: &[u8]) -> String {
    let mut c = connect(s);
    c.write_all(request).unwrap();
    let mut r = Vec::new();
    let _ = c.read_to_end(&mut r);
    String::from_utf8_lossy(&r).into_owned()
}

fn get_m(s: &Server) -> String {
    exchange(
        s,
        b"GET /m HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    )
}

fn status(r: &str) -> &str {
    r.split(' ').nth(1).unwrap_or("")
}

/// Reads until EOF or an error (a reset); true when that came before `within`.
fn closed_within(c: &mut StdStream, within: Duration) -> bool {
    let t0 = StdInstant::now();
    let mut buf = [0u8; 65536];
    loop {
        match c.read(&mut buf) {
            _ if t0.elapsed() >= within => return false,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                return false;
            }
            Ok(0) | Err(_) => return true,
            Ok(_) => {}
        }
    }
}

#[test]
fn answers_get_head_404_405_and_413() {
    let s = start(short());
    let ok = get_m(&s);
    assert_eq!(status(&ok), "200", "{ok}");
    assert!(ok.ends_with("\r\n\r\nmetrics\n"), "{ok}");
    let head = exchange(
        &s,
        b"HEAD /m HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(status(&head), "200", "{head}");
    assert!(head.ends_with("\r\n\r\n"), "a body after HEAD: {head}");
    assert_eq!(status(&exchange(&s, b"GET /x HTTP/1.0\r\n\r\n")), "404");
    let post = exchange(&s, b"POST /m HTTP/1.0\r\nContent-Length: 0\r\n\r\n");
    assert_eq!(status(&post), "405", "{post}");
    let big = exchange(
        &s,
        b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\nabc",
    );
    assert_eq!(status(&big), "413", "{big}");
    // A chunked body is cut at the same bound.
    let mut chunked =
        b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for _ in 0..3 {
        chunked.extend_from_slice(b"200\r\n");
        chunked.extend_from_slice(&[b'a'; 0x200]);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    assert_eq!(status(&exchange(&s, &chunked)), "413");
    let small = exchange(
        &s,
        b"POST /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 3\r\n\r\nabc",
    );
    assert_eq!(status(&small), "200", "{small}");
    assert!(small.ends_with("\r\n\r\n3\n"), "{small}");
}

#[test]
fn an_endless_header_is_answered_431_and_closed() {
    let s = start(short());
    let mut c = connect(&s);
    c.write_all(b"GET /m HTTP/1.1\r\nHost: x\r\nX-Endless: ")
        .unwrap();
    // Far more than the bound; the server answers and closes before taking it all.
    let line = [b'a'; 4096];
    for _ in 0..1024 {
        if c.write_all(&line).is_err() {
            break;
        }
    }
    let mut r = Vec::new();
    let _ = c.read_to_end(&mut r);
    let r = String::from_utf8_lossy(&r);
    assert_eq!(status(&r), "431", "{r}");
    // Many fields, each short: the same.
    let mut many = b"GET /m HTTP/1.1\r\nHost: x\r\n".to_vec();
    for i in 0..100 {
        many.extend_from_slice(format!("X-{i}: 1\r\n").as_bytes());
    }
    many.extend_from_slice(b"\r\n");
    assert_eq!(status(&exchange(&s, &many)), "431");
    assert_eq!(status(&get_m(&s)), "200");
}

#[test]
fn a_slow_head_is_answered_408_and_a_silent_client_closed() {
    let s = start(short());
    // A head begun and never finished: 408, then closed.
    let mut slow = connect(&s);
    slow.write_all(b"GET /m HTTP/1.1\r\nHo").unwrap();
    let mut r = String::new();
    let _ = slow.read_to_string(&mut r);
    assert_eq!(status(&r), "408", "{r}");
    // One that never says a word: closed without an answer.
    let mut silent = connect(&s);
    let mut buf = Vec::new();
    let _ = silent.read_to_end(&mut buf);
    assert!(buf.is_empty(), "{}", String::from_utf8_lossy(&buf));
    // A kept-alive connection idle after its answer: closed too.
    let mut ka = connect(&s);
    ka.write_all(b"GET /m HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut got = Vec::new();
    let _ = ka.read_to_end(&mut got);
    let got = String::from_utf8_lossy(&got);
    assert_eq!(status(&got), "200", "{got}");
    assert!(got.ends_with("metrics\n"), "{got}");
}

#[test]
fn a_slow_body_is_answered_408() {
    let s = start(short());
    let mut c = connect(&s);
    c.write_all(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n")
        .unwrap();
    // One byte every 200 ms: bytes keep moving (no idle close), the body never ends in time.
    let mut c2 = c.try_clone().unwrap();
    let writer = std::thread::spawn(move || {
        for _ in 0..50 {
            if c2.write_all(b"a").is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    });
    let mut r = Vec::new();
    let mut buf = [0u8; 1024];
    // The answer comes while the body is still dribbling in.
    while !String::from_utf8_lossy(&r).contains("\r\n\r\n") {
        match c.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => r.extend_from_slice(&buf[..n]),
        }
    }
    let r = String::from_utf8_lossy(&r);
    assert_eq!(status(&r), "408", "{r}");
    drop(c);
    writer.join().unwrap();
}

/// Writes pipelined GETs on a connection and never reads; returns when the server stops
/// taking them (its buffers and ours are full) or after `max` bytes.
fn pipeline_without_reading(c: &mut StdStream, max: usize) -> usize {
    c.set_write_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let req = b"GET /m HTTP/1.1\r\nHost: x\r\n\r\n";
    let mut sent = 0;
    while sent < max {
        match c.write(req) {
            Ok(n) => sent += n,
            Err(_) => break,
        }
    }
    sent
}

/// Keeps writing requests (never reading); true when a write fails (the server closed the
/// connection) before `within`.
fn write_fails_within(c: &mut StdStream, within: Duration) -> bool {
    let t0 = StdInstant::now();
    while t0.elapsed() < within {
        match c.write(b"GET /m HTTP/1.1\r\nHost: x\r\n\r\n") {
            Err(e)
                if !matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                return true;
            }
            _ => {}
        }
    }
    false
}

#[test]
fn a_client_that_does_not_read_stalls_only_itself_and_is_closed_when_idle() {
    let s = start(short());
    let mut hog = connect(&s);
    let sent = pipeline_without_reading(&mut hog, 4 << 20);
    assert!(sent > 0);
    // Others are answered meanwhile.
    for _ in 0..3 {
        assert_eq!(status(&get_m(&s)), "200");
    }
    // Once the server's answers fill the buffers, no byte moves on the hog's connection:
    // closed after the idle timeout (seen, without ever reading, as a write that fails).
    assert!(write_fails_within(&mut hog, Duration::from_secs(60)));
}

#[test]
fn beyond_the_cap_the_least_active_connection_makes_room() {
    let s = start(Limits {
        // Long enough that only the cap closes anything during the test.
        header_read_timeout: Duration::from_secs(60),
        idle_timeout: Duration::from_secs(60),
        ..short()
    });
    // 200 silent connections against a cap of 16.
    let mut idle: Vec<StdStream> = (0..200).map(|_| connect(&s)).collect();
    // A scraper still gets in, at once.
    for _ in 0..3 {
        assert_eq!(status(&get_m(&s)), "200");
    }
    // The first ones were closed to make room; the last 15 or so are still open.
    for c in &mut idle[..100] {
        assert!(closed_within(c, Duration::from_secs(10)));
    }
    let last = idle.last_mut().unwrap();
    last.set_nonblocking(true).unwrap();
    let mut b = [0u8; 1];
    let still_open = matches!(last.read(&mut b), Err(e) if e.kind() == io::ErrorKind::WouldBlock);
    assert!(still_open, "the newest connection was closed");
}

#[test]
fn stop_ends_on_time_whatever_the_clients_do() {
    let mut s = start(Limits {
        header_read_timeout: Duration::from_secs(60),
        idle_timeout: Duration::from_secs(60),
        ..short()
    });
    let addr = s.addr();
    let mut hog = connect(&s);
    pipeline_without_reading(&mut hog, 64 << 20);
    let mut partial = connect(&s);
    partial.write_all(b"GET /m HTTP/1.1\r\nX: ").unwrap();
    let _silent: Vec<StdStream> = (0..10).map(|_| connect(&s)).collect();
    let t0 = StdInstant::now();
    s.stop();
    // The grace (300 ms) and the runtime's 100 ms, with room for a loaded machine.
    assert!(
        t0.elapsed() < Duration::from_secs(3),
        "stop took {:?}",
        t0.elapsed()
    );
    assert!(StdStream::connect(addr).is_err(), "still listening");
    assert!(closed_within(&mut hog, Duration::from_secs(20)));
    assert!(closed_within(&mut partial, Duration::from_secs(5)));
}
