//! The hand-assembled BPF programs of the `xdp_live` backend (written with the assembler
//! of [`crate::bpf::asm`]).
//!
//! Two programs share one single-entry array map (the *state*, [`State`]):
//!
//! * the XDP program, run by `BPF_PROG_RUN` with live frames on copies of one prepared
//!   frame. It counts itself in the state, writes the per-packet fields and returns
//!   `bpf_redirect(ifindex, 0)`. Pages are recycled from a page pool without being
//!   re-initialised, so every field that varies is written whole on every run — never
//!   patched relative to what the page held before. And whatever received the frame may
//!   have changed the page in place (a forwarding DUT rewrites the Ethernet addresses and
//!   decrements the TTL; a NAT rewrites addresses and ports): so the program also writes
//!   back every constant byte of the headers ([`Spec::restore`]), and each frame leaves
//!   exactly as prepared whatever its page went through.
//! * a raw tracepoint program on `xdp:xdp_devmap_xmit`, which the kernel fires after each
//!   bulk of redirected frames is handed to the driver's `ndo_xdp_xmit`, with the number
//!   the driver took (`sent`) and refused (`drops`). It counts, into its own map
//!   ([`Driver`]), only the calls made from the sending thread.
//!
//! Checksums are computed in the host's byte order: the one's-complement sum of 16-bit
//! words read in either byte order is the byte swap of the other (RFC 1071, 2(B)), so the
//! program adds the words as loaded, folds, complements and stores without swapping; the
//! constant bases are converted once in userspace ([`to_native`]).

use crate::bpf::asm::{Asm, AsmError, Insn, Label, helper, op};
use crate::wire::{checksum, ethernet, ipv4, ipv6, mpls, pktgen_hdr, udp, vlan};

pub use super::{XDP_ABORTED, XDP_PASS, XDP_REDIRECT};

// Registers.
const R0: u8 = 0;
const R1: u8 = 1;
const R2: u8 = 2;
const R3: u8 = 3;
const R5: u8 = 5;
const R6: u8 = 6;
const R7: u8 = 7;
const R8: u8 = 8;
const R9: u8 = 9;
const R10: u8 = 10;

/// Layout of the XDP program's state map value (native-endian fields).
pub mod state {
    /// u64: frames the XDP program has run (each one redirected).
    pub const FRAMES: i16 = 0;
    /// u64: CLOCK_REALTIME - CLOCK_MONOTONIC in ns, set by userspace before each run.
    pub const RT_OFFSET: i16 = 8;
    /// u64: value of FRAMES at which the program reads the clock next (userspace sets 0
    /// before each run, so the first frame of a run always reads it).
    pub const CLOCK_AT: i16 = 16;
    /// u32: tv_sec of the last clock reading, as stored in frames (big-endian bytes).
    pub const TV_SEC: i16 = 24;
    /// u32: tv_usec likewise.
    pub const TV_USEC: i16 = 28;
    /// u32: the first walk's next offset from its minimum (the UDP source port's in the
    /// plain stream).
    pub const SPORT: i16 = 32;
    /// u32: the second walk's (the destination port's).
    pub const DPORT: i16 = 36;
    /// The part [`super::State`] holds.
    pub const SIZE: usize = 40;
    /// u64: bytes of the frames the program ran (kept when the size varies).
    pub const BYTES: i16 = 40;
    /// u32: the current flow (FLOW_SEQ).
    pub const CURFL: i16 = 48;
    /// u32 slots of the third and later walks, then IMIX's table of u16 lengths.
    pub const SLOTS: i16 = 52;

    /// Where walk `i` (in the order of [`super::Spec`]'s fields, then the size) keeps its
    /// next offset.
    pub fn slot(i: usize) -> i16 {
        match i {
            0 => SPORT,
            1 => DPORT,
            _ => SLOTS + 4 * (i as i16 - 2),
        }
    }
}

/// Layout of the tracepoint program's map value.
pub mod driver {
    /// u32: thread id whose `ndo_xdp_xmit` calls are counted (set by userspace).
    pub const TID: i16 = 0;
    /// u32: last non-zero error the driver call reported (a negative errno).
    pub const LAST_ERR: i16 = 4;
    /// u64: frames the driver accepted.
    pub const SENT: i16 = 8;
    /// u64: frames the driver refused.
    pub const DROPS: i16 = 16;
    /// u64: driver calls (bulk flushes).
    pub const CALLS: i16 = 24;
    pub const SIZE: usize = 32;
}

fn rd_u32(b: &[u8], off: i16) -> u32 {
    let o = off as usize;
    u32::from_ne_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}

fn rd_u64(b: &[u8], off: i16) -> u64 {
    let o = off as usize;
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[o..o + 8]);
    u64::from_ne_bytes(w)
}

fn wr_u32(b: &mut [u8], off: i16, v: u32) {
    let o = off as usize;
    b[o..o + 4].copy_from_slice(&v.to_ne_bytes());
}

fn wr_u64(b: &mut [u8], off: i16, v: u64) {
    let o = off as usize;
    b[o..o + 8].copy_from_slice(&v.to_ne_bytes());
}

/// Userspace's copy of the XDP program's state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct State {
    pub frames: u64,
    pub rt_offset: u64,
    pub clock_at: u64,
    pub tv_sec_raw: u32,
    pub tv_usec_raw: u32,
    pub sport: u32,
    pub dport: u32,
}

impl State {
    pub fn to_bytes(&self) -> [u8; state::SIZE] {
        let mut b = [0u8; state::SIZE];
        wr_u64(&mut b, state::FRAMES, self.frames);
        wr_u64(&mut b, state::RT_OFFSET, self.rt_offset);
        wr_u64(&mut b, state::CLOCK_AT, self.clock_at);
        wr_u32(&mut b, state::TV_SEC, self.tv_sec_raw);
        wr_u32(&mut b, state::TV_USEC, self.tv_usec_raw);
        wr_u32(&mut b, state::SPORT, self.sport);
        wr_u32(&mut b, state::DPORT, self.dport);
        b
    }

    pub fn from_bytes(b: &[u8; state::SIZE]) -> State {
        State {
            frames: rd_u64(b, state::FRAMES),
            rt_offset: rd_u64(b, state::RT_OFFSET),
            clock_at: rd_u64(b, state::CLOCK_AT),
            tv_sec_raw: rd_u32(b, state::TV_SEC),
            tv_usec_raw: rd_u32(b, state::TV_USEC),
            sport: rd_u32(b, state::SPORT),
            dport: rd_u32(b, state::DPORT),
        }
    }
}

