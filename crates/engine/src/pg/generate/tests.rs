use super::*;
use crate::pg::DevConfig;
use crate::wire::PKTGEN_MAGIC;
use etherparse::{NetSlice, SlicedPacket, TransportSlice};

fn info() -> DeviceInfo {
    DeviceInfo {
        mac: "02:00:00:99:00:01".parse().unwrap(),
        ipv4: Some(Ipv4Addr::new(10, 99, 0, 1)),
        tx_queues: 4,
    }
}

fn cfg(cmds: &[&str]) -> DevConfig {
    let mut d = DevConfig::new("veth0");
    d.command("dst 10.0.0.1").unwrap();
    d.command("dst_mac 02:00:00:00:00:02").unwrap();
    for c in cmds {
        d.command(c).unwrap_or_else(|e| panic!("{c}: {e}"));
    }
    d
}

fn walk<T>(cmds: &[&str], n: usize, f: impl Fn(&Generator) -> T) -> Vec<T> {
    let mut g = Generator::new(&cfg(cmds), &info(), 1).unwrap();
    (0..n)
        .map(|_| {
            g.advance(0);
            let v = f(&g);
            g.sent_one(60);
            v
        })
        .collect()
}

#[test]
fn udp_ports_half_open_first_packet_is_min_plus_one() {
    let got = walk(&["udp_dst_min 10", "udp_dst_max 13"], 7, |g| g.cur_udp_dst);
    assert_eq!(got, [11, 12, 10, 11, 12, 10, 11]);
    let fixed = walk(&["udp_src_min 5", "udp_src_max 5"], 3, |g| g.cur_udp_src);
    assert_eq!(fixed, [5, 5, 5]);
    let top = walk(&["udp_src_min 65533", "udp_src_max 65535"], 4, |g| {
        g.cur_udp_src
    });
    assert_eq!(top, [65534, 65533, 65534, 65533]);
}

#[test]
fn random_ports_stay_below_max() {
    let got = walk(
        &["udp_src_min 100", "udp_src_max 104", "flag UDPSRC_RND"],
        2000,
        |g| g.cur_udp_src,
    );
    assert!(got.iter().all(|&p| (100..104).contains(&p)));
    for p in 100..104 {
        assert!(got.contains(&p), "{p} drawn");
    }
}

#[test]
fn ipv4_sequential_is_inclusive_random_excludes_max() {
    let seq = walk(&["dst_min 10.0.0.1", "dst_max 10.0.0.3"], 6, |g| {
        Ipv4Addr::from(g.cur_daddr).octets()[3]
    });
    assert_eq!(seq, [2, 3, 1, 2, 3, 1]);
    let src = walk(&["src_min 10.1.0.1", "src_max 10.1.0.2"], 3, |g| {
        Ipv4Addr::from(g.cur_saddr).octets()[3]
    });
    assert_eq!(src, [2, 1, 2]);
    let rnd = walk(
        &["dst_min 10.0.0.1", "dst_max 10.0.0.4", "flag IPDST_RND"],
        1000,
        |g| Ipv4Addr::from(g.cur_daddr).octets()[3],
    );
    assert!(rnd.iter().all(|&o| (1..4).contains(&o)), "max excluded");
    assert!([1, 2, 3].iter().all(|o| rnd.contains(o)));
}

#[test]
fn unset_max_or_src_keeps_min_and_device_address() {
    let got = walk(&[], 3, |g| (g.cur_saddr, g.cur_daddr));
    let want = (
        u32::from(Ipv4Addr::new(10, 99, 0, 1)),
        u32::from(Ipv4Addr::new(10, 0, 0, 1)),
    );
    assert!(got.iter().all(|&x| x == want));
}

#[test]
fn random_destinations_skip_special_ranges() {
    let got = walk(
        &[
            "dst_min 126.255.255.250",
            "dst_max 128.0.0.5",
            "flag IPDST_RND",
        ],
        3000,
        |g| g.cur_daddr,
    );
    assert!(got.iter().all(|&a| a >> 24 != 127));
    let mut d = cfg(&["dst_min 127.0.0.1", "dst_max 127.0.0.9", "flag IPDST_RND"]);
    assert!(
        Generator::new(&d, &info(), 1)
            .unwrap_err()
            .to_string()
            .contains("skip")
    );
    d.command("flag !IPDST_RND").unwrap();
    assert!(Generator::new(&d, &info(), 1).is_ok());
}

