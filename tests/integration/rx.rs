//! End-to-end: upktgen's receiver against real loss. An nftables netdev-ingress rule on
//! veth-rx drops every Nth frame (`numgen inc mod N`); the receiver's loss figure must equal
//! the rule's counter exactly. And a run without loss sees every sequence number once.
//!
//! The AF_XDP receiver takes frames in XDP, which runs *before* netdev ingress: a rule
//! there would never see them. Its loss test drops on the sending side instead, on
//! veth-tx's netdev egress hook (Linux 5.16+), which the af_packet sender's frames pass
//! through (no QDISC_BYPASS) before they cross the pair.

use crate::common::{json, lab_template, root_or_skip, stderr, stdout, upktgen};
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use upktgen::backend::af_packet::{AfPacket, AfPacketConfig};
use upktgen::lab::receiver::{LabReceiver, config};
use upktgen::lab::{self, Lab, RxMode};
use upktgen::rx::recv::{RxBackend, RxConfig};
use upktgen::sender::{self, Limits};
use upktgen::stream::{PortRange, Stream};
use upktgen::sys::{self, netns, packet::PacketSocket};

use crate::common::nft::nft_or_skip;

/// Installs `numgen inc mod n == n-1 counter drop` on veth-rx's netdev ingress.
fn drop_every_nth(lab: &Lab, n: u32) {
    crate::common::nft::drop_every_nth(&lab.rx_ns, "ingress", lab::RX_IF, n);
}

/// The same rule on veth-tx's netdev egress, before the frames cross the pair.
fn drop_every_nth_on_egress(lab: &Lab, n: u32) {
    crate::common::nft::drop_every_nth(&lab.tx_ns, "egress", lab::TX_IF, n);
}

/// The packets counted by the drop rule.
fn nft_dropped(lab: &Lab) -> u64 {
    nft_dropped_in(&lab.rx_ns)
}

fn nft_dropped_in(ns: &str) -> u64 {
    crate::common::nft::dropped(ns)
}

/// Sends `count` frames from veth-tx with af_packet, as fast as it goes.
fn send(lab: &Lab, count: u64) -> u64 {
    send_paced(lab, count, 0)
}

/// Sends `count` frames from veth-tx with af_packet, `delay_ns` apart (0: as fast as it goes).
fn send_paced(lab: &Lab, count: u64, delay_ns: u64) -> u64 {
    send_with(lab, count, delay_ns, 64).0
}

