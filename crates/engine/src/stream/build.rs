//! The frames of a stream: a template built once, then per packet only what varies.
//!
//! [`StreamFrames::new`] emits the stream's headers through the `wire` `Repr`s into one
//! template at the stream's largest size (the fill after the headers included), with every
//! varying field, length and checksum left at zero, and keeps the one's-complement sums of
//! the constant parts (the IPv4 header's, and the transport checksum's with its
//! pseudo-header). [`StreamFrames::write`] copies the template's first `len` bytes into a
//! buffer (which may hold anything: a ring's slot last used by another stream) and writes
//! the varying fields, the lengths, the signature and the checksums, each checksum from its
//! base plus the sums of the words written (RFC 1071's incremental form: a byte at an odd
//! offset counts as a word's low byte).
//!
//! One template per stream serves every size: what a size changes is three length fields
//! and how much fill the transport checksum covers, and a constant fill sums in O(1). So a
//! stream's memory is its largest frame, whatever its size pattern.

use super::spec::{Fill, Header, Pattern, StreamError, StreamSpec, check_set};
use crate::wire::ethernet;
use crate::wire::signature::Signature;
use crate::wire::{MacAddr, checksum, ip_protocol, ipv4, ipv6, mpls, signature, tcp, udp, vlan};
use std::net::{Ipv4Addr, Ipv6Addr};

/// A varying field inside a slot: its pattern, width and shift in the slot's bytes.
#[derive(Debug, Clone)]
struct Var {
    pattern: Pattern,
    width: u32,
    shift: u32,
}

/// Bytes of the frame that vary: `bytes` big-endian bytes at `off`, the constant bits
/// `konst` (of fields sharing the bytes that do not vary) and the varying fields (the
/// stream's `vars[vars.0..vars.1]`: every slot's in one array, so a frame's write reads
/// few cache lines when many streams take turns).
#[derive(Debug, Clone)]
struct Slot {
    konst: u128,
    off: u16,
    bytes: u8,
    /// Inside the IPv4 header: its checksum covers the slot.
    ip: bool,
    /// Covered by the transport checksum (its header, or an address in the pseudo-header).
    l4: bool,
    vars: (u16, u16),
}

