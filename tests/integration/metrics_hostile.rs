//! End-to-end: hostile HTTP clients against `upktgen run --metrics-listen`, all at once on
//! the lab's sending namespace's loopback: one that pipelines `GET /metrics` without ever
//! reading, one that sends an endless header line, one that sends a POST a byte a second,
//! one that sends a POST's head at once and its body a byte a second, and 1,000 connections
//! held open in silence; beside them a normal scraper. The scraper is
//! answered, the controller's memory stays bounded (VmHWM from /proc), and the run ends on
//! time.

use crate::common::{self, root_or_skip, stderr};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use upktgen::lab::{self, Lab, RxMode};

/// The endpoint's port, on the sending namespace's own loopback.
const PORT: u16 = 19467;

/// The run's length; it must end within this and [`END_SLACK`] from its start.
const DURATION_S: u64 = 10;
/// Set-up, the report and the server's stop (1 s of grace), with room for a loaded machine.
const END_SLACK: Duration = Duration::from_secs(8);

/// The controller's peak RSS may not pass this (the hostile clients grew it past 500 MB
/// when the endpoint buffered what they sent).
const MAX_HWM_KB: u64 = 128 * 1024;

fn addr() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], PORT))
}

/// Runs `f` on a new thread inside the network namespace at `ns`.
fn in_ns<T: Send + 'static>(ns: PathBuf, f: impl FnOnce() -> T + Send + 'static) -> JoinHandle<T> {
    std::thread::spawn(move || {
        upktgen::sys::netns::setns_net(&ns).unwrap();
        f()
    })
}

fn connect() -> Option<TcpStream> {
    let s = TcpStream::connect_timeout(&addr(), Duration::from_secs(2)).ok()?;
    s.set_read_timeout(Some(Duration::from_millis(500))).ok()?;
    s.set_write_timeout(Some(Duration::from_millis(500))).ok()?;
    Some(s)
}

/// One `GET /metrics`: its status code, or None when it failed or took over 5 s.
fn scrape() -> Option<String> {
    let mut s = TcpStream::connect_timeout(&addr(), Duration::from_secs(5)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    s.write_all(b"GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n")
        .ok()?;
    let mut r = Vec::new();
    s.read_to_end(&mut r).ok()?;
    let r = String::from_utf8_lossy(&r);
    if !r.ends_with("# EOF\n") {
        return None;
    }
    r.split(' ').nth(1).map(str::to_string)
}

/// The first status code the server sent on `s` (reading until it comes or `stop`).
fn read_status(s: &mut TcpStream, stop: &AtomicBool) -> Option<String> {
    let mut r = Vec::new();
    let mut buf = [0u8; 4096];
    while !stop.load(Ordering::Relaxed) {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                r.extend_from_slice(&buf[..n]);
                if r.len() >= 12 {
                    break;
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => break,
        }
    }
    let r = String::from_utf8_lossy(&r);
    r.starts_with("HTTP/")
        .then(|| r.split(' ').nth(1).unwrap_or("").to_string())
}

/// Pipelines `GET /metrics` and never reads, reconnecting when closed, until `stop`.
fn pipeliner(stop: Arc<AtomicBool>) -> u64 {
    let req = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n".repeat(64);
    let mut connections = 0;
    while !stop.load(Ordering::Relaxed) {
        let Some(mut s) = connect() else {
            std::thread::sleep(Duration::from_millis(50));
            continue;
        };
        connections += 1;
        while !stop.load(Ordering::Relaxed) {
            match s.write(&req) {
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(_) => break,
            }
        }
    }
    connections
}

/// Sends one endless header line, reconnecting when closed, until `stop`; the statuses the
/// server answered.
fn endless_header(stop: Arc<AtomicBool>) -> Vec<String> {
    let chunk = [b'a'; 65536];
    let mut seen = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        let Some(mut s) = connect() else {
            std::thread::sleep(Duration::from_millis(50));
            continue;
        };
        if s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Endless: ")
            .is_err()
        {
            continue;
        }
        while !stop.load(Ordering::Relaxed) {
            match s.write(&chunk) {
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(_) => break,
            }
        }
        seen.extend(read_status(&mut s, &stop));
    }
    seen
}

