//! The per-packet walk of pktgen's fields, with the kernel's rules, and the frame writer.
//!
//! Rules kept from the kernel (each has a unit test):
//! - every field is advanced *before* the packet is built, starting from the range's minimum,
//!   so a sequential walk's first packet carries min + 1;
//! - UDP ports: `[min, max)`, half-open; sequential wraps to min when it reaches max; random
//!   draws from `[min, max - 1]`; `max <= min` keeps the port at min;
//! - IPv4 source and destination: sequential walks `[min, max]` *inclusive*, random draws from
//!   `[min, max - 1]` (the kernel's asymmetry); random destinations skip 0/8, 127/8,
//!   224/4 and 255.255.255.255; unset `max` (or max <= min) keeps min;
//! - frame size: `min_pkt_size..max_pkt_size` sequential inclusive, TXSIZE_RND `[min, max-1]`;
//!   otherwise IMIX draws a slot of the 100-slot table;
//! - MACs: `*_mac_count > 1` adds an offset (0, 1, ..., count-1, sequential or MAC*_RND) to the
//!   low five bytes with carry; the first byte never changes;
//! - flows: with `flows N`, each flow keeps the destination it drew until it has sent
//!   `flowlen` packets; FLOW_SEQ walks the flows in turn, otherwise a random flow is picked per
//!   packet (and a flow is renewed after more than flowlen packets — the kernel's `>`);
//! - IPv6: `dst6_min`/`dst6_max` draw every 32-bit word as (random | min) & max;
//! - MPLS_RND re-draws the low 20 bits of the labels given with the bottom-of-stack bit,
//!   keeping that bit; VID_RND/SVID_RND draw 0..4095;
//! - queue map: QUEUE_MAP_CPU uses the sending CPU, otherwise `[min, max]` inclusive,
//!   sequential or QUEUE_MAP_RND, then modulo the device's TX queues;
//! - the IPv4 id starts at 0 and the sequence number at 1, both +1 per packet.

use super::{
    DevConfig, Flag, IMIX_PRECISION, MPLS_STACK_BOTTOM, NO_VLAN, StartError, imix_distribution,
};
use crate::wire::ethernet::{self, ethertype};
use crate::wire::{MacAddr, PKTGEN_TTL, ip_protocol, ipv4, ipv6, mpls, pktgen_hdr, udp, vlan};
use std::net::{Ipv4Addr, Ipv6Addr};

pub use crate::rng::Rng;

/// What is resolved from the device when a run starts (the kernel's setup_inject).
#[derive(Debug, Clone)]
pub struct DeviceInfo {
    /// The device's MAC, used when src_mac is all zeros.
    pub mac: MacAddr,
    /// The device's first IPv4 address, used when src_min is unset.
    pub ipv4: Option<Ipv4Addr>,
    /// Real TX queues (>= 1).
    pub tx_queues: u16,
}

/// Address blocks a random destination may take: the kernel redraws 0/8, 127/8, 224/4 and
/// 255.255.255.255 until it gets something else, i.e. draws uniformly from the rest.
const ALLOWED_DST: [(u32, u32); 3] = [
    (0x0100_0000, 0x7eff_ffff),
    (0x8000_0000, 0xdfff_ffff),
    (0xf000_0000, 0xffff_fffe),
];

/// The parts of `[lo, hi]` a random destination may take, and how many addresses they hold.
/// Drawing an index into them is the kernel's redraw loop without its cost (a range that is
/// mostly 127/8 would loop millions of times per packet).
fn allowed_dst_segments(lo: u32, hi: u32) -> (Vec<(u32, u32)>, u64) {
    let segs: Vec<(u32, u32)> = ALLOWED_DST
        .iter()
        .filter(|&&(a, b)| lo <= b && hi >= a)
        .map(|&(a, b)| (lo.max(a), hi.min(b)))
        .collect();
    let total = segs.iter().map(|&(a, b)| u64::from(b - a) + 1).sum();
    (segs, total)
}

#[derive(Debug, Clone, Copy, Default)]
pub struct FlowState {
    daddr: u32,
    count: u32,
    seen: bool,
}

