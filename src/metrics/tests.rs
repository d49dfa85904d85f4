use super::*;
use crate::rx::frame::FlowAddr;
use std::io::{Read, Write};
use std::net::{Ipv6Addr, TcpListener, TcpStream};

#[test]
fn listen_addresses() {
    let v4 = |a: [u8; 4], p| SocketAddr::new(IpAddr::V4(Ipv4Addr::from(a)), p);
    assert_eq!(parse_listen("9100"), Ok(v4([127, 0, 0, 1], 9100)));
    assert_eq!(parse_listen(" 9100 "), Ok(v4([127, 0, 0, 1], 9100)));
    assert_eq!(parse_listen("0.0.0.0:9100"), Ok(v4([0, 0, 0, 0], 9100)));
    assert_eq!(parse_listen("10.1.2.3:80"), Ok(v4([10, 1, 2, 3], 80)));
    assert_eq!(
        parse_listen("[::1]:9100"),
        Ok(SocketAddr::new(IpAddr::V6(Ipv6Addr::LOCALHOST), 9100))
    );
    for bad in [
        "",
        "abc",
        "127.0.0.1",
        "::1:9100",
        "70000",
        "1.2.3.4:70000",
        "host:9100",
    ] {
        let e = parse_listen(bad).unwrap_err().to_string();
        assert!(e.contains("ADDR:PORT"), "{bad}: {e}");
    }
    for zero in ["0", "127.0.0.1:0", "[::1]:0"] {
        assert!(
            parse_listen(zero).unwrap_err().to_string().contains("port"),
            "{zero}"
        );
    }
}

fn flow(i: u32, seq: SeqCounters) -> FlowReport {
    FlowReport {
        flow: FlowAddr {
            src_ip: Ipv4Addr::from(0x0a00_0000 + i),
            dst_ip: Ipv4Addr::new(10, 99, 0, 2),
            src_port: 0,
            dst_port: 0,
            vlan: (i % 2 == 1).then_some(7),
        },
        first_seq: Some(1),
        last_seq: Some(10),
        seq,
    }
}

fn seq(received: u64, lost: u64, duplicates: u64, reordered: u64) -> SeqCounters {
    SeqCounters {
        received,
        lost,
        duplicates,
        reordered,
        ..SeqCounters::default()
    }
}

#[test]
fn flow_labels_are_bounded_and_the_rest_summed() {
    let flows: Vec<FlowReport> = (0..70u32)
        .map(|i| flow(i, seq(100 + u64::from(i), 1, 2, 3)))
        .collect();
    let b = bounded_flows(&flows);
    assert_eq!(b.len(), MAX_FLOW_LABELS + 1);
    assert_eq!(b[0].0, "10.0.0.0:0 -> 10.99.0.2:0");
    assert_eq!(b[1].0, "10.0.0.1:0 -> 10.99.0.2:0 vlan 7");
    let (name, rest) = &b[MAX_FLOW_LABELS];
    assert_eq!(name, OTHER_FLOW);
    // Flows 64..69: received 164 + ... + 169, and six of each other count.
    assert_eq!(rest.received, (164..170).sum::<u64>());
    assert_eq!((rest.lost, rest.duplicates, rest.reordered), (6, 12, 18));
    // At the bound itself, no "other".
    assert_eq!(
        bounded_flows(&flows[..MAX_FLOW_LABELS]).len(),
        MAX_FLOW_LABELS
    );
    // The exposition has as many flow series, and no more.
    let m = Metrics::new();
    m.observe_flows(&flows);
    let text = m.encode(Format::OpenMetrics);
    let series = text
        .lines()
        .filter(|l| l.starts_with("upktgen_rx_flow_received_packets_total{"))
        .count();
    assert_eq!(series, MAX_FLOW_LABELS + 1);
    assert!(text.contains("upktgen_rx_flow_received_packets_total{flow=\"other\"} 999\n"));
}

/// The value of the one sample `name` (with its labels, as printed) in `text`.
fn sample(text: &str, name: &str) -> String {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ').map(str::to_string))
        .unwrap_or_else(|| panic!("no {name} in\n{text}"))
}

