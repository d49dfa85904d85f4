//! Per-stream counting at the receiver, from the signature at the end of each frame.
//!
//! Every frame of a counted stream ends with upktgen's 16-byte signature
//! ([`crate::wire::signature`]): the stream's id, the stream's own sequence number (0 for its
//! first frame) and the send time (ns of the sender's CLOCK_REALTIME). The receiver reads it
//! whatever came before (the DUT may have rewritten the addresses or wrapped the frame), and
//! keeps one [`StreamTable`] entry per expected stream, indexed by the id.
//!
//! # What is counted
//!
//! - A frame whose signature names an id below the table's size: its stream's `frames` and
//!   `bytes` (duplicates included), then its sequence in the same books as a pktgen flow
//!   ([`SeqTracker`], the one implementation, here with a window of [`STREAM_WINDOW`]
//!   numbers: received, lost, duplicates, reordered, late beyond the window, restarts,
//!   wraps, jumps), its latency and its jitter (duplicates excepted), first and last arrival.
//! - `foreign`: a signature naming an id the table does not hold (a stream of another run,
//!   or foreign traffic whose last bytes happen to hold the magic).
//! - `unsigned`: no signature at the end (shorter than 16 bytes, no magic, or the end of the
//!   frame not captured). Such frames belong to no stream.
//!
//! Frames lost after the last one received are invisible here, as for the pktgen flows: the
//! sender's count names them.
//!
//! # Latency and jitter
//!
//! Latency = receive time + `offset_ns` − the signature's send time, where `offset_ns` is the
//! sender's clock minus the receiver's (0 when both share a clock, as in the lab; a far
//! receiver's measured offset otherwise). Recorded in a per-stream HDR histogram of
//! nanoseconds, 1 ns to [`MAX_LATENCY_NS`]; min, mean and max are kept exactly beside it.
//! Not recorded but counted as the pktgen sink does: `no_timestamp` (send time 0),
//! `clock_backwards` (negative latency: the offset is wrong or a clock stepped),
//! `out_of_range` (above [`MAX_LATENCY_NS`]); `bad_timestamp` never happens here (a send
//! time in ns has no invalid value).
//!
//! Jitter is RFC 3550's interarrival jitter (§6.4.1, appendix A.8), in ns: for each stamped
//! frame after the stream's first, D = its transit time (receive − send) minus that of the
//! previous stamped frame *in order of arrival*, and J += (|D| − J) / 16. The offset cancels
//! out of D, so jitter needs no clock agreement.
//!
//! # Memory
//!
//! The table is allocated once, at its size (1 to [`MAX_STREAMS`] streams); nothing is
//! allocated per frame. Per stream: the sequence window ([`STREAM_WINDOW`] bits, 512 bytes),
//! the latency histogram's counts (u32 each), the fixed fields and the live figures other
//! threads read ([`live`], 672 bytes). Up to [`FINE_STREAMS`]
//! streams the histograms keep 2 significant digits (under 1 % error on a percentile), and a
//! stream takes at most [`FINE_STREAM_BYTES`] (18 KiB: 4,096 streams stay within
//! 72 MiB); a larger table keeps 1 significant digit (under 10 %), at most
//! [`COARSE_STREAM_BYTES`] (4 KiB) a stream (65,536 streams within 256 MiB).
//! [`StreamTable::memory_bytes`] is the table's actual footprint.

pub mod live;
mod report;
#[cfg(test)]
mod tests;

pub use live::{LatBuckets, LiveRow, LiveTable};
pub use report::{StreamAggregate, StreamSummary, StreamsReport};

use super::sink::{LatencyCounters, LatencySummary, MAX_LATENCY_NS, SeqEvent, SeqTracker};
use crate::wire::signature::{self, Signature};
use hdrhistogram::Histogram;
use std::sync::Arc;

/// The most streams a table holds: every id a signature can name.
pub const MAX_STREAMS: usize = signature::MAX_STREAMS;
/// Sequence numbers each stream remembers below its highest (reordering deeper than this is
/// `late_beyond_window`).
pub const STREAM_WINDOW: u32 = 4096;
/// Tables up to this many streams keep 2 significant digits of latency; larger ones 1.
pub const FINE_STREAMS: usize = 4096;
/// The bound on one stream's memory in a table of at most [`FINE_STREAMS`] streams.
pub const FINE_STREAM_BYTES: usize = 18 * 1024;
/// The bound on one stream's memory in a larger table.
pub const COARSE_STREAM_BYTES: usize = 4096;
// The budgets the module documentation states.
const _: () = assert!(FINE_STREAMS * FINE_STREAM_BYTES <= 72 << 20);
const _: () = assert!(MAX_STREAMS * COARSE_STREAM_BYTES <= 256 << 20);

