//! Two-ended runs: `upktgen run --peer URI --peer-dev IFACE` sends on one "host" and
//! receives on another, reached through `netns:` or a real sshd (`ssh://`), with real loss
//! from nftables at the far end; one report reconciles both ends.

use crate::common::hosts::{self, TwoHosts};
use crate::common::{nft, root_or_skip};
use serde_json::Value;
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_upktgen");

/// `upktgen run --dev dat-a ... EXTRA` inside host a, aimed at host b's data address.
fn run_from_a(h: &TwoHosts, count: u32, extra: &[&str]) -> Output {
    h.run_a_to_b(u64::from(count), extra)
}

/// [`run_from_a`] with host b as the far end (`netns:`), its receiver on af_packet.
fn run_to_netns_peer(h: &TwoHosts, count: u32, extra: &[&str]) -> Output {
    let peer = format!("netns:{}", h.b);
    let mut a = vec![
        "--peer",
        &peer,
        "--peer-dev",
        hosts::B_DATA,
        "--rx-backend",
        "af_packet",
    ];
    a.extend_from_slice(extra);
    run_from_a(h, count, &a)
}

fn json_of(o: &Output) -> Value {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&o.stdout)))
}

/// What the far end lost by sequence number (holes + the tail) equals what nftables
/// dropped, and the path names the far interface.
fn check_loss(j: &Value, dropped: u64, sent: u64) {
    let path = &j["rx_analysis"]["path"];
    let lost = path["seq_lost"].as_i64().unwrap() + path["tail_lost"].as_i64().unwrap();
    let dropped_i = dropped as i64;
    assert_eq!(lost, dropped_i, "{path}");
    assert_eq!(path["sent"], sent);
    assert_eq!(
        j["rx_analysis"]["receiver"]["sink"]["totals"]["received"]
            .as_u64()
            .unwrap(),
        sent - dropped
    );
    assert_eq!(j["rx_analysis"]["receiver"]["device"], hosts::B_DATA);
}