/// Userspace's copy of the tracepoint program's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Driver {
    pub tid: u32,
    pub last_err: i32,
    pub sent: u64,
    pub drops: u64,
    pub calls: u64,
}

impl Driver {
    pub fn to_bytes(&self) -> [u8; driver::SIZE] {
        let mut b = [0u8; driver::SIZE];
        wr_u32(&mut b, driver::TID, self.tid);
        wr_u32(&mut b, driver::LAST_ERR, self.last_err as u32);
        wr_u64(&mut b, driver::SENT, self.sent);
        wr_u64(&mut b, driver::DROPS, self.drops);
        wr_u64(&mut b, driver::CALLS, self.calls);
        b
    }

    pub fn from_bytes(b: &[u8; driver::SIZE]) -> Driver {
        Driver {
            tid: rd_u32(b, driver::TID),
            last_err: rd_u32(b, driver::LAST_ERR) as i32,
            sent: rd_u64(b, driver::SENT),
            drops: rd_u64(b, driver::DROPS),
            calls: rd_u64(b, driver::CALLS),
        }
    }
}

/// A UDP port walk `[min, min + span)`; `span` 1 is a fixed port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortWalk {
    pub min: u16,
    pub span: u32,
}

impl PortWalk {
    /// pktgen's `[min, max)`, or just `min` when `max <= min` (as [`crate::stream::PortRange`]).
    pub fn new(min: u16, max: u16) -> PortWalk {
        let span = if max > min { u32::from(max - min) } else { 1 };
        PortWalk { min, span }
    }

    pub fn varies(&self) -> bool {
        self.span > 1
    }

    /// The walk as the program draws it: in order, the first packet carrying `min + 1`.
    pub fn draw(&self) -> Draw {
        Draw::Seq {
            min: u64::from(self.min),
            span: u64::from(self.span),
            start: 1 % u64::from(self.span),
        }
    }
}

/// What the XDP program returns once the frame is written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Verdict {
    /// `bpf_redirect(ifindex, 0)`: the frame is transmitted by device `ifindex`.
    #[default]
    Redirect,
    /// `XDP_PASS`: the kernel builds an skb and hands it to the receive path of the run's
    /// ingress device (pktgen's `xmit_mode netif_receive`).
    Pass,
}

/// How the program makes one per-packet number (the value is then `min + x`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Draw {
    /// `x` walks `0, 1, ..., span - 1, 0, ...` in order from `start`; its place is kept in a
    /// slot of the state map. `span` is at most 2^32.
    Seq { min: u64, span: u64, start: u64 },
    /// `x` is drawn uniformly from `0..span` (`span` at most 2^32) by scaling
    /// `bpf_get_prandom_u32` (the kernel's per-CPU generator, which `--seed` does not reach).
    Rnd { min: u64, span: u64 },
}

impl Draw {
    pub fn is_random(&self) -> bool {
        matches!(self, Draw::Rnd { .. })
    }
}

/// One header field the program writes per packet, at byte offset `off` of the frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Field {
    /// A MAC address: the first byte of `base` kept, the low five bytes `base + x` (carry
    /// included, modulo 2^40), as pktgen's `*_mac_count`.
    Mac {
        off: usize,
        base: [u8; 6],
        draw: Draw,
    },
    /// A big-endian 16-bit number (a UDP port).
    U16 { off: usize, draw: Draw },
    /// A big-endian 32-bit number (an IPv4 address).
    U32 { off: usize, draw: Draw },
    /// A random IPv4 destination (IPDST_RND): index `x` of `0..total` into the address
    /// blocks `segs` (inclusive bounds) that random destinations may take.
    Ipv4Segments {
        off: usize,
        segs: Vec<(u32, u32)>,
        total: u64,
    },
    /// A 32-bit word of an IPv6 address, `(random | min) & max` byte for byte (dst6_min,
    /// dst6_max).
    Ipv6Word {
        off: usize,
        min: [u8; 4],
        max: [u8; 4],
    },
    /// A VLAN TCI whose VID is drawn from 0..4096 (VID_RND, SVID_RND); `keep` holds the PCP
    /// and DEI bits.
    RandomVid { off: usize, keep: u16 },
    /// An MPLS label stack entry redrawn per packet (MPLS_RND): the low 20 bits random, the
    /// bottom-of-stack bit as `bottom` says.
    RandomMpls { off: usize, bottom: bool },
}

impl Field {
    /// The bytes it writes.
    pub fn span(&self) -> (usize, usize) {
        match *self {
            Field::Mac { off, .. } => (off, 6),
            Field::U16 { off, .. } | Field::RandomVid { off, .. } => (off, 2),
            Field::U32 { off, .. }
            | Field::Ipv4Segments { off, .. }
            | Field::Ipv6Word { off, .. }
            | Field::RandomMpls { off, .. } => (off, 4),
        }
    }

    fn draw(&self) -> Option<&Draw> {
        match self {
            Field::Mac { draw, .. } | Field::U16 { draw, .. } | Field::U32 { draw, .. } => {
                Some(draw)
            }
            _ => None,
        }
    }

    /// Whether it draws random numbers.
    pub fn is_random(&self) -> bool {
        self.draw().is_none_or(Draw::is_random)
    }
}

/// The frame length per packet: drawn (then raised to the smallest frame, as the walk's
/// [`crate::pg::generate::Layout::frame_len`]), or from IMIX's 100-slot table of lengths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Size {
    Draw(Draw),
    Imix(Vec<u16>),
}

/// Flows (pktgen's `flows`, `flowlen`): each flow keeps the IPv4 destination it drew
/// (field `field` of [`Spec::fields`]) until it has sent `flowlen` packets. FLOW_SEQ (`seq`)
/// takes the flows in turn; otherwise one is picked at random per packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flows {
    pub n: u32,
    pub flowlen: u32,
    pub seq: bool,
    pub field: usize,
}

/// Flow map value: per flow its destination (u32, as stored) and packets sent (u32; 0 means
/// the flow has not drawn its destination yet).
pub const FLOW_ENTRY: usize = 8;

/// Where the headers are in the frame (from the walk's [`crate::pg::generate::Layout`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Offsets {
    /// The IP header.
    pub l3: usize,
    pub ipv6: bool,
}

