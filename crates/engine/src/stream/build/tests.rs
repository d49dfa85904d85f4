use super::*;
use crate::stream::spec::{
    EthernetSpec, Ipv4Spec, Ipv6Spec, Length, MplsSpec, Rate, Size, TcpSpec, Tos, UdpSpec, VlanSpec,
};
use crate::wire::{ethernet::ethertype, tcp::flags};
use etherparse::{NetHeaders, PacketHeaders, TransportHeader};

fn spec(headers: Vec<Header>, size: Size) -> StreamSpec {
    StreamSpec {
        name: "s1".into(),
        headers,
        size,
        rate: Rate::Pps(1000.0),
        length: Length::Continuous,
        start_delay_ns: 0,
        fill: Fill::Zeros,
    }
}

fn eth() -> Header {
    Header::Ethernet(EthernetSpec::default())
}

fn udp4() -> Vec<Header> {
    vec![
        eth(),
        Header::Ipv4(Ipv4Spec::default()),
        Header::Udp(UdpSpec::default()),
    ]
}

/// Frames 0..n of `s` (stream id 7), each written into a buffer that held garbage and
/// then another frame, so nothing relies on what the buffer held.
fn frames(s: &StreamSpec, n: u64) -> Vec<Vec<u8>> {
    let f = StreamFrames::new(7, s).unwrap();
    let sizes = s.size.seq();
    let mut buf = vec![0xa5; f.max_len() + 3];
    (0..n)
        .map(|k| {
            let len = sizes.at(k) as usize;
            f.write(k, len, 1_000 + k, &mut buf);
            buf[..len].to_vec()
        })
        .collect()
}

/// The link layer read with our views, and what follows it read by etherparse; every
/// checksum verified both ways, and the signature's stream and sequence checked.
struct Parsed<'a> {
    eth: ethernet::Repr,
    /// (TPID, tag) outer first.
    tags: Vec<(u16, vlan::Repr)>,
    labels: Vec<mpls::Repr>,
    ip: Option<PacketHeaders<'a>>,
    /// Offset of what follows the link layer.
    net_at: usize,
}

fn parse(frame: &[u8], seq: u64) -> Parsed<'_> {
    let sig = Signature::parse(frame).expect("a signature at the end");
    assert_eq!(
        (sig.stream, sig.seq, sig.tx_ns),
        (7, seq as u32, 1_000 + seq)
    );
    let e = ethernet::Packet::new_checked(frame).unwrap();
    let eth = ethernet::Repr::parse(&e).unwrap();
    let (mut at, mut ty) = (ethernet::HEADER_LEN, eth.ethertype);
    let mut tags = Vec::new();
    while ty == ethertype::VLAN || ty == ethertype::QINQ {
        let t = vlan::Repr::parse(&vlan::Packet::new_checked(&frame[at..]).unwrap()).unwrap();
        tags.push((ty, t));
        ty = t.ethertype;
        at += vlan::HEADER_LEN;
    }
    let mut labels = Vec::new();
    if ty == ethertype::MPLS {
        loop {
            let m = mpls::Repr::parse(&mpls::Packet::new_checked(&frame[at..]).unwrap()).unwrap();
            labels.push(m);
            at += mpls::HEADER_LEN;
            if m.bottom_of_stack {
                break;
            }
        }
        ty = match frame[at] >> 4 {
            4 => ethertype::IPV4,
            6 => ethertype::IPV6,
            _ => 0,
        };
    }
    let ip = match ty {
        ethertype::IPV4 | ethertype::IPV6 => Some(check_ip(&frame[at..])),
        _ => None,
    };
    Parsed {
        eth,
        tags,
        labels,
        ip,
        net_at: at,
    }
}

