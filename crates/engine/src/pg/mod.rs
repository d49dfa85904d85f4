//! pktgen's per-device parameters and the commands that set them.
//!
//! [`DevConfig`] holds what the kernel's `struct pktgen_dev` holds as configuration, with the
//! kernel's defaults, and [`DevConfig::command`] takes one line of pktgen's control language
//! (`count 1000`, `dst_min 10.0.0.1`, `flag !UDPCSUM`, ...) and answers like the kernel does
//! (`OK: count=1000`). It is the one place parameters are set: the command line (`--count`,
//! `--dst-min`, ...) and scripts (`upktgen script`, `functions-sh`) both go through it.
//!
//! Where the kernel silently accepts garbage (a number that is not one reads as 0, an address
//! that does not parse becomes 0.0.0.0) upktgen answers `ERROR: ...` instead; everything else
//! keeps the kernel's semantics, quirks included (they are documented where they are kept).

mod command;
#[cfg(test)]
use command::possible_nodes;
pub use command::{node_in_list, split_command};
pub mod generate;
pub mod show;

use crate::wire::MacAddr;
use std::fmt::Write as _;
use std::net::{Ipv4Addr, Ipv6Addr};

/// The kernel's default `count` (module parameter pg_count_d).
pub const KERNEL_DEFAULT_COUNT: u64 = 1000;
/// The smallest `pkt_size` the kernel accepts: Ethernet 14 + IPv4 20 + UDP 8 (smaller values
/// are raised to it). A frame is never shorter than its headers plus pktgen's 16-byte header.
pub const MIN_PKT_SIZE_SETTING: u32 =
    (crate::wire::ETH_HLEN + crate::wire::IPV4_HLEN + crate::wire::UDP_HLEN) as u32;
/// At most this many IMIX entries.
pub const MAX_IMIX_ENTRIES: usize = 20;
/// IMIX sizes are drawn from a table of this many slots.
pub const IMIX_PRECISION: usize = 100;
/// At most this many MPLS labels.
pub const MAX_MPLS_LABELS: usize = 16;
/// At most this many concurrent flows.
pub const MAX_CFLOWS: u32 = 65536;
/// `vlan_id`/`svlan_id` value meaning "no tag".
pub const NO_VLAN: u16 = 0xffff;
/// The bottom-of-stack bit of an MPLS label entry.
pub const MPLS_STACK_BOTTOM: u32 = 0x100;
/// The kernel reads numbers of at most ten digits; so does upktgen (delays, weights).
pub const MAX_TEN_DIGITS: u64 = 9_999_999_999;
/// `delay` value the kernel reads as "never transmit".
pub const DELAY_NEVER_SETTING: u64 = 0x7fff_ffff;

/// pktgen's flags, in the kernel's bit order (so `OK: flags=0x...` answers match).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Flag {
    Ipv6 = 0,
    IpsrcRnd,
    IpdstRnd,
    TxsizeRnd,
    UdpsrcRnd,
    UdpdstRnd,
    Udpcsum,
    NoTimestamp,
    MplsRnd,
    QueueMapRnd,
    QueueMapCpu,
    FlowSeq,
    Ipsec,
    MacsrcRnd,
    MacdstRnd,
    VidRnd,
    SvidRnd,
    Node,
    Shared,
}

/// Flag names in bit order.
pub const FLAG_NAMES: [&str; 19] = [
    "IPV6",
    "IPSRC_RND",
    "IPDST_RND",
    "TXSIZE_RND",
    "UDPSRC_RND",
    "UDPDST_RND",
    "UDPCSUM",
    "NO_TIMESTAMP",
    "MPLS_RND",
    "QUEUE_MAP_RND",
    "QUEUE_MAP_CPU",
    "FLOW_SEQ",
    "IPSEC",
    "MACSRC_RND",
    "MACDST_RND",
    "VID_RND",
    "SVID_RND",
    "NODE",
    "SHARED",
];

impl Flag {
    pub const fn bit(self) -> u32 {
        1 << self as u32
    }

