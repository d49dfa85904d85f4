//! Each stream's running figures, readable from any thread while frames arrive: what the
//! live lines, the metrics endpoint and a far end's `rx.stats` show of each stream before
//! the report exists.
//!
//! The receiving thread is the only writer ([`LiveTable::add`], [`LiveTable::set_lost`],
//! [`LiveTable::add_latency`]: a relaxed load and store each, no locked instruction, nothing
//! allocated); a reader takes a [`LiveRow`] per stream with relaxed loads. A row's fields are
//! each exact but read one after the other, so a row may mix two instants a few frames
//! apart (what a live figure may do; the report is exact).
//!
//! # Latency buckets
//!
//! The HDR histograms of [`super::StreamTable`] belong to the receiving thread; what other
//! threads see is a coarser, lock-free histogram per stream: [`LAT_BUCKETS`] counters at a
//! quarter of an octave each, from 256 ns up (bucket `i` covers
//! `[lower(i), lower(i + 1))`, [`lower`]), the first also holding what is below 256 ns and
//! the last everything from about 235 ms. A quantile read from it is the middle of its
//! bucket: within 12.5 % of the value between 256 ns and 235 ms ([`LatBuckets::quantile`]).
//! Two readings apart give the quantiles of the frames between them (an interval's).
//!
//! # Memory
//!
//! Per stream 4 counters and [`LAT_BUCKETS`] counters of 8 bytes: [`ROW_BYTES`] (672 bytes),
//! 2.6 MiB for 4,096 streams, 42 MiB for 65,536.

use crate::tally::Tally;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Latency buckets per stream.
pub const LAT_BUCKETS: usize = 80;
/// The first bucket's octave: 2^8 ns = 256 ns.
const FIRST_OCTAVE: u32 = 8;
/// One stream's live memory, bytes.
pub const ROW_BYTES: usize = (4 + LAT_BUCKETS) * 8;

/// The bucket of a latency of `ns` nanoseconds.
#[inline]
pub fn bucket_of(ns: u64) -> usize {
    if ns < 1 << FIRST_OCTAVE {
        return 0;
    }
    let octave = 63 - ns.leading_zeros();
    let quarter = ((ns >> (octave - 2)) & 3) as usize;
    (((octave - FIRST_OCTAVE) as usize) * 4 + quarter).min(LAT_BUCKETS - 1)
}

/// The lowest latency of bucket `i`, ns (`i` up to [`LAT_BUCKETS`]: the upper bound of the
/// last but one).
pub fn lower(i: usize) -> u64 {
    let octave = FIRST_OCTAVE + (i / 4) as u32;
    (1u64 << octave) + ((i % 4) as u64) * (1u64 << (octave - 2))
}

/// The latency a bucket stands for: its middle (the last, unbounded above: its lower bound).
pub fn middle(i: usize) -> u64 {
    if i + 1 >= LAT_BUCKETS {
        lower(LAT_BUCKETS - 1)
    } else {
        (lower(i) + lower(i + 1)) / 2
    }
}

/// A stream's latency counts by bucket (or several streams' summed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LatBuckets(pub [u64; LAT_BUCKETS]);

impl Default for LatBuckets {
    fn default() -> Self {
        LatBuckets([0; LAT_BUCKETS])
    }
}

impl LatBuckets {
    /// Frames counted (saturating: counts from a far end are not trusted to add up).
    pub fn count(&self) -> u64 {
        self.0.iter().fold(0u64, |a, &b| a.saturating_add(b))
    }

    /// Adds `o`'s counts, saturating.
    pub fn add(&mut self, o: &LatBuckets) {
        for (a, b) in self.0.iter_mut().zip(o.0) {
            *a = a.saturating_add(b);
        }
    }

    /// The counts since `earlier` (a reading of the same stream before this one).
    pub fn since(&self, earlier: &LatBuckets) -> LatBuckets {
        let mut d = *self;
        for (a, b) in d.0.iter_mut().zip(earlier.0) {
            *a = a.saturating_sub(b);
        }
        d
    }

