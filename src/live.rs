//! Live statistics while a run sends: one line per interval on standard error.
//!
//! A monitor thread reads what the senders publish (frames sent and their bytes, one relaxed
//! store of each per batch: [`crate::sender::Progress`]), the interfaces' counters
//! (`/proc/net/dev` of each namespace), the CPU times (`/proc/stat`) and, with
//! `--rx-analyze`, the receiver's running totals. The sending thread does nothing else for
//! it, so printing cannot slow it (the monitor's own few syscalls per interval run on
//! whichever CPU it has).
//!
//! Text line: `live  2.0s  tx 321412 pps 154.3 Mb/s  rx 321400 pps  sink lost 0  cpu busy 51.2 %`
//! (tx = the frames the senders handed over, rx = the receiving interface's rx_packets, both
//! per second over the interval). Mb/s is of frame bytes counted as the Result line counts
//! them (`sent * pkt_size`, or the bytes of every frame when sizes vary), from the senders'
//! own figures: an interface's byte counters may count otherwise (veth counts 46 bytes of a
//! 60-byte frame, without its Ethernet header), so no Mb/s is drawn from them.
//! `--json-lines` prints the same as one JSON object per line instead, and a last one with
//! `"final": true` covering the whole run.
//!
//! `upktgen rx` has the same lines from the receiver's own running totals:
//! `live  2.0s  rx 321400 pps 154.3 Mb/s  sink lost 0  drops 0  cpu busy 51.2 %`.
//! A run with a far end (`--peer`) has its rx, lost and drops from the far receiver's totals,
//! read over the agent session each interval (`rx.stats`, [`crate::agent::far::FarWatch`]).
//! On a terminal a counted run (`--count N`) also gets a progress bar with an ETA
//! (indicatif), drawn under the lines; off a terminal the text line carries a plain bar.

use crate::sample::{NetDevSnapshot, StatSnapshot};
use crate::sys::netns;
use serde::Serialize;
use std::fs::File;
use std::io::{self, Read, Seek};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LiveFormat {
    Text,
    JsonLines,
}

/// What the user asked of the live statistics (`--live`, `--no-live`, `--json-lines`,
/// `--interval`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiveOptions {
    pub live: bool,
    pub no_live: bool,
    pub json_lines: bool,
    pub interval: Duration,
}

impl Default for LiveOptions {
    /// On a terminal only, every second.
    fn default() -> Self {
        LiveOptions {
            live: false,
            no_live: false,
            json_lines: false,
            interval: Duration::from_secs(1),
        }
    }
}

/// One interface to watch: its name and the namespace whose /proc/net/dev lists it.
#[derive(Debug, Clone)]
pub struct Watched {
    pub iface: String,
    pub netns: Option<PathBuf>,
}

/// Streams the live lines show one by one: every stream when there are at most this many,
/// otherwise this many with the most open sequence holes (ties: the lowest id first).
pub const LIVE_STREAMS: usize = 8;

/// One stream's live figures over an interval (or several streams', summed).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LiveStream {
    /// The stream id its signature carries (None: the aggregate of all).
    pub id: Option<u16>,
    pub name: String,
    /// Frames received in the interval (duplicates included), and per second.
    pub rx_frames: u64,
    pub rx_pps: u64,
    /// Sequence holes open so far (a late arrival closes its hole).
    pub lost: u64,
    /// Latency of the interval's frames, ns, from quarter-octave buckets (within 12.5 %;
    /// None: no latency recorded in the interval).
    pub latency_p50_ns: Option<u64>,
    pub latency_p99_ns: Option<u64>,
}

/// The streams' part of a live line: their aggregate and a bounded few one by one.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LiveStreams {
    /// Streams counted.
    pub count: u32,
    /// All of them together.
    pub all: LiveStream,
    /// At most [`LIVE_STREAMS`]: all when there are that few, else those with the most
    /// open holes, the most first.
    pub shown: Vec<LiveStream>,
}

