//! Ethernet / IPv4 / UDP frames carrying pktgen's header, built once and patched per packet.
//!
//! Layout (no VLAN, no IP options), offsets in bytes:
//! ```text
//!  0 dst MAC | 6 src MAC | 12 ethertype 0x0800
//! 14 IPv4: ver/ihl, tos, tot_len, id(18), frag 0, ttl 32, proto 17, csum(24), src(26), dst(30)
//! 34 UDP: sport(34), dport(36), len(38), csum(40)
//! 42 pktgen header: magic, seq(46), tv_sec(50), tv_usec(54); zero padding to pkt_size
//! ```
//! Per packet only the IP id, the two ports, the sequence number, the timestamp and the
//! checksums change; [`Udp4Template::write`] stores exactly those bytes.

use super::ethernet::{self, ethertype};
use super::{MacAddr, checksum, ip_protocol, ipv4, pktgen_hdr, udp};
use std::net::Ipv4Addr;

/// Offset of the IPv4 header.
pub const OFF_IP: usize = ethernet::HEADER_LEN;
pub const OFF_IP_ID: usize = OFF_IP + ipv4::field::IDENT.start;
pub const OFF_IP_CSUM: usize = OFF_IP + ipv4::field::CHECKSUM.start;
pub const OFF_IP_SRC: usize = OFF_IP + ipv4::field::SRC_ADDR.start;
pub const OFF_IP_DST: usize = OFF_IP + ipv4::field::DST_ADDR.start;
/// Offset of the UDP header.
pub const OFF_UDP: usize = OFF_IP + ipv4::HEADER_LEN;
pub const OFF_UDP_SPORT: usize = OFF_UDP + udp::field::SRC_PORT.start;
pub const OFF_UDP_DPORT: usize = OFF_UDP + udp::field::DST_PORT.start;
pub const OFF_UDP_LEN: usize = OFF_UDP + udp::field::LENGTH.start;
pub const OFF_UDP_CSUM: usize = OFF_UDP + udp::field::CHECKSUM.start;
/// Offset of the UDP payload: pktgen's header.
pub const OFF_PAYLOAD: usize = OFF_UDP + udp::HEADER_LEN;
pub const OFF_SEQ: usize = OFF_PAYLOAD + pktgen_hdr::field::SEQ.start;
pub const OFF_TV_SEC: usize = OFF_PAYLOAD + pktgen_hdr::field::TV_SEC.start;
pub const OFF_TV_USEC: usize = OFF_PAYLOAD + pktgen_hdr::field::TV_USEC.start;

/// Smallest frame that holds the headers and the whole pktgen header.
pub const MIN_FRAME: usize = OFF_PAYLOAD + pktgen_hdr::HEADER_LEN;
/// pktgen's IPv4 TTL.
pub const TTL: u8 = super::PKTGEN_TTL;

/// What stays the same in every frame of a stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameSpec {
    pub dst_mac: MacAddr,
    pub src_mac: MacAddr,
    pub src_ip: Ipv4Addr,
    pub dst_ip: Ipv4Addr,
    pub tos: u8,
    /// Frame length without FCS (pktgen's pkt_size).
    pub pkt_size: usize,
    /// Compute the UDP checksum (pktgen's UDPCSUM); otherwise it is 0.
    pub udp_csum: bool,
}

/// What changes per packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PacketFields {
    pub ip_id: u16,
    pub udp_src: u16,
    pub udp_dst: u16,
    pub seq: u32,
    pub tv_sec: u32,
    pub tv_usec: u32,
}

/// A prepared frame plus the partial checksums of its constant parts.
#[derive(Debug, Clone)]
pub struct Udp4Template {
    frame: Vec<u8>,
    ip_base: u32,
    udp_base: u32,
    udp_csum: bool,
}

/// A frame size an IPv4/UDP frame with pktgen's header cannot have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameSizeError {
    #[error(
        "pkt_size {0}: an IPv4/UDP frame with pktgen's header needs at least {MIN_FRAME} bytes"
    )]
    TooSmall(usize),
    #[error("pkt_size {0}: too large for IPv4")]
    TooLarge(usize),
}

