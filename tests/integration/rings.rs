//! End-to-end: the seed's knob on a real ring. The tx_ring backend's TX ring fills behind a
//! slow qdisc (tbf at 500 kbit/s on veth-tx, qdisc bypass off), completions come back one
//! frame at a time as the qdisc releases them, and the start threshold decides how often
//! the sender is woken. Counted, not timed.

use crate::common::*;
use upktgen::lab::{Lab, RxMode};

/// 1,000 frames at 500 kbit/s: one 60-byte frame every ~1 ms, slow enough that the sender
/// reclaims completions as they come even on a loaded machine (at 4 Mbit/s, one every
/// ~120 us, a sender preempted by other work found several at once and woke for only a
/// fifth of the frames).
const COUNT: u64 = 1000;

fn ring_run(lab: &Lab, start_thresh: u32) -> serde_json::Value {
    let (w, c) = (start_thresh.to_string(), COUNT.to_string());
    let o = dev_run(
        lab,
        &[
            "--count",
            &c,
            "--json",
            "--backend",
            "tx_ring",
            "--ring",
            "64",
            "--stop-thresh",
            "1",
            "--start-thresh",
            &w,
            "--qdisc-bypass",
            "false",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    json(&o)
}

fn start_threshold_divides_the_wakes() {
    if !root_or_skip() {
        return;
    }
    let lab = Lab::create(RxMode::Drop).unwrap();
    slow_tx_link(&lab, "500kbit");
    let no_hyst = ring_run(&lab, 1);
    let hyst = ring_run(&lab, 16);
    for j in [&no_hyst, &hyst] {
        assert_eq!(j["outcome"]["result"]["sent"], COUNT);
        assert_eq!(j["reconciliation"]["tx_packets"], COUNT, "{j}");
        assert_eq!(j["backend"]["name"], "tx_ring");
        assert_eq!(j["outcome"]["backend"]["undrained"], 0);
    }
    let wakes = |j: &serde_json::Value| j["outcome"]["backend"]["queue"]["wakes"].as_u64().unwrap();
    let stops = |j: &serde_json::Value| j["outcome"]["backend"]["queue"]["stops"].as_u64().unwrap();
    let (w1, w16) = (wakes(&no_hyst), wakes(&hyst));
    // Wake at 1 free: a wake every time the sender finds any slot reclaimed — about one per
    // packet on a quiet machine (0.93 measured), fewer when the sender is preempted and finds
    // several at once (0.47 with both CPUs saturated by other work).
    assert!(w1 >= COUNT / 4, "W=1: {w1} wakes for {COUNT} packets");
    // Wake at 16 free: each wake needs 16 reclaimed slots, so at most COUNT/16 (+1), whatever
    // the timing.
    assert!(
        w16 <= COUNT / 16 + 1,
        "W=16: {w16} wakes for {COUNT} packets"
    );
    assert!(
        w16 * 4 <= w1,
        "W=16 ({w16}) should wake far less than W=1 ({w1})"
    );
    assert_eq!(stops(&no_hyst), w1);
    assert_eq!(stops(&hyst), w16);
    // Fewer wakes, fewer kicks: the churn the seed's change removed.
    let kicks = |j: &serde_json::Value| j["outcome"]["backend"]["kicks"].as_u64().unwrap();
    assert!(
        kicks(&hyst) * 4 < kicks(&no_hyst),
        "{} vs {}",
        kicks(&hyst),
        kicks(&no_hyst)
    );
}

fn tx_ring_delivers_every_packet_in_the_lab() {
    if !root_or_skip() {
        return;
    }
    for rx in ["drop", "stack"] {
        let o = upktgen(&[
            "--backend",
            "tx_ring",
            "--count",
            "20000",
            "--lab-rx",
            rx,
            "--flag",
            "UDPCSUM",
            "--json",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let j = json(&o);
        assert_eq!(j["outcome"]["result"]["sent"], 20000);
        assert_eq!(j["reconciliation"]["rx_packets"], 20000, "{j}");
        assert_eq!(j["backend"]["name"], "tx_ring");
    }
}

pub(crate) const TESTS: &[crate::harness::Test] = crate::tests![
    start_threshold_divides_the_wakes,
    tx_ring_delivers_every_packet_in_the_lab,
];
