//! A config's streams run on their own threads while the caller watches them (the OTG
//! server's traffic): [`launch`] plans and starts the run, [`Launched::progress`] reads each
//! flow's frames and bytes sent and received so far, [`Launched::wait`] gives the final
//! figures.

use super::plan::RunPlan;
use crate::cli::RunArgs;
use crate::rx::recv::RxProgress;
use crate::stream::multi::Tally;
use anyhow::{Result, anyhow};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Where a run publishes its streams' live counters once its senders are set up.
#[derive(Debug, Default)]
pub struct LiveSlot(Mutex<Option<LiveStreams>>);

/// The counters of a running config: the sender's per stream, and the receiver's when it
/// counts them here (the lab's; a far end's come with its report).
#[derive(Debug, Clone)]
pub struct LiveStreams {
    pub tx: Arc<Tally>,
    pub rx: Option<Arc<RxProgress>>,
}

impl LiveSlot {
    pub(crate) fn fill(&self, tx: Arc<Tally>, rx: Option<Arc<RxProgress>>) {
        if let Ok(mut g) = self.0.lock() {
            *g = Some(LiveStreams { tx, rx });
        }
    }

    fn get(&self) -> Option<LiveStreams> {
        self.0.lock().ok().and_then(|g| g.clone())
    }
}

/// One flow so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowProgress {
    pub name: String,
    pub tx_frames: u64,
    pub tx_bytes: u64,
    pub rx_frames: u64,
    pub rx_bytes: u64,
}

/// Latency of a flow's frames, in ns.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyNs {
    pub min: u64,
    pub mean: f64,
    pub max: u64,
    pub p50: u64,
    pub p99: u64,
    pub p999: u64,
}

/// One flow at the end of the run.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowFigures {
    pub name: String,
    pub tx_frames: u64,
    pub tx_bytes: u64,
    pub rx_frames: u64,
    pub rx_bytes: u64,
    /// Sent and never received (the tail included).
    pub lost: u64,
    pub latency_ns: Option<LatencyNs>,
    pub jitter_ns: Option<f64>,
    pub first_rx_ns: Option<u64>,
    pub last_rx_ns: Option<u64>,
}

/// The final figures of every flow, in config order.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamsOutcome {
    pub flows: Vec<FlowFigures>,
    /// The run's text report, as `upktgen run` prints it.
    pub text: String,
}

/// A config's traffic running.
pub struct Launched {
    names: Vec<String>,
    live: Arc<LiveSlot>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Result<Option<super::RunResult>>>>,
}

/// How long [`launch`] waits for the senders to be set up.
const SET_UP: Duration = Duration::from_secs(60);

