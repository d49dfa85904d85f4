//! A config's streams on the metrics endpoint, with bounded labels: the first
//! [`MAX_STREAM_LABELS`] streams by id are labelled one by one (`stream="NAME",id="ID"`), the
//! others summed in one series (`stream="other",id="FIRST-LAST"`), so a config of any size
//! (65,536 streams) makes at most [`MAX_STREAM_LABELS`] + 1 series per family.
//!
//! Read from the receiver's live table ([`crate::rx::streams::LiveTable`]: a far end's as
//! its agent last sent it) before each scrape and a last time when the run ends. The
//! latency is a histogram of the table's buckets, an octave each from 512 ns to 134 ms (its
//! quarter-octave buckets four by four): `histogram_quantile()` reads p50 or p99 from it.

use super::{Bases, CounterFamily, Labels, Scope, advance_in};
use crate::rx::streams::LiveRow;
use crate::rx::streams::live::{LAT_BUCKETS, lower};
use prometheus_client::encoding::{EncodeMetric, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::{MetricType, TypedMetric};
use std::sync::Mutex;

/// Streams labelled one by one; the others are summed under `stream="other"`.
pub const MAX_STREAM_LABELS: usize = crate::rx::streams::DEFAULT_SHOWN;

/// The label value of the streams beyond [`MAX_STREAM_LABELS`].
pub const OTHER_STREAM: &str = "other";

/// The live table's buckets summed this many at a time into one histogram bucket.
const PER_BUCKET: usize = 4;

/// A histogram whose buckets are set whole from counts kept elsewhere (the live table's),
/// rather than observed one value at a time.
#[derive(Debug, Default)]
pub(super) struct BucketHistogram(Mutex<Option<Buckets>>);

#[derive(Debug, Clone, PartialEq)]
struct Buckets {
    sum_s: f64,
    count: u64,
    /// (upper bound in seconds, count in that bucket alone), the last at +Inf.
    per_bucket: Vec<(f64, u64)>,
}

impl BucketHistogram {
    /// Sets it from a row's latency buckets and sum. The encoder adds the buckets up
    /// (without saturating): each bucket here is what the running total gains, the total
    /// saturating at 2^64 − 1, so counts from a far end that add up past it never wrap.
    fn set(&self, r: &LiveRow) {
        let mut per_bucket = Vec::with_capacity(LAT_BUCKETS / PER_BUCKET);
        let mut total = 0u64;
        for (k, chunk) in r.lat.0.chunks(PER_BUCKET).enumerate() {
            let upper = if (k + 1) * PER_BUCKET >= LAT_BUCKETS {
                f64::INFINITY
            } else {
                lower((k + 1) * PER_BUCKET) as f64 / 1e9
            };
            let next = chunk.iter().fold(total, |a, &b| a.saturating_add(b));
            per_bucket.push((upper, next - total));
            total = next;
        }
        let b = Buckets {
            sum_s: r.lat_sum_ns as f64 / 1e9,
            count: total,
            per_bucket,
        };
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(b);
    }
}

impl TypedMetric for BucketHistogram {
    const TYPE: MetricType = MetricType::Histogram;
}

impl EncodeMetric for BucketHistogram {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        let g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let empty = Buckets {
            sum_s: 0.0,
            count: 0,
            per_bucket: vec![(f64::INFINITY, 0)],
        };
        let b = g.as_ref().unwrap_or(&empty);
        encoder.encode_histogram::<NoLabelSet>(b.sum_s, b.count, &b.per_bucket, None)
    }

    fn metric_type(&self) -> MetricType {
        Self::TYPE
    }
}

/// The streams' families.
#[derive(Default)]
pub(super) struct StreamFamilies {
    pub rx_frames: CounterFamily,
    pub rx_bytes: CounterFamily,
    pub lost: Family<Labels, Gauge>,
    pub latency: Family<Labels, BucketHistogram>,
}

