//! The program compiled from a general walk ([`super::walk_spec`]) run on recycled pages
//! (on the eBPF interpreter of the program's own tests), against the walk itself
//! ([`crate::pg::generate`]).

use super::{XdpLiveConfig, walk_spec};
use crate::bpf::prog::xdp_live::vm::{FLOWS_FD, REDIRECT_TARGET, STATE_FD, Vm, World};
use crate::bpf::prog::xdp_live::{Spec, XDP_REDIRECT, state, xdp_program_with_flows};
use crate::pg::generate::{DeviceInfo, Generator, Layout};
use crate::pg::{DevConfig, Flag};
use crate::stream::{FrameSource, PgFrames};
use crate::wire::PktgenHdr;
use etherparse::{NetSlice, SlicedPacket, TransportSlice};
use std::collections::BTreeMap;

fn config(cmds: &[&str]) -> DevConfig {
    let mut c = DevConfig::new("veth0");
    c.command("dst_mac 02:00:00:99:00:02").unwrap();
    let v6 = cmds.iter().any(|c| c.contains("IPV6"));
    if !v6
        && !cmds
            .iter()
            .any(|c| c.starts_with("dst ") || c.starts_with("dst_min"))
    {
        c.command("dst 10.99.0.2").unwrap();
    }
    for cmd in cmds {
        c.command(cmd).unwrap_or_else(|e| panic!("{cmd}: {e}"));
    }
    c
}

fn info() -> DeviceInfo {
    DeviceInfo {
        mac: "02:00:00:99:00:01".parse().unwrap(),
        ipv4: Some("10.99.0.1".parse().unwrap()),
        tx_queues: 1,
    }
}

/// A run of `n` frames: what the program made and what the walk writes for the same
/// packets (stamped with the program's timestamps).
struct Run {
    spec: Spec,
    got: Vec<Vec<u8>>,
    want: Vec<Vec<u8>>,
}

fn run(cmds: &[&str], n: usize) -> Run {
    let c = config(cmds);
    let layout = Layout::new(&c);
    let g = Generator::new(&c, &info(), 1).unwrap();
    let mut pg = PgFrames::new(layout, g, c.max_frame_len(), 0);
    let frame = pg.prefill();
    let cfg = XdpLiveConfig {
        ifindex: REDIRECT_TARGET,
        batch: 4,
        plain: false,
        timestamps: !c.has(Flag::NoTimestamp),
        udp_csum: c.has(Flag::Udpcsum),
        udp_src: (0, 0),
        udp_dst: (0, 0),
        receive: false,
    };
    let spec = walk_spec(pg.generator().unwrap(), pg.layout(), &cfg, &frame);
    let prog = xdp_program_with_flows(&spec, STATE_FD, FLOWS_FD).unwrap();
    let mut st = spec.initial_state();
    st[state::RT_OFFSET as usize..state::RT_OFFSET as usize + 8]
        .copy_from_slice(&(1_700_000_000_000_000_000u64 - 5_000_000_000).to_ne_bytes());
    let mut world = World {
        mono_ns: 5_000_000_000 + 123_456_789,
        flows: vec![0; spec.flows_size()],
        ..World::default()
    };
    let mut pages = vec![frame.clone(); 3];
    let mut buf = frame.clone();
    let (mut got, mut want) = (Vec::new(), Vec::new());
    let tv = spec.at.tv_sec();
    for k in 0..n {
        if k == n / 2 {
            world.mono_ns += 1_500_000_000;
            st[state::CLOCK_AT as usize..state::CLOCK_AT as usize + 8].fill(0);
        }
        let page = &mut pages[k % 3];
        world.len = None; // each run starts from the prepared length (reset_ctx)
        let rc = Vm::on(page, &mut st, &mut world).run(&prog);
        assert_eq!(rc, XDP_REDIRECT as u64, "frame {k}");
        let out = page[..world.len.unwrap_or(frame.len())].to_vec();
        let be = |o: usize| u32::from_be_bytes(out[o..o + 4].try_into().unwrap());
        let len = pg.advance();
        pg.write(
            &mut buf[..len],
            crate::stream::Stamp::tv(be(tv), be(tv + 4)),
        );
        pg.sent();
        want.push(buf[..len].to_vec());
        got.push(out);
    }
    Run { spec, got, want }
}

