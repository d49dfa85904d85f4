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

use crate::wire::ethernet::{self, ethertype};
use crate::wire::{Error, PktgenHdr, ip_protocol, ipv4, pktgen_hdr, udp, vlan};
use serde::Serialize;
use std::net::Ipv4Addr;

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

impl From<Error> for Class {
    fn from(e: Error) -> Class {
        match e {
            Error::Truncated => Class::Truncated,
            Error::Malformed => Class::Malformed,
        }
    }
}

/// Classifies one frame as it was on the wire (starting at the destination MAC, no FCS).
pub fn classify(frame: &[u8]) -> Class {
    match classify_checked(frame) {
        Ok(c) => c,
        Err(e) => e.into(),
    }
}

/// [`classify`], with a header that does not hold as the error.
fn classify_checked(frame: &[u8]) -> Result<Class, Error> {
    let eth = ethernet::Packet::new_checked(frame)?;
    let mut next = eth.ethertype();
    let mut l3 = eth.payload();
    let mut vlan = None;
    // Up to two tags (802.1ad outer, 802.1Q inner); a third is "other".
    for _ in 0..2 {
        if next != ethertype::VLAN && next != ethertype::QINQ {
            break;
        }
        let tag = vlan::Packet::new_checked(l3)?;
        if vlan.is_none() {
            vlan = Some(tag.vid());
        }
        next = tag.ethertype();
        l3 = &l3[vlan::HEADER_LEN..];
    }
    if next != ethertype::IPV4 {
        return Ok(Class::Other);
    }
    let ip = ipv4::Packet::new_checked(l3)?;
    if !ip.verify_checksum() {
        return Err(Error::Malformed);
    }
    if ip.protocol() != ip_protocol::UDP || ip.frag_offset() != 0 {
        return Ok(Class::Other);
    }
    let dgram = udp::Packet::new_checked(ip.payload())?;
    let payload = dgram.payload();
    if !pktgen_hdr::starts_with_magic(payload) {
        return Ok(Class::NotPktgen);
    }
    Ok(Class::Pktgen(PktgenFrame {
        addr: FlowAddr {
            src_ip: ip.src_addr(),
            dst_ip: ip.dst_addr(),
            src_port: dgram.src_port(),
            dst_port: dgram.dst_port(),
            vlan,
        },
        hdr: PktgenHdr::parse(payload)?,
    }))
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
        ipv4::Packet::new_unchecked(&mut f[ethernet::HEADER_LEN..]).fill_checksum();
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

    #[test]
    fn random_bytes_never_panic_and_are_counted_once() {
        // The state this test always started from (the crate's xorshift64*, unseeded).
        let mut rng = crate::rng::Rng::from_state(0x9e37_79b9_7f4a_7c15);
        let base = frame(128);
        let mut c = FrameCounters::default();
        for i in 0..200_000u32 {
            let len = (rng.next_u64() % 200) as usize;
            // Half pure noise; half a real frame with a few random bytes flipped, so the
            // deeper branches (VLAN, IPv4, UDP, pktgen) are reached too.
            let buf: Vec<u8> = if i.is_multiple_of(2) {
                (0..len).map(|_| rng.next_u64() as u8).collect()
            } else {
                let mut b = base.clone();
                b.truncate(len.max(10));
                for _ in 0..(rng.next_u64() % 4) {
                    let at = (rng.next_u64() as usize) % b.len();
                    b[at] = rng.next_u64() as u8;
                }
                if rng.next_u64().is_multiple_of(5) && b.len() > 14 {
                    b.splice(12..12, [0x81, 0x00, 0x00, rng.next_u64() as u8]);
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
