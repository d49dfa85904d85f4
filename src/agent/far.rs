//! A receiver at the far end of a two-ended run: the agent reached through a transport,
//! its receiver started on the far interface, the interface's counters around the run, the
//! clock offset between the hosts, and at the end the far end's report.

use super::client::{Peer, PeerError, Transport};
use super::clock::{self, ClockOffset, OneWay};
use super::proto::{
    HelloReply, REPORT_CHUNK, RxStart, RxStarted, RxStats, RxStatsParams, RxStop, RxStreamsParams,
};
use crate::rx::recv::RxProgress;
use crate::rx::report::RxReport;
use crate::sample::IfaceCounters;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Clock exchanges made to estimate the offset (the best of them is kept).
pub const CLOCK_EXCHANGES: usize = 16;

/// Why the far receiver could not be started, watched or finished: the session's own
/// errors (each names the peer), or this side's.
#[derive(Debug, thiserror::Error)]
pub enum FarError {
    #[error(transparent)]
    Peer(#[from] PeerError),
    #[error("peer {uri}: no counters for {dev}")]
    NoCounters { uri: String, dev: String },
    #[error("starting the far end's statistics thread: {0}")]
    Spawn(std::io::Error),
    #[error("the far end's statistics thread was already stopped")]
    Stopped,
    #[error("the far end's statistics thread panicked")]
    Panicked,
    /// What the far end said cannot be true (`what` says why): it is not taken as a result.
    #[error(
        "peer {uri}: {method}: the far end's answer is impossible ({what}): not taken as a result"
    )]
    Impossible {
        uri: String,
        method: &'static str,
        what: String,
    },
    #[error(
        "peer {uri}: its clock is {secs} s off this host's: a stream's latency is reckoned across the two clocks within {} s at most (set the far end's clock)",
        MAX_STREAM_OFFSET_NS / 1_000_000_000
    )]
    ClockTooFar { uri: String, secs: i64 },
}

/// The largest clock offset a far receiver counting streams is told (10^15 ns, 11.6 days:
/// `upktgen rx --clock-offset-ns`'s bound).
pub const MAX_STREAM_OFFSET_NS: i64 = 1_000_000_000_000_000;

/// How often the controller calls the far end at least while it sends (`rx.stats`), so
/// that the agent's watchdog (docs/agent.md, default 30 s) knows the controller is there.
pub const KEEPALIVE: Duration = Duration::from_secs(5);

/// The first number of `v` that is 2^64 − 1, by its path: no counter of a run reaches it,
/// and a far end that sends one is lying (or has wrapped a subtraction).
fn max_counter(v: &serde_json::Value, path: &str) -> Option<String> {
    match v {
        serde_json::Value::Number(n) if n.as_u64() == Some(u64::MAX) => {
            Some(format!("{path} is 2^64-1"))
        }
        serde_json::Value::Object(m) => m.iter().find_map(|(k, x)| {
            max_counter(
                x,
                &if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                },
            )
        }),
        serde_json::Value::Array(a) => a
            .iter()
            .enumerate()
            .find_map(|(i, x)| max_counter(x, &format!("{path}[{i}]"))),
        _ => None,
    }
}

/// What a receiver's report says against what is possible: no counter at 2^64 − 1, no
/// more pktgen frames than frames, no more frames received than were sent (and duplicated
/// on the way). Says what is impossible, if anything.
fn impossible_report(r: &RxReport, sent: u64) -> Option<String> {
    if let Some(w) = serde_json::to_value(r)
        .ok()
        .and_then(|v| max_counter(&v, ""))
    {
        return Some(w);
    }
    let (f, t) = (&r.frames, &r.sink.totals);
    if f.pktgen > f.frames {
        return Some(format!(
            "{} pktgen frames of {} frames in all",
            f.pktgen, f.frames
        ));
    }
    if t.received > sent.saturating_add(t.duplicates) {
        return Some(format!(
            "{} frames received of {sent} sent (and {} duplicates)",
            t.received, t.duplicates
        ));
    }
    None
}