#[test]
fn sizes_walk_inclusive_and_random_excludes_max() {
    let got = walk(&["min_pkt_size 60", "max_pkt_size 62"], 5, |g| {
        g.cur_pkt_size
    });
    assert_eq!(got, [61, 62, 60, 61, 62]);
    let rnd = walk(
        &["min_pkt_size 60", "max_pkt_size 64", "flag TXSIZE_RND"],
        1000,
        |g| g.cur_pkt_size,
    );
    assert!(rnd.iter().all(|s| (60..64).contains(s)));
    // max below min is raised to min at start.
    let d = cfg(&["min_pkt_size 100", "max_pkt_size 80"]);
    assert_eq!(d.size_bounds(), (100, 100));
}

#[test]
fn imix_draws_follow_the_table() {
    let mut g = Generator::new(&cfg(&["imix_weights 64,7 576,4 1500,1"]), &info(), 7).unwrap();
    for _ in 0..100_000 {
        g.advance(0);
        g.sent_one(g.cur_pkt_size as usize);
    }
    let share = |i: usize| g.imix_counts[i] as f64 / 100_000.0;
    assert!((share(0) - 0.58).abs() < 0.01, "{}", share(0));
    assert!((share(1) - 0.33).abs() < 0.01, "{}", share(1));
    assert!((share(2) - 0.09).abs() < 0.01, "{}", share(2));
}

#[test]
fn mac_counts_add_with_carry_from_offset_zero() {
    let mut d = cfg(&["src_mac ff:00:00:00:00:fe", "src_mac_count 3"]);
    let mut g = Generator::new(&d, &info(), 1).unwrap();
    let mut macs = vec![];
    for _ in 0..4 {
        g.advance(0);
        macs.push(MacAddr(g.src_mac).to_string());
    }
    assert_eq!(
        macs,
        [
            "ff:00:00:00:00:fe",
            "ff:00:00:00:00:ff",
            "ff:00:00:00:01:00",
            "ff:00:00:00:00:fe"
        ]
    );
    d.command("dst_mac 02:ff:ff:ff:ff:ff").unwrap();
    d.command("dst_mac_count 2").unwrap();
    let mut g = Generator::new(&d, &info(), 1).unwrap();
    g.advance(0);
    g.advance(0);
    // Carry runs up to byte 1; byte 0 never changes.
    assert_eq!(MacAddr(g.dst_mac).to_string(), "02:00:00:00:00:00");
}

#[test]
fn flows_keep_their_destination_for_flowlen_packets() {
    let got = walk(
        &[
            "dst_min 10.0.0.1",
            "dst_max 10.0.0.200",
            "flows 2",
            "flowlen 3",
            "flag FLOW_SEQ",
        ],
        12,
        |g| Ipv4Addr::from(g.cur_daddr).octets()[3],
    );
    // Flow 0 draws .2 and keeps it 3 packets, flow 1 draws .3, then flow 0 is renewed.
    assert_eq!(got, [2, 2, 2, 3, 3, 3, 4, 4, 4, 5, 5, 5]);
    let mut g = Generator::new(
        &cfg(&[
            "dst_min 10.0.0.1",
            "dst_max 10.0.0.200",
            "flows 4",
            "flowlen 10",
        ]),
        &info(),
        3,
    )
    .unwrap();
    for _ in 0..4000 {
        g.advance(0);
    }
    // Random flows: about one renewal per flowlen+1 packets of a flow, never one per packet.
    assert!(
        g.nflows > 4000 / 12 && g.nflows < 4000 / 10 + 8,
        "{}",
        g.nflows
    );
}

#[test]
fn queue_map_sequential_random_and_modulo() {
    let got = walk(&["queue_map_min 1", "queue_map_max 3"], 5, |g| {
        g.cur_queue_map
    });
    assert_eq!(got, [1, 2, 3, 1, 2]);
    // The kernel's walk starts from 0, not from min, and keeps the value reduced modulo the
    // TX queues (4 here), so a range above the queues never reaches it: 1, 2, 3, 0, 1, ...
    let got = walk(&["queue_map_min 5", "queue_map_max 6"], 6, |g| {
        g.cur_queue_map
    });
    assert_eq!(got, [1, 2, 3, 0, 1, 2]);
    let rnd = walk(
        &["queue_map_min 1", "queue_map_max 3", "flag QUEUE_MAP_RND"],
        300,
        |g| g.cur_queue_map,
    );
    assert!(
        rnd.iter().all(|q| (1..=3).contains(q)),
        "inclusive [min, max]"
    );
    assert!([1, 2, 3].iter().all(|q| rnd.contains(q)));
    let mut g = Generator::new(&cfg(&["flag QUEUE_MAP_CPU"]), &info(), 1).unwrap();
    g.advance(3);
    assert_eq!(g.cur_queue_map, 3);
}