/// What the receiver is told about the streams it counts (`RxConfig::streams`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RxStreams {
    /// The streams' names, indexed by stream id: the table holds `names.len()` streams.
    pub names: Vec<String>,
    /// The sender's clock minus the receiver's, ns (0: one clock, as in the lab).
    pub clock_offset_ns: i64,
    /// The receiver is up before the streams' first frames: numbers missing before a
    /// stream's first frame received (from 0) count as lost.
    pub from_start: bool,
    /// Streams the report shows one by one (text rows, metrics labels); the others are
    /// summed in its `rest`.
    pub shown: usize,
}

/// Streams a report shows one by one unless told otherwise (the metrics endpoint's bound on
/// flow labels, `crate::metrics::MAX_FLOW_LABELS`, is the same).
pub const DEFAULT_SHOWN: usize = 64;

impl RxStreams {
    /// Streams named `names`, sender and receiver on one clock, the receiver up first.
    pub fn new(names: Vec<String>) -> Self {
        RxStreams {
            names,
            clock_offset_ns: 0,
            from_start: true,
            shown: DEFAULT_SHOWN,
        }
    }
}

/// A table that cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StreamsError {
    #[error("streams: none to count (expected at least 1)")]
    Empty,
    #[error("streams: {0} to count, at most 65536 (a signature's stream id has 16 bits)")]
    TooMany(usize),
}

/// The counters of one stream.
#[derive(Debug, Clone)]
struct Stream {
    seq: SeqTracker,
    frames: u64,
    bytes: u64,
    /// Receive times of the first and the last frame (meaningful once `frames` > 0).
    first_rx_ns: u64,
    last_rx_ns: u64,
    hist: Histogram<u32>,
    lat_min: u64,
    lat_max: u64,
    lat_sum: u128,
    lat_not: LatencyCounters,
    /// The previous stamped frame's transit time (receive − send, ns), in arrival order.
    prev_transit: Option<i128>,
    /// RFC 3550's J, ns.
    jitter: f64,
}

impl Stream {
    fn new(expect_first: Option<u32>, digits: u8) -> Stream {
        Stream {
            seq: SeqTracker::with_window(expect_first, STREAM_WINDOW),
            frames: 0,
            bytes: 0,
            first_rx_ns: 0,
            last_rx_ns: 0,
            hist: latency_histogram(digits),
            lat_min: u64::MAX,
            lat_max: 0,
            lat_sum: 0,
            lat_not: LatencyCounters::default(),
            prev_transit: None,
            jitter: 0.0,
        }
    }

    /// The latency figures: exact min, mean and max; percentiles from the histogram.
    fn latency(&self) -> Option<LatencySummary> {
        let h = &self.hist;
        (!h.is_empty()).then(|| LatencySummary {
            count: h.len(),
            min_ns: self.lat_min,
            mean_ns: self.lat_sum as f64 / h.len() as f64,
            p50_ns: quantile(h, 0.50, self.lat_min, self.lat_max),
            p90_ns: quantile(h, 0.90, self.lat_min, self.lat_max),
            p99_ns: quantile(h, 0.99, self.lat_min, self.lat_max),
            p999_ns: quantile(h, 0.999, self.lat_min, self.lat_max),
            max_ns: self.lat_max,
        })
    }

    fn heap_bytes(&self) -> usize {
        self.seq.heap_bytes() + self.hist.distinct_values() * std::mem::size_of::<u32>()
    }
}

/// The latency at quantile `q` of `h`, within the exact `min` and `max` of the same
/// frames: a histogram bucket's highest equivalent value may lie above the largest value
/// recorded in it (with 1 significant digit, by up to a tenth), and a percentile above
/// the maximum is nonsense.
fn quantile<T: hdrhistogram::Counter>(h: &Histogram<T>, q: f64, min: u64, max: u64) -> u64 {
    h.value_at_quantile(q).clamp(min.min(max), max)
}

/// An HDR histogram of latencies in ns, 1 ns to [`MAX_LATENCY_NS`], `digits` significant.
fn latency_histogram<T: hdrhistogram::Counter>(digits: u8) -> Histogram<T> {
    Histogram::new_with_bounds(1, MAX_LATENCY_NS, digits).expect("constant, valid histogram bounds")
}

