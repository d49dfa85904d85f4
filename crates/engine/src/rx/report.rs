//! The receiver's report (text and JSON), and its place in a lab run's reconciliation.

use super::backend::{RxKind, XdpReport, XdpRxCounters};
use super::frame::FrameCounters;
use super::sink::SinkReport;
use super::streams::StreamsReport;
use crate::sys::rx_ring::RingStats;
use serde::Serialize;
use std::fmt::Write;

/// Why the receiver stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RxStop {
    Count,
    Duration,
    Interrupted,
    /// In the lab: the sender finished and the ring was drained.
    SenderDone,
}

/// Everything the receiver counted; `--json` prints it whole.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct RxReport {
    /// The receiving host's name, and upktgen's version (for `upktgen merge`; empty in a
    /// report from an agent older than these fields).
    #[serde(default)]
    pub host: String,
    #[serde(default)]
    pub version: String,
    pub device: String,
    /// af_xdp or af_packet.
    pub backend: RxKind,
    pub mode: String,
    /// af_packet: the ring's bytes; af_xdp: the UMEM's, all queues.
    pub ring_bytes: u64,
    pub stopped_by: RxStop,
    pub elapsed_ns: u64,
    pub frames: FrameCounters,
    /// af_packet: PACKET_STATISTICS, frames the ring took and the ones it dropped (ring
    /// full). af_xdp: frames read from the RX rings, and the sockets' drops (XDP_STATISTICS
    /// rx_dropped + rx_ring_full + rx_invalid_descs).
    pub ring: RingStats,
    /// af_xdp only.
    pub xdp: Option<XdpReport>,
    pub sink: SinkReport,
    /// Per stream, by the signature at each frame's end (absent: not counting streams).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<StreamsReport>,
}

/// redirected − (read + dropped by the sockets): frames the program sent to a socket that
/// the socket neither delivered nor counted (left in the ring, or a failed redirect).
fn xdp_unaccounted(c: &XdpRxCounters, read: u64) -> i64 {
    c.redirected as i64 - read as i64 - c.socket.dropped() as i64
}

fn us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1000.0)
}

fn rate(n: u64, ns: u64) -> u64 {
    if ns == 0 {
        0
    } else {
        (u128::from(n) * 1_000_000_000 / u128::from(ns)) as u64
    }
}

impl RxReport {
    /// The text report; with `hist`, the whole latency histogram after it.
    pub fn text(&self, hist: bool) -> String {
        let mut s = String::new();
        let f = &self.frames;
        let stop = match self.stopped_by {
            RxStop::Count => "count reached",
            RxStop::Duration => "duration reached",
            RxStop::Interrupted => "interrupted",
            RxStop::SenderDone => "sender done, ring drained",
        };
        let _ = writeln!(
            s,
            "Receiver:    {} on {} ({} {} KiB); stopped by {stop}",
            // A far end's report: its words are escaped.
            crate::text::printable(&self.mode),
            crate::text::printable(&self.device),
            if self.xdp.is_some() { "UMEM" } else { "ring" },
            self.ring_bytes / 1024
        );
        let _ = writeln!(
            s,
            "Received:    {} frames, {} bytes in {:.3} s ({} pps); {} with the pktgen header",
            f.frames,
            f.bytes,
            self.elapsed_ns as f64 / 1e9,
            rate(f.frames, self.elapsed_ns),
            f.pktgen
        );
        if f.frames != f.pktgen {
            let _ = writeln!(
                s,
                "Other:       not pktgen (UDP without the header) {}, not IPv4/UDP {}, truncated {}, malformed {}",
                f.not_pktgen, f.other, f.truncated, f.malformed
            );
        }
        match &self.xdp {
            None => {
                let late = match self.ring.packets.saturating_sub(f.frames) {
                    0 => String::new(),
                    n => format!(
                        " ({n} taken after the receiver stopped reading, not counted above)"
                    ),
                };
                let _ = writeln!(
                    s,
                    "Ring:        PACKET_STATISTICS: {} taken, {} dropped (ring full), {} freezes{late}",
                    self.ring.packets, self.ring.drops, self.ring.freezes
                );
            }
            Some(x) => {
                let c = &x.counters;
                let _ = writeln!(
                    s,
                    "XDP:         redirected {} to the sockets, passed to the stack {} (no socket on the queue) + {} (not IPv4/UDP)",
                    c.redirected, c.passed_no_socket, c.passed_not_udp
                );
                let k = &c.socket;
                let _ = writeln!(
                    s,
                    "Sockets:     XDP_STATISTICS: rx_dropped {}, rx_ring_full {}, rx_invalid_descs {}, rx_fill_ring_empty_descs {}; read {}{}",
                    k.rx_dropped,
                    k.rx_ring_full,
                    k.rx_invalid_descs,
                    k.rx_fill_ring_empty_descs,
                    f.frames,
                    match xdp_unaccounted(c, f.frames) {
                        0 => String::new(),
                        n => format!(
                            "; redirected but neither read nor counted as dropped: {n} (still in the ring at the end, or a failed redirect)"
                        ),
                    }
                );
            }
        }
        s.push_str(&self.sink_text());
        if let Some(st) = &self.streams {
            s.push_str(&st.text());
        }
        if hist {
            s.push_str(&self.hist_text());
        }
        s
    }