#[test]
fn counters_follow_snapshots_and_never_go_back() {
    let m = Metrics::new();
    let frames = |m: &Metrics| sample(&m.encode(Format::OpenMetrics), "upktgen_rx_frames_total");
    let lost = |m: &Metrics| sample(&m.encode(Format::OpenMetrics), "upktgen_rx_lost_packets");
    let t = |frames, lost| RxTotals {
        frames,
        bytes: frames * 60,
        lost,
        drops: 0,
    };
    m.observe_rx(&t(10, 3));
    assert_eq!(frames(&m), "10");
    m.observe_rx(&t(25, 1));
    assert_eq!(frames(&m), "25");
    // A lower snapshot leaves the counter where it was; the gauge of open holes follows.
    m.observe_rx(&t(5, 0));
    assert_eq!(frames(&m), "25");
    assert_eq!(lost(&m), "0");
    m.observe_rx(&t(26, 2));
    assert_eq!(frames(&m), "26");
    assert_eq!(lost(&m), "2");
    // Labelled counters too.
    let c = |packets| IfaceCounters {
        tx_packets: packets,
        tx_bytes: packets * 64,
        ..IfaceCounters::default()
    };
    let key = "upktgen_iface_packets_total{iface=\"veth-tx\",netns=\"ns1\",direction=\"tx\"}";
    m.observe_iface("veth-tx", "ns1", Direction::Tx, &c(100));
    m.observe_iface("veth-tx", "ns1", Direction::Tx, &c(40));
    assert_eq!(sample(&m.encode(Format::OpenMetrics), key), "100");
    m.observe_iface("veth-tx", "ns1", Direction::Tx, &c(140));
    assert_eq!(sample(&m.encode(Format::OpenMetrics), key), "140");
}

#[test]
fn a_second_run_adds_to_the_first() {
    // An agent runs several times in one process; each run's totals start at 0.
    let m = Metrics::new();
    let thread = |packets| ThreadTotals {
        packets,
        ..ThreadTotals::default()
    };
    let key = "upktgen_thread_sent_packets_total{thread=\"veth-tx\"}";
    m.begin_run();
    m.observe_thread("veth-tx", &thread(1000));
    m.begin_run();
    m.observe_thread("veth-tx", &thread(300));
    assert_eq!(sample(&m.encode(Format::OpenMetrics), key), "1300");
    m.observe_thread("veth-tx", &thread(200));
    assert_eq!(sample(&m.encode(Format::OpenMetrics), key), "1300");
    m.observe_thread("veth-tx", &thread(500));
    assert_eq!(sample(&m.encode(Format::OpenMetrics), key), "1500");
}

/// Every family observed once.
fn full() -> Metrics {
    let m = Metrics::new();
    m.observe_thread(
        "veth-tx@0",
        &ThreadTotals {
            packets: 1000,
            bytes: 60_000,
            errors: 1,
            queue_stops: 4,
            queue_wakes: 4,
            late_ns: Some([1_000, 20_000, 1_500_000]),
        },
    );
    m.observe_iface("veth-tx", "", Direction::Tx, &IfaceCounters::default());
    m.observe_rx(&RxTotals::default());
    m.observe_flows(&[flow(0, seq(1000, 0, 0, 0))]);
    m.observe_streams(&streams_table(2));
    m.observe_cpu_busy(0.25);
    m.set_state(RunState::Running);
    m
}