/// The bounded series of `rows` (by stream id, named `names`): (labels, the row), at most
/// [`MAX_STREAM_LABELS`] + 1.
pub fn bounded_streams(names: &[String], rows: &[LiveRow]) -> Vec<(Labels, LiveRow)> {
    let label = |stream: String, id: String| vec![("stream", stream), ("id", id)];
    let mut out: Vec<(Labels, LiveRow)> = rows
        .iter()
        .take(MAX_STREAM_LABELS)
        .enumerate()
        .map(|(i, r)| {
            let name = names.get(i).cloned().unwrap_or_else(|| i.to_string());
            (label(name, i.to_string()), *r)
        })
        .collect();
    if rows.len() > MAX_STREAM_LABELS {
        let mut rest = LiveRow::default();
        for r in &rows[MAX_STREAM_LABELS..] {
            rest.add(r);
        }
        let ids = format!("{MAX_STREAM_LABELS}-{}", rows.len() - 1);
        out.push((label(OTHER_STREAM.to_string(), ids), rest));
    }
    out
}

/// [`bounded_streams`] of the streams `ids` only (ascending; every stream when None): the
/// first [`MAX_STREAM_LABELS`] of them by id labelled, the others summed under
/// `stream="other"` with `id` the range of their ids (`FIRST-LAST`; a sending port's flows
/// need not be consecutive).
pub fn bounded_streams_of(
    names: &[String],
    rows: &[LiveRow],
    ids: Option<&[u16]>,
) -> Vec<(Labels, LiveRow)> {
    let Some(ids) = ids else {
        return bounded_streams(names, rows);
    };
    let label = |stream: String, id: String| vec![("stream", stream), ("id", id)];
    let mine: Vec<(usize, &LiveRow)> = ids
        .iter()
        .map(|&id| usize::from(id))
        .filter_map(|i| rows.get(i).map(|r| (i, r)))
        .collect();
    let mut out: Vec<(Labels, LiveRow)> = mine
        .iter()
        .take(MAX_STREAM_LABELS)
        .map(|&(i, r)| {
            let name = names.get(i).cloned().unwrap_or_else(|| i.to_string());
            (label(name, i.to_string()), *r)
        })
        .collect();
    if let Some(rest) = mine.get(MAX_STREAM_LABELS..).filter(|r| !r.is_empty()) {
        let mut sum = LiveRow::default();
        for (_, r) in rest {
            sum.add(r);
        }
        let first = rest.first().map_or(0, |x| x.0);
        let last = rest.last().map_or(0, |x| x.0);
        out.push((
            label(OTHER_STREAM.to_string(), format!("{first}-{last}")),
            sum,
        ));
    }
    out
}

impl StreamFamilies {
    /// Registers the families in `reg`.
    pub fn register(&self, reg: &mut prometheus_client::registry::Registry) {
        use prometheus_client::registry::Unit;
        let labels = format!(
            "labels stream (the config's flow name) and id (its stream id); the first {MAX_STREAM_LABELS} streams by id are labelled, the others summed under stream=\"{OTHER_STREAM}\" (id: their range); from the receiver's live figures while it runs (a far end's as its agent last sent them)"
        );
        reg.register(
            "upktgen_stream_rx_frames",
            format!("Frames of each stream the receiver counted by their signature (duplicates included); {labels}"),
            self.rx_frames.clone(),
        );
        reg.register_with_unit(
            "upktgen_stream_rx",
            format!("Bytes of those frames (without FCS); {labels}"),
            Unit::Bytes,
            self.rx_bytes.clone(),
        );
        reg.register(
            "upktgen_stream_lost_packets",
            format!("Sequence holes still open per stream (a late arrival closes its hole, so this can go down; frames lost after a stream's last arrival are in the run's report only); {labels}"),
            self.lost.clone(),
        );
        reg.register_with_unit(
            "upktgen_stream_latency",
            format!("One-way latency of each stream's stamped frames, an octave a bucket from 512 ns (the counts exact, a frame's bucket to a quarter octave); {labels}"),
            Unit::Seconds,
            self.latency.clone(),
        );
    }

    /// Sets `scope`'s series from the streams' rows (absolute, since the receiver started).
    pub fn observe(&self, bases: &mut Bases, scope: &Scope, names: &[String], rows: &[LiveRow]) {
        for (l, r) in bounded_streams_of(names, rows, scope.ids.as_deref()) {
            let l = scope.with(l);
            advance_in(bases, "stream_rx_frames", &self.rx_frames, &l, r.frames);
            advance_in(bases, "stream_rx_bytes", &self.rx_bytes, &l, r.bytes);
            self.lost
                .get_or_create(&l)
                .set(i64::try_from(r.lost).unwrap_or(i64::MAX));
            self.latency.get_or_create(&l).set(&r);
        }
    }
}
