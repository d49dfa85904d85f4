//! End-to-end: the kernel's own UDP stack receives upktgen's frames on a bound socket, which
//! proves addresses, lengths and both checksums are right; a corrupted checksum is refused.

mod common;
use common::root_or_skip;
use std::net::UdpSocket;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use upktgen::backend::af_packet::{AfPacket, AfPacketConfig};
use upktgen::lab::{self, Lab, RxMode};
use upktgen::sender::{self, Limits};
use upktgen::stream::{PortRange, Stream};
use upktgen::sys::{self, netns, packet::PacketSocket};
use upktgen::wire::{FrameSpec, PktgenHdr, Udp4Template};

const PORT: u16 = 9;

fn udp_sock(lab: &Lab) -> UdpSocket {
    netns::in_netns(&lab.rx_path(), || {
        let s = UdpSocket::bind((lab::RX_IP, PORT))?;
        s.set_read_timeout(Some(Duration::from_secs(2)))?;
        Ok(s)
    })
    .unwrap()
}

fn backend(lab: &Lab, t: &Udp4Template) -> AfPacket {
    let sock = netns::in_netns(&lab.tx_path(), || {
        PacketSocket::open(sys::if_nametoindex(lab::TX_IF)?)
    })
    .unwrap();
    AfPacket::new(
        sock,
        t.frame(),
        AfPacketConfig {
            batch: 16,
            sndbuf: None,
            qdisc_bypass: false,
        },
    )
    .unwrap()
}

fn template(udp_csum: bool) -> Udp4Template {
    Udp4Template::new(&FrameSpec {
        dst_mac: lab::RX_MAC,
        src_mac: lab::TX_MAC,
        src_ip: lab::TX_IP,
        dst_ip: lab::RX_IP,
        tos: 0,
        pkt_size: 60,
        udp_csum,
    })
    .unwrap()
}

fn udp_in_csum_errors(lab: &Lab) -> u64 {
    let snmp = netns::in_netns(&lab.rx_path(), || {
        std::fs::read_to_string("/proc/thread-self/net/snmp")
    })
    .unwrap();
    let mut udp = snmp.lines().filter(|l| l.starts_with("Udp:"));
    let names: Vec<&str> = udp.next().unwrap().split_whitespace().collect();
    let vals: Vec<&str> = udp.next().unwrap().split_whitespace().collect();
    let i = names.iter().position(|n| *n == "InCsumErrors").unwrap();
    vals[i].parse().unwrap()
}

#[test]
fn kernel_udp_socket_receives_every_frame_in_order() {
    if !root_or_skip() {
        return;
    }
    for udp_csum in [false, true] {
        let lab = Lab::create(RxMode::Stack).unwrap();
        let rx = udp_sock(&lab);
        let t = template(udp_csum);
        let mut b = backend(&lab, &t);
        let mut stream = Stream::new(PortRange::new(1000, 1004), PortRange::new(PORT, PORT));
        let limits = Limits {
            count: 200,
            duration: None,
            delay_ns: 0,
            timestamps: true,
        };
        let before = sys::realtime_ns() / 1000;
        let out = sender::run(&mut b, &t, &mut stream, &limits, &AtomicBool::new(false)).unwrap();
        let after = sys::realtime_ns() / 1000;
        assert_eq!(out.result.sent, 200);
        let mut buf = [0u8; 2048];
        for want_seq in 1..=200u32 {
            let (n, from) = rx
                .recv_from(&mut buf)
                .unwrap_or_else(|e| panic!("seq {want_seq} (csum {udp_csum}): {e}"));
            assert_eq!(n, 18, "UDP payload of a 60-byte frame");
            assert_eq!(from.ip(), std::net::IpAddr::V4(lab::TX_IP));
            assert_eq!(from.port(), 1000 + ((want_seq - 1) % 4) as u16);
            let h = PktgenHdr::parse(&buf[..n]).expect("pktgen header");
            assert_eq!(h.seq, want_seq);
            let us = u64::from(h.tv_sec) * 1_000_000 + u64::from(h.tv_usec);
            assert!(
                us >= before && us <= after,
                "timestamp {us} outside the run [{before}, {after}]"
            );
        }
        assert_eq!(udp_in_csum_errors(&lab), 0);
    }
}

#[test]
fn a_corrupted_udp_checksum_is_refused_by_the_kernel() {
    if !root_or_skip() {
        return;
    }
    // The control for the test above: the receiving stack does verify checksums.
    let lab = Lab::create(RxMode::Stack).unwrap();
    let rx = udp_sock(&lab);
    rx.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let t = template(true);
    let mut frame = t.frame().to_vec();
    t.write(
        &mut frame,
        &upktgen::wire::PacketFields {
            ip_id: 1,
            udp_src: 9,
            udp_dst: PORT,
            seq: 1,
            tv_sec: 1,
            tv_usec: 1,
        },
    );
    frame[40] ^= 0x5a; // UDP checksum
    let mut b = AfPacket::new(
        netns::in_netns(&lab.tx_path(), || {
            PacketSocket::open(sys::if_nametoindex(lab::TX_IF)?)
        })
        .unwrap(),
        &frame,
        AfPacketConfig {
            batch: 1,
            sndbuf: None,
            qdisc_bypass: false,
        },
    )
    .unwrap();
    use upktgen::backend::TxBackend;
    let stop = AtomicBool::new(false);
    assert_eq!(b.reserve(1, &stop).unwrap(), 1);
    assert_eq!(b.submit(1, &stop).unwrap().sent, 1);
    let mut buf = [0u8; 64];
    assert!(
        rx.recv_from(&mut buf).is_err(),
        "a frame with a bad checksum was delivered"
    );
    assert_eq!(udp_in_csum_errors(&lab), 1);
}