#[test]
fn ipv6_random_destination_masks_between_min_and_max() {
    let mut d = DevConfig::new("veth0");
    d.command("dst6_min fd00::1:0").unwrap();
    d.command("dst6_max fd00::1:ff").unwrap();
    let mut g = Generator::new(&d, &info(), 9).unwrap();
    for _ in 0..100 {
        g.advance(0);
        let o = g.cur_daddr6.octets();
        assert_eq!(
            &o[..14],
            &"fd00::1:0".parse::<Ipv6Addr>().unwrap().octets()[..14]
        );
    }
    // Unset src6: the link-local address made from the MAC.
    assert_eq!(g.cur_saddr6.to_string(), "fe80::ff:fe99:1");
}

#[test]
fn mpls_rnd_draws_only_bottom_marked_labels() {
    let mut g = Generator::new(
        &cfg(&["mpls 0001000a,00000100", "flag MPLS_RND"]),
        &info(),
        5,
    )
    .unwrap();
    let mut seen = std::collections::HashSet::new();
    for _ in 0..50 {
        g.advance(0);
        assert_eq!(g.mpls[0], 0x0001_000a);
        assert_ne!(g.mpls[1] & MPLS_STACK_BOTTOM, 0);
        seen.insert(g.mpls[1]);
    }
    assert!(seen.len() > 40);
}

#[test]
fn seq_and_ip_id_start_at_one_and_zero() {
    let got = walk(&[], 3, |g| (g.seq, g.ip_id));
    assert_eq!(got, [(1, 0), (2, 1), (3, 2)]);
}

#[test]
fn same_seed_same_walk() {
    let cmds = [
        "dst_min 10.0.0.1",
        "dst_max 10.0.9.1",
        "flag IPDST_RND",
        "flag UDPSRC_RND",
        "udp_src_max 2000",
    ];
    let a = walk(&cmds, 50, |g| (g.cur_daddr, g.cur_udp_src));
    let b = walk(&cmds, 50, |g| (g.cur_daddr, g.cur_udp_src));
    assert_eq!(a, b);
}

fn build(cmds: &[&str]) -> (Vec<u8>, Generator) {
    let c = cfg(cmds);
    let l = Layout::new(&c);
    let mut g = Generator::new(&c, &info(), 1).unwrap();
    g.advance(0);
    let mut buf = vec![0u8; l.frame_len(&g)];
    write_frame(&l, &g, (1_700_000_000, 42), &mut buf);
    (buf, g)
}

/// An independent parser (etherparse) reads every frame kind, checksums included.
#[test]
fn frames_parse_with_etherparse() {
    for cmds in [
        vec!["flag UDPCSUM", "pkt_size 100", "tos 2e"],
        vec!["vlan_id 100", "vlan_p 5", "flag UDPCSUM"],
        vec!["vlan_id 100", "svlan_id 200", "svlan_p 1", "flag UDPCSUM"],
        vec![
            "dst6 fd00::2",
            "src6 fd00::1",
            "flag UDPCSUM",
            "traffic_class 1f",
        ],
        vec!["pkt_size 42"],
    ] {
        let (f, g) = build(&cmds);
        let p = SlicedPacket::from_ethernet(&f).unwrap_or_else(|e| panic!("{cmds:?}: {e}"));
        let (src, dst) = match p.net.as_ref().expect("ip") {
            NetSlice::Ipv4(ip) => {
                let h = ip.header();
                assert_eq!(h.ttl(), 32);
                assert_eq!(
                    h.header_checksum(),
                    h.to_header().calc_header_checksum(),
                    "{cmds:?}"
                );
                if cmds.contains(&"tos 2e") {
                    assert_eq!(h.dcp().value() << 2 | h.ecn().value(), 0x2e);
                }
                (h.source().to_vec(), h.destination().to_vec())
            }
            NetSlice::Ipv6(ip) => {
                let h = ip.header();
                assert_eq!(h.hop_limit(), 32);
                assert_eq!(h.traffic_class(), 0x1f);
                (h.source().to_vec(), h.destination().to_vec())
            }
            _ => panic!("not ip"),
        };
        let Some(TransportSlice::Udp(u)) = p.transport else {
            panic!("{cmds:?}: not udp")
        };
        assert_eq!((u.source_port(), u.destination_port()), (9, 9));
        let payload = u.payload();
        assert_eq!(payload[0..4], PKTGEN_MAGIC.to_be_bytes());
        assert_eq!(payload[4..8], g.seq.to_be_bytes());
        if cmds.contains(&"flag UDPCSUM") {
            let h = u.to_header();
            let want = if src.len() == 4 {
                h.calc_checksum_ipv4_raw(src.try_into().unwrap(), dst.try_into().unwrap(), payload)
                    .unwrap()
            } else {
                h.calc_checksum_ipv6_raw(src.try_into().unwrap(), dst.try_into().unwrap(), payload)
                    .unwrap()
            };
            assert_eq!(u.checksum(), want, "{cmds:?}");
        } else {
            assert_eq!(u.checksum(), 0);
        }
    }
}

