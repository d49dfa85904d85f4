//! IPv4 header (RFC 791). upktgen writes it without options; it reads options by skipping
//! them.
//!
//! ```text
//!  0 version/IHL | 1 TOS | 2 total length | 4 identification | 6 flags/fragment offset
//!  8 TTL | 9 protocol | 10 header checksum | 12 source | 16 destination | 20 options, payload
//! ```

use super::{Error, Field, Result, be16, checksum, put16};
use std::net::Ipv4Addr;

/// Byte ranges of the header's fields.
pub mod field {
    use super::Field;
    pub const VER_IHL: usize = 0;
    pub const TOS: usize = 1;
    pub const LENGTH: Field = 2..4;
    pub const IDENT: Field = 4..6;
    pub const FLG_OFF: Field = 6..8;
    pub const TTL: usize = 8;
    pub const PROTOCOL: usize = 9;
    pub const CHECKSUM: Field = 10..12;
    pub const SRC_ADDR: Field = 12..16;
    pub const DST_ADDR: Field = 16..20;
}

/// Header length without options.
pub const HEADER_LEN: usize = field::DST_ADDR.end;

const DONT_FRAG: u16 = 0x4000;
const MORE_FRAGS: u16 = 0x2000;
const FRAG_OFFSET: u16 = 0x1fff;

/// The one's-complement sum (not folded, not complemented) of the pseudo-header UDP and
/// TCP checksums cover: addresses, protocol and the transport length.
#[inline]
pub fn pseudo_header_sum(src: Ipv4Addr, dst: Ipv4Addr, protocol: u8, len: u16) -> u32 {
    let mut s = checksum::sum(&src.octets());
    s = checksum::add(s, checksum::sum(&dst.octets()));
    s = checksum::add(s, u32::from(protocol));
    checksum::add(s, u32::from(len))
}

packet_view!("an IPv4 packet");

