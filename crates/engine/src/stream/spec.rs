//! The stream model: what one stream of a port sends (its headers, whose fields are
//! patterns, its frame sizes, its rate, its length and its start delay), checked once and
//! resolved into a [`Schedule`] for the timeline.
//!
//! Conventions:
//! - **Sizes are frame lengths without the FCS** (pktgen's `pkt_size`; the NIC adds the 4
//!   bytes). OTG's sizes include the FCS: the OTG layer subtracts 4 before building a spec.
//! - Every field's pattern is a function of the stream's packet index `k` (0 for its first
//!   frame), so a frame can be built from `(stream, k)` alone; random patterns hash `k` with
//!   their seed (see [`Pattern::at`]).
//! - A rate in bits per second (or a percent of the line rate) counts the bits a frame
//!   occupies on the wire: its length plus [`WIRE_OVERHEAD`] (FCS, preamble, gap), so a
//!   stream at 100 % of a line with gapless frames fills it.
//! - A burst is `packets` frames at the stream's rate, then `gap` of silence, measured from
//!   when the next frame would have been due: a gap of 0 makes bursts a continuous stream.

use super::timeline::{BurstShape, Pace, Schedule};
use crate::rng::Rng;
use crate::wire::signature::{self, MAX_STREAMS};
use crate::wire::{ETH_ZLEN, MacAddr, WIRE_OVERHEAD};
use std::net::{Ipv4Addr, Ipv6Addr};

mod headers;
pub use headers::{
    EthernetSpec, FieldRef, Header, Ipv4Spec, Ipv6Spec, MplsSpec, TcpSpec, Tos, UdpSpec, VlanSpec,
};

/// The largest frame (without FCS) a stream may send: jumbo frames of 9,000-byte MTUs fit.
pub const MAX_FRAME_LEN: usize = 16_384;
/// The most values a list pattern may hold.
pub const MAX_LIST: usize = 1 << 16;
/// The most VLAN tags and MPLS entries a stream's headers may hold (each).
pub const MAX_TAGS: usize = 8;
/// The most (size, weight) pairs of a weighted size.
pub const MAX_WEIGHTED: usize = 64;
/// The most bytes of a raw payload header.
pub const MAX_RAW: usize = 4096;

/// The values a field takes from one packet to the next. Values are bit patterns of the
/// field's width (48 bits for a MAC, 32 for an IPv4 address, 128 for IPv6, ...); arithmetic
/// wraps at that width.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pattern {
    /// The same value in every frame.
    Value(u128),
    /// `values[k % len]`.
    List(Vec<u128>),
    /// `start + step * (k % count)`.
    Increment { start: u128, step: u128, count: u64 },
    /// `start - step * (k % count)`.
    Decrement { start: u128, step: u128, count: u64 },
    /// Uniform in `[min, max]`, drawn from `seed` and `k`.
    Random { min: u128, max: u128, seed: u64 },
    /// `base` with the bits of `mask` drawn from `seed` and `k`.
    RandomMask { base: u128, mask: u128, seed: u64 },
}

impl Pattern {
    /// The value of the field in frame `k`, cut to `width` bits.
    #[inline]
    pub fn at(&self, k: u64, width: u32) -> u128 {
        let v = match self {
            Pattern::Value(v) => *v,
            Pattern::List(vs) => vs[(k % vs.len() as u64) as usize],
            Pattern::Increment { start, step, count } => {
                start.wrapping_add(step.wrapping_mul(u128::from(k % count)))
            }
            Pattern::Decrement { start, step, count } => {
                start.wrapping_sub(step.wrapping_mul(u128::from(k % count)))
            }
            Pattern::Random { min, max, seed } => {
                // Drawn on 64 (or 128) bits before the modulo, so small spans are even.
                let r = draw(*seed, k, if width > 64 { 128 } else { 64 });
                match (max - min).checked_add(1) {
                    Some(span) => min + r % span,
                    None => r,
                }
            }
            Pattern::RandomMask { base, mask, seed } => {
                (base & !mask) | (draw(*seed, k, width) & mask)
            }
        };
        v & mask(width)
    }

