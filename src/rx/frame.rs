//! Classifying received frames: Ethernet, up to two VLAN tags, IPv4, UDP, pktgen's header.
//!
//! [`classify`] never panics and never allocates: every byte it reads is bounds-checked.
//! Each frame ends in exactly one [`Class`], and [`FrameCounters`] keeps one counter per
//! class, so `frames == pktgen + not_pktgen + other + truncated + malformed` always holds.
//!
//! - **pktgen**: a well-formed IPv4/UDP frame whose UDP payload starts with pktgen's
//!   16-byte header (magic `0xbe9be955`).
//! - **not_pktgen**: a well-formed IPv4/UDP frame without that header (a payload not
//!   starting with the magic, or shorter than 4 bytes).
//! - **other**: a well-formed frame that is not IPv4/UDP (ARP, IPv6, TCP, ICMP, ...), or a
//!   non-first IPv4 fragment (no UDP header in it).
//! - **truncated**: the frame ends inside a header it announces (Ethernet, VLAN tag, IPv4
//!   header or its total length, UDP header, or a pktgen magic followed by fewer than 16
//!   bytes).
//! - **malformed**: a header whose fields contradict themselves: IPv4 version not 4, IHL
//!   below 5, total length below the header, a wrong IPv4 header checksum, a UDP length
//!   below 8 or beyond the IPv4 payload.
//!
//! Frames may be longer than the IPv4 total length (Ethernet padding to 60 bytes): the
//! extra bytes are ignored.

use crate::wire::{ETH_HLEN, PKTGEN_HDR_LEN, PKTGEN_MAGIC, PktgenHdr, UDP_HLEN, checksum};
use serde::Serialize;
use std::net::Ipv4Addr;

const ETH_P_IP: u16 = 0x0800;
const ETH_P_8021Q: u16 = 0x8100;
const ETH_P_8021AD: u16 = 0x88a8;
const IPPROTO_UDP: u8 = 17;

/// What identifies one pktgen frame's sender sequence (see [`crate::rx::sink`]).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, serde::Deserialize,
)]
pub struct FlowAddr {
    pub src_ip: Ipv4Addr,
    pub dst_ip: Ipv4Addr,
    pub src_port: u16,
    pub dst_port: u16,
    /// The outer VLAN id (None when untagged).
    pub vlan: Option<u16>,
}

/// A frame carrying pktgen's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PktgenFrame {
    pub addr: FlowAddr,
    pub hdr: PktgenHdr,
}

/// Why a frame is not a pktgen frame (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    Pktgen(PktgenFrame),
    NotPktgen,
    Other,
    Truncated,
    Malformed,
}

#[inline]
fn be16(b: &[u8], off: usize) -> Option<u16> {
    Some(u16::from_be_bytes(b.get(off..off + 2)?.try_into().ok()?))
}

/// Classifies one frame as it was on the wire (starting at the destination MAC, no FCS).
pub fn classify(frame: &[u8]) -> Class {
    if frame.len() < ETH_HLEN {
        return Class::Truncated;
    }
    let mut off = 12;
    let mut vlan = None;
    // Up to two tags (802.1ad outer, 802.1Q inner); a third is "other".
    let mut ethertype = match be16(frame, off) {
        Some(t) => t,
        None => return Class::Truncated,
    };
    for _ in 0..2 {
        if ethertype != ETH_P_8021Q && ethertype != ETH_P_8021AD {
            break;
        }
        let (Some(tci), Some(inner)) = (be16(frame, off + 2), be16(frame, off + 4)) else {
            return Class::Truncated;
        };
        if vlan.is_none() {
            vlan = Some(tci & 0x0fff);
        }
        ethertype = inner;
        off += 4;
    }
    if ethertype != ETH_P_IP {
        return Class::Other;
    }
    let ip = &frame[off + 2..];
    let Some(&ver_ihl) = ip.first() else {
        return Class::Truncated;
    };
    if ver_ihl >> 4 != 4 {
        return Class::Malformed;
    }
    let ihl = usize::from(ver_ihl & 0x0f) * 4;
    if ihl < 20 {
        return Class::Malformed;
    }
    if ip.len() < ihl {
        return Class::Truncated;
    }
    let tot_len = usize::from(be16(ip, 2).unwrap_or(0));
    if tot_len < ihl {
        return Class::Malformed;
    }
    if ip.len() < tot_len {
        return Class::Truncated;
    }
    if checksum::finish(checksum::sum(&ip[..ihl])) != 0 {
        return Class::Malformed;
    }
    let frag = be16(ip, 6).unwrap_or(0);
    if ip[9] != IPPROTO_UDP || frag & 0x1fff != 0 {
        return Class::Other;
    }
    let src_ip = Ipv4Addr::new(ip[12], ip[13], ip[14], ip[15]);
    let dst_ip = Ipv4Addr::new(ip[16], ip[17], ip[18], ip[19]);
    let l4 = &ip[ihl..tot_len];
    if l4.len() < UDP_HLEN {
        return Class::Truncated;
    }
    let udp_len = usize::from(be16(l4, 4).unwrap_or(0));
    if udp_len < UDP_HLEN || udp_len > l4.len() {
        return Class::Malformed;
    }
    let payload = &l4[UDP_HLEN..udp_len];
    match payload.get(..4) {
        Some(m) if m == PKTGEN_MAGIC.to_be_bytes() => {}
        _ => return Class::NotPktgen,
    }
    if payload.len() < PKTGEN_HDR_LEN {
        return Class::Truncated;
    }
    let Some(hdr) = PktgenHdr::parse(payload) else {
        return Class::Truncated;
    };
    Class::Pktgen(PktgenFrame {
        addr: FlowAddr {
            src_ip,
            dst_ip,
            src_port: be16(l4, 0).unwrap_or(0),
            dst_port: be16(l4, 2).unwrap_or(0),
            vlan,
        },
        hdr,
    })
}

