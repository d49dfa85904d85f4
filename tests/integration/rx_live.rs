//! End-to-end: live statistics of `upktgen rx` (its own test binary, so that no other lab
//! test competes with its receiver for the two CPUs).

use crate::common::{root_or_skip, stderr};

fn rx_live_lines_count_what_the_receiver_read() {
    if !root_or_skip() {
        return;
    }
    use std::process::{Command, Stdio};
    use upktgen::lab::{self, Lab, RxMode};
    let lab = Lab::create(RxMode::Stack).unwrap();
    let count = 20_000u64;
    let child = Command::new("ip")
        .args(["netns", "exec", &lab.rx_ns])
        .arg(env!("CARGO_BIN_EXE_upktgen"))
        .args(["rx", "--dev", lab::RX_IF, "--rx-backend", "af_xdp"])
        .args(["--count", &count.to_string(), "--duration", "30s"])
        .args(["--json-lines", "--interval", "100ms", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The receiver is ready once its program is on veth-rx.
    crate::common::wait_for_xdp(&lab.rx_ns, lab::RX_IF);
    let s = crate::common::dev_run(&lab, &["--count", &count.to_string(), "--ratep", "50000"]);
    assert!(s.status.success(), "{}", stderr(&s));
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let (last, rest) = crate::common::live_lines(&o);
    // The receiver's lines: no tx figures; the whole run read every frame, lost none.
    assert!(last["tx_pps"].is_null(), "{last}");
    assert_eq!(last["rx_packets"], count, "{last}");
    assert_eq!(last["lost"], 0);
    assert_eq!(last["drops"], 0);
    let sum: u64 = rest.iter().map(|l| l["rx_packets"].as_u64().unwrap()).sum();
    assert!(
        sum <= count,
        "interval lines add up to at most the whole: {sum}"
    );
    let j = crate::common::json(&o);
    assert_eq!(j["stopped_by"], "count");
    assert_eq!(j["frames"]["pktgen"], count);
}

pub(crate) const TESTS: &[crate::harness::Test] =
    crate::tests![rx_live_lines_count_what_the_receiver_read,];