impl LiveStream {
    fn of(
        id: Option<u16>,
        name: &str,
        a: &crate::rx::streams::LiveRow,
        b: &crate::rx::streams::LiveRow,
        dt: f64,
    ) -> LiveStream {
        let frames = b.frames.saturating_sub(a.frames);
        let lat = b.lat.since(&a.lat);
        LiveStream {
            id,
            name: name.to_string(),
            rx_frames: frames,
            rx_pps: (frames as f64 / dt) as u64,
            lost: b.lost,
            latency_p50_ns: lat.quantile(0.50),
            latency_p99_ns: lat.quantile(0.99),
        }
    }

    fn text(&self) -> String {
        let us = |v: Option<u64>| v.map_or("-".to_string(), |n| format!("{:.1}", n as f64 / 1e3));
        let head = match self.id {
            Some(id) => format!(
                "  stream {id:>5} {:<16}",
                crate::text::printable(&self.name)
            ),
            None => format!("  streams {:<21}", self.name),
        };
        format!(
            "{head} rx {} pps  lost {}  latency us p50 {} p99 {}",
            self.rx_pps,
            self.lost,
            us(self.latency_p50_ns),
            us(self.latency_p99_ns)
        )
    }
}

/// The streams' live view between two readings `a` and `b` (by stream id) `dt` seconds
/// apart: the aggregate and at most `bound` streams (all when there are that few, else the
/// most open holes at `b` first, ties by id).
pub fn stream_view(
    names: &[String],
    a: &[crate::rx::streams::LiveRow],
    b: &[crate::rx::streams::LiveRow],
    dt: f64,
    bound: usize,
) -> LiveStreams {
    let dt = dt.max(1e-9);
    let zero = crate::rx::streams::LiveRow::default();
    let before = |i: usize| a.get(i).unwrap_or(&zero);
    let (mut sa, mut sb) = (zero, zero);
    for (i, r) in b.iter().enumerate() {
        sa.add(before(i));
        sb.add(r);
    }
    let mut ids: Vec<usize> = (0..b.len()).collect();
    if ids.len() > bound {
        // The `bound` with the most holes, in O(n): then those few sorted.
        let key = |i: &usize| (std::cmp::Reverse(b[*i].lost), *i);
        ids.select_nth_unstable_by_key(bound, key);
        ids.truncate(bound);
        ids.sort_unstable_by_key(key);
    }
    let name = |i: usize| names.get(i).cloned().unwrap_or_else(|| i.to_string());
    LiveStreams {
        count: b.len() as u32,
        all: LiveStream::of(None, &b.len().to_string(), &sa, &sb, dt),
        shown: ids
            .into_iter()
            .map(|i| LiveStream::of(Some(i as u16), &name(i), before(i), &b[i], dt))
            .collect(),
    }
}

/// One line of live statistics.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LiveSample {
    /// Seconds since the monitor started, at the end of the interval.
    pub t_s: f64,
    pub interval_s: f64,
    /// Frames the senders handed over in the interval, as the Result counts them (without
    /// senders' figures, the sending interface's tx_packets; None for `upktgen rx`).
    pub tx_packets: Option<u64>,
    pub tx_pps: Option<u64>,
    /// Mb/s of those frames' bytes, counted as the Result line counts them.
    pub tx_mbps: Option<f64>,
    /// The receiving interface's rx_packets (`run` in the lab), or the frames the receiver
    /// read (`upktgen rx`, and `run --peer`: the far receiver's, read over the session each
    /// interval), in the interval.
    pub rx_packets: Option<u64>,
    pub rx_pps: Option<u64>,
    /// `upktgen rx`, `run --peer`: Mb/s of the frames read (whole frames, as the receiver
    /// reads them; none from an interface's byte counters).
    pub rx_mbps: Option<f64>,
    /// Sequence holes the receiver has seen so far (--rx-analyze, `upktgen rx`, `--peer`).
    pub lost: Option<u64>,
    /// Frames the receiver's socket dropped so far (XDP_STATISTICS / PACKET_STATISTICS).
    pub drops: Option<u64>,
    pub cpu_busy_pct: f64,
    /// Counted runs: share of --count sent (from tx_packets) or received so far, and the
    /// time left at the rate of the last interval.
    pub done_pct: Option<f64>,
    pub eta_s: Option<f64>,
    #[serde(rename = "final")]
    pub last: bool,
    /// A config's streams, when the receiver counts them (`run --config` in the lab, with
    /// `--peer` or `--rx-dev`; `upktgen rx --stream`): their aggregate and a bounded few
    /// (docs/live.md).
    pub streams: Option<LiveStreams>,
}