fn netns_peer_loss_equals_the_far_nftables_counter() {
    if !root_or_skip() || !nft::nft_or_skip() {
        return;
    }
    let h = TwoHosts::new();
    nft::drop_every_nth(&h.b, "ingress", hosts::B_DATA, 7);
    let peer = format!("netns:{}", h.b);
    let o = run_to_netns_peer(&h, 5000, &["--json"]);
    let j = json_of(&o);
    check_loss(&j, nft::dropped(&h.b), 5000);
    assert_eq!(j["peer"]["clock"]["same_clock"], true);
    // The text report of the same run names both ends.
    let o = run_to_netns_peer(&h, 1000, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(t.contains("Result: OK: "), "{t}");
    assert!(t.contains(&format!("Peer:        {peer}")), "{t}");
    assert!(t.contains(&format!("{} rx_packets", hosts::B_DATA)), "{t}");
    assert!(t.contains("Clock:       one host, one clock"), "{t}");
}

/// The far receiver on AF_XDP: every frame redirected by its program reaches its socket
/// and is counted once (its exact loss accounting is e2e_rx's: here the far end and its
/// clean-up).
fn af_xdp_peer_receives_every_frame_and_leaves_no_program() {
    if !root_or_skip() {
        return;
    }
    let h = TwoHosts::new();
    let peer = format!("netns:{}", h.b);
    let j = json_of(&run_from_a(
        &h,
        4000,
        &[
            "--peer",
            &peer,
            "--peer-dev",
            hosts::B_DATA,
            "--rx-backend",
            "af_xdp",
            "--json",
        ],
    ));
    check_loss(&j, 0, 4000);
    assert_eq!(j["rx_analysis"]["receiver"]["backend"], "af_xdp");
    assert_eq!(j["rx_analysis"]["path"]["xdp_redirected"], 4000);
    assert_eq!(j["rx_analysis"]["path"]["xdp_unaccounted"], 0);
    // Nothing of the far receiver is left on the interface.
    let link = h.in_b(&["ip", "link", "show", hosts::B_DATA]);
    assert!(!String::from_utf8_lossy(&link.stdout).contains("xdp"));
}

/// The live lines of a two-ended run carry the far receiver's figures while it runs (read
/// over the session each interval), and the final line agrees with the far end's report.
fn live_lines_show_the_far_end_receiving() {
    if !root_or_skip() || !nft::nft_or_skip() {
        return;
    }
    let h = TwoHosts::new();
    nft::drop_every_nth(&h.b, "ingress", hosts::B_DATA, 7);
    // 100,000 frames at 50,000 pps: two seconds, eight intervals.
    let o = run_to_netns_peer(
        &h,
        100_000,
        &["--json", "--json-lines", "--interval", "250ms"],
    );
    let j = json_of(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    let (last, rest) = crate::common::live_lines(&o);
    assert!(
        rest.iter()
            .any(|l| l["rx_packets"].as_u64().is_some_and(|n| n > 0)),
        "no live line shows the far end receiving:\n{err}"
    );
    assert!(
        rest.iter()
            .any(|l| l["lost"].as_u64().is_some_and(|n| n > 0)),
        "no live line shows the far end's losses:\n{err}"
    );
    let r = &j["rx_analysis"]["receiver"];
    assert_eq!(last["rx_packets"], r["frames"]["frames"], "{last}");
    assert_eq!(last["lost"], r["sink"]["totals"]["lost"], "{last}");
    assert_eq!(last["drops"], r["ring"]["drops"], "{last}");
    check_loss(&j, nft::dropped(&h.b), 100_000);
}

fn ssh_peer_loss_equals_the_far_nftables_counter() {
    if !root_or_skip() || !crate::common::ssh_or_skip() || !nft::nft_or_skip() {
        return;
    }
    let mut h = TwoHosts::new();
    let cfg = h.start_sshd();
    nft::drop_every_nth(&h.b, "ingress", hosts::B_DATA, 5);
    let o = run_from_a(
        &h,
        3000,
        &[
            "--peer",
            "ssh://far",
            "--ssh-config",
            cfg.to_str().unwrap(),
            "--peer-agent",
            BIN,
            "--peer-dev",
            hosts::B_DATA,
            "--rx-backend",
            "af_packet",
            "--json",
        ],
    );
    let j = json_of(&o);
    check_loss(&j, nft::dropped(&h.b), 3000);
    let c = &j["peer"]["clock"];
    assert_eq!(c["same_clock"], false);
    // One machine underneath: the estimated offset is within its own bound of zero.
    assert!(
        c["offset_ns"].as_i64().unwrap().unsigned_abs()
            <= c["uncertainty_ns"].as_u64().unwrap() + 1_000_000,
        "{c}"
    );
    assert!(c["exchanges"].as_u64().unwrap() >= 8);
}

fn ssh_peer_failures_are_one_line_and_send_nothing() {
    if !root_or_skip() || !crate::common::ssh_or_skip() {
        return;
    }
    let mut h = TwoHosts::new();
    let cfg = h.start_sshd();
    let cfg = cfg.to_str().unwrap().to_string();
    let refused = h.file("ssh_config_refused").to_str().unwrap().to_string();
    for (args, want) in [
        (
            vec!["--ssh-config", &cfg, "--peer-agent", "/nonexistent/upktgen"],
            "no upktgen at the far end",
        ),
        (
            vec!["--ssh-config", &refused, "--peer-agent", BIN],
            "Permission denied",
        ),
    ] {
        let before = crate::common::rx_packets_in(&h.b, hosts::B_DATA).unwrap();
        let mut a = vec!["--peer", "ssh://far", "--peer-dev", hosts::B_DATA];
        a.extend(args);
        let o = run_from_a(&h, 1000, &a);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{e}");
        assert!(e.contains(want), "{e}");
        assert_eq!(
            e.lines().filter(|l| l.starts_with("upktgen:")).count(),
            1,
            "{e}"
        );
        assert!(!e.contains("panicked"), "{e}");
        assert_eq!(
            crate::common::rx_packets_in(&h.b, hosts::B_DATA).unwrap(),
            before,
            "frames were sent"
        );
    }
}

fn bad_peer_options_are_refused() {
    for (args, want) in [
        (vec!["--peer", "netns:x"], "--peer-dev"),
        (vec!["--peer-dev", "x"], "--peer"),
        (
            vec!["--peer", "ssh://-oProxyCommand=x", "--peer-dev", "x"],
            "not a host name",
        ),
        (
            vec!["--peer", "telnet://h", "--peer-dev", "x"],
            "unknown kind of peer",
        ),
        (
            vec!["--peer", "local", "--peer-dev", "x", "--rx-analyze"],
            "--rx-analyze",
        ),
    ] {
        let mut a = vec![
            "run",
            "--dev",
            "lo",
            "--dst",
            "127.0.0.1",
            "--dst-mac",
            "02:00:00:00:00:01",
        ];
        a.extend(&args);
        let o = crate::common::upktgen(&a);
        let e = crate::common::stderr(&o);
        assert!(
            matches!(o.status.code(), Some(1) | Some(2)),
            "{args:?}: {e}"
        );
        assert!(e.contains(want), "{args:?}: {e}");
    }
}

/// A controller killed with SIGKILL mid-run: its far agent sees the end of its input and
/// goes, taking its XDP program along; nothing is left in either namespace.
fn kill_9_of_the_controller_leaves_nothing_at_the_far_end() {
    if !root_or_skip() {
        return;
    }
    let h = TwoHosts::new();
    let peer = format!("netns:{}", h.b);
    let mut child = Command::new("ip")
        .args([
            "netns",
            "exec",
            &h.a,
            BIN,
            "run",
            "--dev",
            hosts::A_DATA,
            "--dst",
            &h.b_ip,
        ])
        .args([
            "--dst-mac",
            hosts::B_MAC,
            "--count",
            "0",
            "--ratep",
            "20000",
        ])
        .args([
            "--peer",
            &peer,
            "--peer-dev",
            hosts::B_DATA,
            "--rx-backend",
            "af_xdp",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait for traffic at the far end, then kill the controller (ip netns exec execs it).
    let t0 = std::time::Instant::now();
    while crate::common::rx_packets_in(&h.b, hosts::B_DATA).unwrap_or(0) < 1000 {
        assert!(t0.elapsed().as_secs() < 20, "no traffic");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let link = h.in_b(&["ip", "link", "show", hosts::B_DATA]);
    assert!(
        String::from_utf8_lossy(&link.stdout).contains("xdp"),
        "the far receiver is not af_xdp"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    let t0 = std::time::Instant::now();
    loop {
        let link = h.in_b(&["ip", "link", "show", hosts::B_DATA]);
        // The agent was the only process in b.
        let pids = Command::new("ip")
            .args(["netns", "pids", &h.b])
            .output()
            .unwrap();
        if !String::from_utf8_lossy(&link.stdout).contains("xdp") && pids.stdout.is_empty() {
            break;
        }
        assert!(
            t0.elapsed().as_secs() < 10,
            "the far end outlived its controller"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

pub(crate) const TESTS: &[crate::harness::Test] = crate::tests![
    netns_peer_loss_equals_the_far_nftables_counter,
    af_xdp_peer_receives_every_frame_and_leaves_no_program,
    live_lines_show_the_far_end_receiving,
    ssh_peer_loss_equals_the_far_nftables_counter,
    ssh_peer_failures_are_one_line_and_send_nothing,
    bad_peer_options_are_refused,
    kill_9_of_the_controller_leaves_nothing_at_the_far_end,
];