    fn from_index(i: usize) -> Flag {
        const ALL: [Flag; 19] = [
            Flag::Ipv6,
            Flag::IpsrcRnd,
            Flag::IpdstRnd,
            Flag::TxsizeRnd,
            Flag::UdpsrcRnd,
            Flag::UdpdstRnd,
            Flag::Udpcsum,
            Flag::NoTimestamp,
            Flag::MplsRnd,
            Flag::QueueMapRnd,
            Flag::QueueMapCpu,
            Flag::FlowSeq,
            Flag::Ipsec,
            Flag::MacsrcRnd,
            Flag::MacdstRnd,
            Flag::VidRnd,
            Flag::SvidRnd,
            Flag::Node,
            Flag::Shared,
        ];
        ALL[i]
    }
}

/// Flags that make a field random.
pub const RANDOM_FLAGS: [Flag; 11] = [
    Flag::IpsrcRnd,
    Flag::IpdstRnd,
    Flag::TxsizeRnd,
    Flag::UdpsrcRnd,
    Flag::UdpdstRnd,
    Flag::MplsRnd,
    Flag::QueueMapRnd,
    Flag::MacsrcRnd,
    Flag::MacdstRnd,
    Flag::VidRnd,
    Flag::SvidRnd,
];

/// The kernel's transmit modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum XmitMode {
    /// The driver's transmit routine directly (upktgen: the backend's qdisc-bypassing path).
    #[default]
    StartXmit,
    /// Through the qdisc (upktgen: af_packet/tx_ring without PACKET_QDISC_BYPASS).
    QueueXmit,
    /// Into the device's receive path, as if it had received the frames (upktgen: the
    /// xdp_live backend's live frames passed with XDP_PASS).
    NetifReceive,
}

/// One IMIX entry: frames of `size` bytes with relative weight `weight`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImixEntry {
    pub size: u32,
    pub weight: u64,
}

/// Builds the kernel's 100-slot IMIX table: slot i holds the entry whose cumulative share
/// (weights scaled to 100, each share rounded down, the last entry closing at 100) first
/// exceeds i. A weight too small to earn a whole slot gets none, as in the kernel.
pub fn imix_distribution(entries: &[ImixEntry]) -> [u8; IMIX_PRECISION] {
    let mut table = [0u8; IMIX_PRECISION];
    if entries.is_empty() {
        return table;
    }
    let total: u64 = entries.iter().map(|e| e.weight).sum();
    let mut cumulative = vec![0u64; entries.len()];
    let mut acc = 0u64;
    for (i, e) in entries.iter().enumerate().take(entries.len() - 1) {
        acc += e.weight * IMIX_PRECISION as u64 / total;
        cumulative[i] = acc;
    }
    cumulative[entries.len() - 1] = IMIX_PRECISION as u64;
    let mut j = 0usize;
    for (i, slot) in table.iter_mut().enumerate() {
        // Several entries may end at the same slot (zero-width shares): skip them all.
        while j < entries.len() - 1 && i as u64 == cumulative[j] {
            j += 1;
        }
        *slot = j as u8;
    }
    table
}

