//! Properties every header module keeps: `Repr` emit -> parse is the identity for random
//! field values, and a buffer `new_checked` accepts never makes a getter panic.

use super::*;
use crate::rng::Rng;
use std::net::{Ipv4Addr, Ipv6Addr};

const ROUNDS: usize = 5000;

fn mac(r: &mut Rng) -> MacAddr {
    let v = r.next_u64().to_be_bytes();
    MacAddr([v[0], v[1], v[2], v[3], v[4], v[5]])
}

fn v6(r: &mut Rng) -> Ipv6Addr {
    Ipv6Addr::from((u128::from(r.next_u64()) << 64) | u128::from(r.next_u64()))
}

fn byte(r: &mut Rng) -> u8 {
    r.next_u32() as u8
}

fn half(r: &mut Rng) -> u16 {
    r.next_u32() as u16
}

fn coin(r: &mut Rng) -> bool {
    r.next_u32() & 1 == 1
}

#[test]
fn repr_emit_then_parse_is_the_identity() {
    let mut r = Rng::new(12);
    for _ in 0..ROUNDS {
        let e = ethernet::Repr {
            dst_addr: mac(&mut r),
            src_addr: mac(&mut r),
            ethertype: half(&mut r),
        };
        let mut b = [0u8; ethernet::HEADER_LEN];
        e.emit(&mut ethernet::Packet::new_unchecked(&mut b[..]));
        let p = ethernet::Packet::new_checked(&b[..]).unwrap();
        assert_eq!(ethernet::Repr::parse(&p), Ok(e));

        let t = vlan::Repr {
            pcp: byte(&mut r) & 7,
            dei: coin(&mut r),
            vid: half(&mut r) & vlan::VID_MAX,
            ethertype: half(&mut r),
        };
        let mut b = [0u8; vlan::HEADER_LEN];
        t.emit(&mut vlan::Packet::new_unchecked(&mut b[..]));
        assert_eq!(
            vlan::Repr::parse(&vlan::Packet::new_checked(&b[..]).unwrap()),
            Ok(t)
        );

        let m = mpls::Repr {
            label: r.next_u32() & mpls::LABEL_MAX,
            traffic_class: byte(&mut r) & 7,
            bottom_of_stack: coin(&mut r),
            ttl: byte(&mut r),
        };
        let mut b = [0u8; mpls::HEADER_LEN];
        m.emit(&mut mpls::Packet::new_unchecked(&mut b[..]));
        assert_eq!(
            mpls::Repr::parse(&mpls::Packet::new_checked(&b[..]).unwrap()),
            Ok(m)
        );

        let payload_len = r.below(200) as usize;
        let ip = ipv4::Repr {
            src_addr: Ipv4Addr::from(r.next_u32()),
            dst_addr: Ipv4Addr::from(r.next_u32()),
            protocol: byte(&mut r),
            tos: byte(&mut r),
            ident: half(&mut r),
            dont_frag: coin(&mut r),
            more_frags: coin(&mut r),
            frag_offset: half(&mut r) & 0x1fff,
            ttl: byte(&mut r),
            payload_len,
        };
        let mut b = vec![0u8; ipv4::HEADER_LEN + payload_len];
        ip.emit(&mut ipv4::Packet::new_unchecked(&mut b[..]));
        let p = ipv4::Packet::new_checked(&b[..]).unwrap();
        assert!(p.verify_checksum());
        assert_eq!(ipv4::Repr::parse(&p), Ok(ip));

        let ip6 = ipv6::Repr {
            src_addr: v6(&mut r),
            dst_addr: v6(&mut r),
            next_header: byte(&mut r),
            hop_limit: byte(&mut r),
            traffic_class: byte(&mut r),
            flow_label: r.next_u32() & ipv6::FLOW_LABEL_MAX,
            payload_len,
        };
        let mut b = vec![0u8; ipv6::HEADER_LEN + payload_len];
        ip6.emit(&mut ipv6::Packet::new_unchecked(&mut b[..]));
        assert_eq!(
            ipv6::Repr::parse(&ipv6::Packet::new_checked(&b[..]).unwrap()),
            Ok(ip6)
        );

        let u = udp::Repr {
            src_port: half(&mut r),
            dst_port: half(&mut r),
            payload_len,
        };
        let mut b = vec![0u8; udp::HEADER_LEN + payload_len];
        b[udp::HEADER_LEN..]
            .iter_mut()
            .for_each(|x| *x = byte(&mut r));
        let mut q = udp::Packet::new_unchecked(&mut b[..]);
        u.emit(&mut q);
        let pseudo = ip.pseudo_header_sum();
        q.fill_checksum(pseudo);
        let p = udp::Packet::new_checked(&b[..]).unwrap();
        assert!(p.verify_checksum(pseudo));
        assert_ne!(p.checksum(), 0);
        assert_eq!(udp::Repr::parse(&p), Ok(u));

        let h = PktgenHdr {
            seq: r.next_u32(),
            tv_sec: r.next_u32(),
            tv_usec: r.next_u32(),
        };
        let mut b = [0u8; pktgen_hdr::HEADER_LEN];
        h.emit(&mut pktgen_hdr::Packet::new_unchecked(&mut b[..]));
        assert_eq!(PktgenHdr::parse(&b), Ok(h));
    }
}

