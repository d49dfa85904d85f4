//! End-to-end: the `xdp_live` backend (BPF_PROG_RUN with live frames) in labs of its own.
//!
//! Skipped without root, and — politely — on a kernel without live frames (before 5.18).

mod common;
use common::*;
use std::net::UdpSocket;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use upktgen::backend::TxBackend;
use upktgen::backend::xdp_live::{self, XdpLive, XdpLiveConfig, prog};
use upktgen::lab::{self, Lab, RxMode};
use upktgen::stream::{PortRange, Stream};
use upktgen::sys::{self, bpf, netns};
use upktgen::wire::{PacketFields, PktgenHdr};

fn cfg(batch: u32, udp_csum: bool, udp_src: (u16, u16)) -> XdpLiveConfig {
    XdpLiveConfig {
        ifindex: 0,
        receive: false,
        batch,
        plain: false,
        timestamps: true,
        udp_csum,
        udp_src,
        udp_dst: (9, 9),
    }
}

fn ns_gone(name: &str) -> bool {
    !std::path::Path::new("/run/netns").join(name).exists()
}

/// The verified program, run by the kernel on one frame at a time without sending
/// anything, writes what the userspace frame writer writes for the same packet.
#[test]
fn kernel_runs_the_program_to_the_same_frames_as_userspace() {
    if !live_frames_or_skip() {
        return;
    }
    for udp_csum in [false, true] {
        let t = lab_template(udp_csum);
        let stream = Stream::new(PortRange::new(1000, 1003), PortRange::new(9, 9));
        let frame = xdp_live::first_frame(&t, &stream);
        let sport = prog::PortWalk::new(1000, 1003);
        let dport = prog::PortWalk::new(9, 9);
        let (ip_base, udp_base) = prog::bases(&frame, true, false);
        let spec = prog::Spec {
            ifindex: 1,
            verdict: prog::Verdict::Redirect,
            plain: false,
            timestamps: true,
            clock_every: 4,
            udp_csum,
            sport,
            dport,
            ip_base,
            udp_base,
            restore: prog::restore_stores(&frame, true, false, udp_csum),
        };
        let state = bpf::ValueMap::create("t_state", prog::state::SIZE).unwrap();
        let insns = prog::xdp_program(&spec, state.raw_fd()).unwrap();
        let p = bpf::load_prog(bpf::ProgType::Xdp, "t_live", &insns).unwrap();
        let offset = sys::realtime_ns().wrapping_sub(sys::monotonic_ns());
        state
            .write(
                &prog::State {
                    rt_offset: offset,
                    ..prog::State::default()
                }
                .to_bytes(),
            )
            .unwrap();
        let before = sys::realtime_ns() / 1000;
        let mut out = vec![0u8; 256];
        let mut stamp = (0, 0);
        for k in 0..10u32 {
            let (rc, len) = bpf::prog_run_xdp_once(&p, &frame, &mut out).unwrap();
            assert_eq!(rc, prog::XDP_REDIRECT as u32);
            assert_eq!(len, 60);
            let got = &out[..len];
            let h = PktgenHdr::parse(&got[42..]).unwrap();
            if k % 4 == 0 {
                stamp = (h.tv_sec, h.tv_usec);
                let us = u64::from(h.tv_sec) * 1_000_000 + u64::from(h.tv_usec);
                assert!(
                    us >= before && us <= sys::realtime_ns() / 1000,
                    "timestamp {us}"
                );
            }
            let mut want = t.frame().to_vec();
            t.write(
                &mut want,
                &PacketFields {
                    ip_id: k as u16,
                    udp_src: 1000 + (k % 3) as u16,
                    udp_dst: 9,
                    seq: k + 1,
                    tv_sec: stamp.0,
                    tv_usec: stamp.1,
                },
            );
            assert_eq!(got, &want[..], "packet {k}, UDPCSUM {udp_csum}");
        }
    }
}