impl Offsets {
    /// Ethernet, IPv4, UDP: the plain stream's frame ([`crate::wire::Udp4Template`]).
    pub const UDP4: Offsets = Offsets {
        l3: ethernet::HEADER_LEN,
        ipv6: false,
    };

    /// The UDP header.
    pub fn l4(&self) -> usize {
        self.l3 + crate::wire::ip_header_len(self.ipv6)
    }

    fn pktgen(&self) -> usize {
        self.l4() + udp::HEADER_LEN
    }

    pub fn seq(&self) -> usize {
        self.pktgen() + pktgen_hdr::field::SEQ.start
    }

    pub fn tv_sec(&self) -> usize {
        self.pktgen() + pktgen_hdr::field::TV_SEC.start
    }

    pub fn tv_usec(&self) -> usize {
        self.pktgen() + pktgen_hdr::field::TV_USEC.start
    }

    /// The smallest frame: headers and pktgen's header.
    pub fn min_frame(&self) -> usize {
        self.pktgen() + pktgen_hdr::HEADER_LEN
    }

    fn ip_id(&self) -> usize {
        self.l3 + ipv4::field::IDENT.start
    }

    fn ip_csum(&self) -> usize {
        self.l3 + ipv4::field::CHECKSUM.start
    }

    fn udp_csum(&self) -> usize {
        self.l4() + udp::field::CHECKSUM.start
    }

    fn udp_len(&self) -> usize {
        self.l4() + udp::field::LENGTH.start
    }

    /// The IP length field: IPv4's total length or IPv6's payload length.
    fn ip_len(&self) -> usize {
        self.l3
            + if self.ipv6 {
                ipv6::field::LENGTH.start
            } else {
                ipv4::field::LENGTH.start
            }
    }

    /// The addresses, which the UDP pseudo-header covers.
    fn addresses(&self) -> std::ops::Range<usize> {
        if self.ipv6 {
            self.l3 + ipv6::field::SRC_ADDR.start..self.l3 + ipv6::field::DST_ADDR.end
        } else {
            self.l3 + ipv4::field::SRC_ADDR.start..self.l3 + ipv4::field::DST_ADDR.end
        }
    }
}

/// A load from the frame: (offset, 2 or 4 bytes).
type Load = (usize, u8);

/// What the XDP program writes per packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    /// Redirect target.
    pub ifindex: u32,
    /// Redirect to `ifindex`, or pass to the receive path.
    pub verdict: Verdict,
    /// No per-packet writes: only the frame counter and the redirect.
    pub plain: bool,
    /// Write tv_sec/tv_usec (false: NO_TIMESTAMP, the prepared zeros stay).
    pub timestamps: bool,
    /// Frames between clock reads (the clock is also read at the first frame of each run).
    pub clock_every: u32,
    /// Compute the UDP checksum (UDPCSUM).
    pub udp_csum: bool,
    pub at: Offsets,
    /// The header fields walked or drawn per packet, besides the sequence number, the
    /// timestamp, the IPv4 id, lengths and checksums.
    pub fields: Vec<Field>,
    /// None: every frame has the prepared frame's length.
    pub size: Option<Size>,
    /// The prepared frame's length (the largest frame).
    pub max_len: usize,
    pub flows: Option<Flows>,
    /// Partial sum of the IPv4 header with every written field zero (host byte order).
    pub ip_base: u16,
    /// Partial sum of the UDP pseudo-header and segment with every written field zero
    /// (host byte order).
    pub udp_base: u16,
    /// The constant header bytes to write back on every run: (offset, 2 or 4 bytes, their
    /// value as the host loads them). See [`Spec::restore_stores`].
    pub restore: Vec<(i16, u8, i32)>,
}

