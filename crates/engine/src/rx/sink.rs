//! The sink: sequence tracking per flow and a latency histogram, from pktgen headers.
//!
//! # Flows
//!
//! pktgen numbers packets per sender (one counter per pktgen device/thread), and upktgen's
//! stream walks the UDP ports *within* one sequence. So a flow — one sequence — is keyed
//! by default ([`FlowKeyMode::Addr`]) by source IP, destination IP and outer VLAN id; the
//! ports are ignored. [`FlowKeyMode::AddrPorts`] adds both UDP ports, for senders that
//! keep one sequence per port pair (several pktgen threads told apart only by port). At
//! most [`MAX_FLOWS`] flows are tracked; frames of further flows are counted as
//! `untracked` (their latency is still recorded).
//!
//! # Sequence accounting (per flow)
//!
//! Distances between sequence numbers are taken modulo 2^32, so the wrap from
//! 0xffffffff to 0 is an ordinary step (counted in `wraps`). The flow remembers which of
//! the last [`WINDOW`] numbers below the highest one seen (`last_seq`) have arrived (a
//! tracker made by [`SeqTracker::with_window`] remembers fewer: the per-stream counters of
//! [`crate::rx::streams`] keep the same books with a smaller window, and "the window" below
//! is then that one):
//!
//! - ahead of `last_seq` by d (1 ≤ d ≤ [`MAX_GAP`]): new; the d − 1 numbers skipped count
//!   as `lost` for now;
//! - equal to a number already seen in the window: `duplicates`;
//! - behind `last_seq`, inside the window, not seen before: `reordered` (it arrived after a
//!   higher number); it was counted lost when skipped, so `lost` goes down by one — `lost`
//!   is always the number of holes left;
//! - behind by more than the window: a number that small (below [`WINDOW`]) means the
//!   sender started again (`restarts`); any other is `late_beyond_window` (it cannot be told
//!   from a duplicate any more, and was counted lost when skipped);
//! - behind `last_seq` but *stamped later* than the highest-numbered packet (both
//!   timestamps non-zero): a new run of the sender (`restarts`): a duplicate or a late
//!   packet carries its original, earlier stamp;
//! - ahead by more than [`MAX_GAP`]: a jump (`jumps`): a new segment begins there without
//!   counting 16 M packets as lost.
//!
//! A restart or a jump keeps the counters and starts the window afresh. With
//! `expect_first = Some(1)` (the lab, where upktgen knows its sender starts at 1), packets
//! missing before the first one received count as lost too; without it (`upktgen rx` on a
//! stream already flowing) the first packet received opens the flow. Packets lost after
//! the last one received are invisible to any receiver: the lab's reconciliation names them
//! (sent − last_seq).
//!
//! # Latency
//!
//! One-way latency = receive time (the kernel's timestamp of the frame, CLOCK_REALTIME) −
//! the header's `tv_sec`/`tv_usec` (the sender's CLOCK_REALTIME, in µs: truncation adds up
//! to 1 µs). It is only meaningful when both ends share a clock (the lab) or are well
//! synchronised. Recorded for every non-duplicate packet into an HDR histogram of
//! nanoseconds (3 significant digits, 1 ns to 60 s). Not recorded, but counted:
//! `no_timestamp` (both words zero: NO_TIMESTAMP), `bad_timestamp` (tv_usec ≥ 10^6),
//! `clock_backwards` (received before it was sent: the clocks disagree or stepped) and
//! `out_of_range` (more than 60 s). Separately, `tx_clock_backwards` counts packets whose
//! stamp is earlier than that of a lower-numbered packet of the same flow (the sender's
//! clock stepped back).
//!
//! # Delay variation
//!
//! Beside the one-way delays, the sink records the inter-packet delay variation (IPDV,
//! RFC 3393's selection of consecutive packets, as RFC 5481 and RFC 8219 use it): for each
//! packet whose sequence number follows the previous one of its flow by exactly one and
//! both have a recorded delay, |D(i) − D(i−1)| goes into a second HDR histogram (same bounds).
//! Packets after a hole, a reordered, late or duplicate packet start no pair. The packet
//! delay variation (PDV, RFC 5481: D − Dmin) needs no more than the delays: its 99.9th
//! percentile is the delay histogram's p99.9 minus its minimum.

