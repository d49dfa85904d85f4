//! End-to-end: `xmit_mode netif_receive` — xdp_live's live frames passed (XDP_PASS) into a
//! device's receive path, counted where the stack takes them.
//!
//! Skipped without root, and on a kernel without live frames (before 5.18).

use crate::common::*;
use std::net::UdpSocket;
use std::time::Duration;
use upktgen::lab::{self, Lab, RxMode};
use upktgen::sys::netns;

/// A UDP socket bound in `ns` at the lab's receiving address, port 9, with room for every
/// frame of the run (an skb of a live frame takes a page), so none is lost to a full buffer.
fn socket_in(ns: &std::path::Path) -> UdpSocket {
    netns::in_netns(ns, || {
        let s = UdpSocket::bind((lab::RX_IP, 9))?;
        upktgen::sys::set_rcvbuf_force(std::os::fd::AsFd::as_fd(&s), 64 << 20)?;
        s.set_read_timeout(Some(Duration::from_millis(300)))?;
        Ok(s)
    })
    .unwrap()
}

/// The datagrams waiting at `s`.
fn drain(s: &UdpSocket) -> u64 {
    let mut buf = [0u8; 2048];
    let mut n = 0;
    while s.recv_from(&mut buf).is_ok() {
        n += 1;
    }
    n
}

/// Frames injected into veth-rx inside the lab's receiving namespace reach a UDP socket
/// bound there, and an nftables counter on veth-rx's ingress hook, as many as the report
/// says were sent; the report's IP counters say the same, and its UDP counters show no
/// loss. No --dst-mac: the device's own
/// is taken, so the stack accepts the frames as its host's.
fn frames_injected_into_veth_rx_reach_a_socket_and_the_ingress_hook() {
    if !live_frames_or_skip() || !nft::nft_or_skip() {
        return;
    }
    const N: u64 = 3000;
    let lab = Lab::create(RxMode::Stack).unwrap();
    nft::apply(
        &lab.rx_ns,
        &format!(
            "table netdev upktgen_test {{\n chain ingress {{\n  type filter hook ingress device \"{}\" priority 0; policy accept;\n  udp dport 9 counter\n }}\n}}\n",
            lab::RX_IF
        ),
    );
    let sock = socket_in(&lab.rx_path());
    let n = N.to_string();
    let o = in_ns(
        &lab.rx_ns,
        &[
            "run",
            "--dev",
            lab::RX_IF,
            "--xmit-mode",
            "netif_receive",
            "--dst",
            &lab::RX_IP.to_string(),
            "--src",
            &lab::TX_IP.to_string(),
            "--src-mac",
            &lab::TX_MAC.to_string(),
            "--flag",
            "UDPCSUM",
            "--count",
            &n,
            "--json",
        ],
    );
    let at_socket = drain(&sock);
    assert!(o.status.success(), "{}", stderr(&o));
    let j = json(&o);
    assert_eq!(j["backend"]["name"], "xdp_live", "netif_receive implies it");
    assert_eq!(j["addressing"]["dst_mac"], lab::RX_MAC.to_string());
    let sent = j["outcome"]["result"]["sent"].as_u64().unwrap();
    assert_eq!(sent, N);
    assert_eq!(j["outcome"]["result"]["errors"], 0);
    assert_eq!(at_socket, sent, "datagrams at the socket");
    assert_eq!(
        nft::counter(&lab.rx_ns, "netdev", "upktgen_test"),
        sent,
        "the ingress hook's counter"
    );
    let p = &j["receive_path"];
    assert_eq!(p["device"], lab::RX_IF);
    assert_eq!(p["passed"], sent);
    assert_eq!(p["ip"]["in_receives"], sent, "{p}");
    assert_eq!(p["ip"]["in_delivers"], sent, "{p}");
    // The kernel counts InDatagrams as the application reads: the test read after the run.
    assert_eq!(p["udp"]["in_datagrams"], 0, "{p}");
    for k in ["no_ports", "in_errors", "rcvbuf_errors", "in_csum_errors"] {
        assert_eq!(p["udp"][k], 0, "{k}: {p}");
    }
    // Nothing was transmitted: the interface counts do not stand for a loss.
    assert!(j["reconciliation"]["lost"].is_null());
    assert!(j["reconciliation"]["vanished"].is_null());
}