/// Interface counters from the far end: one at 2^64 − 1 is impossible (named, if any).
fn impossible_counters(c: &IfaceCounters) -> Option<String> {
    serde_json::to_value(c)
        .ok()
        .and_then(|v| max_counter(&v, ""))
}

type Result<T, E = FarError> = std::result::Result<T, E>;

/// A receiver running at the far end.
pub struct RemoteReceiver {
    peer: Peer,
    dev: String,
    id: u32,
    before: IfaceCounters,
    clock: ClockOffset,
    started: RxStarted,
}

/// What the far end reports, with what the controller knows of it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FarReport {
    pub peer: String,
    pub host: HelloReply,
    pub dev: String,
    /// The far interface's counters over the run.
    pub iface: IfaceCounters,
    pub clock: ClockOffset,
    /// The receiver's own report (as `upktgen rx --json` prints it).
    pub receiver: RxReport,
    /// One-way latency corrected by the clock offset (None without latency figures).
    pub one_way: Option<OneWayLatency>,
}

/// The far end in a run's report: where it was and what its clock and interface said (its
/// receiver's report is the run's `rx_analysis.receiver`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PeerSummary {
    pub peer: String,
    pub host: HelloReply,
    pub dev: String,
    pub iface: IfaceCounters,
    pub clock: ClockOffset,
    pub one_way: Option<OneWayLatency>,
    /// af_xdp or af_packet.
    pub backend: String,
}

/// The receiver's latency percentiles across the two clocks, corrected and bounded.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct OneWayLatency {
    pub min: OneWay,
    pub p50: OneWay,
    pub p99: OneWay,
    pub max: OneWay,
    /// p99 − p50 and max − min: spreads that need no common clock.
    pub spread_p99_p50_ns: u64,
    pub spread_max_min_ns: u64,
}

/// What a far receiver counting streams (`--stream`) on another host is told of the
/// clocks: the sender's minus its own (the negated offset), so each stream's latency is in
/// the sender's time. Nothing on one host, without streams, or when the offset is within
/// its own bound (half the best round trip): the clocks then agree as far as the control
/// channel can tell (NTP or PTP keeps them closer than it measures), and are taken as they
/// are. A single stream's latency is corrected here instead ([`OneWayLatency`]), with its
/// bound.
fn stream_clock_args(
    uri: &str,
    rx_args: &[String],
    clock: &ClockOffset,
) -> Result<Vec<String>, FarError> {
    if clock.same_clock
        || !rx_args.iter().any(|a| a == "--stream")
        || clock.offset_ns.unsigned_abs() <= clock.uncertainty_ns
    {
        return Ok(Vec::new());
    }
    let o = clock.offset_ns.saturating_neg();
    if o.unsigned_abs() > MAX_STREAM_OFFSET_NS as u64 {
        return Err(FarError::ClockTooFar {
            uri: uri.to_string(),
            secs: clock.offset_ns / 1_000_000_000,
        });
    }
    Ok(vec!["--clock-offset-ns".to_string(), o.to_string()])
}

impl RemoteReceiver {
    /// Connects, estimates the clock offset, reads the far interface's counters and starts
    /// the far receiver with `rx_args` (`upktgen rx`'s options; `--dev` is added).
    pub fn start(t: &Transport, dev: &str, rx_args: &[String]) -> Result<RemoteReceiver> {
        let mut peer = Peer::connect(t)?;
        let clock = peer.clock_offset(CLOCK_EXCHANGES)?;
        let before = Self::read_counters(&mut peer, dev)?;
        let mut args = vec!["--dev".to_string(), dev.to_string()];
        args.extend(rx_args.iter().cloned());
        args.extend(stream_clock_args(&peer.uri.to_string(), rx_args, &clock)?);
        let started: RxStarted = peer.call("rx.start", &RxStart { args })?;
        Ok(RemoteReceiver {
            peer,
            dev: dev.to_string(),
            id: started.id,
            before,
            clock,
            started,
        })
    }