    /// The one value the pattern takes, when it never changes.
    pub fn constant(&self) -> Option<u128> {
        match self {
            Pattern::Value(v) => Some(*v),
            Pattern::List(vs) if vs.len() == 1 => Some(vs[0]),
            Pattern::Increment { start, step, count }
            | Pattern::Decrement { start, step, count }
                if *step == 0 || *count == 1 =>
            {
                Some(*start)
            }
            Pattern::Random { min, max, .. } if min == max => Some(*min),
            Pattern::RandomMask { base, mask: 0, .. } => Some(*base),
            _ => None,
        }
    }

    /// Why the pattern cannot be a field of `width` bits, if it cannot.
    pub fn check(&self, width: u32) -> Result<(), PatternError> {
        let fits = |v: u128, what: &'static str| {
            if v & !mask(width) != 0 {
                Err(PatternError::DoesNotFit { what, v, width })
            } else {
                Ok(())
            }
        };
        match self {
            Pattern::Value(v) => fits(*v, "value"),
            Pattern::List(vs) => {
                if vs.is_empty() || vs.len() > MAX_LIST {
                    return Err(PatternError::ListLength);
                }
                vs.iter().try_for_each(|v| fits(*v, "value"))
            }
            Pattern::Increment { start, step, count }
            | Pattern::Decrement { start, step, count } => {
                if *count == 0 {
                    return Err(PatternError::ZeroCount);
                }
                fits(*start, "start")?;
                fits(*step, "step")
            }
            Pattern::Random { min, max, .. } => {
                fits(*min, "min")?;
                fits(*max, "max")?;
                if min > max {
                    return Err(PatternError::MinAboveMax {
                        min: *min,
                        max: *max,
                    });
                }
                Ok(())
            }
            Pattern::RandomMask { base, mask, .. } => {
                fits(*base, "base")?;
                fits(*mask, "mask")
            }
        }
    }
}

/// Why a pattern cannot be a field's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    #[error("{what} {v:#x} does not fit {width} bits")]
    DoesNotFit {
        what: &'static str,
        v: u128,
        width: u32,
    },
    #[error("a list needs 1 to {MAX_LIST} values")]
    ListLength,
    #[error("count 0: an increment or decrement needs a count of 1 or more")]
    ZeroCount,
    #[error("random min {min:#x} is above max {max:#x}")]
    MinAboveMax { min: u128, max: u128 },
}

/// Why a size pattern cannot be a stream's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    #[error(
        "size increment {start}..{end} step {step}: needs start <= end and a step of 1 or more"
    )]
    Increment {
        start: usize,
        end: usize,
        step: usize,
    },
    #[error("size random: min {min} is above max {max}")]
    Random { min: usize, max: usize },
    #[error("weighted sizes: 1 to {MAX_WEIGHTED} pairs")]
    WeightedPairs,
    #[error("weighted sizes: every weight is 0")]
    WeightsZero,
}

impl From<MacAddr> for Pattern {
    fn from(m: MacAddr) -> Pattern {
        let mut b = [0u8; 16];
        b[10..].copy_from_slice(&m.0);
        Pattern::Value(u128::from_be_bytes(b))
    }
}

impl From<Ipv4Addr> for Pattern {
    fn from(a: Ipv4Addr) -> Pattern {
        Pattern::Value(u128::from(u32::from(a)))
    }
}

impl From<Ipv6Addr> for Pattern {
    fn from(a: Ipv6Addr) -> Pattern {
        Pattern::Value(u128::from(a))
    }
}

impl From<u64> for Pattern {
    fn from(v: u64) -> Pattern {
        Pattern::Value(u128::from(v))
    }
}

/// The `width` low bits set.
#[inline]
pub const fn mask(width: u32) -> u128 {
    if width >= 128 {
        u128::MAX
    } else {
        (1u128 << width) - 1
    }
}