/// Every frame equal byte for byte to the walk's.
fn same(cmds: &[&str], n: usize) -> Run {
    let r = run(cmds, n);
    for (k, (g, w)) in r.got.iter().zip(&r.want).enumerate() {
        assert_eq!(g, w, "{cmds:?}: frame {k}");
        parse(g, k);
    }
    assert!(!r.spec.draws_random(), "{cmds:?}");
    r
}

struct Parsed {
    vids: Vec<u16>,
    src_port: u16,
    dst_port: u16,
    src_ip: Vec<u8>,
    dst_ip: Vec<u8>,
    tclass: Option<u8>,
}

/// An independent parser's reading of frame `k`: the checksums it computes hold and
/// pktgen's sequence number is k + 1.
fn parse(f: &[u8], k: usize) -> Parsed {
    // etherparse stops at MPLS: the IP header follows the bottom-of-stack entry.
    let s = if f[12..14] == [0x88, 0x47] {
        let mut p = 14;
        while f[p + 2] & 1 == 0 {
            p += 4;
        }
        SlicedPacket::from_ip(&f[p + 4..])
    } else {
        SlicedPacket::from_ethernet(f)
    }
    .unwrap_or_else(|e| panic!("frame {k}: {e}"));
    let vids = s.vlan_ids().iter().map(|v| v.value()).collect();
    let Some(TransportSlice::Udp(u)) = &s.transport else {
        panic!("frame {k}: not UDP: {f:02x?}")
    };
    let (src_ip, dst_ip, want_csum, tclass) = match &s.net {
        Some(NetSlice::Ipv4(ip)) => {
            let h = ip.header().to_header();
            assert_eq!(h.header_checksum, h.calc_header_checksum(), "frame {k}");
            let l3 = ip.header().slice().as_ptr() as usize - f.as_ptr() as usize;
            assert_eq!(
                usize::from(h.total_len) + l3,
                f.len(),
                "frame {k}: IPv4 length"
            );
            let c = u.to_header().calc_checksum_ipv4(&h, u.payload()).unwrap();
            (h.source.to_vec(), h.destination.to_vec(), c, None)
        }
        Some(NetSlice::Ipv6(ip)) => {
            let h = ip.header().to_header();
            let c = u.to_header().calc_checksum_ipv6(&h, u.payload()).unwrap();
            (
                h.source.to_vec(),
                h.destination.to_vec(),
                c,
                Some(h.traffic_class),
            )
        }
        _ => panic!("frame {k}: not IP"),
    };
    let l4 = u.slice().as_ptr() as usize - f.as_ptr() as usize;
    assert_eq!(
        usize::from(u.length()) + l4,
        f.len(),
        "frame {k}: UDP length"
    );
    if u.checksum() != 0 {
        assert_eq!(u.checksum(), want_csum, "frame {k}: UDP checksum");
    }
    let h = PktgenHdr::parse(u.payload()).unwrap();
    assert_eq!(h.seq, k as u32 + 1, "frame {k}");
    Parsed {
        vids,
        src_port: u.source_port(),
        dst_port: u.destination_port(),
        src_ip,
        dst_ip,
        tclass,
    }
}

#[test]
fn vlan_qinq_and_mpls_frames_equal_the_walk() {
    same(
        &[
            "vlan_id 100",
            "vlan_p 3",
            "vlan_cfi 1",
            "udp_src_min 1000",
            "udp_src_max 1005",
        ],
        40,
    );
    same(
        &[
            "vlan_id 100",
            "svlan_id 200",
            "svlan_p 5",
            "udp_dst_min 10",
            "udp_dst_max 20",
            "flag UDPCSUM",
        ],
        40,
    );
    same(
        &[
            "mpls 0001000a,0002000a,0003000a",
            "flag UDPCSUM",
            "udp_src_min 7",
            "udp_src_max 9",
        ],
        40,
    );
}

#[test]
fn ipv6_frames_equal_the_walk() {
    let r = same(
        &[
            "flag IPV6",
            "dst6 fd00::2",
            "src6 fd00::1",
            "traffic_class 2a",
            "flag UDPCSUM",
            "udp_src_min 1000",
            "udp_src_max 1010",
            "pkt_size 100",
        ],
        40,
    );
    assert_eq!(parse(&r.got[0], 0).tclass, Some(0x2a));
    same(
        &[
            "flag IPV6",
            "dst6 fd00::2",
            "vlan_id 5",
            "flag NO_TIMESTAMP",
        ],
        10,
    );
}