/// One entry per expected stream, indexed by stream id, and the frames that fit none.
#[derive(Debug, Clone)]
pub struct StreamTable {
    streams: Box<[Stream]>,
    /// Significant digits of the latency histograms.
    digits: u8,
    /// Frames whose signature names an id beyond the table.
    foreign: u64,
    /// Frames without a signature at their end.
    unsigned: u64,
    /// Each stream's figures as they arrive, for other threads (live counts).
    live: Arc<LiveTable>,
}

impl StreamTable {
    /// A table of `n` streams (ids 0 to n − 1). With `from_start`, numbers missing before a
    /// stream's first frame received count as lost (its sequence starts at 0).
    pub fn new(n: usize, from_start: bool) -> Result<StreamTable, StreamsError> {
        Self::named((0..n).map(|i| i.to_string()).collect(), from_start)
    }

    /// A table of the streams `names` (by id), whose live figures carry those names.
    pub fn named(names: Vec<String>, from_start: bool) -> Result<StreamTable, StreamsError> {
        let n = names.len();
        if n == 0 {
            return Err(StreamsError::Empty);
        }
        if n > MAX_STREAMS {
            return Err(StreamsError::TooMany(n));
        }
        let digits = if n <= FINE_STREAMS { 2 } else { 1 };
        let first = from_start.then_some(0);
        Ok(StreamTable {
            streams: (0..n).map(|_| Stream::new(first, digits)).collect(),
            digits,
            foreign: 0,
            unsigned: 0,
            live: Arc::new(LiveTable::new(names)),
        })
    }

    /// Each stream's frames, bytes, open holes and latency buckets so far, readable from
    /// any thread while frames arrive (frames with duplicates included, as
    /// [`StreamSummary::frames`](report::StreamSummary) counts).
    pub fn live(&self) -> Arc<LiveTable> {
        Arc::clone(&self.live)
    }

    /// Streams in the table.
    pub fn len(&self) -> usize {
        self.streams.len()
    }

    /// Never: a table holds at least one stream.
    pub fn is_empty(&self) -> bool {
        self.streams.is_empty()
    }

    /// Significant digits the latency percentiles keep (2, or 1 above [`FINE_STREAMS`]).
    pub fn latency_digits(&self) -> u8 {
        self.digits
    }