/// The fields of the packet being built and the walk's state (pktgen's `cur_*`).
#[derive(Debug, Clone)]
///
/// The walk's parameters are visible in the crate: the xdp_live backend compiles the same
/// walk into its XDP program.
pub struct Generator {
    pub flags: u32,
    rng: Rng,
    // constant
    pub src_mac_base: [u8; 6],
    pub dst_mac_base: [u8; 6],
    pub src_mac_count: u32,
    pub dst_mac_count: u32,
    pub udp_src: (u16, u16),
    pub udp_dst: (u16, u16),
    pub saddr: (u32, u32),
    pub daddr: (u32, u32),
    pub dst_rnd: (Vec<(u32, u32)>, u64),
    pub dst6_range: Option<(Ipv6Addr, Ipv6Addr)>,
    pub size: (u32, u32),
    pub imix_sizes: Vec<u32>,
    pub imix_table: [u8; IMIX_PRECISION],
    pub vlan_on: bool,
    pub svlan_on: bool,
    pub mpls_rnd_mask: Vec<bool>,
    queue_map: (u16, u16),
    tx_queues: u16,
    pub flowlen: u32,
    // current
    pub src_mac: [u8; 6],
    pub dst_mac: [u8; 6],
    pub cur_src_mac_offset: u32,
    pub cur_dst_mac_offset: u32,
    pub cur_saddr: u32,
    pub cur_daddr: u32,
    pub cur_saddr6: Ipv6Addr,
    pub cur_daddr6: Ipv6Addr,
    pub cur_udp_src: u16,
    pub cur_udp_dst: u16,
    pub cur_pkt_size: u32,
    pub cur_queue_map: u16,
    pub vlan_id: u16,
    pub svlan_id: u16,
    pub mpls: Vec<u32>,
    pub ip_id: u16,
    pub seq: u32,
    pub flows: Vec<FlowState>,
    curfl: usize,
    /// Distinct flow destinations drawn (pktgen's `nflows`).
    pub nflows: u32,
    /// Frames drawn per IMIX entry.
    pub imix_counts: Vec<u64>,
    /// Bytes of all frames drawn (for the IMIX bps arithmetic).
    pub bytes: u64,
}

fn v4(s: &str) -> u32 {
    s.parse::<Ipv4Addr>().map_or(0, u32::from)
}

/// A link-local IPv6 address made from a MAC (modified EUI-64), the source of IPv6 frames
/// when `src6` is unset.
pub fn link_local_from_mac(m: MacAddr) -> Ipv6Addr {
    let b = m.0;
    Ipv6Addr::from([
        0xfe,
        0x80,
        0,
        0,
        0,
        0,
        0,
        0,
        b[0] ^ 2,
        b[1],
        b[2],
        0xff,
        0xfe,
        b[3],
        b[4],
        b[5],
    ])
}