impl Spec {
    /// A spec for the prepared `frame`, its checksum bases and write-back computed.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        ifindex: u32,
        timestamps: bool,
        clock_every: u32,
        udp_csum: bool,
        at: Offsets,
        fields: Vec<Field>,
        size: Option<Size>,
        flows: Option<Flows>,
        frame: &[u8],
    ) -> Spec {
        let mut s = Spec {
            ifindex,
            verdict: Verdict::Redirect,
            plain: false,
            timestamps,
            clock_every,
            udp_csum,
            at,
            fields,
            size,
            max_len: frame.len(),
            flows,
            ip_base: 0,
            udp_base: 0,
            restore: Vec::new(),
        };
        (s.ip_base, s.udp_base) = s.bases(frame);
        s.restore = s.restore_stores(frame);
        s
    }

    /// The plain IPv4/UDP stream's spec (ports walked in order when they vary).
    pub fn udp4(
        ifindex: u32,
        frame: &[u8],
        timestamps: bool,
        clock_every: u32,
        udp_csum: bool,
        sport: PortWalk,
        dport: PortWalk,
    ) -> Spec {
        let at = Offsets::UDP4;
        let mut fields = Vec::new();
        for (w, f) in [(sport, udp::field::SRC_PORT), (dport, udp::field::DST_PORT)] {
            if w.varies() {
                fields.push(Field::U16 {
                    off: at.l4() + f.start,
                    draw: w.draw(),
                });
            }
        }
        Spec::new(
            ifindex,
            timestamps,
            clock_every,
            udp_csum,
            at,
            fields,
            None,
            None,
            frame,
        )
    }

    /// Whether any field or the size is drawn at random (`--seed` does not reach them).
    pub fn draws_random(&self) -> bool {
        self.fields.iter().any(Field::is_random)
            || matches!(
                &self.size,
                Some(Size::Imix(_)) | Some(Size::Draw(Draw::Rnd { .. }))
            )
            || self.flows.is_some_and(|f| !f.seq)
    }

    /// Whether the program writes anything per packet beyond the counters.
    pub fn varies(&self) -> bool {
        !self.fields.is_empty() || self.size.is_some()
    }

    /// Every byte range the program writes per packet (all 2-aligned, even lengths).
    pub fn written(&self) -> Vec<(usize, usize)> {
        let at = self.at;
        let mut w = vec![(at.seq(), 4)];
        if !at.ipv6 {
            w.push((at.ip_id(), 2));
            w.push((at.ip_csum(), 2));
        }
        if self.timestamps {
            w.push((at.tv_sec(), 4));
            w.push((at.tv_usec(), 4));
        }
        if self.udp_csum {
            w.push((at.udp_csum(), 2));
        }
        if self.size.is_some() {
            w.push((at.ip_len(), 2));
            w.push((at.udp_len(), 2));
        }
        w.extend(self.fields.iter().map(Field::span));
        w
    }

    /// The loads that complete the checksums at run time: (offset, 2 or 4 bytes), for the
    /// IPv4 header and for the UDP pseudo-header and segment (the UDP length twice when the
    /// size varies: it is in both).
    fn sum_loads(&self) -> (Vec<Load>, Vec<Load>) {
        let at = self.at;
        let ip_hdr = at.l3..at.l3 + ipv4::HEADER_LEN;
        let segment = at.l4()..at.min_frame();
        let addrs = at.addresses();
        let mut ip = Vec::new();
        let mut udp = Vec::new();
        for (off, len) in self.written() {
            let mut o = off;
            while o < off + len {
                let n = if off + len - o >= 4 { 4 } else { 2 };
                if o != at.ip_csum() && o != at.udp_csum() {
                    if !at.ipv6 && ip_hdr.contains(&o) {
                        ip.push((o, n as u8));
                    }
                    if segment.contains(&o) || addrs.contains(&o) {
                        udp.push((o, n as u8));
                    }
                }
                o += n;
            }
        }
        if self.size.is_some() {
            udp.push((at.udp_len(), 2));
        }
        (ip, udp)
    }

    /// The checksum bases of the prepared `frame`, in the host's byte order: (IPv4 header,
    /// UDP pseudo-header + segment), every field the program writes counted as zero.
    pub fn bases(&self, frame: &[u8]) -> (u16, u16) {
        let at = self.at;
        let mut f = frame.to_vec();
        for (off, len) in self.written() {
            f[off..off + len].fill(0);
        }
        let ip = checksum::sum(&f[at.l3..at.l3 + ipv4::HEADER_LEN]);
        let udp_len = u16::from_be_bytes([f[at.udp_len()], f[at.udp_len() + 1]]);
        let mut udp = checksum::sum(&f[at.addresses()]);
        udp = checksum::add(udp, u32::from(crate::wire::ip_protocol::UDP));
        udp = checksum::add(udp, u32::from(udp_len));
        // The segment up to pktgen's header's end: the padding after it is zero.
        udp = checksum::add(udp, checksum::sum(&f[at.l4()..at.min_frame()]));
        (to_native(ip), to_native(udp))
    }

    /// The stores that write back every byte of the headers and pktgen's magic (bytes
    /// `0..seq` of `frame`) that the program does not write per packet, in as few 4- and
    /// 2-byte stores as the written fields leave room for: (offset, size in bytes, value).
    pub fn restore_stores(&self, frame: &[u8]) -> Vec<(i16, u8, i32)> {
        let end = self.at.seq();
        let mut written = vec![false; end];
        for (off, len) in self.written() {
            for w in written.iter_mut().take((off + len).min(end)).skip(off) {
                *w = true;
            }
        }
        let mut out = Vec::new();
        let mut i = 0;
        // Every written field is 2-byte aligned and of even length: constant bytes come in pairs.
        while i < end {
            if written[i] {
                i += 2;
                continue;
            }
            if i + 4 <= end && !written[i + 2] {
                let v = u32::from_ne_bytes(frame[i..i + 4].try_into().expect("4 bytes"));
                out.push((i as i16, 4, v as i32));
                i += 4;
            } else {
                let v = u16::from_ne_bytes(frame[i..i + 2].try_into().expect("2 bytes"));
                out.push((i as i16, 2, i32::from(v)));
                i += 2;
            }
        }
        out
    }

    /// The state map's value size: the counters, one slot per walk in order, IMIX's table.
    pub fn state_size(&self) -> usize {
        self.imix_at() + self.imix_len()
    }

    fn seq_walks(&self) -> Vec<Draw> {
        let mut v: Vec<Draw> = self
            .fields
            .iter()
            .filter_map(Field::draw)
            .filter(|d| !d.is_random())
            .copied()
            .collect();
        if let Some(Size::Draw(d @ Draw::Seq { .. })) = &self.size {
            v.push(*d);
        }
        v
    }

    fn imix_at(&self) -> usize {
        (state::slot(self.seq_walks().len()) as usize).max(state::SLOTS as usize)
    }

    fn imix_len(&self) -> usize {
        match &self.size {
            Some(Size::Imix(t)) => 2 * t.len(),
            _ => 0,
        }
    }

    /// The state map's first value: zero counters, each walk at its start, IMIX's table.
    pub fn initial_state(&self) -> Vec<u8> {
        let mut b = vec![0u8; self.state_size()];
        for (i, d) in self.seq_walks().iter().enumerate() {
            if let Draw::Seq { start, .. } = d {
                let o = state::slot(i) as usize;
                b[o..o + 4].copy_from_slice(&(*start as u32).to_ne_bytes());
            }
        }
        if let Some(Size::Imix(t)) = &self.size {
            let o = self.imix_at();
            for (i, len) in t.iter().enumerate() {
                b[o + 2 * i..o + 2 * i + 2].copy_from_slice(&len.to_ne_bytes());
            }
        }
        b
    }

    /// The flow map's value size (0 without flows).
    pub fn flows_size(&self) -> usize {
        self.flows.map_or(0, |f| f.n as usize * FLOW_ENTRY)
    }

    /// What it writes, for the report.
    pub fn describe(&self) -> String {
        let mut w = vec!["seq".to_string()];
        if !self.at.ipv6 {
            w.push("IPv4 id+csum".into());
        }
        if self.timestamps {
            w.push("timestamp".into());
        }
        let at = self.at;
        let mut names: Vec<&str> = Vec::new();
        for f in &self.fields {
            let (off, _) = f.span();
            let n = match f {
                Field::Mac { .. } if off == 0 => "dst MAC",
                Field::Mac { .. } => "src MAC",
                Field::U16 { .. } if off == at.l4() => "UDP src",
                Field::U16 { .. } => "UDP dst",
                Field::U32 { .. } if off == at.addresses().start => "IPv4 src",
                Field::U32 { .. } | Field::Ipv4Segments { .. } => "IPv4 dst",
                Field::Ipv6Word { .. } => "IPv6 dst",
                Field::RandomVid { .. } => "VLAN id",
                Field::RandomMpls { .. } => "MPLS label",
            };
            if !names.contains(&n) {
                names.push(n);
            }
        }
        w.extend(names.iter().map(|n| n.to_string()));
        if let Some(f) = self.flows {
            w.push(format!("{} flows of {}", f.n, f.flowlen));
        }
        match &self.size {
            Some(Size::Imix(_)) => w.push("IMIX size (bpf_xdp_adjust_tail)".into()),
            Some(Size::Draw(_)) => w.push("size (bpf_xdp_adjust_tail)".into()),
            None => {}
        }
        if self.udp_csum {
            w.push("UDP csum".into());
        }
        w.join(", ")
    }
}