    /// The latency at quantile `q` (0 to 1), ns: the middle of the bucket that holds it
    /// (None: nothing counted).
    pub fn quantile(&self, q: f64) -> Option<u64> {
        let n = self.count();
        if n == 0 {
            return None;
        }
        // The rank of the quantile's frame, 1 to n.
        let rank = ((q.clamp(0.0, 1.0) * n as f64).ceil() as u64).clamp(1, n);
        let mut seen = 0u64;
        for (i, &c) in self.0.iter().enumerate() {
            // Saturating: a far end's counts may add up past 2^64 − 1 (count() saturates too).
            seen = seen.saturating_add(c);
            if seen >= rank {
                return Some(middle(i));
            }
        }
        Some(middle(LAT_BUCKETS - 1))
    }

    /// The buckets that hold something, as (index, count): a compact form for the wire.
    pub fn sparse(&self) -> Vec<(u8, u64)> {
        self.0
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(i, c)| (i as u8, *c))
            .collect()
    }

    /// Buckets from their [`Self::sparse`] form (indices beyond the last are ignored).
    pub fn from_sparse(s: &[(u8, u64)]) -> LatBuckets {
        let mut b = LatBuckets::default();
        for &(i, c) in s {
            if let Some(x) = b.0.get_mut(usize::from(i)) {
                *x = x.saturating_add(c);
            }
        }
        b
    }
}

/// One stream's live figures at one reading.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LiveRow {
    /// Frames carrying its signature (duplicates included) and their bytes.
    pub frames: u64,
    pub bytes: u64,
    /// Sequence holes open (a late arrival closes its hole: this can go down).
    pub lost: u64,
    pub lat: LatBuckets,
    /// The sum of the latencies the buckets count, ns.
    pub lat_sum_ns: u64,
}

impl LiveRow {
    /// Adds `o`'s figures (an aggregate of several streams), saturating: a far end's
    /// figures are not trusted to add up.
    pub fn add(&mut self, o: &LiveRow) {
        self.frames = self.frames.saturating_add(o.frames);
        self.bytes = self.bytes.saturating_add(o.bytes);
        self.lost = self.lost.saturating_add(o.lost);
        self.lat.add(&o.lat);
        self.lat_sum_ns = self.lat_sum_ns.saturating_add(o.lat_sum_ns);
    }
}

/// Every stream's live figures, by stream id, and the streams' names.
#[derive(Debug)]
pub struct LiveTable {
    names: Box<[String]>,
    counts: Tally,
    lost: Box<[AtomicU64]>,
    lat_sum: Box<[AtomicU64]>,
    /// `LAT_BUCKETS` counters per stream, stream after stream.
    lat: Box<[AtomicU64]>,
}