    /// The table's memory in bytes: the structs, what each stream holds on the heap and
    /// its live figures ([`live::ROW_BYTES`] a stream).
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + std::mem::size_of_val(&*self.streams)
            + self.streams.len() * live::ROW_BYTES
            + self.streams.iter().map(Stream::heap_bytes).sum::<usize>()
    }

    /// Frames with a signature naming an id beyond the table.
    pub fn foreign(&self) -> u64 {
        self.foreign
    }

    /// Frames without a signature.
    pub fn unsigned(&self) -> u64 {
        self.unsigned
    }

    /// Accounts one received frame: `data` the bytes captured, `wire_len` the frame's length
    /// (without FCS; when more than was captured, the end and its signature are missing),
    /// `rx_ns` its receive time (ns, the receiver's CLOCK_REALTIME), `offset_ns` the sender's
    /// clock minus the receiver's. Returns what it was for its stream (None: no stream).
    #[inline]
    pub fn record_frame(
        &mut self,
        data: &[u8],
        wire_len: u32,
        rx_ns: u64,
        offset_ns: i64,
    ) -> Option<SeqEvent> {
        if data.len() < wire_len as usize {
            self.unsigned += 1;
            return None;
        }
        match Signature::parse(data) {
            Ok(sig) => self.record(&sig, wire_len, rx_ns, offset_ns),
            Err(_) => {
                self.unsigned += 1;
                None
            }
        }
    }

    /// Accounts one frame of `len` bytes carrying `sig`, received at `rx_ns` (see
    /// [`Self::record_frame`]).
    #[inline]
    pub fn record(
        &mut self,
        sig: &Signature,
        len: u32,
        rx_ns: u64,
        offset_ns: i64,
    ) -> Option<SeqEvent> {
        let id = usize::from(sig.stream);
        let Some(s) = self.streams.get_mut(id) else {
            self.foreign += 1;
            return None;
        };
        if s.frames == 0 {
            s.first_rx_ns = rx_ns;
        }
        s.frames += 1;
        s.bytes += u64::from(len);
        self.live.add(id, u64::from(len));
        s.last_rx_ns = rx_ns;
        let ev = s.seq.observe(sig.seq, sig.tx_ns);
        if ev != (SeqEvent::New { skipped: 0 }) {
            self.live.set_lost(id, s.seq.c.lost);
        }
        if ev == SeqEvent::Duplicate {
            return Some(ev);
        }
        if sig.tx_ns == 0 {
            s.lat_not.no_timestamp += 1;
            return Some(ev);
        }
        let transit = i128::from(rx_ns) - i128::from(sig.tx_ns);
        if let Some(prev) = s.prev_transit {
            let d = (transit - prev).unsigned_abs() as f64;
            s.jitter += (d - s.jitter) / 16.0;
        }
        s.prev_transit = Some(transit);
        let lat = transit + i128::from(offset_ns);
        if lat < 0 {
            s.lat_not.clock_backwards += 1;
        } else if lat > i128::from(MAX_LATENCY_NS) {
            s.lat_not.out_of_range += 1;
        } else {
            let v = lat as u64;
            // Values below the histogram's lowest (1 ns) are recorded as 1; the count of a
            // bucket saturates (u32) rather than wrap.
            s.hist.saturating_record(v.max(1));
            s.lat_min = s.lat_min.min(v);
            s.lat_max = s.lat_max.max(v);
            s.lat_sum += u128::from(v);
            self.live.add_latency(id, v);
        }
        Some(ev)
    }

    /// One stream's figures; `name` is the caller's for it.
    fn summary(&self, id: usize, name: &str) -> StreamSummary {
        let s = &self.streams[id];
        let seen = s.frames > 0;
        StreamSummary {
            id: id as u16,
            name: name.to_string(),
            frames: s.frames,
            bytes: s.bytes,
            first_seq: s.seq.first_seq,
            last_seq: s.seq.last_seq(),
            seq: s.seq.c,
            latency: s.latency(),
            latency_not_recorded: s.lat_not,
            jitter_ns: s.prev_transit.map(|_| s.jitter),
            first_rx_ns: seen.then_some(s.first_rx_ns),
            last_rx_ns: seen.then_some(s.last_rx_ns),
        }
    }

    /// The aggregate of the streams `ids` (their summaries `sums`), with the latency
    /// percentiles of all their frames (the histograms merged).
    fn aggregate(&self, ids: std::ops::Range<usize>, sums: &[StreamSummary]) -> StreamAggregate {
        let mut a = StreamAggregate::default();
        for s in sums {
            a.add(s);
        }
        let mut h: Histogram<u64> = latency_histogram(self.digits);
        for s in &self.streams[ids] {
            for v in s.hist.iter_recorded() {
                h.saturating_record_n(v.value_iterated_to(), u64::from(v.count_at_value()));
            }
        }
        a.latency = (!h.is_empty()).then(|| {
            let (min, max) = sums
                .iter()
                .filter_map(|s| s.latency.as_ref())
                .fold((u64::MAX, 0), |(lo, hi), l| {
                    (lo.min(l.min_ns), hi.max(l.max_ns))
                });
            let weighted: f64 = sums
                .iter()
                .filter_map(|s| s.latency.as_ref())
                .map(|l| l.mean_ns * l.count as f64)
                .sum();
            LatencySummary {
                count: h.len(),
                min_ns: min,
                mean_ns: weighted / h.len() as f64,
                p50_ns: quantile(&h, 0.50, min, max),
                p90_ns: quantile(&h, 0.90, min, max),
                p99_ns: quantile(&h, 0.99, min, max),
                p999_ns: quantile(&h, 0.999, min, max),
                max_ns: max,
            }
        });
        a
    }

    /// The report: every stream named from `names` (by id; a stream without a name is
    /// called by its id), the aggregate of all, and, with `shown` streams labelled one by
    /// one (metrics labels, text rows), the aggregate of the streams after them.
    pub fn report(&self, names: &[String], shown: usize) -> StreamsReport {
        let streams: Vec<StreamSummary> = (0..self.streams.len())
            .map(|id| match names.get(id) {
                Some(n) => self.summary(id, n),
                None => self.summary(id, &id.to_string()),
            })
            .collect();
        let n = streams.len();
        let shown = shown.min(n);
        StreamsReport {
            expected: n as u32,
            latency_digits: self.digits,
            memory_bytes: self.memory_bytes() as u64,
            clock_offset_ns: 0,
            foreign: self.foreign,
            unsigned: self.unsigned,
            aggregate: self.aggregate(0..n, &streams),
            shown: shown as u32,
            rest: (shown < n).then(|| self.aggregate(shown..n, &streams[shown..])),
            streams,
        }
    }
}
