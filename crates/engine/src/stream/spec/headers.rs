//! The headers of a stream's frames, each field a [`Pattern`], and where each field sits
//! in its header ([`Header::fields`]).

use super::Pattern;
use crate::wire::{ipv4, ipv6, mpls, tcp, udp, vlan};
use std::net::{Ipv4Addr, Ipv6Addr};

/// One header of a stream's frames, in the order they appear.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Header {
    Ethernet(EthernetSpec),
    /// One VLAN tag; several in a row are QinQ (the outer first).
    Vlan(VlanSpec),
    /// One MPLS label stack entry; several in a row are a stack (the outer first).
    Mpls(MplsSpec),
    Ipv4(Ipv4Spec),
    Ipv6(Ipv6Spec),
    Udp(UdpSpec),
    Tcp(TcpSpec),
    /// Bytes placed as they are after the headers before it (at most
    /// [`MAX_RAW`](super::MAX_RAW)).
    Raw(Vec<u8>),
}

/// Ethernet II: addresses are 48-bit patterns. `ethertype` is the EtherType of what follows
/// the VLAN tags (with tags, it is written in the last tag; the tags' TPIDs come from
/// them); worked out from the next header when `None` (a raw payload needs one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EthernetSpec {
    pub dst: Pattern,
    pub src: Pattern,
    pub ethertype: Option<Pattern>,
}

/// A VLAN tag. `tpid` is the EtherType that announces the tag (0x8100 for an 802.1Q C-tag,
/// 0x88a8 for an 802.1ad S-tag), written in the header before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VlanSpec {
    pub tpid: u16,
    /// 3 bits.
    pub pcp: Pattern,
    /// 1 bit.
    pub dei: Pattern,
    /// 12 bits.
    pub vid: Pattern,
}

/// An MPLS label stack entry; `bottom_of_stack` is set on the last entry when `None`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MplsSpec {
    /// 20 bits.
    pub label: Pattern,
    /// 3 bits.
    pub traffic_class: Pattern,
    /// 1 bit.
    pub bottom_of_stack: Option<Pattern>,
    /// 8 bits.
    pub ttl: Pattern,
}

/// IPv4's type-of-service byte: as a whole, or as DSCP (6 bits) and ECN (2 bits).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tos {
    Byte(Pattern),
    DscpEcn { dscp: Pattern, ecn: Pattern },
}

/// IPv4 without options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ipv4Spec {
    pub src: Pattern,
    pub dst: Pattern,
    pub tos: Tos,
    pub ttl: Pattern,
    /// The identification field (16 bits).
    pub ident: Pattern,
    /// Worked out from the next header when `None`; must not vary when UDP or TCP follows.
    pub protocol: Option<Pattern>,
    pub dont_fragment: bool,
}

/// IPv6's fixed header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ipv6Spec {
    pub src: Pattern,
    pub dst: Pattern,
    /// 8 bits.
    pub traffic_class: Pattern,
    /// 20 bits.
    pub flow_label: Pattern,
    pub hop_limit: Pattern,
    /// Worked out from the next header when `None`; must not vary when UDP or TCP follows.
    pub next_header: Option<Pattern>,
}

/// UDP; the length is the frame's, the checksum computed per frame unless `checksum` is
/// false (then 0, "none"; IPv6 forbids it, so it is refused there).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UdpSpec {
    pub src_port: Pattern,
    pub dst_port: Pattern,
    pub checksum: bool,
}

/// TCP without options; the checksum is computed per frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TcpSpec {
    pub src_port: Pattern,
    pub dst_port: Pattern,
    pub seq: Pattern,
    pub ack: Pattern,
    /// The eight flag bits of byte 13 (`wire::tcp::flags`).
    pub flags: Pattern,
    pub window: Pattern,
}

impl Default for EthernetSpec {
    fn default() -> Self {
        EthernetSpec {
            dst: Pattern::Value(0x0200_0000_0002),
            src: Pattern::Value(0x0200_0000_0001),
            ethertype: None,
        }
    }
}

impl Default for VlanSpec {
    fn default() -> Self {
        VlanSpec {
            tpid: crate::wire::ethernet::ethertype::VLAN,
            pcp: Pattern::Value(0),
            dei: Pattern::Value(0),
            vid: Pattern::Value(1),
        }
    }
}

impl Default for MplsSpec {
    fn default() -> Self {
        MplsSpec {
            label: Pattern::Value(16),
            traffic_class: Pattern::Value(0),
            bottom_of_stack: None,
            ttl: Pattern::Value(64),
        }
    }
}

impl Default for Ipv4Spec {
    fn default() -> Self {
        Ipv4Spec {
            src: Ipv4Addr::new(10, 0, 0, 1).into(),
            dst: Ipv4Addr::new(10, 0, 0, 2).into(),
            tos: Tos::Byte(Pattern::Value(0)),
            ttl: Pattern::Value(64),
            ident: Pattern::Value(0),
            protocol: None,
            dont_fragment: false,
        }
    }
}

impl Default for Ipv6Spec {
    fn default() -> Self {
        Ipv6Spec {
            src: Ipv6Addr::new(0xfd00, 0, 0, 0, 0, 0, 0, 1).into(),
            dst: Ipv6Addr::new(0xfd00, 0, 0, 0, 0, 0, 0, 2).into(),
            traffic_class: Pattern::Value(0),
            flow_label: Pattern::Value(0),
            hop_limit: Pattern::Value(64),
            next_header: None,
        }
    }
}

impl Default for UdpSpec {
    fn default() -> Self {
        UdpSpec {
            src_port: Pattern::Value(1024),
            dst_port: Pattern::Value(1024),
            checksum: true,
        }
    }
}

