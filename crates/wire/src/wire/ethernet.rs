//! Ethernet II header: destination MAC, source MAC, EtherType (no FCS).
//!
//! ```text
//!  0 destination | 6 source | 12 EtherType | 14 payload
//! ```

use super::{Field, MacAddr, Rest, Result, be16, put16};

/// EtherType values upktgen writes or reads.
pub mod ethertype {
    pub const IPV4: u16 = 0x0800;
    pub const ARP: u16 = 0x0806;
    /// An 802.1Q tag (C-tag) follows; pktgen also uses it for the outer tag of QinQ.
    pub const VLAN: u16 = 0x8100;
    /// An 802.1ad tag (S-tag) follows.
    pub const QINQ: u16 = 0x88a8;
    pub const IPV6: u16 = 0x86dd;
    /// An MPLS label stack (unicast) follows.
    pub const MPLS: u16 = 0x8847;
}

/// Byte ranges of the header's fields.
pub mod field {
    use super::{Field, Rest};
    pub const DESTINATION: Field = 0..6;
    pub const SOURCE: Field = 6..12;
    pub const ETHERTYPE: Field = 12..14;
    pub const PAYLOAD: Rest = 14..;
}

/// Header length.
pub const HEADER_LEN: usize = field::PAYLOAD.start;

packet_view!(fixed "an Ethernet frame");

impl<T: AsRef<[u8]>> Packet<T> {
    #[inline]
    pub fn dst_addr(&self) -> MacAddr {
        let mut m = [0u8; 6];
        m.copy_from_slice(&self.buffer.as_ref()[field::DESTINATION]);
        MacAddr(m)
    }

    #[inline]
    pub fn src_addr(&self) -> MacAddr {
        let mut m = [0u8; 6];
        m.copy_from_slice(&self.buffer.as_ref()[field::SOURCE]);
        MacAddr(m)
    }

    #[inline]
    pub fn ethertype(&self) -> u16 {
        be16(self.buffer.as_ref(), field::ETHERTYPE)
    }

    /// The bytes after the header (a tag, a label stack or the network header).
    #[inline]
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[field::PAYLOAD]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    #[inline]
    pub fn set_dst_addr(&mut self, m: MacAddr) {
        self.buffer.as_mut()[field::DESTINATION].copy_from_slice(&m.0);
    }

    #[inline]
    pub fn set_src_addr(&mut self, m: MacAddr) {
        self.buffer.as_mut()[field::SOURCE].copy_from_slice(&m.0);
    }

    #[inline]
    pub fn set_ethertype(&mut self, t: u16) {
        put16(self.buffer.as_mut(), field::ETHERTYPE, t);
    }

    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[field::PAYLOAD]
    }
}

/// An Ethernet header's fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repr {
    pub dst_addr: MacAddr,
    pub src_addr: MacAddr,
    pub ethertype: u16,
}

impl Repr {
    pub fn parse<T: AsRef<[u8]> + ?Sized>(p: &Packet<&T>) -> Result<Repr> {
        p.check_len()?;
        Ok(Repr {
            dst_addr: p.dst_addr(),
            src_addr: p.src_addr(),
            ethertype: p.ethertype(),
        })
    }

    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    #[inline]
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Packet<T>) {
        p.set_dst_addr(self.dst_addr);
        p.set_src_addr(self.src_addr);
        p.set_ethertype(self.ethertype);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Error;

    /// A broadcast ARP frame's header.
    const FRAME: [u8; 16] = [
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0x00, 0x00, 0x99, 0x00, 0x01, 0x08, 0x06, 0xaa,
        0xbb,
    ];

    #[test]
    fn known_frame() {
        let p = Packet::new_checked(&FRAME[..]).unwrap();
        assert!(p.dst_addr().is_multicast());
        assert_eq!(p.src_addr().to_string(), "02:00:00:99:00:01");
        assert_eq!(p.ethertype(), ethertype::ARP);
        assert_eq!(p.payload(), [0xaa, 0xbb]);
        let r = Repr::parse(&p).unwrap();
        let mut b = [0u8; 16];
        b[14..].copy_from_slice(&[0xaa, 0xbb]);
        r.emit(&mut Packet::new_unchecked(&mut b[..]));
        assert_eq!(b, FRAME);
    }

    #[test]
    fn short_buffers_are_truncated() {
        for n in 0..HEADER_LEN {
            assert_eq!(
                Packet::new_checked(&FRAME[..n]),
                Err(Error::Truncated),
                "{n}"
            );
        }
        assert!(
            Packet::new_checked(&FRAME[..HEADER_LEN])
                .unwrap()
                .payload()
                .is_empty()
        );
    }
}