/// A random value of `width` bits for frame `k` of a pattern seeded with `seed`: the k-th
/// output of a splitmix64 counter (through [`Rng`]), so any frame's value is known without
/// the ones before it.
#[inline]
fn draw(seed: u64, k: u64, width: u32) -> u128 {
    let mut r = Rng::new(seed.wrapping_add(k.wrapping_mul(0x9e37_79b9_7f4a_7c15)));
    let lo = u128::from(r.next_u64());
    let v = if width > 64 {
        lo | u128::from(r.next_u64()) << 64
    } else {
        lo
    };
    v & mask(width)
}

/// The sizes of a stream's frames (without FCS).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Size {
    Fixed(usize),
    /// `start`, `start + step`, ... up to `end` (included when reached), then `start` again.
    Increment {
        start: usize,
        end: usize,
        step: usize,
    },
    /// Uniform in `[min, max]`, drawn from `seed` and the packet index.
    Random {
        min: usize,
        max: usize,
        seed: u64,
    },
    /// (size, weight) pairs, IMIX: each size in the proportion of its weight, spread evenly
    /// (a low-discrepancy sequence, not random draws).
    Weighted(Vec<(usize, u32)>),
}

/// The frame sizes of a stream, prepared to be read per packet.
#[derive(Debug, Clone, PartialEq)]
pub enum SizeSeq {
    Fixed(u32),
    Increment {
        start: u32,
        step: u32,
        n: u64,
    },
    Random {
        min: u32,
        span: u32,
        seed: u64,
    },
    /// Sizes and, for each, the top of its share of the 64-bit circle.
    Weighted {
        sizes: Box<[u32]>,
        tops: Box<[u64]>,
    },
}

impl SizeSeq {
    /// The length of the stream's frame `k`.
    #[inline]
    pub fn at(&self, k: u64) -> u32 {
        match self {
            SizeSeq::Fixed(s) => *s,
            SizeSeq::Increment { start, step, n } => start + step * (k % n) as u32,
            SizeSeq::Random { min, span, seed } => {
                min + (draw(*seed, k, 64) % u128::from(*span)) as u32
            }
            SizeSeq::Weighted { sizes, tops } => {
                // The golden-ratio (Weyl) sequence: frac(k / phi) on 64 bits.
                let u = k.wrapping_mul(0x9e37_79b9_7f4a_7c15);
                let i = tops.partition_point(|&t| t <= u);
                sizes[i.min(sizes.len() - 1)]
            }
        }
    }
}

impl Size {
    /// The smallest and the largest frame.
    pub fn bounds(&self) -> (usize, usize) {
        match self {
            Size::Fixed(s) => (*s, *s),
            Size::Increment { start, end, step } => {
                let n = end.saturating_sub(*start) / (*step).max(1);
                (*start, start + n * step)
            }
            Size::Random { min, max, .. } => (*min, *max),
            Size::Weighted(p) => {
                let s = p.iter().filter(|x| x.1 > 0).map(|x| x.0);
                (s.clone().min().unwrap_or(0), s.max().unwrap_or(0))
            }
        }
    }

    /// The mean frame length over the sequence (over a long run, for random sizes).
    pub fn mean(&self) -> f64 {
        match self {
            Size::Weighted(p) => {
                let w: f64 = p.iter().map(|x| f64::from(x.1)).sum();
                p.iter().map(|x| x.0 as f64 * f64::from(x.1)).sum::<f64>() / w
            }
            _ => {
                let (lo, hi) = self.bounds();
                (lo + hi) as f64 / 2.0
            }
        }
    }

