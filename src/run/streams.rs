//! A config's streams run on their own threads while the caller watches them (the OTG
//! server's traffic): [`launch`] plans and starts the run, [`Launched::progress`] reads each
//! flow's frames and bytes sent and received so far, [`Launched::wait`] gives the final
//! figures.

use super::plan::{self, RunPlan};
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
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LatencyNs {
    pub min: u64,
    pub mean: f64,
    pub max: u64,
    pub p50: u64,
    pub p99: u64,
    pub p999: u64,
}

/// One flow at the end of the run (the OTG server's final figures too, its bytes counting
/// the FCS there).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FlowFigures {
    pub name: String,
    pub tx_frames: u64,
    pub tx_bytes: u64,
    pub rx_frames: u64,
    pub rx_bytes: u64,
    /// Sent and never received (the tail included).
    pub lost: u64,
    /// One-way latency of the received frames, when any was timed.
    pub latency_ns: Option<LatencyNs>,
    /// RFC 3550 interarrival jitter, ns.
    pub jitter_ns: Option<f64>,
    /// The first and last arrival, CLOCK_REALTIME in ns.
    pub first_rx_ns: Option<u64>,
    pub last_rx_ns: Option<u64>,
}

/// One port so far, or at the end: the frames and bytes of the flows it sends, and of the
/// flows it receives (counted there).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PortProgress {
    pub name: String,
    pub tx_frames: u64,
    pub tx_bytes: u64,
    pub rx_frames: u64,
    pub rx_bytes: u64,
}

/// Each port of `ports` (the config's, in its order) summed from `flows`, flow `i` sent from
/// port `ends[i].0` and received at port `ends[i].1` (indices in `ports`).
fn port_sums(
    ports: &[String],
    ends: &[(usize, usize)],
    flows: impl Iterator<Item = (u64, u64, u64, u64)>,
) -> Vec<PortProgress> {
    let mut out: Vec<PortProgress> = ports
        .iter()
        .map(|name| PortProgress {
            name: name.clone(),
            ..PortProgress::default()
        })
        .collect();
    for (&(tx, rx), (tf, tb, rf, rb)) in ends.iter().zip(flows) {
        if let Some(p) = out.get_mut(tx) {
            p.tx_frames += tf;
            p.tx_bytes += tb;
        }
        if let Some(p) = out.get_mut(rx) {
            p.rx_frames += rf;
            p.rx_bytes += rb;
        }
    }
    out
}

/// The final figures of every flow, in config order.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamsOutcome {
    pub flows: Vec<FlowFigures>,
    /// Every port of the config, in its order: its flows' figures summed.
    pub ports: Vec<PortProgress>,
    /// The run's text report, as `upktgen run` prints it.
    pub text: String,
}

/// A config's traffic running: one sender (a run of its own) per transmitting port.
pub struct Launched {
    names: Vec<String>,
    /// The config's ports, and each flow's sending and receiving one (indices in `ports`).
    ports: Vec<String>,
    ends: Vec<(usize, usize)>,
    legs: Vec<Leg>,
    stop: Arc<AtomicBool>,
    /// The lab made for flows both ways between its ends, removed after the runs.
    _lab: Option<crate::lab::Lab>,
}

/// One transmitting port's run.
pub(crate) struct Leg {
    /// The config's flows it sends (their stream ids), in its tally's order.
    ids: Vec<u16>,
    live: Arc<LiveSlot>,
    thread: Option<JoinHandle<Result<Option<super::RunResult>>>>,
}

/// A run that ended with an error before it sent: what its ports are now (an interface
/// gone or down, a namespace removed, a far end that did not start), as opposed to a
/// failure of the program itself.
#[derive(Debug, thiserror::Error)]
#[error("{0:#}")]
pub struct NotStarted(pub anyhow::Error);

/// The run was stopped (Ctrl-C, or its stop flag) before any of its ports sent: an
/// interruption, not a failure.
#[derive(Debug, thiserror::Error)]
#[error("the run was stopped before it sent")]
pub struct StoppedBeforeSending;

/// How long [`launch`] waits for the senders to be set up.
const SET_UP: Duration = Duration::from_secs(60);

/// Plans `cfg` (its ports say where; refused as `run --config` refuses it) and starts it;
/// returns once the senders are set up and sending, or with the run's error. `stop` ends
/// it early (the flows' own durations end it otherwise).
pub fn launch(cfg: &crate::otg::Config, stop: Arc<AtomicBool>) -> Result<Launched> {
    launch_on(cfg, stop, Queues::default())
}