impl Default for TcpSpec {
    fn default() -> Self {
        TcpSpec {
            src_port: Pattern::Value(1024),
            dst_port: Pattern::Value(80),
            seq: Pattern::Value(0),
            ack: Pattern::Value(0),
            flags: Pattern::Value(u128::from(tcp::flags::ACK)),
            window: Pattern::Value(65535),
        }
    }
}

/// Where a patterned field sits in its header: `bytes` big-endian bytes from `at` hold it,
/// `width` bits wide, shifted left by `shift`. Fields that share bytes (a VLAN tag's PCP
/// and VID) name the same `at` and `bytes`.
#[derive(Debug, Clone, Copy)]
pub struct FieldRef<'a> {
    /// The field's name as a path (`ipv4.ttl`), for messages.
    pub name: &'static str,
    pub pattern: &'a Pattern,
    pub width: u32,
    pub at: usize,
    pub bytes: usize,
    pub shift: u32,
}

impl Header {
    /// Bytes the header takes in a frame.
    pub fn len(&self) -> usize {
        match self {
            Header::Ethernet(_) => crate::wire::ETH_HLEN,
            Header::Vlan(_) => vlan::HEADER_LEN,
            Header::Mpls(_) => mpls::HEADER_LEN,
            Header::Ipv4(_) => ipv4::HEADER_LEN,
            Header::Ipv6(_) => ipv6::HEADER_LEN,
            Header::Udp(_) => udp::HEADER_LEN,
            Header::Tcp(_) => tcp::HEADER_LEN,
            Header::Raw(b) => b.len(),
        }
    }

    /// Whether the header takes no bytes (an empty raw payload).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The header's patterned fields and where they sit (fields left to be worked out,
    /// `None`, are not listed).
    pub fn fields(&self) -> Vec<FieldRef<'_>> {
        let f = |name, pattern, width, at, bytes, shift| FieldRef {
            name,
            pattern,
            width,
            at,
            bytes,
            shift,
        };
        let mut v = Vec::new();
        match self {
            Header::Ethernet(e) => {
                v.push(f("ethernet.dst", &e.dst, 48, 0, 6, 0));
                v.push(f("ethernet.src", &e.src, 48, 6, 6, 0));
                if let Some(t) = &e.ethertype {
                    v.push(f("ethernet.ether_type", t, 16, 12, 2, 0));
                }
            }
            Header::Vlan(t) => {
                v.push(f("vlan.priority", &t.pcp, 3, 0, 2, 13));
                v.push(f("vlan.cfi", &t.dei, 1, 0, 2, 12));
                v.push(f("vlan.id", &t.vid, 12, 0, 2, 0));
            }
            Header::Mpls(m) => {
                v.push(f("mpls.label", &m.label, 20, 0, 4, 12));
                v.push(f("mpls.traffic_class", &m.traffic_class, 3, 0, 4, 9));
                if let Some(b) = &m.bottom_of_stack {
                    v.push(f("mpls.bottom_of_stack", b, 1, 0, 4, 8));
                }
                v.push(f("mpls.time_to_live", &m.ttl, 8, 0, 4, 0));
            }
            Header::Ipv4(h) => {
                use ipv4::field as F;
                match &h.tos {
                    Tos::Byte(p) => v.push(f("ipv4.tos", p, 8, F::TOS, 1, 0)),
                    Tos::DscpEcn { dscp, ecn } => {
                        v.push(f("ipv4.dscp", dscp, 6, F::TOS, 1, 2));
                        v.push(f("ipv4.ecn", ecn, 2, F::TOS, 1, 0));
                    }
                }
                v.push(f("ipv4.identification", &h.ident, 16, F::IDENT.start, 2, 0));
                v.push(f("ipv4.time_to_live", &h.ttl, 8, F::TTL, 1, 0));
                if let Some(p) = &h.protocol {
                    v.push(f("ipv4.protocol", p, 8, F::PROTOCOL, 1, 0));
                }
                v.push(f("ipv4.src", &h.src, 32, F::SRC_ADDR.start, 4, 0));
                v.push(f("ipv4.dst", &h.dst, 32, F::DST_ADDR.start, 4, 0));
            }
            Header::Ipv6(h) => {
                use ipv6::field as F;
                v.push(f("ipv6.traffic_class", &h.traffic_class, 8, 0, 4, 20));
                v.push(f("ipv6.flow_label", &h.flow_label, 20, 0, 4, 0));
                if let Some(p) = &h.next_header {
                    v.push(f("ipv6.next_header", p, 8, F::NXT_HDR, 1, 0));
                }
                v.push(f("ipv6.hop_limit", &h.hop_limit, 8, F::HOP_LIMIT, 1, 0));
                v.push(f("ipv6.src", &h.src, 128, F::SRC_ADDR.start, 16, 0));
                v.push(f("ipv6.dst", &h.dst, 128, F::DST_ADDR.start, 16, 0));
            }
            Header::Udp(u) => {
                v.push(f("udp.src_port", &u.src_port, 16, 0, 2, 0));
                v.push(f("udp.dst_port", &u.dst_port, 16, 2, 2, 0));
            }
            Header::Tcp(t) => {
                use tcp::field as F;
                v.push(f("tcp.src_port", &t.src_port, 16, 0, 2, 0));
                v.push(f("tcp.dst_port", &t.dst_port, 16, 2, 2, 0));
                v.push(f("tcp.seq_num", &t.seq, 32, F::SEQ_NUM.start, 4, 0));
                v.push(f("tcp.ack_num", &t.ack, 32, F::ACK_NUM.start, 4, 0));
                v.push(f("tcp.flags", &t.flags, 8, F::FLAGS, 1, 0));
                v.push(f("tcp.window", &t.window, 16, F::WINDOW.start, 2, 0));
            }
            Header::Raw(_) => {}
        }
        v
    }
}