/// A folded big-endian partial checksum in the host's byte order (see the module docs).
pub fn to_native(be_sum: u32) -> u16 {
    let folded = checksum::add(be_sum, 0) as u16;
    u16::from_ne_bytes(folded.to_be_bytes())
}

/// Folds r{reg} (< 2^36) to 16 bits, using r{tmp}.
fn fold(a: &mut Asm, reg: u8, tmp: u8, times: usize) {
    for _ in 0..times {
        a.emit(Insn::mov64_reg(tmp, reg))
            .emit(Insn::alu64_imm(op::RSH, tmp, 16))
            .emit(Insn::alu64_imm(op::AND, reg, 0xffff))
            .emit(Insn::alu64_reg(op::ADD, reg, tmp));
    }
}

/// Whether `v` fits an instruction's sign-extended immediate as itself.
fn imm(v: u64) -> Option<i32> {
    i32::try_from(v).ok()
}

/// r{reg} OP= v (a 64-bit constant through r3 when it does not fit an immediate).
fn alu_const(a: &mut Asm, alu: u8, reg: u8, v: u64) {
    match imm(v) {
        Some(i) => {
            a.emit(Insn::alu64_imm(alu, reg, i));
        }
        None => {
            a.emit2(Insn::ld_imm64(R3, v))
                .emit(Insn::alu64_reg(alu, reg, R3));
        }
    }
}

/// if r{reg} OP v goto l (through r3 when `v` does not fit an immediate).
fn jmp_const(a: &mut Asm, jop: u8, reg: u8, v: u64, l: Label) {
    match imm(v) {
        Some(i) => {
            a.jmp_imm(jop, reg, i, l);
        }
        None => {
            a.emit2(Insn::ld_imm64(R3, v)).jmp_reg(jop, reg, R3, l);
        }
    }
}

/// r1 = uniform in 0..span (span <= 2^32): the top half of `prandom * span`.
fn random_below(a: &mut Asm, span: u64) {
    a.emit(Insn::call(helper::GET_PRANDOM_U32))
        .emit(Insn::mov32_reg(R1, R0));
    alu_const(a, op::MUL, R1, span);
    a.emit(Insn::alu64_imm(op::RSH, R1, 32));
}

/// r1 = the draw's next value; `slot` is the state slot of a walk in order.
fn draw(a: &mut Asm, d: &Draw, slot: &mut usize) {
    match *d {
        Draw::Seq { min, span, .. } => {
            let at = state::slot(*slot);
            *slot += 1;
            let keep = a.label();
            a.emit(Insn::ldx(op::W, R1, R7, at))
                .emit(Insn::mov64_reg(R2, R1))
                .emit(Insn::alu64_imm(op::ADD, R2, 1));
            jmp_const(a, op::JNE, R2, span, keep);
            a.emit(Insn::mov64_imm(R2, 0));
            a.bind(keep);
            a.emit(Insn::stx(op::W, R7, at, R2));
            if min != 0 {
                alu_const(a, op::ADD, R1, min);
            }
        }
        Draw::Rnd { min, span } => {
            random_below(a, span);
            if min != 0 {
                alu_const(a, op::ADD, R1, min);
            }
        }
    }
}

/// Stores r1's low `bytes` (2 or 4) big-endian at frame offset `off`.
fn store_be(a: &mut Asm, off: usize, bytes: u8) {
    let (bits, size) = if bytes == 2 { (16, op::H) } else { (32, op::W) };
    a.emit(Insn::to_be(R1, bits))
        .emit(Insn::stx(size, R6, off as i16, R1));
}

/// r1 = the field's value (without storing it).
fn field_value(a: &mut Asm, f: &Field, slot: &mut usize) {
    match f {
        Field::Mac { draw: d, .. } | Field::U16 { draw: d, .. } | Field::U32 { draw: d, .. } => {
            draw(a, d, slot)
        }
        Field::Ipv4Segments { segs, total, .. } => {
            random_below(a, *total);
            let done = a.label();
            for (i, &(lo, hi)) in segs.iter().enumerate() {
                if i + 1 == segs.len() {
                    alu_const(a, op::ADD, R1, u64::from(lo));
                    break;
                }
                let n = u64::from(hi - lo) + 1;
                let next = a.label();
                jmp_const(a, op::JGE, R1, n, next);
                alu_const(a, op::ADD, R1, u64::from(lo));
                a.jmp_imm(op::JA, 0, 0, done);
                a.bind(next);
                alu_const(a, op::SUB, R1, n);
            }
            a.bind(done);
        }
        Field::Ipv6Word { min, max, .. } => {
            a.emit(Insn::call(helper::GET_PRANDOM_U32))
                .emit(Insn::mov32_reg(R1, R0))
                .emit(Insn::alu64_imm(op::OR, R1, i32::from_ne_bytes(*min)))
                .emit(Insn::alu64_imm(op::AND, R1, i32::from_ne_bytes(*max)));
        }
        Field::RandomVid { keep, .. } => {
            a.emit(Insn::call(helper::GET_PRANDOM_U32))
                .emit(Insn::mov64_reg(R1, R0))
                .emit(Insn::alu64_imm(op::AND, R1, i32::from(vlan::VID_MAX)))
                .emit(Insn::alu64_imm(op::OR, R1, i32::from(*keep)));
        }
        Field::RandomMpls { bottom, .. } => {
            let label = mpls::LABEL_MAX & !mpls::BOTTOM_OF_STACK;
            a.emit(Insn::call(helper::GET_PRANDOM_U32))
                .emit(Insn::mov64_reg(R1, R0))
                .emit(Insn::alu64_imm(op::AND, R1, label as i32));
            if *bottom {
                a.emit(Insn::alu64_imm(op::OR, R1, mpls::BOTTOM_OF_STACK as i32));
            }
        }
    }
}

