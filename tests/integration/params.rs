//! End-to-end: pktgen's parameters reach the wire. `upktgen run --dev veth-tx` sends in a lab
//! the test made; a tap (AF_PACKET ETH_P_ALL ring) on veth-rx captures every frame, and an
//! independent parser (etherparse) reads them.

use crate::common::*;
use etherparse::{NetSlice, SlicedPacket, TransportSlice};
use std::time::{Duration, Instant};
use upktgen::lab::{self, Lab, RxMode};
use upktgen::sys::{self, netns, rx_ring::RxRing, rx_ring::RxRingConfig};

/// A frame as captured: bytes and the VLAN id the receiving device moved into metadata.
struct Captured {
    data: Vec<u8>,
    vlan: Option<u16>,
}

/// Opens a tap on veth-rx, runs upktgen with `args` on veth-tx, returns what arrived.
fn capture(lab: &Lab, args: &[&str], want: usize) -> (std::process::Output, Vec<Captured>) {
    let mut ring = netns::in_netns(&lab.rx_path(), || {
        RxRing::open(
            sys::if_nametoindex(lab::RX_IF)?,
            RxRingConfig {
                all_frames: true,
                ..RxRingConfig::default()
            },
        )
    })
    .unwrap();
    let o = dev_run(lab, args);
    let mut got = Vec::new();
    let t0 = Instant::now();
    while got.len() < want && t0.elapsed() < Duration::from_secs(5) {
        ring.wait(50).unwrap();
        while ring
            .next_block(|f, m| {
                got.push(Captured {
                    data: f.to_vec(),
                    vlan: m.vlan,
                })
            })
            .is_some()
        {}
    }
    (o, got)
}

fn lab() -> Lab {
    Lab::create(RxMode::Stack).unwrap()
}

/// UDP frames carrying pktgen's magic, parsed; other traffic (none expected) is skipped.
fn pktgen_frames(c: &[Captured]) -> Vec<SlicedPacket<'_>> {
    c.iter()
        .filter_map(|f| SlicedPacket::from_ethernet(&f.data).ok())
        .filter(|p| {
            matches!(&p.transport, Some(TransportSlice::Udp(u))
                if u.payload().starts_with(&0xbe9b_e955u32.to_be_bytes()))
        })
        .collect()
}

fn udp(p: &SlicedPacket<'_>) -> (u16, u16, u32) {
    let Some(TransportSlice::Udp(u)) = &p.transport else {
        panic!("not udp")
    };
    let seq = u32::from_be_bytes(u.payload()[4..8].try_into().unwrap());
    (u.source_port(), u.destination_port(), seq)
}