    /// Sequence and latency lines.
    pub fn sink_text(&self) -> String {
        let mut s = String::new();
        let k = &self.sink;
        let t = &k.totals;
        let seqs = match k.flows.as_slice() {
            [one] => format!(
                ", seq {}..{}",
                one.first_seq.map_or("-".into(), |v| v.to_string()),
                one.last_seq.map_or("-".into(), |v| v.to_string())
            ),
            _ => String::new(),
        };
        let _ = writeln!(
            s,
            "Sequence:    {} flow(s){seqs}: received {}, lost {}, duplicated {}, reordered {}",
            k.flows.len(),
            t.received,
            t.lost,
            t.duplicates,
            t.reordered
        );
        let odd = t.late_beyond_window + t.restarts + t.wraps + t.jumps + t.tx_clock_backwards;
        if odd > 0 || k.untracked > 0 {
            let _ = writeln!(
                s,
                "             late beyond window {}, restarts {}, wraps {}, jumps {}, sender clock backwards {}, untracked {}",
                t.late_beyond_window,
                t.restarts,
                t.wraps,
                t.jumps,
                t.tx_clock_backwards,
                k.untracked
            );
        }
        if k.flows.len() > 1 {
            for fl in k.flows.iter().take(16) {
                let a = &fl.flow;
                let _ = writeln!(
                    s,
                    "  flow {}:{} -> {}:{}{}: seq {}..{}, received {}, lost {}, duplicated {}, reordered {}",
                    a.src_ip,
                    a.src_port,
                    a.dst_ip,
                    a.dst_port,
                    a.vlan.map_or(String::new(), |v| format!(" vlan {v}")),
                    fl.first_seq.unwrap_or(0),
                    fl.last_seq.unwrap_or(0),
                    fl.seq.received,
                    fl.seq.lost,
                    fl.seq.duplicates,
                    fl.seq.reordered
                );
            }
            if k.flows.len() > 16 {
                let _ = writeln!(s, "  ... {} more flows (see --json)", k.flows.len() - 16);
            }
        }
        match &k.latency {
            Some(l) => {
                let _ = writeln!(
                    s,
                    "Latency:     us min {} p50 {} p90 {} p99 {} p99.9 {} max {} (mean {}, {} samples)",
                    us(l.min_ns),
                    us(l.p50_ns),
                    us(l.p90_ns),
                    us(l.p99_ns),
                    us(l.p999_ns),
                    us(l.max_ns),
                    us(l.mean_ns as u64),
                    l.count
                );
            }
            None => {
                let _ = writeln!(s, "Latency:     no samples");
            }
        }
        let n = &k.latency_not_recorded;
        if n.no_timestamp + n.bad_timestamp + n.clock_backwards + n.out_of_range > 0 {
            let _ = writeln!(
                s,
                "             not recorded: no timestamp {}, bad timestamp {}, received before sent (clocks) {}, over 60 s {}",
                n.no_timestamp, n.bad_timestamp, n.clock_backwards, n.out_of_range
            );
        }
        s
    }

