//! TCP header (RFC 9293). upktgen writes it without options; it reads options by skipping
//! them.
//!
//! ```text
//!  0 source port | 2 destination port | 4 sequence number | 8 acknowledgment number
//! 12 data offset (4 bits) | reserved (3) | NS/AE (1) | 13 flags CWR ECE URG ACK PSH RST SYN FIN
//! 14 window | 16 checksum | 18 urgent pointer | 20 options, payload
//! ```
//!
//! The checksum covers the same pseudo-header as UDP's (`ipv4::pseudo_header_sum` or
//! `ipv6::pseudo_header_sum` with protocol 6 and the segment's length), the header and the
//! payload. Unlike UDP, 0 is an ordinary checksum value.

use super::{Error, Field, Result, be16, be32, checksum, put16, put32};

/// Byte ranges of the header's fields.
pub mod field {
    use super::Field;
    pub const SRC_PORT: Field = 0..2;
    pub const DST_PORT: Field = 2..4;
    pub const SEQ_NUM: Field = 4..8;
    pub const ACK_NUM: Field = 8..12;
    /// Data offset (high nibble) and the NS/AE bit (lowest bit).
    pub const DATA_OFF: usize = 12;
    /// The eight flag bits ([`super::flags`]).
    pub const FLAGS: usize = 13;
    pub const WINDOW: Field = 14..16;
    pub const CHECKSUM: Field = 16..18;
    pub const URGENT: Field = 18..20;
}

/// Header length without options.
pub const HEADER_LEN: usize = field::URGENT.end;

/// The flag bits of byte 13.
pub mod flags {
    pub const FIN: u8 = 0x01;
    pub const SYN: u8 = 0x02;
    pub const RST: u8 = 0x04;
    pub const PSH: u8 = 0x08;
    pub const ACK: u8 = 0x10;
    pub const URG: u8 = 0x20;
    pub const ECE: u8 = 0x40;
    pub const CWR: u8 = 0x80;
}

packet_view!("a TCP segment");

impl<T: AsRef<[u8]>> Packet<T> {
    /// The buffer is the IP payload: shorter than the header, or than the header length the
    /// data offset announces, is [`Error::Truncated`]; a data offset below 5 words is
    /// [`Error::Malformed`].
    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        if b.len() < HEADER_LEN {
            return Err(Error::Truncated);
        }
        let hlen = self.header_len();
        if hlen < HEADER_LEN {
            return Err(Error::Malformed);
        }
        if b.len() < hlen {
            return Err(Error::Truncated);
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

    #[inline]
    pub fn seq_number(&self) -> u32 {
        be32(self.buffer.as_ref(), field::SEQ_NUM)
    }

    #[inline]
    pub fn ack_number(&self) -> u32 {
        be32(self.buffer.as_ref(), field::ACK_NUM)
    }

    /// Header length in bytes, options included (the data offset times 4).
    #[inline]
    pub fn header_len(&self) -> usize {
        usize::from(self.buffer.as_ref()[field::DATA_OFF] >> 4) * 4
    }

    /// The eight flag bits of byte 13 ([`flags`]).
    #[inline]
    pub fn flags(&self) -> u8 {
        self.buffer.as_ref()[field::FLAGS]
    }

    #[inline]
    pub fn window(&self) -> u16 {
        be16(self.buffer.as_ref(), field::WINDOW)
    }

    #[inline]
    pub fn checksum(&self) -> u16 {
        be16(self.buffer.as_ref(), field::CHECKSUM)
    }

    #[inline]
    pub fn urgent(&self) -> u16 {
        be16(self.buffer.as_ref(), field::URGENT)
    }

    /// Whether the checksum verifies over the whole buffer (the segment: header and
    /// payload) against `pseudo`, a pseudo-header sum.
    pub fn verify_checksum(&self, pseudo: u32) -> bool {
        let d = self.buffer.as_ref();
        checksum::finish(checksum::add(pseudo, checksum::sum(d))) == 0
    }

    /// The bytes after the header (options skipped).
    #[inline]
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len()..]
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
    pub fn set_seq_number(&mut self, v: u32) {
        put32(self.buffer.as_mut(), field::SEQ_NUM, v);
    }

    #[inline]
    pub fn set_ack_number(&mut self, v: u32) {
        put32(self.buffer.as_mut(), field::ACK_NUM, v);
    }

    /// The data offset for a header of `header_len` bytes (a multiple of 4, 20..60), with
    /// the NS/AE bit and the reserved bits cleared.
    #[inline]
    pub fn set_header_len(&mut self, header_len: usize) {
        self.buffer.as_mut()[field::DATA_OFF] = ((header_len / 4) as u8) << 4;
    }

    #[inline]
    pub fn set_flags(&mut self, v: u8) {
        self.buffer.as_mut()[field::FLAGS] = v;
    }

    #[inline]
    pub fn set_window(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::WINDOW, v);
    }

    #[inline]
    pub fn set_checksum(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::CHECKSUM, v);
    }

    #[inline]
    pub fn set_urgent(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::URGENT, v);
    }

    /// Computes and stores the checksum over `pseudo` and the whole buffer.
    #[inline]
    pub fn fill_checksum(&mut self, pseudo: u32) {
        self.set_checksum(0);
        let s = checksum::add(pseudo, checksum::sum(self.buffer.as_ref()));
        self.set_checksum(checksum::finish(s));
    }

    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let h = self.header_len();
        &mut self.buffer.as_mut()[h..]
    }
}

