//! pktgen's 16-byte header at the start of the UDP payload.
//!
//! Four big-endian 32-bit words: magic `0xbe9be955`, sequence number (the first packet of a
//! run carries 1), and the send time as seconds and microseconds of the wall clock (zero
//! with `NO_TIMESTAMP`). Receivers recognise generated traffic by the magic.
//!
//! ```text
//!  0 magic | 4 sequence number | 8 tv_sec | 12 tv_usec | 16 padding (zero)
//! ```

use super::{Error, Field, Rest, Result, be32, put32};

/// Byte ranges of the header's fields.
pub mod field {
    use super::{Field, Rest};
    pub const MAGIC: Field = 0..4;
    pub const SEQ: Field = 4..8;
    pub const TV_SEC: Field = 8..12;
    pub const TV_USEC: Field = 12..16;
    pub const PAYLOAD: Rest = 16..;
}

/// pktgen's magic number.
pub const PKTGEN_MAGIC: u32 = 0xbe9b_e955;
/// Header length in bytes.
pub const HEADER_LEN: usize = field::PAYLOAD.start;
/// Header length in bytes (the name the rest of the crate knows).
pub const PKTGEN_HDR_LEN: usize = HEADER_LEN;

/// Whether `payload` starts with pktgen's magic (however long the rest is).
#[inline]
pub fn starts_with_magic(payload: &[u8]) -> bool {
    payload.get(field::MAGIC) == Some(&PKTGEN_MAGIC.to_be_bytes()[..])
}

packet_view!(fixed "a pktgen header");

impl<T: AsRef<[u8]>> Packet<T> {
    #[inline]
    pub fn magic(&self) -> u32 {
        be32(self.buffer.as_ref(), field::MAGIC)
    }

    #[inline]
    pub fn seq(&self) -> u32 {
        be32(self.buffer.as_ref(), field::SEQ)
    }

    #[inline]
    pub fn tv_sec(&self) -> u32 {
        be32(self.buffer.as_ref(), field::TV_SEC)
    }

    #[inline]
    pub fn tv_usec(&self) -> u32 {
        be32(self.buffer.as_ref(), field::TV_USEC)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    #[inline]
    pub fn set_magic(&mut self) {
        put32(self.buffer.as_mut(), field::MAGIC, PKTGEN_MAGIC);
    }

    #[inline]
    pub fn set_seq(&mut self, v: u32) {
        put32(self.buffer.as_mut(), field::SEQ, v);
    }

    #[inline]
    pub fn set_tv_sec(&mut self, v: u32) {
        put32(self.buffer.as_mut(), field::TV_SEC, v);
    }

    #[inline]
    pub fn set_tv_usec(&mut self, v: u32) {
        put32(self.buffer.as_mut(), field::TV_USEC, v);
    }
}

/// A parsed pktgen header (this module's `Repr`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PktgenHdr {
    pub seq: u32,
    pub tv_sec: u32,
    pub tv_usec: u32,
}

/// The header's fields, under the name every wire module uses.
pub type Repr = PktgenHdr;

impl PktgenHdr {
    /// Parses the header at the start of `buf` (a UDP payload, or a [`Packet`] over one):
    /// [`Error::Truncated`] if it is shorter than the header, [`Error::Malformed`] if the
    /// magic differs.
    pub fn parse<B: AsRef<[u8]> + ?Sized>(buf: &B) -> Result<PktgenHdr> {
        let p = Packet::new_checked(buf.as_ref())?;
        if p.magic() != PKTGEN_MAGIC {
            return Err(Error::Malformed);
        }
        Ok(PktgenHdr {
            seq: p.seq(),
            tv_sec: p.tv_sec(),
            tv_usec: p.tv_usec(),
        })
    }

    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the header (magic included).
    #[inline]
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Packet<T>) {
        p.set_magic();
        p.set_seq(self.seq);
        p.set_tv_sec(self.tv_sec);
        p.set_tv_usec(self.tv_usec);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_and_bytes() {
        let h = PktgenHdr {
            seq: 1,
            tv_sec: 0x0102_0304,
            tv_usec: 999_999,
        };
        let mut b = [0u8; 16];
        h.emit(&mut Packet::new_unchecked(&mut b[..]));
        assert_eq!(
            b,
            [
                0xbe, 0x9b, 0xe9, 0x55, 0, 0, 0, 1, 1, 2, 3, 4, 0x00, 0x0f, 0x42, 0x3f
            ]
        );
        assert_eq!(PktgenHdr::parse(&b), Ok(h));
        let p = Packet::new_checked(&b[..]).unwrap();
        assert_eq!(
            (p.seq(), p.tv_sec(), p.tv_usec()),
            (1, 0x0102_0304, 999_999)
        );
        assert_eq!(PktgenHdr::parse(&p), Ok(h));
    }

    #[test]
    fn rejects_short_or_foreign() {
        assert_eq!(
            PktgenHdr::parse(&[0xbe, 0x9b, 0xe9, 0x55, 0, 0][..]),
            Err(Error::Truncated)
        );
        assert_eq!(PktgenHdr::parse(&[0u8; 16]), Err(Error::Malformed));
        assert!(starts_with_magic(&[0xbe, 0x9b, 0xe9, 0x55]));
        assert!(!starts_with_magic(&[0xbe, 0x9b, 0xe9]));
        assert!(!starts_with_magic(&[0u8; 16]));
    }
}