#[test]
fn ipv4_address_ranges_and_mac_counts_equal_the_walk() {
    let r = same(
        &[
            "src_min 10.0.0.1",
            "src_max 10.0.0.5",
            "dst_min 10.1.0.250",
            "dst_max 10.1.1.4",
            "flag UDPCSUM",
        ],
        30,
    );
    assert_eq!(parse(&r.got[0], 0).dst_ip, [10, 1, 0, 251]);
    assert_eq!(
        parse(&r.got[6], 6).dst_ip,
        [10, 1, 1, 1],
        "carries into the third byte"
    );
    // Counts carry across bytes (…:ff:fe + 0..4); the first byte never changes.
    let r = same(
        &[
            "src_mac_count 3",
            "dst_mac 02:00:00:00:ff:fe",
            "dst_mac_count 5",
        ],
        12,
    );
    assert_eq!(r.got[3][..6], [2, 0, 0, 1, 0, 1]);
    // The whole IPv4 space, u32 arithmetic at its edge.
    same(&["dst_min 255.255.255.254", "dst_max 255.255.255.255"], 5);
}

#[test]
fn sequential_flows_equal_the_walk() {
    same(
        &[
            "dst_min 10.1.0.1",
            "dst_max 10.1.0.200",
            "flows 8",
            "flowlen 3",
            "flag FLOW_SEQ",
            "flag UDPCSUM",
        ],
        100,
    );
}

#[test]
fn size_walks_equal_the_walk() {
    let r = same(&["min_pkt_size 60", "max_pkt_size 70", "flag UDPCSUM"], 30);
    let lens: Vec<usize> = r.got.iter().map(Vec::len).take(12).collect();
    assert_eq!(lens, [61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 60, 61]);
    // Below the headers a frame keeps them (IPv6's smallest frame is 78 bytes).
    let r = same(
        &[
            "flag IPV6",
            "dst6 fd00::2",
            "min_pkt_size 70",
            "max_pkt_size 90",
            "flag UDPCSUM",
        ],
        25,
    );
    assert_eq!(r.got[0].len(), 78);
    same(
        &[
            "vlan_id 7",
            "svlan_id 8",
            "min_pkt_size 100",
            "max_pkt_size 1500",
        ],
        20,
    );
}

/// Frames with random fields: each parses with right checksums and sequence numbers.
fn random(cmds: &[&str], n: usize) -> Run {
    let r = run(cmds, n);
    assert!(r.spec.draws_random(), "{cmds:?}");
    for (k, g) in r.got.iter().enumerate() {
        parse(g, k);
    }
    r
}

/// Every value in `lo..=hi` and no other.
fn covers<T: Ord + Clone + std::fmt::Debug>(vals: impl Iterator<Item = T>, all: &[T]) {
    let seen: std::collections::BTreeSet<T> = vals.collect();
    assert_eq!(seen.into_iter().collect::<Vec<_>>(), all);
}

#[test]
fn random_ports_addresses_and_macs_lie_in_range_and_cover_it() {
    let r = random(
        &[
            "udp_src_min 1000",
            "udp_src_max 1008",
            "flag UDPSRC_RND",
            "udp_dst_min 5",
            "udp_dst_max 7",
            "flag UDPDST_RND",
            "flag UDPCSUM",
        ],
        400,
    );
    let p: Vec<Parsed> = r.got.iter().enumerate().map(|(k, f)| parse(f, k)).collect();
    covers(
        p.iter().map(|x| x.src_port),
        &(1000..1008).collect::<Vec<_>>(),
    );
    covers(p.iter().map(|x| x.dst_port), &[5, 6]);
    // Random addresses draw [min, max); random destinations skip 127/8.
    let r = random(
        &[
            "src_min 10.0.0.1",
            "src_max 10.0.0.9",
            "flag IPSRC_RND",
            "dst_min 126.255.255.254",
            "dst_max 128.0.0.2",
            "flag IPDST_RND",
        ],
        500,
    );
    let p: Vec<Parsed> = r.got.iter().enumerate().map(|(k, f)| parse(f, k)).collect();
    covers(p.iter().map(|x| x.src_ip[3]), &(1..9).collect::<Vec<_>>());
    covers(
        p.iter().map(|x| x.dst_ip.clone()),
        &[
            vec![126, 255, 255, 254],
            vec![126, 255, 255, 255],
            vec![128, 0, 0, 0],
            vec![128, 0, 0, 1],
        ],
    );
    let r = random(
        &[
            "src_mac_count 4",
            "flag MACSRC_RND",
            "dst_mac 02:00:00:00:00:fe",
            "dst_mac_count 3",
            "flag MACDST_RND",
        ],
        200,
    );
    covers(r.got.iter().map(|f| f[11]), &[1, 2, 3, 4]);
    covers(
        r.got.iter().map(|f| (f[4], f[5])),
        &[(0, 0xfe), (0, 0xff), (1, 0)],
    );
    for (g, w) in r.got.iter().zip(&r.want) {
        assert_eq!(g[12..], w[12..], "only the MACs are drawn");
    }
}