/// The IP packet (to the frame's end, which its length must match) with its checksums.
fn check_ip(b: &[u8]) -> PacketHeaders<'_> {
    let h = PacketHeaders::from_ip_slice(b).expect("etherparse reads the IP packet");
    let (pseudo_of, l4_at) = match &h.net {
        Some(NetHeaders::Ipv4(v4, _)) => {
            assert_eq!(usize::from(v4.total_len), b.len(), "IPv4 length");
            assert_eq!(v4.header_checksum, v4.calc_header_checksum());
            let p = ipv4::Packet::new_checked(b).unwrap();
            assert!(p.verify_checksum());
            let r = ipv4::Repr::parse(&p).unwrap();
            let l4len = r.payload_len as u16;
            (
                ipv4::pseudo_header_sum(r.src_addr, r.dst_addr, r.protocol, l4len),
                20,
            )
        }
        Some(NetHeaders::Ipv6(v6, _)) => {
            assert_eq!(usize::from(v6.payload_length) + 40, b.len(), "IPv6 length");
            let r = ipv6::Repr::parse(&ipv6::Packet::new_checked(b).unwrap()).unwrap();
            let l4len = r.payload_len as u16;
            (
                ipv6::pseudo_header_sum(r.src_addr, r.dst_addr, r.next_header, l4len),
                40,
            )
        }
        _ => panic!("no IP header"),
    };
    let pl = h.payload.slice();
    match (&h.transport, &h.net) {
        (Some(TransportHeader::Udp(u)), Some(net)) => {
            let want = match net {
                NetHeaders::Ipv4(v4, _) => u.calc_checksum_ipv4(v4, pl).unwrap(),
                NetHeaders::Ipv6(v6, _) => u.calc_checksum_ipv6(v6, pl).unwrap(),
                _ => unreachable!(),
            };
            if u.checksum != 0 {
                assert_eq!(u.checksum, want, "UDP checksum");
            }
            assert_eq!(usize::from(u.length), b.len() - l4_at);
            let p = udp::Packet::new_checked(&b[l4_at..]).unwrap();
            assert!(p.verify_checksum(pseudo_of));
        }
        (Some(TransportHeader::Tcp(t)), Some(net)) => {
            let want = match net {
                NetHeaders::Ipv4(v4, _) => t.calc_checksum_ipv4(v4, pl).unwrap(),
                NetHeaders::Ipv6(v6, _) => t.calc_checksum_ipv6(v6, pl).unwrap(),
                _ => unreachable!(),
            };
            assert_eq!(t.checksum, want, "TCP checksum");
            let p = tcp::Packet::new_checked(&b[l4_at..]).unwrap();
            assert!(p.verify_checksum(pseudo_of));
        }
        _ => {}
    }
    h
}

fn v4(p: &Parsed) -> etherparse::Ipv4Header {
    match &p.ip.as_ref().unwrap().net {
        Some(NetHeaders::Ipv4(h, _)) => h.clone(),
        _ => panic!("not IPv4"),
    }
}

fn v6(p: &Parsed) -> etherparse::Ipv6Header {
    match &p.ip.as_ref().unwrap().net {
        Some(NetHeaders::Ipv6(h, _)) => h.clone(),
        _ => panic!("not IPv6"),
    }
}

fn udp_of(p: &Parsed) -> etherparse::UdpHeader {
    match &p.ip.as_ref().unwrap().transport {
        Some(TransportHeader::Udp(u)) => u.clone(),
        _ => panic!("not UDP"),
    }
}

fn tcp_of(p: &Parsed) -> etherparse::TcpHeader {
    match &p.ip.as_ref().unwrap().transport {
        Some(TransportHeader::Tcp(t)) => t.clone(),
        _ => panic!("not TCP"),
    }
}

fn inc(start: u128, step: u128, count: u64) -> Pattern {
    Pattern::Increment { start, step, count }
}

#[test]
fn a_constant_udp_frame() {
    let s = spec(udp4(), Size::Fixed(64));
    let fs = frames(&s, 3);
    for (k, f) in fs.iter().enumerate() {
        assert_eq!(f.len(), 64);
        let p = parse(f, k as u64);
        assert_eq!(p.eth.ethertype, ethertype::IPV4);
        assert_eq!(p.eth.dst_addr, "02:00:00:00:00:02".parse().unwrap());
        let ip = v4(&p);
        assert_eq!((ip.source, ip.destination), ([10, 0, 0, 1], [10, 0, 0, 2]));
        assert_eq!((ip.time_to_live, ip.protocol.0), (64, 17));
        let u = udp_of(&p);
        assert_eq!(
            (u.source_port, u.destination_port, u.length),
            (1024, 1024, 30)
        );
    }
    assert_eq!(fs[0][..40], fs[1][..40], "headers the same");
    assert_eq!(
        fs[0][42..48],
        fs[1][42..48],
        "only the checksum and signature differ"
    );
}

