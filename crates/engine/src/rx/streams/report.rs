//! The streams' part of the receiver's report: one summary per stream, the aggregate of all
//! (what `ndr` searches on), the aggregate of the streams not labelled one by one (bounded
//! metrics labels), and a text table.

use crate::rx::sink::{LatencyCounters, LatencySummary, SeqCounters};
use serde::Serialize;
use std::fmt::Write;

/// One stream's figures.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct StreamSummary {
    /// The stream id its signature carries.
    pub id: u16,
    /// The caller's name for it (the stream id when it gave none).
    pub name: String,
    /// Frames carrying its signature, duplicates included, and their bytes (the length on
    /// the wire without FCS).
    pub frames: u64,
    pub bytes: u64,
    pub first_seq: Option<u32>,
    pub last_seq: Option<u32>,
    /// The sequence books (`received`: distinct numbers).
    #[serde(flatten)]
    pub seq: SeqCounters,
    /// One-way latency of its stamped frames, ns (None: none recorded). Min, mean and max
    /// exact; percentiles to the table's significant digits.
    pub latency: Option<LatencySummary>,
    pub latency_not_recorded: LatencyCounters,
    /// RFC 3550 interarrival jitter, ns (None: no stamped frame; 0 after the first).
    pub jitter_ns: Option<f64>,
    /// Receive times of its first and last frame, ns of the receiver's CLOCK_REALTIME.
    pub first_rx_ns: Option<u64>,
    pub last_rx_ns: Option<u64>,
}

/// Figures summed over several streams.
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct StreamAggregate {
    /// Streams summed, and those of them that received a frame.
    pub streams: u32,
    pub streams_seen: u32,
    pub frames: u64,
    pub bytes: u64,
    #[serde(flatten)]
    pub seq: SeqCounters,
    /// Over all their frames: percentiles from their histograms merged.
    pub latency: Option<LatencySummary>,
    pub latency_not_recorded: LatencyCounters,
    /// The largest of their jitters, ns.
    pub jitter_max_ns: Option<f64>,
    /// The earliest first arrival and the latest last arrival.
    pub first_rx_ns: Option<u64>,
    pub last_rx_ns: Option<u64>,
}

impl StreamAggregate {
    /// Adds one stream's counts (everything but the latency, which the table merges from
    /// the histograms).
    pub fn add(&mut self, s: &StreamSummary) {
        self.streams += 1;
        self.streams_seen += u32::from(s.frames > 0);
        self.frames += s.frames;
        self.bytes += s.bytes;
        self.seq.add(&s.seq);
        let (n, o) = (&mut self.latency_not_recorded, &s.latency_not_recorded);
        n.no_timestamp += o.no_timestamp;
        n.bad_timestamp += o.bad_timestamp;
        n.clock_backwards += o.clock_backwards;
        n.out_of_range += o.out_of_range;
        if let Some(j) = s.jitter_ns {
            self.jitter_max_ns = Some(self.jitter_max_ns.map_or(j, |m| m.max(j)));
        }
        if let Some(t) = s.first_rx_ns {
            self.first_rx_ns = Some(self.first_rx_ns.map_or(t, |m| m.min(t)));
        }
        if let Some(t) = s.last_rx_ns {
            self.last_rx_ns = Some(self.last_rx_ns.map_or(t, |m| m.max(t)));
        }
    }
}

/// What the receiver counted per stream; `--json` carries it whole.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct StreamsReport {
    /// Streams the table held (ids 0 to expected − 1).
    pub expected: u32,
    /// Significant digits of the latency percentiles.
    pub latency_digits: u8,
    /// The table's memory, bytes.
    pub memory_bytes: u64,
    /// The sender's clock minus the receiver's, ns, added to each receive time.
    #[serde(default)]
    pub clock_offset_ns: i64,
    /// Frames whose signature names an id beyond the table.
    pub foreign: u64,
    /// Frames without a signature (not counted in any stream).
    pub unsigned: u64,
    /// All the streams together.
    pub aggregate: StreamAggregate,
    /// The first `shown` streams are labelled one by one; `rest` sums the others (None when
    /// every stream is shown).
    pub shown: u32,
    pub rest: Option<StreamAggregate>,
    /// Every stream, by id.
    pub streams: Vec<StreamSummary>,
}

fn us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1000.0)
}

fn latency_cell(l: Option<&LatencySummary>) -> String {
    l.map_or("-".into(), |l| {
        format!(
            "{}/{}/{}/{}/{}/{}",
            us(l.min_ns),
            us(l.mean_ns as u64),
            us(l.p50_ns),
            us(l.p99_ns),
            us(l.p999_ns),
            us(l.max_ns)
        )
    })
}