use super::frame::{FlowAddr, PktgenFrame};
use hdrhistogram::Histogram;
use serde::Serialize;
use std::collections::HashMap;

/// Sequence numbers remembered below the highest seen, per flow.
pub const WINDOW: u32 = 1 << 16;
/// A forward step larger than this starts a new segment instead of counting loss.
pub const MAX_GAP: u32 = 1 << 24;
/// Flows tracked at most.
pub const MAX_FLOWS: usize = 1024;
/// Latencies above this are counted as out of range, not recorded.
pub const MAX_LATENCY_NS: u64 = 60_000_000_000;

crate::choice! {
    /// What identifies a flow (one sender sequence).
    #[derive(
        Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize,
    )]
    #[serde(rename_all = "snake_case")]
    pub enum FlowKeyMode {
        /// Source IP, destination IP, VLAN id (upktgen's and pktgen's one sequence per sender).
        Addr = "addr",
        /// Also both UDP ports.
        AddrPorts = "addr-ports",
    }
}

// Written out: `choice!` reads each variant's doc comment, and takes no other attribute.
#[allow(clippy::derivable_impls)]
impl Default for FlowKeyMode {
    fn default() -> FlowKeyMode {
        FlowKeyMode::Addr
    }
}

impl FlowKeyMode {
    fn key(self, a: &FlowAddr) -> FlowAddr {
        match self {
            FlowKeyMode::AddrPorts => *a,
            FlowKeyMode::Addr => FlowAddr {
                src_port: 0,
                dst_port: 0,
                ..*a
            },
        }
    }
}

/// Sequence counters of one flow, or summed over flows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct SeqCounters {
    /// Distinct sequence numbers received (duplicates excluded).
    pub received: u64,
    pub lost: u64,
    pub duplicates: u64,
    pub reordered: u64,
    pub late_beyond_window: u64,
    pub restarts: u64,
    pub wraps: u64,
    pub jumps: u64,
    pub tx_clock_backwards: u64,
}

impl SeqCounters {
    /// Adds `o`'s counts to these.
    pub fn add(&mut self, o: &SeqCounters) {
        self.received += o.received;
        self.lost += o.lost;
        self.duplicates += o.duplicates;
        self.reordered += o.reordered;
        self.late_beyond_window += o.late_beyond_window;
        self.restarts += o.restarts;
        self.wraps += o.wraps;
        self.jumps += o.jumps;
        self.tx_clock_backwards += o.tx_clock_backwards;
    }
}

/// What one packet was, for its flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeqEvent {
    /// Ahead of everything seen (or the first packet), with `skipped` numbers jumped over.
    New {
        skipped: u32,
    },
    Duplicate,
    Reordered,
    LateBeyondWindow,
    Restart,
    Jump,
}

/// The state of one flow (or one stream).
#[derive(Debug, Clone)]
pub struct SeqTracker {
    /// Bit `s % window` is set when `s` (within the window below `max`) was received.
    seen: Box<[u64]>,
    /// Numbers remembered below `max`: a power of two, at least 64.
    window: u32,
    started: bool,
    max: u32,
    /// Timestamp (µs for pktgen headers, ns for signatures) of the packet numbered `max`; 0 = none.
    max_ts: u64,
    expect_first: Option<u32>,
    pub first_seq: Option<u32>,
    pub c: SeqCounters,
}

impl SeqTracker {
    /// A tracker remembering [`WINDOW`] numbers.
    pub fn new(expect_first: Option<u32>) -> Self {
        Self::with_window(expect_first, WINDOW)
    }

    /// A tracker remembering `window` numbers below the highest (`window / 8` bytes).
    ///
    /// # Panics
    /// If `window` is not a power of two from 64 to [`WINDOW`] (callers pass a constant).
    pub fn with_window(expect_first: Option<u32>, window: u32) -> Self {
        assert!(
            window.is_power_of_two() && (64..=WINDOW).contains(&window),
            "sequence window {window}: a power of two from 64 to {WINDOW}"
        );
        SeqTracker {
            seen: vec![0u64; (window / 64) as usize].into_boxed_slice(),
            window,
            started: false,
            max: 0,
            max_ts: 0,
            expect_first,
            first_seq: None,
            c: SeqCounters::default(),
        }
    }