impl Generator {
    /// Starts a walk (the kernel's setup_inject): current values at the ranges' minimums.
    pub fn new(c: &DevConfig, dev: &DeviceInfo, seed: u64) -> Result<Self, StartError> {
        c.check_start()?;
        let src_mac_base = if c.src_mac == MacAddr::default() {
            dev.mac.0
        } else {
            c.src_mac.0
        };
        let (saddr_min, saddr_max) = if c.src_min.is_empty() {
            let a = dev.ipv4.map_or(0, u32::from);
            (a, a)
        } else {
            (v4(&c.src_min), v4(&c.src_max))
        };
        let (daddr_min, daddr_max) = (v4(&c.dst_min), v4(&c.dst_max));
        let v6 = c.has(Flag::Ipv6);
        // On a loopback device the frames come back into this host: as in the kernel, no
        // destination is needed (dst_min unset reads as 0.0.0.0).
        if !v6 && c.dst_min.is_empty() && !c.loopback {
            return Err(StartError::NoDestination);
        }
        let dst_rnd = if !v6 && c.has(Flag::IpdstRnd) && daddr_min < daddr_max {
            allowed_dst_segments(daddr_min, daddr_max - 1)
        } else {
            (Vec::new(), 0)
        };
        if !v6 && c.has(Flag::IpdstRnd) && daddr_min < daddr_max && dst_rnd.1 == 0 {
            {
                return Err(StartError::NoRandomDestination {
                    min: Ipv4Addr::from(daddr_min),
                    max: Ipv4Addr::from(daddr_max),
                });
            }
        }
        let dst6_range = (!c.dst6_min.is_unspecified()).then_some((c.dst6_min, c.dst6_max));
        let (min_size, max_size) = c.size_bounds();
        let flows = vec![FlowState::default(); c.flows as usize];
        Ok(Generator {
            flags: c.flags,
            rng: Rng::new(seed),
            src_mac_base,
            dst_mac_base: c.dst_mac.0,
            src_mac_count: c.src_mac_count,
            dst_mac_count: c.dst_mac_count,
            udp_src: (c.udp_src_min, c.udp_src_max),
            udp_dst: (c.udp_dst_min, c.udp_dst_max),
            saddr: (saddr_min, saddr_max),
            daddr: (daddr_min, daddr_max),
            dst_rnd,
            dst6_range,
            size: (min_size, max_size),
            imix_sizes: c.imix.iter().map(|e| e.size).collect(),
            imix_table: imix_distribution(&c.imix),
            vlan_on: c.vlan_id != NO_VLAN,
            svlan_on: c.vlan_id != NO_VLAN && c.svlan_id != NO_VLAN,
            mpls_rnd_mask: c.mpls.iter().map(|l| l & MPLS_STACK_BOTTOM != 0).collect(),
            queue_map: (c.queue_map_min, c.queue_map_max),
            tx_queues: dev.tx_queues.max(1),
            flowlen: c.flowlen,
            src_mac: src_mac_base,
            dst_mac: c.dst_mac.0,
            cur_src_mac_offset: 0,
            cur_dst_mac_offset: 0,
            cur_saddr: saddr_min,
            cur_daddr: daddr_min,
            cur_saddr6: if c.src6.is_unspecified() {
                link_local_from_mac(MacAddr(src_mac_base))
            } else {
                c.src6
            },
            cur_daddr6: if c.dst6_min.is_unspecified() {
                c.dst6
            } else {
                c.dst6_min
            },
            cur_udp_src: c.udp_src_min,
            cur_udp_dst: c.udp_dst_min,
            cur_pkt_size: min_size,
            cur_queue_map: 0,
            vlan_id: c.vlan_id,
            svlan_id: c.svlan_id,
            mpls: c.mpls.clone(),
            ip_id: 0,
            seq: 1,
            flows,
            curfl: 0,
            nflows: 0,
            imix_counts: vec![0; c.imix.len()],
            bytes: 0,
        })
    }

    pub fn has(&self, f: Flag) -> bool {
        self.flags & f.bit() != 0
    }

    pub fn ipv6(&self) -> bool {
        self.has(Flag::Ipv6)
    }

    /// Whether any field is drawn at random (the walk is then seed-dependent).
    pub fn uses_random(&self) -> bool {
        super::RANDOM_FLAGS.iter().any(|&f| self.has(f))
            || !self.imix_sizes.is_empty()
            || self.dst6_range.is_some()
            || (!self.flows.is_empty() && !self.has(Flag::FlowSeq))
    }

    fn pick_flow(&mut self) -> usize {
        let n = self.flows.len();
        if self.has(Flag::FlowSeq) {
            let f = &mut self.flows[self.curfl];
            if f.count >= self.flowlen {
                *f = FlowState::default();
                self.curfl = (self.curfl + 1) % n;
            }
        } else {
            self.curfl = self.rng.below(n as u32) as usize;
            let f = &mut self.flows[self.curfl];
            if f.count > self.flowlen {
                *f = FlowState::default();
            }
        }
        self.curfl
    }

    fn mac_with_offset(base: &[u8; 6], mc: u32, out: &mut [u8; 6]) {
        let mut tmp = u32::from(base[5]) + (mc & 0xff);
        out[5] = tmp as u8;
        tmp = u32::from(base[4]) + ((mc >> 8) & 0xff) + (tmp >> 8);
        out[4] = tmp as u8;
        tmp = u32::from(base[3]) + ((mc >> 16) & 0xff) + (tmp >> 8);
        out[3] = tmp as u8;
        tmp = u32::from(base[2]) + ((mc >> 24) & 0xff) + (tmp >> 8);
        out[2] = tmp as u8;
        tmp = u32::from(base[1]) + (tmp >> 8);
        out[1] = tmp as u8;
    }

