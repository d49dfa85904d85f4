//! UDP header (RFC 768).
//!
//! ```text
//!  0 source port | 2 destination port | 4 length (header + payload) | 6 checksum | 8 payload
//! ```
//!
//! The checksum covers a pseudo-header (see `ipv4::pseudo_header_sum` and
//! `ipv6::pseudo_header_sum`), the header and the payload; 0 means "none" (IPv4 only), and
//! a computed 0 is sent as 0xffff.

use super::{Error, Field, Rest, Result, be16, checksum, put16};

/// Byte ranges of the header's fields.
pub mod field {
    use super::{Field, Rest};
    pub const SRC_PORT: Field = 0..2;
    pub const DST_PORT: Field = 2..4;
    pub const LENGTH: Field = 4..6;
    pub const CHECKSUM: Field = 6..8;
    pub const PAYLOAD: Rest = 8..;
}

/// Header length.
pub const HEADER_LEN: usize = field::PAYLOAD.start;

packet_view!("a UDP datagram");

impl<T: AsRef<[u8]>> Packet<T> {
    /// The buffer is the IP payload: shorter than the header is [`Error::Truncated`]; a
    /// length below the header, or beyond the IP payload that carries it, contradicts the
    /// headers and is [`Error::Malformed`].
    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        if b.len() < HEADER_LEN {
            return Err(Error::Truncated);
        }
        let len = usize::from(self.len());
        if len < HEADER_LEN || len > b.len() {
            return Err(Error::Malformed);
        }
        Ok(())
    }

    #[inline]
    pub fn src_port(&self) -> u16 {
        be16(self.buffer.as_ref(), field::SRC_PORT)
    }

    #[inline]
    pub fn dst_port(&self) -> u16 {
        be16(self.buffer.as_ref(), field::DST_PORT)
    }

    /// Header and payload length, as the header says.
    #[inline]
    pub fn len(&self) -> u16 {
        be16(self.buffer.as_ref(), field::LENGTH)
    }

    /// Whether the header announces no payload.
    #[inline]
    pub fn is_empty(&self) -> bool {
        usize::from(self.len()) <= HEADER_LEN
    }

    #[inline]
    pub fn checksum(&self) -> u16 {
        be16(self.buffer.as_ref(), field::CHECKSUM)
    }

    /// Whether the checksum verifies against `pseudo` (a pseudo-header sum); a checksum
    /// of 0 (none) verifies.
    pub fn verify_checksum(&self, pseudo: u32) -> bool {
        if self.checksum() == 0 {
            return true;
        }
        let d = &self.buffer.as_ref()[..usize::from(self.len())];
        checksum::finish(checksum::add(pseudo, checksum::sum(d))) == 0
    }

    /// The payload, as long as the length says.
    #[inline]
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[HEADER_LEN..usize::from(self.len())]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    #[inline]
    pub fn set_src_port(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::SRC_PORT, v);
    }

    #[inline]
    pub fn set_dst_port(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::DST_PORT, v);
    }

    #[inline]
    pub fn set_len(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::LENGTH, v);
    }

    #[inline]
    pub fn set_checksum(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::CHECKSUM, v);
    }

    /// Computes and stores the checksum over the pseudo-header sum `pseudo`, the header and
    /// the first `covered` bytes of the datagram (header included); the caller guarantees
    /// that the bytes after them, up to the length, are zero — they add nothing, so a
    /// writer of padded frames need not sum the padding.
    #[inline]
    pub fn fill_checksum_prefix(&mut self, pseudo: u32, covered: usize) {
        self.set_checksum(0);
        let s = checksum::add(pseudo, checksum::sum(&self.buffer.as_ref()[..covered]));
        self.set_checksum(checksum::finish_udp(s));
    }

    /// Computes and stores the checksum over the whole datagram.
    #[inline]
    pub fn fill_checksum(&mut self, pseudo: u32) {
        let n = usize::from(self.len());
        self.fill_checksum_prefix(pseudo, n);
    }

    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let n = usize::from(self.len());
        &mut self.buffer.as_mut()[HEADER_LEN..n]
    }
}

