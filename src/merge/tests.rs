//! Merging synthetic documents: the sums, pktgen's arithmetic, the skew, the refusals.

use super::*;
use serde_json::json;

const AT: u64 = 1_796_116_000_000_000_000;

fn result(sent: u64, elapsed_ns: u64, idle_ns: u64) -> Value {
    json!({"elapsed_ns": elapsed_ns, "idle_ns": idle_ns, "sent": sent, "pkt_size": 60,
           "frags": 0, "errors": 0})
}

fn outcome(sent: u64, start: u64, elapsed_ns: u64, idle_ns: u64) -> Value {
    json!({"result": result(sent, elapsed_ns, idle_ns), "start_realtime_ns": start,
           "stop_reason": "count"})
}

fn start(at: u64, first_send: u64, synchronised: bool) -> Value {
    json!({"requested_ns": at, "requested": crate::start_at::format_rfc3339(at),
           "setup_late_ns": 0,
           "threads": [{"device": "eth0", "first_send_ns": first_send,
                        "error_ns": first_send as i64 - at as i64}],
           "clock": {"synchronised": synchronised, "maxerror_us": 10, "esterror_us": 2}})
}

/// A run document of `host`: `sent` packets from `t0` for `elapsed` ns, with --start-at AT.
fn run(host: &str, sent: u64, t0: u64, elapsed: u64, idle: u64) -> Value {
    json!({
        "host": host, "version": crate::report::VERSION,
        "target": {"device": "eth0", "netns": null, "lab_rx": null, "rx_netns": null},
        "outcome": outcome(sent, t0, elapsed, idle),
        "reconciliation": {"sent": sent, "tx_packets": sent, "tx_dropped": 0,
                           "rx_packets": sent, "rx_dropped": 0, "lost": 0, "vanished": null},
        "start": start(AT, t0, true),
    })
}

fn rx(host: &str, received: u64, lost: u64) -> Value {
    use crate::rx::frame::FrameCounters;
    use crate::rx::sink::{FlowKeyMode, Sink};
    let mut r = RxReport {
        host: host.into(),
        version: crate::report::VERSION.into(),
        device: "eth1".into(),
        backend: crate::rx::backend::RxKind::AfPacket,
        mode: "test".into(),
        ring_bytes: 0,
        stopped_by: crate::rx::report::RxStop::Duration,
        elapsed_ns: 1,
        frames: FrameCounters {
            frames: received,
            pktgen: received,
            ..FrameCounters::default()
        },
        ring: crate::sys::rx_ring::RingStats::default(),
        xdp: None,
        sink: Sink::new(FlowKeyMode::Addr, Some(1)).report(false),
        streams: None,
    };
    r.sink.totals.received = received;
    r.sink.totals.lost = lost;
    serde_json::to_value(&r).unwrap()
}

fn docs(vs: &[Value]) -> Vec<(PathBuf, Value)> {
    vs.iter()
        .enumerate()
        .map(|(i, v)| (PathBuf::from(format!("h{i}.json")), v.clone()))
        .collect()
}

fn refused(vs: &[Value]) -> String {
    match merge(&docs(vs)) {
        Ok(m) => panic!("merged: {}", m.text()),
        Err(e) => format!("{e:#}"),
    }
}

#[test]
fn two_hosts_add_up_in_pktgens_arithmetic() {
    // a: 1000 packets from AT+10us for 1 ms; b: 3000 from AT+50us for 2 ms.
    let a = run("a", 1000, AT + 10_000, 1_000_000, 100_000);
    let b = run("b", 3000, AT + 50_000, 2_000_000, 300_000);
    let m = merge(&docs(&[a, b])).unwrap();
    // Elapsed: from a's start to b's end = 50us + 2 ms - 10 us.
    assert_eq!(m.total.elapsed_ns, 2_040_000);
    assert_eq!(m.total.sent, 4000);
    assert_eq!(m.total.idle_ns, 200_000);
    assert_eq!(m.start_skew_ns, 40_000);
    // 4000 * 1e9 / 2_040_000 = 1960784.31 -> 1960784 pps; * 480 bits = 941176320 bps.
    assert_eq!(
        m.total.lines(),
        "OK: 2040(c1840+d200) usec, 4000 (60byte,0frags)\n  1960784pps 941Mb/sec (941176320bps) errors: 0"
    );
    assert_eq!(m.senders[0].result.sent, 1000);
    assert_eq!(m.senders[1].start_error_ns, Some(50_000));
    assert_eq!(m.reconciliation.sent, 4000);
    assert_eq!(m.reconciliation.rx_packets, Some(4000));
    assert_eq!(m.start_at_ns, Some(AT));
    assert!(m.flags.is_empty(), "{:?}", m.flags);
    let t = m.text();
    assert!(
        t.starts_with("Result: OK: 2040(c1840+d200) usec, 4000 (60byte,0frags)\n"),
        "{t}"
    );
    assert!(
        t.contains("  a eth0 [h0.json]: Result: OK: 1000(c900+d100) usec, 1000 (60byte,0frags)"),
        "{t}"
    );
    assert!(
        t.contains("    start error +10.0 us; clock synchronised"),
        "{t}"
    );
    assert!(t.contains("start skew between hosts 40.0 us"), "{t}");
    assert!(t.contains("Reconciled:  sent 4000, tx_packets 4000"), "{t}");
}