impl LiveSample {
    /// The text line; `plain_bar`: a plain-text progress bar for counted runs (off a
    /// terminal, where no indicatif bar is drawn).
    pub fn text_with(&self, plain_bar: bool) -> String {
        let mut s = format!("live {:>6.1}s", self.t_s);
        if let (Some(pps), Some(mbps)) = (self.tx_pps, self.tx_mbps) {
            s.push_str(&format!("  tx {pps} pps {mbps:.1} Mb/s"));
        }
        if let Some(rx) = self.rx_pps {
            s.push_str(&format!("  rx {rx} pps"));
            if let Some(m) = self.rx_mbps {
                s.push_str(&format!(" {m:.1} Mb/s"));
            }
        }
        if let Some(l) = self.lost {
            s.push_str(&format!("  sink lost {l}"));
        }
        if let Some(d) = self.drops {
            s.push_str(&format!("  drops {d}"));
        }
        s.push_str(&format!("  cpu busy {:.1} %", self.cpu_busy_pct));
        if let (Some(p), Some(e), false, true) = (self.done_pct, self.eta_s, self.last, plain_bar) {
            s.push_str(&format!("  [{}] {p:.0} % ETA {e:.1} s", bar(p)));
        }
        if self.last {
            s.push_str("  (whole run)");
        }
        if let Some(st) = &self.streams {
            for l in std::iter::once(&st.all).chain(&st.shown) {
                s.push('\n');
                s.push_str(&l.text());
            }
        }
        s
    }

    pub fn text(&self) -> String {
        self.text_with(true)
    }
}

/// A 20-character progress bar for `pct` percent.
fn bar(pct: f64) -> String {
    let full = ((pct / 5.0).floor() as usize).min(20);
    format!("{}{}", "#".repeat(full), ".".repeat(20 - full))
}

/// Why live statistics cannot start or be read: the message names the file, the option or
/// the interface.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    #[error("opening /proc/net/dev for live statistics: {0}")]
    Open(io::Error),
    #[error("reading /proc/net/dev: {0}")]
    Read(io::Error),
    #[error(transparent)]
    Parse(#[from] crate::sample::ParseError),
    #[error("{0} vanished from /proc/net/dev")]
    Vanished(String),
    #[error("starting the live statistics thread: {0}")]
    Spawn(io::Error),
    #[error("--interval: must be above 0")]
    Interval,
}

type Result<T, E = LiveError> = std::result::Result<T, E>;

/// A counter source re-read each interval (also the metrics endpoint's interface probe).
pub(crate) struct DevReader {
    file: File,
    iface: String,
}

impl DevReader {
    pub(crate) fn open(w: &Watched) -> Result<DevReader> {
        let open = || File::open("/proc/thread-self/net/dev");
        let file = match &w.netns {
            Some(p) => netns::in_netns(p, open),
            None => open(),
        }
        .map_err(LiveError::Open)?;
        Ok(DevReader {
            file,
            iface: w.iface.clone(),
        })
    }

    pub(crate) fn read(&mut self) -> Result<crate::sample::IfaceCounters> {
        let mut s = String::new();
        self.file.rewind().map_err(LiveError::Read)?;
        self.file.read_to_string(&mut s).map_err(LiveError::Read)?;
        let snap = NetDevSnapshot::parse(&s)?;
        let c = snap
            .get(&self.iface)
            .ok_or_else(|| LiveError::Vanished(self.iface.clone()))?;
        Ok(*c)
    }
}

/// Busy share of all CPUs between two readings, percent.
pub(crate) fn cpu_busy(a: &StatSnapshot, b: &StatSnapshot) -> f64 {
    let d = a.all.delta(&b.all);
    let total = d.total();
    if total == 0 {
        0.0
    } else {
        (total - d.idle - d.iowait) as f64 * 100.0 / total as f64
    }
}