#[test]
fn exposition_has_every_family_and_ends_with_eof() {
    let text = full().encode(Format::OpenMetrics);
    assert!(text.ends_with("# EOF\n"), "{text}");
    for f in FAMILIES {
        assert!(
            text.contains(&format!("# TYPE {f} ")),
            "no family {f} in\n{text}"
        );
        assert!(text.contains(&format!("# HELP {f} ")), "no help for {f}");
    }
    let types = text.lines().filter(|l| l.starts_with("# TYPE ")).count();
    assert_eq!(types, FAMILIES.len(), "FAMILIES lists every family");
    for (sample_name, v) in [
        (
            "upktgen_thread_sent_packets_total{thread=\"veth-tx@0\"}",
            "1000",
        ),
        (
            "upktgen_thread_sent_bytes_total{thread=\"veth-tx@0\"}",
            "60000",
        ),
        (
            "upktgen_thread_queue_stops_total{thread=\"veth-tx@0\"}",
            "4",
        ),
        (
            "upktgen_thread_pacing_late_p99_seconds{thread=\"veth-tx@0\"}",
            "2e-5",
        ),
        (
            "upktgen_thread_pacing_late_max_seconds{thread=\"veth-tx@0\"}",
            "0.0015",
        ),
        ("upktgen_cpu_busy_ratio", "0.25"),
        ("upktgen_state{state=\"running\"}", "1"),
        ("upktgen_state{state=\"starting\"}", "0"),
        ("upktgen_build_info{version=\"0.1.0\"}", "1"),
    ] {
        let got = sample(&text, sample_name);
        assert!(
            got.parse::<f64>().unwrap() == v.parse::<f64>().unwrap(),
            "{sample_name}: {got}, not {v}"
        );
    }
    assert!(text.contains("# UNIT upktgen_rx_bytes bytes\n"));
    // The Prometheus text variant carries the same series, without OpenMetrics' EOF.
    let p = full().encode(Format::PrometheusText);
    assert!(!p.contains("# EOF"));
    assert!(p.contains("# TYPE upktgen_rx_frames_total counter\n"));
    assert!(p.contains("upktgen_thread_sent_packets_total{thread=\"veth-tx@0\"} 1000\n"));
}

#[test]
fn families_nobody_fed_are_not_shown() {
    let m = Metrics::new();
    m.observe_thread("veth-tx", &ThreadTotals::default());
    let text = m.encode(Format::OpenMetrics);
    assert!(text.contains("upktgen_thread_sent_packets_total{thread=\"veth-tx\"} 0\n"));
    // A run without a receiver has no receiver figures (not zeros), and no CPU figure until
    // one is read; the state and build info are always there.
    for absent in [
        "upktgen_rx_",
        "upktgen_cpu_busy_ratio ",
        "pacing_late_p50_seconds{",
    ] {
        assert!(!text.contains(absent), "{absent} in\n{text}");
    }
    assert!(text.contains("upktgen_state{state=\"starting\"} 1\n"));
    assert!(text.contains("upktgen_build_info{version="));
}

#[test]
fn readme_lists_every_family() {
    let readme = include_str!("../../docs/live.md");
    for f in FAMILIES {
        assert!(readme.contains(f), "docs/live.md does not name {f}");
    }
}

#[test]
fn accept_header_picks_the_format() {
    use Format::*;
    assert_eq!(Format::from_accept(None), OpenMetrics);
    assert_eq!(Format::from_accept(Some("*/*")), OpenMetrics);
    assert_eq!(
        Format::from_accept(Some(
            "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
        )),
        OpenMetrics
    );
    assert_eq!(
        Format::from_accept(Some("text/plain; version=0.0.4")),
        PrometheusText
    );
    assert_eq!(OpenMetrics.content_type(), CONTENT_TYPE);
}

/// One HTTP/1.0 request to `addr`; the whole response.
fn http(addr: SocketAddr, method: &str, path: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(s, "{method} {path} HTTP/1.0\r\nHost: x\r\n\r\n").unwrap();
    let mut r = String::new();
    s.read_to_string(&mut r).unwrap();
    r
}

fn status(response: &str) -> &str {
    response.split(' ').nth(1).unwrap_or("")
}

#[test]
fn endpoint_serves_get_metrics_only_and_stops_on_drop() {
    let e = Endpoint::start("127.0.0.1:0".parse().unwrap(), Duration::ZERO).unwrap();
    let addr = e.addr();
    assert_ne!(addr.port(), 0);
    e.metrics().observe_rx(&RxTotals {
        frames: 7,
        ..RxTotals::default()
    });
    let ok = http(addr, "GET", "/metrics");
    assert_eq!(status(&ok), "200", "{ok}");
    assert!(
        ok.contains(&format!("Content-Type: {CONTENT_TYPE}\r\n")),
        "{ok}"
    );
    assert!(ok.contains("upktgen_rx_frames_total 7\n"));
    assert!(ok.contains("upktgen_state{state=\"starting\"} 1\n"));
    assert!(ok.ends_with("# EOF\n"));
    assert_eq!(status(&http(addr, "GET", "/")), "404");
    assert_eq!(status(&http(addr, "GET", "/metricsx")), "404");
    let post = http(addr, "POST", "/metrics");
    assert_eq!(status(&post), "405", "{post}");
    assert!(post.contains("Allow: GET, HEAD\r\n"), "{post}");
    // A probe runs before each scrape.
    let n = Arc::new(AtomicU64::new(0));
    let n2 = Arc::clone(&n);
    e.add_probe(Box::new(move |m: &Metrics| {
        let v = n2.fetch_add(10, Ordering::Relaxed) + 10;
        m.observe_rx(&RxTotals {
            frames: v,
            ..RxTotals::default()
        });
    }));
    assert!(http(addr, "GET", "/metrics").contains("upktgen_rx_frames_total 10\n"));
    assert!(http(addr, "GET", "/metrics?x=1").contains("upktgen_rx_frames_total 20\n"));
    drop(e);
    // The listening socket is closed once the drop returns.
    let t0 = std::time::Instant::now();
    while TcpStream::connect(addr).is_ok() {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "still listening after drop"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_port_in_use_is_one_clear_error() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap();
    let e = Endpoint::start(addr, Duration::ZERO)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.starts_with(&format!("--metrics-listen {addr}: cannot listen")),
        "{e}"
    );
    assert!(e.contains("another process listens there"), "{e}");
    assert!(!e.contains('\n'));
}