#[test]
fn ipv4_fields_vary_with_the_checksums_right() {
    let mut h = Ipv4Spec {
        src: inc(0x0a00_00fe, 1, 4),
        dst: Pattern::Decrement {
            start: 0x0a00_0102,
            step: 2,
            count: 3,
        },
        ttl: Pattern::List(vec![1, 64, 255]),
        ident: inc(0xfffe, 1, 1000),
        tos: Tos::DscpEcn {
            dscp: Pattern::Random {
                min: 10,
                max: 20,
                seed: 3,
            },
            ecn: Pattern::List(vec![0, 1, 2, 3]),
        },
        ..Ipv4Spec::default()
    };
    h.dont_fragment = true;
    let s = spec(
        vec![eth(), Header::Ipv4(h), Header::Udp(UdpSpec::default())],
        Size::Fixed(101),
    );
    let mut dscps = std::collections::HashSet::new();
    for (k, f) in frames(&s, 24).iter().enumerate() {
        let p = parse(f, k as u64);
        let ip = v4(&p);
        let k = k as u32;
        assert_eq!(u32::from_be_bytes(ip.source), 0x0a00_00fe + k % 4, "{k}");
        assert_eq!(
            u32::from_be_bytes(ip.destination),
            0x0a00_0102 - 2 * (k % 3)
        );
        assert_eq!(ip.time_to_live, [1, 64, 255][k as usize % 3]);
        assert_eq!(ip.identification, (0xfffe + k) as u16, "wraps at 16 bits");
        assert_eq!(ip.ecn.value(), (k % 4) as u8);
        assert!((10..=20).contains(&ip.dscp.value()));
        assert!(ip.dont_fragment);
        dscps.insert(ip.dscp.value());
    }
    assert!(dscps.len() > 3, "random DSCPs vary: {dscps:?}");
}

#[test]
fn a_tos_byte_pattern() {
    let h = Ipv4Spec {
        tos: Tos::Byte(inc(0xfc, 1, 8)),
        ..Ipv4Spec::default()
    };
    let s = spec(
        vec![eth(), Header::Ipv4(h), Header::Udp(UdpSpec::default())],
        Size::Fixed(60),
    );
    for (k, f) in frames(&s, 8).iter().enumerate() {
        let ip = v4(&parse(f, k as u64));
        let tos = (ip.dscp.value() << 2) | ip.ecn.value();
        assert_eq!(tos, (0xfcu32 + k as u32) as u8);
    }
}

#[test]
fn macs_and_ethertype_vary() {
    let e = EthernetSpec {
        dst: inc(0x02ff_ffff_ffff, 1, 3),
        src: Pattern::RandomMask {
            base: 0x0200_0000_0000,
            mask: 0xffff,
            seed: 9,
        },
        ethertype: Some(Pattern::List(vec![0x88b5, 0x88b6])),
    };
    let s = spec(
        vec![Header::Ethernet(e), Header::Raw(b"hello".to_vec())],
        Size::Fixed(60),
    );
    for (k, f) in frames(&s, 6).iter().enumerate() {
        let p = parse(f, k as u64);
        let dst = [0x02ff_ffff_ffffu64, 0x0300_0000_0000, 0x0300_0000_0001][k % 3];
        assert_eq!(p.eth.dst_addr.0, dst.to_be_bytes()[2..]);
        assert_eq!(
            p.eth.src_addr.0[..4],
            [2, 0, 0, 0],
            "only the mask's bits drawn"
        );
        assert_eq!(p.eth.ethertype, [0x88b5, 0x88b6][k % 2]);
        assert_eq!(&f[14..19], b"hello");
        assert!(f[19..44].iter().all(|&b| b == 0), "zero fill");
        assert!(p.ip.is_none());
    }
}

