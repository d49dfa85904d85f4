//! The sender threads: each opens its backend (the first of its candidates that can be set
//! up), says so at the start gate, and sends when every thread is ready; the session's
//! observers hear when all are ready and when all are done ([`Moments`]).

use super::session::Moments;
use crate::backend::{BackendInfo, BackendPlan, OpenAt, TxBackend, WithBackend};
use crate::choice::Choice;
use crate::pg::generate::Generator;
use crate::sender::{self, Limits, SendOutcome};
use crate::stream::{FrameSource, Frames};
use crate::sys::{self, netns};
use anyhow::{Context, Result, anyhow, bail};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Condvar, Mutex, mpsc};

/// Everything a sender thread needs, moved into it.
pub struct SendJob {
    /// Its candidate backends, in order.
    pub backends: Vec<BackendPlan>,
    /// Whether `auto` chose among them (the choice is then reported).
    pub auto: bool,
    /// Candidates `auto` ruled out before sending, and why.
    pub ruled_out: Vec<String>,
    /// SO_PRIORITY of packet sockets (pktgen's skb_priority; 0 = leave it).
    pub priority: u32,
    pub ifindex: u32,
    pub tx_queues: u16,
    pub frames: Frames,
    pub limits: Limits,
    pub cpu: Option<usize>,
}

/// What one sender thread hands back.
pub struct SenderRun {
    pub info: BackendInfo,
    pub outcome: SendOutcome,
    /// The walk's state at the end (for pktgen's `Current:` section), when frames came from
    /// the full walk.
    pub walk: Option<Generator>,
    /// CLOCK_MONOTONIC at the start and end of its send loop, ns.
    pub started_ns: u64,
    pub stopped_ns: u64,
    /// A thread's devices on one timeline: each one's figures, in the sender's order.
    pub parts: Vec<crate::stream::devices::PartFigures>,
}

/// The finished senders.
pub struct Ran {
    pub senders: Vec<SenderRun>,
    /// --start-at: how long after the instant the gate opened (0: before it).
    pub late_ns: u64,
}

/// The shared half of the start line: None until the coordinator decides; then true (go)
/// or false (called off).
type Go = Arc<(Mutex<Option<bool>>, Condvar)>;

fn open_gate(go: &Go, v: bool) {
    let (m, cv) = &**go;
    *m.lock().unwrap_or_else(|e| e.into_inner()) = Some(v);
    cv.notify_all();
}

/// Start line for the sender threads: each says once when its backend is ready (or why it
/// is not); the coordinator then opens the gate for all, or closes it if any failed. A gate
/// dropped without having reported (an error return, a panic) reports a failure, so the
/// coordinator never waits for a thread that is gone.
struct Gate {
    ready: mpsc::Sender<Result<()>>,
    go: Go,
    reported: std::cell::Cell<bool>,
}

impl Gate {
    fn report(&self, r: Result<()>) {
        if !self.reported.replace(true) {
            let _ = self.ready.send(r);
        }
    }

    /// Reports ready and waits for the start; false when the run is called off.
    fn ready_and_wait(&self) -> bool {
        self.report(Ok(()));
        let (m, cv) = &*self.go;
        let mut g = m.lock().unwrap_or_else(|e| e.into_inner());
        while g.is_none() {
            g = cv.wait(g).unwrap_or_else(|e| e.into_inner());
        }
        g.unwrap_or(false)
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        self.report(Err(anyhow!(
            "a sender thread ended before its backend was ready"
        )));
    }
}