    /// The histogram, one bucket per line: upper value in µs, count, cumulative share.
    pub fn hist_text(&self) -> String {
        let mut s = String::new();
        let Some(h) = &self.sink.histogram else {
            return s;
        };
        let total: u64 = h.iter().map(|b| b.1).sum();
        let _ = writeln!(s, "Histogram:   latency_us  count  cumulative_%");
        let mut cum = 0u64;
        for &(v, c) in h {
            cum += c;
            let _ = writeln!(
                s,
                "  {:>12} {:>10} {:>8.4}",
                format!("{:.3}", v as f64 / 1000.0),
                c,
                cum as f64 * 100.0 / total.max(1) as f64
            );
        }
        s
    }
}

/// A lab run's path from sender to sink, with each difference named.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct SinkReconciliation {
    /// The sending and the receiving interface (the lab's: veth-tx and veth-rx).
    #[serde(default = "default_tx_dev")]
    pub tx_dev: String,
    #[serde(default = "default_rx_dev")]
    pub rx_dev: String,
    pub sent: u64,
    pub tx_packets: u64,
    pub rx_packets: u64,
    /// af_packet, af_xdp.
    pub backend: RxKind,
    /// Frames the receiver's socket took (PACKET_STATISTICS; af_xdp: read from the rings).
    pub socket_packets: u64,
    /// Frames the socket dropped (PACKET_STATISTICS ring full; af_xdp: XDP_STATISTICS).
    pub socket_ring_drops: u64,
    /// af_xdp: frames the XDP program redirected to the sockets, and passed to the stack.
    pub xdp_redirected: Option<u64>,
    pub xdp_passed: Option<u64>,
    /// af_xdp: redirected − (read + socket drops).
    pub xdp_unaccounted: Option<i64>,
    /// pktgen frames the sink counted (duplicates included).
    pub sink_frames: u64,
    /// Distinct sequence numbers received.
    pub sink_received: u64,
    /// Differences, named.
    pub not_transmitted: i64,
    pub lost_between_veth_ends: i64,
    /// af_packet: rx_packets − (socket packets + ring drops): dropped on veth-rx before the
    /// socket (by XDP, tc or nftables ingress, or the stack's checks). af_xdp: rx_packets −
    /// frames the XDP program saw (redirected + passed).
    pub dropped_before_socket: i64,
    /// Sequence holes the sink saw (lost inside the received range).
    pub seq_lost: u64,
    /// sent − the highest sequence number received: lost after the last one received.
    pub tail_lost: i64,
}

fn default_tx_dev() -> String {
    "veth-tx".into()
}

fn default_rx_dev() -> String {
    "veth-rx".into()
}

impl SinkReconciliation {
    pub fn new(sent: u64, tx_packets: u64, rx_packets: u64, r: &RxReport) -> Self {
        let last = r
            .sink
            .flows
            .iter()
            .filter_map(|f| f.last_seq)
            .max()
            .unwrap_or(0);
        let i = |v: u64| v as i64;
        // (frames, distinct received, holes, after the last): the streams' when the
        // receiver counted streams (their sequences start at 0), else pktgen's flows'.
        let sink = match &r.streams {
            Some(st) => {
                let a = &st.aggregate;
                let seen = a.seq.received + a.seq.lost;
                (a.frames, a.seq.received, a.seq.lost, i(sent) - i(seen))
            }
            None => (
                r.frames.pktgen,
                r.sink.totals.received,
                r.sink.totals.lost,
                i(sent) - i(u64::from(last)),
            ),
        };
        let x = r.xdp.as_ref().map(|x| &x.counters);
        let seen_by_socket_path = match x {
            Some(c) => c.redirected + c.passed_no_socket + c.passed_not_udp,
            None => r.ring.packets + r.ring.drops,
        };
        SinkReconciliation {
            tx_dev: default_tx_dev(),
            rx_dev: r.device.clone(),
            sent,
            tx_packets,
            rx_packets,
            backend: r.backend,
            socket_packets: r.ring.packets,
            socket_ring_drops: r.ring.drops,
            xdp_redirected: x.map(|c| c.redirected),
            xdp_passed: x.map(|c| c.passed_no_socket + c.passed_not_udp),
            xdp_unaccounted: x.map(|c| xdp_unaccounted(c, r.frames.frames)),
            sink_frames: sink.0,
            sink_received: sink.1,
            not_transmitted: i(sent) - i(tx_packets),
            lost_between_veth_ends: i(tx_packets) - i(rx_packets),
            dropped_before_socket: i(rx_packets) - i(seen_by_socket_path),
            seq_lost: sink.2,
            tail_lost: sink.3,
        }
    }