/// The counters at one instant.
#[derive(Clone)]
struct Point {
    at: Instant,
    tx: Option<u64>,
    tx_bytes: Option<u64>,
    rx: Option<u64>,
    rx_bytes: Option<u64>,
    stat: Option<StatSnapshot>,
    /// Each stream's figures, when the receiver counts streams.
    streams: Option<Vec<crate::rx::streams::LiveRow>>,
}

/// The running monitor; [`Monitor::finish`] prints the final line.
pub struct Monitor {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// Where a running receiver publishes its totals (frames, bytes, holes, drops).
pub type LostSource = Arc<crate::rx::recv::RxProgress>;

/// What a monitor watches and how it prints.
pub struct MonitorConfig {
    /// The sending interface (`run`); None for `upktgen rx`.
    pub tx: Option<Watched>,
    /// When not empty, the tx figures are the sum of what these senders published, counted
    /// as the Result counts them, instead of the interface's counters (which count other
    /// bytes, and no injected netif_receive frame at all).
    pub sent: Vec<Arc<crate::sender::Progress>>,
    /// The receiving interface's rx_packets (`run` in the lab).
    pub rx: Option<Watched>,
    /// The receiver's running totals; with no `rx`, its frames and bytes are the rx figures.
    pub receiver: Option<LostSource>,
    pub interval: Duration,
    pub format: LiveFormat,
    /// --count (0 = none): frames sent (`run`) or received (`rx`).
    pub count: u64,
    /// Draw an indicatif progress bar for counted runs (standard error is a terminal).
    pub bar: bool,
}

struct State {
    tx: Option<DevReader>,
    sent: Vec<Arc<crate::sender::Progress>>,
    rx: Option<DevReader>,
    receiver: Option<LostSource>,
    format: LiveFormat,
    t0: Instant,
    count: u64,
    /// The counted figure (tx_packets, or frames received) when the monitor started.
    base: Option<u64>,
    bar: Option<indicatif::ProgressBar>,
}

impl State {
    /// Whether the rx figures come from the receiver (`upktgen rx`).
    fn receiver_only(&self) -> bool {
        self.tx.is_none()
    }

    fn point(&mut self) -> Point {
        // No receiving interface to read (`upktgen rx`, a far end): the receiver's own totals.
        let progress = self.receiver.as_ref().filter(|_| self.rx.is_none());
        let mut tx = self.tx.as_mut().map(|t| t.read().unwrap_or_default());
        if let (Some(t), false) = (&mut tx, self.sent.is_empty()) {
            (t.tx_packets, t.tx_bytes) = self.sent.iter().fold((0, 0), |(f, b), p| {
                (
                    f + p.frames.load(Ordering::Relaxed),
                    b + p.bytes.load(Ordering::Relaxed),
                )
            });
        }
        let rx = match progress {
            Some(_) => None,
            None => self.rx.as_mut().and_then(|r| r.read().ok()),
        };
        Point {
            at: Instant::now(),
            tx: tx.map(|c| c.tx_packets),
            // The senders' bytes (the Result's count); without them, the interface's.
            tx_bytes: tx.map(|c| c.tx_bytes),
            rx: match progress {
                Some(p) => Some(p.frames.load(Ordering::Relaxed)),
                None => rx.map(|c| c.rx_packets),
            },
            // Only a receiver's whole-frame bytes: an interface counts bytes its own way.
            rx_bytes: progress.map(|p| p.bytes.load(Ordering::Relaxed)),
            stat: StatSnapshot::read().ok(),
            streams: self.streams().map(|t| t.rows()),
        }
    }

    /// The receiver's streams, when it counts them (a far end's once its first reading
    /// came).
    fn streams(&self) -> Option<&crate::rx::streams::LiveTable> {
        self.receiver
            .as_ref()
            .and_then(|r| r.streams.get())
            .map(|t| &**t)
    }

    /// The figure --count counts.
    fn counted(&self, p: &Point) -> Option<u64> {
        if self.receiver_only() { p.rx } else { p.tx }
    }

