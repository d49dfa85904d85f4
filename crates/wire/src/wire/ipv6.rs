//! IPv6 fixed header (RFC 8200); extension headers are not written or read.
//!
//! ```text
//!  0 version (4 bits) | traffic class (8) | flow label (20) | 4 payload length
//!  6 next header | 7 hop limit | 8 source | 24 destination | 40 payload
//! ```

use super::{Error, Field, Rest, Result, be16, be32, checksum, put16, put32};
use std::net::Ipv6Addr;

/// Byte ranges of the header's fields.
pub mod field {
    use super::{Field, Rest};
    /// Version, traffic class and flow label (bit fields of one 32-bit word).
    pub const VER_TC_FLOW: Field = 0..4;
    pub const LENGTH: Field = 4..6;
    pub const NXT_HDR: usize = 6;
    pub const HOP_LIMIT: usize = 7;
    pub const SRC_ADDR: Field = 8..24;
    pub const DST_ADDR: Field = 24..40;
    pub const PAYLOAD: Rest = 40..;
}

/// Header length.
pub const HEADER_LEN: usize = field::PAYLOAD.start;
/// The largest flow label.
pub const FLOW_LABEL_MAX: u32 = 0x000f_ffff;

/// The one's-complement sum (not folded, not complemented) of the pseudo-header UDP
/// checksums cover: addresses, upper-layer length and next header.
#[inline]
pub fn pseudo_header_sum(src: Ipv6Addr, dst: Ipv6Addr, next_header: u8, len: u16) -> u32 {
    let mut s = checksum::sum(&src.octets());
    s = checksum::add(s, checksum::sum(&dst.octets()));
    s = checksum::add(s, u32::from(next_header));
    checksum::add(s, u32::from(len))
}

packet_view!("an IPv6 packet");

impl<T: AsRef<[u8]>> Packet<T> {
    /// [`Error::Truncated`] if the buffer ends inside the header or inside the payload
    /// length; [`Error::Malformed`] if the version is not 6.
    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        if b.len() < HEADER_LEN {
            return Err(Error::Truncated);
        }
        if self.version() != 6 {
            return Err(Error::Malformed);
        }
        if b.len() < HEADER_LEN + usize::from(self.payload_len()) {
            return Err(Error::Truncated);
        }
        Ok(())
    }

    #[inline]
    fn first_word(&self) -> u32 {
        be32(self.buffer.as_ref(), field::VER_TC_FLOW)
    }

    #[inline]
    pub fn version(&self) -> u8 {
        (self.first_word() >> 28) as u8
    }

    #[inline]
    pub fn traffic_class(&self) -> u8 {
        (self.first_word() >> 20) as u8
    }

    #[inline]
    pub fn flow_label(&self) -> u32 {
        self.first_word() & FLOW_LABEL_MAX
    }

    #[inline]
    pub fn payload_len(&self) -> u16 {
        be16(self.buffer.as_ref(), field::LENGTH)
    }

    #[inline]
    pub fn next_header(&self) -> u8 {
        self.buffer.as_ref()[field::NXT_HDR]
    }

    #[inline]
    pub fn hop_limit(&self) -> u8 {
        self.buffer.as_ref()[field::HOP_LIMIT]
    }

    #[inline]
    pub fn src_addr(&self) -> Ipv6Addr {
        let mut a = [0u8; 16];
        a.copy_from_slice(&self.buffer.as_ref()[field::SRC_ADDR]);
        Ipv6Addr::from(a)
    }

    #[inline]
    pub fn dst_addr(&self) -> Ipv6Addr {
        let mut a = [0u8; 16];
        a.copy_from_slice(&self.buffer.as_ref()[field::DST_ADDR]);
        Ipv6Addr::from(a)
    }

    /// The payload, as long as the payload length says.
    #[inline]
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[HEADER_LEN..HEADER_LEN + usize::from(self.payload_len())]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Version 6, the traffic class and the flow label (higher bits dropped).
    #[inline]
    pub fn set_version_tc_flow(&mut self, traffic_class: u8, flow_label: u32) {
        let w = (6u32 << 28) | (u32::from(traffic_class) << 20) | (flow_label & FLOW_LABEL_MAX);
        put32(self.buffer.as_mut(), field::VER_TC_FLOW, w);
    }

    #[inline]
    pub fn set_payload_len(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::LENGTH, v);
    }

    #[inline]
    pub fn set_next_header(&mut self, v: u8) {
        self.buffer.as_mut()[field::NXT_HDR] = v;
    }

    #[inline]
    pub fn set_hop_limit(&mut self, v: u8) {
        self.buffer.as_mut()[field::HOP_LIMIT] = v;
    }

    #[inline]
    pub fn set_src_addr(&mut self, a: Ipv6Addr) {
        self.buffer.as_mut()[field::SRC_ADDR].copy_from_slice(&a.octets());
    }

    #[inline]
    pub fn set_dst_addr(&mut self, a: Ipv6Addr) {
        self.buffer.as_mut()[field::DST_ADDR].copy_from_slice(&a.octets());
    }

    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let n = HEADER_LEN + usize::from(self.payload_len());
        &mut self.buffer.as_mut()[HEADER_LEN..n]
    }
}