impl<T: AsRef<[u8]>> Packet<T> {
    /// In the order a reader meets them: no byte at all is [`Error::Truncated`]; a version
    /// other than 4 or an IHL below 5 is [`Error::Malformed`]; a buffer shorter than the
    /// header is truncated; a total length below the header is malformed; a buffer shorter
    /// than the total length is truncated. The checksum is not checked here
    /// ([`Self::verify_checksum`]).
    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        let Some(&ver_ihl) = b.get(field::VER_IHL) else {
            return Err(Error::Truncated);
        };
        let hlen = usize::from(ver_ihl & 0x0f) * 4;
        if ver_ihl >> 4 != 4 || hlen < HEADER_LEN {
            return Err(Error::Malformed);
        }
        if b.len() < hlen {
            return Err(Error::Truncated);
        }
        let total = usize::from(self.total_len());
        if total < hlen {
            return Err(Error::Malformed);
        }
        if b.len() < total {
            return Err(Error::Truncated);
        }
        Ok(())
    }

    #[inline]
    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[field::VER_IHL] >> 4
    }

    /// Header length in bytes, options included.
    #[inline]
    pub fn header_len(&self) -> usize {
        usize::from(self.buffer.as_ref()[field::VER_IHL] & 0x0f) * 4
    }

    #[inline]
    pub fn tos(&self) -> u8 {
        self.buffer.as_ref()[field::TOS]
    }

    #[inline]
    pub fn total_len(&self) -> u16 {
        be16(self.buffer.as_ref(), field::LENGTH)
    }

    #[inline]
    pub fn ident(&self) -> u16 {
        be16(self.buffer.as_ref(), field::IDENT)
    }

    #[inline]
    pub fn dont_frag(&self) -> bool {
        be16(self.buffer.as_ref(), field::FLG_OFF) & DONT_FRAG != 0
    }

    #[inline]
    pub fn more_frags(&self) -> bool {
        be16(self.buffer.as_ref(), field::FLG_OFF) & MORE_FRAGS != 0
    }

    /// Fragment offset in units of 8 bytes; non-zero for every fragment but the first.
    #[inline]
    pub fn frag_offset(&self) -> u16 {
        be16(self.buffer.as_ref(), field::FLG_OFF) & FRAG_OFFSET
    }

    #[inline]
    pub fn ttl(&self) -> u8 {
        self.buffer.as_ref()[field::TTL]
    }

    #[inline]
    pub fn protocol(&self) -> u8 {
        self.buffer.as_ref()[field::PROTOCOL]
    }

    #[inline]
    pub fn checksum(&self) -> u16 {
        be16(self.buffer.as_ref(), field::CHECKSUM)
    }

    #[inline]
    pub fn src_addr(&self) -> Ipv4Addr {
        let b = &self.buffer.as_ref()[field::SRC_ADDR];
        Ipv4Addr::new(b[0], b[1], b[2], b[3])
    }

    #[inline]
    pub fn dst_addr(&self) -> Ipv4Addr {
        let b = &self.buffer.as_ref()[field::DST_ADDR];
        Ipv4Addr::new(b[0], b[1], b[2], b[3])
    }

    /// Whether the header checksum verifies (options included).
    pub fn verify_checksum(&self) -> bool {
        checksum::finish(checksum::sum(&self.buffer.as_ref()[..self.header_len()])) == 0
    }

    /// The payload: from the end of the header (options included) to the total length.
    #[inline]
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len()..usize::from(self.total_len())]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Version 4 and a header length (a multiple of 4, 20..60).
    #[inline]
    pub fn set_version_and_header_len(&mut self, header_len: usize) {
        self.buffer.as_mut()[field::VER_IHL] = 0x40 | ((header_len / 4) as u8 & 0x0f);
    }

    #[inline]
    pub fn set_tos(&mut self, v: u8) {
        self.buffer.as_mut()[field::TOS] = v;
    }

    #[inline]
    pub fn set_total_len(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::LENGTH, v);
    }

    #[inline]
    pub fn set_ident(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::IDENT, v);
    }

    /// Flags and fragment offset (in units of 8 bytes) together.
    #[inline]
    pub fn set_flags_frag(&mut self, dont_frag: bool, more_frags: bool, frag_offset: u16) {
        let v = (frag_offset & FRAG_OFFSET)
            | if dont_frag { DONT_FRAG } else { 0 }
            | if more_frags { MORE_FRAGS } else { 0 };
        put16(self.buffer.as_mut(), field::FLG_OFF, v);
    }

    #[inline]
    pub fn set_ttl(&mut self, v: u8) {
        self.buffer.as_mut()[field::TTL] = v;
    }

    #[inline]
    pub fn set_protocol(&mut self, v: u8) {
        self.buffer.as_mut()[field::PROTOCOL] = v;
    }

    #[inline]
    pub fn set_checksum(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::CHECKSUM, v);
    }

    #[inline]
    pub fn set_src_addr(&mut self, a: Ipv4Addr) {
        self.buffer.as_mut()[field::SRC_ADDR].copy_from_slice(&a.octets());
    }

    #[inline]
    pub fn set_dst_addr(&mut self, a: Ipv4Addr) {
        self.buffer.as_mut()[field::DST_ADDR].copy_from_slice(&a.octets());
    }

    /// Computes and stores the header checksum.
    #[inline]
    pub fn fill_checksum(&mut self) {
        self.set_checksum(0);
        let hlen = self.header_len();
        let c = checksum::finish(checksum::sum(&self.buffer.as_ref()[..hlen]));
        self.set_checksum(c);
    }

    /// The payload (from the end of the header to the total length), writable.
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let (h, t) = (self.header_len(), usize::from(self.total_len()));
        &mut self.buffer.as_mut()[h..t]
    }
}

/// An IPv4 header's fields (options are not represented: emit writes none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repr {
    pub src_addr: Ipv4Addr,
    pub dst_addr: Ipv4Addr,
    pub protocol: u8,
    pub tos: u8,
    pub ident: u16,
    pub dont_frag: bool,
    pub more_frags: bool,
    /// In units of 8 bytes (13 bits; higher bits are dropped on emit).
    pub frag_offset: u16,
    pub ttl: u8,
    /// Bytes after the header.
    pub payload_len: usize,
}