    /// Advances every field to the next packet's values (the kernel's mod_cur_headers);
    /// `cpu` is the sending CPU (for QUEUE_MAP_CPU).
    pub fn advance(&mut self, cpu: u16) {
        let flow = if self.flows.is_empty() {
            None
        } else {
            Some(self.pick_flow())
        };
        if self.src_mac_count > 1 {
            let mc = if self.has(Flag::MacsrcRnd) {
                self.rng.below(self.src_mac_count)
            } else {
                let mc = self.cur_src_mac_offset;
                self.cur_src_mac_offset += 1;
                if self.cur_src_mac_offset >= self.src_mac_count {
                    self.cur_src_mac_offset = 0;
                }
                mc
            };
            Self::mac_with_offset(&self.src_mac_base, mc, &mut self.src_mac);
        }
        if self.dst_mac_count > 1 {
            let mc = if self.has(Flag::MacdstRnd) {
                self.rng.below(self.dst_mac_count)
            } else {
                let mc = self.cur_dst_mac_offset;
                self.cur_dst_mac_offset += 1;
                if self.cur_dst_mac_offset >= self.dst_mac_count {
                    self.cur_dst_mac_offset = 0;
                }
                mc
            };
            Self::mac_with_offset(&self.dst_mac_base, mc, &mut self.dst_mac);
        }
        if self.has(Flag::MplsRnd) {
            for (l, &rnd) in self.mpls.iter_mut().zip(&self.mpls_rnd_mask) {
                if rnd {
                    *l = MPLS_STACK_BOTTOM | (self.rng.next_u32() & 0x000f_ffff);
                }
            }
        }
        if self.vlan_on && self.has(Flag::VidRnd) {
            self.vlan_id = self.rng.below(4096) as u16;
        }
        if self.svlan_on && self.has(Flag::SvidRnd) {
            self.svlan_id = self.rng.below(4096) as u16;
        }
        let (lo, hi) = self.udp_src;
        if lo < hi {
            self.cur_udp_src = if self.has(Flag::UdpsrcRnd) {
                self.rng.inclusive(u32::from(lo), u32::from(hi) - 1) as u16
            } else if self.cur_udp_src.wrapping_add(1) >= hi || self.cur_udp_src == u16::MAX {
                lo
            } else {
                self.cur_udp_src + 1
            };
        }
        let (lo, hi) = self.udp_dst;
        if lo < hi {
            self.cur_udp_dst = if self.has(Flag::UdpdstRnd) {
                self.rng.inclusive(u32::from(lo), u32::from(hi) - 1) as u16
            } else if self.cur_udp_dst.wrapping_add(1) >= hi || self.cur_udp_dst == u16::MAX {
                lo
            } else {
                self.cur_udp_dst + 1
            };
        }
        if !self.ipv6() {
            let (imn, imx) = self.saddr;
            if imn < imx {
                self.cur_saddr = if self.has(Flag::IpsrcRnd) {
                    self.rng.inclusive(imn, imx - 1)
                } else {
                    let t = self.cur_saddr.wrapping_add(1);
                    if t > imx || t == 0 { imn } else { t }
                };
            }
            match flow {
                Some(f) if self.flows[f].seen => self.cur_daddr = self.flows[f].daddr,
                _ => {
                    let (imn, imx) = self.daddr;
                    if imn < imx {
                        self.cur_daddr = if self.has(Flag::IpdstRnd) {
                            let (segs, total) = &self.dst_rnd;
                            let mut k = ((u128::from(self.rng.next_u64()) * u128::from(*total))
                                >> 64) as u64;
                            let mut addr = segs[0].0;
                            for &(a, b) in segs {
                                let n = u64::from(b - a) + 1;
                                if k < n {
                                    addr = a + k as u32;
                                    break;
                                }
                                k -= n;
                            }
                            addr
                        } else {
                            let t = self.cur_daddr.wrapping_add(1);
                            if t > imx || t == 0 { imn } else { t }
                        };
                    }
                    if let Some(f) = flow {
                        self.flows[f].seen = true;
                        self.flows[f].daddr = self.cur_daddr;
                        self.nflows += 1;
                    }
                }
            }
        } else if let Some((min, max)) = self.dst6_range {
            let (min, max) = (min.octets(), max.octets());
            let mut a = [0u8; 16];
            for w in 0..4 {
                let r = self.rng.next_u32().to_be_bytes();
                for (k, rk) in r.iter().enumerate() {
                    let i = w * 4 + k;
                    a[i] = (rk | min[i]) & max[i];
                }
            }
            self.cur_daddr6 = Ipv6Addr::from(a);
        }
        let (lo, hi) = self.size;
        if lo < hi {
            self.cur_pkt_size = if self.has(Flag::TxsizeRnd) {
                self.rng.inclusive(lo, hi - 1)
            } else {
                let t = self.cur_pkt_size + 1;
                if t > hi { lo } else { t }
            };
        } else if !self.imix_sizes.is_empty() {
            let slot = self.rng.below(IMIX_PRECISION as u32) as usize;
            let e = self.imix_table[slot] as usize;
            self.imix_counts[e] += 1;
            self.cur_pkt_size = self.imix_sizes[e];
        }
        if self.has(Flag::QueueMapCpu) {
            self.cur_queue_map = cpu;
        } else if self.queue_map.0 <= self.queue_map.1 {
            let (lo, hi) = self.queue_map;
            self.cur_queue_map = if self.has(Flag::QueueMapRnd) {
                self.rng.inclusive(u32::from(lo), u32::from(hi)) as u16
            } else {
                let t = u32::from(self.cur_queue_map) + 1;
                if t > u32::from(hi) { lo } else { t as u16 }
            };
        }
        self.cur_queue_map %= self.tx_queues;
        if let Some(f) = flow {
            self.flows[f].count += 1;
        }
    }
}

