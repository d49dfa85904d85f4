//! The plan's defaults and refusals, without root and without touching the system.

use super::*;
use crate::backend::BackendPlan;
use crate::cli::{Cli, Cmd};
use clap::Parser;

const CPUS: &[usize] = &[0, 1];

fn args(extra: &[&str]) -> RunArgs {
    let c = Cli::try_parse_from(std::iter::once("upktgen").chain(extra.iter().copied()))
        .unwrap_or_else(|e| panic!("{extra:?}: {e}"));
    match c.cmd {
        Some(Cmd::Run(r)) => *r,
        _ => c.run,
    }
}

fn plan(extra: &[&str]) -> RunPlan {
    RunPlan::from_args_on(&args(extra), CPUS).unwrap_or_else(|e| panic!("{extra:?}: {e:#}"))
}

fn refused(extra: &[&str]) -> String {
    match RunPlan::from_args_on(&args(extra), CPUS) {
        Ok(_) => panic!("{extra:?} was accepted"),
        Err(e) => format!("{e:#}"),
    }
}

fn assert_refused(extra: &[&str], want: &str) {
    let e = refused(extra);
    assert!(e.contains(want), "{extra:?}: {e}");
}

/// The one backend of the first sender.
fn backend(p: &RunPlan) -> &BackendPlan {
    assert_eq!(p.senders[0].backends.len(), 1);
    &p.senders[0].backends[0]
}

fn ring(p: &RunPlan) -> (u32, u32, u32) {
    let r = match backend(p) {
        BackendPlan::TxRing(c) => c.ring,
        BackendPlan::AfXdp(c) => c.ring,
        other => panic!("no ring: {other:?}"),
    };
    (r.size(), r.stop_thresh(), r.start_thresh())
}

#[test]
fn no_arguments_is_the_seed_run() {
    let c = Cli::try_parse_from(["upktgen"]).unwrap();
    assert!(c.cmd.is_none());
    let d = dev_config(&c.run, "veth-tx", true).unwrap();
    assert_eq!(d.count, 4_000_000);
    assert_eq!((d.min_pkt_size, d.max_pkt_size), (60, 60));
    assert_eq!(d.dst_min, "10.99.0.2");
    assert!(c.run.dev.is_none());
    let p = plan(&[]);
    assert_eq!(
        p.target,
        Target::Lab(LabPlan {
            rx_mode: RxMode::Drop,
            peer_napi: false,
            queues: 1,
            inject: false,
        })
    );
    assert_eq!(p.senders.len(), 1);
    let s = &p.senders[0];
    assert_eq!(s.spec.cfg.ifname, "veth-tx");
    assert_eq!(s.spec.cfg.dst_mac, crate::lab::RX_MAC);
    assert_eq!(s.spec.cpu, None);
    assert!(!s.is_auto());
    assert!(p.rx.is_none() && p.pcap.is_none() && p.replay.is_none());
    assert_eq!(p.live, LiveOptions::default());
    assert_eq!(p.output, Output::default());
}

#[test]
fn pktgen_spellings() {
    let r = args(&[
        "run",
        "--dev",
        "eth9",
        "--count",
        "0",
        "--pkt-size",
        "128",
        "--dst",
        "10.0.0.2",
        "--dst-mac",
        "02:00:00:00:00:02",
        "--udp-dst-min",
        "1000",
        "--udp-dst-max",
        "1010",
        "--ratep",
        "1000",
        "--flag",
        "UDPCSUM",
        "--flag",
        "!UDPCSUM",
        "--duration",
        "2s",
    ]);
    let d = dev_config(&r, "eth9", false).unwrap();
    assert_eq!(d.count, 0);
    assert_eq!(d.udp_dst_max, 1010);
    assert_eq!(d.delay, 1_000_000);
    assert!(!d.has(crate::pg::Flag::Udpcsum));
    // --rate uses the frame size wherever it is given on the line.
    for a in [
        ["--rate", "100", "--pkt-size", "1500"],
        ["--pkt-size", "1500", "--rate", "100"],
    ] {
        assert_eq!(
            dev_config(&args(&a), "x", true).unwrap().delay,
            120_000,
            "{a:?}"
        );
    }
    assert_eq!(r.duration, Some(Duration::from_secs(2)));
    let p = RunPlan::from_args_on(&r, CPUS).unwrap();
    assert_eq!(p.target, Target::Device("eth9".into()));
    assert_eq!(p.duration, Some(Duration::from_secs(2)));
}