    fn check(&self) -> Result<(), SizeError> {
        match self {
            Size::Increment { start, end, step } if *step == 0 || start > end => {
                return Err(SizeError::Increment {
                    start: *start,
                    end: *end,
                    step: *step,
                });
            }
            Size::Random { min, max, .. } if min > max => {
                return Err(SizeError::Random {
                    min: *min,
                    max: *max,
                });
            }
            Size::Weighted(p) => {
                if p.is_empty() || p.len() > MAX_WEIGHTED {
                    return Err(SizeError::WeightedPairs);
                }
                if p.iter().all(|x| x.1 == 0) {
                    return Err(SizeError::WeightsZero);
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The sequence read per packet (the size must have passed [`StreamSpec::check`]).
    pub fn seq(&self) -> SizeSeq {
        match self {
            Size::Fixed(s) => SizeSeq::Fixed(*s as u32),
            Size::Increment { start, step, .. } => {
                let (lo, hi) = self.bounds();
                SizeSeq::Increment {
                    start: *start as u32,
                    step: *step as u32,
                    n: ((hi - lo) / step + 1) as u64,
                }
            }
            Size::Random { min, max, seed } => SizeSeq::Random {
                min: *min as u32,
                span: (max - min + 1) as u32,
                seed: *seed,
            },
            Size::Weighted(p) => {
                let p: Vec<_> = p.iter().filter(|x| x.1 > 0).collect();
                let total: u128 = p.iter().map(|x| u128::from(x.1)).sum();
                let mut cum = 0u128;
                let tops = p
                    .iter()
                    .map(|x| {
                        cum += u128::from(x.1);
                        ((cum << 64) / total).min(u128::from(u64::MAX)) as u64
                    })
                    .collect();
                SizeSeq::Weighted {
                    sizes: p.iter().map(|x| x.0 as u32).collect(),
                    tops,
                }
            }
        }
    }
}

/// How fast a stream sends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rate {
    /// Frames per second.
    Pps(f64),
    /// Bits per second on the wire (each frame counts its length + [`WIRE_OVERHEAD`] bytes).
    Bps(f64),
    /// Percent of the port's line rate, on the wire as [`Rate::Bps`].
    Percent(f64),
}

/// The silence after a burst: nanoseconds, or bytes at the line rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gap {
    Ns(u64),
    Bytes(u64),
}

/// Bursts of `packets` frames at the stream's rate, each followed by `gap`; `count` bursts
/// (`None`: until stopped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Burst {
    pub packets: u64,
    pub gap: Gap,
    pub count: Option<u64>,
}

/// When a stream ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Length {
    /// Until stopped.
    Continuous,
    /// After this many frames.
    Packets(u64),
    /// After this long from its start (its delay excluded): frames due before then are sent.
    Duration {
        ns: u64,
    },
    Bursts(Burst),
}

/// What fills a frame after its headers, up to the signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fill {
    #[default]
    Zeros,
    /// Every byte this value.
    Byte(u8),
}

/// One stream of a port.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamSpec {
    /// Its name (an OTG flow's name), for messages and reports.
    pub name: String,
    /// Ethernet first, then VLAN tags, MPLS entries, an IP header, UDP or TCP, a raw
    /// payload: each optional but the Ethernet header, in that order.
    pub headers: Vec<Header>,
    pub size: Size,
    pub rate: Rate,
    pub length: Length,
    /// Nanoseconds from the start of the run to its first frame.
    pub start_delay_ns: u64,
    pub fill: Fill,
}

/// Why a stream (or a set of them) cannot be sent; the message names the stream.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("stream \"{stream}\": {what}")]
pub struct StreamError {
    pub stream: String,
    pub what: String,
}

impl StreamSpec {
    fn err(&self, what: impl Into<String>) -> StreamError {
        StreamError {
            stream: self.name.clone(),
            what: what.into(),
        }
    }

    /// Bytes of the headers (raw payload included).
    pub fn headers_len(&self) -> usize {
        self.headers.iter().map(Header::len).sum()
    }

    /// The smallest frame that holds the headers and the signature, and the 60 bytes below
    /// which a NIC pads (which would move the signature off the frame's end).
    pub fn min_frame_len(&self) -> usize {
        (self.headers_len() + signature::LEN).max(ETH_ZLEN)
    }

    /// The EtherType of what follows the Ethernet header and its VLAN tags, worked out from
    /// it (None for a raw payload or nothing: then `ethernet.ethertype` says it).
    pub fn payload_ethertype(&self) -> Option<u16> {
        use crate::wire::ethernet::ethertype;
        match self
            .headers
            .iter()
            .skip(1)
            .find(|h| !matches!(h, Header::Vlan(_)))?
        {
            Header::Mpls(_) => Some(ethertype::MPLS),
            Header::Ipv4(_) => Some(ethertype::IPV4),
            Header::Ipv6(_) => Some(ethertype::IPV6),
            _ => None,
        }
    }

