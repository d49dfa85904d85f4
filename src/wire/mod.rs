//! Wire formats: the frames upktgen sends, built once and patched per packet.

pub mod checksum;
pub mod mac;
pub mod pktgen_hdr;
pub mod udp4;

pub use mac::MacAddr;
pub use pktgen_hdr::{PKTGEN_HDR_LEN, PKTGEN_MAGIC, PktgenHdr};
pub use udp4::{FrameSpec, PacketFields, Udp4Template};

/// Ethernet header length (no VLAN tag).
pub const ETH_HLEN: usize = 14;
/// IPv4 header without options.
pub const IPV4_HLEN: usize = 20;
/// UDP header.
pub const UDP_HLEN: usize = 8;
/// Smallest Ethernet frame without FCS (ETH_ZLEN): shorter frames are padded by NICs.
pub const ETH_ZLEN: usize = 60;
/// Bytes a frame occupies on the wire beyond `pkt_size`: FCS 4 + preamble/SFD 8 + IFG 12.
pub const WIRE_OVERHEAD: usize = 24;