impl Udp4Template {
    /// Builds the constant frame. Fails if `pkt_size` cannot hold the headers.
    pub fn new(spec: &FrameSpec) -> Result<Self, FrameSizeError> {
        if spec.pkt_size < MIN_FRAME {
            return Err(FrameSizeError::TooSmall(spec.pkt_size));
        }
        if spec.pkt_size - OFF_IP > usize::from(u16::MAX) {
            return Err(FrameSizeError::TooLarge(spec.pkt_size));
        }
        let mut f = vec![0u8; spec.pkt_size];
        ethernet::Repr {
            dst_addr: spec.dst_mac,
            src_addr: spec.src_mac,
            ethertype: ethertype::IPV4,
        }
        .emit(&mut ethernet::Packet::new_unchecked(&mut f[..]));
        let udp_len = spec.pkt_size - OFF_UDP;
        let ip = ipv4::Repr {
            src_addr: spec.src_ip,
            dst_addr: spec.dst_ip,
            protocol: ip_protocol::UDP,
            tos: spec.tos,
            // The id varies (written per packet); flags/fragment offset 0 as pktgen sends them.
            ident: 0,
            dont_frag: false,
            more_frags: false,
            frag_offset: 0,
            ttl: TTL,
            payload_len: udp_len,
        };
        let mut ip_hdr = ipv4::Packet::new_unchecked(&mut f[OFF_IP..]);
        ip.emit(&mut ip_hdr);
        // The checksum is written per packet from the base (the sum with id and checksum 0).
        ip_hdr.set_checksum(0);
        let ip_base = checksum::sum(&f[OFF_IP..OFF_UDP]);
        udp::Repr {
            src_port: 0,
            dst_port: 0,
            payload_len: udp_len - udp::HEADER_LEN,
        }
        .emit(&mut udp::Packet::new_unchecked(&mut f[OFF_UDP..]));
        pktgen_hdr::Packet::new_unchecked(&mut f[OFF_PAYLOAD..]).set_magic();
        // Pseudo-header, then the UDP header and payload with every varying field still zero.
        let udp_base = checksum::add(ip.pseudo_header_sum(), checksum::sum(&f[OFF_UDP..]));
        Ok(Udp4Template {
            frame: f,
            ip_base,
            udp_base,
            udp_csum: spec.udp_csum,
        })
    }

    /// The constant frame, used to prefill every buffer once.
    pub fn frame(&self) -> &[u8] {
        &self.frame
    }

    pub fn len(&self) -> usize {
        self.frame.len()
    }

    pub fn is_empty(&self) -> bool {
        self.frame.is_empty()
    }