/// Sends `count` frames, `batch` per sendmmsg; returns (sent, errors): frames the kernel
/// refused at send time (an egress drop) are errors, and their sequence numbers are spent.
fn send_with(lab: &Lab, count: u64, delay_ns: u64, batch: usize) -> (u64, u64) {
    let t = lab_template(false);
    let frame = t.frame().to_vec();
    let mut b = netns::in_netns(&lab.tx_path(), move || {
        let cfg = AfPacketConfig {
            batch,
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
    let stream = Stream::new(PortRange::new(1000, 1016), PortRange::new(9, 9));
    let mut frames = upktgen::stream::FastFrames::new(t, stream);
    let limits = Limits {
        count,
        duration: None,
        delay_ns,
        burst: 1,
        timestamps: true,
        progress: None,
    };
    let out = sender::run(&mut b, &mut frames, &limits, &AtomicBool::new(false)).unwrap();
    (out.result.sent, out.result.errors)
}

/// Waits until a packet socket bound to ETH_P_IP (our receiver) exists in namespace `ns`.
fn wait_for_ipv4_packet_socket(ns: &str) {
    let t0 = std::time::Instant::now();
    loop {
        let o = Command::new("ip")
            .args(["netns", "exec", ns, "cat", "/proc/net/packet"])
            .output()
            .unwrap();
        let t = String::from_utf8_lossy(&o.stdout).into_owned();
        if t.lines()
            .skip(1)
            .any(|l| l.split_whitespace().nth(3) == Some("0800"))
        {
            return;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "the receiver did not start: {t}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn receiver_loss_equals_the_nftables_drop_counter() {
    if !root_or_skip() || !nft_or_skip() {
        return;
    }
    let lab = Lab::create(RxMode::Stack).unwrap();
    drop_every_nth(&lab, 7);
    // Blocks handed over after 64 ms, not 4: a block then fills (about 2,000 frames) before
    // it is retired, and the 64 blocks hold over a second of traffic; this test is about the
    // rule's drops, not about a receiver starved by the tests beside it.
    let mut cfg = config(false);
    cfg.ring.retire_ms = 64;
    let rx = LabReceiver::start(&lab.rx_path(), cfg).unwrap();
    let count = 70_000;
    // Paced at 100 kpps: the lab tests beside this one must not starve the receiver into
    // ring drops (which it would report, but this test is about the rule's drops).
    assert_eq!(send_paced(&lab, count, 10_000), count);
    let r = rx.finish(count).unwrap();
    let dropped = nft_dropped(&lab);
    assert_eq!(dropped, count / 7, "the rule drops every 7th");
    let t = &r.sink.totals;
    // The 7th, 14th, ... 70000th frames are dropped; 70000 is the last one sent, so the
    // sink's holes are every drop but that last one, and the last received is 69999.
    assert_eq!(t.lost + 1, dropped, "{t:?}");
    assert_eq!(r.sink.flows.len(), 1);
    assert_eq!(r.sink.flows[0].last_seq, Some(69_999));
    assert_eq!(r.sink.flows[0].first_seq, Some(1));
    assert_eq!(t.received, count - dropped);
    assert_eq!((t.duplicates, t.reordered, t.restarts), (0, 0, 0));
    assert_eq!(r.frames.pktgen, count - dropped);
    assert_eq!(r.ring.drops, 0, "the receive ring overflowed");
    let lat = r.sink.latency.expect("latency samples");
    assert_eq!(lat.count, count - dropped);
    assert!(lat.min_ns <= lat.p50_ns && lat.p50_ns <= lat.max_ns);
}

fn a_tap_sees_frames_before_nftables_drops_them() {
    if !root_or_skip() || !nft_or_skip() {
        return;
    }
    let lab = Lab::create(RxMode::Stack).unwrap();
    drop_every_nth(&lab, 5);
    let mut cfg: RxConfig = config(false);
    cfg.ring.all_frames = true;
    let rx = LabReceiver::start(&lab.rx_path(), cfg).unwrap();
    let count = 10_000;
    assert_eq!(send(&lab, count), count);
    let r = rx.finish(count).unwrap();
    assert_eq!(nft_dropped(&lab), count / 5);
    assert_eq!(
        r.sink.totals.received, count,
        "ETH_P_ALL taps run before ingress hooks"
    );
    assert_eq!(r.sink.totals.lost, 0);
}

fn rx_command_counts_loss_and_reports_on_ctrl_c() {
    if !root_or_skip() || !nft_or_skip() {
        return;
    }
    let lab = Lab::create(RxMode::Stack).unwrap();
    drop_every_nth(&lab, 10);
    let child = Command::new("ip")
        .args(["netns", "exec", &lab.rx_ns])
        .arg(env!("CARGO_BIN_EXE_upktgen"))
        .args([
            "rx",
            "--dev",
            lab::RX_IF,
            "--rx-backend",
            "af_packet",
            "--json",
            "--hist",
            "--expect-first",
            "1",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_ipv4_packet_socket(&lab.rx_ns);
    let count = 20_001;
    assert_eq!(send(&lab, count), count);
    std::thread::sleep(Duration::from_millis(300));
    let st = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = json(&o);
    let dropped = nft_dropped(&lab);
    assert_eq!(dropped, 2000);
    assert_eq!(j["stopped_by"], "interrupted");
    assert_eq!(j["frames"]["pktgen"], count - dropped);
    assert_eq!(j["sink"]["totals"]["lost"], dropped, "{}", stdout(&o));
    assert_eq!(j["sink"]["flows"][0]["first_seq"], 1);
    assert_eq!(j["sink"]["flows"][0]["last_seq"], count);
    assert_eq!(j["ring"]["drops"], 0);
    let hist = j["sink"]["histogram"]
        .as_array()
        .expect("--hist keeps the histogram");
    let n: u64 = hist.iter().map(|b| b[1].as_u64().unwrap()).sum();
    assert_eq!(n, count - dropped);
}

fn rx_analyze_run_sees_every_sequence_number_once() {
    if !root_or_skip() {
        return;
    }
    // Paced at 100 kpps, a third of what the receiver keeps up with alone, so that other
    // tests running beside this one cannot starve it into ring drops (which it would report,
    // as the overflow test shows, but this test is about seeing every number once).
    for backend in ["af_xdp", "af_packet"] {
        let o = upktgen(&[
            "run",
            "--rx-analyze",
            "--rx-backend",
            backend,
            "--count",
            "50000",
            "--ratep",
            "100000",
            "--json",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let j = json(&o);
        let a = &j["rx_analysis"];
        let t = &a["receiver"]["sink"]["totals"];
        let n = |v: &serde_json::Value| v.as_u64().unwrap();
        let p = &a["path"];
        let receiver_drops = n(&p["socket_ring_drops"]) + n(&p["dropped_before_socket"]);
        if receiver_drops > 0 {
            // A receiver starved by the tests beside it (its ring or fill ring ran out): then
            // every number is still accounted for, each once, received or dropped by it.
            assert_eq!(n(&t["received"]) + receiver_drops, 50_000, "{a}");
            assert_eq!(
                n(&p["seq_lost"]) + n(&p["tail_lost"]),
                receiver_drops,
                "{a}"
            );
            for k in ["duplicates", "reordered"] {
                assert_eq!(t[k], 0, "{k}: {a}");
            }
            for k in ["not_transmitted", "lost_between_veth_ends"] {
                assert_eq!(p[k], 0, "{k}: {a}");
            }
            continue;
        }
        assert_eq!(t["received"], 50_000, "{a}");
        assert_eq!(t["lost"], 0);
        assert_eq!(t["duplicates"], 0);
        assert_eq!(t["reordered"], 0);
        let f = &a["receiver"]["sink"]["flows"][0];
        assert_eq!(
            (f["first_seq"].as_u64(), f["last_seq"].as_u64()),
            (Some(1), Some(50_000))
        );
        assert_eq!(a["receiver"]["ring"]["drops"], 0);
        assert_eq!(a["receiver"]["backend"], backend);
        assert_eq!(a["path"]["backend"], backend);
        if backend == "af_xdp" {
            let x = &a["receiver"]["xdp"];
            assert_eq!(x["zero_copy"], false, "veth has no zero-copy: {x}");
            assert_eq!(x["counters"]["redirected"], 50_000, "{x}");
            assert_eq!(x["counters"]["socket"]["rx_dropped"], 0, "{x}");
            assert_eq!(a["path"]["xdp_unaccounted"], 0, "{a}");
        } else {
            assert!(a["receiver"]["xdp"].is_null());
        }
        assert_eq!(
            a["receiver"]["frames"]["frames"], 50_000,
            "only upktgen's frames in the lab"
        );
        for k in [
            "not_transmitted",
            "lost_between_veth_ends",
            "dropped_before_socket",
            "socket_ring_drops",
            "seq_lost",
            "tail_lost",
        ] {
            assert_eq!(a["path"][k], 0, "{k}: {a}");
        }
        assert_eq!(j["target"]["lab_rx"], "stack");
        let lat = &a["receiver"]["sink"]["latency"];
        assert_eq!(lat["count"], 50_000);
    }
    // And the text report names the path.
    let o = upktgen(&["run", "--rx-analyze", "--count", "1000"]);
    let t = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        t.contains("Sequence:    1 flow(s), seq 1..1000: received 1000, lost 0"),
        "{t}"
    );
    assert!(
        t.contains("Path:        sent 1000 -> veth-tx tx_packets 1000"),
        "{t}"
    );
    assert!(t.contains("Latency:     us min"), "{t}");
}

fn rx_analyze_is_refused_on_a_named_device() {
    let o = upktgen(&[
        "run",
        "--rx-analyze",
        "--dev",
        "lo",
        "--dst",
        "127.0.0.1",
        "--dst-mac",
        "00:00:00:00:00:01",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("--rx-analyze"), "{}", stderr(&o));
}

fn ring_drops_are_counted_exactly() {
    if !root_or_skip() {
        return;
    }
    // One 4 KiB block (about 28 frames): while the receiver reads it, the kernel has nowhere
    // to put arriving frames and drops them, counting each in PACKET_STATISTICS.
    let lab = Lab::create(RxMode::Stack).unwrap();
    let mut cfg: RxConfig = config(false);
    cfg.ring.block_size = 4096;
    cfg.ring.blocks = 1;
    let rx = LabReceiver::start(&lab.rx_path(), cfg).unwrap();
    let count = 50_000;
    assert_eq!(send(&lab, count), count);
    let r = rx.finish(count).unwrap();
    let f = &r.sink.flows[0];
    assert!(r.ring.drops > 0, "a one-block ring kept up: {:?}", r.ring);
    assert_eq!(r.ring.packets + r.ring.drops, count, "{:?}", r.ring);
    assert_eq!(r.frames.frames, r.ring.packets);
    // Every frame the ring dropped is a sequence hole, or after the last one received.
    let tail = count - u64::from(f.last_seq.unwrap());
    assert_eq!(
        r.sink.totals.lost + tail,
        r.ring.drops,
        "{:?}",
        r.sink.totals
    );
}

fn rx_bad_input_is_one_line_before_anything_is_received() {
    let o = upktgen(&["rx", "--dev", "lo", "--block-size", "1000"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "upktgen: --block-size 1000: needs a power of two of at least 4096\n"
    );
    let o = upktgen(&["rx", "--dev", "lo", "--ring-blocks", "0"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("--ring-blocks 0"), "{}", stderr(&o));
    assert_eq!(upktgen(&["rx"]).status.code(), Some(2), "--dev is required");
    if !root_or_skip() {
        return;
    }
    let o = upktgen(&["rx", "--dev", "nosuch0"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), "upktgen: --dev nosuch0: no such interface\n");
}

fn the_xdp_drop_sink_counts_every_frame() {
    if !root_or_skip() {
        return;
    }
    for backend in ["af_packet", "xdp_live"] {
        let o = upktgen(&["run", "--backend", backend, "--count", "100000", "--json"]);
        assert!(o.status.success(), "{backend}: {}", stderr(&o));
        let j = json(&o);
        assert_eq!(j["xdp_sink_packets"], 100_000, "{backend}");
        assert_eq!(j["reconciliation"]["rx_packets"], 100_000, "{backend}");
    }
    let o = upktgen(&["run", "--count", "1000"]);
    let t = stdout(&o);
    assert!(
        t.contains("Sink:        1000 counted by the XDP drop program on veth-rx (rx_packets - counted = 0)"),
        "{t}"
    );
    // The stack receiver has no counter.
    let o = upktgen(&["run", "--lab-rx", "stack", "--count", "1000", "--json"]);
    assert!(json(&o)["xdp_sink_packets"].is_null());
}

fn an_interrupted_rx_analyze_run_still_reports_the_receiver() {
    if !root_or_skip() {
        return;
    }
    let t = crate::common::interrupt_lab_run(&[
        "run",
        "--rx-analyze",
        "--rx-backend",
        "af_packet",
        "--count",
        "0",
    ]);
    assert!(t.contains("Receiver:    af_packet TPACKET_V3"), "{t}");
    assert!(t.contains(", lost 0, duplicated 0, reordered 0"), "{t}");
    assert!(
        t.contains("sequence holes 0, after the last received 0"),
        "{t}"
    );
}

fn an_interrupted_af_xdp_rx_analyze_run_reconciles_and_leaves_nothing() {
    if !root_or_skip() {
        return;
    }
    // At full rate a debug-build receiver may drop: whatever it drops must be named.
    let t = crate::common::interrupt_lab_run(&[
        "run",
        "--rx-analyze",
        "--rx-backend",
        "af_xdp",
        "--count",
        "0",
    ]);
    assert!(t.contains("Receiver:    af_xdp copy mode"), "{t}");
    assert!(t.contains("redirected but unaccounted 0"), "{t}");
}

fn af_xdp_receiver_loss_equals_the_egress_drop_counter() {
    if !root_or_skip() || !nft_or_skip() {
        return;
    }
    let lab = Lab::create(RxMode::Stack).unwrap();
    drop_every_nth_on_egress(&lab, 7);
    let cfg = RxConfig {
        backend: RxBackend::AfXdp,
        ..config(false)
    };
    let rx = LabReceiver::start(&lab.rx_path(), cfg).unwrap();
    // Paced at 50 kpps so that a debug-build receiver beside other tests keeps up: its
    // own drops would be reported (XDP_STATISTICS), but this test is about the rule's.
    // An egress drop makes the send fail (pktgen's errors): one frame per sendmmsg keeps
    // the sender's own accounting exact, so the test can check it too.
    let count = 35_000;
    let (sent, errors) = send_with(&lab, count, 20_000, 1);
    let r = rx.finish(sent).unwrap();
    let dropped = nft_dropped_in(&lab.tx_ns);
    assert_eq!(dropped, count / 7, "the rule drops every 7th");
    assert_eq!((sent, errors), (count - dropped, dropped));
    let x = r.xdp.expect("the af_xdp receiver reports its XDP counters");
    assert_eq!(x.counters.socket.dropped(), 0, "the sockets dropped: {x:?}");
    assert_eq!(x.counters.redirected, count - dropped, "{x:?}");
    assert!(!x.zero_copy, "veth has no zero-copy");
    let t = &r.sink.totals;
    // The 7th, 14th, ... 35000th frames are dropped; 35000 is the last one sent, so the
    // sink's holes are every drop but that last one, and the last received is 34999.
    assert_eq!(t.lost + 1, dropped, "{t:?}");
    assert_eq!(r.sink.flows[0].last_seq, Some(34_999));
    assert_eq!(r.sink.flows[0].first_seq, Some(1));
    assert_eq!(t.received, count - dropped);
    assert_eq!((t.duplicates, t.reordered, t.restarts), (0, 0, 0));
    assert_eq!(r.frames.pktgen, count - dropped);
}

/// Whether veth-rx in `ns` has an XDP program attached (`ip link show` says `xdp`).
fn has_xdp(ns: &str) -> bool {
    let o = Command::new("ip")
        .args(["-n", ns, "link", "show", "dev", lab::RX_IF])
        .output()
        .unwrap();
    let t = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "ip link show: {t}");
    t.contains("prog/xdp")
        || t.split_whitespace()
            .any(|w| w == "xdp" || w == "xdpgeneric")
}

/// Starts `upktgen rx --dev veth-rx --rx-backend af_xdp EXTRA` in the lab's receiving
/// namespace (output piped) and returns once its XDP program is attached.
fn spawn_af_xdp_rx(lab: &Lab, extra: &[&str]) -> std::process::Child {
    let child = Command::new("ip")
        .args(["netns", "exec", &lab.rx_ns])
        .arg(env!("CARGO_BIN_EXE_upktgen"))
        .args(["rx", "--dev", lab::RX_IF, "--rx-backend", "af_xdp"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    while !has_xdp(&lab.rx_ns) {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "the receiver did not attach its program"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

fn af_xdp_rx_stopped_by_sigint_leaves_no_program_and_no_namespace() {
    if !root_or_skip() {
        return;
    }
    let lab = Lab::create(RxMode::Stack).unwrap();
    assert!(
        !has_xdp(&lab.rx_ns),
        "the stack lab has no program of its own"
    );
    let child = spawn_af_xdp_rx(&lab, &["--json", "--expect-first", "1"]);
    let count = 5_000;
    assert_eq!(send_paced(&lab, count, 20_000), count);
    std::thread::sleep(Duration::from_millis(300));
    let st = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());

    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = json(&o);
    assert_eq!(j["stopped_by"], "interrupted");
    assert_eq!(j["backend"], "af_xdp");
    assert_eq!(j["sink"]["totals"]["received"], count, "{}", stdout(&o));
    assert_eq!(j["sink"]["totals"]["lost"], 0);
    assert_eq!(j["xdp"]["counters"]["redirected"], count);
    assert!(!has_xdp(&lab.rx_ns), "the XDP program outlived upktgen rx");
}

fn af_xdp_rx_refuses_what_it_cannot_do() {
    let o = upktgen(&[
        "rx",
        "--dev",
        "lo",
        "--rx-backend",
        "af_xdp",
        "--all-frames",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("--all-frames"), "{}", stderr(&o));
    let o = upktgen(&["rx", "--dev", "lo", "--xsk-frames", "1000"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("--xsk-frames 1000"), "{}", stderr(&o));
}

/// Traffic faster than the receiver reads must not keep it from stopping: `--duration 1s`
/// ends the af_xdp receiver while an xdp_live sender is still flooding it (4 s).
fn a_flooded_af_xdp_receiver_still_stops_at_its_duration() {
    if !root_or_skip() {
        return;
    }
    let lab = Lab::create(RxMode::Stack).unwrap();
    let rx = spawn_af_xdp_rx(&lab, &["--duration", "1s", "--json", "--no-live"]);
    let tx = Command::new("ip")
        .args(["netns", "exec", &lab.tx_ns])
        .arg(env!("CARGO_BIN_EXE_upktgen"))
        .args([
            "run",
            "--dev",
            lab::TX_IF,
            "--dst",
            "10.99.0.2",
            "--dst-mac",
            &lab::RX_MAC.to_string(),
            "--backend",
            "xdp_live",
            "--count",
            "0",
            "--duration",
            "4s",
            "--no-live",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let o = rx.wait_with_output().unwrap();
    // The sender is still running when the receiver has finished.
    let mut tx = tx;
    let sender_still_running = tx.try_wait().unwrap().is_none();
    let _ = tx.wait();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["stopped_by"], "duration", "{j}");
    assert!(
        sender_still_running,
        "the receiver stopped only after the flood ended"
    );
}

pub(crate) const TESTS: &[crate::harness::Test] = crate::tests![
    receiver_loss_equals_the_nftables_drop_counter,
    a_tap_sees_frames_before_nftables_drops_them,
    rx_command_counts_loss_and_reports_on_ctrl_c,
    rx_analyze_run_sees_every_sequence_number_once,
    rx_analyze_is_refused_on_a_named_device,
    ring_drops_are_counted_exactly,
    rx_bad_input_is_one_line_before_anything_is_received,
    the_xdp_drop_sink_counts_every_frame,
    an_interrupted_rx_analyze_run_still_reports_the_receiver,
    an_interrupted_af_xdp_rx_analyze_run_reconciles_and_leaves_nothing,
    af_xdp_receiver_loss_equals_the_egress_drop_counter,
    af_xdp_rx_stopped_by_sigint_leaves_no_program_and_no_namespace,
    af_xdp_rx_refuses_what_it_cannot_do,
    a_flooded_af_xdp_receiver_still_stops_at_its_duration,
];
