//! Wire formats: one module per header, in smoltcp's `src/wire` style.
//!
//! Each header module ([`ethernet`], [`vlan`], [`mpls`], [`ipv4`], [`ipv6`], [`udp`], [`tcp`],
//! [`pktgen_hdr`]) holds:
//! - `field`: the byte ranges of the header's fields, and `HEADER_LEN`;
//! - `Packet<T: AsRef<[u8]>>`: a zero-copy view of a buffer. `new_checked` refuses a buffer
//!   too short for the header (or whose fields contradict themselves) with an [`Error`];
//!   `new_unchecked` is for buffers the caller has already sized (the senders' frames, whose
//!   layout is fixed once per run), so nothing is validated per packet. Getters read fields,
//!   setters (for `T: AsMut<[u8]>`) write them;
//! - `Repr`: the header's meaning as plain values, with `parse` (from a checked view) and
//!   `emit` (into a view), so a frame can be built and read back through the same code.
//!
//! The frame writers ([`udp4`], the walk's `pg::generate::write_frame`) and the receiver's
//! classifier (`rx::frame`) all go through these modules; no other code spells a header
//! length. [`udp4`] is the fast path's template: built once from the `Repr`s, then patched
//! per packet at the offsets named here.

/// What every header module's `Packet` view shares: the struct, `new_unchecked`,
/// `new_checked` (through the module's `check_len`), `into_inner` and `AsRef<[u8]>`. With
/// `fixed`, also a `check_len` that only asks for `HEADER_LEN` bytes.
macro_rules! packet_view {
    ($what:literal) => {
        #[doc = concat!("A zero-copy view of ", $what, ".")]
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct Packet<T: AsRef<[u8]>> {
            buffer: T,
        }

        impl<T: AsRef<[u8]>> Packet<T> {
            /// A view without checks, for buffers the caller has sized itself (a frame
            /// whose layout is fixed): at least `HEADER_LEN` bytes, and any length field it
            /// reads back is one it wrote. Getters on a shorter buffer panic.
            #[inline]
            pub const fn new_unchecked(buffer: T) -> Self {
                Packet { buffer }
            }

            /// A view of a buffer that `check_len` accepts: every getter then reads inside
            /// the buffer.
            pub fn new_checked(buffer: T) -> $crate::wire::Result<Self> {
                let p = Self::new_unchecked(buffer);
                p.check_len()?;
                Ok(p)
            }

            pub fn into_inner(self) -> T {
                self.buffer
            }
        }

        impl<T: AsRef<[u8]>> AsRef<[u8]> for Packet<T> {
            fn as_ref(&self) -> &[u8] {
                self.buffer.as_ref()
            }
        }
    };
    (fixed $what:literal) => {
        packet_view!($what);

        impl<T: AsRef<[u8]>> Packet<T> {
            /// [`Error::Truncated`](crate::wire::Error::Truncated) if the buffer is shorter than
            /// `HEADER_LEN`.
            pub fn check_len(&self) -> $crate::wire::Result<()> {
                if self.buffer.as_ref().len() < HEADER_LEN {
                    return Err($crate::wire::Error::Truncated);
                }
                Ok(())
            }
        }
    };
}

pub mod checksum;
pub mod ethernet;
pub mod fcs;
pub mod ipv4;
pub mod ipv6;
pub mod mac;
pub mod mpls;
pub mod pktgen_hdr;
pub mod signature;
pub mod tcp;
pub mod udp;
pub mod udp4;
pub mod vlan;

pub use mac::{BadMac, MacAddr};
pub use pktgen_hdr::{PKTGEN_HDR_LEN, PKTGEN_MAGIC, PktgenHdr};
pub use udp4::{FrameSizeError, FrameSpec, PacketFields, Udp4Template};

use std::fmt;

/// Ethernet header length (no VLAN tag).
pub const ETH_HLEN: usize = ethernet::HEADER_LEN;
/// IPv4 header without options.
pub const IPV4_HLEN: usize = ipv4::HEADER_LEN;
/// IPv6 fixed header.
pub const IPV6_HLEN: usize = ipv6::HEADER_LEN;
/// UDP header.
pub const UDP_HLEN: usize = udp::HEADER_LEN;
/// TCP header without options.
pub const TCP_HLEN: usize = tcp::HEADER_LEN;

/// Bytes of the IP header without options: IPv6's fixed header, or IPv4's.
pub const fn ip_header_len(ipv6: bool) -> usize {
    if ipv6 { IPV6_HLEN } else { IPV4_HLEN }
}
/// pktgen's IPv4 TTL and IPv6 hop limit.
pub const PKTGEN_TTL: u8 = 32;
/// Smallest Ethernet frame without FCS (ETH_ZLEN): shorter frames are padded by NICs.
pub const ETH_ZLEN: usize = 60;
/// Bytes a frame occupies on the wire beyond `pkt_size`: FCS 4 + preamble/SFD 8 + IFG 12.
pub const WIRE_OVERHEAD: usize = 24;

/// IP protocol numbers (IPv4's protocol, IPv6's next header).
pub mod ip_protocol {
    pub const TCP: u8 = 6;
    pub const UDP: u8 = 17;
}

/// Why a buffer is not a valid header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    /// The buffer ends inside the header (or inside a length the header announces).
    Truncated,
    /// The header's fields contradict themselves (a wrong version, a length below the
    /// header, a checksum that does not verify, a foreign magic).
    Malformed,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Error::Truncated => "the buffer ends inside a header",
            Error::Malformed => "a header's fields contradict themselves",
        })
    }
}

impl std::error::Error for Error {}

/// The result of checking or parsing a header.
pub type Result<T> = std::result::Result<T, Error>;

/// A field's byte range inside its header.
pub type Field = std::ops::Range<usize>;
/// The bytes after a header.
pub type Rest = std::ops::RangeFrom<usize>;

#[inline]
fn be16(b: &[u8], f: Field) -> u16 {
    u16::from_be_bytes([b[f.start], b[f.start + 1]])
}

#[inline]
fn be32(b: &[u8], f: Field) -> u32 {
    u32::from_be_bytes([b[f.start], b[f.start + 1], b[f.start + 2], b[f.start + 3]])
}

#[inline]
fn put16(b: &mut [u8], f: Field, v: u16) {
    b[f].copy_from_slice(&v.to_be_bytes());
}

#[inline]
fn put32(b: &mut [u8], f: Field, v: u32) {
    b[f].copy_from_slice(&v.to_be_bytes());
}

#[cfg(test)]
mod tests;