#[test]
fn qinq_tags_share_bytes_with_their_priorities() {
    let outer = VlanSpec {
        tpid: ethertype::QINQ,
        pcp: Pattern::List(vec![5, 6]),
        dei: Pattern::Value(1),
        vid: inc(4094, 1, 3),
    };
    let inner = VlanSpec {
        vid: Pattern::Random {
            min: 100,
            max: 199,
            seed: 1,
        },
        ..VlanSpec::default()
    };
    let mut hs = udp4();
    hs.insert(1, Header::Vlan(outer));
    hs.insert(2, Header::Vlan(inner));
    let s = spec(hs, Size::Fixed(80));
    for (k, f) in frames(&s, 6).iter().enumerate() {
        let p = parse(f, k as u64);
        assert_eq!(p.eth.ethertype, ethertype::QINQ);
        let (t0, o) = p.tags[0];
        let (t1, i) = p.tags[1];
        assert_eq!((t0, t1), (ethertype::QINQ, ethertype::VLAN));
        assert_eq!(
            (o.pcp, o.dei, o.vid),
            ([5, 6][k % 2], true, [4094, 4095, 0][k % 3])
        );
        assert!((100..=199).contains(&i.vid) && i.pcp == 0 && !i.dei);
        assert_eq!(i.ethertype, ethertype::IPV4);
        let e = PacketHeaders::from_ethernet_slice(f).unwrap();
        assert_eq!(e.vlan_ids().len(), 2, "etherparse sees both tags");
        udp_of(&p);
    }
}

#[test]
fn an_mpls_stack() {
    let mut hs = udp4();
    hs.insert(
        1,
        Header::Mpls(MplsSpec {
            label: inc(0xffffe, 1, 4),
            ..MplsSpec::default()
        }),
    );
    hs.insert(
        2,
        Header::Mpls(MplsSpec {
            traffic_class: Pattern::List(vec![7, 1]),
            ttl: Pattern::Value(9),
            ..MplsSpec::default()
        }),
    );
    let s = spec(hs, Size::Fixed(70));
    for (k, f) in frames(&s, 5).iter().enumerate() {
        let p = parse(f, k as u64);
        assert_eq!(p.eth.ethertype, ethertype::MPLS);
        assert_eq!(p.labels.len(), 2);
        let (a, b) = (p.labels[0], p.labels[1]);
        assert_eq!(a.label, [0xffffe, 0xfffff, 0, 1][k % 4]);
        assert!(
            !a.bottom_of_stack && b.bottom_of_stack,
            "bottom set on the last"
        );
        assert_eq!((b.label, b.traffic_class, b.ttl), (16, [7, 1][k % 2], 9));
        assert_eq!(p.net_at, 22);
        udp_of(&p);
    }
}

#[test]
fn ipv6_fields_vary_with_the_udp_checksum_right() {
    let base = u128::from(std::net::Ipv6Addr::new(
        0xfd00, 0, 0, 0, 0, 0, 0xffff, 0xffff,
    ));
    let h = Ipv6Spec {
        src: inc(base, 1, 3),
        dst: Pattern::RandomMask {
            base,
            mask: u128::MAX >> 64,
            seed: 5,
        },
        traffic_class: Pattern::List(vec![0xb8, 0x01]),
        flow_label: inc(0xffffe, 1, 5),
        hop_limit: Pattern::Value(7),
        next_header: None,
    };
    let u = UdpSpec {
        src_port: inc(65534, 1, 4),
        dst_port: Pattern::Random {
            min: 5000,
            max: 5009,
            seed: 2,
        },
        checksum: true,
    };
    let s = spec(
        vec![eth(), Header::Ipv6(h), Header::Udp(u)],
        Size::Fixed(121),
    );
    for (k, f) in frames(&s, 10).iter().enumerate() {
        let p = parse(f, k as u64);
        assert_eq!(p.eth.ethertype, ethertype::IPV6);
        let ip = v6(&p);
        assert_eq!(
            u128::from_be_bytes(ip.source),
            base.wrapping_add((k % 3) as u128)
        );
        assert_eq!(ip.destination[..8], base.to_be_bytes()[..8]);
        assert_eq!(ip.traffic_class, [0xb8, 0x01][k % 2]);
        assert_eq!(ip.flow_label.value(), [0xffffe, 0xfffff, 0, 1, 2][k % 5]);
        assert_eq!((ip.hop_limit, ip.next_header.0), (7, 17));
        let u = udp_of(&p);
        assert_eq!(u.source_port, [65534, 65535, 0, 1][k % 4]);
        assert!((5000..=5009).contains(&u.destination_port));
        assert_ne!(u.checksum, 0);
    }
}