/// Writes r1 (the field's value) into the frame.
fn field_store(a: &mut Asm, f: &Field) {
    match f {
        Field::Mac { off, base, .. } => {
            // Low five bytes: (base + x) mod 2^40; the first byte is base's.
            let low = u64::from_be_bytes([0, 0, 0, base[1], base[2], base[3], base[4], base[5]]);
            alu_const(a, op::ADD, R1, low);
            a.emit(Insn::alu64_imm(op::LSH, R1, 24))
                .emit(Insn::alu64_imm(op::RSH, R1, 24))
                .emit(Insn::mov64_reg(R2, R1))
                .emit(Insn::alu64_imm(op::RSH, R2, 32))
                .emit(Insn::alu64_imm(op::OR, R2, i32::from(base[0]) << 8))
                .emit(Insn::to_be(R2, 16))
                .emit(Insn::stx(op::H, R6, *off as i16, R2));
            store_be(a, off + 2, 4);
        }
        Field::U16 { off, .. } | Field::RandomVid { off, .. } => store_be(a, *off, 2),
        Field::U32 { off, .. }
        | Field::Ipv4Segments { off, .. }
        | Field::RandomMpls { off, .. } => store_be(a, *off, 4),
        // Already in the frame's byte order.
        Field::Ipv6Word { off, .. } => {
            a.emit(Insn::stx(op::W, R6, *off as i16, R1));
        }
    }
}

/// r9 = this packet's flow entry (the flow taken in turn or at random, renewed once it has
/// sent `flowlen` packets — more than `flowlen` when random, the kernel's rule).
fn pick_flow(a: &mut Asm, f: &Flows, flows_fd: i32, abort: Label) {
    let entry = |a: &mut Asm| {
        a.jmp_imm(op::JGE, R1, f.n as i32, abort);
        a.emit(Insn::mov64_reg(R2, R1))
            .emit(Insn::alu64_imm(op::LSH, R2, 3))
            .emit2(Insn::ld_map_value(R9, flows_fd, 0))
            .emit(Insn::alu64_reg(op::ADD, R9, R2));
    };
    let keep = a.label();
    if f.seq {
        a.emit(Insn::ldx(op::W, R1, R7, state::CURFL));
        entry(a);
        a.emit(Insn::ldx(op::W, R2, R9, 4));
        jmp_const(a, op::JLT, R2, u64::from(f.flowlen), keep);
        a.emit(Insn::st_imm(op::DW, R9, 0, 0))
            .emit(Insn::alu64_imm(op::ADD, R1, 1));
        let wrap = a.label();
        a.jmp_imm(op::JNE, R1, f.n as i32, wrap);
        a.emit(Insn::mov64_imm(R1, 0));
        a.bind(wrap);
        a.emit(Insn::stx(op::W, R7, state::CURFL, R1));
        entry(a);
        a.bind(keep);
    } else {
        random_below(a, u64::from(f.n));
        entry(a);
        a.emit(Insn::ldx(op::W, R2, R9, 4));
        jmp_const(a, op::JLE, R2, u64::from(f.flowlen), keep);
        a.emit(Insn::st_imm(op::DW, R9, 0, 0));
        a.bind(keep);
    }
}

/// The flow's destination: drawn (and kept) when the flow is new, else the one it kept;
/// the flow counts the packet.
fn flow_field(a: &mut Asm, fld: &Field, slot: &mut usize) {
    let have = a.label();
    let store = a.label();
    a.emit(Insn::ldx(op::W, R1, R9, 4));
    a.jmp_imm(op::JNE, R1, 0, have);
    field_value(a, fld, slot);
    a.emit(Insn::stx(op::W, R9, 0, R1));
    a.jmp_imm(op::JA, 0, 0, store);
    a.bind(have);
    a.emit(Insn::ldx(op::W, R1, R9, 0));
    a.bind(store);
    a.emit(Insn::ldx(op::W, R2, R9, 4))
        .emit(Insn::alu64_imm(op::ADD, R2, 1))
        .emit(Insn::stx(op::W, R9, 4, R2));
    field_store(a, fld);
}

/// r1 = this packet's frame length, r9 = ctx; shrinks the frame to it; keeps it at r10-8.
fn size(a: &mut Asm, s: &Spec, sz: &Size, slot: &mut usize, abort: Label) {
    match sz {
        Size::Draw(d) => {
            draw(a, d, slot);
            let big = a.label();
            jmp_const(a, op::JGE, R1, s.at.min_frame() as u64, big);
            a.emit(Insn::mov64_imm(R1, s.at.min_frame() as i32));
            a.bind(big);
        }
        Size::Imix(t) => {
            random_below(a, t.len() as u64);
            a.jmp_imm(op::JGE, R1, t.len() as i32, abort);
            a.emit(Insn::alu64_imm(op::LSH, R1, 1))
                .emit(Insn::alu64_reg(op::ADD, R1, R7))
                .emit(Insn::ldx(op::H, R1, R1, s.imix_at() as i16));
        }
    }
    a.emit(Insn::stx(op::DW, R10, -8, R1))
        .emit(Insn::mov64_reg(R2, R1))
        .emit(Insn::alu64_imm(op::SUB, R2, s.max_len as i32))
        .emit(Insn::mov64_reg(R1, R9))
        .emit(Insn::call(helper::XDP_ADJUST_TAIL))
        .jmp_imm(op::JNE, R0, 0, abort);
    a.emit(Insn::mov64_reg(R1, R9))
        .emit(Insn::ldx(op::DW, R2, R7, state::BYTES))
        .emit(Insn::ldx(op::DW, R3, R10, -8))
        .emit(Insn::alu64_reg(op::ADD, R2, R3))
        .emit(Insn::stx(op::DW, R7, state::BYTES, R2));
}

/// The program's verdict, the one place the frame's fate is decided: `bpf_redirect(ifindex,
/// 0)` (XDP_REDIRECT), or XDP_PASS into the ingress device's receive path (netif_receive).
fn verdict_tail(a: &mut Asm, s: &Spec) {
    match s.verdict {
        Verdict::Pass => {
            a.emit(Insn::mov64_imm(R0, XDP_PASS)).emit(Insn::exit());
        }
        Verdict::Redirect => {
            a.emit(Insn::mov64_imm(R1, s.ifindex as i32))
                .emit(Insn::mov64_imm(R2, 0))
                .emit(Insn::call(helper::REDIRECT))
                .emit(Insn::exit());
        }
    }
}