/// How many transmit queues each sending port has (`-t N`), and whether their threads may
/// share CPUs (`--allow-oversubscribe`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Queues {
    pub threads: u16,
    pub oversubscribe: bool,
}

impl Default for Queues {
    fn default() -> Queues {
        Queues {
            threads: 1,
            oversubscribe: false,
        }
    }
}

impl Queues {
    /// Refuses more threads a port than this process may run on CPUs, unless they may
    /// share them: said when the server starts, not at a config whose flows happen to be
    /// more than the CPUs.
    pub fn check(&self) -> Result<()> {
        let cpus = crate::sys::allowed_cpus();
        if !self.oversubscribe && usize::from(self.threads) > cpus.len() {
            return Err(super::plan::Refusal::TooManyThreads {
                n: usize::from(self.threads),
                cpus,
            }
            .into());
        }
        Ok(())
    }
}

/// [`launch`] with each sending port's flows on `queues` transmit queues (`-t N`).
pub fn launch_on(
    cfg: &crate::otg::Config,
    stop: Arc<AtomicBool>,
    queues: Queues,
) -> Result<Launched> {
    let args = run_args(queues)?;
    let (plans, lab) = plan_in_lab(&args, cfg, std::path::Path::new(CONFIG))?;
    let names = plans
        .first()
        .and_then(|p| p.streams.as_ref())
        .map(|s| s.names.clone())
        .unwrap_or_default();
    let legs = start(plans, &stop, None)?;
    let ports: Vec<String> = cfg.ports.iter().map(|p| p.name.clone()).collect();
    let at = |name: &str| ports.iter().position(|p| p == name).unwrap_or(usize::MAX);
    let ends = cfg
        .flows
        .iter()
        .map(|f| {
            (
                at(&f.tx_port),
                f.rx_ports.first().map_or(usize::MAX, |r| at(r)),
            )
        })
        .collect();
    Ok(Launched {
        names,
        ports,
        ends,
        legs,
        stop,
        _lab: lab,
    })
}

/// What the config is called in messages.
const CONFIG: &str = "the config";

/// The namespaces a lab for flows both ways is planned with before it is made.
const PLANNED: plan::streams::LabEnds<'static> = plan::streams::LabEnds {
    tx_ns: "upktgen-planned-tx",
    rx_ns: "upktgen-planned-rx",
};

/// The plans `launch` would run for `cfg` (one per transmitting port), made without
/// sending or making anything: every refusal `run --config` makes.
pub fn plan(cfg: &crate::otg::Config) -> Result<Vec<RunPlan>> {
    plan_on(cfg, Queues::default())
}

/// [`plan`] with each sending port's flows on `queues` transmit queues.
pub fn plan_on(cfg: &crate::otg::Config, queues: Queues) -> Result<Vec<RunPlan>> {
    let lab = plan::streams::both_ways_in_lab(cfg).then_some(PLANNED);
    RunPlan::from_config(&run_args(queues)?, cfg, std::path::Path::new(CONFIG), lab)
}

/// The plans of `cfg` (named `name`) with options `a`; for flows both ways between the
/// private lab's ends, the lab is made first (planned once before, so that a refusal comes
/// before it is made) and returned, to outlive the runs.
pub(crate) fn plan_in_lab(
    a: &RunArgs,
    cfg: &crate::otg::Config,
    name: &std::path::Path,
) -> Result<(Vec<RunPlan>, Option<crate::lab::Lab>)> {
    if !plan::streams::both_ways_in_lab(cfg) {
        return Ok((RunPlan::from_config(a, cfg, name, None)?, None));
    }
    let planned = RunPlan::from_config(a, cfg, name, Some(PLANNED))?;
    // A queue each way for each end's sender (-t N).
    let queues = planned
        .iter()
        .map(|p| u16::try_from(p.senders.len()).unwrap_or(u16::MAX))
        .max()
        .unwrap_or(1)
        .max(1);
    use crate::caps::{self, Cap};
    caps::require(
        &[Cap::SysAdmin, Cap::NetAdmin, Cap::NetRaw],
        "the private lab (network namespaces and a veth pair)",
    )?;
    // Each end's receiver is a tap: the frames climb no further than the stack.
    let lab = crate::lab::Lab::create_opts(crate::lab::RxMode::Stack, false, queues)?;
    let ends = plan::streams::LabEnds {
        tx_ns: &lab.tx_ns,
        rx_ns: &lab.rx_ns,
    };
    let plans = RunPlan::from_config(a, cfg, name, Some(ends))?;
    Ok((plans, Some(lab)))
}