#[test]
fn a_multi_thread_host_spans_its_threads() {
    let mut a = run("a", 300, AT + 5, 1000, 0);
    a["threads"] = json!([
        {"device": "eth0@0", "outcome": outcome(100, AT + 5, 1000, 0)},
        {"device": "eth0@1", "outcome": outcome(200, AT + 1, 3000, 0)},
    ]);
    let m = merge(&docs(&[a, run("b", 10, AT + 2, 10, 0)])).unwrap();
    assert_eq!(
        (m.senders[0].start_ns, m.senders[0].end_ns),
        (AT + 1, AT + 3001)
    );
    assert_eq!(
        (m.start_ns, m.end_ns, m.start_skew_ns),
        (AT + 1, AT + 3001, 1)
    );
    assert_eq!(m.total.sent, 310);
}

#[test]
fn receivers_add_up_and_the_missing_are_counted() {
    let m = merge(&docs(&[
        run("a", 1000, AT, 1000, 0),
        run("b", 1000, AT, 1000, 0),
        rx("r1", 990, 10),
        rx("r2", 1000, 0),
    ]))
    .unwrap();
    let r = m.received.as_ref().unwrap();
    assert_eq!(
        (r.receivers, r.received, r.lost, r.missing),
        (2, 1990, 10, 10)
    );
    let t = m.text();
    assert!(
        t.contains("Received:    1990 of 2000 sent (99.50 %) by 2 receivers; lost 10"),
        "{t}"
    );
    assert!(
        t.contains("  r1 eth1 [h2.json]: received 990, lost 10"),
        "{t}"
    );
}

#[test]
fn duplicates_are_refused_naming_both_files() {
    let a = run("a", 1000, AT, 1000, 0);
    let e = refused(&[a.clone(), a.clone()]);
    assert!(
        e.starts_with("h1.json: the same document as h0.json"),
        "{e}"
    );
    // Same host, device and start, other figures: the same run reported twice.
    let mut a2 = a.clone();
    a2["outcome"]["result"]["sent"] = json!(999);
    let e = refused(&[a, a2]);
    assert!(
        e.starts_with("h1.json: the same run as h0.json (a eth0, started at 20"),
        "{e}"
    );
    let e = refused(&[run("a", 1, AT, 1, 0), rx("r", 1, 0), rx("r", 2, 0)]);
    assert!(
        e.starts_with("h2.json: the same receiver as h1.json (r eth1)"),
        "{e}"
    );
}

#[test]
fn other_versions_and_unrelated_runs_are_refused() {
    let mut b = run("b", 1, AT, 1, 0);
    b["version"] = json!("0.0.1");
    let e = refused(&[run("a", 1, AT, 1, 0), b]);
    assert!(
        e.starts_with("h1.json: written by upktgen 0.0.1, but h0.json by upktgen"),
        "{e}"
    );
    let mut b = run("b", 1, AT, 1, 0);
    b.as_object_mut().unwrap().remove("version");
    let e = refused(&[run("a", 1, AT, 1, 0), b]);
    assert!(
        e.starts_with("h1.json: a run document without `version`"),
        "{e}"
    );
    // Another instant, and none.
    let mut b = run("b", 1, AT, 1, 0);
    b["start"] = start(AT + 1_000_000_000, AT, true);
    let e = refused(&[run("a", 1, AT, 1, 0), b.clone()]);
    assert!(
        e.contains("h1.json: --start-at 20") && e.contains("unrelated"),
        "{e}"
    );
    b.as_object_mut().unwrap().remove("start");
    let e = refused(&[run("a", 1, AT, 1, 0), b]);
    assert!(
        e.starts_with("h1.json: no --start-at, but h0.json has --start-at"),
        "{e}"
    );
    // Not a document of ours; only receivers.
    let e = refused(&[json!({"runs": []})]);
    assert!(e.starts_with("h0.json: not a run or rx document"), "{e}");
    let e = refused(&[json!({"header": {"upktgen_ndr": 1, "sizes": [64]}, "results": []})]);
    assert!(e.starts_with("h0.json: an ndr document"), "{e}");
    let e = refused(&[rx("r", 1, 0)]);
    assert!(e.contains("no run document"), "{e}");
    let mut bad = run("a", 1, AT, 1, 0);
    bad["outcome"]["result"]["sent"] = json!("many");
    let e = refused(&[bad]);
    assert!(
        e.starts_with("h0.json: not a run document: invalid type"),
        "{e}"
    );
}