/// The XDP program for `s`, referring to the state map by fd `state_fd` (and, with flows,
/// the flow map by `flows_fd`).
///
/// ```text
///  [size varies]
///   r9 = r1 ; r7 = &state
///   r1 = next length (walk, random, or IMIX table[random % 100]), at least the headers
///   *(u64 *)(r10 - 8) = r1
///   r2 = r1 - max_len ; r1 = r9 ; call bpf_xdp_adjust_tail ; if r0 != 0 goto abort
///   state.bytes += length ; r1 = r9
///   r2 = *(u32 *)(r1 + 4)              ; data_end
///   r6 = *(u32 *)(r1 + 0)              ; data
///   r1 = r6 ; r1 += min_frame
///   if r1 > r2 goto abort              ; shorter than the headers (never: the frame is ours)
///   r7 = &state                        ; ld_imm64, BPF_PSEUDO_MAP_VALUE
///   r8 = *(u64 *)(r7 + FRAMES)         ; k = frames before this one
///   r1 = r8 ; r1 += 1
///   *(u64 *)(r7 + FRAMES) = r1
///  [plain: skip to send]
///  [timestamps]
///   r1 = *(u64 *)(r7 + CLOCK_AT)
///   if r8 < r1 goto stamp
///   r1 = r8 ; r1 += clock_every ; *(u64 *)(r7 + CLOCK_AT) = r1
///   call bpf_ktime_get_ns              ; CLOCK_MONOTONIC
///   r1 = *(u64 *)(r7 + RT_OFFSET) ; r0 += r1     ; CLOCK_REALTIME
///   r0 /= 1000 ; tv_sec = r0 / 1000000 ; tv_usec = r0 - tv_sec * 1000000
///   state.tv_sec = be32 tv_sec ; state.tv_usec = be32 tv_usec
/// stamp:
///   *(u32 *)(r6 + tv_sec) = state.tv_sec ; *(u32 *)(r6 + tv_usec) = state.tv_usec
///  [per field, in order]
///   r1 = min + x                       ; x: the walk's slot (then advanced, wrapping), or
///                                      ; the top half of bpf_get_prandom_u32() * span
///   *(be *)(r6 + off) = r1             ; MACs add the base with carry; flows keep theirs
///  [always]
///   the constant header bytes, stored back as immediates
///   *(u32 *)(r6 + seq) = be32 (k + 1)
///   *(u16 *)(r6 + ip id) = be16 k      ; IPv4
///  [size varies] the IP and UDP lengths from *(u64 *)(r10 - 8)
///   r1 = ip_base + the written IPv4 header words (loaded back) ; fold ; ^= 0xffff ; store
///  [UDPCSUM]
///   r5 = udp_base + the written pseudo-header and segment words ; fold ; ^= 0xffff
///   if r5 == 0: r5 = 0xffff ; store
/// send:
///   r1 = ifindex ; r2 = 0
///   call bpf_redirect                  ; XDP_REDIRECT
///   exit
///  [Verdict::Pass instead: r0 = XDP_PASS ; exit]
/// abort:
///   r0 = XDP_ABORTED ; exit
/// ```
pub fn xdp_program(s: &Spec, state_fd: i32) -> Result<Vec<Insn>, AsmError> {
    xdp_program_with_flows(s, state_fd, -1)
}