use std::sync::Arc;

#[test]
fn a_signal_during_the_linger_ends_it() {
    use std::sync::atomic::AtomicBool;
    let e = Endpoint::start("127.0.0.1:0".parse().unwrap(), Duration::from_secs(3600)).unwrap();
    let addr = e.addr();
    // The run was ended by a Ctrl-C: the flag is already set when the linger begins.
    let stop = Arc::new(AtomicBool::new(true));
    let s2 = Arc::clone(&stop);
    let signal = std::thread::spawn(move || {
        // The linger clears the old signal; it still serves while it lingers; a new
        // signal ends it.
        while s2.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(5));
        }
        let r = http(addr, "GET", "/metrics");
        s2.store(true, Ordering::Relaxed);
        r
    });
    e.linger(&stop);
    assert_eq!(status(&signal.join().unwrap()), "200");
}

#[test]
fn the_receivers_flows_are_live_bounded_and_end_at_the_report() {
    use crate::rx::sink::{FlowKeyMode, Sink, tests::pf};
    let progress = Arc::new(RxProgress::default());
    let mut sink = Sink::new(FlowKeyMode::Addr, Some(1));
    // 70 flows (six beyond the labelled ones), each missing its 5 so far.
    let feed = |sink: &mut Sink, seqs: &[u32]| {
        for i in 0..70u32 {
            for &s in seqs {
                sink.record(&pf((0x0a00_0000 + i).to_be_bytes(), 9, s, (0, 0)), None);
            }
        }
    };
    feed(&mut sink, &[1, 2, 3, 4, 6]);
    let m = Metrics::new();
    let mut probe = rx_probe(Arc::clone(&progress));
    // Nothing published yet: no flow series.
    probe(&m);
    assert!(!m.encode(Format::OpenMetrics).contains("upktgen_rx_flow_"));
    assert!(progress.flows.try_publish(&sink));
    probe(&m);
    let text = m.encode(Format::OpenMetrics);
    let f0 = "{flow=\"10.0.0.0:0 -> 10.0.0.2:0\"}";
    let other = "{flow=\"other\"}";
    let at = |text: &str, family: &str, labels: &str| sample(text, &format!("{family}{labels}"));
    assert_eq!(at(&text, "upktgen_rx_flow_received_packets_total", f0), "5");
    assert_eq!(at(&text, "upktgen_rx_flow_lost_packets", f0), "1");
    assert_eq!(
        at(&text, "upktgen_rx_flow_received_packets_total", other),
        "30"
    );
    assert_eq!(at(&text, "upktgen_rx_flow_lost_packets", other), "6");
    let series = text
        .lines()
        .filter(|l| l.starts_with("upktgen_rx_flow_lost_packets{"))
        .count();
    assert_eq!(series, MAX_FLOW_LABELS + 1);
    // The late 5s arrive (reordered, holes closed), then a duplicate of each 6.
    feed(&mut sink, &[5, 6]);
    assert!(progress.flows.try_publish(&sink));
    probe(&m);
    let text = m.encode(Format::OpenMetrics);
    assert_eq!(at(&text, "upktgen_rx_flow_received_packets_total", f0), "6");
    assert_eq!(at(&text, "upktgen_rx_flow_lost_packets", f0), "0");
    assert_eq!(
        at(&text, "upktgen_rx_flow_reordered_packets_total", f0),
        "1"
    );
    assert_eq!(
        at(&text, "upktgen_rx_flow_duplicate_packets_total", other),
        "6"
    );
    // The report after the last live reading: the same figures, unchanged.
    m.observe_flows(&sink.report(false).flows);
    assert_eq!(m.encode(Format::OpenMetrics), text);
}