/// In the private lab the frames enter veth-rx in the receiving namespace as veth-tx would
/// send them; with no socket there the stack counts each as NoPorts. With a destination MAC
/// that is not veth-rx's the stack drops them before IP, and the report says why.
fn in_the_lab_the_receiving_end_takes_the_frames() {
    if !live_frames_or_skip() {
        return;
    }
    let (pid, o) =
        upktgen_with_pid(&["--xmit-mode", "netif_receive", "--count", "20000", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j = json(&o);
    assert_eq!(j["backend"]["name"], "xdp_live");
    assert_eq!(j["target"]["device"], lab::RX_IF);
    assert!(
        j["target"]["netns"].as_str().unwrap().ends_with("-rx"),
        "{}",
        j["target"]
    );
    assert_eq!(j["addressing"]["src_mac"], lab::TX_MAC.to_string());
    assert_eq!(j["addressing"]["src_ip"], lab::TX_IP.to_string());
    assert_eq!(j["outcome"]["result"]["sent"], 20000);
    let p = &j["receive_path"];
    assert_eq!(p["ip"]["in_receives"], 20000, "{p}");
    assert_eq!(p["udp"]["no_ports"], 20000, "{p}");
    assert_eq!(p["udp"]["in_datagrams"], 0, "{p}");
    assert!(namespaces_with_prefix(&format!("upktgen-{pid}-")).is_empty());

    let o = upktgen(&[
        "--xmit-mode",
        "netif_receive",
        "--dst-mac",
        "90:e2:ba:ff:ff:ff",
        "--count",
        "5000",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = stdout(&o);
    assert!(
        t.contains("Receive path: 5000 frames passed into veth-rx's receive path"),
        "{t}"
    );
    assert!(t.contains("IP:         InReceives 0,"), "{t}");
    assert!(
        t.contains("destination MAC 90:e2:ba:ff:ff:ff is not veth-rx's (02:00:00:99:00:02)"),
        "{t}"
    );
}

/// Injected frames count in no interface's counters: the live lines show what the sender
/// passed, paced so that several intervals see frames, and the final line covers them all.
fn the_live_lines_count_the_injected_frames() {
    if !live_frames_or_skip() {
        return;
    }
    let o = upktgen(&[
        "--xmit-mode",
        "netif_receive",
        "--count",
        "30000",
        "--ratep",
        "50000",
        "--json-lines",
        "--interval",
        "100ms",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (last, rest) = live_lines(&o);
    assert_eq!(last["tx_packets"], 30000, "{last}");
    assert!(last["tx_mbps"].as_f64().unwrap() > 0.0, "{last}");
    // A 0.6 s run at 100 ms intervals: most intervals saw frames at about the rate asked.
    let moving = rest
        .iter()
        .filter(|l| l["tx_pps"].as_u64().unwrap() > 10_000)
        .count();
    assert!(moving >= 2, "{}", stderr(&o));
}

/// What netif_receive cannot be: another backend's mode, a drop receiver's or a DUT's.
fn what_netif_receive_cannot_go_with_is_refused() {
    for (args, needle) in [
        (
            &["--backend", "tx_ring", "--xmit-mode", "netif_receive"][..],
            "only xdp_live injects into its receive path",
        ),
        (
            &["--xmit-mode", "netif_receive", "--lab-rx", "drop"][..],
            "--lab-rx drop",
        ),
        (
            &["--xmit-mode", "netif_receive", "--lab", "dut"][..],
            "--xmit-mode netif_receive",
        ),
    ] {
        let o = upktgen(args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stdout(&o));
        let first = stderr(&o).lines().next().unwrap_or("").to_string();
        assert!(first.contains(needle), "{args:?}: {first}");
    }
}

pub(crate) const TESTS: &[crate::harness::Test] = crate::tests![
    frames_injected_into_veth_rx_reach_a_socket_and_the_ingress_hook,
    in_the_lab_the_receiving_end_takes_the_frames,
    the_live_lines_count_the_injected_frames,
    what_netif_receive_cannot_go_with_is_refused,
];