/// The constant layout of a run's frames.
#[derive(Debug, Clone)]
pub struct Layout {
    pub ipv6: bool,
    pub vlan: Option<(u8, u8)>,
    pub svlan: Option<(u8, u8)>,
    pub n_mpls: usize,
    pub tos: u8,
    pub traffic_class: u8,
    pub udp_csum: bool,
    /// Offset of the IP header.
    pub l3: usize,
}

impl Layout {
    pub fn new(c: &DevConfig) -> Self {
        let vlan = (c.vlan_id != NO_VLAN).then_some((c.vlan_p, c.vlan_cfi));
        let svlan = (vlan.is_some() && c.svlan_id != NO_VLAN).then_some((c.svlan_p, c.svlan_cfi));
        let tags = usize::from(vlan.is_some()) + usize::from(svlan.is_some());
        let l3 = ethernet::HEADER_LEN + mpls::HEADER_LEN * c.mpls.len() + vlan::HEADER_LEN * tags;
        Layout {
            ipv6: c.has(Flag::Ipv6),
            vlan,
            svlan,
            n_mpls: c.mpls.len(),
            tos: c.tos,
            traffic_class: c.traffic_class,
            udp_csum: c.has(Flag::Udpcsum),
            l3,
        }
    }

    /// Offset of the UDP header.
    pub fn l4(&self) -> usize {
        self.l3 + crate::wire::ip_header_len(self.ipv6)
    }

    /// Bytes of headers before pktgen's header: Ethernet, tags or labels, IP, UDP.
    pub fn header_len(&self) -> usize {
        self.l4() + udp::HEADER_LEN
    }

    /// Smallest frame: headers plus pktgen's header.
    pub fn min_frame(&self) -> usize {
        self.header_len() + pktgen_hdr::HEADER_LEN
    }

    /// The length of the walk's current frame: its size, but never short of the headers
    /// and pktgen's header (the kernel grows such frames too).
    pub fn frame_len(&self, g: &Generator) -> usize {
        (g.cur_pkt_size as usize).max(self.min_frame())
    }
}