    fn read_counters(peer: &mut Peer, dev: &str) -> Result<IfaceCounters> {
        let mut m: BTreeMap<String, IfaceCounters> =
            peer.call("counters", &json!({ "devs": [dev] }))?;
        let c = m.remove(dev).ok_or_else(|| FarError::NoCounters {
            uri: peer.uri.to_string(),
            dev: dev.to_string(),
        })?;
        match impossible_counters(&c) {
            Some(what) => Err(FarError::Impossible {
                uri: peer.uri.to_string(),
                method: "counters",
                what: format!("{dev}: {what}"),
            }),
            None => Ok(c),
        }
    }

    /// The backend the far end chose, and why (with auto).
    pub fn started(&self) -> &RxStarted {
        &self.started
    }

    pub fn peer_name(&self) -> String {
        self.peer.uri.to_string()
    }

    /// Running totals of the far receiver (none at 2^64 − 1), and with `streams_from` the
    /// live figures of its streams from that id (a chunk of them).
    pub fn stats(&mut self, streams_from: Option<u32>) -> Result<RxStats> {
        let p = RxStatsParams {
            id: self.id,
            streams_from,
        };
        let s: RxStats = self.peer.call("rx.stats", &p)?;
        if let Some(what) = serde_json::to_value(&s)
            .ok()
            .and_then(|v| max_counter(&v, ""))
        {
            return Err(FarError::Impossible {
                uri: self.peer.uri.to_string(),
                method: "rx.stats",
                what,
            });
        }
        Ok(s)
    }

    /// Reads the far receiver's running totals every `interval` from now on, on a thread of
    /// its own, for the live lines and the metrics endpoint (and, every [`KEEPALIVE`] at
    /// least, to tell the agent's watchdog that the controller is there); [`FarWatch::stop`]
    /// gives the receiver back.
    ///
    /// `streams`: the names of the streams the far receiver counts (by id), whose live
    /// figures are read each interval too, in chunks ([`super::proto::STATS_CHUNK`]), into the
    /// progress' stream table.
    pub fn watch(mut self, interval: Duration, streams: Option<Vec<String>>) -> Result<FarWatch> {
        let progress = RxProgress::default();
        if let Some(names) = streams {
            let _ = progress
                .streams
                .set(Arc::new(crate::rx::streams::LiveTable::new(names)));
        }
        let progress = Arc::new(progress);
        let stop = Arc::new(AtomicBool::new(false));
        let (p, quit) = (Arc::clone(&progress), Arc::clone(&stop));
        let thread = std::thread::Builder::new()
            .name("upktgen-far-stats".into())
            .spawn(move || {
                while !quit.load(Ordering::Relaxed) {
                    match self.read_into(&p) {
                        Ok(()) => {}
                        Err(e) => {
                            crate::errln!(
                                "upktgen: {e:#}; no more figures from the far end until its report"
                            );
                            break;
                        }
                    }
                    let next = Instant::now() + interval;
                    while !quit.load(Ordering::Relaxed) {
                        let left = next.saturating_duration_since(Instant::now());
                        if left.is_zero() {
                            break;
                        }
                        std::thread::sleep(left.min(Duration::from_millis(20)));
                    }
                }
                self
            })
            .map_err(FarError::Spawn)?;
        Ok(FarWatch {
            progress,
            stop,
            thread: Some(thread),
        })
    }

    /// One reading of the far receiver into `p`: its totals, and every stream's figures
    /// when `p` has a stream table (chunk after chunk, one call each).
    fn read_into(&mut self, p: &RxProgress) -> Result<()> {
        let Some(table) = p.streams.get() else {
            publish(p, &self.stats(None)?);
            return Ok(());
        };
        let mut from = 0u32;
        loop {
            let s = self.stats(Some(from))?;
            publish(p, &s);
            let Some(c) = s.streams else {
                return Ok(());
            };
            let rows = chunk_rows(&c, from, table.len()).map_err(|e| FarError::Impossible {
                uri: self.peer.uri.to_string(),
                method: "rx.stats",
                what: e.to_string(),
            })?;
            for (k, row) in rows.iter().enumerate() {
                table.store(c.from as usize + k, row);
            }
            let next = c.from as usize + c.rows.len();
            if c.rows.is_empty() || next >= table.len() {
                return Ok(());
            }
            from = next as u32;
        }
    }

