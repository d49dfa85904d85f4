//! pktgen's 16-byte header at the start of the UDP payload.
//!
//! Four big-endian 32-bit words: magic `0xbe9be955`, sequence number (the first packet of a
//! run carries 1), and the send time as seconds and microseconds of the wall clock (zero
//! with `NO_TIMESTAMP`). Receivers recognise generated traffic by the magic.

/// pktgen's magic number.
pub const PKTGEN_MAGIC: u32 = 0xbe9b_e955;
/// Header length in bytes.
pub const PKTGEN_HDR_LEN: usize = 16;

/// A parsed pktgen header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PktgenHdr {
    pub seq: u32,
    pub tv_sec: u32,
    pub tv_usec: u32,
}

impl PktgenHdr {
    /// Parses the header at the start of `payload`; None if too short or the magic differs.
    pub fn parse(payload: &[u8]) -> Option<PktgenHdr> {
        let w = |i: usize| -> Option<u32> {
            Some(u32::from_be_bytes(
                payload.get(i * 4..i * 4 + 4)?.try_into().ok()?,
            ))
        };
        if w(0)? != PKTGEN_MAGIC {
            return None;
        }
        Some(PktgenHdr {
            seq: w(1)?,
            tv_sec: w(2)?,
            tv_usec: w(3)?,
        })
    }

    /// Writes the header (magic included) into the first 16 bytes of `out`.
    pub fn emit(&self, out: &mut [u8]) {
        out[0..4].copy_from_slice(&PKTGEN_MAGIC.to_be_bytes());
        out[4..8].copy_from_slice(&self.seq.to_be_bytes());
        out[8..12].copy_from_slice(&self.tv_sec.to_be_bytes());
        out[12..16].copy_from_slice(&self.tv_usec.to_be_bytes());
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
        h.emit(&mut b);
        assert_eq!(&b[..8], &[0xbe, 0x9b, 0xe9, 0x55, 0, 0, 0, 1]);
        assert_eq!(PktgenHdr::parse(&b), Some(h));
    }

    #[test]
    fn rejects_short_or_foreign() {
        assert_eq!(PktgenHdr::parse(&[0xbe, 0x9b, 0xe9, 0x55, 0, 0]), None);
        assert_eq!(PktgenHdr::parse(&[0u8; 16]), None);
    }
}