/// A slot while the template is built: its varying fields in a list of its own.
struct Building {
    off: usize,
    bytes: usize,
    vars: Vec<Var>,
    ip: bool,
    l4: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ip {
    None,
    V4(usize),
    V6(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum L4 {
    None,
    /// Offset, and whether the checksum is computed.
    Udp(usize, bool),
    Tcp(usize),
}

/// One stream's frames.
#[derive(Debug, Clone)]
pub struct StreamFrames {
    id: u16,
    template: Box<[u8]>,
    slots: Box<[Slot]>,
    vars: Box<[Var]>,
    ip: Ip,
    l4: L4,
    ip_base: u32,
    l4_base: u32,
    /// Where the fill starts (the end of the headers and the raw payload).
    fill_start: usize,
    fill: u8,
    min_len: usize,
}

/// The constant value of a pattern, or 0 when it varies (its bits are written per packet).
fn konst(p: &Pattern) -> u128 {
    p.constant().unwrap_or(0)
}

fn mac(v: u128) -> MacAddr {
    let b = v.to_be_bytes();
    let mut m = [0u8; 6];
    m.copy_from_slice(&b[10..]);
    MacAddr(m)
}

/// The sum of `v` as `n` big-endian bytes placed at frame offset `off`.
#[inline]
fn sum_at(v: u128, n: usize, off: usize) -> u32 {
    let b = v.to_be_bytes();
    odd(checksum::sum(&b[16 - n..]), off)
}

/// A sum of bytes that start at an odd offset counts byte-swapped.
#[inline]
fn odd(s: u32, off: usize) -> u32 {
    if off & 1 == 0 {
        return s;
    }
    let s = checksum::add(s, 0);
    ((s & 0xff) << 8) | (s >> 8)
}

/// The sum of `n` bytes of value `c` starting at offset `at` (n below 2^16: a frame's).
#[inline]
fn fill_sum(c: u8, at: usize, n: usize) -> u32 {
    let (hi, lo) = if at & 1 == 0 {
        (n.div_ceil(2), n / 2)
    } else {
        (n / 2, n.div_ceil(2))
    };
    let s = (hi as u64) * (u64::from(c) << 8) + (lo as u64) * u64::from(c);
    checksum::add(checksum::add(0, (s >> 32) as u32), s as u32)
}

impl StreamFrames {
    /// The frames of stream `id` (its signature id, the index in the run's list), built
    /// from a spec that [`StreamSpec::check`] accepts (it is checked again here).
    pub fn new(id: u16, spec: &StreamSpec) -> Result<StreamFrames, StreamError> {
        spec.check()?;
        let (min_len, max_len) = spec.size.bounds();
        let fill = match spec.fill {
            Fill::Zeros => 0,
            Fill::Byte(b) => b,
        };
        let mut t = vec![fill; max_len];
        let hs = &spec.headers;
        // Where each header starts.
        let offs: Vec<usize> = hs
            .iter()
            .scan(0, |o, h| {
                let at = *o;
                *o += h.len();
                Some(at)
            })
            .collect();
        let fill_start = spec.headers_len();
        let Header::Ethernet(eth) = &hs[0] else {
            unreachable!("checked: ethernet first")
        };
        // The EtherType after the tags: the user's, or worked out from what follows.
        let payload_type = match &eth.ethertype {
            Some(p) => p.clone(),
            None => Pattern::Value(u128::from(spec.payload_ethertype().unwrap_or(0))),
        };
        // Its field: in the last VLAN tag, or in the Ethernet header.
        let last_tag = hs.iter().rposition(|h| matches!(h, Header::Vlan(_)));
        let payload_type_at = match last_tag {
            Some(i) => offs[i] + vlan::field::ETHERTYPE.start,
            None => ethernet::field::ETHERTYPE.start,
        };
        // What announces header i + 1 in the header i's EtherType field.
        let next_type = |i: usize| match hs.get(i + 1) {
            Some(Header::Vlan(v)) => v.tpid,
            _ => konst(&payload_type) as u16,
        };
        let mut ip = Ip::None;
        let mut l4 = L4::None;
        let mut protocol = 0u8;
        let mut resolved: Vec<Header> = Vec::with_capacity(hs.len());
        for (i, h) in hs.iter().enumerate() {
            let at = offs[i];
            let b = &mut t[at..];
            let mut h = h.clone();
            match &mut h {
                Header::Ethernet(e) => {
                    ethernet::Repr {
                        dst_addr: mac(konst(&e.dst)),
                        src_addr: mac(konst(&e.src)),
                        ethertype: next_type(i),
                    }
                    .emit(&mut ethernet::Packet::new_unchecked(b));
                    // Placed below, where it lands.
                    e.ethertype = None;
                }
                Header::Vlan(v) => vlan::Repr {
                    pcp: konst(&v.pcp) as u8,
                    dei: konst(&v.dei) != 0,
                    vid: konst(&v.vid) as u16,
                    ethertype: next_type(i),
                }
                .emit(&mut vlan::Packet::new_unchecked(b)),
                Header::Mpls(m) => {
                    let bottom = !matches!(hs.get(i + 1), Some(Header::Mpls(_)));
                    let bos = m
                        .bottom_of_stack
                        .get_or_insert(Pattern::Value(u128::from(bottom)));
                    mpls::Repr {
                        label: konst(&m.label) as u32,
                        traffic_class: konst(&m.traffic_class) as u8,
                        bottom_of_stack: konst(bos) != 0,
                        ttl: konst(&m.ttl) as u8,
                    }
                    .emit(&mut mpls::Packet::new_unchecked(b));
                }
                Header::Ipv4(h4) => {
                    let p = h4.protocol.get_or_insert(proto_of(hs.get(i + 1)));
                    protocol = konst(p) as u8;
                    let tos = h4.tos_value();
                    let mut p = ipv4::Packet::new_unchecked(b);
                    ipv4::Repr {
                        src_addr: Ipv4Addr::from(konst(&h4.src) as u32),
                        dst_addr: Ipv4Addr::from(konst(&h4.dst) as u32),
                        protocol,
                        tos,
                        ident: konst(&h4.ident) as u16,
                        dont_frag: h4.dont_fragment,
                        more_frags: false,
                        frag_offset: 0,
                        ttl: konst(&h4.ttl) as u8,
                        payload_len: max_len - at - ipv4::HEADER_LEN,
                    }
                    .emit(&mut p);
                    p.set_total_len(0);
                    p.set_checksum(0);
                    ip = Ip::V4(at);
                }
                Header::Ipv6(h6) => {
                    let p = h6.next_header.get_or_insert(proto_of(hs.get(i + 1)));
                    protocol = konst(p) as u8;
                    let mut p = ipv6::Packet::new_unchecked(b);
                    ipv6::Repr {
                        src_addr: Ipv6Addr::from(konst(&h6.src)),
                        dst_addr: Ipv6Addr::from(konst(&h6.dst)),
                        next_header: protocol,
                        hop_limit: konst(&h6.hop_limit) as u8,
                        traffic_class: konst(&h6.traffic_class) as u8,
                        flow_label: konst(&h6.flow_label) as u32,
                        payload_len: 0,
                    }
                    .emit(&mut p);
                    ip = Ip::V6(at);
                }
                Header::Udp(u) => {
                    let mut p = udp::Packet::new_unchecked(b);
                    udp::Repr {
                        src_port: konst(&u.src_port) as u16,
                        dst_port: konst(&u.dst_port) as u16,
                        payload_len: 0,
                    }
                    .emit(&mut p);
                    p.set_len(0);
                    l4 = L4::Udp(at, u.checksum);
                }
                Header::Tcp(tc) => {
                    tcp::Repr {
                        src_port: konst(&tc.src_port) as u16,
                        dst_port: konst(&tc.dst_port) as u16,
                        seq_number: konst(&tc.seq) as u32,
                        ack_number: konst(&tc.ack) as u32,
                        flags: konst(&tc.flags) as u8,
                        window: konst(&tc.window) as u16,
                        urgent: 0,
                    }
                    .emit(&mut tcp::Packet::new_unchecked(b));
                    l4 = L4::Tcp(at);
                }
                Header::Raw(r) => b[..r.len()].copy_from_slice(r),
            }
            resolved.push(h);
        }
        let l4_csum = match l4 {
            L4::Udp(_, on) => on,
            L4::Tcp(_) => true,
            L4::None => false,
        };
        // The varying fields, grouped by the bytes they share.
        let mut slots: Vec<Building> = Vec::new();
        let mut place = |at: usize, bytes: usize, var: Var, ip_hdr: bool, pseudo: bool| {
            let i = match slots.iter().position(|s| s.off == at) {
                Some(i) => i,
                None => {
                    let l4_hdr = match l4 {
                        L4::Udp(o, _) | L4::Tcp(o) => at >= o,
                        L4::None => false,
                    };
                    slots.push(Building {
                        off: at,
                        bytes,
                        vars: Vec::new(),
                        ip: ip_hdr,
                        l4: l4_csum && (l4_hdr || pseudo),
                    });
                    slots.len() - 1
                }
            };
            debug_assert_eq!(slots[i].bytes, bytes, "fields sharing bytes agree on them");
            slots[i].vars.push(var);
        };
        if payload_type.constant().is_none() {
            let var = Var {
                pattern: payload_type.clone(),
                width: 16,
                shift: 0,
            };
            place(payload_type_at, 2, var, false, false);
        }
        for (i, h) in resolved.iter().enumerate() {
            let (ip_hdr, addrs) = match h {
                Header::Ipv4(_) => (true, ipv4::field::SRC_ADDR.start..ipv4::HEADER_LEN),
                Header::Ipv6(_) => (false, ipv6::field::SRC_ADDR.start..ipv6::HEADER_LEN),
                _ => (false, 0..0),
            };
            for f in h.fields() {
                if f.pattern.constant().is_some() {
                    continue;
                }
                let var = Var {
                    pattern: f.pattern.clone(),
                    width: f.width,
                    shift: f.shift,
                };
                let pseudo = addrs.contains(&f.at);
                place(offs[i] + f.at, f.bytes, var, ip_hdr, pseudo);
            }
        }
        // A frame is at most MAX_FRAME_LEN (16,384) bytes and a slot at most 16 bytes wide
        // (the stream's checks), so offsets fit in 16 bits and widths in 8.
        let mut vars = Vec::new();
        let slots: Vec<Slot> = slots
            .into_iter()
            .map(|b| {
                let mut k = [0u8; 16];
                k[16 - b.bytes..].copy_from_slice(&t[b.off..b.off + b.bytes]);
                let first = vars.len() as u16;
                vars.extend(b.vars);
                Slot {
                    konst: u128::from_be_bytes(k),
                    off: b.off as u16,
                    bytes: b.bytes as u8,
                    ip: b.ip,
                    l4: b.l4,
                    vars: (first, vars.len() as u16),
                }
            })
            .collect();
        let ip_base = match ip {
            Ip::V4(o) => checksum::sum(&t[o..o + ipv4::HEADER_LEN]),
            _ => 0,
        };
        let l4_base = match (l4, ip) {
            (L4::Udp(o, _) | L4::Tcp(o), Ip::V4(a) | Ip::V6(a)) if l4_csum => {
                let addrs = match ip {
                    Ip::V4(_) => a + ipv4::field::SRC_ADDR.start..a + ipv4::HEADER_LEN,
                    _ => a + ipv6::field::SRC_ADDR.start..a + ipv6::HEADER_LEN,
                };
                let s = checksum::add(checksum::sum(&t[addrs]), u32::from(protocol));
                checksum::add(s, checksum::sum(&t[o..fill_start]))
            }
            _ => 0,
        };
        Ok(StreamFrames {
            id,
            template: t.into_boxed_slice(),
            slots: slots.into_boxed_slice(),
            vars: vars.into_boxed_slice(),
            ip,
            l4,
            ip_base,
            l4_base,
            fill_start,
            fill,
            min_len,
        })
    }

    /// The stream's signature id.
    pub fn id(&self) -> u16 {
        self.id
    }

    /// The largest frame this stream sends.
    pub fn max_len(&self) -> usize {
        self.template.len()
    }

    /// The smallest frame this stream sends.
    pub fn min_len(&self) -> usize {
        self.min_len
    }

    /// The checksum that covers the signature (so a send time written later must correct
    /// it): its field's offset in the frame, and whether it is UDP's (a computed 0 is sent
    /// as 0xffff); None when no checksum covers it.
    pub fn signature_checksum(&self) -> Option<(usize, bool)> {
        match self.l4 {
            L4::Udp(o, true) => Some((o + udp::field::CHECKSUM.start, true)),
            L4::Tcp(o) => Some((o + tcp::field::CHECKSUM.start, false)),
            _ => None,
        }
    }

    /// The template: the constant bytes of the largest frame (varying fields, lengths and
    /// checksums zero), for prefilling buffers.
    pub fn template(&self) -> &[u8] {
        &self.template
    }

    /// Reads the first bytes of what [`StreamFrames::write`] reads (its template, varying
    /// fields), so that a write soon after finds them in the cache: a sender of many streams
    /// calls it a few frames ahead.
    #[inline]
    pub fn touch(&self) {
        std::hint::black_box(self.template.first());
        std::hint::black_box(self.slots.first());
        std::hint::black_box(self.vars.first());
    }

    /// Writes the stream's frame `seq` (its packet index; the signature carries it modulo
    /// 2^32), `len` bytes long (one of the stream's sizes, as the timeline hands it out),
    /// sent at `tx_ns`, into `buf[..len]`.
    ///
    /// # Panics
    /// If `len` is outside the stream's sizes or `buf` is shorter: the timeline hands out
    /// only the stream's own sizes, and the sender's buffers hold the largest frame.
    #[inline]
    pub fn write(&self, seq: u64, len: usize, tx_ns: u64, buf: &mut [u8]) {
        assert!(
            (self.min_len..=self.template.len()).contains(&len),
            "frame length {len} outside the stream's sizes"
        );
        let f = &mut buf[..len];
        f.copy_from_slice(&self.template[..len]);
        let (mut ip, mut l4) = (self.ip_base, self.l4_base);
        for s in self.slots.iter() {
            let mut v = 0u128;
            for x in &self.vars[usize::from(s.vars.0)..usize::from(s.vars.1)] {
                v |= x.pattern.at(seq, x.width) << x.shift;
            }
            let (off, bytes) = (usize::from(s.off), usize::from(s.bytes));
            let b = (s.konst | v).to_be_bytes();
            f[off..off + bytes].copy_from_slice(&b[16 - bytes..]);
            if s.ip || s.l4 {
                let c = sum_at(v, bytes, off);
                if s.ip {
                    ip = checksum::add(ip, c);
                }
                if s.l4 {
                    l4 = checksum::add(l4, c);
                }
            }
        }
        let sig_at = len - signature::LEN;
        Signature {
            stream: self.id,
            seq: seq as u32,
            tx_ns,
        }
        .emit(f);
        match self.ip {
            Ip::V4(o) => {
                let total = (len - o) as u16;
                let mut p = ipv4::Packet::new_unchecked(&mut f[o..]);
                p.set_total_len(total);
                p.set_checksum(checksum::finish(checksum::add(ip, u32::from(total))));
            }
            Ip::V6(o) => {
                let plen = (len - o - ipv6::HEADER_LEN) as u16;
                ipv6::Packet::new_unchecked(&mut f[o..]).set_payload_len(plen);
            }
            Ip::None => {}
        }
        let covered = |l4: u32| {
            let l4 = checksum::add(l4, odd(checksum::sum(&f[sig_at..]), sig_at));
            checksum::add(
                l4,
                fill_sum(self.fill, self.fill_start, sig_at - self.fill_start),
            )
        };
        match self.l4 {
            L4::Udp(o, on) => {
                let ulen = (len - o) as u16;
                let l4 = if on {
                    // The length counts twice: in the pseudo-header and in the header.
                    checksum::add(covered(l4), 2 * u32::from(ulen))
                } else {
                    0
                };
                let mut p = udp::Packet::new_unchecked(&mut f[o..]);
                p.set_len(ulen);
                if on {
                    p.set_checksum(checksum::finish_udp(l4));
                }
            }
            L4::Tcp(o) => {
                let tlen = (len - o) as u16;
                let l4 = checksum::add(covered(l4), u32::from(tlen));
                tcp::Packet::new_unchecked(&mut f[o..]).set_checksum(checksum::finish(l4));
            }
            L4::None => {}
        }
    }
}

/// IP's protocol for the header after it: UDP or TCP (the check refused anything else
/// without an explicit protocol).
fn proto_of(next: Option<&Header>) -> Pattern {
    Pattern::Value(u128::from(match next {
        Some(Header::Tcp(_)) => ip_protocol::TCP,
        _ => ip_protocol::UDP,
    }))
}

impl super::spec::Ipv4Spec {
    /// The constant bits of the TOS byte (varying parts 0).
    fn tos_value(&self) -> u8 {
        match &self.tos {
            super::spec::Tos::Byte(p) => konst(p) as u8,
            super::spec::Tos::DscpEcn { dscp, ecn } => {
                ((konst(dscp) as u8) << 2) | (konst(ecn) as u8 & 3)
            }
        }
    }
}

/// The frames of a run's streams, stream `i` with signature id `i`; checks the set first
/// (at most `MAX_STREAMS`, distinct names).
pub fn build_all(streams: &[StreamSpec]) -> Result<Vec<StreamFrames>, StreamError> {
    let ids: Vec<u16> = (0..streams.len()).map(|i| i as u16).collect();
    build_signed(streams, &ids)
}

/// The frames of a run's streams, stream `i` with signature id `ids[i]` (a port's share of
/// a config's flows keeps each flow's index in the config, so ids stay unique across
/// ports); checks the set first, as [`build_all`], and that there is one id per stream.
pub fn build_signed(streams: &[StreamSpec], ids: &[u16]) -> Result<Vec<StreamFrames>, StreamError> {
    check_set(streams)?;
    if ids.len() != streams.len() {
        return Err(StreamError {
            stream: streams.first().map_or(String::new(), |s| s.name.clone()),
            what: format!("{} signature ids for {} streams", ids.len(), streams.len()),
        });
    }
    streams
        .iter()
        .zip(ids)
        .map(|(s, &id)| StreamFrames::new(id, s))
        .collect()
}

#[cfg(test)]
mod tests;
