//! An 802.1Q (C-tag) or 802.1ad (S-tag) VLAN tag, as it follows a TPID EtherType
//! (`ethernet::ethertype::VLAN` or `QINQ`): the tag control information, then the EtherType
//! of what comes next (another tag, or the network header).
//!
//! ```text
//!  0 TCI: PCP (3 bits) | DEI/CFI (1) | VID (12) | 2 EtherType | 4 payload
//! ```

use super::{Field, Rest, Result, be16, put16};

/// Byte ranges of the tag's fields.
pub mod field {
    use super::{Field, Rest};
    pub const TCI: Field = 0..2;
    pub const ETHERTYPE: Field = 2..4;
    pub const PAYLOAD: Rest = 4..;
}

/// Tag length (TCI and the next EtherType; the TPID is the field before it).
pub const HEADER_LEN: usize = field::PAYLOAD.start;
/// The largest VLAN id.
pub const VID_MAX: u16 = 0x0fff;

packet_view!(fixed "a VLAN tag");

impl<T: AsRef<[u8]>> Packet<T> {
    #[inline]
    pub fn tci(&self) -> u16 {
        be16(self.buffer.as_ref(), field::TCI)
    }

    /// Priority code point (0..7).
    #[inline]
    pub fn pcp(&self) -> u8 {
        (self.tci() >> 13) as u8
    }

    /// Drop eligible indicator (802.1Q's CFI bit).
    #[inline]
    pub fn dei(&self) -> bool {
        self.tci() & 0x1000 != 0
    }

    #[inline]
    pub fn vid(&self) -> u16 {
        self.tci() & VID_MAX
    }

    /// The EtherType of what follows the tag.
    #[inline]
    pub fn ethertype(&self) -> u16 {
        be16(self.buffer.as_ref(), field::ETHERTYPE)
    }

    #[inline]
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[field::PAYLOAD]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    #[inline]
    pub fn set_tci(&mut self, tci: u16) {
        put16(self.buffer.as_mut(), field::TCI, tci);
    }

    #[inline]
    pub fn set_ethertype(&mut self, t: u16) {
        put16(self.buffer.as_mut(), field::ETHERTYPE, t);
    }
}

/// A tag's fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repr {
    /// Priority code point (0..7; higher bits are dropped on emit).
    pub pcp: u8,
    /// Drop eligible indicator (802.1Q's CFI); pktgen's `vlan_cfi`.
    pub dei: bool,
    /// VLAN id (0..4095; higher bits are dropped on emit).
    pub vid: u16,
    /// EtherType of what follows.
    pub ethertype: u16,
}

impl Repr {
    pub fn parse<T: AsRef<[u8]> + ?Sized>(p: &Packet<&T>) -> Result<Repr> {
        p.check_len()?;
        Ok(Repr {
            pcp: p.pcp(),
            dei: p.dei(),
            vid: p.vid(),
            ethertype: p.ethertype(),
        })
    }

    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// The tag control information this tag carries.
    #[inline]
    pub fn tci(&self) -> u16 {
        (self.vid & VID_MAX) | (u16::from(self.dei) << 12) | (u16::from(self.pcp & 7) << 13)
    }

    #[inline]
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Packet<T>) {
        p.set_tci(self.tci());
        p.set_ethertype(self.ethertype);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Error;
    use crate::wire::ethernet::ethertype;

    #[test]
    fn known_tag() {
        // PCP 5, DEI 1, VID 100, then IPv4.
        let b = [0xb0, 0x64, 0x08, 0x00, 0x45];
        let p = Packet::new_checked(&b[..]).unwrap();
        assert_eq!((p.pcp(), p.dei(), p.vid()), (5, true, 100));
        assert_eq!(p.ethertype(), ethertype::IPV4);
        assert_eq!(p.payload(), [0x45]);
        let r = Repr::parse(&p).unwrap();
        assert_eq!(
            r,
            Repr {
                pcp: 5,
                dei: true,
                vid: 100,
                ethertype: ethertype::IPV4
            }
        );
        let mut out = [0u8; 4];
        r.emit(&mut Packet::new_unchecked(&mut out[..]));
        assert_eq!(out, b[..4]);
    }

    #[test]
    fn short_buffers_are_truncated() {
        let b = [0u8; 4];
        for n in 0..HEADER_LEN {
            assert_eq!(Packet::new_checked(&b[..n]), Err(Error::Truncated));
        }
    }

    #[test]
    fn emit_drops_out_of_range_bits() {
        let r = Repr {
            pcp: 0xff,
            dei: false,
            vid: 0xffff,
            ethertype: 0,
        };
        assert_eq!(r.tci(), 0xefff);
    }
}