    fn sample(&self, a: &Point, b: &Point, last: bool) -> LiveSample {
        let dt = (b.at - a.at).as_secs_f64().max(1e-9);
        let tx = b.tx.zip(a.tx).map(|(b, a)| b.saturating_sub(a));
        let rx = b.rx.zip(a.rx).map(|(b, a)| b.saturating_sub(a));
        let rx_bytes = b.rx_bytes.zip(a.rx_bytes).map(|(b, a)| b.saturating_sub(a));
        let tx_bytes = b.tx_bytes.zip(a.tx_bytes).map(|(b, a)| b.saturating_sub(a));
        let moved = if self.receiver_only() { rx } else { tx }.unwrap_or(0);
        let pps = moved as f64 / dt;
        let done = match (self.count, self.base, self.counted(b)) {
            (0, _, _) | (_, None, _) | (_, _, None) => None,
            (c, Some(s), Some(now)) => Some(now.saturating_sub(s).min(c)),
        };
        let (lost, drops) = match &self.receiver {
            Some(r) => (
                Some(r.lost.load(Ordering::Relaxed)),
                Some(r.drops.load(Ordering::Relaxed)),
            ),
            None => (None, None),
        };
        LiveSample {
            done_pct: done.map(|d| d as f64 * 100.0 / self.count as f64),
            eta_s: done
                .filter(|_| pps > 0.0)
                .map(|d| (self.count - d) as f64 / pps),
            t_s: (b.at - self.t0).as_secs_f64(),
            interval_s: dt,
            tx_packets: tx,
            tx_pps: tx.map(|t| (t as f64 / dt) as u64),
            tx_mbps: tx_bytes.map(|b| b as f64 * 8.0 / dt / 1e6),
            rx_packets: rx,
            rx_pps: rx.map(|r| (r as f64 / dt) as u64),
            rx_mbps: rx_bytes.map(|b| b as f64 * 8.0 / dt / 1e6),
            lost,
            drops,
            cpu_busy_pct: match (&a.stat, &b.stat) {
                (Some(x), Some(y)) => cpu_busy(x, y),
                _ => 0.0,
            },
            last,
            streams: match (self.streams(), &b.streams) {
                (Some(t), Some(rb)) => Some(stream_view(
                    t.names(),
                    a.streams.as_deref().unwrap_or_default(),
                    rb,
                    dt,
                    LIVE_STREAMS,
                )),
                _ => None,
            },
        }
    }

    fn print(&self, s: &LiveSample) {
        let line = match self.format {
            LiveFormat::Text => s.text_with(self.bar.is_none()),
            LiveFormat::JsonLines => {
                crate::schema::to_line(crate::schema::LIVE, s).unwrap_or_default()
            }
        };
        match &self.bar {
            Some(b) => {
                if let Some(d) = s.done_pct {
                    b.set_position((d * self.count as f64 / 100.0).round() as u64);
                }
                if s.last {
                    b.finish_and_clear();
                    crate::errln!("{line}");
                } else {
                    b.println(line);
                }
            }
            None => {
                crate::errln!("{line}");
            }
        }
    }
}

impl Monitor {
    /// Starts printing every `interval` what `cfg` watches.
    pub fn start(cfg: MonitorConfig) -> Result<Monitor> {
        let interval = cfg.interval;
        let bar = (cfg.bar && cfg.count > 0 && cfg.format == LiveFormat::Text).then(|| {
            let b = indicatif::ProgressBar::new(cfg.count);
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "{bar:40} {pos}/{len} ({percent} %) ETA {eta}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            b
        });
        let mut st = State {
            tx: cfg.tx.as_ref().map(DevReader::open).transpose()?,
            sent: cfg.sent,
            rx: cfg.rx.as_ref().map(DevReader::open).transpose()?,
            receiver: cfg.receiver,
            format: cfg.format,
            t0: Instant::now(),
            count: cfg.count,
            base: None,
            bar,
        };
        // The first reading before this returns, so that the final line covers every frame
        // sent after it (a monitor thread scheduled late would otherwise miss the first ones).
        let first = st.point();
        st.base = st.counted(&first);
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("upktgen-live".into())
            .spawn(move || {
                let mut prev = first.clone();
                let mut next = first.at + interval;
                loop {
                    // Sleep in short steps so that the end of the run is not delayed.
                    while Instant::now() < next {
                        if stop2.load(Ordering::Relaxed) {
                            let end = st.point();
                            let s = st.sample(&first, &end, true);
                            st.print(&s);
                            return;
                        }
                        let left = next.saturating_duration_since(Instant::now());
                        std::thread::sleep(left.min(Duration::from_millis(20)));
                    }
                    let now = st.point();
                    let s = st.sample(&prev, &now, false);
                    st.print(&s);
                    prev = now;
                    next += interval;
                }
            })
            .map_err(LiveError::Spawn)?;
        Ok(Monitor {
            stop,
            thread: Some(thread),
        })
    }

