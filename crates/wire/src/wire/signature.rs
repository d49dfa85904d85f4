//! upktgen's stream signature: the last 16 bytes of a frame of a counted stream.
//!
//! A receiver must know a frame's stream without reading its headers, which a device under
//! test may rewrite (NAT) or wrap (a tunnel). So every frame of a stream ends with a small
//! trailer in its payload, written by the sender per packet: which stream, the stream's own
//! sequence number, and when it was sent. It sits at the end of the frame (before the FCS,
//! which the NIC adds), so it is found at the same place whatever headers come first, and
//! beside pktgen's header at the start of the payload when the frame has room for both.
//!
//! Four big-endian fields:
//!
//! ```text
//!  0 magic 0x7570 ("up") | 2 stream id | 4 stream sequence | 8 send time, ns of CLOCK_REALTIME
//! ```
//!
//! The first frame of a stream carries sequence 0. A 16-bit magic alone would match one
//! frame in 65,536 of foreign traffic, so a receiver also checks the stream id against the
//! streams it expects.

use super::{Error, Field, Result, be16, be32, put16, put32};

/// Byte ranges of the signature's fields, counted from the signature's first byte.
pub mod field {
    use super::Field;
    pub const MAGIC: Field = 0..2;
    pub const STREAM: Field = 2..4;
    pub const SEQ: Field = 4..8;
    pub const TX_NS: Field = 8..16;
}

/// The signature's magic number.
pub const MAGIC: u16 = 0x7570;
/// Signature length in bytes.
pub const LEN: usize = field::TX_NS.end;
/// The most streams a signature can name (ids 0 to `MAX_STREAMS - 1`).
pub const MAX_STREAMS: usize = 1 << 16;

/// A signature's meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signature {
    /// The stream's id (its index in the run's list of streams).
    pub stream: u16,
    /// The stream's own sequence number (0 for its first frame; wraps at 2^32).
    pub seq: u32,
    /// The send time in nanoseconds of CLOCK_REALTIME (0: not stamped).
    pub tx_ns: u64,
}

impl Signature {
    /// Reads the signature at the end of `frame` (a frame without FCS).
    /// [`Error::Truncated`] if the frame is shorter than [`LEN`], [`Error::Malformed`] if
    /// the magic is not there.
    pub fn parse(frame: &[u8]) -> Result<Signature> {
        let at = frame.len().checked_sub(LEN).ok_or(Error::Truncated)?;
        let s = &frame[at..];
        if be16(s, field::MAGIC) != MAGIC {
            return Err(Error::Malformed);
        }
        let hi = u64::from(be32(s, 8..12));
        let lo = u64::from(be32(s, 12..16));
        Ok(Signature {
            stream: be16(s, field::STREAM),
            seq: be32(s, field::SEQ),
            tx_ns: hi << 32 | lo,
        })
    }

    /// Writes the signature into the last [`LEN`] bytes of `frame`.
    ///
    /// # Panics
    /// If `frame` is shorter than [`LEN`]: the sender sizes its frames once, and a stream
    /// whose frames have no room for the signature is refused by the plan.
    #[inline]
    pub fn emit(&self, frame: &mut [u8]) {
        let at = frame.len() - LEN;
        let s = &mut frame[at..];
        put16(s, field::MAGIC, MAGIC);
        put16(s, field::STREAM, self.stream);
        put32(s, field::SEQ, self.seq);
        put32(s, 8..12, (self.tx_ns >> 32) as u32);
        put32(s, 12..16, self.tx_ns as u32);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emit_then_parse_at_the_end_of_the_frame() {
        let mut frame = vec![0xaa; 60];
        let sig = Signature {
            stream: 4095,
            seq: 0xdead_beef,
            tx_ns: 0x0123_4567_89ab_cdef,
        };
        sig.emit(&mut frame);
        assert_eq!(
            &frame[..44],
            &[0xaa; 44][..],
            "only the last 16 bytes are written"
        );
        assert_eq!(
            &frame[44..],
            &[
                0x75, 0x70, 0x0f, 0xff, 0xde, 0xad, 0xbe, 0xef, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab,
                0xcd, 0xef
            ]
        );
        assert_eq!(Signature::parse(&frame), Ok(sig));
    }

    #[test]
    fn short_or_foreign_frames_are_refused() {
        assert_eq!(Signature::parse(&[0x75; 15]), Err(Error::Truncated));
        assert_eq!(Signature::parse(&[0u8; 60]), Err(Error::Malformed));
        let mut f = [0u8; 16];
        Signature {
            stream: 1,
            seq: 2,
            tx_ns: 3,
        }
        .emit(&mut f);
        assert!(
            Signature::parse(&f).is_ok(),
            "a frame of exactly LEN bytes holds one"
        );
        f[1] ^= 1;
        assert_eq!(Signature::parse(&f), Err(Error::Malformed));
    }
}
