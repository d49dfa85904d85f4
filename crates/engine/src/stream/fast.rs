//! The template fast path: [`FastFrames`] patches the per-packet fields of [`Stream`] into
//! an IPv4/UDP template ([`Udp4Template`]), for the streams [`fast_path_fits`] admits.
//!
//! The per-packet part of a stream: which fields each successive packet carries.
//!
//! pktgen semantics kept here:
//! - the sequence number starts at 1 and increments by one per packet (wrapping at 2^32);
//! - the IPv4 id increments by one per packet, starting at 0;
//! - a UDP port range `[min, max)` is half-open and walked sequentially; like pktgen, which
//!   advances every field before building a packet, the first packet carries `min + 1`
//!   (then ..., `max - 1`, `min`, ...; `max <= min` means the port stays at `min`);
//! - the timestamp is the wall clock (CLOCK_REALTIME) in seconds and microseconds, zero with
//!   NO_TIMESTAMP. upktgen reads the clock once per batch, just before handing the batch to
//!   the kernel, and stamps every packet of the batch with it.

use super::FrameSource;
use crate::pg::{DevConfig, Flag, NO_VLAN};
use crate::wire::{PacketFields, Udp4Template};

/// A half-open port range walked sequentially.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortRange {
    min: u16,
    /// Number of ports in the walk (>= 1).
    span: u32,
    /// Offset of the next port from `min`.
    next: u32,
}

impl PortRange {
    /// pktgen's `udp_*_min`/`udp_*_max`: `[min, max)`, or just `min` when `max <= min`.
    pub fn new(min: u16, max: u16) -> Self {
        let span = if max > min { u32::from(max - min) } else { 1 };
        PortRange {
            min,
            span,
            next: 1 % span,
        }
    }

    #[inline]
    pub fn next_port(&mut self) -> u16 {
        let p = self.min as u32 + self.next;
        self.next += 1;
        if self.next == self.span {
            self.next = 0;
        }
        p as u16
    }
}

/// Generates the varying fields of successive packets.
#[derive(Debug, Clone)]
pub struct Stream {
    seq: u32,
    ip_id: u16,
    udp_src: PortRange,
    udp_dst: PortRange,
}

impl Stream {
    pub fn new(udp_src: PortRange, udp_dst: PortRange) -> Self {
        Stream {
            seq: 1,
            ip_id: 0,
            udp_src,
            udp_dst,
        }
    }

    /// Fields of the next packet, stamped with `tv` = (seconds, microseconds).
    #[inline]
    pub fn next_fields(&mut self, tv: (u32, u32)) -> PacketFields {
        let f = PacketFields {
            ip_id: self.ip_id,
            udp_src: self.udp_src.next_port(),
            udp_dst: self.udp_dst.next_port(),
            seq: self.seq,
            tv_sec: tv.0,
            tv_usec: tv.1,
        };
        self.seq = self.seq.wrapping_add(1);
        self.ip_id = self.ip_id.wrapping_add(1);
        f
    }
}

/// Splits a CLOCK_REALTIME reading in ns into pktgen's (tv_sec, tv_usec) words.
pub fn timeval(realtime_ns: u64) -> (u32, u32) {
    (
        (realtime_ns / 1_000_000_000) as u32,
        ((realtime_ns % 1_000_000_000) / 1000) as u32,
    )
}

/// The fast path: an IPv4/UDP template patched per packet.
pub struct FastFrames {
    template: Udp4Template,
    stream: Stream,
    fields: PacketFields,
}

impl FastFrames {
    pub fn new(template: Udp4Template, stream: Stream) -> Self {
        FastFrames {
            template,
            stream,
            fields: PacketFields::default(),
        }
    }

    pub fn template(&self) -> &Udp4Template {
        &self.template
    }

    pub fn stream(&self) -> &Stream {
        &self.stream
    }
}

impl FrameSource for FastFrames {
    fn prefill(&self) -> Vec<u8> {
        self.template.frame().to_vec()
    }

