//! End-to-end: the kernel's own UDP stack receives upktgen's frames on a bound socket, which
//! proves addresses, lengths and both checksums are right; a corrupted checksum is refused.

use crate::common::{lab_template, root_or_skip};
use std::net::UdpSocket;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use upktgen::backend::TxBackend;
use upktgen::backend::af_packet::{AfPacket, AfPacketConfig};
use upktgen::backend::af_xdp::{AfXdp, AfXdpConfig};
use upktgen::backend::tx_ring::{TxRing, TxRingConfig};
use upktgen::lab::{self, Lab, RxMode};
use upktgen::sender::{self, Limits};
use upktgen::stream::{PortRange, Stream};
use upktgen::sys::{self, netns, packet::PacketSocket};
use upktgen::txq::RingConfig;
use upktgen::wire::{PktgenHdr, Udp4Template};

const PORT: u16 = 9;

fn udp_sock(lab: &Lab) -> UdpSocket {
    netns::in_netns(&lab.rx_path(), || {
        let s = UdpSocket::bind((lab::RX_IP, PORT))?;
        s.set_read_timeout(Some(Duration::from_secs(2)))?;
        Ok(s)
    })
    .unwrap()
}

/// Runs `f` in the lab's sending namespace with the sending interface's index.
fn in_tx<T: Send + 'static>(
    lab: &Lab,
    f: impl FnOnce(u32) -> std::io::Result<T> + Send + 'static,
) -> T {
    netns::in_netns(&lab.tx_path(), move || f(sys::if_nametoindex(lab::TX_IF)?)).unwrap()
}

/// Sends 200 frames through `b` and checks a UDP socket in the receiving namespace gets
/// every one, in order, with the right source, ports and timestamps.
fn send_and_receive<B: TxBackend>(
    lab: &Lab,
    rx: &UdpSocket,
    t: &Udp4Template,
    mut b: B,
    what: &str,
) {
    let count = 200u32;
    let stream = Stream::new(PortRange::new(1000, 1004), PortRange::new(PORT, PORT));
    let mut frames = upktgen::stream::FastFrames::new(t.clone(), stream);
    let limits = Limits {
        count: u64::from(count),
        duration: None,
        delay_ns: 0,
        burst: 1,
        timestamps: true,
        progress: None,
    };
    let before = sys::realtime_ns() / 1000;
    let out = sender::run(&mut b, &mut frames, &limits, &AtomicBool::new(false)).unwrap();
    let after = sys::realtime_ns() / 1000;
    assert_eq!(out.result.sent, u64::from(count), "{what}");
    let mut buf = [0u8; 2048];
    for want_seq in 1..=count {
        let (n, from) = rx
            .recv_from(&mut buf)
            .unwrap_or_else(|e| panic!("{what}: seq {want_seq}: {e}"));
        assert_eq!(n, 18, "{what}: UDP payload of a 60-byte frame");
        assert_eq!(from.ip(), std::net::IpAddr::V4(lab::TX_IP));
        assert_eq!(from.port(), 1000 + (want_seq % 4) as u16, "{what}");
        let h = PktgenHdr::parse(&buf[..n]).expect("pktgen header");
        assert_eq!(h.seq, want_seq, "{what}");
        let us = u64::from(h.tv_sec) * 1_000_000 + u64::from(h.tv_usec);
        assert!(
            us >= before && us <= after,
            "{what}: timestamp {us} outside the run [{before}, {after}]"
        );
    }
    assert_eq!(udp_in_csum_errors(lab), 0, "{what}");
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

fn kernel_udp_socket_receives_every_frame_in_order() {
    if !root_or_skip() {
        return;
    }
    let ring = RingConfig::new(64, 1, 32).unwrap();
    for udp_csum in [false, true] {
        let t = lab_template(udp_csum);
        for kind in ["af_packet", "tx_ring", "af_xdp"] {
            let what = format!("{kind}, UDPCSUM {udp_csum}");
            let lab = Lab::create(RxMode::Stack).unwrap();
            let rx = udp_sock(&lab);
            let frame = t.frame().to_vec();
            match kind {
                "af_packet" => {
                    let b = in_tx(&lab, move |i| {
                        let cfg = AfPacketConfig {
                            batch: 16,
                            sndbuf: None,
                            qdisc_bypass: false,
                        };
                        AfPacket::new(PacketSocket::open(i)?, &frame, cfg)
                    });
                    send_and_receive(&lab, &rx, &t, b, &what);
                }
                "tx_ring" => {
                    let b = in_tx(&lab, move |i| {
                        let cfg = TxRingConfig {
                            ring,
                            batch: 16,
                            qdisc_bypass: true,
                        };
                        TxRing::new(PacketSocket::open(i)?, &frame, cfg)
                    });
                    send_and_receive(&lab, &rx, &t, b, &what);
                }
                _ => {
                    let b = in_tx(&lab, move |i| {
                        let cfg = AfXdpConfig {
                            ring,
                            batch: 16,
                            queue: 0,
                            zerocopy: None,
                        };
                        AfXdp::new(i, &frame, cfg)
                    });
                    send_and_receive(&lab, &rx, &t, b, &what);
                }
            }
        }
    }
}

fn a_corrupted_udp_checksum_is_refused_by_the_kernel() {
    if !root_or_skip() {
        return;
    }
    // The control for the test above: the receiving stack does verify checksums.
    let lab = Lab::create(RxMode::Stack).unwrap();
    let rx = udp_sock(&lab);
    rx.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let t = lab_template(true);
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

pub(crate) const TESTS: &[crate::harness::Test] = crate::tests![
    kernel_udp_socket_receives_every_frame_in_order,
    a_corrupted_udp_checksum_is_refused_by_the_kernel,
];
