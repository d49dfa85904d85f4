//! Live statistics while a run sends: one line per interval on standard error.
//!
//! A monitor thread reads the interfaces' counters (`/proc/net/dev` of each namespace), the
//! CPU times (`/proc/stat`) and, with `--rx-analyze`, the receiver's running totals. It never
//! touches the sender: the sending thread does no extra work, so printing cannot slow it
//! (the only cost is the monitor's own few syscalls per interval, on whichever CPU it runs).
//!
//! Text line: `live  2.0s  tx 321412 pps 154.3 Mb/s  rx 321400 pps  sink lost 0  cpu busy 51.2 %`
//! (tx = the sending interface's tx_packets, rx = the receiving interface's rx_packets, both
//! per second over the interval; Mb/s = frame bytes, as pktgen counts). `--json-lines` prints
//! the same as one JSON object per line instead, and a last one with `"final": true` covering
//! the whole run.

use crate::sample::{NetDevSnapshot, StatSnapshot};
use crate::sys::netns;
use anyhow::{Context, Result, anyhow};
use serde::Serialize;
use std::fs::File;
use std::io::{Read, Seek, Write};
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
    pub tx_packets: u64,
    pub tx_pps: u64,
    pub tx_mbps: f64,
    pub rx_packets: Option<u64>,
    pub rx_pps: Option<u64>,
    /// Sequence holes the receiver has seen so far (--rx-analyze).
    pub lost: Option<u64>,
    pub cpu_busy_pct: f64,
    /// Counted runs: share of --count sent so far (from tx_packets), and the time left at
    /// the rate of the last interval.
    pub done_pct: Option<f64>,
    pub eta_s: Option<f64>,
    #[serde(rename = "final")]
    pub last: bool,
}

impl LiveSample {
    pub fn text(&self) -> String {
        let mut s = format!(
            "live {:>6.1}s  tx {} pps {:.1} Mb/s",
            self.t_s, self.tx_pps, self.tx_mbps
        );
        if let Some(rx) = self.rx_pps {
            s.push_str(&format!("  rx {rx} pps"));
        }
        if let Some(l) = self.lost {
            s.push_str(&format!("  sink lost {l}"));
        }
        s.push_str(&format!("  cpu busy {:.1} %", self.cpu_busy_pct));
        if let (Some(p), Some(e), false) = (self.done_pct, self.eta_s, self.last) {
            s.push_str(&format!("  [{}] {p:.0} % ETA {e:.1} s", bar(p)));
        }
        if self.last {
            s.push_str("  (whole run)");
        }
        s
    }
}

/// A 20-character progress bar for `pct` percent.
fn bar(pct: f64) -> String {
    let full = ((pct / 5.0).floor() as usize).min(20);
    format!("{}{}", "#".repeat(full), ".".repeat(20 - full))
}

/// A counter source re-read each interval.
struct DevReader {
    file: File,
    iface: String,
}

impl DevReader {
    fn open(w: &Watched) -> Result<DevReader> {
        let open = || File::open("/proc/thread-self/net/dev");
        let file = match &w.netns {
            Some(p) => netns::in_netns(p, open),
            None => open(),
        }
        .context("opening /proc/net/dev for live statistics")?;
        Ok(DevReader {
            file,
            iface: w.iface.clone(),
        })
    }

    fn read(&mut self) -> Result<(u64, u64)> {
        let mut s = String::new();
        self.file.rewind()?;
        self.file.read_to_string(&mut s)?;
        let snap = NetDevSnapshot::parse(&s).map_err(|e| anyhow!("{e}"))?;
        let c = snap
            .get(&self.iface)
            .ok_or_else(|| anyhow!("{} vanished", self.iface))?;
        Ok((c.tx_packets, c.rx_packets))
    }
}

fn cpu_busy(a: &StatSnapshot, b: &StatSnapshot) -> f64 {
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
    tx: u64,
    rx: Option<u64>,
    stat: Option<StatSnapshot>,
}

/// The running monitor; [`Monitor::finish`] prints the final line.
pub struct Monitor {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// Where a running receiver publishes its sequence holes.
pub type LostSource = Arc<crate::rx::recv::RxProgress>;

struct State {
    tx: DevReader,
    rx: Option<DevReader>,
    lost: Option<LostSource>,
    pkt_size: u64,
    format: LiveFormat,
    t0: Instant,
    /// --count (0 = none) and tx_packets when the monitor started.
    count: u64,
    tx_start: Option<u64>,
}

impl State {
    fn point(&mut self) -> Point {
        Point {
            at: Instant::now(),
            tx: self.tx.read().map(|c| c.0).unwrap_or(0),
            rx: self.rx.as_mut().and_then(|r| r.read().ok()).map(|c| c.1),
            stat: StatSnapshot::read().ok(),
        }
    }