    /// A report of more than [`REPORT_CHUNK`] streams came with the first of them: the
    /// others, chunk after chunk (`rx.streams`), until it holds `expected`.
    fn rest_of_streams(&mut self, r: &mut RxReport) -> Result<()> {
        let Some(st) = &mut r.streams else {
            return Ok(());
        };
        // No run has more streams than a signature can name: a far end that says so is
        // not followed (it would be memory without end).
        if st.expected as usize > crate::wire::signature::MAX_STREAMS {
            return Err(FarError::Impossible {
                uri: self.peer.uri.to_string(),
                method: "rx.stop",
                what: format!(
                    "{} streams expected, more than a signature can name ({})",
                    st.expected,
                    crate::wire::signature::MAX_STREAMS
                ),
            });
        }
        while st.streams.len() < st.expected as usize {
            let p = RxStreamsParams {
                id: self.id,
                from: st.streams.len() as u32,
            };
            let more: Vec<crate::rx::streams::StreamSummary> =
                self.peer
                    .call_within("rx.streams", &p, Duration::from_secs(15))?;
            if more.is_empty() || more.len() > REPORT_CHUNK {
                return Err(FarError::Impossible {
                    uri: self.peer.uri.to_string(),
                    method: "rx.streams",
                    what: format!("{} stream summaries from {}", more.len(), p.from),
                });
            }
            st.streams.extend(more);
        }
        Ok(())
    }

    /// After the sender is done: the far receiver stops once `expected` frames are in or
    /// the traffic has settled; its report (checked against the `expected` frames sent),
    /// the far interface's counters over the run, and the session closed (nothing left
    /// running at the far end). A far end that fails to close after its report gives the
    /// report and, beside it, that error.
    pub fn finish(mut self, expected: u64) -> Result<(FarReport, Option<FarError>)> {
        let mut receiver: RxReport = self.peer.call_within(
            "rx.stop",
            &RxStop {
                id: self.id,
                expected,
                settle_ms: 250,
                max_wait_ms: 3000,
            },
            Duration::from_secs(15),
        )?;
        self.rest_of_streams(&mut receiver)?;
        if let Some(what) = impossible_report(&receiver, expected) {
            return Err(FarError::Impossible {
                uri: self.peer.uri.to_string(),
                method: "rx.stop",
                what,
            });
        }
        let after = Self::read_counters(&mut self.peer, &self.dev)?;
        let one_way = receiver.sink.latency.map(|l| {
            let c = |v: u64| clock::one_way(v as i64, &self.clock);
            OneWayLatency {
                min: c(l.min_ns),
                p50: c(l.p50_ns),
                p99: c(l.p99_ns),
                max: c(l.max_ns),
                spread_p99_p50_ns: l.p99_ns.saturating_sub(l.p50_ns),
                spread_max_min_ns: l.max_ns.saturating_sub(l.min_ns),
            }
        });
        let report = FarReport {
            peer: self.peer.uri.to_string(),
            host: self.peer.hello.clone(),
            dev: self.dev.clone(),
            iface: self.before.delta(&after),
            clock: self.clock,
            receiver,
            one_way,
        };
        let closed = self.peer.close().err().map(FarError::from);
        Ok((report, closed))
    }
}