    /// Bytes the window takes on the heap (beside the struct itself).
    pub fn heap_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.seen)
    }

    /// The highest sequence number received (in modulo-2^32 order), if any.
    pub fn last_seq(&self) -> Option<u32> {
        self.started.then_some(self.max)
    }

    #[inline]
    fn bit(&self, s: u32) -> bool {
        let i = (s & (self.window - 1)) as usize;
        self.seen[i / 64] & (1 << (i % 64)) != 0
    }

    #[inline]
    fn set(&mut self, s: u32) {
        let i = (s & (self.window - 1)) as usize;
        self.seen[i / 64] |= 1 << (i % 64);
    }

    #[inline]
    fn clear(&mut self, s: u32) {
        let i = (s & (self.window - 1)) as usize;
        self.seen[i / 64] &= !(1 << (i % 64));
    }

    /// Opens a segment at `seq` (first packet, restart or jump).
    fn open(&mut self, seq: u32, ts: u64, expect_first: Option<u32>) -> u32 {
        self.seen.fill(0);
        self.started = true;
        self.c.received += 1;
        self.first_seq.get_or_insert(seq);
        // Numbers missing between the expected first and this one are lost.
        let skipped = match expect_first {
            Some(f) if seq.wrapping_sub(f) < self.window => seq.wrapping_sub(f),
            _ => 0,
        };
        self.c.lost += u64::from(skipped);
        self.max = seq;
        self.max_ts = ts;
        self.set(seq);
        skipped
    }

    /// Accounts one packet with sequence number `seq` stamped `ts_us` (0 = no stamp; any
    /// unit will do, as stamps are only compared with each other).
    pub fn observe(&mut self, seq: u32, ts_us: u64) -> SeqEvent {
        if !self.started {
            let skipped = self.open(seq, ts_us, self.expect_first);
            return SeqEvent::New { skipped };
        }
        let ahead = seq.wrapping_sub(self.max);
        if ahead == 0 {
            self.c.duplicates += 1;
            return SeqEvent::Duplicate;
        }
        if ahead <= MAX_GAP {
            // Forward: clear the window slots of the numbers skipped over and of `seq`.
            let skipped = ahead - 1;
            if ahead >= self.window {
                self.seen.fill(0);
            } else {
                for k in 1..=ahead {
                    self.clear(self.max.wrapping_add(k));
                }
            }
            if seq < self.max {
                self.c.wraps += 1;
            }
            if ts_us != 0 && ts_us < self.max_ts {
                self.c.tx_clock_backwards += 1;
            }
            self.c.lost += u64::from(skipped);
            self.c.received += 1;
            self.max = seq;
            if ts_us != 0 || self.max_ts == 0 {
                self.max_ts = ts_us.max(self.max_ts);
            }
            self.set(seq);
            return SeqEvent::New { skipped };
        }
        let behind = self.max.wrapping_sub(seq);
        if behind > u32::MAX / 2 {
            // Far ahead (more than MAX_GAP, less than half the number space): a jump.
            self.c.jumps += 1;
            self.open(seq, ts_us, None);
            return SeqEvent::Jump;
        }
        // Behind the highest number seen.
        if ts_us != 0 && self.max_ts != 0 && ts_us > self.max_ts {
            self.c.restarts += 1;
            self.open(seq, ts_us, self.expect_first);
            return SeqEvent::Restart;
        }
        if behind < self.window {
            if self.bit(seq) {
                self.c.duplicates += 1;
                return SeqEvent::Duplicate;
            }
            self.set(seq);
            self.c.received += 1;
            self.c.reordered += 1;
            self.c.lost = self.c.lost.saturating_sub(1);
            return SeqEvent::Reordered;
        }
        if seq < self.window {
            self.c.restarts += 1;
            self.open(seq, ts_us, self.expect_first);
            return SeqEvent::Restart;
        }
        self.c.late_beyond_window += 1;
        SeqEvent::LateBeyondWindow
    }
}

/// Latency figures not recorded in the histogram, and why.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct LatencyCounters {
    pub no_timestamp: u64,
    pub bad_timestamp: u64,
    pub clock_backwards: u64,
    pub out_of_range: u64,
}

/// Percentiles of the recorded latencies, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct LatencySummary {
    pub count: u64,
    pub min_ns: u64,
    pub mean_ns: f64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub max_ns: u64,
}

