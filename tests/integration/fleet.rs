//! End-to-end: synchronised starts (`run --start-at`) and merged results (`upktgen merge`),
//! in private labs on this host.

use crate::common::*;
use serde_json::Value;
use std::process::{Command, Stdio};

/// The start error a run may show, generously: the wait ends on time within microseconds
/// on an idle host; this bound only has to catch a start that did not wait at all (an
/// early start is negative) or waited for something else.
const BOUND_NS: i64 = 50_000_000;

fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

/// Every thread of the run started at the requested instant: not before, and within
/// [`BOUND_NS`] after; returns the requested instant.
fn assert_started_at_the_instant(j: &Value) -> u64 {
    let st = &j["start"];
    let at = st["requested_ns"]
        .as_u64()
        .unwrap_or_else(|| panic!("{j:#}"));
    assert_eq!(
        st["setup_late_ns"], 0,
        "the set-up ended after the instant: {st:#}"
    );
    let threads = st["threads"].as_array().unwrap();
    assert!(!threads.is_empty());
    for t in threads {
        let err = t["error_ns"].as_i64().unwrap_or_else(|| panic!("{st:#}"));
        assert!(err >= 0, "started {err} ns before the instant: {st:#}");
        assert!(err < BOUND_NS, "started {err} ns after the instant: {st:#}");
        assert_eq!(t["first_send_ns"].as_u64().unwrap() as i64 - at as i64, err);
    }
    assert!(st["clock"]["synchronised"].is_boolean(), "{st:#}");
    assert!(!j["host"].as_str().unwrap().is_empty());
    assert_eq!(j["version"], env!("CARGO_PKG_VERSION"));
    at
}