/// Plans `cfg` (its ports say where; refused as `run --config` refuses it) and starts it;
/// returns once the senders are set up and sending, or with the run's error. `stop` ends
/// it early (the flows' own durations end it otherwise).
pub fn launch(cfg: &crate::otg::Config, stop: Arc<AtomicBool>) -> Result<Launched> {
    let args = default_run_args()?;
    let plan = RunPlan::from_config(&args, cfg, std::path::Path::new("the config"))?;
    let names = plan
        .streams
        .as_ref()
        .map(|s| s.names.clone())
        .unwrap_or_default();
    let live = Arc::new(LiveSlot::default());
    let (l, s) = (Arc::clone(&live), Arc::clone(&stop));
    let thread = std::thread::Builder::new()
        .name("upktgen-streams".into())
        .spawn(move || super::execute_with(plan, &s, None, Some(&l)))?;
    let mut launched = Launched {
        names,
        live,
        stop,
        thread: Some(thread),
    };
    let t0 = Instant::now();
    while launched.live.get().is_none() {
        if launched
            .thread
            .as_ref()
            .is_some_and(JoinHandle::is_finished)
        {
            // It ended before sending: its error, or an interruption.
            return match launched.join()? {
                Some(_) => Err(anyhow!("the run ended before it sent")),
                None => Err(anyhow!("the run was stopped before it sent")),
            };
        }
        if t0.elapsed() > SET_UP {
            launched.stop.store(true, Ordering::Relaxed);
            return Err(anyhow!(
                "the senders were not set up within {} s",
                SET_UP.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Ok(launched)
}

/// `upktgen run`'s defaults, as the command line gives them with no option.
fn default_run_args() -> Result<RunArgs> {
    use clap::Parser;
    match crate::cli::Cli::try_parse_from(["upktgen", "run"])?.cmd {
        Some(crate::cli::Cmd::Run(a)) => Ok(*a),
        _ => Err(anyhow!("`upktgen run` did not parse as run")),
    }
}

impl Launched {
    /// Each flow's frames and bytes so far, in config order (atomics: any thread, any rate).
    pub fn progress(&self) -> Vec<FlowProgress> {
        let live = self.live.get();
        let rx = live
            .as_ref()
            .and_then(|l| l.rx.as_ref())
            .and_then(|p| p.streams.get().cloned());
        self.names
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let (tx_frames, tx_bytes) = live.as_ref().map_or((0, 0), |l| l.tx.get(i));
                let (rx_frames, rx_bytes) = rx.as_ref().map_or((0, 0), |r| r.get(i));
                FlowProgress {
                    name: name.clone(),
                    tx_frames,
                    tx_bytes,
                    rx_frames,
                    rx_bytes,
                }
            })
            .collect()
    }

    /// Whether the run has ended (every flow's duration, or the stop).
    pub fn finished(&self) -> bool {
        self.thread.as_ref().is_none_or(JoinHandle::is_finished)
    }

    /// Ends the run now (what was sent is reported).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    fn join(&mut self) -> Result<Option<super::RunResult>> {
        match self.thread.take() {
            Some(t) => t.join().map_err(|_| anyhow!("the run's thread panicked"))?,
            None => Err(anyhow!("the run was already waited for")),
        }
    }

    /// Waits for the end; each flow's final figures.
    pub fn wait(mut self) -> Result<StreamsOutcome> {
        let Some(r) = self.join()? else {
            return Err(anyhow!("the run was stopped before it sent"));
        };
        let report = &r.report;
        let rx = report
            .rx_analysis
            .as_ref()
            .and_then(|a| a.receiver.streams.as_ref());
        let tx = report
            .streams
            .as_ref()
            .ok_or_else(|| anyhow!("the run has no streams"))?;
        let flows = tx
            .streams
            .iter()
            .map(|t| {
                let s = rx.and_then(|r| r.streams.iter().find(|s| s.id == t.id));
                FlowFigures {
                    name: t.name.clone(),
                    tx_frames: t.tx_frames,
                    tx_bytes: t.tx_bytes,
                    rx_frames: t.rx_frames.unwrap_or(0),
                    rx_bytes: s.map_or(0, |s| s.bytes),
                    lost: t.lost.unwrap_or(t.tx_frames),
                    latency_ns: s.and_then(|s| s.latency.as_ref()).map(|l| LatencyNs {
                        min: l.min_ns,
                        mean: l.mean_ns,
                        max: l.max_ns,
                        p50: l.p50_ns,
                        p99: l.p99_ns,
                        p999: l.p999_ns,
                    }),
                    jitter_ns: s.and_then(|s| s.jitter_ns),
                    first_rx_ns: s.and_then(|s| s.first_rx_ns),
                    last_rx_ns: s.and_then(|s| s.last_rx_ns),
                }
            })
            .collect();
        Ok(StreamsOutcome {
            flows,
            text: report.text(false),
        })
    }
}

impl Drop for Launched {
    /// A launch dropped unwaited stops its run and waits for it to clean up (its lab, its
    /// far end), so nothing outlives the caller's handle.
    fn drop(&mut self) {
        if let Some(t) = self.thread.take() {
            self.stop.store(true, Ordering::Relaxed);
            let _ = t.join();
        }
    }
}