/// The rows of a far end's chunk `c`, answering `rx.stats` from stream `from` of the
/// `streams` it was given, or why it cannot be true: another start, more rows than a
/// chunk, another number of streams, rows beyond them, or a row that cannot be
/// ([`super::proto::StatsRow::live`]). Every row is checked before any is taken: a reading
/// is taken whole or not at all.
fn chunk_rows(
    c: &super::proto::StreamsChunk,
    from: u32,
    streams: usize,
) -> Result<Vec<crate::rx::streams::LiveRow>, BadChunk> {
    if c.from != from || c.rows.len() > super::proto::STATS_CHUNK {
        return Err(BadChunk::Start {
            rows: c.rows.len(),
            from: c.from,
            asked: from,
        });
    }
    if c.total as usize != streams {
        return Err(BadChunk::Total {
            total: c.total,
            streams,
        });
    }
    let end = c.from as usize + c.rows.len();
    if end > streams {
        return Err(BadChunk::Beyond {
            first: c.from,
            last: end - 1,
            streams,
        });
    }
    c.rows
        .iter()
        .enumerate()
        .map(|(k, row)| {
            row.live().map_err(|why| BadChunk::Row {
                stream: c.from as usize + k,
                why,
            })
        })
        .collect()
}

/// Why a far end's chunk of stream rows cannot be true ([`chunk_rows`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadChunk {
    #[error("{rows} stream rows from {from} when asked from {asked}")]
    Start { rows: usize, from: u32, asked: u32 },
    #[error("{total} streams counted of the {streams} it was given")]
    Total { total: u32, streams: usize },
    #[error("stream rows {first} to {last} of {streams} streams")]
    Beyond {
        first: u32,
        last: usize,
        streams: usize,
    },
    #[error("stream {stream}: {why}")]
    Row {
        stream: usize,
        why: super::proto::BadRow,
    },
}

/// A far receiver whose running totals are read over the session (`rx.stats`) each
/// interval into an [`RxProgress`], which the live lines and the metrics endpoint read as
/// they read a local receiver's (frames, bytes, holes, drops; its flows only come with the
/// report).
pub struct FarWatch {
    progress: Arc<RxProgress>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<RemoteReceiver>>,
}

impl FarWatch {
    /// Where the far receiver's totals are published.
    pub fn progress(&self) -> Arc<RxProgress> {
        Arc::clone(&self.progress)
    }

    /// Stops reading (within 20 ms, or once a call under way is answered) and gives the
    /// receiver back, for [`RemoteReceiver::finish`].
    pub fn stop(mut self) -> Result<RemoteReceiver> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread
            .take()
            .ok_or(FarError::Stopped)?
            .join()
            .map_err(|_| FarError::Panicked)
    }
}