/// Writes pipelined `GET /metrics` on a new connection to `addr` and never reads, until
/// `stop` or the server closes it.
fn pipeline_without_reading(addr: SocketAddr, stop: Arc<std::sync::atomic::AtomicBool>) {
    let Ok(mut s) = TcpStream::connect(addr) else {
        return;
    };
    s.set_write_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let req = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n".repeat(64);
    while !stop.load(Ordering::Relaxed) {
        match s.write(&req) {
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return,
        }
    }
}

/// Drops its endpoint on a thread of its own, so that a failed assertion fails the test
/// even when the drop would hang.
struct DropAside(Option<Endpoint>);

impl Drop for DropAside {
    fn drop(&mut self) {
        if let Some(e) = self.0.take() {
            std::thread::spawn(move || drop(e));
        }
    }
}

#[test]
fn hostile_clients_do_not_stall_scrapes_nor_the_endpoints_end() {
    let mut e = DropAside(Some(
        Endpoint::start("127.0.0.1:0".parse().unwrap(), Duration::ZERO).unwrap(),
    ));
    let addr = e.0.as_ref().unwrap().addr();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let hog = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || pipeline_without_reading(addr, stop))
    };
    // An endless header line: refused (431) and closed before it is all sent.
    let mut endless = TcpStream::connect(addr).unwrap();
    endless
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    endless
        .set_write_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    endless
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Endless: ")
        .unwrap();
    let line = [b'a'; 65536];
    for _ in 0..1024 {
        if endless.write_all(&line).is_err() {
            break;
        }
    }
    let mut r = String::new();
    let _ = endless.read_to_string(&mut r);
    assert_eq!(status(&r), "431", "{r}");
    // Beside the hog, scrapes are answered (a read timeout turns a stall into a failure).
    for _ in 0..3 {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(s, "GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n").unwrap();
        let mut r = String::new();
        s.read_to_string(&mut r).unwrap();
        assert_eq!(status(&r), "200", "{r}");
        assert!(r.ends_with("# EOF\n"));
    }
    // HEAD: the same answer without the body.
    let head = http(addr, "HEAD", "/metrics");
    assert_eq!(status(&head), "200", "{head}");
    assert!(head.ends_with("\r\n\r\n"), "{head}");
    // The drop ends the endpoint with the hog still attached (watched from another thread,
    // so that a hang is a failure, not a hung test).
    let (done_tx, done) = std::sync::mpsc::channel();
    let e = e.0.take();
    std::thread::spawn(move || {
        drop(e);
        let _ = done_tx.send(());
    });
    assert!(
        done.recv_timeout(Duration::from_secs(20)).is_ok(),
        "the endpoint did not stop with a client attached that does not read"
    );
    assert!(TcpStream::connect(addr).is_err(), "still listening");
    stop.store(true, Ordering::Relaxed);
    hog.join().unwrap();
}

/// A live table of `n` streams `s0`..: stream i has i + 1 frames of 100 bytes, i open holes
/// and one latency of 4 us per frame (stream 1: one of 2 ms too).
fn streams_table(n: usize) -> crate::rx::streams::LiveTable {
    let t = crate::rx::streams::LiveTable::new((0..n).map(|i| format!("s{i}")).collect());
    for i in 0..n {
        for _ in 0..=i {
            t.add(i, 100);
            t.add_latency(i, 4_000);
        }
        t.set_lost(i, i as u64);
    }
    if n > 1 {
        t.add_latency(1, 2_000_000);
    }
    t
}