/// Whatever `new_checked` accepts, every getter and `payload` read inside the buffer.
#[test]
fn checked_views_never_read_out_of_bounds() {
    let mut r = Rng::new(99);
    let mut ok = [0usize; 7];
    for i in 0..50_000 {
        let len = r.below(80) as usize;
        let mut b: Vec<u8> = (0..len).map(|_| byte(&mut r)).collect();
        // Every other buffer gets a plausible first byte, so deeper checks are reached.
        if i % 2 == 1 && len > 0 {
            b[0] = [0x45, 0x46, 0x60, 0x4f][r.index(4)];
            if len > 5 {
                b[2] = 0;
                b[3] = byte(&mut r) % 80;
                b[4] = 0;
                b[5] = byte(&mut r) % 40;
            }
        }
        if let Ok(p) = ethernet::Packet::new_checked(&b[..]) {
            ok[0] += 1;
            let _ = (p.dst_addr(), p.src_addr(), p.ethertype(), p.payload().len());
        }
        if let Ok(p) = vlan::Packet::new_checked(&b[..]) {
            ok[1] += 1;
            let _ = (p.tci(), p.ethertype(), p.payload().len());
        }
        if let Ok(p) = mpls::Packet::new_checked(&b[..]) {
            ok[2] += 1;
            let _ = (p.entry(), p.payload().len());
        }
        if let Ok(p) = ipv4::Packet::new_checked(&b[..]) {
            ok[3] += 1;
            let _ = (
                p.src_addr(),
                p.dst_addr(),
                p.frag_offset(),
                p.payload().len(),
            );
            let _ = (p.verify_checksum(), ipv4::Repr::parse(&p));
        }
        if let Ok(p) = ipv6::Packet::new_checked(&b[..]) {
            ok[4] += 1;
            let _ = (
                p.src_addr(),
                p.dst_addr(),
                p.payload().len(),
                ipv6::Repr::parse(&p),
            );
        }
        if let Ok(p) = udp::Packet::new_checked(&b[..]) {
            ok[5] += 1;
            let _ = (
                p.payload().len(),
                p.verify_checksum(0),
                udp::Repr::parse(&p),
            );
        }
        if pktgen_hdr::Packet::new_checked(&b[..]).is_ok() {
            ok[6] += 1;
            let _ = PktgenHdr::parse(&b);
        }
    }
    assert!(
        ok.iter().all(|&n| n > 0),
        "every view accepted something: {ok:?}"
    );
}

/// A whole frame built from the modules and read back through them: the layout the
/// senders write (Ethernet, QinQ, IPv6, UDP with checksum, pktgen's header, padding).
#[test]
fn a_composed_frame_reads_back() {
    let mut f = [0u8; 100];
    ethernet::Repr {
        dst_addr: MacAddr([2, 0, 0, 0, 0, 2]),
        src_addr: MacAddr([2, 0, 0, 0, 0, 1]),
        ethertype: ethernet::ethertype::VLAN,
    }
    .emit(&mut ethernet::Packet::new_unchecked(&mut f[..]));
    let mut at = ETH_HLEN;
    for (vid, next) in [
        (200, ethernet::ethertype::VLAN),
        (100, ethernet::ethertype::IPV6),
    ] {
        vlan::Repr {
            pcp: 1,
            dei: false,
            vid,
            ethertype: next,
        }
        .emit(&mut vlan::Packet::new_unchecked(&mut f[at..]));
        at += vlan::HEADER_LEN;
    }
    let udp_len = f.len() - at - IPV6_HLEN;
    let ip = ipv6::Repr {
        src_addr: "fd00::1".parse().unwrap(),
        dst_addr: "fd00::2".parse().unwrap(),
        next_header: ip_protocol::UDP,
        hop_limit: 32,
        traffic_class: 0,
        flow_label: 0,
        payload_len: udp_len,
    };
    ip.emit(&mut ipv6::Packet::new_unchecked(&mut f[at..]));
    let l4 = at + IPV6_HLEN;
    let mut d = udp::Packet::new_unchecked(&mut f[l4..]);
    udp::Repr {
        src_port: 9,
        dst_port: 9,
        payload_len: udp_len - UDP_HLEN,
    }
    .emit(&mut d);
    PktgenHdr {
        seq: 7,
        tv_sec: 1,
        tv_usec: 2,
    }
    .emit(&mut pktgen_hdr::Packet::new_unchecked(d.payload_mut()));
    d.fill_checksum_prefix(ip.pseudo_header_sum(), UDP_HLEN + PKTGEN_HDR_LEN);

    let e = ethernet::Packet::new_checked(&f[..]).unwrap();
    let outer = vlan::Packet::new_checked(e.payload()).unwrap();
    let inner = vlan::Packet::new_checked(outer.payload()).unwrap();
    assert_eq!((outer.vid(), inner.vid()), (200, 100));
    assert_eq!(inner.ethertype(), ethernet::ethertype::IPV6);
    let p6 = ipv6::Packet::new_checked(inner.payload()).unwrap();
    assert_eq!(ipv6::Repr::parse(&p6), Ok(ip));
    let u = udp::Packet::new_checked(p6.payload()).unwrap();
    assert!(u.verify_checksum(ip.pseudo_header_sum()));
    assert_eq!(PktgenHdr::parse(u.payload()).unwrap().seq, 7);
}