/// Writes the headers of the generator's current packet into `out`, the frame: exactly
/// [`Layout::frame_len`] bytes, zero past the pktgen header. Padding after the pktgen header
/// is never written: it stays zero. Every header goes through its `wire` module's `Repr`
/// onto an unchecked view: the layout fixed the offsets once, so nothing is validated per
/// packet.
pub fn write_frame(l: &Layout, g: &Generator, tv: (u32, u32), out: &mut [u8]) {
    let len = out.len();
    debug_assert_eq!(len, l.frame_len(g));
    let inner = if l.ipv6 {
        ethertype::IPV6
    } else {
        ethertype::IPV4
    };
    let outer = if l.vlan.is_some() {
        ethertype::VLAN
    } else if l.n_mpls > 0 {
        ethertype::MPLS
    } else {
        inner
    };
    ethernet::Repr {
        dst_addr: MacAddr(g.dst_mac),
        src_addr: MacAddr(g.src_mac),
        ethertype: outer,
    }
    .emit(&mut ethernet::Packet::new_unchecked(&mut *out));
    let mut p = ethernet::HEADER_LEN;
    if let Some((prio, cfi)) = l.vlan {
        // The kernel's QinQ: 0x8100, the SVLAN tag, 0x8100, the VLAN tag, the IP EtherType.
        let mut tag = |vid, pcp, dei: u8, next| {
            vlan::Repr {
                pcp,
                dei: dei != 0,
                vid,
                ethertype: next,
            }
            .emit(&mut vlan::Packet::new_unchecked(&mut out[p..]));
            p += vlan::HEADER_LEN;
        };
        if let Some((sprio, scfi)) = l.svlan {
            tag(g.svlan_id, sprio, scfi, ethertype::VLAN);
        }
        tag(g.vlan_id, prio, cfi, inner);
    } else {
        for (i, lab) in g.mpls.iter().enumerate() {
            let mut v = lab & !mpls::BOTTOM_OF_STACK;
            if i == l.n_mpls - 1 {
                v |= mpls::BOTTOM_OF_STACK;
            }
            mpls::Packet::new_unchecked(&mut out[p..]).set_entry(v);
            p += mpls::HEADER_LEN;
        }
    }
    debug_assert_eq!(p, l.l3);
    let l4 = l.l4();
    let udp_len = len - l4;
    let pseudo = if l.ipv6 {
        let ip = ipv6::Repr {
            src_addr: g.cur_saddr6,
            dst_addr: g.cur_daddr6,
            next_header: ip_protocol::UDP,
            hop_limit: PKTGEN_TTL,
            traffic_class: l.traffic_class,
            flow_label: 0,
            payload_len: udp_len,
        };
        ip.emit(&mut ipv6::Packet::new_unchecked(&mut out[l.l3..]));
        l.udp_csum.then(|| ip.pseudo_header_sum())
    } else {
        let ip = ipv4::Repr {
            src_addr: g.cur_saddr.into(),
            dst_addr: g.cur_daddr.into(),
            protocol: ip_protocol::UDP,
            tos: l.tos,
            ident: g.ip_id,
            dont_frag: false,
            more_frags: false,
            frag_offset: 0,
            ttl: PKTGEN_TTL,
            payload_len: udp_len,
        };
        ip.emit(&mut ipv4::Packet::new_unchecked(&mut out[l.l3..]));
        l.udp_csum.then(|| ip.pseudo_header_sum())
    };
    let mut dgram = udp::Packet::new_unchecked(&mut out[l4..]);
    udp::Repr {
        src_port: g.cur_udp_src,
        dst_port: g.cur_udp_dst,
        payload_len: udp_len - udp::HEADER_LEN,
    }
    .emit(&mut dgram);
    pktgen_hdr::Repr {
        seq: g.seq,
        tv_sec: tv.0,
        tv_usec: tv.1,
    }
    .emit(&mut pktgen_hdr::Packet::new_unchecked(dgram.payload_mut()));
    if let Some(pseudo) = pseudo {
        // The UDP header and pktgen's header; the zero padding after it adds nothing.
        dgram.fill_checksum_prefix(pseudo, udp::HEADER_LEN + pktgen_hdr::HEADER_LEN);
    }
}

impl Generator {
    /// Finishes the current packet: the ip id and sequence number move on.
    #[inline]
    pub fn sent_one(&mut self, len: usize) {
        self.ip_id = self.ip_id.wrapping_add(1);
        self.seq = self.seq.wrapping_add(1);
        self.bytes += len as u64;
    }
}

#[cfg(test)]
mod tests;
