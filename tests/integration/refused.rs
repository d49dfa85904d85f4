//! End-to-end: a frame the kernel refuses after the socket. An nftables netdev-egress rule on
//! veth-tx drops every 10th of upktgen's frames (`numgen inc mod 10`), and upktgen's own
//! receiver reads what crosses the pair.
//!
//! - af_packet: each refused frame is one error, counted once, and never sent again (pktgen's
//!   rule): the rule's counter, the Result's errors and the receiver's holes agree. sendmmsg
//!   returns a short count and drops the refused frame's error; before, the frame was sent
//!   again and most drops went uncounted.
//! - tx_ring: the kernel puts a refused frame back in the ring; the frame goes again with the
//!   next kick and the run ends (it used to wait for that frame forever): no error, no hole.

use crate::common::lab_template;
use crate::common::nft::{drop_every_nth, dropped, nft_or_skip};
use crate::common::root_or_skip;
use std::sync::atomic::AtomicBool;
use upktgen::backend::TxBackend;
use upktgen::backend::af_packet::{AfPacket, AfPacketConfig};
use upktgen::backend::tx_ring::{TxRing, TxRingConfig};
use upktgen::lab::receiver::{LabReceiver, config};
use upktgen::lab::{self, Lab, RxMode};
use upktgen::rx::recv::{RxBackend, RxConfig};
use upktgen::sender::{self, Limits, SendOutcome};
use upktgen::stream::{FastFrames, PortRange, Stream};
use upktgen::sys::{self, netns, packet::PacketSocket};
use upktgen::txq::RingConfig;

/// Frames each test sends.
const COUNT: u64 = 200_000;

/// Sends COUNT frames from veth-tx on `b`, in bursts of 64 (one sendmmsg or kick each) at
/// 100 kpps, so that a debug-build receiver beside other tests keeps up.
fn send<B: TxBackend>(mut b: B) -> SendOutcome {
    let stream = Stream::new(PortRange::new(1000, 1016), PortRange::new(9, 9));
    let mut frames = FastFrames::new(lab_template(false), stream);
    let limits = Limits {
        count: COUNT,
        duration: None,
        delay_ns: 10_000,
        burst: 64,
        timestamps: true,
        progress: None,
    };
    sender::run(&mut b, &mut frames, &limits, &AtomicBool::new(false)).unwrap()
}

/// The lab with the egress rule and upktgen's AF_XDP receiver on veth-rx.
fn lab_with_rule() -> (Lab, LabReceiver) {
    let lab = Lab::create(RxMode::Stack).unwrap();
    drop_every_nth(&lab.tx_ns, "egress", lab::TX_IF, 10);
    let cfg = RxConfig {
        backend: RxBackend::AfXdp,
        ..config(false)
    };
    let rx = LabReceiver::start(&lab.rx_path(), cfg).unwrap();
    (lab, rx)
}

fn af_packet_counts_each_refused_frame_once_and_sends_it_once() {
    if !root_or_skip() || !nft_or_skip() {
        return;
    }
    let (lab, rx) = lab_with_rule();
    let frame = lab_template(false).frame().to_vec();
    let b = netns::in_netns(&lab.tx_path(), move || {
        let cfg = AfPacketConfig {
            batch: 64,
            sndbuf: None,
            qdisc_bypass: false,
        };
        AfPacket::new(
            PacketSocket::open(sys::if_nametoindex(lab::TX_IF)?)?,
            &frame,
            cfg,
        )
    })
    .unwrap();
    let out = send(b);
    let r = rx.finish(out.result.sent).unwrap();
    let rule = dropped(&lab.tx_ns);
    // Every 10th frame handed over is refused, once: the rule saw each frame once.
    assert_eq!(rule, COUNT / 10, "{:?}", out.result);
    assert_eq!(out.result.errors, rule, "{:?}", out.result);
    assert_eq!(out.result.sent, COUNT - rule);
    let x = r
        .xdp
        .as_ref()
        .expect("the af_xdp receiver reports its XDP counters");
    assert_eq!(
        x.counters.socket.dropped(),
        0,
        "the receiver dropped: {x:?}"
    );
    let t = &r.sink.totals;
    // Frames 10, 20, ... 200000 are refused: every one a hole but the last, which is the
    // run's last frame (nothing after it shows it missing).
    assert_eq!(t.lost + 1, rule, "{t:?}");
    assert_eq!(r.sink.flows[0].last_seq, Some(COUNT as u32 - 1));
    assert_eq!(t.received, COUNT - rule);
    assert_eq!((t.duplicates, t.reordered), (0, 0), "{t:?}");
}

fn tx_ring_sends_a_refused_frame_again_and_the_run_ends() {
    if !root_or_skip() || !nft_or_skip() {
        return;
    }
    let (lab, rx) = lab_with_rule();
    let frame = lab_template(false).frame().to_vec();
    let b = netns::in_netns(&lab.tx_path(), move || {
        let cfg = TxRingConfig {
            ring: RingConfig::new(1024, 1, 512).unwrap(),
            batch: 64,
            qdisc_bypass: true,
        };
        TxRing::new(
            PacketSocket::open(sys::if_nametoindex(lab::TX_IF)?)?,
            &frame,
            cfg,
        )
    })
    .unwrap();
    let out = send(b);
    let r = rx.finish(out.result.sent).unwrap();
    let rule = dropped(&lab.tx_ns);
    // Each refusal put the frame back; it went on a later kick, so every frame arrived.
    assert!(rule > 0, "the rule dropped nothing");
    assert_eq!((out.result.sent, out.result.errors), (COUNT, 0));
    let t = &r.sink.totals;
    assert_eq!(r.xdp.as_ref().unwrap().counters.socket.dropped(), 0);
    assert_eq!((t.received, t.lost, t.duplicates), (COUNT, 0, 0), "{t:?}");
    assert_eq!(r.sink.flows[0].last_seq, Some(COUNT as u32));
}

pub(crate) const TESTS: &[crate::harness::Test] = crate::tests![
    af_packet_counts_each_refused_frame_once_and_sends_it_once,
    tx_ring_sends_a_refused_frame_again_and_the_run_ends,
];