    /// Stops the monitor; it prints one last line covering the whole run.
    pub fn finish(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The live options `run` and `rx` share: (format, draw a progress bar), or None when no
/// lines are asked for (`--live`, `--json-lines`, or standard error being a terminal,
/// unless `--no-live`).
pub fn choose(
    live: bool,
    no_live: bool,
    json_lines: bool,
    interval: Duration,
) -> Result<Option<(LiveFormat, bool)>> {
    use std::io::IsTerminal;
    let tty = std::io::stderr().is_terminal();
    let format = if json_lines {
        LiveFormat::JsonLines
    } else if live || (!no_live && tty) {
        LiveFormat::Text
    } else {
        return Ok(None);
    };
    if interval.is_zero() {
        return Err(LiveError::Interval);
    }
    Ok(Some((format, tty && !no_live)))
}

/// Starts the monitor `upktgen rx`'s options ask for: the receiver's own totals.
pub fn start_for_rx(a: &LiveOptions, count: u64, receiver: LostSource) -> Result<Option<Monitor>> {
    let Some((format, bar)) = choose(a.live, a.no_live, a.json_lines, a.interval)? else {
        return Ok(None);
    };
    Monitor::start(MonitorConfig {
        tx: None,
        sent: Vec::new(),
        rx: None,
        receiver: Some(receiver),
        interval: a.interval,
        format,
        count,
        bar,
    })
    .map(Some)
}

/// Starts the monitor a run's options ask for (`--live`, `--json-lines`, or standard error
/// being a terminal, unless `--no-live`); None when none is asked for.
pub fn start_for_run(
    a: &LiveOptions,
    count: u64,
    tx: Watched,
    rx: Option<Watched>,
    lost: Option<LostSource>,
    sent: Vec<Arc<crate::sender::Progress>>,
) -> Result<Option<Monitor>> {
    let Some((format, bar)) = choose(a.live, a.no_live, a.json_lines, a.interval)? else {
        return Ok(None);
    };
    Monitor::start(MonitorConfig {
        tx: Some(tx),
        sent,
        rx,
        receiver: lost,
        interval: a.interval,
        format,
        count,
        bar,
    })
    .map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run with a far end: a sending interface, no receiving one to read, the far
    /// receiver's totals.
    #[test]
    fn without_a_receiving_interface_rx_is_the_receivers_own() {
        let lo = Watched {
            iface: "lo".into(),
            netns: None,
        };
        let far = LostSource::default();
        let mut st = State {
            tx: Some(DevReader::open(&lo).unwrap()),
            sent: Vec::new(),
            rx: None,
            receiver: Some(Arc::clone(&far)),
            format: LiveFormat::JsonLines,
            t0: Instant::now(),
            count: 0,
            base: None,
            bar: None,
        };
        let a = st.point();
        far.frames.store(900, Ordering::Relaxed);
        far.bytes.store(54_000, Ordering::Relaxed);
        far.lost.store(3, Ordering::Relaxed);
        let b = st.point();
        let s = st.sample(&a, &b, false);
        assert_eq!(
            (s.rx_packets, s.lost, s.drops),
            (Some(900), Some(3), Some(0))
        );
        assert!(
            s.tx_packets.is_some(),
            "tx still from the sending interface"
        );
        assert_eq!(
            s.rx_mbps,
            Some(54_000.0 * 8.0 / (b.at - a.at).as_secs_f64().max(1e-9) / 1e6)
        );
    }

    /// Frames the senders published replace the interface's tx counters (netif_receive).
    #[test]
    fn published_sends_are_the_tx_figures() {
        let lo = Watched {
            iface: "lo".into(),
            netns: None,
        };
        let sent: Vec<_> = (0..2)
            .map(|_| Arc::new(crate::sender::Progress::default()))
            .collect();
        let mut st = State {
            tx: Some(DevReader::open(&lo).unwrap()),
            sent: sent.clone(),
            rx: None,
            receiver: None,
            format: LiveFormat::JsonLines,
            t0: Instant::now(),
            count: 3000,
            base: None,
            bar: None,
        };
        let a = st.point();
        st.base = st.counted(&a);
        for (p, n) in sent.iter().zip([1000u64, 500]) {
            p.frames.store(n, Ordering::Relaxed);
            p.bytes.store(n * 60, Ordering::Relaxed);
        }
        let b = st.point();
        let s = st.sample(&a, &b, false);
        assert_eq!(s.tx_packets, Some(1500));
        let mbps = 1500.0 * 60.0 * 8.0 / s.interval_s / 1e6;
        assert!((s.tx_mbps.unwrap() - mbps).abs() < 1e-6 * mbps.max(1.0));
        assert_eq!(s.done_pct, Some(50.0));
    }

    /// The interface counts its own bytes (veth: 46 of a 60-byte frame): the Mb/s come from
    /// the senders' figures, and none from a receiving interface's byte counters.
    #[test]
    fn no_mb_s_comes_from_an_interfaces_byte_counters() {
        let lo = Watched {
            iface: "lo".into(),
            netns: None,
        };
        let sent = Arc::new(crate::sender::Progress::default());
        let mut st = State {
            tx: Some(DevReader::open(&lo).unwrap()),
            sent: vec![Arc::clone(&sent)],
            rx: Some(DevReader::open(&lo).unwrap()),
            receiver: None,
            format: LiveFormat::Text,
            t0: Instant::now(),
            count: 0,
            base: None,
            bar: None,
        };
        let a = st.point();
        sent.frames.store(490_000, Ordering::Relaxed);
        sent.bytes.store(490_000 * 60, Ordering::Relaxed);
        let b = st.point();
        let s = st.sample(&a, &b, false);
        assert_eq!(s.tx_packets, Some(490_000));
        let mbps = 490_000.0 * 60.0 * 8.0 / s.interval_s / 1e6;
        assert!((s.tx_mbps.unwrap() - mbps).abs() < 1e-6 * mbps, "{s:?}");
        assert!(s.rx_packets.is_some(), "rx packets from the interface");
        assert_eq!(s.rx_mbps, None, "no Mb/s from the interface's bytes");
        let t = s.text();
        assert_eq!(t.matches("Mb/s").count(), 1, "only tx has Mb/s: {t}");
    }

    #[test]
    fn line_formats() {
        let s = LiveSample {
            t_s: 2.0,
            interval_s: 1.0,
            tx_packets: Some(1000),
            tx_pps: Some(1000),
            tx_mbps: Some(0.48),
            rx_packets: Some(990),
            rx_pps: Some(990),
            rx_mbps: None,
            lost: Some(10),
            drops: None,
            cpu_busy_pct: 50.0,
            done_pct: Some(27.0),
            eta_s: Some(3.25),
            last: false,
            streams: None,
        };
        assert_eq!(
            s.text(),
            "live    2.0s  tx 1000 pps 0.5 Mb/s  rx 990 pps  sink lost 10  cpu busy 50.0 %  [#####...............] 27 % ETA 3.2 s"
        );
        // With an indicatif bar on the terminal the line carries no plain bar.
        assert!(!s.text_with(false).contains('['));
        // upktgen rx: no tx figures, the receiver's Mb/s and drops.
        let r = LiveSample {
            tx_packets: None,
            tx_pps: None,
            tx_mbps: None,
            rx_mbps: Some(4.0),
            drops: Some(3),
            done_pct: None,
            eta_s: None,
            ..s.clone()
        };
        assert_eq!(
            r.text(),
            "live    2.0s  rx 990 pps 4.0 Mb/s  sink lost 10  drops 3  cpu busy 50.0 %"
        );
        assert_eq!(bar(100.0), "#".repeat(20));
        let j: serde_json::Value =
            serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(j["final"], false);
        assert_eq!(j["rx_pps"], 990);
    }

    fn row(frames: u64, lost: u64, lat_ns: &[u64]) -> crate::rx::streams::LiveRow {
        let t = crate::rx::streams::LiveTable::new(vec!["x".into()]);
        for _ in 0..frames {
            t.add(0, 60);
        }
        t.set_lost(0, lost);
        for &v in lat_ns {
            t.add_latency(0, v);
        }
        t.row(0)
    }

    /// Few streams: all, by id, with the interval's figures; the aggregate sums them.
    #[test]
    fn few_streams_are_all_shown() {
        let names: Vec<String> = ["udp64", "tcp_imix", "v6"].map(String::from).to_vec();
        let a = vec![row(100, 0, &[4_000]), row(0, 0, &[]), row(50, 1, &[])];
        let b = vec![
            row(1100, 0, &[4_000; 11]),
            row(2000, 0, &[100_000; 3]),
            row(50, 2, &[]),
        ];
        let v = stream_view(&names, &a, &b, 0.5, LIVE_STREAMS);
        assert_eq!(v.count, 3);
        let ids: Vec<_> = v.shown.iter().map(|s| s.id).collect();
        assert_eq!(ids, [Some(0), Some(1), Some(2)]);
        let s0 = &v.shown[0];
        assert_eq!(
            (s0.name.as_str(), s0.rx_frames, s0.rx_pps),
            ("udp64", 1000, 2000)
        );
        let mid = |ns| {
            Some(crate::rx::streams::live::middle(
                crate::rx::streams::live::bucket_of(ns),
            ))
        };
        assert_eq!(s0.latency_p50_ns, mid(4_000));
        assert_eq!(v.shown[1].latency_p99_ns, mid(100_000));
        assert_eq!(
            v.shown[2].latency_p50_ns, None,
            "no latency in the interval"
        );
        assert_eq!((v.shown[2].rx_frames, v.shown[2].lost), (0, 2));
        assert_eq!((v.all.rx_frames, v.all.lost, v.all.id), (3000, 2, None));
        // 10 of 4 us and 3 of 100 us in the interval: p50 4 us, p99 100 us.
        assert_eq!(
            (v.all.latency_p50_ns, v.all.latency_p99_ns),
            (mid(4_000), mid(100_000))
        );
        let line = LiveSample {
            streams: Some(v),
            ..LiveSample::default()
        }
        .text();
        let lines: Vec<&str> = line.lines().collect();
        assert_eq!(lines.len(), 5, "{line}");
        assert!(lines[1].starts_with("  streams 3 "), "{line}");
        assert!(
            lines[4].contains("stream     2 v6") && lines[4].contains("lost 2"),
            "{line}"
        );
        assert!(lines[4].ends_with("latency us p50 - p99 -"), "{line}");
    }

    /// Many streams: a bounded few, the most holes first, ties by id; the aggregate still
    /// counts every stream.
    #[test]
    fn many_streams_show_the_worst_few() {
        let n = 10_000;
        let names: Vec<String> = (0..n).map(|i| format!("f{i}")).collect();
        let mut b: Vec<_> = (0..n)
            .map(|_| crate::rx::streams::LiveRow {
                frames: 10,
                ..Default::default()
            })
            .collect();
        b[7000].lost = 5;
        b[42].lost = 9;
        b[9999].lost = 5;
        let v = stream_view(&names, &[], &b, 1.0, LIVE_STREAMS);
        assert_eq!(v.shown.len(), LIVE_STREAMS);
        let ids: Vec<_> = v.shown.iter().filter_map(|s| s.id).collect();
        assert_eq!(ids, [42, 7000, 9999, 0, 1, 2, 3, 4]);
        assert_eq!(v.shown[0].name, "f42");
        assert_eq!(
            (v.count, v.all.rx_frames, v.all.lost),
            (10_000, 100_000, 19)
        );
        let j = serde_json::to_value(&v).unwrap();
        assert_eq!(j["shown"][0]["lost"], 9);
        assert_eq!(j["all"]["id"], serde_json::Value::Null);
    }
}