#[test]
fn tcp_fields_vary_with_the_checksum_right() {
    let t = TcpSpec {
        src_port: inc(1000, 10, 3),
        dst_port: Pattern::Value(443),
        seq: inc(0xffff_ff00, 0x80, 4),
        ack: Pattern::Random {
            min: 0,
            max: u128::from(u32::MAX),
            seed: 4,
        },
        flags: Pattern::List(vec![
            u128::from(flags::SYN),
            u128::from(flags::SYN | flags::ACK),
            u128::from(flags::ACK | flags::PSH | flags::FIN),
        ]),
        window: Pattern::Decrement {
            start: 1,
            step: 1,
            count: 3,
        },
    };
    for hs in [
        vec![
            eth(),
            Header::Ipv4(Ipv4Spec::default()),
            Header::Tcp(t.clone()),
        ],
        vec![
            eth(),
            Header::Ipv6(Ipv6Spec::default()),
            Header::Tcp(t.clone()),
        ],
    ] {
        let s = spec(
            hs,
            Size::Increment {
                start: 90,
                end: 95,
                step: 1,
            },
        );
        for (k, f) in frames(&s, 9).iter().enumerate() {
            assert_eq!(f.len(), 90 + k % 6, "sizes walk 90..=95");
            let p = parse(f, k as u64);
            let h = tcp_of(&p);
            assert_eq!(h.source_port, [1000, 1010, 1020][k % 3]);
            assert_eq!(h.destination_port, 443);
            let seq = 0xffff_ff00u32.wrapping_add(0x80 * (k as u32 % 4));
            assert_eq!(h.sequence_number, seq);
            assert_eq!(
                (h.syn, h.ack, h.psh, h.fin),
                [
                    (true, false, false, false),
                    (true, true, false, false),
                    (false, true, true, true)
                ][k % 3]
            );
            assert_eq!(h.window_size, [1, 0, 0xffff][k % 3]);
            let proto = match &p.ip.as_ref().unwrap().net {
                Some(NetHeaders::Ipv4(h, _)) => h.protocol.0,
                Some(NetHeaders::Ipv6(h, _)) => h.next_header.0,
                _ => 0,
            };
            assert_eq!(proto, 6);
        }
    }
}

#[test]
fn fill_bytes_and_odd_sizes_keep_the_checksum() {
    // A fill byte and a raw payload of odd length: the fill and the signature start at odd
    // offsets in half of the frames.
    let mut hs = udp4();
    hs.push(Header::Raw(vec![1, 2, 3]));
    let mut s = spec(
        hs,
        Size::Random {
            min: 61,
            max: 1514,
            seed: 8,
        },
    );
    s.fill = Fill::Byte(0xa7);
    let mut lens = std::collections::HashSet::new();
    for (k, f) in frames(&s, 64).iter().enumerate() {
        assert!((61..=1514).contains(&f.len()));
        lens.insert(f.len() % 2);
        let p = parse(f, k as u64);
        assert_eq!(&f[42..45], [1, 2, 3]);
        assert!(f[45..f.len() - 16].iter().all(|&b| b == 0xa7));
        udp_of(&p);
    }
    assert_eq!(lens.len(), 2, "odd and even lengths both met");
}