    /// Checks everything that does not need the line rate: the order of the headers, each
    /// field against its width, the sizes against the headers, the rate and the length.
    pub fn check(&self) -> Result<(), StreamError> {
        self.check_headers()?;
        for h in &self.headers {
            for f in h.fields() {
                f.pattern
                    .check(f.width)
                    .map_err(|e| self.err(format!("{}: {e}", f.name)))?;
            }
        }
        self.size.check().map_err(|e| self.err(e.to_string()))?;
        let (lo, hi) = self.size.bounds();
        let need = self.min_frame_len();
        if lo < need {
            return Err(self.err(format!(
                "frame size {lo} is too small: its headers and the {}-byte signature need {need} bytes (sizes exclude the FCS)",
                signature::LEN
            )));
        }
        if hi > MAX_FRAME_LEN {
            return Err(self.err(format!(
                "frame size {hi} is above the largest, {MAX_FRAME_LEN}"
            )));
        }
        let r = match self.rate {
            Rate::Pps(r) | Rate::Bps(r) | Rate::Percent(r) => r,
        };
        if !(r.is_finite() && r > 0.0) {
            return Err(self.err(format!("rate {r}: needs a positive number")));
        }
        if matches!(self.rate, Rate::Percent(p) if p > 100.0) {
            return Err(self.err(format!("rate {r} %: above the line rate")));
        }
        let bad = match self.length {
            Length::Packets(0) => Some("a length of 0 packets"),
            Length::Duration { ns: 0 } => Some("a duration of 0"),
            Length::Bursts(b) if b.packets == 0 => Some("bursts of 0 packets"),
            Length::Bursts(b) if b.count == Some(0) => Some("0 bursts"),
            _ => None,
        };
        if let Some(b) = bad {
            return Err(self.err(format!("{b} sends nothing")));
        }
        Ok(())
    }

    fn check_headers(&self) -> Result<(), StreamError> {
        // Rank of each kind: headers must come in non-decreasing rank, with one of each
        // but VLAN and MPLS.
        fn rank(h: &Header) -> u8 {
            match h {
                Header::Ethernet(_) => 0,
                Header::Vlan(_) => 1,
                Header::Mpls(_) => 2,
                Header::Ipv4(_) | Header::Ipv6(_) => 3,
                Header::Udp(_) | Header::Tcp(_) => 4,
                Header::Raw(_) => 5,
            }
        }
        let Some(Header::Ethernet(_)) = self.headers.first() else {
            return Err(self.err("the headers must start with ethernet"));
        };
        let mut last = 0;
        let (mut tags, mut labels) = (0, 0);
        for (i, h) in self.headers.iter().enumerate().skip(1) {
            let r = rank(h);
            if r < last || (r == last && !matches!(r, 1 | 2)) || r == 0 {
                return Err(self.err(format!("header {i} is out of place (the order is ethernet, vlan..., mpls..., ipv4 or ipv6, udp or tcp, raw)")));
            }
            if r == 4 && last != 3 {
                return Err(self.err(format!(
                    "header {i}: udp and tcp need an ip header before them"
                )));
            }
            last = r;
        }
        for (i, h) in self.headers.iter().enumerate().skip(1) {
            match h {
                Header::Vlan(v) => {
                    tags += 1;
                    if v.tpid != 0x8100 && v.tpid != 0x88a8 {
                        return Err(
                            self.err(format!("vlan.tpid {:#06x}: 0x8100 or 0x88a8", v.tpid))
                        );
                    }
                }
                Header::Mpls(_) => labels += 1,
                Header::Raw(b) if b.len() > MAX_RAW => {
                    return Err(self.err(format!(
                        "a raw payload of {} bytes: at most {MAX_RAW}",
                        b.len()
                    )));
                }
                Header::Ipv4(ip) => self.check_protocol(&ip.protocol, i, "ipv4.protocol")?,
                Header::Ipv6(ip) => self.check_protocol(&ip.next_header, i, "ipv6.next_header")?,
                Header::Udp(u) if !u.checksum && matches!(self.headers[i - 1], Header::Ipv6(_)) => {
                    return Err(self.err("udp.checksum: IPv6 needs the UDP checksum"));
                }
                _ => {}
            }
        }
        if tags > MAX_TAGS || labels > MAX_TAGS {
            return Err(self.err(format!(
                "at most {MAX_TAGS} vlan tags and {MAX_TAGS} mpls entries"
            )));
        }
        if matches!(&self.headers[0], Header::Ethernet(e) if e.ethertype.is_none())
            && self.payload_ethertype().is_none()
        {
            return Err(self.err(
                "ethernet.ether_type: needed when no mpls or ip header follows (the ethernet header and its vlan tags)",
            ));
        }
        Ok(())
    }

