//! An engine that sends nothing: each flow's counters follow from its rate, size and
//! duration on a clock, so that the server can be tested (and a client's script tried) with
//! no root and no interface. With a [`ManualClock`] every figure is exact and a test decides
//! when time passes; `upktgen otg --fake-engine` runs it on the [`WallClock`].
//!
//! A flow sends `floor(pps × t)` frames `t` seconds after its start delay, up to its
//! duration's frame count, each of the size's mean bytes (rounded); it is received whole
//! (or less `loss_per_mille`) and each received frame takes [`FAKE_LATENCY_NS`].

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::engine::{Engine, FlowFigures, FlowProgress, LatencyNs, Launched, StreamsOutcome};
use crate::otg::{Config, Duration};

/// The line rate the fake ports have, for rates in percent and spans in bytes.
pub const FAKE_LINE_BPS: u64 = 10_000_000_000;
/// The latency of every received frame.
pub const FAKE_LATENCY_NS: u64 = 2_000;

/// A source of time in ns, the same for every thread.
pub trait Clock: Send + Sync + 'static {
    fn now_ns(&self) -> u64;
}

/// The monotonic clock.
#[derive(Debug)]
pub struct WallClock(std::time::Instant);

impl Default for WallClock {
    fn default() -> Self {
        WallClock(std::time::Instant::now())
    }
}

impl Clock for WallClock {
    fn now_ns(&self) -> u64 {
        u64::try_from(self.0.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }
}

/// A clock that moves only when told to.
#[derive(Debug, Default)]
pub struct ManualClock(AtomicU64);

impl ManualClock {
    /// Moves the clock `ns` forward.
    pub fn advance(&self, ns: u64) {
        self.0.fetch_add(ns, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ns(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// The fake engine.
pub struct FakeEngine {
    pub clock: Arc<dyn Clock>,
    /// Frames lost per thousand sent (0: none).
    pub loss_per_mille: u64,
    /// Launches made, for tests.
    pub launches: AtomicU64,
}

impl FakeEngine {
    pub fn new(clock: Arc<dyn Clock>) -> FakeEngine {
        FakeEngine {
            clock,
            loss_per_mille: 0,
            launches: AtomicU64::new(0),
        }
    }
}

/// One flow as the fake sends it.
#[derive(Debug, Clone)]
struct FakeFlow {
    name: String,
    pps: f64,
    bytes: u64,
    delay_ns: u64,
    /// Frames in all; None: until stopped.
    limit: Option<u64>,
}

struct FakeLaunch {
    clock: Arc<dyn Clock>,
    start: u64,
    flows: Vec<FakeFlow>,
    stop: Arc<AtomicBool>,
    /// When the stop flag was first seen.
    stopped_at: Mutex<Option<u64>>,
    loss_per_mille: u64,
}

impl Engine for FakeEngine {
    fn launch(&self, cfg: &Config, stop: Arc<AtomicBool>) -> anyhow::Result<Box<dyn Launched>> {
        self.launches.fetch_add(1, Ordering::SeqCst);
        // An interface named `gone` went away after set_config, as the run engine finds it.
        if let Some(p) = cfg.ports.iter().find(|p| p.location.iface() == "gone") {
            return Err(crate::run::streams::NotStarted(anyhow::anyhow!(
                "--dev {}: no such interface",
                p.location.iface()
            ))
            .into());
        }
        let line = Some(FAKE_LINE_BPS);
        let flows = cfg
            .flows
            .iter()
            .map(|f| {
                let mean = f.size.mean();
                let pps = f.rate.pps(mean, line).unwrap_or(0.0);
                let span = |s: &crate::otg::Span| s.ns(line).unwrap_or(0.0) as u64;
                let (delay_ns, limit) = match &f.duration {
                    Duration::FixedPackets { packets, delay } => {
                        (span(delay), Some(u64::from(*packets)))
                    }
                    Duration::FixedSeconds { seconds, delay } => {
                        (span(delay), Some((pps * seconds).floor() as u64))
                    }
                    Duration::Burst {
                        bursts, packets, ..
                    } => (
                        0,
                        (*bursts > 0).then(|| u64::from(*bursts) * u64::from(*packets)),
                    ),
                    Duration::Continuous { delay } => (span(delay), None),
                };
                FakeFlow {
                    name: f.name.clone(),
                    pps,
                    bytes: mean.round() as u64,
                    delay_ns,
                    limit,
                }
            })
            .collect();
        Ok(Box::new(FakeLaunch {
            clock: Arc::clone(&self.clock),
            start: self.clock.now_ns(),
            flows,
            stop,
            stopped_at: Mutex::new(None),
            loss_per_mille: self.loss_per_mille,
        }))
    }
}

impl FakeLaunch {
    /// The time the counters stand at: now, or when the stop was first seen.
    fn at(&self) -> u64 {
        let mut s = self.stopped_at.lock().unwrap_or_else(|e| e.into_inner());
        let now = self.clock.now_ns();
        if s.is_none() && self.stop.load(Ordering::SeqCst) {
            *s = Some(now);
        }
        s.unwrap_or(now)
    }

    fn sent(&self, f: &FakeFlow, at: u64) -> u64 {
        let t = at.saturating_sub(self.start).saturating_sub(f.delay_ns);
        let n = (f.pps * t as f64 / 1e9).floor() as u64;
        f.limit.map_or(n, |l| n.min(l))
    }

    fn counters(&self, f: &FakeFlow, at: u64) -> FlowProgress {
        let tx = self.sent(f, at);
        let rx = tx - tx * self.loss_per_mille / 1000;
        FlowProgress {
            name: f.name.clone(),
            tx_frames: tx,
            tx_bytes: tx * f.bytes,
            rx_frames: rx,
            rx_bytes: rx * f.bytes,
        }
    }
}

impl Launched for FakeLaunch {
    fn progress(&self) -> Vec<FlowProgress> {
        let at = self.at();
        self.flows.iter().map(|f| self.counters(f, at)).collect()
    }

    fn finished(&self) -> bool {
        let at = self.at();
        self.stopped_at
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
            || self
                .flows
                .iter()
                .all(|f| f.limit.is_some_and(|l| self.sent(f, at) >= l))
    }

    fn wait(self: Box<Self>) -> anyhow::Result<StreamsOutcome> {
        let at = self.at();
        let flows = self
            .flows
            .iter()
            .map(|f| {
                let c = self.counters(f, at);
                let timed = c.rx_frames > 0;
                let first = self.start + f.delay_ns + FAKE_LATENCY_NS;
                let last =
                    first + ((c.tx_frames.saturating_sub(1)) as f64 * 1e9 / f.pps.max(1e-9)) as u64;
                FlowFigures {
                    lost: c.tx_frames - c.rx_frames,
                    latency_ns: timed.then_some(LatencyNs {
                        min: FAKE_LATENCY_NS,
                        mean: FAKE_LATENCY_NS as f64,
                        max: FAKE_LATENCY_NS,
                        p50: FAKE_LATENCY_NS,
                        p99: FAKE_LATENCY_NS,
                        p999: FAKE_LATENCY_NS,
                    }),
                    jitter_ns: timed.then_some(0.0),
                    first_rx_ns: timed.then_some(first),
                    last_rx_ns: timed.then_some(last),
                    name: c.name,
                    tx_frames: c.tx_frames,
                    tx_bytes: c.tx_bytes,
                    rx_frames: c.rx_frames,
                    rx_bytes: c.rx_bytes,
                }
            })
            .collect();
        Ok(StreamsOutcome { flows })
    }
}