/// Sends a POST one byte a second (with `head_at_once`, its head at once and its body a byte
/// a second), reconnecting when closed or answered, until `stop`; the statuses the server
/// answered.
fn slow_post(stop: Arc<AtomicBool>, head_at_once: bool) -> Vec<String> {
    let head = b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n";
    let body = [b'a'; 1000];
    let mut seen = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        let Some(mut s) = connect() else {
            std::thread::sleep(Duration::from_millis(50));
            continue;
        };
        s.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
        let slow = if head_at_once {
            if s.write_all(head).is_err() {
                continue;
            }
            body.to_vec()
        } else {
            [&head[..], &body].concat()
        };
        for b in &slow {
            if stop.load(Ordering::Relaxed) || s.write_all(std::slice::from_ref(b)).is_err() {
                break;
            }
            // Up to a second for an answer: the pace of one byte a second.
            let mut r = [0u8; 64];
            match s.read(&mut r) {
                Ok(0) => break,
                Ok(n) => {
                    let r = String::from_utf8_lossy(&r[..n]);
                    seen.extend(r.split(' ').nth(1).map(str::to_string));
                    break;
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(_) => break,
            }
        }
    }
    seen
}

/// The soft limit on open files of this process.
fn nofile() -> u64 {
    let l = std::fs::read_to_string("/proc/self/limits").unwrap();
    l.lines()
        .find(|l| l.starts_with("Max open files"))
        .and_then(|l| l.split_whitespace().nth(3)?.parse().ok())
        .unwrap_or(1024)
}

/// Kills the run on every path out of the test.
struct Run(Option<Child>);