    /// An IP header's protocol must be given (or follow from UDP/TCP after it), and must
    /// not vary under a transport checksum.
    fn check_protocol(&self, p: &Option<Pattern>, i: usize, name: &str) -> Result<(), StreamError> {
        let l4 = matches!(
            self.headers.get(i + 1),
            Some(Header::Udp(_) | Header::Tcp(_))
        );
        match p {
            None if !l4 => {
                Err(self.err(format!("{name}: needed when no udp or tcp header follows")))
            }
            Some(p) if l4 && p.constant().is_none() => Err(self.err(format!(
                "{name}: cannot vary under a udp or tcp header (its checksum covers it)"
            ))),
            _ => Ok(()),
        }
    }

    /// The stream's timing for the timeline: its rate resolved against `line_bps` (the
    /// port's line rate in bits per second, when known; a percent rate and a gap in bytes
    /// need it). Refuses a rate above the line rate (for a rate in frames per second, at
    /// the mean frame size).
    pub fn schedule(&self, line_bps: Option<f64>) -> Result<Schedule, StreamError> {
        self.check()?;
        let line = |what: &str| {
            line_bps
                .filter(|l| l.is_finite() && *l > 0.0)
                .ok_or_else(|| self.err(format!("{what} needs the port's line rate")))
        };
        let bps = match self.rate {
            // On average over the sizes.
            Rate::Pps(p) => p * (self.size.mean() + WIRE_OVERHEAD as f64) * 8.0,
            Rate::Bps(b) => b,
            Rate::Percent(x) => x / 100.0 * line("a rate in percent")?,
        };
        if let Some(l) = line_bps
            && bps > l * (1.0 + 1e-9)
        {
            return Err(self.err(format!(
                "rate of {bps:.0} bit/s on the wire is above the line rate, {l:.0} bit/s"
            )));
        }
        let pace = match self.rate {
            Rate::Pps(p) => Pace::pps(p),
            _ => Pace::bps(bps),
        };
        let (packets, duration_ns, burst) = match self.length {
            Length::Continuous => (None, None, None),
            Length::Packets(n) => (Some(n), None, None),
            Length::Duration { ns } => (None, Some(ns), None),
            Length::Bursts(b) => {
                let gap_ns = match b.gap {
                    Gap::Ns(n) => n as f64,
                    Gap::Bytes(n) => n as f64 * 8e9 / line("a burst gap in bytes")?,
                };
                let shape = BurstShape {
                    packets: b.packets,
                    gap_fp: (gap_ns * super::timeline::FP_ONE as f64) as u128,
                    count: b.count,
                };
                (None, None, Some(shape))
            }
        };
        Ok(Schedule {
            pace,
            sizes: self.size.seq(),
            packets,
            duration_ns,
            burst,
            start_delay_ns: self.start_delay_ns,
        })
    }
}

/// Checks a run's streams together: each one, at most [`MAX_STREAMS`] (the signature's
/// ids), and distinct names.
pub fn check_set(streams: &[StreamSpec]) -> Result<(), StreamError> {
    if streams.len() > MAX_STREAMS {
        return Err(StreamError {
            stream: streams[MAX_STREAMS].name.clone(),
            what: format!("{} streams: at most {MAX_STREAMS} in a run", streams.len()),
        });
    }
    let mut names = std::collections::HashSet::new();
    for s in streams {
        s.check()?;
        if !names.insert(s.name.as_str()) {
            return Err(s.err("a second stream of this name"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
