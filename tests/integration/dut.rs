//! The DUT lab (`--lab dut`): sender -> device under test (a namespace forwarding IPv4 and
//! IPv6 between two veth pairs) -> receiver; losses made in the DUT by nftables rules and tc
//! qdiscs given with `--dut-setup` are named where they happened.

use crate::common::{json, namespaces_with_prefix, nft, root_or_skip, stderr, upktgen};

fn dut_run(extra: &[&str]) -> serde_json::Value {
    let mut a = vec!["run", "--lab", "dut", "--json"];
    a.extend_from_slice(extra);
    let o = upktgen(&a);
    assert!(o.status.success(), "{}", stderr(&o));
    json(&o)
}

fn a_clean_run_reconciles_to_the_packet_through_the_dut() {
    if !root_or_skip() {
        return;
    }
    for extra in [vec![], vec!["--flag", "IPV6"]] {
        let mut a = vec!["--count", "20000"];
        a.extend(&extra);
        let j = dut_run(&a);
        let d = &j["dut"];
        assert_eq!(d["forwarded"], 20000, "{extra:?} {d}");
        // IPv6 may add a neighbour's MLD report for the DUT itself (named, not lost).
        assert_eq!(
            d["ingress_rx_packets"].as_u64().unwrap() - d["to_dut_itself"].as_u64().unwrap(),
            20000,
            "{d}"
        );
        if extra.is_empty() {
            assert_eq!(d["egress_tx_packets"], 20000, "{d}");
            assert_eq!(d["dropped_in_dut"], 0, "{d}");
            assert_eq!(j["rx_iface"]["rx_packets"], 20000, "{j}");
        } else {
            // With IPv6 on, the DUT's own MLD reports may leave by dut-out too.
            assert!(d["egress_tx_packets"].as_u64().unwrap() >= 20000, "{d}");
            assert!(d["dropped_in_dut"].as_i64().unwrap() <= 0, "{d}");
            assert!(
                j["rx_iface"]["rx_packets"].as_u64().unwrap() >= 20000,
                "{j}"
            );
        }
        assert_eq!(j["reconciliation"]["lost"], 0);
    }
}