/// The inter-packet delay variation: |D(i) − D(i−1)| of consecutive packets, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct IpdvSummary {
    /// Pairs recorded.
    pub count: u64,
    pub mean_ns: f64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub max_ns: u64,
}

/// One flow in the report.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct FlowReport {
    pub flow: FlowAddr,
    pub first_seq: Option<u32>,
    pub last_seq: Option<u32>,
    #[serde(flatten)]
    pub seq: SeqCounters,
}

/// What the sink saw.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct SinkReport {
    pub flow_key: FlowKeyMode,
    /// Summed over the flows.
    pub totals: SeqCounters,
    pub flows: Vec<FlowReport>,
    /// pktgen frames of flows beyond MAX_FLOWS (not sequence-tracked).
    pub untracked: u64,
    pub latency: Option<LatencySummary>,
    /// The inter-packet delay variation (none without two consecutive delays).
    #[serde(default)]
    pub ipdv: Option<IpdvSummary>,
    pub latency_not_recorded: LatencyCounters,
    /// The whole histogram as (highest value of the bucket in ns, count), when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub histogram: Option<Vec<(u64, u64)>>,
}

/// Sequence tracking for every flow plus the latency histogram.
pub struct Sink {
    mode: FlowKeyMode,
    expect_first: Option<u32>,
    index: HashMap<FlowAddr, usize>,
    flows: Vec<(FlowAddr, SeqTracker)>,
    last: Option<(FlowAddr, usize)>,
    untracked: u64,
    hist: Histogram<u64>,
    lat: LatencyCounters,
    /// Per flow (as `flows`): the sequence number and delay of its last packet with a delay.
    prev_delay: Vec<Option<(u32, u64)>>,
    ipdv: Histogram<u64>,
}

impl Sink {
    pub fn new(mode: FlowKeyMode, expect_first: Option<u32>) -> Self {
        Sink {
            mode,
            expect_first,
            index: HashMap::new(),
            flows: Vec::new(),
            last: None,
            untracked: 0,
            hist: Histogram::new_with_bounds(1, MAX_LATENCY_NS, 3)
                .expect("constant, valid histogram bounds"),
            lat: LatencyCounters::default(),
            prev_delay: Vec::new(),
            ipdv: Histogram::new_with_bounds(1, MAX_LATENCY_NS, 3)
                .expect("constant, valid histogram bounds"),
        }
    }

    /// The index of `a`'s flow in `flows` (a new flow while there is room).
    fn flow(&mut self, a: &FlowAddr) -> Option<usize> {
        let key = self.mode.key(a);
        let i = match self.last {
            Some((k, i)) if k == key => i,
            _ => {
                let i = match self.index.get(&key) {
                    Some(&i) => i,
                    None if self.flows.len() < MAX_FLOWS => {
                        self.flows.push((key, SeqTracker::new(self.expect_first)));
                        self.prev_delay.push(None);
                        self.index.insert(key, self.flows.len() - 1);
                        self.flows.len() - 1
                    }
                    None => return None,
                };
                self.last = Some((key, i));
                i
            }
        };
        Some(i)
    }

    /// Accounts one pktgen frame received at `rx_realtime_ns` (None: no receive time).
    pub fn record(&mut self, f: &PktgenFrame, rx_realtime_ns: Option<u64>) -> Option<SeqEvent> {
        let h = &f.hdr;
        let stamped = h.tv_sec != 0 || h.tv_usec != 0;
        let valid = stamped && h.tv_usec < 1_000_000;
        let ts_us = if valid {
            u64::from(h.tv_sec) * 1_000_000 + u64::from(h.tv_usec)
        } else {
            0
        };
        let fi = self.flow(&f.addr);
        let ev = match fi {
            Some(i) => Some(self.flows[i].1.observe(h.seq, ts_us)),
            None => {
                self.untracked += 1;
                None
            }
        };
        if ev == Some(SeqEvent::Duplicate) {
            return ev;
        }
        let delay = self.delay(stamped, valid, ts_us, rx_realtime_ns);
        if let Some(i) = fi {
            self.pair(i, h.seq, ev, delay);
        }
        ev
    }