impl LiveTable {
    /// A table of the streams `names` (by id), all at zero.
    pub fn new(names: Vec<String>) -> LiveTable {
        let n = names.len();
        LiveTable {
            names: names.into(),
            counts: Tally::new(n),
            lost: (0..n).map(|_| AtomicU64::new(0)).collect(),
            lat_sum: (0..n).map(|_| AtomicU64::new(0)).collect(),
            lat: (0..n * LAT_BUCKETS).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Streams in the table.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether it holds no stream.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The streams' names, by id.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Stream `i`'s frames and bytes so far.
    pub fn get(&self, i: usize) -> (u64, u64) {
        self.counts.get(i)
    }

    /// From the receiving thread: one frame of `len` bytes in stream `i`.
    #[inline]
    pub fn add(&self, i: usize, len: u64) {
        self.counts.add(i, len);
    }

    /// From the receiving thread: stream `i`'s open sequence holes.
    #[inline]
    pub fn set_lost(&self, i: usize, lost: u64) {
        if let Some(c) = self.lost.get(i) {
            c.store(lost, Relaxed);
        }
    }

    /// From the receiving thread: one latency of `ns` in stream `i`.
    #[inline]
    pub fn add_latency(&self, i: usize, ns: u64) {
        if let (Some(c), Some(sum)) = (
            self.lat.get(i * LAT_BUCKETS + bucket_of(ns)),
            self.lat_sum.get(i),
        ) {
            c.store(c.load(Relaxed) + 1, Relaxed);
            sum.store(sum.load(Relaxed).saturating_add(ns), Relaxed);
        }
    }

    /// Stream `i`'s figures now.
    pub fn row(&self, i: usize) -> LiveRow {
        let (frames, bytes) = self.counts.get(i);
        let mut lat = LatBuckets::default();
        for (b, c) in lat
            .0
            .iter_mut()
            .zip(&self.lat[i * LAT_BUCKETS..(i + 1) * LAT_BUCKETS])
        {
            *b = c.load(Relaxed);
        }
        LiveRow {
            frames,
            bytes,
            lost: self.lost[i].load(Relaxed),
            lat,
            lat_sum_ns: self.lat_sum[i].load(Relaxed),
        }
    }

    /// Every stream's figures now, by id.
    pub fn rows(&self) -> Vec<LiveRow> {
        (0..self.len()).map(|i| self.row(i)).collect()
    }

    /// Replaces stream `i`'s figures with `r` (a far receiver's, read over its session);
    /// nothing for an id beyond the table.
    pub fn store(&self, i: usize, r: &LiveRow) {
        if i >= self.len() {
            return;
        }
        self.counts.set(i, r.frames, r.bytes);
        self.lost[i].store(r.lost, Relaxed);
        self.lat_sum[i].store(r.lat_sum_ns, Relaxed);
        for (c, v) in self.lat[i * LAT_BUCKETS..(i + 1) * LAT_BUCKETS]
            .iter()
            .zip(r.lat.0)
        {
            c.store(v, Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_quarter_octaves_from_256_ns() {
        assert_eq!(bucket_of(0), 0);
        assert_eq!(bucket_of(255), 0);
        assert_eq!(bucket_of(256), 0);
        assert_eq!(bucket_of(320), 1);
        assert_eq!(bucket_of(511), 3);
        assert_eq!(bucket_of(512), 4);
        assert_eq!(bucket_of(u64::MAX), LAT_BUCKETS - 1);
        for i in 0..LAT_BUCKETS {
            assert_eq!(bucket_of(lower(i)), i, "lower({i})");
            assert_eq!(bucket_of(lower(i + 1) - 1), i, "upper of {i}");
        }
        assert_eq!(
            lower(LAT_BUCKETS - 1),
            7 << 25,
            "the last from about 235 ms"
        );
    }

    /// A bucket's middle is within 12.5 % of every value it holds (256 ns to 235 ms).
    #[test]
    fn a_quantile_is_within_an_eighth() {
        let mut v = 256u64;
        while v < lower(LAT_BUCKETS - 1) {
            let m = middle(bucket_of(v)) as f64;
            let err = (m - v as f64).abs() / v as f64;
            assert!(err <= 0.125 + 1e-9, "{v} ns read as {m}: {err}");
            v = v * 21 / 20 + 1;
        }
    }

    #[test]
    fn quantiles_of_an_interval() {
        let t = LiveTable::new(vec!["a".into(), "b".into()]);
        for _ in 0..99 {
            t.add_latency(1, 4_000);
        }
        t.add_latency(1, 1_000_000);
        let before = t.row(1).lat;
        assert_eq!(before.count(), 100);
        assert_eq!(before.quantile(0.5), Some(middle(bucket_of(4_000))));
        assert_eq!(before.quantile(0.99), Some(middle(bucket_of(4_000))));
        assert_eq!(before.quantile(1.0), Some(middle(bucket_of(1_000_000))));
        for _ in 0..10 {
            t.add_latency(1, 50_000);
        }
        let d = t.row(1).lat.since(&before);
        assert_eq!(d.count(), 10);
        assert_eq!(d.quantile(0.5), Some(middle(bucket_of(50_000))));
        assert_eq!(t.row(0).lat.quantile(0.5), None, "stream a: nothing");
    }

    #[test]
    fn rows_stored_and_read_back() {
        let t = LiveTable::new(vec!["a".into(), "b".into()]);
        t.add(0, 60);
        t.add(0, 60);
        t.set_lost(0, 3);
        t.add_latency(0, 10_000);
        let r = t.row(0);
        assert_eq!((r.frames, r.bytes, r.lost, r.lat.count()), (2, 120, 3, 1));
        assert_eq!(r.lat_sum_ns, 10_000);
        let far = LiveTable::new(t.names().to_vec());
        far.store(0, &r);
        far.store(9, &r);
        assert_eq!(far.rows(), t.rows());
        let b = LatBuckets::from_sparse(&r.lat.sparse());
        assert_eq!(b, r.lat);
        assert_eq!(LatBuckets::from_sparse(&[(200, 5)]).count(), 0);
        let mut sum = LiveRow::default();
        sum.add(&r);
        sum.add(&r);
        assert_eq!((sum.frames, sum.lost, sum.lat.count()), (4, 6, 2));
    }
}