#[test]
fn udp_without_checksum_sends_zero() {
    let hs = vec![
        eth(),
        Header::Ipv4(Ipv4Spec::default()),
        Header::Udp(UdpSpec {
            checksum: false,
            src_port: inc(1, 1, 9),
            ..UdpSpec::default()
        }),
    ];
    for (k, f) in frames(&spec(hs, Size::Fixed(64)), 3).iter().enumerate() {
        assert_eq!(udp_of(&parse(f, k as u64)).checksum, 0);
    }
}

#[test]
fn weighted_sizes_in_their_proportions() {
    let s = spec(
        udp4(),
        Size::Weighted(vec![(60, 7), (590, 4), (1514, 1), (999, 0)]),
    );
    let fs = frames(&s, 1200);
    let count = |n| fs.iter().filter(|f| f.len() == n).count();
    assert!(count(60).abs_diff(700) <= 3, "{}", count(60));
    assert!(count(590).abs_diff(400) <= 3, "{}", count(590));
    assert!(count(1514).abs_diff(100) <= 3, "{}", count(1514));
    assert_eq!(count(999), 0);
    // Spread out: never many large frames in a row.
    let run = fs
        .windows(3)
        .filter(|w| w.iter().all(|f| f.len() == 1514))
        .count();
    assert_eq!(run, 0);
    for (k, f) in fs.iter().take(50).enumerate() {
        udp_of(&parse(f, k as u64));
    }
}

#[test]
fn increments_reach_their_end() {
    let s = spec(
        udp4(),
        Size::Increment {
            start: 64,
            end: 100,
            step: 12,
        },
    );
    let lens: Vec<usize> = frames(&s, 5).iter().map(Vec::len).collect();
    assert_eq!(lens, [64, 76, 88, 100, 64]);
}

#[test]
fn a_frame_too_small_is_refused_naming_the_stream() {
    let mut hs = udp4();
    hs.insert(1, Header::Vlan(VlanSpec::default()));
    hs.push(Header::Raw(vec![0; 20]));
    let s = spec(hs, Size::Weighted(vec![(200, 1), (81, 1)]));
    let e = StreamFrames::new(0, &s).unwrap_err();
    assert_eq!(
        e.to_string(),
        "stream \"s1\": frame size 81 is too small: its headers and the 16-byte signature need 82 bytes (sizes exclude the FCS)"
    );
    let s = spec(vec![eth(), Header::Raw(vec![])], Size::Fixed(59));
    assert!(
        StreamFrames::new(0, &s)
            .unwrap_err()
            .to_string()
            .contains("ether_type")
    );
    let mut s = spec(vec![eth()], Size::Fixed(59));
    if let Header::Ethernet(e) = &mut s.headers[0] {
        e.ethertype = Some(Pattern::Value(0x88b5));
    }
    assert!(
        StreamFrames::new(0, &s)
            .unwrap_err()
            .to_string()
            .contains("need 60 bytes"),
        "below 60 a NIC pads past the signature"
    );
}

#[test]
fn build_all_numbers_the_streams() {
    let a = spec(udp4(), Size::Fixed(64));
    let mut b = a.clone();
    b.name = "s2".into();
    let fs = build_all(&[a.clone(), b]).unwrap();
    assert_eq!((fs[0].id(), fs[1].id()), (0, 1));
    assert_eq!(fs[1].template().len(), 64);
    let e = build_all(&[a.clone(), a]).unwrap_err();
    assert_eq!(e.to_string(), "stream \"s1\": a second stream of this name");
}

#[test]
fn build_signed_keeps_the_ids_it_is_given() {
    let a = spec(udp4(), Size::Fixed(64));
    let mut b = a.clone();
    b.name = "s2".into();
    let fs = build_signed(&[a.clone(), b.clone()], &[3, 9]).unwrap();
    assert_eq!((fs[0].id(), fs[1].id()), (3, 9));
    // A frame carries its stream's given id, not its index.
    let mut buf = vec![0; fs[1].max_len()];
    fs[1].write(0, 64, 5, &mut buf);
    assert_eq!(Signature::parse(&buf).unwrap().stream, 9);
    let e = build_signed(&[a, b], &[1]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "stream \"s1\": 1 signature ids for 2 streams"
    );
}