    #[inline]
    fn advance(&mut self) -> usize {
        self.fields = self.stream.next_fields((0, 0));
        self.template.len()
    }

    #[inline]
    fn write(&mut self, buf: &mut [u8], stamp: super::Stamp) {
        (self.fields.tv_sec, self.fields.tv_usec) = stamp.tv;
        self.template.write(buf, &self.fields);
    }

    #[inline]
    fn sent(&mut self) {}

    fn pkt_size(&self) -> u32 {
        self.template.len() as u32
    }

    fn imix_bytes(&self) -> Option<u64> {
        None
    }
}

/// Whether the fast path makes exactly the frames the walk would: IPv4, no tags or labels,
/// one size, fixed addresses and MACs, ports fixed or walked in order, nothing random, no
/// flows, and a pkt_size that holds the headers.
pub fn fast_path_fits(c: &DevConfig) -> bool {
    let (lo, hi) = c.size_bounds();
    let ipv4_fixed = |min: &str, max: &str| {
        let a = min
            .parse::<std::net::Ipv4Addr>()
            .map(u32::from)
            .unwrap_or(0);
        let b = max
            .parse::<std::net::Ipv4Addr>()
            .map(u32::from)
            .unwrap_or(0);
        b <= a
    };
    // Of the random flags only those that would draw something here matter: with one size,
    // fixed addresses and MACs, no tags or labels, only a UDP port range can be random (a
    // random queue map changes no byte of the frame).
    let rnd_ports = (c.has(Flag::UdpsrcRnd) && c.udp_src_min < c.udp_src_max)
        || (c.has(Flag::UdpdstRnd) && c.udp_dst_min < c.udp_dst_max);
    !rnd_ports
        && !c.has(Flag::Ipv6)
        && lo == hi
        && c.imix.is_empty()
        && c.vlan_id == NO_VLAN
        && c.mpls.is_empty()
        && c.src_mac_count <= 1
        && c.dst_mac_count <= 1
        && c.flows == 0
        && c.traffic_class == 0
        && ipv4_fixed(&c.dst_min, &c.dst_max)
        && ipv4_fixed(&c.src_min, &c.src_max)
        && lo as usize >= crate::wire::udp4::MIN_FRAME
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_range_is_half_open_and_sequential() {
        let mut r = PortRange::new(10, 13);
        let got: Vec<u16> = (0..7).map(|_| r.next_port()).collect();
        assert_eq!(got, [11, 12, 10, 11, 12, 10, 11]);
    }

    #[test]
    fn empty_or_inverted_range_is_fixed_at_min() {
        let mut r = PortRange::new(9, 9);
        assert!((0..5).all(|_| r.next_port() == 9));
        let mut r = PortRange::new(100, 50);
        assert!((0..5).all(|_| r.next_port() == 100));
    }

    #[test]
    fn full_port_space_wraps_without_overflow() {
        let mut r = PortRange::new(65534, 65535);
        assert_eq!(r.next_port(), 65534);
        assert_eq!(r.next_port(), 65534);
        let mut r = PortRange::new(0, 65535);
        for want in 1..65535u32 {
            assert_eq!(u32::from(r.next_port()), want);
        }
        assert_eq!(r.next_port(), 0);
        assert_eq!(r.next_port(), 1);
    }

    #[test]
    fn seq_starts_at_one_and_ip_id_at_zero() {
        let mut s = Stream::new(PortRange::new(9, 9), PortRange::new(9, 9));
        let a = s.next_fields((5, 6));
        let b = s.next_fields((5, 7));
        assert_eq!((a.seq, a.ip_id, a.tv_sec, a.tv_usec), (1, 0, 5, 6));
        assert_eq!((b.seq, b.ip_id, b.tv_usec), (2, 1, 7));
    }

    #[test]
    fn timeval_split() {
        assert_eq!(timeval(1_700_000_000_123_456_789), (1_700_000_000, 123_456));
    }
}