impl Run {
    fn child(&mut self) -> &mut Child {
        self.0.as_mut().unwrap()
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        if let Some(c) = self.0.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn kb(pid: u32, field: &str) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

pub(crate) const TESTS: &[crate::harness::Test] = crate::tests![
    hostile_clients_neither_stall_the_scraper_nor_grow_the_controller_nor_hold_the_run
];

fn hostile_clients_neither_stall_the_scraper_nor_grow_the_controller_nor_hold_the_run() {
    if !root_or_skip() {
        return;
    }
    let lab = Lab::create(RxMode::Drop).unwrap();
    let ns = lab.tx_path();
    let mac = lab::RX_MAC.to_string();
    let (duration, listen) = (format!("{DURATION_S}s"), addr().to_string());
    let started = Instant::now();
    let mut run = Run(Some(
        Command::new("ip")
            .args(["netns", "exec", &lab.tx_ns, env!("CARGO_BIN_EXE_upktgen")])
            .args([
                "run",
                "--dev",
                lab::TX_IF,
                "--dst",
                "10.99.0.2",
                "--dst-mac",
                &mac,
            ])
            .args(["--duration", &duration, "--ratep", "1000", "--no-live"])
            .args(["--metrics-listen", &listen])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    ));
    let pid = run.child().id();
    // `ip netns exec` execs: the pid is upktgen's.
    let up = in_ns(ns.clone(), || {
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(30) {
            if scrape().as_deref() == Some("200") {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    });
    assert!(up.join().unwrap(), "the endpoint never answered");

    let stop = Arc::new(AtomicBool::new(false));
    // 1,000 silent connections first (fewer if this process may not open them).
    let want = 1000.min(nofile().saturating_sub(200)) as usize;
    let (held_tx, held_rx) = std::sync::mpsc::channel();
    let holder = {
        let stop = Arc::clone(&stop);
        in_ns(ns.clone(), move || {
            let held: Vec<TcpStream> = (0..want).filter_map(|_| connect()).collect();
            held_tx.send(held.len()).unwrap();
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(50));
            }
            drop(held);
        })
    };
    let held = held_rx.recv().unwrap();
    assert!(held >= want / 2, "only {held} of {want} connections");
    let pipe = in_ns(ns.clone(), {
        let stop = Arc::clone(&stop);
        move || pipeliner(stop)
    });
    let header = in_ns(ns.clone(), {
        let stop = Arc::clone(&stop);
        move || endless_header(stop)
    });
    let post = in_ns(ns.clone(), {
        let stop = Arc::clone(&stop);
        move || slow_post(stop, false)
    });
    let body = in_ns(ns.clone(), {
        let stop = Arc::clone(&stop);
        move || slow_post(stop, true)
    });
    // The normal scraper, while the run sends (not into its end).
    let scrape_until = started + Duration::from_secs(DURATION_S - 1);
    let scraper = in_ns(ns.clone(), move || {
        let mut got = Vec::new();
        while Instant::now() < scrape_until {
            let t0 = Instant::now();
            got.push((scrape(), t0.elapsed()));
            std::thread::sleep(Duration::from_millis(200));
        }
        got
    });

    let mut hwm = 0;
    let deadline = Duration::from_secs(DURATION_S) + END_SLACK;
    let status = loop {
        if let Some(st) = run.child().try_wait().unwrap() {
            break Some(st);
        }
        hwm = hwm.max(kb(pid, "VmHWM").unwrap_or(0));
        // Past the bound the test has failed; stop the run before it takes the machine's
        // memory (an endpoint that buffers what it is sent grows by hundreds of MB a second).
        if started.elapsed() > deadline || hwm >= MAX_HWM_KB {
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let ended = started.elapsed();
    stop.store(true, Ordering::Relaxed);
    let scrapes = scraper.join().unwrap();
    let (pipe_conns, header_seen, post_seen, body_seen) = (
        pipe.join().unwrap(),
        header.join().unwrap(),
        post.join().unwrap(),
        body.join().unwrap(),
    );
    holder.join().unwrap();
    let answered = scrapes
        .iter()
        .filter(|(s, _)| s.as_deref() == Some("200"))
        .count();
    let slowest = scrapes.iter().map(|(_, t)| *t).max().unwrap_or_default();
    eprintln!(
        "run ended after {ended:?}, peak RSS {hwm} kB; {held} connections held; the \
         pipeliner used {pipe_conns} connections; the endless header was answered {} times \
         (431: {}), the slow POST {post_seen:?}, the slow body {} times (405: {}); {answered} of {} scrapes answered, the \
         slowest in {slowest:?}",
        header_seen.len(),
        header_seen.iter().filter(|s| *s == "431").count(),
        body_seen.len(),
        body_seen.iter().filter(|s| *s == "405").count(),
        scrapes.len()
    );

    assert!(hwm < MAX_HWM_KB, "peak RSS {hwm} kB");
    let status = status.unwrap_or_else(|| {
        panic!("the run did not end within {deadline:?} of its start (hostile clients attached)")
    });
    let out = run.0.take().unwrap().wait_with_output().unwrap();
    assert!(status.success(), "{}", stderr(&out));
    assert!(
        common::stdout(&out).contains("Result: OK:"),
        "{}",
        common::stdout(&out)
    );
    assert!(scrapes.len() >= 3, "{scrapes:?}");
    assert!(
        scrapes.iter().all(|(s, _)| s.as_deref() == Some("200")),
        "a normal scrape went unanswered beside the hostile clients: {scrapes:?}"
    );
    assert!(hwm > 0, "no VmHWM read for pid {pid}");
    assert!(
        header_seen.iter().any(|s| s == "431"),
        "the endless header was not refused: {header_seen:?}"
    );
    // A POST is refused at its head, whatever its body does.
    assert!(
        body_seen.iter().any(|s| s == "405"),
        "the POST with a slow body was not answered: {body_seen:?}"
    );
}
