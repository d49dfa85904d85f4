//! One MPLS label stack entry (RFC 3032), as a stack of them follows EtherType
//! `ethernet::ethertype::MPLS`; the last one carries the bottom-of-stack bit.
//!
//! ```text
//!  0 label (20 bits) | traffic class (3) | bottom of stack (1) | TTL (8) | 4 next entry
//! ```

use super::{Field, Rest, Result, be32, put32};

/// Byte ranges of the entry's fields.
pub mod field {
    use super::{Field, Rest};
    /// The whole 32-bit entry (its parts are bit fields).
    pub const ENTRY: Field = 0..4;
    pub const PAYLOAD: Rest = 4..;
}

/// Entry length.
pub const HEADER_LEN: usize = field::PAYLOAD.start;
/// The bottom-of-stack bit in an entry (pktgen's `MPLS_STACK_BOTTOM`).
pub const BOTTOM_OF_STACK: u32 = 0x100;
/// The largest label.
pub const LABEL_MAX: u32 = 0x000f_ffff;

packet_view!(fixed "an MPLS label stack entry");

impl<T: AsRef<[u8]>> Packet<T> {
    /// The raw 32-bit entry.
    #[inline]
    pub fn entry(&self) -> u32 {
        be32(self.buffer.as_ref(), field::ENTRY)
    }

    #[inline]
    pub fn label(&self) -> u32 {
        self.entry() >> 12
    }

    #[inline]
    pub fn traffic_class(&self) -> u8 {
        ((self.entry() >> 9) & 7) as u8
    }

    #[inline]
    pub fn bottom_of_stack(&self) -> bool {
        self.entry() & BOTTOM_OF_STACK != 0
    }

    #[inline]
    pub fn ttl(&self) -> u8 {
        self.entry() as u8
    }

    /// The next entry (or, after the bottom one, the network header).
    #[inline]
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[field::PAYLOAD]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Writes the raw 32-bit entry.
    #[inline]
    pub fn set_entry(&mut self, v: u32) {
        put32(self.buffer.as_mut(), field::ENTRY, v);
    }
}

/// A label stack entry's fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repr {
    /// 0..=LABEL_MAX (higher bits are dropped on emit).
    pub label: u32,
    /// 0..7 (higher bits are dropped on emit).
    pub traffic_class: u8,
    pub bottom_of_stack: bool,
    pub ttl: u8,
}

impl Repr {
    pub fn parse<T: AsRef<[u8]> + ?Sized>(p: &Packet<&T>) -> Result<Repr> {
        p.check_len()?;
        Ok(Repr::from_entry(p.entry()))
    }

    /// The fields of a raw entry (pktgen's `mpls` values are raw entries).
    pub fn from_entry(v: u32) -> Repr {
        Repr {
            label: v >> 12,
            traffic_class: ((v >> 9) & 7) as u8,
            bottom_of_stack: v & BOTTOM_OF_STACK != 0,
            ttl: v as u8,
        }
    }

    /// The raw entry.
    pub fn entry(&self) -> u32 {
        ((self.label & LABEL_MAX) << 12)
            | (u32::from(self.traffic_class & 7) << 9)
            | if self.bottom_of_stack {
                BOTTOM_OF_STACK
            } else {
                0
            }
            | u32::from(self.ttl)
    }

    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    #[inline]
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Packet<T>) {
        p.set_entry(self.entry());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Error;

    #[test]
    fn known_entry() {
        // Label 16, TC 5, bottom of stack, TTL 64.
        let b = [0x00, 0x01, 0x0b, 0x40];
        let p = Packet::new_checked(&b[..]).unwrap();
        assert_eq!(
            (p.label(), p.traffic_class(), p.bottom_of_stack(), p.ttl()),
            (16, 5, true, 64)
        );
        let r = Repr::parse(&p).unwrap();
        assert_eq!(r.entry(), 0x0001_0b40);
        let mut out = [0u8; 4];
        r.emit(&mut Packet::new_unchecked(&mut out[..]));
        assert_eq!(out, b);
    }

    #[test]
    fn short_buffers_are_truncated() {
        for n in 0..HEADER_LEN {
            assert_eq!(Packet::new_checked(&[0u8; 3][..n]), Err(Error::Truncated));
        }
    }

    #[test]
    fn raw_entries_round_trip() {
        for v in [0, 1, 0x100, 0xffff_ffff, 0x0001_000a, 0x1234_5678] {
            assert_eq!(Repr::from_entry(v).entry(), v);
        }
    }
}