#[test]
fn frame_layout_bytes() {
    let (f, _) = build(&["vlan_id 100", "vlan_p 5", "svlan_id 200", "svlan_cfi 1"]);
    // The kernel's QinQ: outer ethertype 0x8100, SVLAN TCI, 0x8100, VLAN TCI, 0x0800.
    assert_eq!(f[12..14], [0x81, 0x00]);
    assert_eq!(u16::from_be_bytes([f[14], f[15]]), 200 | 1 << 12);
    assert_eq!(f[16..18], [0x81, 0x00]);
    assert_eq!(u16::from_be_bytes([f[18], f[19]]), 100 | 5 << 13);
    assert_eq!(f[20..22], [0x08, 0x00]);
    // 60 bytes cannot hold 8 bytes of tags, the headers and pktgen's header: 66, as in the kernel.
    assert_eq!(f.len(), 66);
    let (f, _) = build(&["mpls 0001000a,0002000a"]);
    assert_eq!(f[12..14], [0x88, 0x47]);
    assert_eq!(
        u32::from_be_bytes(f[14..18].try_into().unwrap()),
        0x0001_000a
    );
    assert_eq!(
        u32::from_be_bytes(f[18..22].try_into().unwrap()),
        0x0002_010a
    );
    assert_eq!(f[22] >> 4, 4, "IPv4 right after the labels");
    // pkt_size below headers + pktgen header: the frame grows to hold them, as in the kernel.
    let (f, _) = build(&["pkt_size 42"]);
    assert_eq!(f.len(), 14 + 20 + 8 + 16);
}

/// The receiver's classifier reads back what the walk writes, through the same wire
/// modules: tagged IPv4 frames are pktgen's (with the outer VLAN id); IPv6 and MPLS frames
/// are "other" (the classifier reads IPv4 only).
#[test]
fn the_receivers_classifier_reads_the_walks_frames() {
    use crate::rx::frame::{Class, classify};
    for (cmds, vlan) in [
        (vec!["flag UDPCSUM", "pkt_size 100"], None),
        (vec!["vlan_id 100", "vlan_p 5"], Some(100)),
        (
            vec!["vlan_id 100", "svlan_id 200", "svlan_cfi 1"],
            Some(200),
        ),
    ] {
        let (f, g) = build(&cmds);
        let Class::Pktgen(p) = classify(&f) else {
            panic!("{cmds:?}: {:?}", classify(&f))
        };
        assert_eq!(p.addr.vlan, vlan, "{cmds:?}");
        assert_eq!(p.hdr.seq, g.seq);
        assert_eq!((p.hdr.tv_sec, p.hdr.tv_usec), (1_700_000_000, 42));
        assert_eq!(p.addr.dst_ip, Ipv4Addr::new(10, 0, 0, 1));
    }
    for cmds in [vec!["dst6 fd00::2", "src6 fd00::1"], vec!["mpls 0001000a"]] {
        let (f, _) = build(&cmds);
        assert_eq!(classify(&f), Class::Other, "{cmds:?}");
    }
}

/// With no destination a loopback device sends to 0.0.0.0, as the kernel's pktgen does on
/// lo (the frames come back into this host, whose stack drops them); any other device needs
/// one. (Before: every device needed one.)
#[test]
fn a_loopback_device_needs_no_destination() {
    let mut c = DevConfig::new("lo@0");
    assert_eq!(
        Generator::new(&c, &info(), 1).err(),
        Some(crate::pg::StartError::NoDestination)
    );
    c.loopback = true;
    let mut g = Generator::new(&c, &info(), 1).unwrap();
    g.advance(0);
    assert_eq!(g.cur_daddr, 0);
}