fn start_at_waits_for_the_instant_on_every_thread() {
    if !root_or_skip() {
        return;
    }
    let before = now_ns();
    let o = upktgen(&[
        "run",
        "--start-at",
        "+3s",
        "-t",
        "2",
        "--allow-oversubscribe",
        "--count",
        "2000",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j = json(&o);
    let at = assert_started_at_the_instant(&j);
    assert!(
        at >= before + 3_000_000_000,
        "+3s from before the run: {at} vs {before}"
    );
    assert_eq!(j["start"]["threads"].as_array().unwrap().len(), 2);
    assert_eq!(j["outcome"]["result"]["sent"], 4000);
    // The text report says it too.
    let o = upktgen(&["run", "--start-at", "+3s", "--count", "100"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = stdout(&o);
    assert!(t.contains("\nStart at:    20"), "{t}");
    assert!(t.contains("start error +"), "{t}");
    assert!(t.contains("\nClock sync:  "), "{t}");
}

fn two_runs_with_one_start_at_start_together() {
    if !root_or_skip() {
        return;
    }
    let at = (now_ns() + 4_000_000_000).to_string();
    let spawn = || {
        Command::new(env!("CARGO_BIN_EXE_upktgen"))
            .args(["run", "--start-at", &at, "--count", "5000", "--json"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    assert!(a.status.success(), "{}", stderr(&a));
    assert!(b.status.success(), "{}", stderr(&b));
    let (ja, jb) = (json(&a), json(&b));
    assert_eq!(assert_started_at_the_instant(&ja).to_string(), at);
    assert_eq!(assert_started_at_the_instant(&jb).to_string(), at);
    assert_ne!(ja["target"]["netns"], jb["target"]["netns"]);
}

fn start_at_refusals_exit_non_zero_before_anything_is_made() {
    let past = (now_ns() - 10_000_000_000).to_string();
    for (t, want) in [
        (past.as_str(), "in the past"),
        ("+2h", "at most 3600 s"),
        ("soon", "--start-at \"soon\""),
        ("2026-13-01T00:00:00Z", "month"),
    ] {
        // No root needed: the plan refuses before any privilege is asked for.
        let o = upktgen(&["run", "--start-at", t, "--count", "10"]);
        assert_eq!(o.status.code(), Some(1), "{t}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(e.contains("--start-at") && e.contains(want), "{t}: {e}");
        assert!(o.stdout.is_empty(), "{t}: a report was printed");
        assert!(!e.contains("panicked"), "{e}");
    }
}

fn ctrl_c_ends_the_wait_for_the_instant() {
    if !root_or_skip() {
        return;
    }
    let t0 = std::time::Instant::now();
    let child = Command::new(env!("CARGO_BIN_EXE_upktgen"))
        .args(["run", "--start-at", "+600s", "--count", "10", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Wait until the lab is up (the senders are then set up or nearly so).
    let prefix = format!("upktgen-{pid}-");
    while namespaces_with_prefix(&prefix).len() < 2 {
        assert!(t0.elapsed().as_secs() < 20, "no lab for run {pid}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let st = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let o = child.wait_with_output().unwrap();
    // Long before the instant, ten minutes away.
    assert!(t0.elapsed().as_secs() < 60);
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    if !o.stdout.is_empty() {
        let j = json(&o);
        assert_eq!(j["outcome"]["result"]["sent"], 0, "{j:#}");
        assert_eq!(j["start"]["threads"][0]["error_ns"], Value::Null, "{j:#}");
    }
    assert!(
        namespaces_with_prefix(&prefix).is_empty(),
        "lab left behind"
    );
}

fn merge_of_two_labs_started_together_adds_them_up() {
    if !root_or_skip() {
        return;
    }
    let dir = tmp_dir("fleet", "merge");
    let at = (now_ns() + 4_000_000_000).to_string();
    let spawn = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_upktgen"))
            .args(["run", "--start-at", &at, "--json"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let a = spawn(&["--count", "3000", "--rx-analyze"]);
    let b = spawn(&["--count", "5000", "--pkt-size", "100"]);
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    assert!(a.status.success(), "{}", stderr(&a));
    assert!(b.status.success(), "{}", stderr(&b));
    let (pa, pb) = (dir.join("a.json"), dir.join("b.json"));
    std::fs::write(&pa, &a.stdout).unwrap();
    std::fs::write(&pb, &b.stdout).unwrap();
    let (ja, jb) = (json(&a), json(&b));
    let o = upktgen(&[
        "merge",
        "--json",
        pa.to_str().unwrap(),
        pb.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let m = json(&o);
    let sent = |j: &Value| j["outcome"]["result"]["sent"].as_u64().unwrap();
    assert_eq!(m["total"]["sent"].as_u64(), Some(sent(&ja) + sent(&jb)));
    assert_eq!(m["total"]["sent"], 8000);
    let rx = |j: &Value| j["reconciliation"]["rx_packets"].as_u64().unwrap();
    assert_eq!(
        m["reconciliation"]["rx_packets"].as_u64(),
        Some(rx(&ja) + rx(&jb))
    );
    assert_eq!(m["received"]["received"], 3000, "{m:#}");
    assert_eq!(m["start_at_ns"].as_u64().unwrap().to_string(), at);
    // Elapsed from the earliest start to the latest end: at least each host's own.
    let el = m["total"]["elapsed_ns"].as_u64().unwrap();
    for j in [&ja, &jb] {
        assert!(el >= j["outcome"]["result"]["elapsed_ns"].as_u64().unwrap());
    }
    let skew = m["start_skew_ns"].as_u64().unwrap();
    assert!(skew < BOUND_NS as u64, "{m:#}");
    // The text report.
    let o = upktgen(&["merge", pa.to_str().unwrap(), pb.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = stdout(&o);
    assert!(t.starts_with("Result: OK: "), "{t}");
    // The hosts sent 60- and 100-byte frames: the total says the sizes vary and counts their
    // bytes (issue 20).
    assert!(t.contains(", 8000 (60..100byte,0frags)"), "{t}");
    assert!(t.contains("Merged:      2 sender hosts"), "{t}");
    assert!(
        t.contains("Flagged:     ") && t.contains("100-byte frames"),
        "{t}"
    );
    // Refusals name the file and exit 1.
    let o = upktgen(&["merge", pa.to_str().unwrap(), pa.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("a.json: given twice"), "{}", stderr(&o));
    let dup = dir.join("dup.json");
    std::fs::write(&dup, &a.stdout).unwrap();
    let o = upktgen(&["merge", pa.to_str().unwrap(), dup.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains("dup.json: the same document as") && e.contains("a.json"),
        "{e}"
    );
    let cut = dir.join("cut.json");
    std::fs::write(&cut, &a.stdout[..a.stdout.len() / 3]).unwrap();
    let o = upktgen(&["merge", pb.to_str().unwrap(), cut.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("cut.json: not JSON: EOF while parsing"), "{e}");
    assert!(o.stdout.is_empty());
}

fn a_script_start_waits_for_the_instant() {
    if !root_or_skip() {
        return;
    }
    let dir = tmp_dir("fleet", "script");
    let script = dir.join("one.pg");
    std::fs::write(
        &script,
        "pgctrl reset\nkpktgend_0 add_device eth0\neth0 count 100\npgctrl start\n",
    )
    .unwrap();
    let s = script.to_str().unwrap();
    let o = upktgen(&["script", "--lab", "--start-at", "+3s", "--json", s]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_started_at_the_instant(&json(&o));
    let o = upktgen(&["script", "--lab", "--start-at", "+3h", s]);
    assert_ne!(o.status.code(), Some(0));
    assert!(
        stderr(&o).contains("--start-at \"+3h\" is 10800 s ahead"),
        "{}",
        stderr(&o)
    );
}

pub(crate) const TESTS: &[crate::harness::Test] = crate::tests![
    start_at_waits_for_the_instant_on_every_thread,
    two_runs_with_one_start_at_start_together,
    start_at_refusals_exit_non_zero_before_anything_is_made,
    ctrl_c_ends_the_wait_for_the_instant,
    merge_of_two_labs_started_together_adds_them_up,
    a_script_start_waits_for_the_instant,
];