/// Runs the jobs on their threads (in `ns`), telling the observers (`moments`) once all are
/// ready and again once all are done; with `start_at` (CLOCK_REALTIME, ns), every thread then waits
/// for that instant before its first send. The senders share one stop flag of their own:
/// Ctrl-C sets it (through `signal`; it also ends the wait), and so does any sender that
/// fails, so the others do not run on alone.
///
/// A set-up that ends after the instant starts at once and warns: on a fleet the other
/// hosts are already sending, and a late start, recorded as the start error, is worth more
/// than none.
pub fn run_jobs(
    ns: Option<PathBuf>,
    jobs: Vec<SendJob>,
    signal: &Arc<AtomicBool>,
    start_at: Option<u64>,
    moments: &mut Moments,
) -> Result<Ran> {
    let (tx, rx) = mpsc::channel();
    let go: Go = Arc::new((Mutex::new(None), Condvar::new()));
    let run_stop = Arc::new(AtomicBool::new(false));
    let n = jobs.len();
    let mut handles = Vec::with_capacity(n);
    for (i, job) in jobs.into_iter().enumerate() {
        let gate = Gate {
            ready: tx.clone(),
            go: Arc::clone(&go),
            reported: std::cell::Cell::new(false),
        };
        let ns = ns.clone();
        let stop = Arc::clone(&run_stop);
        let spawned = std::thread::Builder::new()
            .name(format!("upktgen-tx{i}"))
            .spawn(move || -> Result<SenderRun> {
                let r = (|| {
                    if let Some(p) = &ns {
                        netns::setns_net(p).with_context(|| {
                            format!("entering network namespace {}", p.display())
                        })?;
                    }
                    send(job, &gate, &stop, start_at)
                })();
                if let Err(e) = &r {
                    gate.report(Err(anyhow!("{e:#}")));
                    stop.store(true, Relaxed);
                }
                r
            });
        match spawned {
            Ok(h) => handles.push(h),
            Err(e) => {
                // Call off the threads already started, and wait for them.
                open_gate(&go, false);
                for h in handles {
                    let _ = h.join();
                }
                return Err(anyhow!(e).context("starting a sender thread"));
            }
        }
    }
    drop(tx);
    let mut failed: Option<anyhow::Error> = None;
    for _ in 0..n {
        match rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                failed.get_or_insert(e);
                break;
            }
            Err(_) => break,
        }
    }
    let mut late_ns = 0;
    match failed {
        None => match moments.ready() {
            Ok(()) => {
                open_gate(&go, true);
                if let Some(at) = start_at {
                    late_ns = sys::realtime_ns().saturating_sub(at);
                    if late_ns > 0 {
                        crate::errln!(
                            "upktgen: warning: --start-at {}: the set-up ended {:.3} ms after the instant; the senders start now, late (the report's start error says by how much)",
                            crate::start_at::format_rfc3339(at),
                            late_ns as f64 / 1e6
                        );
                    }
                }
            }
            Err(e) => {
                failed = Some(e);
                open_gate(&go, false);
            }
        },
        Some(_) => open_gate(&go, false),
    }
    let (senders, first_err) = {
        let _watch = SignalWatch::start(signal, &run_stop);
        join_all(handles)
    };
    let stopped = moments.stopped();
    // The sender that could not start says why; the others only that they were called off.
    if let Some(e) = failed {
        return Err(e);
    }
    if let Some(e) = first_err {
        return Err(e);
    }
    stopped?;
    Ok(Ran { senders, late_ns })
}

/// Joins every sender thread: the finished ones, and the first error.
fn join_all(
    handles: Vec<std::thread::JoinHandle<Result<SenderRun>>>,
) -> (Vec<SenderRun>, Option<anyhow::Error>) {
    let mut done = Vec::with_capacity(handles.len());
    let mut first_err: Option<anyhow::Error> = None;
    for h in handles {
        match h.join() {
            Ok(Ok(d)) => done.push(d),
            Ok(Err(e)) => {
                first_err.get_or_insert(e);
            }
            Err(_) => {
                first_err.get_or_insert(anyhow!("a sender thread panicked"));
            }
        }
    }
    (done, first_err)
}