fn ranges_walk_as_pktgen_walks_them() {
    if !root_or_skip() {
        return;
    }
    let lab = lab();
    let (o, got) = capture(
        &lab,
        &[
            "--count",
            "12",
            "--dst-min",
            "10.99.0.2",
            "--dst-max",
            "10.99.0.4",
            "--udp-src-min",
            "1000",
            "--udp-src-max",
            "1003",
            "--flag",
            "UDPCSUM",
        ],
        12,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let p = pktgen_frames(&got);
    assert_eq!(p.len(), 12, "every frame captured");
    let dsts: Vec<u8> = p
        .iter()
        .map(|p| match &p.net {
            Some(NetSlice::Ipv4(ip)) => ip.header().destination()[3],
            _ => panic!("not ipv4"),
        })
        .collect();
    // Advanced before each packet: min + 1 first; the IPv4 walk includes max.
    assert_eq!(dsts, [3, 4, 2, 3, 4, 2, 3, 4, 2, 3, 4, 2]);
    let ports: Vec<u16> = p.iter().map(|p| udp(p).0).collect();
    assert_eq!(ports[..6], [1001, 1002, 1000, 1001, 1002, 1000]);
    let seqs: Vec<u32> = p.iter().map(|p| udp(p).2).collect();
    assert_eq!(seqs, (1..=12).collect::<Vec<_>>());
    let j = run_json(
        &lab,
        &[
            "--count",
            "5",
            "--dst-min",
            "10.99.0.2",
            "--dst-max",
            "10.99.0.9",
        ],
    );
    assert_eq!(j["addressing"]["dst_ip"], "10.99.0.2-10.99.0.9");
}

fn run_json(lab: &Lab, args: &[&str]) -> serde_json::Value {
    let mut a = args.to_vec();
    a.push("--json");
    let o = dev_run(lab, &a);
    assert!(o.status.success(), "{}", stderr(&o));
    json(&o)
}

fn vlan_qinq_mpls_and_ipv6_frames() {
    if !root_or_skip() {
        return;
    }
    let lab = lab();
    // VLAN: veth-rx moves the tag into metadata, as a NIC with VLAN offload does.
    let (o, got) = capture(
        &lab,
        &["--count", "5", "--vlan-id", "100", "--vlan-p", "5"],
        5,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(got.len(), 5);
    for f in &got {
        let tag_in_data = f.data[12..14] == [0x81, 0x00];
        let id = f
            .vlan
            .or_else(|| tag_in_data.then(|| u16::from_be_bytes([f.data[14], f.data[15]]) & 0x0fff));
        assert_eq!(id, Some(100));
    }
    // QinQ: the outer tag is 200, the inner 100.
    let (o, got) = capture(
        &lab,
        &["--count", "3", "--vlan-id", "100", "--svlan-id", "200"],
        3,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(got.len(), 3);
    for f in &got {
        let outer = f
            .vlan
            .unwrap_or_else(|| u16::from_be_bytes([f.data[14], f.data[15]]) & 0xfff);
        assert_eq!(outer, 200);
    }
    // MPLS: ethertype 0x8847, the label stack, then IPv4.
    let (o, got) = capture(&lab, &["--count", "4", "--mpls", "0001000a,0002000a"], 4);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(got.len(), 4);
    for f in &got {
        assert_eq!(f.data[12..14], [0x88, 0x47]);
        assert_eq!(f.data[14..22], [0, 1, 0, 0x0a, 0, 2, 1, 0x0a]);
        assert_eq!(f.data[22] >> 4, 4);
    }
    // IPv6 with UDP checksums an independent parser verifies.
    let (o, got) = capture(
        &lab,
        &[
            "--count",
            "6",
            "--dst6",
            "fd00::2",
            "--src6",
            "fd00::1",
            "--traffic-class",
            "2e",
            "--flag",
            "UDPCSUM",
        ],
        6,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let p = pktgen_frames(&got);
    assert_eq!(p.len(), 6);
    for p in &p {
        let Some(NetSlice::Ipv6(ip)) = &p.net else {
            panic!("not ipv6")
        };
        let h = ip.header();
        assert_eq!(
            h.destination_addr(),
            "fd00::2".parse::<std::net::Ipv6Addr>().unwrap()
        );
        assert_eq!(h.traffic_class(), 0x2e);
        let Some(TransportSlice::Udp(u)) = &p.transport else {
            panic!()
        };
        let want = u
            .to_header()
            .calc_checksum_ipv6_raw(h.source(), h.destination(), u.payload())
            .unwrap();
        assert_eq!(u.checksum(), want);
    }
}

/// Variable frame sizes through each backend that fills frames: af_packet (iovec length),
/// tx_ring (tp_len) and af_xdp (descriptor length).
fn sizes_vary_per_frame_on_every_backend() {
    if !root_or_skip() {
        return;
    }
    let lab = lab();
    for backend in ["af_packet", "tx_ring", "af_xdp"] {
        let (o, got) = capture(
            &lab,
            &[
                "--backend",
                backend,
                "--count",
                "8",
                "--min-pkt-size",
                "60",
                "--max-pkt-size",
                "63",
            ],
            8,
        );
        assert!(o.status.success(), "{backend}: {}", stderr(&o));
        let lens: Vec<usize> = got.iter().map(|f| f.data.len()).collect();
        assert_eq!(lens, [61, 62, 63, 60, 61, 62, 63, 60], "{backend}");
        // Every frame parses: lengths in the headers agree with the frame's.
        assert_eq!(pktgen_frames(&got).len(), 8, "{backend}");
    }
}

fn imix_sends_only_its_sizes_and_reports_bytes() {
    if !root_or_skip() {
        return;
    }
    let lab = lab();
    let (o, got) = capture(
        &lab,
        &[
            "--count",
            "400",
            "--imix-weights",
            "64,1 1000,1",
            "--seed",
            "7",
            "--json",
        ],
        400,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(got.len(), 400);
    let small = got.iter().filter(|f| f.data.len() == 64).count();
    let large = got.iter().filter(|f| f.data.len() == 1000).count();
    assert_eq!(small + large, 400);
    assert!(small > 100 && large > 100, "{small} / {large}");
    let j = json(&o);
    assert_eq!(j["seed"], 7);
    assert_eq!(
        j["outcome"]["result"]["imix_bytes"],
        (small * 64 + large * 1000) as u64
    );
}

fn same_seed_same_random_frames() {
    if !root_or_skip() {
        return;
    }
    let lab = lab();
    let args = [
        "--count",
        "20",
        "--udp-dst-min",
        "1",
        "--udp-dst-max",
        "60000",
        "--flag",
        "UDPDST_RND",
        "--flag",
        "NO_TIMESTAMP",
        "--seed",
        "42",
    ];
    let (_, a) = capture(&lab, &args, 20);
    let (_, b) = capture(&lab, &args, 20);
    assert_eq!(a.len(), 20);
    let ports = |c: &[Captured]| {
        pktgen_frames(c)
            .iter()
            .map(|p| udp(p).1)
            .collect::<Vec<_>>()
    };
    assert_eq!(ports(&a), ports(&b));
    let distinct: std::collections::HashSet<u16> = ports(&a).into_iter().collect();
    assert!(distinct.len() > 15, "random ports differ: {distinct:?}");
}

fn burst_keeps_the_requested_rate_and_xdp_live_refuses_what_it_cannot_write() {
    if !root_or_skip() {
        return;
    }
    let lab = lab();
    // 2000 pps in bursts of 10 for 1000 packets: about half a second, not a twentieth.
    let j = run_json(
        &lab,
        &["--count", "1000", "--ratep", "2000", "--burst", "10"],
    );
    let elapsed_ms = j["outcome"]["result"]["elapsed_ns"].as_u64().unwrap() / 1_000_000;
    assert!(
        elapsed_ms >= 400,
        "burst must not multiply the rate: {elapsed_ms} ms"
    );
    // xdp_live writes VLAN tags and the rest of the walk now (issue 16); a burst it has not.
    let o = dev_run(
        &lab,
        &[
            "--backend",
            "xdp_live",
            "--count",
            "5",
            "--vlan-id",
            "3",
            "--burst",
            "4",
        ],
    );
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("--burst: xdp_live has no burst"),
        "{}",
        stderr(&o)
    );
}

/// `-t 2`: two senders named dev@0 and dev@1, each with `count` frames and half the rate,
/// reported one by one and together; the lab's veth pair has a queue per thread.
fn threads_send_count_each_and_share_the_rate() {
    if !root_or_skip() {
        return;
    }
    let o = upktgen(&[
        "run",
        "-t",
        "2",
        "--count",
        "400",
        "--ratep",
        "2000",
        "--json",
        "--no-live",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j = json(&o);
    let threads = j["threads"].as_array().expect("per-thread reports");
    assert_eq!(threads.len(), 2);
    assert_eq!(threads[0]["device"], "veth-tx@0");
    assert_eq!(threads[1]["device"], "veth-tx@1");
    for t in threads {
        assert_eq!(t["outcome"]["result"]["sent"], 400);
        // 2000 pps in total is 1000 pps each: 400 frames take at least 399 ms.
        let ms = t["outcome"]["result"]["elapsed_ns"].as_u64().unwrap() / 1_000_000;
        assert!(ms >= 399, "each thread keeps half the rate: {ms} ms");
    }
    assert_eq!(j["outcome"]["result"]["sent"], 800);
    // The run's pacing adds the threads' rates up to the one asked.
    assert_eq!(j["outcome"]["pacing"]["requested_pps"], 2000.0);
    assert_eq!(j["reconciliation"]["rx_packets"], 800);
    let o = upktgen(&["run", "-t", "0", "--count", "1"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("at least one sender thread"));
}

/// QUEUE_MAP_CPU with af_xdp: each thread binds the queue of its CPU. Started at --cpu 1,
/// thread 0 runs on CPU 1 and thread 1 on CPU 0 (2 CPUs), so the queues are 1 and 0 —
/// not the 0 and 1 that threads take without the flag.
fn af_xdp_threads_bind_the_queue_of_their_cpu() {
    if !root_or_skip() {
        return;
    }
    let cpus = upktgen::sys::allowed_cpus();
    if cpus != [0, 1] {
        crate::harness::skip(format!(
            "needs exactly CPUs 0 and 1 (this machine allows {cpus:?})"
        ));
        return;
    }
    let run = |extra: &[&str]| {
        let mut a = vec![
            "run",
            "--backend",
            "af_xdp",
            "-t",
            "2",
            "--count",
            "1000",
            "--json",
            "--no-live",
        ];
        a.extend_from_slice(extra);
        let o = upktgen(&a);
        assert!(o.status.success(), "{}", stderr(&o));
        let j = json(&o);
        assert_eq!(j["reconciliation"]["rx_packets"], 2000);
        let t = j["threads"].as_array().unwrap().clone();
        let q = |k: usize| t[k]["detail"].as_str().unwrap().to_string();
        (q(0), q(1))
    };
    let (a, b) = run(&["--cpu", "1", "--flag", "QUEUE_MAP_CPU"]);
    assert!(a.contains("queue 1") && b.contains("queue 0"), "{a} / {b}");
    let (a, b) = run(&["--cpu", "1"]);
    assert!(a.contains("queue 0") && b.contains("queue 1"), "{a} / {b}");
}

/// A lab for N threads: veth with N queues each way, TX queue i serving CPU i (XPS).
fn a_lab_for_threads_maps_each_queue_to_its_cpu() {
    if !root_or_skip() {
        return;
    }
    let lab = Lab::create_opts(RxMode::Drop, false, 2).unwrap();
    let cat = |q: u32| {
        let o = std::process::Command::new("ip")
            .args(["netns", "exec", &lab.tx_ns, "cat"])
            .arg(format!(
                "/sys/class/net/{}/queues/tx-{q}/xps_cpus",
                lab::TX_IF
            ))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        u64::from_str_radix(
            String::from_utf8_lossy(&o.stdout)
                .trim()
                .replace(',', "")
                .as_str(),
            16,
        )
        .unwrap()
    };
    let cpus = upktgen::sys::allowed_cpus();
    assert_eq!(cat(0), 1 << cpus[0]);
    assert_eq!(cat(1), 1 << cpus[1 % cpus.len()]);
}

pub(crate) const TESTS: &[crate::harness::Test] = crate::tests![
    ranges_walk_as_pktgen_walks_them,
    vlan_qinq_mpls_and_ipv6_frames,
    sizes_vary_per_frame_on_every_backend,
    imix_sends_only_its_sizes_and_reports_bytes,
    same_seed_same_random_frames,
    burst_keeps_the_requested_rate_and_xdp_live_refuses_what_it_cannot_write,
    threads_send_count_each_and_share_the_rate,
    af_xdp_threads_bind_the_queue_of_their_cpu,
    a_lab_for_threads_maps_each_queue_to_its_cpu,
];