/// A TCP header's fields (options are not represented: emit writes none; the checksum is
/// a property of the whole segment, see [`Packet::fill_checksum`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repr {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq_number: u32,
    pub ack_number: u32,
    /// The eight flag bits ([`flags`]).
    pub flags: u8,
    pub window: u16,
    pub urgent: u16,
}

impl Repr {
    pub fn parse<T: AsRef<[u8]> + ?Sized>(p: &Packet<&T>) -> Result<Repr> {
        p.check_len()?;
        Ok(Repr {
            src_port: p.src_port(),
            dst_port: p.dst_port(),
            seq_number: p.seq_number(),
            ack_number: p.ack_number(),
            flags: p.flags(),
            window: p.window(),
            urgent: p.urgent(),
        })
    }

    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the header (no options) with checksum 0; fill it after writing the payload.
    #[inline]
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Packet<T>) {
        p.set_src_port(self.src_port);
        p.set_dst_port(self.dst_port);
        p.set_seq_number(self.seq_number);
        p.set_ack_number(self.ack_number);
        p.set_header_len(HEADER_LEN);
        p.set_flags(self.flags);
        p.set_window(self.window);
        p.set_checksum(0);
        p.set_urgent(self.urgent);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{ip_protocol, ipv4};
    use std::net::Ipv4Addr;

    /// 1000 -> 80, seq 1, ack 2, SYN|ACK, window 0x0400, 2 payload bytes, checksum over
    /// 10.0.0.1 -> 10.0.0.2 (worked by hand: pseudo 0x0a00+0x0001+0x0a00+0x0002+0x0006+0x0016
    /// = 0x141f; header 0x03e8+0x0050+0x0001+0x0002+0x5012+0x0400 = 0x584d; payload 0xabcd;
    /// sum 0x1_1839 -> 0x183a; checksum 0xe7c5).
    const SEG: [u8; 22] = [
        0x03, 0xe8, 0x00, 0x50, 0, 0, 0, 1, 0, 0, 0, 2, 0x50, 0x12, 0x04, 0x00, 0xe7, 0xc5, 0, 0,
        0xab, 0xcd,
    ];

    fn pseudo_for(len: usize) -> u32 {
        ipv4::pseudo_header_sum(
            Ipv4Addr::new(10, 0, 0, 1),
            Ipv4Addr::new(10, 0, 0, 2),
            ip_protocol::TCP,
            len as u16,
        )
    }

    fn pseudo() -> u32 {
        pseudo_for(SEG.len())
    }

    #[test]
    fn known_segment() {
        let p = Packet::new_checked(&SEG[..]).unwrap();
        let r = Repr::parse(&p).unwrap();
        assert_eq!(
            r,
            Repr {
                src_port: 1000,
                dst_port: 80,
                seq_number: 1,
                ack_number: 2,
                flags: flags::SYN | flags::ACK,
                window: 0x400,
                urgent: 0,
            }
        );
        assert_eq!(p.header_len(), HEADER_LEN);
        assert_eq!(p.payload(), [0xab, 0xcd]);
        assert!(p.verify_checksum(pseudo()));
        assert!(!p.verify_checksum(pseudo() + 1));
        let mut out = [0u8; 22];
        out[20..].copy_from_slice(&[0xab, 0xcd]);
        let mut q = Packet::new_unchecked(&mut out[..]);
        r.emit(&mut q);
        assert_eq!(q.checksum(), 0);
        q.fill_checksum(pseudo());
        assert_eq!(out, SEG);
    }

    #[test]
    fn etherparse_reads_what_we_write() {
        let mut out = [0u8; 24];
        out[20..].copy_from_slice(b"tcp!");
        let mut q = Packet::new_unchecked(&mut out[..]);
        Repr {
            src_port: 5,
            dst_port: 6,
            seq_number: 0xdead_beef,
            ack_number: 0x0102_0304,
            flags: flags::PSH | flags::ACK | flags::FIN,
            window: 65535,
            urgent: 7,
        }
        .emit(&mut q);
        q.fill_checksum(pseudo_for(24));
        let (h, rest) = etherparse::TcpHeader::from_slice(&out).unwrap();
        assert_eq!((h.source_port, h.destination_port), (5, 6));
        assert_eq!(
            (h.sequence_number, h.acknowledgment_number),
            (0xdead_beef, 0x0102_0304)
        );
        assert!(h.psh && h.ack && h.fin && !h.syn && !h.rst);
        assert_eq!((h.window_size, h.urgent_pointer), (65535, 7));
        assert_eq!(rest, b"tcp!");
        let want = h
            .calc_checksum_ipv4_raw([10, 0, 0, 1], [10, 0, 0, 2], rest)
            .unwrap();
        assert_eq!(h.checksum, want);
    }

    #[test]
    fn short_or_contradicting_buffers() {
        for n in 0..HEADER_LEN {
            assert_eq!(Packet::new_checked(&SEG[..n]), Err(Error::Truncated));
        }
        let mut b = SEG;
        b[12] = 0x40;
        assert_eq!(
            Packet::new_checked(&b[..]),
            Err(Error::Malformed),
            "offset 4"
        );
        b[12] = 0x60;
        assert_eq!(
            Packet::new_checked(&b[..]),
            Err(Error::Truncated),
            "offset 6"
        );
        let mut opt = SEG.to_vec();
        opt[12] = 0x60;
        opt.splice(20..20, [1, 1, 1, 0]);
        let p = Packet::new_checked(&opt[..]).unwrap();
        assert_eq!(p.payload(), [0xab, 0xcd], "options skipped");
    }
}
