//! End-to-end: live statistics while a run sends.

use crate::common::{root_or_skip, stderr, stdout, upktgen};

fn json_lines_count_every_frame_and_end_with_a_final_line() {
    if !root_or_skip() {
        return;
    }
    let o = upktgen(&[
        "run",
        "--count",
        "200000",
        "--ratep",
        "200000",
        "--rx-analyze",
        // Paced, and the receiver that buffers most small frames (16 MiB ring): this test
        // is about the live lines adding up, not about a receiver starved by tests beside it.
        "--rx-backend",
        "af_packet",
        "--json-lines",
        "--interval",
        "100ms",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (last, _) = crate::common::live_lines(&o);
    // The final line covers the whole run: every frame, sent and received, no loss.
    assert_eq!(last["tx_packets"], 200_000, "{last}");
    assert_eq!(last["rx_packets"], 200_000, "{last}");
    // The receiver's holes as the report states them (0 unless other load starved it, in
    // which case the socket's drops say so): the final line agrees.
    let out = stdout(&o);
    let seq = out
        .lines()
        .find(|l| l.starts_with("Sequence:"))
        .unwrap_or_else(|| panic!("no Sequence line: {out}"));
    let lost: u64 = seq
        .split("lost ")
        .nth(1)
        .unwrap()
        .split(',')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(last["lost"], lost, "{seq}");
    assert!(
        last["drops"].as_u64().unwrap() >= lost,
        "every hole is a socket drop here: {seq}"
    );
    // The report on standard output is unchanged by the live lines.
    assert!(out.contains("Result: OK: "));
}

fn text_lines_on_request_and_none_by_default_off_a_terminal() {
    if !root_or_skip() {
        return;
    }
    let o = upktgen(&["run", "--count", "1000", "--live"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.lines()
            .any(|l| l.starts_with("live ") && l.ends_with("(whole run)")),
        "{e}"
    );
    assert!(e.contains("tx ") && e.contains("rx "), "{e}");
    let o = upktgen(&["run", "--count", "1000"]);
    assert!(!stderr(&o).contains("live "), "{}", stderr(&o));
}

/// The live lines' Mb/s counts frame bytes as the Result does: 60 bytes a frame, where veth's
/// byte counters count 46.
fn live_mb_s_counts_frame_bytes_as_the_result() {
    if !root_or_skip() {
        return;
    }
    let o = upktgen(&[
        "run",
        "--count",
        "100000",
        "--json",
        "--json-lines",
        "--interval",
        "100ms",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (last, _) = crate::common::live_lines(&o);
    let report = crate::common::json(&o);
    let result = &report["outcome"]["result"];
    assert_eq!(last["tx_packets"], result["sent"], "{last}");
    let f = |v: &serde_json::Value| v.as_f64().unwrap();
    let bytes = f(&last["tx_mbps"]) * 1e6 / 8.0 * f(&last["interval_s"]);
    let per_frame = bytes / f(&last["tx_packets"]);
    assert!(
        (per_frame - f(&result["pkt_size"])).abs() < 1e-6,
        "{per_frame} bytes a frame: {last}"
    );
    // The receiving interface's byte counters give no Mb/s.
    assert!(last["rx_mbps"].is_null(), "{last}");
}

pub(crate) const TESTS: &[crate::harness::Test] = crate::tests![
    live_mb_s_counts_frame_bytes_as_the_result,
    json_lines_count_every_frame_and_end_with_a_final_line,
    text_lines_on_request_and_none_by_default_off_a_terminal,
];