/// An IPv6 header's fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repr {
    pub src_addr: Ipv6Addr,
    pub dst_addr: Ipv6Addr,
    pub next_header: u8,
    pub hop_limit: u8,
    pub traffic_class: u8,
    /// 20 bits (higher bits are dropped on emit).
    pub flow_label: u32,
    /// Bytes after the header (the caller keeps it within 65535).
    pub payload_len: usize,
}

impl Repr {
    pub fn parse<T: AsRef<[u8]> + ?Sized>(p: &Packet<&T>) -> Result<Repr> {
        p.check_len()?;
        Ok(Repr {
            src_addr: p.src_addr(),
            dst_addr: p.dst_addr(),
            next_header: p.next_header(),
            hop_limit: p.hop_limit(),
            traffic_class: p.traffic_class(),
            flow_label: p.flow_label(),
            payload_len: usize::from(p.payload_len()),
        })
    }

    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    #[inline]
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Packet<T>) {
        p.set_version_tc_flow(self.traffic_class, self.flow_label);
        p.set_payload_len(self.payload_len as u16);
        p.set_next_header(self.next_header);
        p.set_hop_limit(self.hop_limit);
        p.set_src_addr(self.src_addr);
        p.set_dst_addr(self.dst_addr);
    }

    /// The pseudo-header sum for the transport checksum of this packet.
    #[inline]
    pub fn pseudo_header_sum(&self) -> u32 {
        pseudo_header_sum(
            self.src_addr,
            self.dst_addr,
            self.next_header,
            self.payload_len as u16,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::ip_protocol;

    /// Traffic class 0x1f, flow label 0x12345, UDP, hop limit 32, fd00::1 -> fd00::2,
    /// 8 payload bytes.
    fn known() -> Vec<u8> {
        let mut b = vec![0x61, 0xf1, 0x23, 0x45, 0x00, 0x08, 0x11, 0x20];
        b.extend_from_slice(&"fd00::1".parse::<Ipv6Addr>().unwrap().octets());
        b.extend_from_slice(&"fd00::2".parse::<Ipv6Addr>().unwrap().octets());
        b.extend_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
        b
    }

    #[test]
    fn known_header() {
        let b = known();
        let p = Packet::new_checked(&b[..]).unwrap();
        let r = Repr::parse(&p).unwrap();
        assert_eq!(
            r,
            Repr {
                src_addr: "fd00::1".parse().unwrap(),
                dst_addr: "fd00::2".parse().unwrap(),
                next_header: ip_protocol::UDP,
                hop_limit: 32,
                traffic_class: 0x1f,
                flow_label: 0x12345,
                payload_len: 8,
            }
        );
        assert_eq!(p.payload(), [1, 2, 3, 4, 5, 6, 7, 8]);
        let mut out = b.clone();
        out[..HEADER_LEN].fill(0);
        r.emit(&mut Packet::new_unchecked(&mut out[..]));
        assert_eq!(out, b);
    }

    #[test]
    fn short_or_foreign_buffers() {
        let b = known();
        for n in 0..b.len() {
            assert_eq!(Packet::new_checked(&b[..n]), Err(Error::Truncated), "{n}");
        }
        let mut v4 = b.clone();
        v4[0] = 0x45;
        assert_eq!(Packet::new_checked(&v4[..]), Err(Error::Malformed));
    }
}