/// A device's pktgen configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct DevConfig {
    /// The name it was added as (`eth0` or `eth0@1`).
    pub ifname: String,
    pub count: u64,
    pub min_pkt_size: u32,
    pub max_pkt_size: u32,
    pub imix: Vec<ImixEntry>,
    pub frags: u32,
    /// Inter-packet gap in ns; `u64::MAX` means never transmit.
    pub delay: u64,
    pub clone_skb: u32,
    pub burst: u32,
    /// IPv4 ranges as given (empty = unset), like the kernel keeps them.
    pub dst_min: String,
    pub dst_max: String,
    pub src_min: String,
    pub src_max: String,
    pub dst6: Ipv6Addr,
    pub dst6_min: Ipv6Addr,
    pub dst6_max: Ipv6Addr,
    pub src6: Ipv6Addr,
    /// All zeros = the device's own address.
    pub src_mac: MacAddr,
    pub dst_mac: MacAddr,
    pub src_mac_count: u32,
    pub dst_mac_count: u32,
    pub udp_src_min: u16,
    pub udp_src_max: u16,
    pub udp_dst_min: u16,
    pub udp_dst_max: u16,
    pub vlan_id: u16,
    pub vlan_p: u8,
    pub vlan_cfi: u8,
    pub svlan_id: u16,
    pub svlan_p: u8,
    pub svlan_cfi: u8,
    /// MPLS label stack entries as given (host order).
    pub mpls: Vec<u32>,
    pub tos: u8,
    pub traffic_class: u8,
    pub flows: u32,
    pub flowlen: u32,
    pub queue_map_min: u16,
    pub queue_map_max: u16,
    pub skb_priority: u32,
    pub node: i32,
    /// None until set: each backend keeps its own default path.
    pub xmit_mode: Option<XmitMode>,
    pub flags: u32,
    /// The kernel's `debug` knob (accepted, no effect).
    pub debug: u32,
    /// The device is a loopback device (ARPHRD_LOOPBACK, as `lo`), which the kernel's
    /// `add_device` accepts beside Ethernet devices. As in the kernel it cannot send one
    /// buffer several times (it lacks IFF_TX_SKB_SHARING: `clone_skb` above 0 and `burst`
    /// above 1 are refused), and its frames come back into this host, so a start needs no
    /// destination MAC or address (the kernel's 00:00:00:00:00:00 and 0.0.0.0 are sent).
    pub loopback: bool,
    /// Settings accepted for compatibility that do nothing here, noted once each.
    pub notes: Vec<String>,
}

impl Default for DevConfig {
    fn default() -> Self {
        DevConfig::new("")
    }
}

/// The answer to a command: `Ok("OK: count=10")` or the reason it was refused.
pub type Answer = Result<String, CommandError>;

/// The text the kernel puts in the Result line for an answer: `OK: ...` or `ERROR: ...`.
pub fn result_line<E: std::fmt::Display>(a: &Result<String, E>) -> String {
    match a {
        Ok(s) => s.clone(),
        Err(e) => format!("ERROR: {e}"),
    }
}

/// Why a command of pktgen's device language was refused (the Result line's text after
/// `ERROR: `): the parameter and what is wrong with its value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    #[error("empty command")]
    Empty,
    #[error("No such parameter \"{0}\"")]
    NoSuchParameter(String),
    #[error("Flag -:{0}:- unknown; available flags (prepend ! to un-set a flag): {flags}, FLOW_RND", flags = FLAG_NAMES.join(", "))]
    UnknownFlag(String),
    #[error("xmit_mode -:{0}:- unknown; available modes: start_xmit, queue_xmit, netif_receive")]
    UnknownXmitMode(String),
    #[error("{0}: a number is needed")]
    NumberNeeded(String),
    #[error("{name}: '{value}' is not a non-negative whole number")]
    NotANumber { name: String, value: String },
    /// `shown`: the value, cut at 60 characters.
    #[error("{name}: '{shown}' is more than one value; {name} takes one")]
    MoreThanOneValue { name: String, shown: String },
    #[error("{name}: {n} is above the largest value, {max}")]
    AboveMax { name: String, n: u64, max: u64 },
    #[error("{name} must be 0-{max}")]
    OutOfRange { name: String, max: u64 },
    #[error("{name}: '{value}' is not an IPv4 address")]
    NotIpv4 { name: String, value: String },
    #[error("{name}: '{value}' is not an IPv6 address")]
    NotIpv6 { name: String, value: String },
    #[error("{0}: {1}")]
    NotMac(String, crate::wire::BadMac),
    #[error("{0} must be 00-ff")]
    NotHexByte(String),
    /// A tag's priority or CFI before the tag: `name` needs `first` set.
    #[error("{name}: set {first} first")]
    TagFirst { name: String, first: &'static str },
    #[error("imix_weights: at most {MAX_IMIX_ENTRIES} entries")]
    ImixTooMany,
    #[error("imix_weights: '{0}' is not size,weight")]
    ImixNotPair(String),
    #[error("imix_weights: '{0}': a weight must be at least 1")]
    ImixZeroWeight(String),
    #[error("mpls: '{0}' is not a 32-bit hex label entry (e.g. 0001000a)")]
    MplsNotHex(String),
    #[error("mpls: at most {MAX_MPLS_LABELS} labels")]
    MplsTooMany,
    /// What a loopback device cannot do (the kernel's EOPNOTSUPP: no IFF_TX_SKB_SHARING).
    #[error(
        "{name}: {dev} is a loopback device, which cannot send one buffer several times (the kernel answers EOPNOTSUPP)"
    )]
    NoSkbSharing { name: &'static str, dev: String },
    #[error("node {n}: node not possible (this machine's possible NUMA nodes: {possible})")]
    NodeNotPossible { n: u64, possible: String },
    /// A setting refused as such (a combination, a feature upktgen does not have): why.
    #[error("{0}")]
    Refused(&'static str),
}

/// A combination of settings that cannot run together, found as the run starts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StartError {
    #[error("queue_map_min {min} is above queue_map_max {max}")]
    QueueMap { min: u16, max: u16 },
    /// Settings that only make sense together: what to give.
    #[error("{0}")]
    Together(&'static str),
    #[error("no destination address: give dst (or dst_min), or dst6 for IPv6")]
    NoDestination,
    #[error(
        "IPDST_RND over {min}..{max} (max excluded): every address in it is one random destinations skip (0/8, 127/8, 224/4, broadcast)"
    )]
    NoRandomDestination {
        min: std::net::Ipv4Addr,
        max: std::net::Ipv4Addr,
    },
}