    /// IPDV: `delay` of packet `seq` of flow `i` against the flow's previous one, when they
    /// are consecutive (`ev` new, nothing skipped, the previous number one below).
    fn pair(&mut self, i: usize, seq: u32, ev: Option<SeqEvent>, delay: Option<u64>) {
        let prev = &mut self.prev_delay[i];
        match ev {
            Some(SeqEvent::New { skipped: 0 }) => {
                if let (Some((s, d0)), Some(d)) = (*prev, delay)
                    && s.wrapping_add(1) == seq
                {
                    let _ = self.ipdv.record(d.abs_diff(d0).max(1));
                }
                *prev = delay.map(|d| (seq, d));
            }
            Some(SeqEvent::New { .. } | SeqEvent::Restart | SeqEvent::Jump) => {
                *prev = delay.map(|d| (seq, d));
            }
            // Reordered or late: not the successor of the last one; the pair chain goes on
            // from the highest number.
            _ => {}
        }
    }

    /// The one-way delay of a frame in ns, recorded in the histogram (None: not recorded,
    /// counted by why).
    fn delay(
        &mut self,
        stamped: bool,
        valid: bool,
        ts_us: u64,
        rx_realtime_ns: Option<u64>,
    ) -> Option<u64> {
        if !stamped {
            self.lat.no_timestamp += 1;
        } else if !valid {
            self.lat.bad_timestamp += 1;
        } else if let Some(rx) = rx_realtime_ns {
            let tx = ts_us * 1000;
            if rx < tx {
                self.lat.clock_backwards += 1;
            } else if rx - tx > MAX_LATENCY_NS {
                self.lat.out_of_range += 1;
            } else {
                // Values below the histogram's lowest (1 ns) are recorded as 1.
                let d = (rx - tx).max(1);
                let _ = self.hist.record(d);
                return Some(d);
            }
        }
        None
    }

    pub fn totals(&self) -> SeqCounters {
        let mut t = SeqCounters::default();
        for (_, f) in &self.flows {
            t.add(&f.c);
        }
        t
    }

    pub fn latency(&self) -> Option<LatencySummary> {
        let h = &self.hist;
        (!h.is_empty()).then(|| LatencySummary {
            count: h.len(),
            min_ns: h.min(),
            mean_ns: h.mean(),
            p50_ns: h.value_at_quantile(0.50),
            p90_ns: h.value_at_quantile(0.90),
            p99_ns: h.value_at_quantile(0.99),
            p999_ns: h.value_at_quantile(0.999),
            max_ns: h.max(),
        })
    }

    /// The inter-packet delay variation so far (None: no consecutive pair had both delays).
    pub fn ipdv(&self) -> Option<IpdvSummary> {
        let h = &self.ipdv;
        (!h.is_empty()).then(|| IpdvSummary {
            count: h.len(),
            mean_ns: h.mean(),
            p50_ns: h.value_at_quantile(0.50),
            p99_ns: h.value_at_quantile(0.99),
            p999_ns: h.value_at_quantile(0.999),
            max_ns: h.max(),
        })
    }

    /// Every non-empty bucket: (highest value it holds in ns, count).
    pub fn histogram(&self) -> Vec<(u64, u64)> {
        self.hist
            .iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect()
    }

    /// Every flow's counters, in the order the flows were first seen.
    fn flow_reports(&self) -> impl Iterator<Item = FlowReport> + '_ {
        self.flows.iter().map(|(k, t)| FlowReport {
            flow: *k,
            first_seq: t.first_seq,
            last_seq: t.last_seq(),
            seq: t.c,
        })
    }

    /// Replaces `out`'s contents with every flow's counters (as in the report), reusing its
    /// allocation.
    pub fn flows_into(&self, out: &mut Vec<FlowReport>) {
        out.clear();
        out.extend(self.flow_reports());
    }

    pub fn report(&self, with_histogram: bool) -> SinkReport {
        SinkReport {
            flow_key: self.mode,
            totals: self.totals(),
            flows: self.flow_reports().collect(),
            untracked: self.untracked,
            latency: self.latency(),
            ipdv: self.ipdv(),
            latency_not_recorded: self.lat,
            histogram: with_histogram.then(|| self.histogram()),
        }
    }
}

// The frame builders of these tests serve the metrics tests above the engine too.
#[cfg(any(test, feature = "test-support"))]
pub mod tests {
    use super::*;
    use crate::wire::PktgenHdr;
    use std::net::Ipv4Addr;