fn jitter_cell(j: Option<f64>) -> String {
    j.map_or("-".into(), |j| format!("{:.2}", j / 1000.0))
}

/// A name for a column of `width` characters: escaped (it came from a file or a far end)
/// and cut to fit.
fn name_cell(name: &str, width: usize) -> String {
    let p = crate::text::printable(name);
    if p.chars().count() <= width {
        return p.into_owned();
    }
    let cut = p.char_indices().nth(width - 1).map_or(p.len(), |c| c.0);
    format!("{}~", &p[..cut])
}

const NAME_WIDTH: usize = 20;

/// One row of the table.
#[allow(clippy::too_many_arguments)]
fn row(
    s: &mut String,
    id: &str,
    name: &str,
    frames: u64,
    bytes: u64,
    q: &SeqCounters,
    lat: Option<&LatencySummary>,
    jitter: Option<f64>,
) {
    let _ = writeln!(
        s,
        "  {id:>5} {:<w$} {frames:>12} {bytes:>14} {:>10} {:>8} {:>8} {:>8}  {:<40} {:>9}",
        name_cell(name, NAME_WIDTH),
        q.lost,
        q.duplicates,
        q.reordered,
        q.late_beyond_window,
        latency_cell(lat),
        jitter_cell(jitter),
        w = NAME_WIDTH
    );
}

impl StreamsReport {
    /// The streams labelled one by one and the aggregate of the others (None when all are
    /// labelled): what a metrics endpoint shows, with labels bounded by `shown`.
    pub fn labelled(&self) -> (&[StreamSummary], Option<&StreamAggregate>) {
        let n = (self.shown as usize).min(self.streams.len());
        (&self.streams[..n], self.rest.as_ref())
    }

    /// The text report: a summary line, what fits no stream, then a table of the streams
    /// shown, the others in one row and all of them in the last.
    pub fn text(&self) -> String {
        let mut s = String::new();
        let a = &self.aggregate;
        let q = &a.seq;
        let _ = writeln!(
            s,
            "Streams:     {} expected, {} seen: {} frames, {} bytes; received {}, lost {}, duplicated {}, reordered {}, late beyond window {}",
            self.expected,
            a.streams_seen,
            a.frames,
            a.bytes,
            q.received,
            q.lost,
            q.duplicates,
            q.reordered,
            q.late_beyond_window
        );
        if q.restarts + q.wraps + q.jumps + q.tx_clock_backwards > 0 {
            let _ = writeln!(
                s,
                "             restarts {}, wraps {}, jumps {}, sender clock backwards {}",
                q.restarts, q.wraps, q.jumps, q.tx_clock_backwards
            );
        }
        if self.foreign + self.unsigned > 0 {
            let _ = writeln!(
                s,
                "             not in a stream: {} with a stream id beyond the {} expected, {} without a signature",
                self.foreign, self.expected, self.unsigned
            );
        }
        let n = &a.latency_not_recorded;
        if n.no_timestamp + n.clock_backwards + n.out_of_range > 0 {
            let _ = writeln!(
                s,
                "             latency not recorded: no timestamp {}, received before sent (clocks, offset {} ns) {}, over 60 s {}",
                n.no_timestamp, self.clock_offset_ns, n.clock_backwards, n.out_of_range
            );
        }
        let _ = writeln!(
            s,
            "  {:>5} {:<w$} {:>12} {:>14} {:>10} {:>8} {:>8} {:>8}  {:<40} {:>9}",
            "id",
            "stream",
            "frames",
            "bytes",
            "lost",
            "dup",
            "reorder",
            "late",
            "latency us min/mean/p50/p99/p99.9/max",
            "jitter us",
            w = NAME_WIDTH
        );
        let (shown, rest) = self.labelled();
        for st in shown {
            row(
                &mut s,
                &st.id.to_string(),
                &st.name,
                st.frames,
                st.bytes,
                &st.seq,
                st.latency.as_ref(),
                st.jitter_ns,
            );
        }
        let mut sum = |label: &str, g: &StreamAggregate| {
            row(
                &mut s,
                "",
                &format!("{label} ({})", g.streams),
                g.frames,
                g.bytes,
                &g.seq,
                g.latency.as_ref(),
                g.jitter_max_ns,
            );
        };
        if let Some(r) = rest {
            sum("others", r);
        }
        if self.streams.len() > 1 {
            sum("all", a);
        }
        if self.streams.len() > 1 {
            s.push_str("  (a row of several streams shows the largest of their jitters");
            s.push_str(if rest.is_some() {
                "; --json has every stream)\n"
            } else {
                ")\n"
            });
        }
        s
    }
}