impl DevConfig {
    /// A device added to a thread, with the kernel's defaults.
    pub fn new(ifname: &str) -> Self {
        DevConfig {
            ifname: ifname.to_string(),
            count: KERNEL_DEFAULT_COUNT,
            min_pkt_size: 60,
            max_pkt_size: 60,
            imix: Vec::new(),
            frags: 0,
            delay: 0,
            clone_skb: 0,
            burst: 1,
            dst_min: String::new(),
            dst_max: String::new(),
            src_min: String::new(),
            src_max: String::new(),
            dst6: Ipv6Addr::UNSPECIFIED,
            dst6_min: Ipv6Addr::UNSPECIFIED,
            dst6_max: Ipv6Addr::UNSPECIFIED,
            src6: Ipv6Addr::UNSPECIFIED,
            src_mac: MacAddr::default(),
            dst_mac: MacAddr::default(),
            src_mac_count: 0,
            dst_mac_count: 0,
            udp_src_min: 9,
            udp_src_max: 9,
            udp_dst_min: 9,
            udp_dst_max: 9,
            vlan_id: NO_VLAN,
            vlan_p: 0,
            vlan_cfi: 0,
            svlan_id: NO_VLAN,
            svlan_p: 0,
            svlan_cfi: 0,
            mpls: Vec::new(),
            tos: 0,
            traffic_class: 0,
            flows: 0,
            flowlen: 0,
            queue_map_min: 0,
            queue_map_max: 0,
            skb_priority: 0,
            node: -1,
            xmit_mode: None,
            flags: Flag::Shared.bit(),
            debug: 0,
            loopback: false,
            notes: Vec::new(),
        }
    }

    pub fn has(&self, f: Flag) -> bool {
        self.flags & f.bit() != 0
    }

    pub fn set_flag(&mut self, f: Flag, on: bool) {
        if on {
            self.flags |= f.bit();
        } else {
            self.flags &= !f.bit();
        }
    }

    /// The device name without its `@tag`.
    pub fn device(&self) -> &str {
        self.ifname.split('@').next().unwrap_or("")
    }