#[test]
fn lab_run_delivers_every_packet_and_cleans_up() {
    if !live_frames_or_skip() {
        return;
    }
    for extra in [
        &[][..],
        &["--xdp-live-plain"][..],
        &[
            "--flag",
            "UDPCSUM",
            "--udp-src-min",
            "1000",
            "--udp-src-max",
            "1100",
        ][..],
    ] {
        let mut args = vec!["--backend", "xdp_live", "--count", "300000", "--json"];
        args.extend_from_slice(extra);
        let o = upktgen(&args);
        assert!(o.status.success(), "{extra:?}: {}", stderr(&o));
        let j = json(&o);
        assert_eq!(j["backend"]["name"], "xdp_live");
        assert_eq!(j["outcome"]["result"]["sent"], 300000, "{extra:?}");
        assert_eq!(j["outcome"]["result"]["errors"], 0);
        assert_eq!(
            j["reconciliation"]["rx_packets"], 300000,
            "{extra:?}: {j:#}"
        );
        assert_eq!(j["reconciliation"]["tx_packets"], 300000);
        assert_eq!(j["reconciliation"]["lost"], 0);
        // The counts by cause are in the JSON: every frame redirected and accepted.
        let c = &j["outcome"]["backend"]["xdp_live"];
        assert_eq!(c["redirected"], 300000, "{c}");
        assert_eq!(c["driver_sent"], 300000, "{c}");
        assert_eq!(c["driver_drops"], 0, "{c}");
        assert!(ns_gone(j["target"]["netns"].as_str().unwrap()));
        assert!(ns_gone(j["target"]["rx_netns"].as_str().unwrap()));
    }
}