#[test]
fn bad_values_are_rejected_by_the_parser() {
    for a in [
        vec!["upktgen", "--batch", "0"],
        vec!["upktgen", "--duration", "soon"],
        vec!["upktgen", "--count", "-1"],
    ] {
        assert!(Cli::try_parse_from(&a).is_err(), "{a:?}");
    }
    // pktgen parameters are checked by the device language, naming the option.
    for (a, want) in [
        (vec!["--dst-mac", "zz"], "--dst-mac zz"),
        (vec!["--dst", "10.0.0.300"], "not an IPv4"),
        (vec!["--count", "many"], "--count many"),
        (vec!["--udp-src-min", "70000"], "65535"),
        (vec!["--delay", "10", "--ratep", "5"], "give one"),
        (vec!["--flag", "BOGUS"], "unknown"),
        (vec!["--vlan-p", "3"], "vlan_id first"),
    ] {
        let e = dev_config(&args(&a), "veth-tx", true)
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{a:?}: {e}");
        assert_refused(&a, want);
    }
}

#[test]
fn backend_defaults() {
    // af_packet: 64 frames per sendmmsg, through the qdisc, the system's send buffer.
    match backend(&plan(&[])) {
        BackendPlan::AfPacket(c) => {
            assert_eq!((c.batch, c.sndbuf, c.qdisc_bypass), (64, None, false));
        }
        other => panic!("{other:?}"),
    }
    // tx_ring: 1024 descriptors, stop at 1 free, wake at half the ring, 64 per kick,
    // past the qdisc.
    let p = plan(&["--backend", "tx_ring"]);
    assert_eq!(ring(&p), (1024, 1, 512));
    match backend(&p) {
        BackendPlan::TxRing(c) => assert_eq!((c.batch, c.qdisc_bypass), (64, true)),
        other => panic!("{other:?}"),
    }
    // af_xdp: 2048 descriptors, wake at 1024, 32 per kick (copy mode's), queue 0.
    let p = plan(&["--backend", "af_xdp"]);
    assert_eq!(ring(&p), (2048, 1, 1024));
    match backend(&p) {
        BackendPlan::AfXdp(c) => assert_eq!((c.batch, c.queue, c.zerocopy), (32, 0, None)),
        other => panic!("{other:?}"),
    }
    // xdp_live: 64 frames between flushes, and the lab gives veth-rx NAPI.
    let p = plan(&["--backend", "xdp_live"]);
    match backend(&p) {
        BackendPlan::XdpLive(c) => {
            assert_eq!(c.batch, 64);
            assert!(!c.plain && c.timestamps && !c.udp_csum);
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(p.target, Target::Lab(l) if l.peer_napi));
    // --batch applies to each.
    for b in ["af_packet", "tx_ring", "af_xdp", "xdp_live"] {
        let p = plan(&["--backend", b, "--batch", "16"]);
        let got = match backend(&p) {
            BackendPlan::AfPacket(c) => c.batch,
            BackendPlan::TxRing(c) => c.batch,
            BackendPlan::AfXdp(c) => c.batch,
            BackendPlan::XdpLive(c) => c.batch as usize,
        };
        assert_eq!(got, 16, "{b}");
    }
}

#[test]
fn ring_threshold_defaults() {
    let r = |a: &[&str]| ring(&plan(a));
    assert_eq!(r(&["--backend", "tx_ring", "--ring", "64"]), (64, 1, 32));
    // The start threshold is half the ring, but never below the stop threshold.
    assert_eq!(
        r(&[
            "--backend",
            "tx_ring",
            "--ring",
            "64",
            "--stop-thresh",
            "40"
        ]),
        (64, 40, 40)
    );
    assert_eq!(
        r(&["--backend", "af_xdp", "--ring", "64", "--start-thresh", "8"]),
        (64, 1, 8)
    );
    assert_eq!(
        r(&[
            "--backend",
            "tx_ring",
            "--stop-thresh",
            "4",
            "--start-thresh",
            "4"
        ]),
        (1024, 4, 4)
    );
    assert_eq!(r(&["--backend", "tx_ring", "--ring", "1"]), (1, 1, 1));
}

#[test]
fn ring_refusals() {
    for b in ["tx_ring", "af_xdp"] {
        assert_refused(
            &["--backend", b, "--ring", "1000"],
            &format!("--ring 1000: {b} needs a power of two from 1 to 65536"),
        );
        assert_refused(&["--backend", b, "--ring", "131072"], "--ring 131072");
        assert_refused(
            &["--backend", b, "--ring", "64", "--stop-thresh", "65"],
            "--stop-thresh 65: must be between 1 and the ring size (64)",
        );
        assert_refused(&["--backend", b, "--stop-thresh", "0"], "--stop-thresh 0");
        assert_refused(
            &["--backend", b, "--stop-thresh", "8", "--start-thresh", "4"],
            "--start-thresh 4: must be between --stop-thresh (8)",
        );
        assert_refused(
            &["--backend", b, "--ring", "64", "--start-thresh", "65"],
            "--start-thresh 65",
        );
    }
    // A threshold given to a backend without a ring is refused, whatever its value
    // (given is given: not a comparison with the default).
    for a in [
        &["--ring", "64"][..],
        &["--stop-thresh", "1"],
        &["--start-thresh", "1"],
    ] {
        assert_refused(
            a,
            "--ring/--stop-thresh/--start-thresh apply to the ring backends (tx_ring, af_xdp), not to af_packet",
        );
        let mut x = vec!["--backend", "xdp_live"];
        x.extend_from_slice(a);
        assert_refused(
            &x,
            "--ring/--stop-thresh/--start-thresh: xdp_live has no TX ring",
        );
    }
}

#[test]
fn qdisc_bypass_defaults_and_refusals() {
    let bypass = |a: &[&str]| match backend(&plan(a)) {
        BackendPlan::AfPacket(c) => c.qdisc_bypass,
        BackendPlan::TxRing(c) => c.qdisc_bypass,
        other => panic!("{other:?}"),
    };
    assert!(!bypass(&[]));
    assert!(bypass(&["--qdisc-bypass"]));
    assert!(bypass(&["--xmit-mode", "start_xmit"]));
    assert!(bypass(&["--backend", "tx_ring"]));
    assert!(!bypass(&[
        "--backend",
        "tx_ring",
        "--qdisc-bypass",
        "false"
    ]));
    assert!(!bypass(&[
        "--backend",
        "tx_ring",
        "--xmit-mode",
        "queue_xmit"
    ]));
    assert_refused(
        &["--qdisc-bypass", "--xmit-mode", "start_xmit"],
        "--qdisc-bypass and --xmit-mode both choose",
    );
    assert_refused(
        &["--backend", "af_xdp", "--qdisc-bypass"],
        "--qdisc-bypass applies to af_packet and tx_ring, not to af_xdp",
    );
    assert_refused(
        &["--backend", "xdp_live", "--qdisc-bypass"],
        "--qdisc-bypass: xdp_live has no qdisc on its path",
    );
}

#[test]
fn sndbuf_and_plain_apply_to_one_backend() {
    match backend(&plan(&["--sndbuf", "65536"])) {
        BackendPlan::AfPacket(c) => assert_eq!(c.sndbuf, Some(65536)),
        other => panic!("{other:?}"),
    }
    for b in ["tx_ring", "af_xdp"] {
        assert_refused(
            &["--backend", b, "--sndbuf", "1"],
            &format!(
                "--sndbuf applies to af_packet (whose queue is the socket send buffer), not to {b}"
            ),
        );
    }
    assert_refused(
        &["--backend", "xdp_live", "--sndbuf", "1"],
        "--sndbuf: xdp_live has no socket",
    );
    for b in ["af_packet", "tx_ring", "af_xdp"] {
        assert_refused(
            &["--backend", b, "--xdp-live-plain"],
            "--xdp-live-plain applies to --backend xdp_live",
        );
    }
    match backend(&plan(&["--backend", "xdp_live", "--xdp-live-plain"])) {
        BackendPlan::XdpLive(c) => assert!(c.plain),
        other => panic!("{other:?}"),
    }
}

#[test]
fn xdp_live_refusals() {
    let x = |a: &[&str]| {
        let mut v = vec!["--backend", "xdp_live"];
        v.extend_from_slice(a);
        refused(&v)
    };
    assert!(x(&["--burst", "4"]).contains("--burst: xdp_live has no burst"));
    // The program walks the whole pktgen walk now (issue 16): random source addresses are
    // planned; only the one-frame plain mode refuses them.
    plan(&[
        "--backend",
        "xdp_live",
        "--flag",
        "IPSRC_RND",
        "--src-min",
        "10.0.0.1",
        "--src-max",
        "10.0.0.9",
    ]);
    assert!(
        x(&[
            "--xdp-live-plain",
            "--flag",
            "IPSRC_RND",
            "--src-min",
            "10.0.0.1",
            "--src-max",
            "10.0.0.9"
        ])
        .contains("--xdp-live-plain sends one identical frame")
    );
    assert!(x(&["--batch", "257"]).contains("--batch 257"));
    assert!(x(&["--pkt-size", "4000"]).contains("--pkt-size 4000"));
    assert!(
        x(&[
            "--xdp-live-plain",
            "--udp-dst-min",
            "10",
            "--udp-dst-max",
            "20"
        ])
        .contains("--xdp-live-plain")
    );
}

#[test]
fn auto_tries_the_fastest_first_and_says_what_it_ruled_out() {
    let kinds = |p: &RunPlan| -> Vec<BackendKind> {
        p.senders[0]
            .backends
            .iter()
            .map(BackendPlan::kind)
            .collect()
    };
    let p = plan(&["--backend", "auto"]);
    assert_eq!(
        kinds(&p),
        [
            BackendKind::XdpLive,
            BackendKind::AfXdp,
            BackendKind::TxRing,
            BackendKind::AfPacket
        ]
    );
    assert!(p.senders[0].is_auto() && p.senders[0].ruled_out.is_empty());
    // On a named device, live frames would vanish: no xdp_live.
    let p = plan(&[
        "--backend",
        "auto",
        "--dev",
        "eth9",
        "--dst",
        "10.0.0.2",
        "--dst-mac",
        "02:00:00:00:00:02",
    ]);
    assert_eq!(
        kinds(&p),
        [
            BackendKind::AfXdp,
            BackendKind::TxRing,
            BackendKind::AfPacket
        ]
    );
    // Options rule candidates out, each with its reason.
    let p = plan(&["--backend", "auto", "--sndbuf", "4096"]);
    assert_eq!(kinds(&p), [BackendKind::AfPacket]);
    assert_eq!(p.senders[0].ruled_out.len(), 3);
    assert!(p.senders[0].ruled_out[0].starts_with("xdp_live ruled out: --sndbuf"));
    assert!(p.senders[0].is_auto());
    // A ring option rules out the packet socket and xdp_live.
    let p = plan(&["--backend", "auto", "--ring", "64"]);
    assert_eq!(kinds(&p), [BackendKind::AfXdp, BackendKind::TxRing]);
    assert_refused(
        &["--backend", "auto", "--sndbuf", "1", "--xdp-live-plain"],
        "--backend auto: no backend accepts these options",
    );
}

#[test]
fn a_named_device_needs_a_destination() {
    assert_refused(
        &["--dev", "eth9", "--dst-mac", "02:00:00:00:00:02"],
        "--dst: required with --dev",
    );
    assert_refused(
        &["--dev", "eth9", "--dst", "10.0.0.2"],
        "--dst-mac: required with --dev",
    );
    // IPv6 needs dst6 instead.
    plan(&[
        "--dev",
        "eth9",
        "--flag",
        "IPV6",
        "--dst6",
        "fd00::2",
        "--dst-mac",
        "02:00:00:00:00:02",
    ]);
    // The device language's start check.
    assert_refused(&["--flag", "IPV6"], "IPV6 is set but no IPv6 destination");
    assert_refused(&["--flows", "4", "--flowlen", "0"], "flowlen is 0");
}

#[test]
fn target_refusals() {
    let dev = [
        "--dev",
        "eth9",
        "--dst",
        "10.0.0.2",
        "--dst-mac",
        "02:00:00:00:00:02",
    ];
    fn with<'a>(dev: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
        let mut v = dev.to_vec();
        v.extend_from_slice(extra);
        v
    }
    assert_refused(
        &with(&dev, &["--lab-rx", "stack"]),
        "--lab-rx: chooses the lab's receiver",
    );
    assert_refused(
        &with(&dev, &["--rx-analyze"]),
        "--rx-analyze: the receiver runs in the lab's receiving namespace",
    );
    assert_refused(
        &["--rx-analyze", "--lab-rx", "drop"],
        "--rx-analyze needs the frames to reach a socket",
    );
}

