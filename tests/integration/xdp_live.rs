//! End-to-end: the `xdp_live` backend (BPF_PROG_RUN with live frames) in labs of its own.
//!
//! Skipped without root, and — politely — on a kernel without live frames (before 5.18).

use crate::common::*;
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
fn kernel_runs_the_program_to_the_same_frames_as_userspace() {
    if !live_frames_or_skip() {
        return;
    }
    for udp_csum in [false, true] {
        let t = lab_template(udp_csum);
        let stream = Stream::new(PortRange::new(1000, 1003), PortRange::new(9, 9));
        let frame = xdp_live::first_frame(&t, &stream);
        let spec = prog::Spec::udp4(
            1,
            &frame,
            true,
            4,
            udp_csum,
            prog::PortWalk::new(1000, 1003),
            prog::PortWalk::new(9, 9),
        );
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

/// The streams program, verified by this kernel for slots of frames from 60 to 3,000
/// bytes (the largest xdp_live sends) and run by it one frame at a time, stamps each
/// slot's frame with the kernel's clock and copies it whole, at its length, over a page
/// that held another: every frame equals what its stream's writer makes of it with that
/// send time.
fn kernel_copies_each_streams_frame_from_its_slot() {
    if !live_frames_or_skip() {
        return;
    }
    use upktgen::stream::build::StreamFrames;
    use upktgen::stream::spec::{
        EthernetSpec, Header, Ipv4Spec, Length, Pattern, Rate, Size, StreamSpec, TcpSpec, UdpSpec,
    };
    let stream = |name: &str, l4: Header, size: Size| StreamSpec {
        name: name.into(),
        headers: vec![
            Header::Ethernet(EthernetSpec::default()),
            Header::Ipv4(Ipv4Spec::default()),
            l4,
        ],
        size,
        rate: Rate::Pps(1000.0),
        length: Length::Continuous,
        start_delay_ns: 0,
        fill: Default::default(),
    };
    let specs = [
        stream(
            "udp",
            Header::Udp(UdpSpec {
                dst_port: Pattern::Increment {
                    start: 1000,
                    step: 1,
                    count: 10,
                },
                checksum: true,
                ..Default::default()
            }),
            Size::Fixed(60),
        ),
        stream(
            "tcp",
            Header::Tcp(TcpSpec::default()),
            Size::Increment {
                start: 70,
                end: 3000,
                step: 293,
            },
        ),
    ];
    let writers: Vec<StreamFrames> = specs
        .iter()
        .enumerate()
        .map(|(i, s)| StreamFrames::new(i as u16, s).unwrap())
        .collect();
    let state = bpf::ValueMap::create("t_sstate", prog::slots::state::SIZE).unwrap();
    let patch: Vec<u8> = writers
        .iter()
        .flat_map(|w| prog::slots::patch::entry(w.signature_checksum()))
        .collect();
    let patch_map = bpf::ValueMap::create("t_patch", patch.len()).unwrap();
    patch_map.write(&patch).unwrap();
    let (min_len, max_len) = (60, xdp_live::MAX_FRAME);
    let spec = prog::SlotSpec {
        ifindex: 1,
        verdict: prog::Verdict::Redirect,
        slots: 24,
        min_len,
        max_len,
        stamp: Some(prog::slots::Stamp {
            patch_fd: patch_map.raw_fd(),
            streams: 2,
            every: 1,
        }),
    };
    let mut map = bpf::SlotMap::create(
        "t_slots",
        prog::slots::layout::value_size(max_len),
        spec.slots,
    )
    .unwrap();
    let insns = prog::slots_program(&spec, state.raw_fd(), map.raw_fd()).unwrap();
    let p = bpf::load_prog(bpf::ProgType::Xdp, "t_slots", &insns).unwrap();
    // Slot i: stream i % 2's frame i / 2, at the stream's size for it.
    let want: Vec<(usize, u64, usize)> = (0..spec.slots)
        .map(|i| {
            let (id, seq) = ((i % 2) as usize, u64::from(i / 2));
            let len = specs[id].size.seq().at(seq) as usize;
            let f = prog::slots::layout::frame_mut(map.value_mut(i), len);
            writers[id].write(seq, len, 1_000 + seq, f);
            (id, seq, len)
        })
        .collect();
    let lens: std::collections::BTreeSet<usize> = want.iter().map(|w| w.2).collect();
    assert!(lens.contains(&60) && lens.contains(&3000), "{lens:?}");
    let page = vec![0x5au8; max_len];
    let mut out = vec![0u8; max_len + 64];
    let at = |next: u64| {
        use prog::slots::state;
        let offset = sys::realtime_ns().wrapping_sub(sys::monotonic_ns());
        let mut v = vec![0u8; state::SIZE];
        v[state::NEXT as usize..][..8].copy_from_slice(&next.to_ne_bytes());
        v[state::RT_OFFSET as usize..][..8].copy_from_slice(&offset.to_ne_bytes());
        v
    };
    for (i, &(id, seq, len)) in want.iter().enumerate() {
        state.write(&at(i as u64)).unwrap();
        let before = sys::realtime_ns();
        let (rc, got_len) = bpf::prog_run_xdp_once(&p, &page, &mut out).unwrap();
        let after = sys::realtime_ns();
        assert_eq!(rc, prog::XDP_REDIRECT as u32, "slot {i}");
        assert_eq!(got_len, len, "slot {i}");
        let got = &out[..len];
        let tx = upktgen::wire::signature::Signature::parse(got)
            .unwrap()
            .tx_ns;
        // The clocks' offset moves by the adjtime slew at most: a microsecond's margin.
        assert!(
            tx + 1_000 >= before && tx <= after + 1_000,
            "slot {i}: sent at {tx}, run between {before} and {after}"
        );
        let mut w = vec![0u8; len];
        writers[id].write(seq, len, tx, &mut w);
        assert_eq!(got, &w[..], "slot {i}");
    }
    // Past the last slot: aborted, nothing copied.
    state.write(&at(u64::from(spec.slots))).unwrap();
    let (rc, _) = bpf::prog_run_xdp_once(&p, &page, &mut out).unwrap();
    assert_eq!(rc, prog::XDP_ABORTED as u32);
}

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

fn sigint_stops_the_run_with_a_partial_report() {
    if !live_frames_or_skip() {
        return;
    }
    let t = interrupt_lab_run(&["--backend", "xdp_live", "--count", "0"]);
    assert!(t.contains("lost 0"), "{t}");
}

// ---- The general walk at live-frame speed: what the receiver gets, field by field ----

use upktgen::pg::DevConfig;
use upktgen::pg::generate::{DeviceInfo, Generator, Layout};
use upktgen::stream::{FrameSource, PgFrames};

const MAGIC: [u8; 4] = 0xbe9b_e955u32.to_be_bytes();

/// pktgen parameters as command-line options (`--name-with-dashes VALUE`).
fn options(params: &[(&str, &str)]) -> Vec<String> {
    params
        .iter()
        .flat_map(|(n, v)| [format!("--{}", n.replace('_', "-")), v.to_string()])
        .collect()
}

/// The general walk `upktgen run --dev veth-tx` makes of `params` in a lab of ours.
fn walk(params: &[(&str, &str)]) -> (DevConfig, PgFrames) {
    let mut c = DevConfig::new(lab::TX_IF);
    c.command("dst 10.99.0.2").unwrap();
    c.command(&format!("dst_mac {}", lab::RX_MAC)).unwrap();
    for (n, v) in params {
        c.command(&format!("{n} {v}")).unwrap();
    }
    let info = DeviceInfo {
        mac: lab::TX_MAC,
        ipv4: Some(lab::TX_IP),
        tx_queues: 1,
    };
    let g = Generator::new(&c, &info, 1).unwrap();
    let pg = PgFrames::new(Layout::new(&c), g, c.max_frame_len(), 0);
    (c, pg)
}

/// `upktgen run --dev veth-tx --backend xdp_live` with `params` and `extra`, its pktgen
/// frames captured at veth-rx (frames veth-rx sends back, such as ICMP errors quoting ours,
/// left out).
fn live_capture(
    lab: &Lab,
    params: &[(&str, &str)],
    extra: &[&str],
    want: usize,
) -> (std::process::Output, Vec<Vec<u8>>) {
    let rx_mac = lab::RX_MAC.to_string();
    // `count` is per thread (-t N).
    let threads = extra
        .iter()
        .position(|&a| a == "-t")
        .map_or(1, |i| extra[i + 1].parse::<usize>().unwrap());
    let count = (want / threads).to_string();
    let mut args: Vec<String> = [
        "run",
        "--dev",
        lab::TX_IF,
        "--dst",
        "10.99.0.2",
        "--dst-mac",
        &rx_mac,
        "--backend",
        "xdp_live",
        "--count",
        &count,
        // 20 kpps: the 64-frame handovers come 3.2 ms apart, so veth's 256-frame XDP ring
        // holds 13 ms of them; at 100 kpps a receiving NAPI delayed 2.6 ms by a loaded
        // machine made the driver refuse frames.
        "--ratep",
        "20000",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(options(params));
    args.extend(extra.iter().map(|s| s.to_string()));
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let (o, got) = capture_frames(lab, &a, want, |f| {
        let reply = f[..6] == lab::TX_MAC.0 && f[6..12] == lab::RX_MAC.0;
        f.len() > 12 && !reply && f.windows(4).any(|w| w == MAGIC)
    });
    assert!(o.status.success(), "{params:?}: {}", stderr(&o));
    assert!(
        stdout(&o).contains("xdp_live on veth-tx"),
        "{params:?}: {}",
        stdout(&o)
    );
    (o, got)
}

/// The sent and error counts of the run's `Result:` lines (the sum over threads): "usec,
/// SENT (" on the first, "errors: N" on the next.
fn result_sent_errors(o: &std::process::Output) -> (u64, u64) {
    let out = stdout(o);
    let number_after = |key: &str| -> u64 {
        let at = out
            .find(key)
            .unwrap_or_else(|| panic!("no {key:?} in {out}"))
            + key.len();
        let digits: String = out[at..]
            .trim_start()
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().unwrap()
    };
    (number_after("usec,"), number_after("errors:"))
}

fn be32(f: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(f[at..at + 4].try_into().unwrap())
}

/// The pktgen header's place in the frames of `c`.
fn pktgen_at(c: &DevConfig) -> usize {
    Layout::new(c).header_len()
}

/// What an independent parser reads in a received frame: the checksums it computes hold.
struct Seen {
    src_port: u16,
    src_ip: Vec<u8>,
    dst_ip: Vec<u8>,
    vids: Vec<u16>,
}

fn parsed(f: &[u8], what: &str) -> Seen {
    use etherparse::{NetSlice, SlicedPacket, TransportSlice};
    let s = SlicedPacket::from_ethernet(f).unwrap_or_else(|e| panic!("{what}: {e}"));
    let Some(TransportSlice::Udp(u)) = &s.transport else {
        panic!("{what}: not UDP")
    };
    let (src_ip, dst_ip, csum) = match &s.net {
        Some(NetSlice::Ipv4(ip)) => {
            let h = ip.header().to_header();
            assert_eq!(h.header_checksum, h.calc_header_checksum(), "{what}");
            let c = u.to_header().calc_checksum_ipv4(&h, u.payload()).unwrap();
            (h.source.to_vec(), h.destination.to_vec(), c)
        }
        Some(NetSlice::Ipv6(ip)) => {
            let h = ip.header().to_header();
            let c = u.to_header().calc_checksum_ipv6(&h, u.payload()).unwrap();
            (h.source.to_vec(), h.destination.to_vec(), c)
        }
        _ => panic!("{what}: not IP"),
    };
    if u.checksum() != 0 {
        assert_eq!(u.checksum(), csum, "{what}: UDP checksum");
    }
    Seen {
        src_port: u.source_port(),
        src_ip,
        dst_ip,
        vids: s.vlan_ids().iter().map(|v| v.value()).collect(),
    }
}

/// For each kind of field the walk moves in order, the frames captured in the receiving
/// namespace equal byte for byte what the general walk writes for the same options (with
/// the timestamps the program wrote, which the UDP checksum covers): every field is exact
/// per frame, though the kernel recycles each page for many frames.
fn received_frames_equal_the_general_walk_for_each_field() {
    if !live_frames_or_skip() {
        return;
    }
    let lab = Lab::create_with(RxMode::Stack, true).unwrap();
    const N: usize = 1200;
    let cases: &[&[(&str, &str)]] = &[
        // The outer tag's PCP/DEI do not survive the receiver's VLAN offload: 0 there.
        &[
            ("vlan_id", "100"),
            ("udp_src_min", "1000"),
            ("udp_src_max", "1010"),
        ],
        &[
            ("vlan_id", "100"),
            ("vlan_p", "3"),
            ("svlan_id", "200"),
            ("udp_dst_min", "10"),
            ("udp_dst_max", "20"),
            ("flag", "UDPCSUM"),
        ],
        &[("mpls", "0001000a,0002000a"), ("flag", "UDPCSUM")],
        &[
            ("flag", "IPV6"),
            ("dst6", "fd00::2"),
            ("src6", "fd00::1"),
            ("traffic_class", "2a"),
            ("flag", "UDPCSUM"),
            ("udp_src_min", "1000"),
            ("udp_src_max", "1100"),
        ],
        &[
            ("src_min", "10.99.0.1"),
            ("src_max", "10.99.0.9"),
            ("dst_min", "10.99.0.2"),
            ("dst_max", "10.99.1.200"),
            ("flag", "UDPCSUM"),
        ],
        &[("src_mac_count", "3"), ("dst_mac_count", "4")],
        &[
            ("dst_min", "10.99.0.2"),
            ("dst_max", "10.99.0.250"),
            ("flows", "16"),
            ("flowlen", "5"),
            ("flag", "FLOW_SEQ"),
        ],
        &[
            ("min_pkt_size", "60"),
            ("max_pkt_size", "400"),
            ("flag", "UDPCSUM"),
        ],
    ];
    for params in cases {
        let (_, got) = live_capture(&lab, params, &[], N);
        assert_eq!(got.len(), N, "{params:?}");
        let (c, mut w) = walk(params);
        let tv = pktgen_at(&c) + 8;
        let mut buf = w.prefill();
        for (k, f) in got.iter().enumerate() {
            let len = w.advance();
            w.write(
                &mut buf[..len],
                upktgen::stream::Stamp::tv(be32(f, tv), be32(f, tv + 4)),
            );
            w.sent();
            assert_eq!(f[..], buf[..len], "{params:?}: frame {k}");
            if c.mpls.is_empty() {
                parsed(f, &format!("{params:?}: frame {k}"));
            }
        }
    }
}

/// Every value in `all` seen, and nothing else.
fn covers<T: Ord + Clone + std::fmt::Debug>(vals: impl Iterator<Item = T>, all: &[T]) {
    let seen: std::collections::BTreeSet<T> = vals.collect();
    assert_eq!(seen.into_iter().collect::<Vec<_>>(), all);
}

/// Random fields (from the kernel's generator): every value drawn lies in its range and
/// each range's values all appear; checksums and sequence numbers stay right.
fn received_random_fields_lie_in_range_and_cover_it() {
    if !live_frames_or_skip() {
        return;
    }
    let lab = Lab::create_with(RxMode::Stack, true).unwrap();
    const N: usize = 2000;
    let params = [
        ("udp_src_min", "1000"),
        ("udp_src_max", "1016"),
        ("flag", "UDPSRC_RND"),
        ("src_min", "10.99.0.1"),
        ("src_max", "10.99.0.9"),
        ("flag", "IPSRC_RND"),
        ("min_pkt_size", "60"),
        ("max_pkt_size", "80"),
        ("flag", "TXSIZE_RND"),
        ("flag", "UDPCSUM"),
    ];
    let (o, got) = live_capture(&lab, &params, &[], N);
    assert!(
        stdout(&o).contains("--seed does not reproduce them"),
        "{}",
        stdout(&o)
    );
    assert_eq!(got.len(), N);
    let seen: Vec<Seen> = got
        .iter()
        .enumerate()
        .map(|(k, f)| parsed(f, &format!("frame {k}")))
        .collect();
    for (k, f) in got.iter().enumerate() {
        assert_eq!(be32(f, 42 + 4), k as u32 + 1, "frame {k}: sequence");
    }
    covers(
        seen.iter().map(|s| s.src_port),
        &(1000..1016).collect::<Vec<_>>(),
    );
    covers(
        seen.iter().map(|s| s.src_ip[3]),
        &(1..9).collect::<Vec<_>>(),
    );
    covers(got.iter().map(Vec::len), &(60..80).collect::<Vec<_>>());
    // Random VLAN ids and IPv6 destinations (dst6_min | random) & dst6_max.
    let params = [
        ("flag", "IPV6"),
        ("dst6_min", "fd00::100"),
        ("dst6_max", "fd00::10f"),
        ("vlan_id", "5"),
        ("flag", "VID_RND"),
        ("flag", "UDPCSUM"),
    ];
    let (_, got) = live_capture(&lab, &params, &[], N);
    assert_eq!(got.len(), N);
    let mut vids = std::collections::BTreeSet::new();
    let mut low = std::collections::BTreeSet::new();
    for (k, f) in got.iter().enumerate() {
        let s = parsed(f, &format!("frame {k}"));
        assert_eq!(s.vids.len(), 1);
        vids.insert(s.vids[0]);
        assert_eq!(
            s.dst_ip[..14],
            [0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        );
        assert_eq!(s.dst_ip[14], 1, "frame {k}");
        low.insert(s.dst_ip[15]);
    }
    // 16 values over 2000 draws: the chance that one is missing is 16 * (15/16)^2000, about
    // 1e-55 (with the 256 values of fd00::100..fd00::1ff it was 1 in 10).
    assert_eq!(low.len(), 16, "every last byte of fd00::100..fd00::10f");
    // 2000 draws of 4096 ids: about 1585 distinct expected; far fewer means no randomness.
    assert!(vids.len() > 1400, "{} distinct VLAN ids", vids.len());
}

/// IMIX from one prepared 1500-byte frame shrunk per packet: the received sizes follow
/// the weights, and the Result line's bps counts the bytes the receiver got.
fn imix_sizes_follow_the_weights_and_bps_counts_the_bytes_sent() {
    if !live_frames_or_skip() {
        return;
    }
    let lab = Lab::create_with(RxMode::Stack, true).unwrap();
    const N: usize = 6000;
    let params = [("imix_weights", "64,7 576,4 1500,1"), ("flag", "UDPCSUM")];
    let (_, got) = live_capture(&lab, &params, &[], N);
    assert_eq!(got.len(), N);
    let mut h = std::collections::BTreeMap::new();
    for (k, f) in got.iter().enumerate() {
        parsed(f, &format!("frame {k}"));
        *h.entry(f.len()).or_insert(0u64) += 1;
    }
    // The kernel's 100-slot table gives 64, 576 and 1500 bytes 58, 33 and 9 slots (shares
    // rounded down, the last closing at 100): each count within 5 standard deviations of
    // its binomial mean (a false alarm about once in 1.7 million runs).
    assert_eq!(h.len(), 3, "{h:?}");
    for (len, slots) in [(64usize, 58u64), (576, 33), (1500, 9)] {
        let p = slots as f64 / 100.0;
        let (mean, sd) = (N as f64 * p, (N as f64 * p * (1.0 - p)).sqrt());
        let n = h[&len] as f64;
        assert!(
            (n - mean).abs() < 5.0 * sd,
            "{len}: {n}, want {mean} ± 5 × {sd}"
        );
    }
    // Through the lab: bps from the bytes sent, which veth-rx counted to the byte.
    let o = upktgen(&[
        "--backend",
        "xdp_live",
        "--count",
        "100000",
        "--imix-weights",
        "64,7 576,4 1500,1",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j = json(&o);
    let r = &j["outcome"]["result"];
    let bytes = r["imix_bytes"].as_u64().unwrap();
    assert_eq!(j["rx_iface"]["rx_bytes"].as_u64(), Some(bytes), "{j:#}");
    assert_eq!(
        j["outcome"]["backend"]["xdp_live"]["bytes"].as_u64(),
        Some(bytes)
    );
    let mean = bytes as f64 / 100_000.0;
    // The table's mean frame: 0.58 * 64 + 0.33 * 576 + 0.09 * 1500 = 362.2 bytes.
    assert!((mean - 362.2).abs() < 15.0, "mean frame {mean}");
}

/// The receiver's per-flow sequence numbers have no holes while ports, source MACs and
/// sizes are drawn at random per packet.
fn receiver_sees_every_sequence_number_with_random_fields() {
    if !live_frames_or_skip() {
        return;
    }
    let o = upktgen(&[
        "--backend",
        "xdp_live",
        "--lab-rx",
        "stack",
        "--rx-analyze",
        "--count",
        "20000",
        "--ratep",
        "20000",
        "--flag",
        "UDPSRC_RND",
        "--udp-src-min",
        "1",
        "--udp-src-max",
        "5000",
        "--flag",
        "UDPDST_RND",
        "--udp-dst-min",
        "9",
        "--udp-dst-max",
        "100",
        "--flag",
        "MACSRC_RND",
        "--src-mac-count",
        "8",
        "--flag",
        "TXSIZE_RND",
        "--min-pkt-size",
        "60",
        "--max-pkt-size",
        "1000",
        "--flag",
        "UDPCSUM",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j = json(&o);
    assert_eq!(j["backend"]["name"], "xdp_live");
    let t = &j["rx_analysis"]["receiver"]["sink"]["totals"];
    // Every frame the driver took (a refused one is an error, its number spent) and the
    // receiver's ring did not drop arrives exactly once; only those two make holes.
    let n = |v: &serde_json::Value| v.as_u64().unwrap();
    let refused = n(&j["outcome"]["result"]["errors"]);
    let ring_drops = n(&j["rx_analysis"]["receiver"]["ring"]["drops"]);
    assert_eq!(n(&j["outcome"]["result"]["sent"]) + refused, 20000);
    assert_eq!(n(&t["received"]) + refused + ring_drops, 20000, "{t}");
    assert!(n(&t["lost"]) <= refused + ring_drops, "{t}");
    for k in ["duplicates", "reordered", "restarts", "jumps"] {
        assert_eq!(t[k], 0, "{k}: {t}");
    }
    if refused + ring_drops > 0 {
        return; // the first and last numbers below may be among the lost
    }
    let flows = j["rx_analysis"]["receiver"]["sink"]["flows"]
        .as_array()
        .unwrap();
    assert_eq!(flows.len(), 1);
    assert_eq!(
        (flows[0]["first_seq"].clone(), flows[0]["last_seq"].clone()),
        (1.into(), 20000.into())
    );
    assert_eq!(
        j["rx_iface"]["rx_bytes"],
        j["outcome"]["result"]["imix_bytes"]
    );
}

/// The counters of the receiving namespace's UDP stack (`/proc/net/snmp` or `snmp6`).
fn udp_counters(ns: &str, file: &str, prefix: &str) -> std::collections::HashMap<String, u64> {
    let o = in_ns_cmd(ns, &["cat", file]);
    let t = String::from_utf8_lossy(&o.stdout).to_string();
    let mut m = std::collections::HashMap::new();
    if file.ends_with("snmp6") {
        for l in t.lines() {
            let mut it = l.split_whitespace();
            if let (Some(k), Some(v)) = (it.next(), it.next())
                && k.starts_with(prefix)
            {
                m.insert(k.to_string(), v.parse().unwrap());
            }
        }
    } else {
        let rows: Vec<&str> = t.lines().filter(|l| l.starts_with(prefix)).collect();
        let names = rows[0].split_whitespace().skip(1);
        let vals = rows[1].split_whitespace().skip(1);
        for (k, v) in names.zip(vals) {
            m.insert(format!("{prefix}{k}"), v.parse().unwrap());
        }
    }
    m
}

fn in_ns_cmd(ns: &str, args: &[&str]) -> std::process::Output {
    let o = std::process::Command::new("ip")
        .args(["netns", "exec", ns])
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// The receiving kernel's UDP stack verifies every checksum (IPv4 and IPv6, ports and
/// sizes walked): each datagram reaches the port lookup (no socket: NoPorts counts it) and
/// none fails its checksum.
fn receiving_udp_stack_verifies_every_checksum() {
    if !live_frames_or_skip() {
        return;
    }
    let lab = Lab::create_with(RxMode::Stack, true).unwrap();
    // The lab turns IPv6 off; veth-rx takes fd00::2 here.
    let v6_on = format!("net.ipv6.conf.{}.disable_ipv6=0", lab::RX_IF);
    in_ns_cmd(&lab.rx_ns, &["sysctl", "-qw", &v6_on]);
    in_ns_cmd(
        &lab.rx_ns,
        &[
            "ip",
            "addr",
            "add",
            "fd00::2/64",
            "dev",
            lab::RX_IF,
            "nodad",
        ],
    );
    const N: usize = 3000;
    let walked = [
        ("udp_src_min", "1000"),
        ("udp_src_max", "1100"),
        ("udp_dst_min", "9"),
        ("udp_dst_max", "30"),
        ("min_pkt_size", "60"),
        ("max_pkt_size", "700"),
        ("flag", "UDPCSUM"),
    ];
    for (v6, file, prefix) in [
        (false, "/proc/net/snmp", "Udp:"),
        (true, "/proc/net/snmp6", "Udp6"),
    ] {
        let mut params: Vec<(&str, &str)> = walked.to_vec();
        if v6 {
            params.extend([("flag", "IPV6"), ("dst6", "fd00::2"), ("src6", "fd00::1")]);
        }
        let before = udp_counters(&lab.rx_ns, file, prefix);
        let (_, got) = live_capture(&lab, &params, &[], N);
        assert_eq!(got.len(), N, "v6 {v6}");
        std::thread::sleep(Duration::from_millis(100));
        let after = udp_counters(&lab.rx_ns, file, prefix);
        let d = |k: &str| after[&format!("{prefix}{k}")] - before[&format!("{prefix}{k}")];
        assert_eq!(d("InCsumErrors"), 0, "v6 {v6}");
        assert_eq!(
            d("NoPorts"),
            N as u64,
            "v6 {v6}: every datagram verified and looked up"
        );
    }
}

/// `-t 2`: each thread runs its own program with its own counters and flows: every
/// sequence number arrives twice, each time the walk's frame for it.
fn each_thread_has_its_own_sequence_and_flows() {
    if !live_frames_or_skip() {
        return;
    }
    let lab = Lab::create_with(RxMode::Stack, true).unwrap();
    let params = [
        ("dst_min", "10.99.0.2"),
        ("dst_max", "10.99.0.100"),
        ("flows", "8"),
        ("flowlen", "3"),
        ("flag", "FLOW_SEQ"),
        ("flag", "UDPCSUM"),
    ];
    const N: usize = 2000;
    let (o, got) = live_capture(&lab, &params, &["-t", "2"], N);
    // What the driver took arrived (a frame it refused is an error, its number spent).
    let (sent, errors) = result_sent_errors(&o);
    assert_eq!(sent + errors, N as u64, "{}", stdout(&o));
    assert_eq!(got.len() as u64, sent, "{}", stdout(&o));
    let (c, mut w) = walk(&params);
    let at = pktgen_at(&c);
    let mut buf = w.prefill();
    let mut want = Vec::new();
    for _ in 0..N / 2 {
        let len = w.advance();
        w.write(&mut buf[..len], upktgen::stream::Stamp::default());
        w.sent();
        want.push(buf[..len].to_vec());
    }
    let mut times = vec![0; N / 2];
    for f in &got {
        let seq = be32(f, at + 4) as usize;
        assert!((1..=N / 2).contains(&seq), "seq {seq}");
        times[seq - 1] += 1;
        // The walk's frame apart from the timestamp and the UDP checksum it moves.
        let mut g = f.clone();
        g[at + 8..at + 16].fill(0);
        let csum = Layout::new(&c).l4() + 6;
        let mut wf = want[seq - 1].clone();
        wf[csum..csum + 2].copy_from_slice(&f[csum..csum + 2]);
        assert_eq!(g, wf, "seq {seq}");
        parsed(f, &format!("seq {seq}"));
    }
    assert!(
        times.iter().all(|&t| t <= 2),
        "no sequence number more than twice"
    );
    if errors == 0 {
        assert!(times.iter().all(|&t| t == 2), "every sequence number twice");
    }
}

/// `--backend auto` in the lab takes live frames for the walk's options too (before, any
/// of them sent it to af_xdp); what xdp_live still cannot do rules it out, saying why.
fn auto_picks_xdp_live_for_the_walk_and_says_why_not_otherwise() {
    if !live_frames_or_skip() {
        return;
    }
    for opts in [
        &["--vlan-id", "7", "--svlan-id", "8"][..],
        &["--flag", "IPV6", "--dst6", "fd00::2", "--flag", "UDPCSUM"][..],
        &[
            "--imix-weights",
            "64,7 576,4 1500,1",
            "--flag",
            "UDPSRC_RND",
            "--udp-src-max",
            "99",
        ][..],
        &[
            "--dst-max",
            "10.99.0.200",
            "--flows",
            "64",
            "--flowlen",
            "4",
        ][..],
    ] {
        let mut a = vec!["--backend", "auto", "--count", "20000", "--json"];
        a.extend_from_slice(opts);
        let o = upktgen(&a);
        assert!(o.status.success(), "{opts:?}: {}", stderr(&o));
        assert_eq!(
            json(&o)["backend"]["name"],
            "xdp_live",
            "{opts:?}: {}",
            stderr(&o)
        );
        assert_eq!(json(&o)["reconciliation"]["lost"], 0, "{opts:?}");
    }
    let o = upktgen(&[
        "--backend",
        "auto",
        "--count",
        "2000",
        "--vlan-id",
        "7",
        "--burst",
        "4",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("xdp_live ruled out: --burst"),
        "{}",
        stderr(&o)
    );
}

pub(crate) const TESTS: &[crate::harness::Test] = crate::tests![
    kernel_runs_the_program_to_the_same_frames_as_userspace,
    kernel_copies_each_streams_frame_from_its_slot,
    lab_run_delivers_every_packet_and_cleans_up,
    stack_receiver_lab_run_delivers_every_packet,
    kernel_udp_socket_receives_sequence_1_to_n_in_order,
    a_peer_without_napi_is_refused_with_a_clear_message,
    named_device_run_reconciles_with_the_interface_counters,
    options_xdp_live_cannot_honour_are_refused,
    sigint_stops_the_run_with_a_partial_report,
    received_frames_equal_the_general_walk_for_each_field,
    received_random_fields_lie_in_range_and_cover_it,
    imix_sizes_follow_the_weights_and_bps_counts_the_bytes_sent,
    receiver_sees_every_sequence_number_with_random_fields,
    receiving_udp_stack_verifies_every_checksum,
    each_thread_has_its_own_sequence_and_flows,
    auto_picks_xdp_live_for_the_walk_and_says_why_not_otherwise,
];