/// [`xdp_program`] with the flow map's fd (used when `s.flows` is set).
pub fn xdp_program_with_flows(
    s: &Spec,
    state_fd: i32,
    flows_fd: i32,
) -> Result<Vec<Insn>, AsmError> {
    let at = s.at;
    let mut a = Asm::new();
    let abort = a.label();
    let mut slot = 0usize;
    // The size walk's slot comes after the fields' ([`Spec::seq_walks`]).
    let mut size_slot = s
        .fields
        .iter()
        .filter_map(Field::draw)
        .filter(|d| !d.is_random())
        .count();
    if let Some(sz) = &s.size {
        a.emit(Insn::mov64_reg(R9, R1))
            .emit2(Insn::ld_map_value(R7, state_fd, 0));
        size(&mut a, s, sz, &mut size_slot, abort);
    }
    if !s.plain {
        a.emit(Insn::ldx(op::W, R2, R1, 4))
            .emit(Insn::ldx(op::W, R6, R1, 0))
            .emit(Insn::mov64_reg(R1, R6))
            .emit(Insn::alu64_imm(op::ADD, R1, at.min_frame() as i32))
            .jmp_reg(op::JGT, R1, R2, abort);
    }
    if s.size.is_none() {
        a.emit2(Insn::ld_map_value(R7, state_fd, 0));
    }
    a.emit(Insn::ldx(op::DW, R8, R7, state::FRAMES))
        .emit(Insn::mov64_reg(R1, R8))
        .emit(Insn::alu64_imm(op::ADD, R1, 1))
        .emit(Insn::stx(op::DW, R7, state::FRAMES, R1));
    if !s.plain {
        if s.timestamps {
            let stamp = a.label();
            a.emit(Insn::ldx(op::DW, R1, R7, state::CLOCK_AT))
                .jmp_reg(op::JLT, R8, R1, stamp)
                .emit(Insn::mov64_reg(R1, R8))
                .emit(Insn::alu64_imm(op::ADD, R1, s.clock_every.max(1) as i32))
                .emit(Insn::stx(op::DW, R7, state::CLOCK_AT, R1))
                .emit(Insn::call(helper::KTIME_GET_NS))
                .emit(Insn::ldx(op::DW, R1, R7, state::RT_OFFSET))
                .emit(Insn::alu64_reg(op::ADD, R0, R1))
                .emit(Insn::alu64_imm(op::DIV, R0, 1000))
                .emit(Insn::mov64_reg(R1, R0))
                .emit(Insn::alu64_imm(op::DIV, R1, 1_000_000))
                .emit(Insn::mov64_reg(R2, R1))
                .emit(Insn::alu64_imm(op::MUL, R2, 1_000_000))
                .emit(Insn::alu64_reg(op::SUB, R0, R2))
                .emit(Insn::to_be(R1, 32))
                .emit(Insn::stx(op::W, R7, state::TV_SEC, R1))
                .emit(Insn::to_be(R0, 32))
                .emit(Insn::stx(op::W, R7, state::TV_USEC, R0));
            a.bind(stamp);
            a.emit(Insn::ldx(op::W, R1, R7, state::TV_SEC))
                .emit(Insn::stx(op::W, R6, at.tv_sec() as i16, R1))
                .emit(Insn::ldx(op::W, R2, R7, state::TV_USEC))
                .emit(Insn::stx(op::W, R6, at.tv_usec() as i16, R2));
        }
        if let Some(f) = &s.flows {
            pick_flow(&mut a, f, flows_fd, abort);
        }
        for (i, f) in s.fields.iter().enumerate() {
            if s.flows.is_some_and(|fl| fl.field == i) {
                flow_field(&mut a, f, &mut slot);
            } else {
                field_value(&mut a, f, &mut slot);
                field_store(&mut a, f);
            }
        }
        for &(off, size, v) in &s.restore {
            let size = if size == 4 { op::W } else { op::H };
            a.emit(Insn::st_imm(size, R6, off, v));
        }
        a.emit(Insn::mov64_reg(R1, R8))
            .emit(Insn::alu64_imm(op::ADD, R1, 1))
            .emit(Insn::to_be(R1, 32))
            .emit(Insn::stx(op::W, R6, at.seq() as i16, R1));
        if !at.ipv6 {
            a.emit(Insn::mov64_reg(R1, R8))
                .emit(Insn::to_be(R1, 16))
                .emit(Insn::stx(op::H, R6, at.ip_id() as i16, R1));
        }
        if s.size.is_some() {
            let l3 = if at.ipv6 { at.l4() } else { at.l3 };
            a.emit(Insn::ldx(op::DW, R1, R10, -8))
                .emit(Insn::alu64_imm(op::SUB, R1, l3 as i32));
            store_be(&mut a, at.ip_len(), 2);
            a.emit(Insn::ldx(op::DW, R1, R10, -8)).emit(Insn::alu64_imm(
                op::SUB,
                R1,
                at.l4() as i32,
            ));
            store_be(&mut a, at.udp_len(), 2);
        }
        let (ip_loads, udp_loads) = s.sum_loads();
        let sum = |a: &mut Asm, reg: u8, base: u16, loads: &[Load]| {
            a.emit(Insn::mov64_imm(reg, i32::from(base)));
            for &(off, n) in loads {
                let size = if n == 4 { op::W } else { op::H };
                a.emit(Insn::ldx(size, R2, R6, off as i16))
                    .emit(Insn::alu64_reg(op::ADD, reg, R2));
            }
        };
        if !at.ipv6 {
            sum(&mut a, R1, s.ip_base, &ip_loads);
            fold(&mut a, R1, R2, 3);
            a.emit(Insn::alu64_imm(op::XOR, R1, 0xffff)).emit(Insn::stx(
                op::H,
                R6,
                at.ip_csum() as i16,
                R1,
            ));
        }
        if s.udp_csum {
            let nonzero = a.label();
            sum(&mut a, R5, s.udp_base, &udp_loads);
            fold(&mut a, R5, R2, 4);
            a.emit(Insn::alu64_imm(op::XOR, R5, 0xffff))
                .jmp_imm(op::JNE, R5, 0, nonzero)
                .emit(Insn::mov64_imm(R5, 0xffff));
            a.bind(nonzero);
            a.emit(Insn::stx(op::H, R6, at.udp_csum() as i16, R5));
        }
    }
    verdict_tail(&mut a, s);
    if !s.plain {
        // Only the full program checks the frame's length (the verifier rejects
        // unreachable instructions, so plain mode has no abort path).
        a.bind(abort);
        a.emit(Insn::mov64_imm(R0, XDP_ABORTED)).emit(Insn::exit());
    }
    a.finish()
}

/// The raw tracepoint program on `xdp:xdp_devmap_xmit(from_dev, to_dev, sent, drops, err)`:
/// adds `sent` and `drops` of the calls made by thread `TID` to the driver map.
///
/// ```text
///   r6 = r1                            ; the tracepoint's arguments, as u64s
///   call bpf_get_current_pid_tgid
///   r7 = &driver                       ; ld_imm64, BPF_PSEUDO_MAP_VALUE
///   r1 = *(u32 *)(r7 + TID)
///   w0 = w0                            ; thread id
///   if r0 != r1 goto out
///   r1 = *(u64 *)(r6 + 16) ; w1 = w1 ; lock *(u64 *)(r7 + SENT) += r1
///   r1 = *(u64 *)(r6 + 24) ; w1 = w1 ; lock *(u64 *)(r7 + DROPS) += r1
///   r1 = 1 ; lock *(u64 *)(r7 + CALLS) += r1
///   r1 = *(u64 *)(r6 + 32) ; if r1 == 0 goto out
///   *(u32 *)(r7 + LAST_ERR) = r1
/// out:
///   r0 = 0 ; exit
/// ```
pub fn devmap_xmit_program(driver_fd: i32) -> Result<Vec<Insn>, AsmError> {
    let mut a = Asm::new();
    let out = a.label();
    a.emit(Insn::mov64_reg(R6, R1))
        .emit(Insn::call(helper::GET_CURRENT_PID_TGID))
        .emit2(Insn::ld_map_value(R7, driver_fd, 0))
        .emit(Insn::ldx(op::W, R1, R7, driver::TID))
        .emit(Insn::mov32_reg(R0, R0))
        .jmp_reg(op::JNE, R0, R1, out)
        .emit(Insn::ldx(op::DW, R1, R6, 16))
        .emit(Insn::mov32_reg(R1, R1))
        .emit(Insn::atomic_add64(R7, driver::SENT, R1))
        .emit(Insn::ldx(op::DW, R1, R6, 24))
        .emit(Insn::mov32_reg(R1, R1))
        .emit(Insn::atomic_add64(R7, driver::DROPS, R1))
        .emit(Insn::mov64_imm(R1, 1))
        .emit(Insn::atomic_add64(R7, driver::CALLS, R1))
        .emit(Insn::ldx(op::DW, R1, R6, 32))
        .jmp_imm(op::JEQ, R1, 0, out)
        .emit(Insn::stx(op::W, R7, driver::LAST_ERR, R1));
    a.bind(out);
    a.emit(Insn::mov64_imm(R0, 0)).emit(Insn::exit());
    a.finish()
}

#[cfg(test)]
pub(crate) mod tests;