impl Drop for FarWatch {
    /// A run that failed before its end: the reading stops and the session is dropped with
    /// the receiver (as without a watch).
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Publishes the far receiver's running totals `s` into `p`.
fn publish(p: &RxProgress, s: &RxStats) {
    p.frames.store(s.frames, Ordering::Relaxed);
    p.bytes.store(s.bytes, Ordering::Relaxed);
    p.lost.store(s.lost, Ordering::Relaxed);
    p.drops.store(s.drops, Ordering::Relaxed);
}

/// Publishes a far receiver's final report into `p`: the live lines' last line and the
/// metrics' last reading then agree with it.
pub fn publish_report(p: &RxProgress, r: &RxReport) {
    publish(
        p,
        &RxStats {
            frames: r.frames.frames,
            bytes: r.frames.bytes,
            lost: r.sink.totals.lost,
            drops: r.ring.drops,
            running: false,
            streams: None,
        },
    );
    // Each stream's counts from the report (its latency buckets stay the last reading's).
    if let (Some(t), Some(s)) = (p.streams.get(), &r.streams) {
        for st in &s.streams {
            let id = usize::from(st.id);
            if id < t.len() {
                let mut row = t.row(id);
                (row.frames, row.bytes, row.lost) = (st.frames, st.bytes, st.seq.lost);
                t.store(id, &row);
            }
        }
    }
}

fn us(ns: i64) -> String {
    format!("{:.1}", ns as f64 / 1000.0)
}

impl FarReport {
    /// What the run's report keeps of it beside the receiver's report.
    pub fn summary(&self) -> PeerSummary {
        PeerSummary {
            peer: self.peer.clone(),
            host: self.host.clone(),
            dev: self.dev.clone(),
            iface: self.iface,
            clock: self.clock,
            one_way: self.one_way.clone(),
            backend: self.receiver.backend.name().to_string(),
        }
    }
}

impl PeerSummary {
    /// The far end's lines of the run report: where it is, its clock, and latency with
    /// its bound (or why there is none).
    pub fn text(&self) -> String {
        let h = &self.host;
        let sync = match &h.clock {
            Some(c) if c.synchronised => {
                format!("clock synchronised (est. error {} us)", c.esterror_us)
            }
            Some(_) => "clock NOT synchronised (adjtimex: unsynchronised)".into(),
            None => "clock status unknown".into(),
        };
        // What the far end said of itself, escaped: it may hold anything.
        let p = crate::text::printable;
        let mut s = format!(
            "Peer:        {} ({} {}, upktgen {}, pid {}), {} on {}\n",
            self.peer,
            p(&h.hostname),
            p(&h.kernel),
            p(&h.version),
            h.pid,
            p(&self.backend),
            self.dev
        );
        let c = &self.clock;
        if c.same_clock {
            s += &format!("Clock:       one host, one clock; {sync}\n");
        } else {
            s += &format!(
                "Clock:       far end {} us from here, within ±{} us (best of {} exchanges, round trip {} us); far {sync}\n",
                us(c.offset_ns),
                us(c.uncertainty_ns as i64),
                c.exchanges,
                us(c.rtt_ns as i64)
            );
        }
        if let Some(w) = &self.one_way {
            if c.same_clock {
                s += &format!(
                    "One-way:     min {} / p50 {} / p99 {} / max {} us (one clock)\n",
                    us(w.min.corrected_ns),
                    us(w.p50.corrected_ns),
                    us(w.p99.corrected_ns),
                    us(w.max.corrected_ns)
                );
            } else if w.p50.meaningless {
                s += &format!(
                    "One-way:     not meaningful: the clock offset's bound (±{} us) is larger than the latency itself (p50 {} us corrected); \
                     spreads, which need no common clock: p99-p50 {} us, max-min {} us\n",
                    us(c.uncertainty_ns as i64),
                    us(w.p50.corrected_ns),
                    us(w.spread_p99_p50_ns as i64),
                    us(w.spread_max_min_ns as i64)
                );
            } else {
                s += &format!(
                    "One-way:     min {} / p50 {} / p99 {} / max {} us, each ±{} us (clock offset bound); spreads p99-p50 {} us, max-min {} us\n",
                    us(w.min.corrected_ns),
                    us(w.p50.corrected_ns),
                    us(w.p99.corrected_ns),
                    us(w.max.corrected_ns),
                    us(c.uncertainty_ns as i64),
                    us(w.spread_p99_p50_ns as i64),
                    us(w.spread_max_min_ns as i64)
                );
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_far_receiver_of_streams_on_another_host_is_told_the_clocks_offset() {
        use super::{ClockOffset, stream_clock_args};
        let streams: Vec<String> = ["--stream", "a", "--stream", "b"].map(String::from).into();
        let far = |offset_ns| ClockOffset {
            offset_ns,
            uncertainty_ns: 40_000,
            rtt_ns: 80_000,
            exchanges: 8,
            same_clock: false,
        };
        // The far clock 2.5 ms ahead: its receive times are 2.5 ms late in the sender's time.
        assert_eq!(
            stream_clock_args("ssh://b", &streams, &far(2_500_000)).unwrap(),
            ["--clock-offset-ns", "-2500000"]
        );
        assert_eq!(
            stream_clock_args("ssh://b", &streams, &far(-70_000)).unwrap(),
            ["--clock-offset-ns", "70000"]
        );
        // Within the offset's own bound (±40 µs here): the clocks agree as far as can be
        // told, and are taken as they are.
        assert!(
            stream_clock_args("ssh://b", &streams, &far(-39_000))
                .unwrap()
                .is_empty()
        );
        // One clock, or no streams (a single stream is corrected by the controller).
        assert!(
            stream_clock_args("netns:x", &streams, &ClockOffset::same_clock())
                .unwrap()
                .is_empty()
        );
        assert!(
            stream_clock_args("ssh://b", &["--hist".to_string()], &far(5))
                .unwrap()
                .is_empty()
        );
        // A far end's clock 30 days off (or lying): refused, in one line naming it.
        let e = stream_clock_args("ssh://b", &streams, &far(30 * 86_400 * 1_000_000_000))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("peer ssh://b: its clock is 2592000 s off"),
            "{e}"
        );
        assert!(stream_clock_args("ssh://b", &streams, &far(i64::MIN)).is_err());
    }

    use super::*;
    use crate::agent::proto::{StatsRow, StreamsChunk};

    /// A chunk from a far end is taken only when it is the one asked for, of the streams
    /// the far receiver was given, every row possible; its latency buckets come whole.
    #[test]
    fn a_far_ends_chunk_is_taken_only_when_it_can_be_true() {
        let t = crate::rx::streams::LiveTable::new(vec!["a".into(), "b".into(), "c".into()]);
        t.add(1, 100);
        t.add_latency(1, 10_000);
        t.add_latency(1, 900_000);
        let good = StreamsChunk::of(&t, 1);
        let rows = chunk_rows(&good, 1, 3).unwrap();
        assert_eq!(rows, vec![t.row(1), t.row(2)]);
        assert_eq!(rows[0].lat.count(), 2);
        assert_eq!(rows[0].lat.quantile(0.99), t.row(1).lat.quantile(0.99));
        let refused = |c: &StreamsChunk, from: u32| chunk_rows(c, from, 3).unwrap_err().to_string();
        assert_eq!(refused(&good, 0), "2 stream rows from 1 when asked from 0");
        let other_total = StreamsChunk {
            total: 70_000,
            ..good.clone()
        };
        assert_eq!(
            refused(&other_total, 1),
            "70000 streams counted of the 3 it was given"
        );
        let past = StreamsChunk {
            rows: vec![StatsRow::of(&t.row(0)); 3],
            ..good.clone()
        };
        assert_eq!(refused(&past, 1), "stream rows 1 to 3 of 3 streams");
        let mut bad_bucket = good.clone();
        bad_bucket.rows[1].4 = vec![(3, 1), (80, 1)];
        assert_eq!(
            refused(&bad_bucket, 1),
            "stream 2: latency bucket 80, beyond the last (79)"
        );
        let mut twice = good.clone();
        twice.rows[0].4 = vec![(7, 1), (7, 1)];
        assert_eq!(
            refused(&twice, 1),
            "stream 1: latency bucket 7 after bucket 7: not in ascending order"
        );
        let too_many = StreamsChunk {
            from: 0,
            total: 3,
            rows: vec![StatsRow::of(&t.row(0)); crate::agent::proto::STATS_CHUNK + 1],
        };
        assert!(refused(&too_many, 0).starts_with("4097 stream rows from 0"));
    }

    #[test]
    fn counters_of_2_64_minus_1_are_named_by_path() {
        let v = json!({"a": {"b": [1, u64::MAX]}, "c": 2});
        assert_eq!(max_counter(&v, "").as_deref(), Some("a.b[1] is 2^64-1"));
        assert_eq!(max_counter(&json!({"a": u64::MAX - 1}), ""), None);
        let c = IfaceCounters {
            rx_packets: u64::MAX,
            ..IfaceCounters::default()
        };
        assert_eq!(
            impossible_counters(&c).as_deref(),
            Some("rx_packets is 2^64-1")
        );
        assert_eq!(impossible_counters(&IfaceCounters::default()), None);
    }
}