    #[cfg(test)]
    fn feed(t: &mut SeqTracker, seqs: &[u32]) -> Vec<SeqEvent> {
        seqs.iter().map(|&s| t.observe(s, 0)).collect()
    }

    #[test]
    fn in_order_run_has_no_loss() {
        let mut t = SeqTracker::new(Some(1));
        for s in 1..=100_000u32 {
            t.observe(s, 0);
        }
        assert_eq!(t.c.received, 100_000);
        assert_eq!((t.c.lost, t.c.duplicates, t.c.reordered), (0, 0, 0));
        assert_eq!((t.first_seq, t.last_seq()), (Some(1), Some(100_000)));
    }

    #[test]
    fn gaps_are_lost() {
        let mut t = SeqTracker::new(Some(1));
        // Every 7th dropped, like the end-to-end nftables rule.
        let seqs: Vec<u32> = (1..=7000).filter(|s| s % 7 != 0).collect();
        feed(&mut t, &seqs);
        assert_eq!(
            t.c.lost,
            1000 - 1,
            "the last drop (7000) is after the last received"
        );
        assert_eq!(t.c.received, 6000);
        // The first packet missing counts with expect_first, not without.
        let mut t = SeqTracker::new(Some(1));
        assert_eq!(t.observe(4, 0), SeqEvent::New { skipped: 3 });
        assert_eq!(t.c.lost, 3);
        let mut t = SeqTracker::new(None);
        assert_eq!(t.observe(4, 0), SeqEvent::New { skipped: 0 });
        assert_eq!(t.c.lost, 0);
    }

    #[test]
    fn duplicates_and_reorder() {
        let mut t = SeqTracker::new(Some(1));
        let ev = feed(&mut t, &[1, 2, 2, 4, 3, 3, 5, 1, 6]);
        use SeqEvent::*;
        assert_eq!(
            ev,
            vec![
                New { skipped: 0 },
                New { skipped: 0 },
                Duplicate,
                New { skipped: 1 },
                Reordered,
                Duplicate,
                New { skipped: 0 },
                Duplicate,
                New { skipped: 0 }
            ]
        );
        assert_eq!(t.c.received, 6);
        assert_eq!(
            (t.c.lost, t.c.duplicates, t.c.reordered),
            (0, 3, 1),
            "{:?}",
            t.c
        );
    }

    #[test]
    fn swapped_pairs_are_reordered_not_lost() {
        let mut t = SeqTracker::new(Some(1));
        let mut seqs = Vec::new();
        for s in (1..=1000).step_by(2) {
            seqs.extend([s + 1, s]);
        }
        feed(&mut t, &seqs);
        assert_eq!(t.c.received, 1000);
        assert_eq!((t.c.lost, t.c.reordered, t.c.duplicates), (0, 500, 0));
    }

    #[test]
    fn wrap_is_an_ordinary_step() {
        let mut t = SeqTracker::new(None);
        feed(&mut t, &[u32::MAX - 2, u32::MAX - 1, u32::MAX, 0, 2, 1]);
        assert_eq!(t.c.wraps, 1);
        assert_eq!((t.c.lost, t.c.reordered, t.c.received), (0, 1, 6));
        assert_eq!(t.last_seq(), Some(2));
    }

    #[test]
    fn restart_by_small_number_or_later_stamp() {
        // Beyond the window and small: a new run.
        let mut t = SeqTracker::new(Some(1));
        for s in 1..=200_000 {
            t.observe(s, 0);
        }
        assert_eq!(t.observe(1, 0), SeqEvent::Restart);
        assert_eq!(t.observe(2, 0), SeqEvent::New { skipped: 0 });
        assert_eq!((t.c.restarts, t.c.lost, t.c.duplicates), (1, 0, 0));
        assert_eq!(t.c.received, 200_002);
        // A short run followed by another: seq 1 again, stamped later -> restart; the same
        // number with its original stamp -> duplicate.
        let mut t = SeqTracker::new(Some(1));
        for s in 1..=10u32 {
            t.observe(s, 1_000 + u64::from(s));
        }
        assert_eq!(t.observe(3, 1_003), SeqEvent::Duplicate);
        assert_eq!(t.observe(1, 5_000), SeqEvent::Restart);
        assert_eq!(t.observe(2, 5_000), SeqEvent::New { skipped: 0 });
        assert_eq!((t.c.restarts, t.c.duplicates, t.c.lost), (1, 1, 0));
        // Restart whose first packets were lost: with expect_first they count as lost.
        assert_eq!(t.observe(1, 9_000), SeqEvent::Restart);
        assert_eq!(t.c.lost, 0);
        let mut t2 = SeqTracker::new(Some(1));
        for s in 1..=5u32 {
            t2.observe(s, 10);
        }
        assert_eq!(t2.observe(3, 20), SeqEvent::Restart);
        assert_eq!(t2.c.lost, 2);
    }