fn a_forward_chain_drop_is_named_as_dut_loss() {
    if !root_or_skip() || !nft::nft_or_skip() {
        return;
    }
    let setup = "nft add table inet t && nft add chain inet t f '{ type filter hook forward priority 0; }' && \
                 nft add rule inet t f numgen inc mod 10 == 9 counter drop";
    let o = upktgen(&[
        "run",
        "--lab",
        "dut",
        "--count",
        "10000",
        "--dut-setup",
        setup,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = crate::common::stdout(&o);
    // numgen counts every forwarded packet, and only the run's frames cross the DUT: the rule
    // drops exactly one in ten, after the forwarding decision.
    assert!(
        t.contains("dropped in the DUT 1000 = before forwarding 0 + after the forwarding decision 1000 (netfilter"),
        "{t}"
    );
    let j = dut_run(&["--count", "10000", "--dut-setup", setup, "--rx-analyze"]);
    let d = &j["dut"];
    assert_eq!(d["dropped_in_dut"], 1000, "{d}");
    assert_eq!(d["after_forwarding"], 1000, "{d}");
    assert_eq!(d["dropped_uncounted"], 1000, "{d}");
    assert_eq!(d["forwarded"], 10000, "{d}");
    assert_eq!(d["egress_tx_packets"], 9000, "{d}");
    let path = &j["rx_analysis"]["path"];
    assert_eq!(
        path["seq_lost"].as_u64().unwrap() + path["tail_lost"].as_i64().unwrap() as u64,
        1000,
        "{path}"
    );
}

fn a_rate_limit_in_the_dut_shows_its_drops_there() {
    if !root_or_skip() || !nft::nft_or_skip() {
        return;
    }
    // An nftables limit in the forward chain: drops after the forwarding decision.
    let setup = "nft add table inet t && nft add chain inet t f '{ type filter hook forward priority 0; }' && \
                 nft add rule inet t f limit rate over 2000/second burst 100 packets counter drop";
    let j = dut_run(&["--count", "20000", "--ratep", "20000", "--dut-setup", setup]);
    let d = &j["dut"];
    let dropped = d["dropped_in_dut"].as_u64().unwrap();
    assert!(dropped > 10000, "{d}");
    assert_eq!(d["after_forwarding"], dropped, "{d}");
    assert_eq!(d["dropped_uncounted"], dropped);
    assert_eq!(
        j["reconciliation"]["lost"].as_u64().unwrap(),
        dropped,
        "the receiver's loss is the DUT's"
    );
    // A tbf on the DUT's egress: forwarded, then dropped by the qdisc.
    let j = dut_run(&[
        "--count",
        "20000",
        "--ratep",
        "50000",
        "--dut-setup",
        "tc qdisc add dev dut-out root tbf rate 5mbit burst 5kb limit 10kb",
    ]);
    let d = &j["dut"];
    let q = d["egress_qdisc_drops"].as_u64().unwrap();
    assert!(q > 1000, "{d}");
    assert_eq!(d["at_egress"], q, "{d}");
    assert_eq!(d["dropped_in_dut"], q, "{d}");
    assert_eq!(d["forwarded"], 20000, "{d}");
    assert_eq!(j["reconciliation"]["lost"].as_u64().unwrap(), q);
}

fn a_failing_setup_stops_the_run_with_its_message_and_leaves_nothing() {
    if !root_or_skip() {
        return;
    }
    let (pid, o) = crate::common::upktgen_with_pid(&[
        "run",
        "--lab",
        "dut",
        "--count",
        "10",
        "--dut-setup",
        "echo broken >&2; exit 3",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains("--dut-setup") && e.contains("broken") && e.contains("status 3"),
        "{e}"
    );
    // The run's own namespaces (its pid is in their names) are gone.
    assert!(namespaces_with_prefix(&format!("upktgen-{pid}-")).is_empty());
    let f = std::env::temp_dir().join(format!("upkt-dut-setup-{}.sh", std::process::id()));
    std::fs::write(
        &f,
        "set -e\nip link show dut-in >/dev/null\nsysctl -n net.ipv4.ip_forward | grep -q 1\n",
    )
    .unwrap();
    let o = upktgen(&[
        "run",
        "--lab",
        "dut",
        "--count",
        "10",
        "--dut-setup-file",
        f.to_str().unwrap(),
    ]);
    let _ = std::fs::remove_file(&f);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = upktgen(&["run", "--count", "10", "--dut-setup", "true"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--lab dut"), "{}", stderr(&o));
}

/// Drops `lab` and checks that its three namespaces are gone.
fn removed_with_its_namespaces(lab: upktgen::lab::Lab) {
    let names = [
        lab.tx_ns.clone(),
        lab.dut_ns.clone().unwrap(),
        lab.rx_ns.clone(),
    ];
    drop(lab);
    for n in names {
        assert!(
            !std::path::Path::new("/run/netns").join(&n).exists(),
            "{n} left"
        );
    }
}

/// The lab itself, driven through the library and `run --dev` inside its sending namespace:
/// every frame crosses the DUT and reaches the drop receiver; the DUT's path says so.
fn the_dut_lab_forwards_what_is_sent_into_it() {
    if !root_or_skip() {
        return;
    }
    use upktgen::lab::dut::{self, DutOptions};
    use upktgen::lab::{Lab, RxMode};
    use upktgen::report::dut::DutPath;
    let lab = Lab::create_dut(RxMode::Drop, false, 1, &DutOptions::default()).unwrap();
    let before = lab.dut_sample().unwrap().unwrap();
    let o = crate::common::in_ns(
        &lab.tx_ns,
        &[
            "run",
            "--dev",
            "veth-tx",
            "--dst",
            &dut::DUT_RX_IP.to_string(),
            "--dst-mac",
            &dut::DUT_IN_MAC.to_string(),
            "--count",
            "5000",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let after = lab.dut_sample().unwrap().unwrap();
    let p = DutPath::new(dut::DUT_IN_IF, dut::DUT_OUT_IF, 5000, &before, &after);
    assert_eq!(
        (p.ingress_rx_packets, p.forwarded, p.egress_tx_packets),
        (5000, 5000, 5000),
        "{p:?}"
    );
    assert_eq!(p.lost(), 0);
    assert_eq!(lab.rx_sink_count(), Some(5000));
    removed_with_its_namespaces(lab);
}

/// The DUT's delay line (`--dut-delay`), driven through the library: what arrives at veth-rx
/// is what the kernel's forwarding would have sent (dut-out's MAC as source, the receiver's
/// as destination, TTL or hop limit one less, a valid IPv4 checksum), in the order sent, none
/// of it forwarded by the kernel too; the line's counts say so; the lab leaves nothing.
fn the_delay_line_forwards_as_the_kernel_would() {
    if !root_or_skip() {
        return;
    }
    use etherparse::{NetSlice, SlicedPacket};
    use upktgen::lab::dut::{self, DutOptions};
    use upktgen::lab::{Lab, RX_MAC, RxMode};
    use upktgen::wire::PKTGEN_TTL;
    let o = DutOptions {
        ipv6: true,
        delay: Some(std::time::Duration::from_millis(5)),
        ..DutOptions::default()
    };
    let lab = Lab::create_dut(RxMode::Stack, false, 1, &o).unwrap();
    let line = lab.delay_watch().unwrap();
    let mut sent = 0;
    for (dst, six) in [
        (dut::DUT_RX_IP.to_string(), false),
        (dut::DUT_RX_IP6.to_string(), true),
    ] {
        let mac = dut::DUT_IN_MAC.to_string();
        let mut a = vec![
            "run",
            "--dev",
            "veth-tx",
            "--dst-mac",
            &mac,
            "--count",
            "300",
            "--ratep",
            "3000",
        ];
        if six {
            a.extend(["--flag", "IPV6", "--dst6", &dst, "--src6", "fd00:99::1"]);
        } else {
            a.extend(["--dst", &dst]);
        }
        let udp = |f: &[u8]| {
            SlicedPacket::from_ethernet(f)
                .is_ok_and(|p| matches!(p.transport, Some(etherparse::TransportSlice::Udp(_))))
        };
        let (out, frames) = crate::common::capture_frames(&lab, &a, 300, udp);
        assert!(out.status.success(), "{six}: {}", stderr(&out));
        assert_eq!(
            frames.len(),
            300,
            "{six}: every frame through the line, once"
        );
        let mut last_seq = 0;
        for f in &frames {
            let p = SlicedPacket::from_ethernet(f).unwrap();
            let Some(etherparse::LinkSlice::Ethernet2(e)) = p.link else {
                panic!("not Ethernet II")
            };
            assert_eq!(e.source(), dut::DUT_OUT_MAC.0, "{six}");
            assert_eq!(e.destination(), RX_MAC.0, "{six}");
            match p.net {
                Some(NetSlice::Ipv4(ip)) => {
                    assert!(!six);
                    let h = ip.header();
                    assert_eq!(h.ttl(), PKTGEN_TTL - 1);
                    assert_eq!(h.to_header().calc_header_checksum(), h.header_checksum());
                }
                Some(NetSlice::Ipv6(ip)) => {
                    assert!(six);
                    assert_eq!(ip.header().hop_limit(), PKTGEN_TTL - 1);
                }
                _ => panic!("not IP"),
            }
            // pktgen's sequence number, first in the UDP payload after its magic: in order.
            let payload = match &p.transport {
                Some(etherparse::TransportSlice::Udp(u)) => u.payload(),
                _ => unreachable!(),
            };
            let seq = u32::from_be_bytes([payload[4], payload[5], payload[6], payload[7]]);
            assert!(
                seq > last_seq,
                "{six}: seq {seq} after {last_seq}: reordered"
            );
            last_seq = seq;
        }
        sent += 300;
    }
    line.wait_idle();
    let c = line.counts().unwrap();
    // The IPv6 neighbours are static but the stack's own MLD reports may cross dut-in: the
    // line reads them (multicast) and does not route them.
    assert_eq!(c.forwarded, sent, "{c:?}");
    assert_eq!(c.received - c.not_routed, sent, "{c:?}");
    assert_eq!(
        (c.queue_full, c.tap_dropped, c.send_failed),
        (0, 0, 0),
        "{c:?}"
    );
    // The kernel forwarded none of them: what it forwarded came the other way (the
    // receiving stack's ICMP port unreachable, back through dut-out).
    let d = lab.dut_sample().unwrap().unwrap();
    let get = |k: &str| d.snmp.counters.get(k).copied().unwrap_or(0);
    let fwd = get("Ip.ForwDatagrams") + get("Ip6.OutForwDatagrams");
    assert!(fwd <= d.egress.rx_packets as i64, "{fwd} forwarded: {d:?}");
    removed_with_its_namespaces(lab);
}

/// A run through the delay line killed with SIGKILL: the line was a thread of it, so
/// nothing of it runs on (no process in the DUT's namespace), and the next run removes
/// the namespaces.
fn a_killed_run_takes_its_delay_line_with_it() {
    if !root_or_skip() {
        return;
    }
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_upktgen"))
        .args([
            "run",
            "--lab",
            "dut",
            "--dut-delay",
            "20ms",
            "--count",
            "0",
            "--ratep",
            "1000",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let prefix = format!("upktgen-{}-", child.id());
    crate::common::wait_for_traffic(child.id());
    child.kill().unwrap();
    child.wait().unwrap();
    let left = namespaces_with_prefix(&prefix);
    let dut = left
        .iter()
        .find(|n| n.ends_with("-dut"))
        .expect("its DUT namespace");
    assert_eq!(
        upktgen::lab::kill_processes_in(&upktgen::lab::netns_path(dut)),
        0,
        "nothing runs in the killed run's DUT namespace"
    );
    let o = upktgen(&["--count", "10"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        namespaces_with_prefix(&prefix).is_empty(),
        "stale lab not removed"
    );
}

pub(crate) const TESTS: &[crate::harness::Test] = crate::tests![
    the_delay_line_forwards_as_the_kernel_would,
    a_killed_run_takes_its_delay_line_with_it,
    a_clean_run_reconciles_to_the_packet_through_the_dut,
    a_forward_chain_drop_is_named_as_dut_loss,
    a_rate_limit_in_the_dut_shows_its_drops_there,
    a_failing_setup_stops_the_run_with_its_message_and_leaves_nothing,
    the_dut_lab_forwards_what_is_sent_into_it,
];