#[test]
fn lab_defaults() {
    // --rx-analyze: the stack receives, with the receiver asked for.
    let p = plan(&["--rx-analyze", "--hist"]);
    assert_eq!(
        p.target,
        Target::Lab(LabPlan {
            rx_mode: RxMode::Stack,
            peer_napi: false,
            queues: 1,
            inject: false,
        })
    );
    assert_eq!(
        p.rx,
        Some(RxPlan {
            streams: None,
            backend: RxBackend::Auto,
            hist: true
        })
    );
    assert!(
        matches!(plan(&["--lab-rx", "stack"]).target, Target::Lab(l) if l.rx_mode == RxMode::Stack)
    );
    // xdp_live's peer gets NAPI from the lab, unless an AF_XDP receiver named by name
    // gives it (auto may fall back to af_packet, which gives none).
    let napi = |a: &[&str]| match plan(a).target {
        Target::Lab(l) => l.peer_napi,
        t => panic!("{t:?}"),
    };
    assert!(napi(&["--backend", "xdp_live", "--rx-analyze"]));
    assert!(!napi(&[
        "--backend",
        "xdp_live",
        "--rx-analyze",
        "--rx-backend",
        "af_xdp"
    ]));
    assert!(napi(&["--backend", "auto"]));
    assert!(!napi(&["--backend", "tx_ring"]));
}