impl Repr {
    /// The header of a checked packet; [`Error::Malformed`] if its checksum is wrong.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(p: &Packet<&T>) -> Result<Repr> {
        p.check_len()?;
        if !p.verify_checksum() {
            return Err(Error::Malformed);
        }
        Ok(Repr {
            src_addr: p.src_addr(),
            dst_addr: p.dst_addr(),
            protocol: p.protocol(),
            tos: p.tos(),
            ident: p.ident(),
            dont_frag: p.dont_frag(),
            more_frags: p.more_frags(),
            frag_offset: p.frag_offset(),
            ttl: p.ttl(),
            payload_len: usize::from(p.total_len()) - p.header_len(),
        })
    }

    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the header (no options) with its checksum; the total length is
    /// `HEADER_LEN + payload_len` (the caller keeps that within 65535).
    #[inline]
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Packet<T>) {
        p.set_version_and_header_len(HEADER_LEN);
        p.set_tos(self.tos);
        p.set_total_len((HEADER_LEN + self.payload_len) as u16);
        p.set_ident(self.ident);
        p.set_flags_frag(self.dont_frag, self.more_frags, self.frag_offset);
        p.set_ttl(self.ttl);
        p.set_protocol(self.protocol);
        p.set_src_addr(self.src_addr);
        p.set_dst_addr(self.dst_addr);
        // No options: the checksum covers exactly HEADER_LEN bytes.
        p.set_checksum(0);
        let c = checksum::finish(checksum::sum(&p.buffer.as_ref()[..HEADER_LEN]));
        p.set_checksum(c);
    }

    /// The pseudo-header sum for the transport checksum of this packet.
    #[inline]
    pub fn pseudo_header_sum(&self) -> u32 {
        pseudo_header_sum(
            self.src_addr,
            self.dst_addr,
            self.protocol,
            self.payload_len as u16,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::ip_protocol;

    /// A header whose checksum is 0xb861 (a classic worked example), then 95 payload bytes.
    fn known() -> Vec<u8> {
        let mut b = vec![
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        b.resize(0x73, 0xab);
        b
    }

    #[test]
    fn known_header() {
        let b = known();
        let p = Packet::new_checked(&b[..]).unwrap();
        assert!(p.verify_checksum());
        let r = Repr::parse(&p).unwrap();
        assert_eq!(
            r,
            Repr {
                src_addr: Ipv4Addr::new(192, 168, 0, 1),
                dst_addr: Ipv4Addr::new(192, 168, 0, 199),
                protocol: ip_protocol::UDP,
                tos: 0,
                ident: 0,
                dont_frag: true,
                more_frags: false,
                frag_offset: 0,
                ttl: 64,
                payload_len: 0x73 - 20,
            }
        );
        assert_eq!(p.payload().len(), 0x73 - 20);
        let mut out = vec![0xabu8; 0x73];
        r.emit(&mut Packet::new_unchecked(&mut out[..]));
        assert_eq!(out, b);
    }

    #[test]
    fn short_buffers_are_truncated() {
        let b = known();
        for n in 0..b.len() {
            assert_eq!(Packet::new_checked(&b[..n]), Err(Error::Truncated), "{n}");
        }
        // Longer than the total length (Ethernet padding): accepted, payload ends at it.
        let mut padded = b.clone();
        padded.extend_from_slice(&[0; 7]);
        let p = Packet::new_checked(&padded[..]).unwrap();
        assert_eq!(p.payload().len(), 0x73 - 20);
    }

    #[test]
    fn contradictions_are_malformed() {
        let mut b = known();
        b[0] = 0x65;
        assert_eq!(
            Packet::new_checked(&b[..]),
            Err(Error::Malformed),
            "version 6"
        );
        b[0] = 0x44;
        assert_eq!(Packet::new_checked(&b[..]), Err(Error::Malformed), "IHL 4");
        let mut b = known();
        b[2..4].copy_from_slice(&19u16.to_be_bytes());
        assert_eq!(Packet::new_checked(&b[..]), Err(Error::Malformed), "length");
        let mut b = known();
        b[10] ^= 1;
        let p = Packet::new_checked(&b[..]).unwrap();
        assert_eq!(Repr::parse(&p), Err(Error::Malformed), "checksum");
    }

    #[test]
    fn options_are_skipped() {
        let mut b = known();
        b[0] = 0x46;
        b.splice(20..20, [1, 1, 1, 0]);
        b[2..4].copy_from_slice(&(0x73u16 + 4).to_be_bytes());
        let mut p = Packet::new_unchecked(&mut b[..]);
        p.fill_checksum();
        let p = Packet::new_checked(&b[..]).unwrap();
        assert_eq!(p.header_len(), 24);
        assert_eq!(Repr::parse(&p).unwrap().payload_len, 0x73 - 20);
        assert!(p.payload().iter().all(|&x| x == 0xab));
    }

    #[test]
    fn fragment_fields() {
        let mut b = known();
        let mut p = Packet::new_unchecked(&mut b[..]);
        p.set_flags_frag(false, true, 0x1fff);
        assert_eq!(
            (p.dont_frag(), p.more_frags(), p.frag_offset()),
            (false, true, 0x1fff)
        );
    }
}