    #[test]
    fn far_late_and_jumps() {
        let mut t = SeqTracker::new(None);
        t.observe(1_000_000, 0);
        t.observe(1_000_000 + WINDOW + 10, 0);
        assert_eq!(t.c.lost, u64::from(WINDOW + 9));
        assert_eq!(t.observe(1_000_001, 0), SeqEvent::LateBeyondWindow);
        // 2^31 or more ahead is, modulo 2^32, behind: far late, not a jump.
        assert_eq!(t.observe(3_500_000_000, 0), SeqEvent::LateBeyondWindow);
        assert_eq!(t.observe(200_000_000, 0), SeqEvent::Jump);
        assert_eq!(t.c.jumps, 1);
        assert_eq!(t.last_seq(), Some(200_000_000));
        assert_eq!(t.c.lost, u64::from(WINDOW + 9));
    }

    #[test]
    fn sender_clock_stepping_back_is_counted() {
        let mut t = SeqTracker::new(Some(1));
        t.observe(1, 100);
        t.observe(2, 50);
        assert_eq!(t.c.tx_clock_backwards, 1);
        assert_eq!(t.c.restarts, 0);
    }

    /// Random shuffles of a sequence with drops and duplicates: the counters obey the
    /// identities whatever the order within the window.
    #[test]
    fn random_perturbations_keep_the_books_balanced() {
        let mut x: u64 = 0x1234_5678_9abc_def1;
        let mut rnd = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..50 {
            let n = 5000u32;
            let mut seqs: Vec<u32> = Vec::new();
            let mut dropped = 0u64;
            let mut dups = 0u64;
            for s in 1..=n {
                match rnd() % 20 {
                    0 if s != n => dropped += 1,
                    1 => {
                        seqs.push(s);
                        seqs.push(s);
                        dups += 1;
                    }
                    _ => seqs.push(s),
                }
            }
            // Local reorder: swap neighbours within 50 positions.
            for _ in 0..200 {
                let i = (rnd() as usize) % seqs.len();
                let j = (i + (rnd() as usize) % 50).min(seqs.len() - 1);
                seqs.swap(i, j);
            }
            // Make sure the highest number comes last so no tail loss is invisible.
            let pos = seqs.iter().position(|&s| s == n).unwrap();
            let last = seqs.remove(pos);
            seqs.push(last);
            let mut t = SeqTracker::new(Some(1));
            for &s in &seqs {
                t.observe(s, 0);
            }
            assert_eq!(t.c.received, u64::from(n) - dropped);
            assert_eq!(t.c.lost, dropped, "{:?}", t.c);
            assert_eq!(t.c.duplicates, dups);
            assert_eq!(t.c.restarts + t.c.jumps + t.c.late_beyond_window, 0);
        }
    }

    /// A pktgen frame from `src`:`port` to 10.0.0.2:9 numbered `seq`, stamped `tv`.
    pub fn pf(src: [u8; 4], port: u16, seq: u32, tv: (u32, u32)) -> PktgenFrame {
        PktgenFrame {
            addr: FlowAddr {
                src_ip: Ipv4Addr::from(src),
                dst_ip: Ipv4Addr::new(10, 0, 0, 2),
                src_port: port,
                dst_port: 9,
                vlan: None,
            },
            hdr: PktgenHdr {
                seq,
                tv_sec: tv.0,
                tv_usec: tv.1,
            },
        }
    }