#[test]
fn stream_series_are_labelled_by_name_and_id_with_a_histogram() {
    let m = Metrics::new();
    m.observe_streams(&streams_table(3));
    let text = m.encode(Format::OpenMetrics);
    let l = |i: usize| format!("stream=\"s{i}\",id=\"{i}\"");
    assert_eq!(
        sample(
            &text,
            &format!("upktgen_stream_rx_frames_total{{{}}}", l(2))
        ),
        "3"
    );
    assert_eq!(
        sample(&text, &format!("upktgen_stream_rx_bytes_total{{{}}}", l(2))),
        "300"
    );
    assert_eq!(
        sample(&text, &format!("upktgen_stream_lost_packets{{{}}}", l(1))),
        "1"
    );
    // Stream 1: 2 frames at 4 us (the bucket up to 8.192 us) and 1 at 2 ms.
    let h = "upktgen_stream_latency_seconds";
    assert_eq!(sample(&text, &format!("{h}_count{{{}}}", l(1))), "3");
    assert_eq!(
        sample(&text, &format!("{h}_bucket{{le=\"0.000008192\",{}}}", l(1))),
        "2"
    );
    assert_eq!(
        sample(&text, &format!("{h}_bucket{{le=\"+Inf\",{}}}", l(1))),
        "3"
    );
    let sum: f64 = sample(&text, &format!("{h}_sum{{{}}}", l(1)))
        .parse()
        .unwrap();
    assert!((sum - 0.002008).abs() < 1e-12, "{sum}");
    assert!(
        text.contains("# TYPE upktgen_stream_latency_seconds histogram\n"),
        "{text}"
    );
    // Later readings advance the counters.
    let t = streams_table(3);
    for _ in 0..10 {
        t.add(0, 100);
    }
    m.observe_streams(&t);
    let text = m.encode(Format::OpenMetrics);
    assert_eq!(
        sample(
            &text,
            &format!("upktgen_stream_rx_frames_total{{{}}}", l(0))
        ),
        "11"
    );
}

/// 10,000 streams: 64 labelled, one `other` summing the rest: 65 series a family.
#[test]
fn stream_labels_are_bounded_whatever_the_config() {
    let n = 10_000;
    let t = streams_table(n);
    let b = bounded_streams(t.names(), &t.rows());
    assert_eq!(b.len(), MAX_STREAM_LABELS + 1);
    let (labels, rest) = &b[MAX_STREAM_LABELS];
    assert_eq!(
        labels,
        &vec![
            ("stream", OTHER_STREAM.to_string()),
            ("id", format!("64-{}", n - 1))
        ]
    );
    // Streams 64..9999: i + 1 frames and i holes each.
    assert_eq!(rest.frames, (65..=n as u64).sum::<u64>());
    assert_eq!(rest.lost, (64..n as u64).sum::<u64>());
    assert_eq!(
        bounded_streams(
            &t.names()[..MAX_STREAM_LABELS],
            &t.rows()[..MAX_STREAM_LABELS]
        )
        .len(),
        MAX_STREAM_LABELS
    );
    let m = Metrics::new();
    m.observe_streams(&t);
    let text = m.encode(Format::OpenMetrics);
    let frames = text
        .lines()
        .filter(|l| l.starts_with("upktgen_stream_rx_frames_total{"))
        .count();
    assert_eq!(frames, MAX_STREAM_LABELS + 1);
    let buckets = text
        .lines()
        .filter(|l| l.starts_with("upktgen_stream_latency_seconds_bucket{"))
        .count();
    assert_eq!(buckets, (MAX_STREAM_LABELS + 1) * 20, "20 buckets a series");
}

