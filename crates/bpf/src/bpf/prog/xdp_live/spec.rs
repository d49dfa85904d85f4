//! What the XDP program is built from: the frame's offsets, the fields that vary and how
//! ([`Spec`]), and the bytes it restores on every run.

use super::*;

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

    pub(super) fn draw(&self) -> Option<&Draw> {
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

    pub(super) fn ip_id(&self) -> usize {
        self.l3 + ipv4::field::IDENT.start
    }

    pub(super) fn ip_csum(&self) -> usize {
        self.l3 + ipv4::field::CHECKSUM.start
    }

    pub(super) fn udp_csum(&self) -> usize {
        self.l4() + udp::field::CHECKSUM.start
    }

    pub(super) fn udp_len(&self) -> usize {
        self.l4() + udp::field::LENGTH.start
    }

    /// The IP length field: IPv4's total length or IPv6's payload length.
    pub(super) fn ip_len(&self) -> usize {
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
pub(super) type Load = (usize, u8);

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
    pub(super) fn sum_loads(&self) -> (Vec<Load>, Vec<Load>) {
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

    pub(super) fn imix_at(&self) -> usize {
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