    fn sample(&self, a: &Point, b: &Point, last: bool) -> LiveSample {
        let dt = (b.at - a.at).as_secs_f64().max(1e-9);
        let tx = b.tx.saturating_sub(a.tx);
        let rx = b.rx.zip(a.rx).map(|(b, a)| b.saturating_sub(a));
        let pps = tx as f64 / dt;
        let done = match (self.count, self.tx_start) {
            (0, _) | (_, None) => None,
            (c, Some(s)) => Some(b.tx.saturating_sub(s).min(c)),
        };
        LiveSample {
            done_pct: done.map(|d| d as f64 * 100.0 / self.count as f64),
            eta_s: done
                .filter(|_| pps > 0.0)
                .map(|d| (self.count - d) as f64 / pps),
            t_s: (b.at - self.t0).as_secs_f64(),
            interval_s: dt,
            tx_packets: tx,
            tx_pps: (tx as f64 / dt) as u64,
            tx_mbps: tx as f64 * self.pkt_size as f64 * 8.0 / dt / 1e6,
            rx_packets: rx,
            rx_pps: rx.map(|r| (r as f64 / dt) as u64),
            lost: self.lost.as_ref().map(|l| l.lost.load(Ordering::Relaxed)),
            cpu_busy_pct: match (&a.stat, &b.stat) {
                (Some(x), Some(y)) => cpu_busy(x, y),
                _ => 0.0,
            },
            last,
        }
    }

    fn print(&self, s: &LiveSample) {
        let line = match self.format {
            LiveFormat::Text => s.text(),
            LiveFormat::JsonLines => serde_json::to_string(s).unwrap_or_default(),
        };
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "{line}");
    }
}

impl Monitor {
    /// Starts printing every `interval`: counters of `tx` (tx_packets), of `rx`
    /// (rx_packets) when given, and the receiver's holes when given.
    pub fn start(
        tx: &Watched,
        rx: Option<&Watched>,
        lost: Option<LostSource>,
        pkt_size: usize,
        interval: Duration,
        format: LiveFormat,
        count: u64,
    ) -> Result<Monitor> {
        let mut st = State {
            tx: DevReader::open(tx)?,
            rx: rx.map(DevReader::open).transpose()?,
            lost,
            pkt_size: pkt_size as u64,
            format,
            t0: Instant::now(),
            count,
            tx_start: None,
        };
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("upktgen-live".into())
            .spawn(move || {
                let first = st.point();
                st.tx_start = Some(first.tx);
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
            .context("starting the live statistics thread")?;
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

/// Starts the monitor a run's options ask for (`--live`, `--json-lines`, or standard error
/// being a terminal, unless `--no-live`); None when none is asked for.
pub fn start_for_run(
    a: &crate::cli::RunArgs,
    pkt_size: usize,
    count: u64,
    tx: Watched,
    rx: Option<Watched>,
    lost: Option<LostSource>,
) -> Result<Option<Monitor>> {
    use std::io::IsTerminal;
    let format = if a.json_lines {
        LiveFormat::JsonLines
    } else if a.live || (!a.no_live && std::io::stderr().is_terminal()) {
        LiveFormat::Text
    } else {
        return Ok(None);
    };
    if a.interval.is_zero() {
        anyhow::bail!("--interval: must be above 0");
    }
    Monitor::start(&tx, rx.as_ref(), lost, pkt_size, a.interval, format, count).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_formats() {
        let s = LiveSample {
            t_s: 2.0,
            interval_s: 1.0,
            tx_packets: 1000,
            tx_pps: 1000,
            tx_mbps: 0.48,
            rx_packets: Some(990),
            rx_pps: Some(990),
            lost: Some(10),
            cpu_busy_pct: 50.0,
            done_pct: Some(27.0),
            eta_s: Some(3.25),
            last: false,
        };
        assert_eq!(
            s.text(),
            "live    2.0s  tx 1000 pps 0.5 Mb/s  rx 990 pps  sink lost 10  cpu busy 50.0 %  [#####...............] 27 % ETA 3.2 s"
        );
        assert_eq!(bar(100.0), "#".repeat(20));
        let j: serde_json::Value =
            serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(j["final"], false);
        assert_eq!(j["rx_pps"], 990);
    }
}
