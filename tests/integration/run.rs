//! End-to-end: the `upktgen` binary in its own lab, real packets, real counters.

use crate::common::*;
use std::process::{Command, Stdio};

fn lab_run_delivers_every_packet_and_cleans_up() {
    if !root_or_skip() {
        return;
    }
    let o = upktgen(&["--count", "20000", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j = json(&o);
    let r = &j["outcome"]["result"];
    assert_eq!(r["sent"], 20000);
    assert_eq!(r["errors"], 0);
    assert_eq!(r["pkt_size"], 60);
    assert!(r["elapsed_ns"].as_u64().unwrap() >= r["idle_ns"].as_u64().unwrap());
    assert_eq!(j["reconciliation"]["rx_packets"], 20000, "{j:#}");
    assert_eq!(j["reconciliation"]["tx_packets"], 20000);
    assert_eq!(j["reconciliation"]["lost"], 0);
    assert_eq!(j["outcome"]["stop_reason"], "count");
    assert_eq!(j["backend"]["name"], "af_packet");
    // The XDP drop receiver ran NAPI polls on the receiving end: NET_RX softirqs happened.
    assert!(j["system"]["softirq_net_rx"].as_u64().unwrap() > 0);
    let ns = j["target"]["netns"].as_str().unwrap();
    let rx_ns = j["target"]["rx_netns"].as_str().unwrap();
    assert!(ns.starts_with("upktgen-"));
    assert!(
        !std::path::Path::new("/run/netns").join(ns).exists(),
        "lab {ns} left behind"
    );
    assert!(
        !std::path::Path::new("/run/netns").join(rx_ns).exists(),
        "lab {rx_ns} left behind"
    );
}

fn text_report_has_the_seed_shape() {
    if !root_or_skip() {
        return;
    }
    let o = upktgen(&["run", "--count", "5000", "--per-cpu", "--lab-rx", "stack"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = stdout(&o);
    let lines: Vec<&str> = t.lines().collect();
    assert!(
        lines[0].starts_with("Cpu(s):") && lines[0].ends_with("%st"),
        "{t}"
    );
    assert!(lines[1].starts_with("Cpu0"), "{t}");
    let res = lines
        .iter()
        .position(|l| l.starts_with("Result: OK: "))
        .expect("Result line");
    assert!(lines[res].ends_with("usec, 5000 (60byte,0frags)"), "{t}");
    assert!(
        lines[res + 1].starts_with("  ") && lines[res + 1].ends_with("errors: 0"),
        "{t}"
    );
    assert!(lines[res + 2].starts_with("Interrupts: "), "{t}");
    assert!(
        t.contains("Delivered:   5000 of 5000 sent (100.00 %)"),
        "{t}"
    );
    assert!(t.contains("stops 0, wakes 0"), "{t}");
    assert!(t.contains("Softirqs:    NET_TX"), "{t}");
}

fn rate_limit_follows_an_absolute_schedule() {
    if !root_or_skip() {
        return;
    }
    // 200 packets at 2000 pps: the 200th is due 99.5 ms after the first, so the run cannot
    // be shorter than that, and the rate limiter's sleeps are idle time.
    let o = upktgen(&["--count", "200", "--ratep", "2000", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j = json(&o);
    let r = &j["outcome"]["result"];
    assert_eq!(r["sent"], 200);
    assert!(r["elapsed_ns"].as_u64().unwrap() >= 99_500_000, "{r}");
    assert!(j["outcome"]["pacing_idle_ns"].as_u64().unwrap() > 0);
    assert_eq!(j["reconciliation"]["rx_packets"], 200);
}

fn duration_stops_an_endless_run() {
    if !root_or_skip() {
        return;
    }
    let o = upktgen(&[
        "--count",
        "0",
        "--duration",
        "300ms",
        "--ratep",
        "10000",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j = json(&o);
    assert_eq!(j["outcome"]["stop_reason"], "duration");
    let sent = j["outcome"]["result"]["sent"].as_u64().unwrap();
    // 300 ms at 10 kpps on an absolute schedule: packets 1..=3000 are due by then.
    assert!(sent > 0 && sent <= 3001, "{sent}");
    assert_eq!(j["reconciliation"]["rx_packets"], sent);
}

fn sigint_prints_a_partial_report_and_removes_the_lab() {
    if !root_or_skip() {
        return;
    }
    interrupt_lab_run(&["--count", "0", "--ratep", "100000"]);
}

fn a_killed_runs_lab_is_removed_by_the_next_run() {
    if !root_or_skip() {
        return;
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_upktgen"))
        .args(["--count", "0", "--ratep", "1000"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let prefix = format!("upktgen-{}-", child.id());
    wait_for_traffic(child.id());
    child.kill().unwrap(); // SIGKILL: no cleanup possible
    child.wait().unwrap();
    assert_eq!(
        namespaces_with_prefix(&prefix).len(),
        2,
        "the killed run's lab should still be there"
    );
    let o = upktgen(&["--count", "10"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // This run (or a concurrent test's) swept it.
    assert!(
        namespaces_with_prefix(&prefix).is_empty(),
        "stale lab not removed"
    );
}

pub(crate) const TESTS: &[crate::harness::Test] = crate::tests![
    lab_run_delivers_every_packet_and_cleans_up,
    text_report_has_the_seed_shape,
    rate_limit_follows_an_absolute_schedule,
    duration_stops_an_endless_run,
    sigint_prints_a_partial_report_and_removes_the_lab,
    a_killed_runs_lab_is_removed_by_the_next_run,
];