#[test]
fn unsynchronised_starts_and_clocks_are_flagged() {
    let mut a = run("a", 1, AT, 1, 0);
    let mut b = run("b", 1, AT + 7_000_000, 1, 0);
    a.as_object_mut().unwrap().remove("start");
    b.as_object_mut().unwrap().remove("start");
    let m = merge(&docs(&[a, b])).unwrap();
    assert_eq!(m.start_at_ns, None);
    assert_eq!(m.start_skew_ns, 7_000_000);
    assert!(
        m.flags[0].starts_with("h0.json, h1.json: no --start-at in any run"),
        "{:?}",
        m.flags
    );
    assert!(
        m.text()
            .contains("Flagged:     h0.json, h1.json: no --start-at")
    );
    let mut b = run("b", 1, AT, 1, 0);
    b["start"] = start(AT, AT, false);
    b["outcome"]["stop_reason"] = json!("interrupted");
    let m = merge(&docs(&[run("a", 1, AT, 1, 0), b])).unwrap();
    assert!(
        m.flags
            .iter()
            .any(|f| f.starts_with("h1.json: b's clock is not synchronised")),
        "{:?}",
        m.flags
    );
    assert!(
        m.flags
            .iter()
            .any(|f| f == "h1.json: interrupted (a partial run)"),
        "{:?}",
        m.flags
    );
}

#[test]
fn different_frame_sizes_count_each_hosts_bytes() {
    let mut b = run("b", 1000, AT, 1_000_000_000, 0);
    b["outcome"]["result"]["pkt_size"] = json!(1500);
    let m = merge(&docs(&[run("a", 1000, AT, 1_000_000_000, 0), b])).unwrap();
    assert_eq!(m.total.bps(), (1000 * 60 + 1000 * 1500) * 8);
    assert!(
        m.flags[0].starts_with("h1.json: 1500-byte frames"),
        "{:?}",
        m.flags
    );
}