/// Two sending ports' runs on one endpoint: each run's series carry its `port` and
/// `rx_port` first and show its own streams only (the first 64 of them by id, the rest
/// summed with the range of their ids); the host's CPU share and the state are in no scope.
#[test]
fn each_ports_run_has_its_own_labelled_series_and_streams() {
    let m = Metrics::new();
    let t = streams_table(200);
    // p1 sends the even ids, p2 the odd ones.
    let even: Vec<u16> = (0..200).filter(|i| i % 2 == 0).collect();
    let odd: Vec<u16> = (0..200).filter(|i| i % 2 == 1).collect();
    let (a, b) = (
        Scope::port("p1", "p2", &even),
        Scope::port("p2", "p1", &odd),
    );
    for s in [&a, &b] {
        m.observe_streams_in(s, &t);
        m.observe_rx_in(s, &RxTotals::default());
        m.observe_thread_in(s, "va", &ThreadTotals::default());
    }
    m.observe_cpu_busy(0.5);
    let text = m.encode(Format::OpenMetrics);
    assert_eq!(
        sample(
            &text,
            "upktgen_stream_rx_frames_total{port=\"p1\",rx_port=\"p2\",stream=\"s4\",id=\"4\"}"
        ),
        "5"
    );
    assert_eq!(
        sample(
            &text,
            "upktgen_stream_rx_frames_total{port=\"p2\",rx_port=\"p1\",stream=\"s5\",id=\"5\"}"
        ),
        "6"
    );
    // p1's 100 streams: 64 labelled (ids 0 to 126), the other 36 (128 to 198) summed.
    let p1_rest: u64 = (128..200).step_by(2).map(|i| i + 1).sum();
    assert_eq!(
        sample(
            &text,
            "upktgen_stream_rx_frames_total{port=\"p1\",rx_port=\"p2\",stream=\"other\",id=\"128-198\"}"
        ),
        p1_rest.to_string()
    );
    let series = |prefix: &str| text.lines().filter(|l| l.starts_with(prefix)).count();
    assert_eq!(
        series("upktgen_stream_rx_frames_total{port=\"p1\","),
        MAX_STREAM_LABELS + 1
    );
    assert_eq!(
        series("upktgen_stream_rx_frames_total{port=\"p2\","),
        MAX_STREAM_LABELS + 1
    );
    assert_eq!(series("upktgen_stream_rx_frames_total{stream="), 0);
    assert_eq!(
        sample(
            &text,
            "upktgen_thread_sent_packets_total{port=\"p2\",rx_port=\"p1\",thread=\"va\"}"
        ),
        "0"
    );
    assert_eq!(
        sample(&text, "upktgen_rx_frames_total{port=\"p1\",rx_port=\"p2\"}"),
        "0"
    );
    assert_eq!(sample(&text, "upktgen_cpu_busy_ratio"), "0.5");
    // Every stream of a scope without ids (a run alone) is bounded as before.
    let all = bounded_streams_of(t.names(), &t.rows(), None);
    assert_eq!(all, bounded_streams(t.names(), &t.rows()));
    let few = bounded_streams_of(t.names(), &t.rows(), Some(&[3, 7]));
    assert_eq!(few.len(), 2);
    assert_eq!(few[1].0[1], ("id", "7".to_string()));
}

/// A far end's latency buckets that add up past 2^64 - 1 (each below it: a counter at
/// 2^64 - 1 is refused before this): the histogram's cumulative buckets saturate and never
/// wrap, and `_count` is the last of them.
#[test]
fn a_far_ends_huge_latency_counts_saturate_in_the_histogram() {
    let t = crate::rx::streams::LiveTable::new(vec!["far".into()]);
    let mut row = crate::rx::streams::LiveRow {
        frames: 3,
        ..Default::default()
    };
    (row.lat.0[0], row.lat.0[10], row.lat.0[79]) = (1 << 63, 1 << 63, 5);
    t.store(0, &row);
    let m = Metrics::new();
    m.observe_streams(&t);
    let text = m.encode(Format::PrometheusText);
    let buckets: Vec<u64> = text
        .lines()
        .filter(|l| l.starts_with("upktgen_stream_latency_seconds_bucket{"))
        .map(|l| l.rsplit(' ').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(buckets.len(), 20, "{text}");
    assert!(buckets.windows(2).all(|w| w[0] <= w[1]), "{buckets:?}");
    assert_eq!(buckets[0], 1 << 63);
    assert_eq!(buckets[19], u64::MAX);
    assert_eq!(
        sample(
            &text,
            "upktgen_stream_latency_seconds_count{stream=\"far\",id=\"0\"}"
        ),
        u64::MAX.to_string()
    );
}

/// A far end's interface is labelled with its own name and namespace.
#[test]
fn a_far_ends_interface_has_its_own_labels() {
    assert_eq!(
        far_iface_label("netns:upk-b-1", "vb"),
        ("vb".to_string(), "upk-b-1".to_string())
    );
    assert_eq!(
        far_iface_label("local", "eth1"),
        ("eth1".to_string(), netns_name(None))
    );
    assert_eq!(
        far_iface_label("ssh://root@[fd00::2]:22", "eth1"),
        ("eth1".to_string(), String::new())
    );
}