/// The metrics scope of a sending port's run of several: its port's and its receiving
/// port's names, its streams.
pub(crate) fn scope_of(plan: &RunPlan) -> crate::metrics::Scope {
    match &plan.streams {
        Some(s) => crate::metrics::Scope::port(&s.tx_port.0, &s.rx_port.0, &s.ids),
        None => crate::metrics::Scope::default(),
    }
}

/// Starts each plan's run on its own thread and waits until each has set up its senders;
/// on a failure of one, the others are stopped (and waited for, when dropped) and its
/// error is the answer. With `metrics`, each run feeds its part of that endpoint
/// ([`scope_of`] its plan).
pub(crate) fn start(
    plans: Vec<RunPlan>,
    stop: &Arc<AtomicBool>,
    metrics: Option<&crate::metrics::Endpoint>,
) -> Result<Vec<Leg>> {
    let mut legs = Vec::with_capacity(plans.len());
    for plan in plans {
        let ids = plan
            .streams
            .as_ref()
            .map(|s| s.ids.clone())
            .unwrap_or_default();
        let live = Arc::new(LiveSlot::default());
        let (l, s) = (Arc::clone(&live), Arc::clone(stop));
        let part = metrics.map(|m| m.part(scope_of(&plan)));
        let thread = std::thread::Builder::new()
            .name("upktgen-streams".into())
            .spawn(move || super::execute_with(plan, &s, part.as_ref(), Some(&l)));
        let thread = match thread {
            Ok(t) => t,
            Err(e) => {
                stop.store(true, Ordering::Relaxed);
                return Err(e.into());
            }
        };
        legs.push(Leg {
            ids,
            live,
            thread: Some(thread),
        });
    }
    let t0 = Instant::now();
    while let Some(i) = legs.iter().position(|l| l.live.get().is_none()) {
        if legs[i].thread.as_ref().is_some_and(JoinHandle::is_finished) {
            // It ended before sending: its error, or an interruption.
            stop.store(true, Ordering::Relaxed);
            return match legs[i].join() {
                Ok(Some(_)) => Err(anyhow!("the run ended before it sent")),
                Ok(None) => Err(StoppedBeforeSending.into()),
                Err(e) => Err(NotStarted(e).into()),
            };
        }
        if t0.elapsed() > SET_UP {
            stop.store(true, Ordering::Relaxed);
            return Err(anyhow!(
                "the senders were not set up within {} s",
                SET_UP.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Ok(legs)
}

impl Leg {
    fn join(&mut self) -> Result<Option<super::RunResult>> {
        match self.thread.take() {
            Some(t) => t.join().map_err(|_| anyhow!("the run's thread panicked"))?,
            None => Err(anyhow!("the run was already waited for")),
        }
    }

    /// Waits for its run's end: its result (None: stopped before it sent).
    pub(crate) fn wait(mut self) -> Result<Option<super::RunResult>> {
        self.join()
    }
}

impl Drop for Leg {
    /// A run dropped unwaited is waited for, so that it cleans up (its far end) before
    /// its caller goes on; whoever drops it has set the stop.
    fn drop(&mut self) {
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// `upktgen run`'s defaults, as the command line gives them with no option but `-t N` (and
/// `--allow-oversubscribe`).
fn run_args(q: Queues) -> Result<RunArgs> {
    use clap::Parser;
    match crate::cli::Cli::try_parse_from(["upktgen", "run"])?.cmd {
        Some(crate::cli::Cmd::Run(a)) => Ok(RunArgs {
            threads: q.threads,
            allow_oversubscribe: q.oversubscribe,
            ..*a
        }),
        _ => Err(anyhow!("`upktgen run` did not parse as run")),
    }
}

impl Launched {
    /// Each flow's frames and bytes so far, in config order (atomics: any thread, any rate).
    pub fn progress(&self) -> Vec<FlowProgress> {
        let mut flows: Vec<FlowProgress> = self
            .names
            .iter()
            .map(|name| FlowProgress {
                name: name.clone(),
                tx_frames: 0,
                tx_bytes: 0,
                rx_frames: 0,
                rx_bytes: 0,
            })
            .collect();
        for leg in &self.legs {
            let Some(live) = leg.live.get() else {
                continue;
            };
            // The receiver counts by stream id (the config's index), the sender by its own.
            let rx = live.rx.as_ref().and_then(|p| p.streams.get().cloned());
            for (i, &id) in leg.ids.iter().enumerate() {
                let Some(f) = flows.get_mut(usize::from(id)) else {
                    continue;
                };
                (f.tx_frames, f.tx_bytes) = live.tx.get(i);
                (f.rx_frames, f.rx_bytes) = rx
                    .as_ref()
                    .filter(|r| usize::from(id) < r.len())
                    .map_or((0, 0), |r| r.get(usize::from(id)));
            }
        }
        flows
    }

    /// Each port's frames and bytes so far (its flows' sent and received), in the config's
    /// order.
    pub fn ports(&self) -> Vec<PortProgress> {
        let flows = self.progress();
        port_sums(
            &self.ports,
            &self.ends,
            flows
                .iter()
                .map(|f| (f.tx_frames, f.tx_bytes, f.rx_frames, f.rx_bytes)),
        )
    }

    /// Whether the run has ended (every flow's duration, or the stop).
    pub fn finished(&self) -> bool {
        self.legs
            .iter()
            .all(|l| l.thread.as_ref().is_none_or(JoinHandle::is_finished))
    }

    /// Ends the run now (what was sent is reported).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Waits for the end; each flow's final figures.
    pub fn wait(mut self) -> Result<StreamsOutcome> {
        let mut flows: Vec<Option<FlowFigures>> = vec![None; self.names.len()];
        let mut texts = Vec::new();
        let mut runs = Vec::new();
        // Every run waited for before any is looked at: none is left running on an error.
        let results: Vec<_> = std::mem::take(&mut self.legs)
            .into_iter()
            .map(Leg::wait)
            .collect();
        for r in results {
            let Some(r) = r? else {
                return Err(anyhow!("the run was stopped before it sent"));
            };
            for f in figures(&r.report)? {
                if let Some(slot) = flows.get_mut(usize::from(f.0)) {
                    *slot = Some(f.1);
                }
            }
            texts.push(r.report.text(false));
            runs.extend(r.report.streams);
        }
        let mut text = texts.join("\n");
        if runs.len() > 1 {
            text.push('\n');
            text.push_str(
                &crate::report::streams::PortsRun::new(&runs.iter().collect::<Vec<_>>()).text(),
            );
        }
        let flows = flows
            .into_iter()
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| anyhow!("a flow was sent by no port's run"))?;
        let ports = port_sums(
            &self.ports,
            &self.ends,
            flows
                .iter()
                .map(|f| (f.tx_frames, f.tx_bytes, f.rx_frames, f.rx_bytes)),
        );
        Ok(StreamsOutcome { flows, ports, text })
    }
}

/// Each flow of one port's run, by its stream id: sent beside what its receiving port
/// counted.
fn figures(report: &crate::report::run::RunReport) -> Result<Vec<(u16, FlowFigures)>> {
    let rx = report
        .rx_analysis
        .as_ref()
        .and_then(|a| a.receiver.streams.as_ref());
    let tx = report
        .streams
        .as_ref()
        .ok_or_else(|| anyhow!("the run has no streams"))?;
    Ok(tx
        .streams
        .iter()
        .map(|t| {
            let s = rx.and_then(|r| r.streams.iter().find(|s| s.id == t.id));
            let f = FlowFigures {
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
            };
            (t.id, f)
        })
        .collect())
}

impl Drop for Launched {
    /// A launch dropped unwaited stops its runs and waits for them to clean up (a lab, a
    /// far end), so nothing outlives the caller's handle.
    fn drop(&mut self) {
        if !self.legs.is_empty() {
            self.stop.store(true, Ordering::Relaxed);
            self.legs.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_sum_the_flows_they_send_and_receive() {
        let ports = ["p1".to_string(), "p2".to_string()];
        // f0 p1 -> p2, f1 p2 -> p1, f2 p1 -> p2.
        let ends = [(0, 1), (1, 0), (0, 1)];
        let flows = [(10, 600, 9, 540), (5, 500, 5, 500), (1, 60, 1, 60)];
        let p = port_sums(&ports, &ends, flows.into_iter());
        assert_eq!(
            p[0],
            PortProgress {
                name: "p1".into(),
                tx_frames: 11,
                tx_bytes: 660,
                rx_frames: 5,
                rx_bytes: 500
            }
        );
        assert_eq!(
            (p[1].tx_frames, p[1].rx_frames, p[1].rx_bytes),
            (5, 10, 600)
        );
    }
}