/// A UDP header's fields (the checksum is a property of the whole datagram: see
/// [`Packet::fill_checksum`] and [`Packet::verify_checksum`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repr {
    pub src_port: u16,
    pub dst_port: u16,
    /// Bytes after the header.
    pub payload_len: usize,
}

impl Repr {
    pub fn parse<T: AsRef<[u8]> + ?Sized>(p: &Packet<&T>) -> Result<Repr> {
        p.check_len()?;
        Ok(Repr {
            src_port: p.src_port(),
            dst_port: p.dst_port(),
            payload_len: usize::from(p.len()) - HEADER_LEN,
        })
    }

    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the header with checksum 0 (none); fill it after writing the payload.
    #[inline]
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Packet<T>) {
        p.set_src_port(self.src_port);
        p.set_dst_port(self.dst_port);
        p.set_len((HEADER_LEN + self.payload_len) as u16);
        p.set_checksum(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{ip_protocol, ipv4};
    use std::net::Ipv4Addr;

    /// 1000 -> 9, 4 payload bytes, checksum over 10.0.0.1 -> 10.0.0.2 (worked by hand:
    /// pseudo 0x0a00+0x0001+0x0a00+0x0002+0x0011+0x000c, header 0x03e8+0x0009+0x000c,
    /// payload 0x0102+0x0304 -> sum 0x1c23, checksum 0xe3dc).
    const DGRAM: [u8; 12] = [0x03, 0xe8, 0x00, 0x09, 0x00, 0x0c, 0xe3, 0xdc, 1, 2, 3, 4];

    fn pseudo() -> u32 {
        ipv4::pseudo_header_sum(
            Ipv4Addr::new(10, 0, 0, 1),
            Ipv4Addr::new(10, 0, 0, 2),
            ip_protocol::UDP,
            12,
        )
    }

    #[test]
    fn known_datagram() {
        let p = Packet::new_checked(&DGRAM[..]).unwrap();
        assert_eq!((p.src_port(), p.dst_port(), p.len()), (1000, 9, 12));
        assert!(p.verify_checksum(pseudo()));
        assert!(!p.verify_checksum(pseudo() + 1));
        assert_eq!(p.payload(), [1, 2, 3, 4]);
        let r = Repr::parse(&p).unwrap();
        let mut out = [0u8; 12];
        out[8..].copy_from_slice(&[1, 2, 3, 4]);
        let mut q = Packet::new_unchecked(&mut out[..]);
        r.emit(&mut q);
        assert_eq!(q.checksum(), 0);
        q.fill_checksum(pseudo());
        assert_eq!(out, DGRAM);
    }

    #[test]
    fn short_or_contradicting_buffers() {
        for n in 0..HEADER_LEN {
            assert_eq!(Packet::new_checked(&DGRAM[..n]), Err(Error::Truncated));
        }
        // The IP payload ends before the length the header announces.
        assert_eq!(Packet::new_checked(&DGRAM[..11]), Err(Error::Malformed));
        let mut b = DGRAM;
        b[4..6].copy_from_slice(&7u16.to_be_bytes());
        assert_eq!(Packet::new_checked(&b[..]), Err(Error::Malformed));
    }

    #[test]
    fn prefix_checksum_equals_full_over_zero_padding() {
        let mut a = [0u8; 64];
        let mut p = Packet::new_unchecked(&mut a[..]);
        Repr {
            src_port: 7,
            dst_port: 8,
            payload_len: 56,
        }
        .emit(&mut p);
        p.payload_mut()[..3].copy_from_slice(&[9, 9, 9]);
        p.fill_checksum(0x1234);
        let full = p.checksum();
        p.fill_checksum_prefix(0x1234, HEADER_LEN + 3);
        assert_eq!(p.checksum(), full);
        assert!(p.verify_checksum(0x1234));
    }
}