    /// Writes the varying fields and the checksums into `out`, a buffer prefilled with
    /// [`Self::frame`].
    #[inline]
    pub fn write(&self, out: &mut [u8], p: &PacketFields) {
        debug_assert!(out.len() >= MIN_FRAME);
        let ip_csum = checksum::finish(checksum::add(self.ip_base, u32::from(p.ip_id)));
        out[OFF_IP_ID..OFF_IP_ID + 2].copy_from_slice(&p.ip_id.to_be_bytes());
        out[OFF_IP_CSUM..OFF_IP_CSUM + 2].copy_from_slice(&ip_csum.to_be_bytes());
        out[OFF_UDP_SPORT..OFF_UDP_SPORT + 2].copy_from_slice(&p.udp_src.to_be_bytes());
        out[OFF_UDP_DPORT..OFF_UDP_DPORT + 2].copy_from_slice(&p.udp_dst.to_be_bytes());
        out[OFF_SEQ..OFF_SEQ + 4].copy_from_slice(&p.seq.to_be_bytes());
        out[OFF_TV_SEC..OFF_TV_SEC + 4].copy_from_slice(&p.tv_sec.to_be_bytes());
        out[OFF_TV_USEC..OFF_TV_USEC + 4].copy_from_slice(&p.tv_usec.to_be_bytes());
        if self.udp_csum {
            let mut s = checksum::add(self.udp_base, (u32::from(p.udp_src)) + u32::from(p.udp_dst));
            s = checksum::add_u32(s, p.seq);
            s = checksum::add_u32(s, p.tv_sec);
            s = checksum::add_u32(s, p.tv_usec);
            out[OFF_UDP_CSUM..OFF_UDP_CSUM + 2]
                .copy_from_slice(&checksum::finish_udp(s).to_be_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::PktgenHdr;
    use etherparse::{NetSlice, SlicedPacket, TransportSlice};

    fn spec(size: usize, csum: bool) -> FrameSpec {
        FrameSpec {
            dst_mac: "02:00:00:99:00:02".parse().unwrap(),
            src_mac: "02:00:00:99:00:01".parse().unwrap(),
            src_ip: Ipv4Addr::new(10, 99, 0, 1),
            dst_ip: Ipv4Addr::new(10, 99, 0, 2),
            tos: 0x10,
            pkt_size: size,
            udp_csum: csum,
        }
    }

    fn build(size: usize, csum: bool, p: &PacketFields) -> Vec<u8> {
        let t = Udp4Template::new(&spec(size, csum)).unwrap();
        let mut b = t.frame().to_vec();
        t.write(&mut b, p);
        b
    }

    /// Parsed by an independent parser (etherparse): every field and both checksums.
    #[test]
    fn independent_parser_agrees() {
        let fields = [
            PacketFields {
                ip_id: 0,
                udp_src: 9,
                udp_dst: 9,
                seq: 1,
                tv_sec: 1_700_000_000,
                tv_usec: 123_456,
            },
            PacketFields {
                ip_id: 0xffff,
                udp_src: 65535,
                udp_dst: 1,
                seq: u32::MAX,
                tv_sec: 0,
                tv_usec: 999_999,
            },
            PacketFields {
                ip_id: 0x1234,
                udp_src: 0,
                udp_dst: 0,
                seq: 0x8000_0000,
                tv_sec: 0xffff_ffff,
                tv_usec: 0,
            },
        ];
        for size in [60, 64, 61, 128, 1514] {
            for csum in [false, true] {
                for p in &fields {
                    let b = build(size, csum, p);
                    assert_eq!(b.len(), size);
                    let s = SlicedPacket::from_ethernet(&b).unwrap();
                    let Some(NetSlice::Ipv4(ip)) = &s.net else {
                        panic!("not ipv4")
                    };
                    let h = ip.header();
                    assert_eq!(h.identification(), p.ip_id);
                    assert_eq!(h.ttl(), 32);
                    assert_eq!(h.dcp().value() << 2 | h.ecn().value(), 0x10);
                    assert_eq!(h.source(), [10, 99, 0, 1]);
                    assert_eq!(h.destination(), [10, 99, 0, 2]);
                    assert_eq!(usize::from(h.total_len()), size - 14);
                    let hdr = h.to_header();
                    assert_eq!(hdr.header_checksum, hdr.calc_header_checksum());
                    let Some(TransportSlice::Udp(u)) = &s.transport else {
                        panic!("not udp")
                    };
                    assert_eq!(u.source_port(), p.udp_src);
                    assert_eq!(u.destination_port(), p.udp_dst);
                    assert_eq!(usize::from(u.length()), size - 34);
                    if csum {
                        let want = u.to_header().calc_checksum_ipv4(&hdr, u.payload()).unwrap();
                        assert_eq!(u.checksum(), want, "size {size} {p:?}");
                        assert_ne!(u.checksum(), 0);
                    } else {
                        assert_eq!(u.checksum(), 0);
                    }
                    let ph = PktgenHdr::parse(u.payload()).unwrap();
                    assert_eq!(
                        (ph.seq, ph.tv_sec, ph.tv_usec),
                        (p.seq, p.tv_sec, p.tv_usec)
                    );
                    assert!(u.payload()[16..].iter().all(|&x| x == 0));
                }
            }
        }
    }

    /// Rewriting a buffer used for an earlier packet leaves no trace of the earlier one.
    #[test]
    fn rewrite_is_complete() {
        let t = Udp4Template::new(&spec(60, true)).unwrap();
        let a = PacketFields {
            ip_id: 7,
            udp_src: 1000,
            udp_dst: 2000,
            seq: 5,
            tv_sec: 9,
            tv_usec: 10,
        };
        let b = PacketFields {
            ip_id: 8,
            udp_src: 1001,
            udp_dst: 2001,
            seq: 6,
            tv_sec: 9,
            tv_usec: 11,
        };
        let mut buf = t.frame().to_vec();
        t.write(&mut buf, &a);
        t.write(&mut buf, &b);
        assert_eq!(buf, build(60, true, &b));
    }

    /// A known 60-byte frame, byte for byte (checksums worked out independently), and the
    /// same frame read back through the header modules' views.
    #[test]
    fn known_frame_bytes() {
        #[rustfmt::skip]
        const FRAME: [u8; 60] = [
            0x02, 0x00, 0x00, 0x99, 0x00, 0x02, 0x02, 0x00, 0x00, 0x99, 0x00, 0x01, 0x08, 0x00,
            0x45, 0x10, 0x00, 0x2e, 0x12, 0x34, 0x00, 0x00, 0x20, 0x11, 0x73, 0xb3, 0x0a, 0x63,
            0x00, 0x01, 0x0a, 0x63, 0x00, 0x02, 0x03, 0xe8, 0x00, 0x09, 0x00, 0x1a, 0x3b, 0x03,
            0xbe, 0x9b, 0xe9, 0x55, 0x00, 0x00, 0x00, 0x01, 0x01, 0x02, 0x03, 0x04, 0x00, 0x00,
            0x00, 0x05, 0x00, 0x00,
        ];
        let p = PacketFields {
            ip_id: 0x1234,
            udp_src: 1000,
            udp_dst: 9,
            seq: 1,
            tv_sec: 0x0102_0304,
            tv_usec: 5,
        };
        let b = build(60, true, &p);
        assert_eq!(b, FRAME);
        let ip = ipv4::Packet::new_checked(&b[OFF_IP..]).unwrap();
        let r = ipv4::Repr::parse(&ip).unwrap();
        assert_eq!((r.ident, r.ttl, r.tos), (0x1234, TTL, 0x10));
        let u = udp::Packet::new_checked(ip.payload()).unwrap();
        assert!(u.verify_checksum(r.pseudo_header_sum()));
        assert_eq!(PktgenHdr::parse(u.payload()).unwrap().tv_usec, 5);
    }

    #[test]
    fn too_small_is_an_error() {
        let e = Udp4Template::new(&spec(57, false)).unwrap_err().to_string();
        assert!(e.contains("at least 58"), "{e}");
        assert!(Udp4Template::new(&spec(58, false)).is_ok());
    }
}