#[test]
fn truncated_and_malformed_files_are_named() {
    let dir = std::env::temp_dir().join(format!("upktgen-merge-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let full = serde_json::to_string(&run("a", 1, AT, 1, 0)).unwrap();
    let cut = dir.join("cut.json");
    std::fs::write(&cut, &full[..full.len() / 2]).unwrap();
    let junk = dir.join("junk.json");
    std::fs::write(&junk, "Result: OK: 1(c1+d0) usec").unwrap();
    let e = format!("{:#}", read_docs(std::slice::from_ref(&cut)).unwrap_err());
    assert!(e.contains("cut.json: not JSON: EOF while parsing"), "{e}");
    let e = format!("{:#}", read_docs(std::slice::from_ref(&junk)).unwrap_err());
    assert!(e.contains("junk.json: not JSON: expected value"), "{e}");
    let e = format!("{:#}", read_docs(&[dir.join("absent.json")]).unwrap_err());
    assert!(e.contains("absent.json"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn schema_versions_are_checked_naming_the_file() {
    use crate::schema;
    // Version 1 (tagged) and version 0 (no `schema`, from before it) merge alike.
    let mut a = run("a", 1000, AT, 1_000_000, 0);
    a["schema"] = json!(schema::RUN);
    let mut r = rx("r", 1000, 0);
    r["schema"] = json!(schema::RX);
    let m = merge(&docs(&[a.clone(), run("b", 1000, AT, 1_000_000, 0), r])).unwrap();
    assert_eq!(m.senders.len(), 2);
    assert_eq!(m.receivers.len(), 1);
    // Version 2 with what it added: the run's streams and the receiver's.
    let mut table = crate::rx::streams::StreamTable::new(2, true).unwrap();
    for seq in 0..10 {
        let sig = crate::wire::signature::Signature {
            stream: 1,
            seq,
            tx_ns: 1,
        };
        table.record(&sig, 60, 2, 0);
    }
    let names = ["a".to_string(), "b".to_string()];
    let report = table.report(&names, 2);
    let tally = crate::stream::multi::Tally::of(&[(0, 0), (10, 600)]);
    let mut a2 = a.clone();
    a2["streams"] = serde_json::to_value(crate::report::streams::StreamsRun::new(
        "f.json".into(),
        ("p1 (lab:tx)".into(), "p2 (lab:rx)".into()),
        (&[0, 1], &names),
        &tally,
        Some(&report),
    ))
    .unwrap();
    let mut r2 = rx("r", 1000, 0);
    r2["schema"] = json!(schema::RX);
    r2["streams"] = serde_json::to_value(&report).unwrap();
    let m2 = merge(&docs(&[a2, run("b", 1000, AT, 1_000_000, 0), r2])).unwrap();
    assert_eq!((m2.senders.len(), m2.receivers.len()), (2, 1));
    assert_eq!(m2.total.sent, m.total.sent);
    // Version 2 of a run (no `dut.delay_line`, from before it) merges alike.
    let mut a2 = run("a", 1000, AT, 1_000_000, 0);
    a2["schema"] = json!("upktgen.run/2");
    let m2 = merge(&docs(&[a2, run("b", 1000, AT, 1_000_000, 0)])).unwrap();
    assert_eq!(m2.total.sent, m.total.sent);
    // Version 1 of a run and a receiver (no `streams`, from before them) merge alike.
    let mut a1 = run("a", 1000, AT, 1_000_000, 0);
    a1["schema"] = json!("upktgen.run/1");
    let mut r1 = rx("r", 1000, 0);
    r1["schema"] = json!("upktgen.rx/1");
    let m1 = merge(&docs(&[a1, run("b", 1000, AT, 1_000_000, 0), r1])).unwrap();
    assert_eq!((m1.senders.len(), m1.receivers.len()), (2, 1));
    assert_eq!(m1.total.sent, m.total.sent);
    // Another major version of a kind merge reads.
    let mut b = run("b", 1000, AT, 1_000_000, 0);
    b["schema"] = json!("upktgen.run/4");
    let e = refused(&[a.clone(), b]);
    assert!(
        e.starts_with("h1.json: a run document of schema version 4 (\"upktgen.run/4\"), written by a newer upktgen"),
        "{e}"
    );
    // The schema decides the kind, over the fields.
    let mut s = run("b", 1000, AT, 1_000_000, 0);
    s["schema"] = json!(schema::SWEEP);
    let e = refused(&[a.clone(), s]);
    assert!(
        e.starts_with("h1.json: a sweep document (\"upktgen.sweep/1\"): merge takes"),
        "{e}"
    );
    let e = refused(&[a.clone(), json!({"schema": schema::NDR_RESULTS})]);
    assert!(e.starts_with("h1.json: an ndr document"), "{e}");
    // A run of several ports is refused, pointing at the run documents inside it (the
    // run/3 report of each sending port, which merge takes).
    let mut ports = json!({"schema": schema::RUN_PORTS, "runs": [{"report": a.clone()}]});
    let e = refused(&[a.clone(), ports.clone()]);
    assert!(
        e.starts_with("h1.json: a run-ports document (\"upktgen.run-ports/1\"): merge takes")
            && e.contains("`runs[].report`"),
        "{e}"
    );
    let inner = ports["runs"][0]["report"].take();
    let mut b = inner;
    b["host"] = json!("b");
    assert_eq!(merge(&docs(&[a.clone(), b])).unwrap().senders.len(), 2);
    let e = refused(&[a, json!({"schema": "upktgen.nosuch/1"})]);
    assert!(
        e.starts_with("h1.json: schema \"upktgen.nosuch/1\": this upktgen"),
        "{e}"
    );
}

#[test]
fn sums_past_u64_are_refused_naming_the_file_never_wrapped() {
    // Two hosts that claim 2^63 packets each: 2^64 does not fit.
    let big = 1u64 << 63;
    let e = refused(&[run("a", big, AT, 1_000, 0), run("b", big, AT + 1, 1_000, 0)]);
    assert!(e.starts_with("h1.json: its sent"), "{e}");
    assert!(e.contains("past 18446744073709551615"), "{e}");
    // Receivers too.
    let e = refused(&[
        run("a", 10, AT, 1_000, 0),
        rx("r1", u64::MAX, 0),
        rx("r2", 1, 0),
    ]);
    assert!(e.starts_with("h2.json: its pktgen frames (1)"), "{e}");
    // A start at the end of time.
    let e = refused(&[run("a", 10, u64::MAX - 5, 1_000, 0)]);
    assert!(e.contains("past 2^64 - 1 ns"), "{e}");
}

#[test]
fn many_documents_merge_in_one_pass() {
    // 3,000 hosts: each duplicate check is a look-up (this took seconds when each document
    // was compared with every earlier one).
    let vs: Vec<Value> = (0..3000)
        .map(|i| run(&format!("h{i}"), 10, AT + i, 1_000, 0))
        .collect();
    let m = merge(&docs(&vs)).unwrap();
    assert_eq!(m.senders.len(), 3000);
    assert_eq!(m.total.sent, 30_000);
    // And a duplicate among them is still found, naming the first.
    let mut vs = vs;
    vs.push(vs[1234].clone());
    let e = refused(&vs);
    assert!(e.contains("the same document as h1234.json"), "{e}");
}