    pub fn text(&self) -> String {
        self.text_with(false)
    }

    /// [`SinkReconciliation::text`]; with `tx_shared` the sending interface's counters
    /// count other runs' frames too (a port sending to several ports, a leg each): the
    /// differences taken against them say so instead of a number that is not this run's.
    pub fn text_with(&self, tx_shared: bool) -> String {
        let shared = |v: i64| {
            if tx_shared {
                "- (tx_packets counts every leg's frames)".to_string()
            } else {
                v.to_string()
            }
        };
        let mut s = String::new();
        match (self.xdp_redirected, self.xdp_passed) {
            (Some(red), Some(passed)) => {
                let _ = writeln!(
                    s,
                    "Path:        sent {} -> {} tx_packets {} -> {} rx_packets {} -> XDP redirected {} (passed {}) -> \
                     af_xdp sockets {} (+{} dropped by the sockets) -> sink {} distinct",
                    self.sent,
                    self.tx_dev,
                    self.tx_packets,
                    self.rx_dev,
                    self.rx_packets,
                    red,
                    passed,
                    self.socket_packets,
                    self.socket_ring_drops,
                    self.sink_received
                );
                let _ = writeln!(
                    s,
                    "Differences: not transmitted {}, lost between {} and {} {}, dropped on {} before XDP {}, \
                     dropped by the sockets {}, redirected but unaccounted {}, sequence holes {}, after the last received {}",
                    shared(self.not_transmitted),
                    self.tx_dev,
                    self.rx_dev,
                    shared(self.lost_between_veth_ends),
                    self.rx_dev,
                    self.dropped_before_socket,
                    self.socket_ring_drops,
                    self.xdp_unaccounted.unwrap_or(0),
                    self.seq_lost,
                    self.tail_lost
                );
            }
            _ => {
                let _ = writeln!(
                    s,
                    "Path:        sent {} -> {} tx_packets {} -> {} rx_packets {} -> socket {} (+{} ring drops) -> sink {} distinct",
                    self.sent,
                    self.tx_dev,
                    self.tx_packets,
                    self.rx_dev,
                    self.rx_packets,
                    self.socket_packets,
                    self.socket_ring_drops,
                    self.sink_received
                );
                let _ = writeln!(
                    s,
                    "Differences: not transmitted {}, lost between {} and {} {}, dropped on {} before the socket {}, \
                     dropped by the socket's ring {}, sequence holes {}, after the last received {}",
                    shared(self.not_transmitted),
                    self.tx_dev,
                    self.rx_dev,
                    shared(self.lost_between_veth_ends),
                    self.rx_dev,
                    self.dropped_before_socket,
                    self.socket_ring_drops,
                    self.seq_lost,
                    self.tail_lost
                );
            }
        }
        s
    }
}

/// The receiver's part of a lab run's report (`upktgen run --rx-analyze`).
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct RxAnalysis {
    pub receiver: RxReport,
    pub path: SinkReconciliation,
}

impl RxAnalysis {
    pub fn new(sent: u64, tx_packets: u64, rx_packets: u64, receiver: RxReport) -> Self {
        RxAnalysis {
            path: SinkReconciliation::new(sent, tx_packets, rx_packets, &receiver),
            receiver,
        }
    }

    /// Names the sending interface (the receiving one is the receiver's own device).
    pub fn between(mut self, tx_dev: &str, rx_dev: &str) -> Self {
        self.path.tx_dev = tx_dev.into();
        self.path.rx_dev = rx_dev.into();
        self
    }

    /// Receiver lines, the path with its differences, and the histogram if it was kept.
    pub fn text(&self) -> String {
        self.text_with(false)
    }