#[test]
fn random_tags_labels_and_ipv6_destinations_lie_in_range() {
    let r = random(
        &[
            "vlan_id 100",
            "vlan_p 6",
            "svlan_id 9",
            "flag VID_RND",
            "flag SVID_RND",
        ],
        3000,
    );
    let mut outer = std::collections::BTreeSet::new();
    for (k, f) in r.got.iter().enumerate() {
        let p = parse(f, k);
        assert_eq!(p.vids.len(), 2);
        assert_eq!(f[18] >> 5, 6, "the inner tag keeps its PCP");
        outer.insert(p.vids[0]);
    }
    assert!(
        outer.len() > 2000,
        "{} of 4096 outer ids in 3000 frames",
        outer.len()
    );
    let r = random(&["mpls 0001000a,0002010a", "flag MPLS_RND"], 200);
    for (k, f) in r.got.iter().enumerate() {
        assert_eq!(
            f[14..18],
            [0, 1, 0, 0x0a],
            "frame {k}: the first label is kept"
        );
        let e = u32::from_be_bytes(f[18..22].try_into().unwrap());
        assert_eq!(e & 0xfff0_0100, 0x100, "frame {k}: {e:#x} bottom of stack");
    }
    covers(r.got.iter().map(|f| f[21] & 1), &[0, 1]);
    let r = random(
        &[
            "flag IPV6",
            "dst6_min fd00::10",
            "dst6_max fd00::ff:1f",
            "flag UDPCSUM",
        ],
        3000,
    );
    for (k, f) in r.got.iter().enumerate() {
        let d = parse(f, k).dst_ip;
        assert_eq!(
            d[..13],
            [0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
            "frame {k}"
        );
        assert_eq!(d[15] & 0x10, 0x10, "frame {k}: min's bits set");
        assert_eq!(d[15] & !0x1f, 0, "frame {k}: max's bits only");
    }
    covers(
        r.got.iter().map(|f| f[14 + 24 + 13]),
        &(0..=0xff).collect::<Vec<u8>>(),
    );
}

#[test]
fn random_sizes_lie_in_range_and_imix_follows_its_weights() {
    let r = random(
        &[
            "min_pkt_size 60",
            "max_pkt_size 64",
            "flag TXSIZE_RND",
            "flag UDPCSUM",
        ],
        200,
    );
    covers(r.got.iter().map(Vec::len), &[60, 61, 62, 63]);
    let n = 12_000;
    let r = random(&["imix_weights 64,7 576,4 1500,1", "flag UDPCSUM"], n);
    let mut h = BTreeMap::new();
    for f in &r.got {
        *h.entry(f.len()).or_insert(0u64) += 1;
    }
    // The kernel's table: 58 slots of 64, 33 of 576, 9 of 1500 (shares rounded down,
    // the last closing at 100). Each count within 5 standard deviations of n * p.
    for (len, slots) in [(64usize, 58u64), (576, 33), (1500, 9)] {
        let p = slots as f64 / 100.0;
        let mean = n as f64 * p;
        let sd = (n as f64 * p * (1.0 - p)).sqrt();
        let got = h.get(&len).copied().unwrap_or(0) as f64;
        assert!(
            (got - mean).abs() < 5.0 * sd,
            "{len}: {got} frames, expected {mean} ± {sd}"
        );
    }
    assert_eq!(h.len(), 3, "{h:?}");
}

#[test]
fn random_flows_keep_their_destination_for_flowlen_packets() {
    let r = random(
        &[
            "dst_min 10.1.0.1",
            "dst_max 10.1.3.255",
            "flows 16",
            "flowlen 4",
            "flag IPDST_RND",
        ],
        2000,
    );
    let dsts: std::collections::BTreeSet<Vec<u8>> = r
        .got
        .iter()
        .enumerate()
        .map(|(k, f)| parse(f, k).dst_ip)
        .collect();
    // 16 flows renewed every 5th packet: hundreds of destinations, each in range.
    assert!(dsts.len() > 200, "{} destinations", dsts.len());
    assert!(dsts.iter().all(|d| d[..2] == [10, 1] && d[2] <= 3));
}