    #[test]
    fn flows_and_latency() {
        let mut s = Sink::new(FlowKeyMode::Addr, Some(1));
        // One sender walking ports: one flow. Another source: a second flow.
        for seq in 1..=100u32 {
            let port = 1000 + (seq % 4) as u16;
            s.record(
                &pf([10, 0, 0, 1], port, seq, (10, 0)),
                Some(10_000_000_000 + u64::from(seq) * 1000),
            );
        }
        s.record(&pf([10, 0, 0, 3], 1, 1, (10, 0)), Some(10_000_050_000));
        let r = s.report(true);
        assert_eq!(r.flows.len(), 2);
        assert_eq!(r.totals.received, 101);
        assert_eq!(r.totals.lost, 0);
        let l = r.latency.unwrap();
        assert_eq!(l.count, 101);
        assert_eq!(l.min_ns, 1000);
        assert!(l.max_ns >= 99_900 && l.max_ns <= 100_100, "{l:?}");
        assert!(l.p50_ns >= 49_000 && l.p50_ns <= 51_100, "{l:?}");
        let hist = r.histogram.unwrap();
        assert_eq!(hist.iter().map(|h| h.1).sum::<u64>(), 101);
        // Per-port keys split the sender into four sequences, each with gaps.
        let mut s = Sink::new(FlowKeyMode::AddrPorts, None);
        for seq in 1..=100u32 {
            s.record(
                &pf([10, 0, 0, 1], 1000 + (seq % 4) as u16, seq, (0, 0)),
                None,
            );
        }
        let r = s.report(false);
        assert_eq!(r.flows.len(), 4);
        assert_eq!(r.latency_not_recorded.no_timestamp, 100);
        assert!(r.latency.is_none() && r.histogram.is_none());
    }

    #[test]
    fn ipdv_pairs_consecutive_packets_only() {
        let mut s = Sink::new(FlowKeyMode::Addr, Some(1));
        // Sent at 10 s, delays 1000, 3000, 2000 ns for seqs 1..3; seq 4 lost; seq 5 at 9000
        // (after a hole: no pair); seq 6 at 8000 (pair: 1000); then a duplicate of 6.
        let at = |d: u64| Some(10_000_000_000 + d);
        for (seq, d) in [
            (1, 1000),
            (2, 3000),
            (3, 2000),
            (5, 9000),
            (6, 8000),
            (6, 1),
        ] {
            s.record(&pf([10, 0, 0, 1], 9, seq, (10, 0)), at(d));
        }
        let v = s.report(false).ipdv.unwrap();
        // Pairs: |3000-1000|, |2000-3000|, |8000-9000|.
        assert_eq!(v.count, 3);
        assert_eq!(v.max_ns, 2000);
        assert_eq!(v.p50_ns, 1000);
        // Without stamps there is no delay and so no IPDV.
        let mut s = Sink::new(FlowKeyMode::Addr, Some(1));
        for seq in 1..=10 {
            s.record(&pf([10, 0, 0, 1], 9, seq, (0, 0)), at(5));
        }
        assert!(s.report(false).ipdv.is_none());
    }

    #[test]
    fn bogus_times_are_counted_not_recorded() {
        let mut s = Sink::new(FlowKeyMode::Addr, Some(1));
        s.record(&pf([1, 1, 1, 1], 9, 1, (100, 0)), Some(99_000_000_000)); // rx before tx
        s.record(
            &pf([1, 1, 1, 1], 9, 2, (100, 2_000_000)),
            Some(101_000_000_000),
        ); // bad usec
        s.record(&pf([1, 1, 1, 1], 9, 3, (1, 0)), Some(100_000_000_000)); // 99 s
        s.record(&pf([1, 1, 1, 1], 9, 3, (100, 0)), Some(100_000_000_000)); // duplicate
        let r = s.report(false);
        let n = r.latency_not_recorded;
        assert_eq!(
            (n.clock_backwards, n.bad_timestamp, n.out_of_range),
            (1, 1, 1)
        );
        assert!(r.latency.is_none());
        assert_eq!(r.totals.duplicates, 1);
    }

    #[test]
    fn flows_beyond_the_limit_are_untracked() {
        let mut s = Sink::new(FlowKeyMode::Addr, None);
        for i in 0..(MAX_FLOWS as u32 + 10) {
            s.record(&pf(i.to_be_bytes(), 9, 1, (0, 0)), None);
        }
        let r = s.report(false);
        assert_eq!(r.flows.len(), MAX_FLOWS);
        assert_eq!(r.untracked, 10);
    }
}