    /// [`RxAnalysis::text`], the sending interface shared with other runs when `tx_shared`
    /// ([`SinkReconciliation::text_with`]).
    pub fn text_with(&self, tx_shared: bool) -> String {
        let hist = self.receiver.sink.histogram.is_some();
        let mut s = self.receiver.text(false);
        s.push_str(&self.path.text_with(tx_shared));
        if hist {
            s.push_str(&self.receiver.hist_text());
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rx::sink::{FlowKeyMode, Sink};

    #[test]
    fn reconciliation_names_each_difference() {
        let report = RxReport {
            host: String::new(),
            version: String::new(),
            device: "veth-rx".into(),
            backend: RxKind::AfPacket,
            mode: "test".into(),
            ring_bytes: 0,
            stopped_by: RxStop::SenderDone,
            elapsed_ns: 1,
            frames: FrameCounters {
                frames: 80,
                pktgen: 80,
                ..FrameCounters::default()
            },
            ring: RingStats {
                packets: 80,
                drops: 5,
                freezes: 1,
            },
            xdp: None,
            sink: Sink::new(FlowKeyMode::Addr, Some(1)).report(false),
            streams: None,
        };
        let r = SinkReconciliation::new(100, 98, 95, &report);
        assert_eq!(r.not_transmitted, 2);
        assert_eq!(r.lost_between_veth_ends, 3);
        assert_eq!(r.dropped_before_socket, 10);
        assert!(r.text().contains("dropped by the socket's ring 5"));
        assert!(
            r.text()
                .contains("not transmitted 2, lost between veth-tx and")
        );
        // The sending interface shared with another leg: its differences are not this run's.
        let shared = SinkReconciliation::new(100, 1_101, 95, &report).text_with(true);
        assert!(
            shared.contains("not transmitted - (tx_packets counts every leg's frames), lost"),
            "{shared}"
        );
        let t = report.text(false);
        assert!(t.contains("5 dropped (ring full)"), "{t}");
    }

    #[test]
    fn af_xdp_reconciliation_names_xdp_and_socket_drops() {
        use crate::rx::backend::AttachMode;
        use crate::sys::xsk_rx::XskRxStats;
        let counters = XdpRxCounters {
            redirected: 90,
            passed_no_socket: 2,
            passed_not_udp: 1,
            socket: XskRxStats {
                rx_dropped: 6,
                rx_ring_full: 1,
                rx_invalid_descs: 0,
                rx_fill_ring_empty_descs: 6,
            },
        };
        let report = RxReport {
            host: String::new(),
            version: String::new(),
            device: "veth-rx".into(),
            backend: RxKind::AfXdp,
            mode: "af_xdp copy mode".into(),
            ring_bytes: 0,
            stopped_by: RxStop::SenderDone,
            elapsed_ns: 1,
            frames: FrameCounters {
                frames: 80,
                pktgen: 80,
                ..FrameCounters::default()
            },
            ring: RingStats {
                packets: 80,
                drops: counters.socket.dropped(),
                freezes: 0,
            },
            xdp: Some(XdpReport {
                zero_copy: false,
                attach: AttachMode::Native,
                queues_watched: 1,
                device_queues: Some(1),
                counters,
            }),
            sink: Sink::new(FlowKeyMode::Addr, Some(1)).report(false),
            streams: None,
        };
        let r = SinkReconciliation::new(100, 99, 97, &report);
        // 97 reached veth-rx; the program saw 93 (90 + 2 + 1): 4 dropped before XDP.
        assert_eq!(r.dropped_before_socket, 4);
        assert_eq!((r.xdp_redirected, r.xdp_passed), (Some(90), Some(3)));
        // 90 redirected = 80 read + 7 dropped by the socket + 3 unaccounted.
        assert_eq!(r.socket_ring_drops, 7);
        assert_eq!(r.xdp_unaccounted, Some(3));
        let t = r.text();
        assert!(t.contains("XDP redirected 90 (passed 3)"), "{t}");
        assert!(
            t.contains("dropped by the sockets 7, redirected but unaccounted 3"),
            "{t}"
        );
        let t = report.text(false);
        assert!(t.contains("rx_dropped 6, rx_ring_full 1"), "{t}");
        assert!(t.contains("neither read nor counted as dropped: 3"), "{t}");
        assert!(t.contains("(UMEM 0 KiB)"), "{t}");
    }
}