#[test]
fn stack_receiver_lab_run_delivers_every_packet() {
    if !live_frames_or_skip() {
        return;
    }
    let o = upktgen(&[
        "--backend",
        "xdp_live",
        "--lab-rx",
        "stack",
        "--count",
        "100000",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j = json(&o);
    assert_eq!(j["outcome"]["result"]["sent"], 100000);
    assert_eq!(j["reconciliation"]["rx_packets"], 100000, "{j:#}");
}

/// The kernel's UDP stack receives frames with sequence numbers 1..N in order, plausible
/// timestamps and (with UDPCSUM) checksums it verifies, across many syscalls of many
/// frames each.
#[test]
fn kernel_udp_socket_receives_sequence_1_to_n_in_order() {
    if !live_frames_or_skip() {
        return;
    }
    const CHUNK: usize = 25; // the socket's default receive buffer holds ~48 page-sized frames
    const CHUNKS: usize = 12;
    for udp_csum in [false, true] {
        let lab = Lab::create_with(RxMode::Stack, true).unwrap();
        let rx = netns::in_netns(&lab.rx_path(), || {
            let s = UdpSocket::bind((lab::RX_IP, 9))?;
            s.set_read_timeout(Some(Duration::from_secs(2)))?;
            Ok(s)
        })
        .unwrap();
        let t = lab_template(udp_csum);
        let stream = Stream::new(PortRange::new(1000, 1004), PortRange::new(9, 9));
        let frame = xdp_live::first_frame(&t, &stream);
        let (sent, seen) = netns::in_netns(&lab.tx_path(), move || {
            let mut c = cfg(8, udp_csum, (1000, 1004));
            c.ifindex = sys::if_nametoindex(lab::TX_IF)?;
            let mut b = XdpLive::new(&frame, c)?;
            assert!(
                b.observes_driver(),
                "the xdp_devmap_xmit tracepoint is attached"
            );
            let stop = AtomicBool::new(false);
            let mut buf = [0u8; 2048];
            let mut seen = Vec::new();
            let mut sent = 0;
            for _ in 0..CHUNKS {
                let before = sys::realtime_ns() / 1000;
                let n = b.reserve(CHUNK, &stop)?;
                assert_eq!(n, CHUNK);
                let s = b.submit(n, &stop)?;
                let after = sys::realtime_ns() / 1000;
                assert_eq!((s.sent, s.errors), (CHUNK as u64, 0));
                sent += s.sent;
                for _ in 0..CHUNK {
                    let (len, from) = rx.recv_from(&mut buf)?;
                    assert_eq!(len, 18, "UDP payload of a 60-byte frame");
                    let h = PktgenHdr::parse(&buf[..len]).expect("pktgen header");
                    let us = u64::from(h.tv_sec) * 1_000_000 + u64::from(h.tv_usec);
                    assert!(
                        us >= before && us <= after,
                        "timestamp {us} outside its syscall [{before}, {after}]"
                    );
                    seen.push((h.seq, from.port()));
                }
            }
            let c = b.counters();
            assert_eq!(
                (c.redirected, c.driver_sent, c.driver_drops),
                (sent, sent, 0)
            );
            Ok((sent, seen))
        })
        .unwrap();
        assert_eq!(sent, (CHUNK * CHUNKS) as u64);
        let want: Vec<(u32, u16)> = (1..=(CHUNK * CHUNKS) as u32)
            .map(|s| (s, 1000 + (s % 4) as u16))
            .collect();
        assert_eq!(seen, want, "UDPCSUM {udp_csum}");
    }
}

/// Without NAPI on the receiving veth end, XDP frames would vanish: the backend refuses to
/// count them as sent and says why.
#[test]
fn a_peer_without_napi_is_refused_with_a_clear_message() {
    if !live_frames_or_skip() {
        return;
    }
    let lab = Lab::create(RxMode::Stack).unwrap(); // no XDP program on veth-rx: no NAPI
    let t = lab_template(false);
    let frame = xdp_live::first_frame(&t, &Stream::new(PortRange::new(9, 9), PortRange::new(9, 9)));
    let err = netns::in_netns(&lab.tx_path(), move || {
        let mut c = cfg(64, false, (9, 9));
        c.ifindex = sys::if_nametoindex(lab::TX_IF)?;
        let mut b = XdpLive::new(&frame, c)?;
        let stop = AtomicBool::new(false);
        let n = b.reserve(100, &stop)?;
        Ok(b.submit(n, &stop).unwrap_err().to_string())
    })
    .unwrap();
    assert!(
        err.starts_with("xdp_live: none of the first 100 frames"),
        "{err}"
    );
    assert!(err.contains("NAPI") && err.contains("af_packet"), "{err}");

    // The same through the binary on a user-named device: one clear line, status 1.
    let o = dev_run(&lab, &["--backend", "xdp_live", "--count", "1000"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stderr(&o).contains("NAPI"), "{}", stderr(&o));
}

#[test]
fn named_device_run_reconciles_with_the_interface_counters() {
    if !live_frames_or_skip() {
        return;
    }
    let lab = Lab::create(RxMode::Drop).unwrap();
    let o = dev_run(
        &lab,
        &["--backend", "xdp_live", "--count", "50000", "--json"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let j = json(&o);
    assert_eq!(j["outcome"]["result"]["sent"], 50000);
    assert_eq!(j["reconciliation"]["tx_packets"], 50000);
    assert_eq!(j["reconciliation"]["vanished"], 0);
}

#[test]
fn options_xdp_live_cannot_honour_are_refused() {
    for (args, needle) in [
        (
            &["--backend", "xdp_live", "--batch", "512"][..],
            "--batch 512",
        ),
        (
            &["--backend", "xdp_live", "--sndbuf", "100000"][..],
            "--sndbuf",
        ),
        (&["--backend", "xdp_live", "--ring", "256"][..], "--ring"),
        (
            &[
                "--backend",
                "xdp_live",
                "--xdp-live-plain",
                "--udp-dst-min",
                "10",
                "--udp-dst-max",
                "20",
            ][..],
            "--xdp-live-plain",
        ),
        (
            &["--xdp-live-plain"][..],
            "--xdp-live-plain applies to --backend xdp_live",
        ),
    ] {
        let o = upktgen(args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stdout(&o));
        let first = stderr(&o).lines().next().unwrap_or("").to_string();
        assert!(first.contains(needle), "{args:?}: {first}");
    }
}

#[test]
fn sigint_stops_the_run_with_a_partial_report() {
    if !live_frames_or_skip() {
        return;
    }
    let t = interrupt_lab_run(&["--backend", "xdp_live", "--count", "0"]);
    assert!(t.contains("lost 0"), "{t}");
}