/// One counter per [`Class`], plus bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct FrameCounters {
    /// Every frame seen.
    pub frames: u64,
    /// Their bytes (frame length without FCS, as the interface delivered it).
    pub bytes: u64,
    pub pktgen: u64,
    pub pktgen_bytes: u64,
    pub not_pktgen: u64,
    pub other: u64,
    pub truncated: u64,
    pub malformed: u64,
}

impl FrameCounters {
    /// Counts one frame of `len` bytes in its class.
    #[inline]
    pub fn count(&mut self, class: &Class, len: usize) {
        self.frames += 1;
        self.bytes += len as u64;
        match class {
            Class::Pktgen(_) => {
                self.pktgen += 1;
                self.pktgen_bytes += len as u64;
            }
            Class::NotPktgen => self.not_pktgen += 1,
            Class::Other => self.other += 1,
            Class::Truncated => self.truncated += 1,
            Class::Malformed => self.malformed += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{FrameSpec, MacAddr, PacketFields, Udp4Template};

    fn frame(size: usize) -> Vec<u8> {
        let t = Udp4Template::new(&FrameSpec {
            dst_mac: MacAddr([2, 0, 0, 0, 0, 2]),
            src_mac: MacAddr([2, 0, 0, 0, 0, 1]),
            src_ip: Ipv4Addr::new(10, 0, 0, 1),
            dst_ip: Ipv4Addr::new(10, 0, 0, 2),
            tos: 0,
            pkt_size: size,
            udp_csum: true,
        })
        .unwrap();
        let mut f = t.frame().to_vec();
        t.write(
            &mut f,
            &PacketFields {
                ip_id: 7,
                udp_src: 1000,
                udp_dst: 9,
                seq: 42,
                tv_sec: 100,
                tv_usec: 5,
            },
        );
        f
    }

    fn pktgen(c: Class) -> PktgenFrame {
        match c {
            Class::Pktgen(p) => p,
            other => panic!("not pktgen: {other:?}"),
        }
    }

    #[test]
    fn upktgen_frames_parse() {
        for size in [60, 64, 1514] {
            let p = pktgen(classify(&frame(size)));
            assert_eq!(p.hdr.seq, 42);
            assert_eq!((p.hdr.tv_sec, p.hdr.tv_usec), (100, 5));
            assert_eq!(p.addr.src_port, 1000);
            assert_eq!(p.addr.dst_ip, Ipv4Addr::new(10, 0, 0, 2));
            assert_eq!(p.addr.vlan, None);
        }
    }

    fn tagged(tags: &[(u16, u16)]) -> Vec<u8> {
        let f = frame(60);
        let mut out = f[..12].to_vec();
        for &(tpid, tci) in tags {
            out.extend_from_slice(&tpid.to_be_bytes());
            out.extend_from_slice(&tci.to_be_bytes());
        }
        out.extend_from_slice(&f[12..]);
        out
    }

    #[test]
    fn vlan_tags() {
        let p = pktgen(classify(&tagged(&[(0x8100, 0x2064)])));
        assert_eq!(p.addr.vlan, Some(100));
        let p = pktgen(classify(&tagged(&[(0x88a8, 5), (0x8100, 6)])));
        assert_eq!(p.addr.vlan, Some(5));
        assert_eq!(
            classify(&tagged(&[(0x8100, 1), (0x8100, 2), (0x8100, 3)])),
            Class::Other
        );
        assert_eq!(classify(&tagged(&[(0x8100, 1)])[..16]), Class::Truncated);
    }

    #[test]
    fn every_truncation_is_truncated_not_a_panic() {
        let f = frame(60);
        // The IPv4 total length (46) covers the whole 60-byte frame: every shorter prefix
        // ends inside a header it announces.
        for n in 0..60 {
            assert_eq!(classify(&f[..n]), Class::Truncated, "{n} bytes");
        }
        assert!(matches!(classify(&f), Class::Pktgen(_)));
    }

    fn refix_ip_csum(f: &mut [u8]) {
        f[24] = 0;
        f[25] = 0;
        let c = checksum::finish(checksum::sum(&f[14..34]));
        f[24..26].copy_from_slice(&c.to_be_bytes());
    }

    #[test]
    fn malformed_and_other() {
        let mut f = frame(60);
        f[14] = 0x65; // version 6 in an IPv4 ethertype
        assert_eq!(classify(&f), Class::Malformed);
        let mut f = frame(60);
        f[14] = 0x44; // IHL 4
        assert_eq!(classify(&f), Class::Malformed);
        let mut f = frame(60);
        f[24] ^= 1; // IPv4 checksum
        assert_eq!(classify(&f), Class::Malformed);
        let mut f = frame(60);
        f[38..40].copy_from_slice(&4u16.to_be_bytes()); // UDP length < 8
        assert_eq!(classify(&f), Class::Malformed);
        let mut f = frame(60);
        f[38..40].copy_from_slice(&400u16.to_be_bytes()); // beyond the IPv4 payload
        assert_eq!(classify(&f), Class::Malformed);
        let mut f = frame(60);
        f[23] = 6; // TCP
        refix_ip_csum(&mut f);
        assert_eq!(classify(&f), Class::Other);
        let mut f = frame(60);
        f[20..22].copy_from_slice(&0x0010u16.to_be_bytes()); // fragment offset 16
        refix_ip_csum(&mut f);
        assert_eq!(classify(&f), Class::Other);
        let mut f = frame(60);
        f[12..14].copy_from_slice(&0x0806u16.to_be_bytes()); // ARP
        assert_eq!(classify(&f), Class::Other);
        let mut f = frame(60);
        f[42] = 0; // magic gone
        assert_eq!(classify(&f), Class::NotPktgen);
        let mut f = frame(60);
        // UDP length 8 + 10: the magic is there but the header is cut short.
        f[38..40].copy_from_slice(&(8u16 + 10).to_be_bytes());
        assert_eq!(classify(&f), Class::Truncated);
    }

    /// xorshift64*: deterministic pseudo-random bytes without a dependency.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
    }

    #[test]
    fn random_bytes_never_panic_and_are_counted_once() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let base = frame(128);
        let mut c = FrameCounters::default();
        for i in 0..200_000u32 {
            let len = (rng.next() % 200) as usize;
            // Half pure noise; half a real frame with a few random bytes flipped, so the
            // deeper branches (VLAN, IPv4, UDP, pktgen) are reached too.
            let buf: Vec<u8> = if i.is_multiple_of(2) {
                (0..len).map(|_| rng.next() as u8).collect()
            } else {
                let mut b = base.clone();
                b.truncate(len.max(10));
                for _ in 0..(rng.next() % 4) {
                    let at = (rng.next() as usize) % b.len();
                    b[at] = rng.next() as u8;
                }
                if rng.next().is_multiple_of(5) && b.len() > 14 {
                    b.splice(12..12, [0x81, 0x00, 0x00, rng.next() as u8]);
                }
                b
            };
            let class = classify(&buf);
            if let Class::Pktgen(p) = class {
                // Whatever parsed as pktgen really carries the magic where claimed.
                assert!(buf.len() >= 58);
                let _ = p.hdr.seq;
            }
            c.count(&class, buf.len());
        }
        assert_eq!(
            c.frames,
            c.pktgen + c.not_pktgen + c.other + c.truncated + c.malformed
        );
        assert_eq!(c.frames, 200_000);
        assert!(c.pktgen > 0 && c.truncated > 0 && c.malformed > 0 && c.other > 0);
    }
}