    /// Ranges given upside down: pktgen accepts them (the field stays at min) and so does
    /// upktgen, but says so, since it is rarely what was meant.
    pub fn range_notes(&self) -> Vec<String> {
        let mut v = Vec::new();
        for (what, min, max) in [
            ("udp_src", self.udp_src_min, self.udp_src_max),
            ("udp_dst", self.udp_dst_min, self.udp_dst_max),
        ] {
            if max < min {
                v.push(format!(
                    "{what}_max {max} is below {what}_min {min}: the port stays at {min} (pktgen's rule; the range is [min, max))"
                ));
            }
        }
        if self.max_pkt_size < self.min_pkt_size {
            v.push(format!(
                "max_pkt_size {} is below min_pkt_size {}: every frame has {} bytes (pktgen raises max to min)",
                self.max_pkt_size, self.min_pkt_size, self.min_pkt_size
            ));
        }
        v
    }

    /// The frame-size walk's bounds after the kernel's start-of-run fix-up (max raised to min).
    pub fn size_bounds(&self) -> (u32, u32) {
        (self.min_pkt_size, self.max_pkt_size.max(self.min_pkt_size))
    }

    /// Checks combinations that only make sense together, as the run starts.
    pub fn check_start(&self) -> Result<(), StartError> {
        let v6 = self.has(Flag::Ipv6);
        let any6 = [self.dst6, self.dst6_min, self.dst6_max, self.src6]
            .iter()
            .any(|a| !a.is_unspecified());
        if v6 && self.dst6.is_unspecified() && self.dst6_min.is_unspecified() {
            return Err(StartError::Together(
                "IPV6 is set but no IPv6 destination: give dst6 (or dst6_min/dst6_max)",
            ));
        }
        if !v6 && any6 {
            return Err(StartError::Together(
                "IPv6 addresses are set but the IPV6 flag was cleared (flag !IPV6): give dst/dst_min for IPv4 or set the flag again",
            ));
        }
        if v6 && !(self.dst_max.is_empty() && self.src_min.is_empty() && self.src_max.is_empty()) {
            return Err(StartError::Together(
                "IPV6 is set: IPv4 ranges (dst_max, src_min, src_max) do not apply; use dst6_min/dst6_max",
            ));
        }
        if self.dst6_min.is_unspecified() != self.dst6_max.is_unspecified() {
            return Err(StartError::Together(
                "dst6_min and dst6_max go together (the random walk masks between them)",
            ));
        }
        if !self.imix.is_empty() && self.min_pkt_size < self.max_pkt_size {
            return Err(StartError::Together(
                "imix_weights and a min_pkt_size..max_pkt_size walk both set the frame size: give one",
            ));
        }
        if self.flows > 0 && self.flowlen == 0 {
            return Err(StartError::Together(
                "flows is set but flowlen is 0: give flowlen (packets per flow)",
            ));
        }
        if self.queue_map_min > self.queue_map_max
            && (self.has(Flag::QueueMapRnd) || self.queue_map_max != 0)
        {
            return Err(StartError::QueueMap {
                min: self.queue_map_min,
                max: self.queue_map_max,
            });
        }
        Ok(())
    }

    /// The largest frame this configuration can produce (headers included).
    pub fn max_frame_len(&self) -> usize {
        let imix_max = self.imix.iter().map(|e| e.size).max().unwrap_or(0);
        let (_, max) = self.size_bounds();
        (max.max(imix_max) as usize).max(generate::Layout::new(self).min_frame())
    }

    /// Bytes of headers before the pktgen header: Ethernet, tags or labels, IP, UDP.
    pub fn header_len(&self) -> usize {
        generate::Layout::new(self).header_len()
    }

    /// Bytes of VLAN tags in each frame: 4 for a VLAN tag, 4 more for an SVLAN tag outside it.
    pub fn vlan_tag_bytes(&self) -> usize {
        match (self.vlan_id != NO_VLAN, self.svlan_id != NO_VLAN) {
            (false, _) => 0,
            (true, false) => crate::wire::vlan::HEADER_LEN,
            (true, true) => 2 * crate::wire::vlan::HEADER_LEN,
        }
    }
}

#[cfg(test)]
mod tests;