#[test]
fn seed_is_resolved_once() {
    assert_eq!(plan(&["--seed", "42"]).seed, 42);
    let a = script_args(&["--lab", "--seed", "43"]);
    assert_eq!(RunPlan::from_script(&a, lab_specs(1)).unwrap().seed, 43);
}

#[test]
fn threads_defaults() {
    let p = plan(&["-t", "2", "--ratep", "1000", "--backend", "af_xdp"]);
    assert_eq!(p.senders.len(), 2);
    let names: Vec<&str> = p
        .senders
        .iter()
        .map(|s| s.spec.cfg.ifname.as_str())
        .collect();
    assert_eq!(names, ["veth-tx@0", "veth-tx@1"]);
    let cpus: Vec<Option<usize>> = p.senders.iter().map(|s| s.spec.cpu).collect();
    assert_eq!(cpus, [Some(0), Some(1)]);
    // The rate is the total: each thread sends at half of it.
    assert!(p.senders.iter().all(|s| s.spec.cfg.delay == 2_000_000));
    // One lab queue per thread; af_xdp's sender i takes queue i.
    assert!(matches!(p.target, Target::Lab(l) if l.queues == 2));
    let queues: Vec<u32> = p
        .senders
        .iter()
        .map(|s| match &s.backends[0] {
            BackendPlan::AfXdp(c) => c.queue,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(queues, [0, 1]);
    // --cpu: the threads count from it, through the CPUs allowed.
    let p = plan(&["-t", "2", "--cpu", "1"]);
    let cpus: Vec<Option<usize>> = p.senders.iter().map(|s| s.spec.cpu).collect();
    assert_eq!(cpus, [Some(1), Some(0)]);
    // One thread: the device itself, on --cpu (not checked against the mask: pinning says).
    let p = plan(&["--cpu", "7"]);
    assert_eq!(p.senders[0].spec.cfg.ifname, "veth-tx");
    assert_eq!(p.senders[0].spec.cpu, Some(7));
}

#[test]
fn threads_refusals() {
    assert_refused(
        &["-t", "0"],
        "-t/--threads 0: give at least one sender thread",
    );
    assert_refused(&["-t", "2", "--rx-analyze"], "--rx-analyze with -t 2");
    assert_refused(
        &["-t", "2", "--cpu", "7"],
        "--cpu 7: not a CPU this process may run on (allowed: [0, 1])",
    );
    // Issue 11: -t 1000 on two CPUs started 1000 threads.
    assert_refused(
        &["-t", "1000"],
        "-t/--threads 1000: this process may run on 2 CPUs ([0, 1]): give at most -t 2, or add --allow-oversubscribe",
    );
    assert_refused(&["-t", "3"], "give at most -t 2");
    let a = args(&["-t", "2"]);
    let e = RunPlan::from_args_on(&a, &[3]).unwrap_err().to_string();
    assert!(e.contains("on 1 CPU ([3]): give at most -t 1"), "{e}");
    // Asked for explicitly, threads share the CPUs round the mask.
    let p = plan(&["-t", "3", "--allow-oversubscribe"]);
    let cpus: Vec<Option<usize>> = p.senders.iter().map(|s| s.spec.cpu).collect();
    assert_eq!(cpus, [Some(0), Some(1), Some(0)]);
}

#[test]
fn pcap_defaults_and_refusals() {
    let p = plan(&["--pcap", "/x.pcap", "--count", "5", "-t", "4"]);
    assert_eq!(
        p.pcap,
        Some(PcapPlan {
            path: "/x.pcap".into(),
            count: 5,
            dev: None
        })
    );
    // --pcap writes one sender's frames (-t does not apply).
    assert_eq!(p.senders.len(), 1);
    assert_eq!(
        plan(&["--pcap", "/x.pcap", "--pcap-count", "7"])
            .pcap
            .unwrap()
            .count,
        7
    );
    assert_eq!(
        plan(&["--pcap", "/x.pcap"]).pcap.unwrap().count,
        DEFAULT_COUNT
    );
    assert_refused(
        &["--pcap", "/x.pcap", "--count", "0"],
        "--pcap: count 0 means",
    );
    assert_refused(
        &["--pcap", "/x.pcap", "--delay", "2147483647"],
        "--pcap: delay 18446744073709551615 never sends",
    );
    // The backend's options are checked with --pcap too.
    assert_refused(
        &["--pcap", "/x.pcap", "--ring", "64"],
        "--ring/--stop-thresh",
    );
}

#[test]
fn frame_parameters_are_refused_with_replay() {
    let check = |a: &[&str]| check_replay_args(&args(a));
    check(&["--replay", "f", "--count", "5", "--ratep", "100"]).unwrap();
    let e = check(&["--replay", "f", "--pkt-size", "100"]).unwrap_err();
    assert!(
        e.to_string().starts_with("--pkt-size: --replay sends"),
        "{e}"
    );
    let e = check(&["--replay", "f", "--rate", "100"]).unwrap_err();
    assert!(e.to_string().contains("--ratep"), "{e}");
    check(&["--pkt-size", "100"]).unwrap();
    check(&[
        "--replay",
        "f",
        "--replay-timing",
        "file",
        "--replay-speed",
        "2",
    ])
    .unwrap();
    let e = check(&["--replay", "f", "--replay-timing", "file", "--ratep", "5"]).unwrap_err();
    assert!(
        e.to_string().starts_with("--ratep: --replay-timing file"),
        "{e}"
    );
    let e = check(&["--replay", "f", "--replay-speed", "2"]).unwrap_err();
    assert!(
        e.to_string().contains("goes with --replay-timing file"),
        "{e}"
    );
}

#[test]
fn replay_counts_and_refusals() {
    let dir = std::env::temp_dir().join(format!("upktgen-plan-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("three.pcap");
    {
        let f = std::fs::File::create(&file).unwrap();
        let mut w = crate::pcap::PcapWriter::new(f).unwrap();
        for i in 0..3u64 {
            w.write(i * 1000, &[0u8; 60]).unwrap();
        }
        w.finish().unwrap();
    }
    let f = file.to_str().unwrap();
    let p = plan(&["--replay", f, "--replay-loops", "2"]);
    assert_eq!(p.replay.as_ref().map(ReplayFrames::len), Some(3));
    assert_eq!(
        p.senders[0].spec.cfg.count, 6,
        "two passes over three frames"
    );
    assert_eq!(
        plan(&["--replay", f, "--count", "4", "--replay-loops", "2"]).senders[0]
            .spec
            .cfg
            .count,
        4
    );
    assert_refused(
        &["--replay", f, "--backend", "xdp_live"],
        "xdp_live cannot --replay",
    );
    // With --dev, no destination is needed: the file's frames carry theirs.
    let p = plan(&["--replay", f, "--dev", "eth9"]);
    assert_eq!(p.target, Target::Device("eth9".into()));
    assert_refused(&["--replay", "/nonexistent/x.pcap"], "/nonexistent/x.pcap");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn live_and_output_options() {
    let p = plan(&[
        "--json",
        "--per-cpu",
        "--json-lines",
        "--interval",
        "250ms",
        "--irq",
        "eth0",
    ]);
    assert_eq!(
        p.output,
        Output {
            json: true,
            per_cpu: true
        }
    );
    assert_eq!(
        p.live,
        LiveOptions {
            live: false,
            no_live: false,
            json_lines: true,
            interval: Duration::from_millis(250)
        }
    );
    assert_eq!(p.irq.as_deref(), Some("eth0"));
}

pub(super) fn script_args(extra: &[&str]) -> ScriptArgs {
    let c = Cli::try_parse_from(
        ["upktgen", "script"]
            .into_iter()
            .chain(extra.iter().copied())
            .chain(["f"]),
    )
    .unwrap_or_else(|e| panic!("{extra:?}: {e}"));
    match c.cmd {
        Some(Cmd::Script(s)) => *s,
        _ => panic!("not a script"),
    }
}

fn lab_specs(n: usize) -> Vec<SenderSpec> {
    (0..n)
        .map(|i| {
            let mut cfg = DevConfig::new(&format!("veth-tx@{i}"));
            fill_lab_destination(&mut cfg);
            SenderSpec { cfg, cpu: Some(i) }
        })
        .collect()
}

#[test]
fn a_script_plan_takes_the_ring_thresholds() {
    let a = script_args(&[
        "--lab",
        "--backend",
        "tx_ring",
        "--ring",
        "64",
        "--stop-thresh",
        "2",
        "--start-thresh",
        "7",
    ]);
    let p = RunPlan::from_script(&a, lab_specs(2)).unwrap();
    for s in &p.senders {
        match &s.backends[..] {
            [BackendPlan::TxRing(c)] => {
                let r = c.ring;
                assert_eq!((r.size(), r.stop_thresh(), r.start_thresh()), (64, 2, 7));
            }
            other => panic!("{other:?}"),
        }
    }
    assert!(matches!(p.target, Target::Lab(l) if l.queues == 2 && l.rx_mode == RxMode::Drop));
    // The same refusals as run's.
    let a = script_args(&["--lab", "--start-thresh", "7"]);
    let e = RunPlan::from_script(&a, lab_specs(1))
        .unwrap_err()
        .to_string();
    assert!(e.contains("apply to the ring backends"), "{e}");
    let a = script_args(&[
        "--lab",
        "--backend",
        "af_xdp",
        "--ring",
        "64",
        "--start-thresh",
        "65",
    ]);
    assert!(RunPlan::from_script(&a, lab_specs(1)).is_err());
    // Defaults as run's: half the ring.
    let a = script_args(&[
        "--lab",
        "--backend",
        "tx_ring",
        "--seed",
        "9",
        "--no-live",
        "--json",
    ]);
    let p = RunPlan::from_script(&a, lab_specs(1)).unwrap();
    match &p.senders[0].backends[..] {
        [BackendPlan::TxRing(c)] => assert_eq!(c.ring.start_thresh(), 512),
        other => panic!("{other:?}"),
    }
    assert_eq!(p.seed, 9);
    assert!(p.live.no_live && p.output.json);
}

#[test]
fn a_real_script_plan_sends_on_its_device() {
    let a = script_args(&["--real"]);
    let mut specs = lab_specs(1);
    specs[0].cfg.ifname = "eth9@0".into();
    let p = RunPlan::from_script(&a, specs).unwrap();
    assert_eq!(p.target, Target::Device("eth9".into()));
}

#[test]
fn start_at_is_resolved_once_against_the_wall_clock() {
    let now = crate::sys::realtime_ns();
    let p = plan(&["run", "--start-at", "+30s", "--count", "1"]);
    let at = p.start_at.expect("an instant");
    assert!(at >= now + 30_000_000_000, "{at} vs {now}");
    assert!(at < now + 40_000_000_000, "{at} vs {now}");
    assert_eq!(plan(&["run", "--count", "1"]).start_at, None);
    // Epoch ns and RFC 3339 name the same instant.
    let ns = (now + 60_000_000_000).to_string();
    let iso = crate::start_at::format_rfc3339(now + 60_000_000_000);
    assert_eq!(
        plan(&["run", "--start-at", &ns]).start_at,
        plan(&["run", "--start-at", &iso]).start_at
    );
}

#[test]
fn start_at_refusals_name_the_option_and_the_problem() {
    let past = (crate::sys::realtime_ns() - 5_000_000_000).to_string();
    assert_refused(&["run", "--start-at", &past], "--start-at");
    assert_refused(&["run", "--start-at", &past], "in the past");
    assert_refused(&["run", "--start-at", "+2h"], "at most 3600 s");
    assert_refused(
        &["run", "--start-at", "tomorrow"],
        "--start-at \"tomorrow\"",
    );
    assert_refused(&["run", "--start-at", "+"], "--start-at");
    assert_refused(
        &[
            "run",
            "--start-at",
            "+5s",
            "--pcap",
            "/tmp/x.pcap",
            "--count",
            "1",
        ],
        "--pcap writes a file",
    );
    // The helper itself, against a fixed clock.
    let now = 1_796_116_041_000_000_000;
    assert_eq!(start_at(None, now).unwrap(), None);
    assert_eq!(
        start_at(Some("+1s"), now).unwrap(),
        Some(now + 1_000_000_000)
    );
    let e = format!(
        "{:#}",
        start_at(Some("2026-12-01T09:00:00Z"), now).unwrap_err()
    );
    assert!(
        e.starts_with("--start-at \"2026-12-01T09:00:00Z\" is") && e.contains("past"),
        "{e}"
    );
}

#[test]
fn a_script_plan_takes_start_at_with_run_s_checks() {
    let p = RunPlan::from_script(&script_args(&["--start-at", "+20s"]), lab_specs(2)).unwrap();
    assert!(p.start_at.is_some_and(|at| at > crate::sys::realtime_ns()));
    let e = format!(
        "{:#}",
        RunPlan::from_script(&script_args(&["--start-at", "+3h"]), lab_specs(1)).unwrap_err()
    );
    assert!(
        e.contains("--start-at") && e.contains("at most 3600 s"),
        "{e}"
    );
}

/// The xdp_live plan of the first sender (panics on another backend).
fn live(p: &RunPlan) -> crate::backend::xdp_live::XdpLiveConfig {
    match backend(p) {
        BackendPlan::XdpLive(c) => *c,
        other => panic!("not xdp_live: {other:?}"),
    }
}

#[test]
fn netif_receive_implies_xdp_live_into_the_labs_receiving_end() {
    let p = plan(&["--xmit-mode", "netif_receive"]);
    let c = live(&p);
    assert!(c.receive);
    assert_eq!(c.batch, 64);
    assert!(!backend(&p).needs_peer_napi(), "nothing is redirected");
    assert_eq!(
        p.target,
        Target::Lab(LabPlan {
            rx_mode: RxMode::Stack,
            peer_napi: false,
            queues: 1,
            inject: true,
        })
    );
    assert_eq!(p.senders[0].spec.cfg.ifname, "veth-rx");
    assert_eq!(p.senders[0].spec.cfg.dst_mac, lab::RX_MAC);
    // -t 2: each thread its own name for the same device.
    let p = plan(&["--xmit-mode", "netif_receive", "-t", "2"]);
    let names: Vec<&str> = p
        .senders
        .iter()
        .map(|s| s.spec.cfg.ifname.as_str())
        .collect();
    assert_eq!(names, ["veth-rx@0", "veth-rx@1"]);
    // auto means xdp_live too, also on a named device (where auto never tries it else).
    for b in ["auto", "xdp_live"] {
        let p = plan(&[
            "--dev",
            "eth9",
            "--dst",
            "10.0.0.1",
            "--backend",
            b,
            "--xmit-mode",
            "netif_receive",
        ]);
        assert!(live(&p).receive, "{b}");
        assert!(p.senders[0].ruled_out.is_empty());
        assert_eq!(p.target, Target::Device("eth9".into()));
    }
    // Without the mode, xdp_live redirects.
    assert!(!live(&plan(&["--backend", "xdp_live"])).receive);
}

#[test]
fn netif_receive_takes_the_devices_own_mac_and_pktgens_burst() {
    // --dev without --dst-mac: the device's MAC, filled in once it is probed.
    let p = plan(&[
        "--dev",
        "eth9",
        "--dst",
        "10.0.0.1",
        "--xmit-mode",
        "netif_receive",
    ]);
    assert_eq!(p.senders[0].spec.cfg.dst_mac, MacAddr::default());
    assert_refused(
        &["--dev", "eth9", "--dst", "10.0.0.1"],
        "--dst-mac: required",
    );
    // burst: frames handed to the receive path at once, up to the kernel's 256; --batch wins.
    let b = |extra: &[&str]| {
        let mut a = vec!["--xmit-mode", "netif_receive"];
        a.extend_from_slice(extra);
        live(&plan(&a)).batch
    };
    assert_eq!(b(&["--burst", "32"]), 32);
    assert_eq!(b(&["--burst", "1024"]), 256);
    assert_eq!(b(&["--burst", "1024", "--batch", "8"]), 8);
    // Transmitting, xdp_live has no burst.
    assert_refused(&["--backend", "xdp_live", "--burst", "32"], "--burst");
}

#[test]
fn netif_receive_is_refused_where_it_cannot_be() {
    for b in ["af_packet", "tx_ring", "af_xdp"] {
        assert_refused(
            &["--backend", b, "--xmit-mode", "netif_receive"],
            &format!(
                "--xmit-mode netif_receive: --backend {b} transmits on the device; only xdp_live injects"
            ),
        );
    }
    assert_refused(
        &["--xmit-mode", "netif_receive", "--lab-rx", "drop"],
        "--lab-rx drop",
    );
    assert_refused(
        &["--xmit-mode", "netif_receive", "--rx-analyze"],
        "--rx-analyze",
    );
    assert_refused(
        &["--xmit-mode", "netif_receive", "--lab", "dut"],
        "the DUT lab",
    );
    // What xdp_live refuses, it refuses here too, saying the mode needs it.
    assert_refused(
        &["--xmit-mode", "netif_receive", "--ring", "64"],
        "--xmit-mode netif_receive needs xdp_live, which refuses",
    );
    // A script's start runs one mode for every device.
    let mut specs = lab_specs(2);
    specs[1].cfg.command("xmit_mode netif_receive").unwrap();
    let e = RunPlan::from_script(&script_args(&["--lab"]), specs)
        .unwrap_err()
        .to_string();
    assert!(e.contains("1 of the 2 devices inject"), "{e}");
    let mut specs = lab_specs(2);
    for s in &mut specs {
        s.cfg.command("xmit_mode netif_receive").unwrap();
    }
    let p = RunPlan::from_script(&script_args(&["--lab"]), specs).unwrap();
    assert!(matches!(p.target, Target::Lab(l) if l.inject && l.queues == 2));
}
