//! The far-end agent over real transports: `netns:` (ip netns exec) and `ssh://` (a real
//! OpenSSH server inside the far namespace, reached over a management veth pair), with real
//! frames on a separate data link.

use crate::common::hosts::{self, TwoHosts};
use serde_json::{Value, json};
use std::path::PathBuf;
use upktgen::agent::client::{Peer, Transport};
use upktgen::agent::proto::{RxStart, RxStarted, RxStop};

const BIN: &str = env!("CARGO_BIN_EXE_upktgen");

/// Runs `f` on a thread inside namespace `ns` (children it spawns start there too).
fn in_ns<T: Send + 'static>(ns: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let path = TwoHosts::ns_path(ns);
    std::thread::spawn(move || {
        upktgen::sys::netns::setns_net(&path).unwrap();
        f()
    })
    .join()
    .unwrap()
}

fn transport(uri: &str, agent: &str, ssh_config: Option<PathBuf>) -> Transport {
    Transport {
        uri: uri.parse().unwrap(),
        agent: Some(agent.to_string()),
        ssh_config,
    }
}

/// Sends `count` pktgen frames from a to b on the data link.
fn send(h: &TwoHosts, count: u64) {
    let o = h.run_a_to_b(count, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// A receiver at the far end through `t`, `count` frames sent, its report.
fn receive_through(h: &TwoHosts, t: Transport, count: u64) -> (Value, Value) {
    let a = h.a.clone();
    let mut peer = in_ns(&a, move || Peer::connect(&t).unwrap());
    let before: Value = peer
        .call("counters", &json!({"devs": [hosts::B_DATA]}))
        .unwrap();
    let s: RxStarted = peer
        .call(
            "rx.start",
            &RxStart {
                args: [
                    "--dev",
                    hosts::B_DATA,
                    "--rx-backend",
                    "af_packet",
                    "--expect-first",
                    "1",
                ]
                .map(String::from)
                .to_vec(),
            },
        )
        .unwrap();
    assert_eq!(s.backend, "af_packet");
    send(h, count);
    let report: Value = peer
        .call_within(
            "rx.stop",
            &RxStop {
                id: s.id,
                expected: count,
                settle_ms: 250,
                max_wait_ms: 3000,
            },
            std::time::Duration::from_secs(10),
        )
        .unwrap();
    let after: Value = peer
        .call("counters", &json!({"devs": [hosts::B_DATA]}))
        .unwrap();
    let pid = peer.hello.pid;
    peer.close().unwrap();
    let d = after[hosts::B_DATA]["rx_packets"].as_u64().unwrap()
        - before[hosts::B_DATA]["rx_packets"].as_u64().unwrap();
    // The agent is gone with its session (over ssh too: the "hosts" share this pid space).
    let t0 = std::time::Instant::now();
    while PathBuf::from(format!("/proc/{pid}")).exists() {
        assert!(
            t0.elapsed().as_secs() < 5,
            "agent {pid} outlived its session"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    (report, json!({"rx_packets": d}))
}

fn netns_peer_receives_every_frame_and_reports_it() {
    if !crate::common::root_or_skip() {
        return;
    }
    let h = TwoHosts::new();
    let uri = format!("netns:{}", h.b);
    let (r, c) = receive_through(&h, transport(&uri, BIN, None), 2000);
    assert_eq!(r["sink"]["totals"]["received"], 2000, "{r}");
    assert_eq!(r["sink"]["totals"]["lost"], 0);
    assert!(c["rx_packets"].as_u64().unwrap() >= 2000);
}

fn ssh_peer_receives_every_frame_and_reports_it() {
    if !crate::common::root_or_skip() || !crate::common::ssh_or_skip() {
        return;
    }
    let mut h = TwoHosts::new();
    let cfg = h.start_sshd();
    let (r, _) = receive_through(&h, transport("ssh://far", BIN, Some(cfg)), 2000);
    assert_eq!(r["sink"]["totals"]["received"], 2000, "{r}");
    assert_eq!(r["sink"]["totals"]["lost"], 0);
}

fn connect_error(h: &TwoHosts, t: Transport) -> String {
    let a = h.a.clone();
    match in_ns(&a, move || {
        Peer::connect(&t).map(|_| ()).map_err(|e| format!("{e:#}"))
    }) {
        Ok(()) => panic!("connected"),
        Err(e) => e,
    }
}

fn ssh_failures_are_one_clear_line() {
    if !crate::common::root_or_skip() || !crate::common::ssh_or_skip() {
        return;
    }
    let mut h = TwoHosts::new();
    let cfg = h.start_sshd();
    // No upktgen at the far end.
    let e = connect_error(
        &h,
        transport("ssh://far", "/nonexistent/upktgen", Some(cfg.clone())),
    );
    assert!(e.contains("no upktgen at the far end"), "{e}");
    assert!(e.contains("--peer-agent"), "{e}");
    // A key the server does not know.
    let e = connect_error(
        &h,
        transport("ssh://far", BIN, Some(h.file("ssh_config_refused"))),
    );
    assert!(
        e.contains("ssh failed") && e.contains("Permission denied"),
        "{e}"
    );
    // Another release at the far end.
    let fake = h.file("old-upktgen");
    std::fs::write(
        &fake,
        "#!/bin/sh\nread line\necho '{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"version\":\"0.0.1\",\"protocol\":1}}'\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let e = connect_error(
        &h,
        transport("ssh://far", fake.to_str().unwrap(), Some(cfg.clone())),
    );
    assert!(e.contains("version mismatch"), "{e}");
    assert!(
        e.contains("0.0.1") && e.contains(env!("CARGO_PKG_VERSION")),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
    // An unreachable host (nothing listens on its ssh port any more).
    h.stop_sshd();
    let e = connect_error(&h, transport("ssh://far", BIN, Some(cfg)));
    assert!(
        e.starts_with("peer ssh://far: ssh failed: ") && e.contains("Connection refused"),
        "{e}"
    );
    assert!(e.contains(&h.b_mgmt_ip), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
}

fn netns_failures_are_one_clear_line() {
    if !crate::common::root_or_skip() {
        return;
    }
    let h = TwoHosts::new();
    let e = connect_error(&h, transport("netns:upkt-no-such-ns", BIN, None));
    assert!(e.contains("upkt-no-such-ns"), "{e}");
    let uri = format!("netns:{}", h.b);
    let e = connect_error(&h, transport(&uri, "/nonexistent/upktgen", None));
    assert!(e.contains("no upktgen at the far end"), "{e}");
    // A program that is there but is no upktgen: not "not found", but what it said.
    let e = connect_error(&h, transport(&uri, "/bin/cat", None));
    assert!(!e.contains("not found"), "{e}");
    assert!(e.contains("/bin/cat: agent: No such file"), "{e}");
}

/// The controller's end of the pipe closing (as at a kill -9) ends the agent, and its XDP
/// receiver goes with it.
fn agent_ends_with_its_input_and_leaves_no_xdp_program() {
    if !crate::common::root_or_skip() {
        return;
    }
    let h = TwoHosts::new();
    let mut child = std::process::Command::new("ip")
        .args(["netns", "exec", &h.b, BIN, "agent"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::{BufRead, Write};
    let mut stdin = child.stdin.take().unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let hello = json!({"jsonrpc":"2.0","id":1,"method":"hello",
        "params":{"version":env!("CARGO_PKG_VERSION"),"protocol":upktgen::agent::proto::PROTOCOL}});
    let start = json!({"jsonrpc":"2.0","id":2,"method":"rx.start",
        "params":{"args":["--dev",hosts::B_DATA,"--rx-backend","af_xdp"]}});
    let mut line = String::new();
    for req in [hello, start] {
        writeln!(stdin, "{req}").unwrap();
        line.clear();
        out.read_line(&mut line).unwrap();
        let v: Value = serde_json::from_str(&line).unwrap();
        assert!(v.get("result").is_some(), "{v}");
    }
    let link = h.in_b(&["ip", "link", "show", hosts::B_DATA]);
    assert!(
        String::from_utf8_lossy(&link.stdout).contains("xdp"),
        "no XDP program while receiving"
    );
    drop(stdin);
    let t0 = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(t0.elapsed().as_secs() < 10, "the agent outlived its input");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert!(status.success());
    let link = h.in_b(&["ip", "link", "show", hosts::B_DATA]);
    assert!(
        !String::from_utf8_lossy(&link.stdout).contains("xdp"),
        "XDP program left behind"
    );
}

pub(crate) const TESTS: &[crate::harness::Test] = crate::tests![
    netns_peer_receives_every_frame_and_reports_it,
    ssh_peer_receives_every_frame_and_reports_it,
    ssh_failures_are_one_clear_line,
    netns_failures_are_one_clear_line,
    agent_ends_with_its_input_and_leaves_no_xdp_program,
];
