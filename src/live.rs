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

/// One line of live statistics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
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
        }
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
            ..s
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
}
