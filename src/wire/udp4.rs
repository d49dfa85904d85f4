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

use super::checksum;
use super::{ETH_HLEN, IPV4_HLEN, MacAddr, PKTGEN_HDR_LEN, PKTGEN_MAGIC, UDP_HLEN};
use std::net::Ipv4Addr;

pub const OFF_IP: usize = ETH_HLEN;
pub const OFF_IP_ID: usize = OFF_IP + 4;
pub const OFF_IP_CSUM: usize = OFF_IP + 10;
pub const OFF_UDP: usize = OFF_IP + IPV4_HLEN;
pub const OFF_UDP_SPORT: usize = OFF_UDP;
pub const OFF_UDP_DPORT: usize = OFF_UDP + 2;
pub const OFF_UDP_CSUM: usize = OFF_UDP + 6;
pub const OFF_PAYLOAD: usize = OFF_UDP + UDP_HLEN;
pub const OFF_SEQ: usize = OFF_PAYLOAD + 4;
pub const OFF_TV_SEC: usize = OFF_PAYLOAD + 8;
pub const OFF_TV_USEC: usize = OFF_PAYLOAD + 12;

/// Smallest frame that holds the headers and the whole pktgen header.
pub const MIN_FRAME: usize = OFF_PAYLOAD + PKTGEN_HDR_LEN;
/// pktgen's IPv4 TTL.
pub const TTL: u8 = 32;

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

impl Udp4Template {
    /// Builds the constant frame. Fails if `pkt_size` cannot hold the headers.
    pub fn new(spec: &FrameSpec) -> Result<Self, String> {
        if spec.pkt_size < MIN_FRAME {
            return Err(format!(
                "pkt_size {}: an IPv4/UDP frame with pktgen's header needs at least {MIN_FRAME} bytes",
                spec.pkt_size
            ));
        }
        if spec.pkt_size - ETH_HLEN > usize::from(u16::MAX) {
            return Err(format!("pkt_size {}: too large for IPv4", spec.pkt_size));
        }
        let mut f = vec![0u8; spec.pkt_size];
        f[0..6].copy_from_slice(&spec.dst_mac.0);
        f[6..12].copy_from_slice(&spec.src_mac.0);
        f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
        let ip_len = (spec.pkt_size - ETH_HLEN) as u16;
        let udp_len = ip_len - IPV4_HLEN as u16;
        let ip = &mut f[OFF_IP..OFF_UDP];
        ip[0] = 0x45;
        ip[1] = spec.tos;
        ip[2..4].copy_from_slice(&ip_len.to_be_bytes());
        // id (4..6) varies; flags/fragment offset 0 as pktgen sends them.
        ip[8] = TTL;
        ip[9] = 17;
        ip[12..16].copy_from_slice(&spec.src_ip.octets());
        ip[16..20].copy_from_slice(&spec.dst_ip.octets());
        let ip_base = checksum::sum(&f[OFF_IP..OFF_UDP]);
        f[OFF_UDP + 4..OFF_UDP + 6].copy_from_slice(&udp_len.to_be_bytes());
        f[OFF_PAYLOAD..OFF_PAYLOAD + 4].copy_from_slice(&PKTGEN_MAGIC.to_be_bytes());
        // Pseudo-header: src, dst, zero+protocol, UDP length; then UDP header and payload
        // with every varying field still zero.
        let mut udp_base = checksum::sum(&spec.src_ip.octets());
        udp_base = checksum::add(udp_base, checksum::sum(&spec.dst_ip.octets()));
        udp_base = checksum::add(udp_base, 17);
        udp_base = checksum::add(udp_base, u32::from(udp_len));
        udp_base = checksum::add(udp_base, checksum::sum(&f[OFF_UDP..]));
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

    #[test]
    fn too_small_is_an_error() {
        let e = Udp4Template::new(&spec(57, false)).unwrap_err();
        assert!(e.contains("at least 58"), "{e}");
        assert!(Udp4Template::new(&spec(58, false)).is_ok());
    }
}