/// Carries Ctrl-C (the process's flag) to the senders' own stop flag while it lives.
struct SignalWatch {
    watching: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl SignalWatch {
    fn start(signal: &Arc<AtomicBool>, run_stop: &Arc<AtomicBool>) -> SignalWatch {
        let watching = Arc::new(AtomicBool::new(true));
        let (signal, run_stop, w) = (
            Arc::clone(signal),
            Arc::clone(run_stop),
            Arc::clone(&watching),
        );
        let thread = std::thread::spawn(move || {
            while w.load(Relaxed) {
                if signal.load(Relaxed) {
                    run_stop.store(true, Relaxed);
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        });
        SignalWatch {
            watching,
            thread: Some(thread),
        }
    }
}

impl Drop for SignalWatch {
    fn drop(&mut self) {
        self.watching.store(false, Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// On a sender thread: pin, open the first candidate backend that can be set up, wait for
/// the start, send.
fn send(
    mut job: SendJob,
    gate: &Gate,
    stop: &AtomicBool,
    start_at: Option<u64>,
) -> Result<SenderRun> {
    if let Some(cpu) = job.cpu {
        sys::pin_to_cpu(cpu).map_err(|e| {
            anyhow!("--cpu {cpu}: cannot run the sender there ({e}); online CPUs are listed in /sys/devices/system/cpu/online")
        })?;
    }
    let backends = std::mem::take(&mut job.backends);
    let mut skipped = std::mem::take(&mut job.ruled_out);
    for (i, plan) in backends.iter().enumerate() {
        let at = OpenAt {
            ifindex: job.ifindex,
            tx_queues: job.tx_queues,
            priority: job.priority,
        };
        let measure = Measure {
            limits: &job.limits,
            gate,
            stop,
            start_at,
        };
        let opened = plan.open(&at, &mut job.frames, measure);
        match opened {
            Ok(r) => {
                if job.auto && r.is_ok() {
                    let why = if skipped.is_empty() {
                        "the fastest candidate".to_string()
                    } else {
                        skipped.join("; ")
                    };
                    crate::errln!(
                        "upktgen: --backend auto chose {} ({why})",
                        plan.kind().name()
                    );
                }
                return r;
            }
            Err(e) if i + 1 < backends.len() => {
                skipped.push(format!("{} unavailable: {e:#}", plan.kind().name()));
            }
            Err(e) => return Err(e.into()),
        }
    }
    bail!("no backend to try")
}

/// Waits for the start, then runs one send loop on the opened backend.
struct Measure<'a> {
    limits: &'a Limits,
    gate: &'a Gate,
    stop: &'a AtomicBool,
    /// --start-at's instant (CLOCK_REALTIME, ns).
    start_at: Option<u64>,
}

/// The last stretch before a start instant, spent spinning on the clock rather than asleep
/// (a timer's wake-up can be tens of microseconds late).
const START_SPIN_NS: u64 = 100_000;
/// The longest single sleep while waiting for the instant: `stop` (Ctrl-C) is looked at
/// at least this often.
const START_SLICE_NS: u64 = 20_000_000;

/// Waits until the CLOCK_REALTIME instant `at`: asleep (clock_nanosleep, absolute, in
/// slices so that `stop` ends the wait promptly) until [`START_SPIN_NS`] before it, then
/// spinning on the clock. False when stopped first.
fn wait_for_instant(at: u64, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Relaxed) {
            return false;
        }
        let now = sys::realtime_ns();
        if now >= at {
            return true;
        }
        if at - now > START_SPIN_NS {
            let until = (at - START_SPIN_NS).min(now + START_SLICE_NS);
            if sys::sleep_until_realtime_ns(until).is_err() {
                std::thread::sleep(std::time::Duration::from_nanos(until - now));
            }
        } else {
            std::hint::spin_loop();
        }
    }
}

impl WithBackend for Measure<'_> {
    type Out = Result<SenderRun>;

    fn with<B: TxBackend>(self, mut backend: B, frames: &mut Frames) -> Result<SenderRun> {
        let info = backend.info();
        if !self.gate.ready_and_wait() {
            bail!("called off: another sender could not start");
        }
        // Stopped while waiting: the send loop sees `stop` at once and sends nothing.
        if let Some(at) = self.start_at {
            wait_for_instant(at, self.stop);
        }
        let t0 = sys::monotonic_ns();
        let outcome = sender::run(&mut backend, frames, self.limits, self.stop)?;
        let t1 = sys::monotonic_ns();
        Ok(SenderRun {
            info,
            outcome,
            walk: frames.generator().cloned(),
            started_ns: t0,
            stopped_ns: t1,
            parts: match frames {
                Frames::Devices(d) => d.parts(),
                _ => Vec::new(),
            },
        })
    }
}
