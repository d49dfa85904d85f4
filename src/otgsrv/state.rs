//! What the server holds between requests: the config, the traffic's phase and counters,
//! the captures. Handlers change it in short critical sections and never wait on the
//! engine inside one; a supervisor thread per launch samples the engine's counters at the
//! tick (10 Hz), which is where the rates come from, and collects the final figures.
//!
//! Phases: `Idle` (no senders) → start → `Starting` (the engine opens its sockets) →
//! `Running` → (durations end, or stop, or pause) `Stopping` → `Idle`, or `Paused` after a
//! pause. A resume launches what is left of each flow (frames or seconds) and the counts go
//! on from where they stood. set_config and start are refused (409) unless `Idle` or
//! `Paused`: a running test is never torn.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration as StdDuration, Instant};

use serde_json::Value;
use tokio::sync::watch;

use super::allow::Allow;
use super::capture::live::{Capturer, Tap};
use super::capture::{self, Buffer, CaptureSpec};
use super::engine::{Engine, FlowFigures, FlowProgress, Launched};
use super::error::ApiError;
use super::fake::Clock;
use super::model::TransmitState;
use crate::otg::{Config, Duration};

/// How the server runs traffic and captures.
#[derive(Debug, Clone)]
pub struct Options {
    /// The ports a config may name.
    pub allow: Allow,
    /// Stop flows without an end when no request came for this long (None: never).
    pub watchdog: Option<StdDuration>,
    /// The most bytes a port's capture holds.
    pub capture_bytes: usize,
    /// How often the supervisor samples a launch's counters.
    pub tick: StdDuration,
    /// How long a stop or a pause waits for the senders.
    pub stop_timeout: StdDuration,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            allow: Allow::default(),
            watchdog: Some(StdDuration::from_secs(60)),
            capture_bytes: 64 << 20,
            tick: StdDuration::from_millis(100),
            stop_timeout: StdDuration::from_secs(10),
        }
    }
}

/// Frames and bytes sent and received.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub tx_frames: u64,
    pub tx_bytes: u64,
    pub rx_frames: u64,
    pub rx_bytes: u64,
}

impl Counts {
    fn of(p: &FlowProgress) -> Counts {
        Counts {
            tx_frames: p.tx_frames,
            tx_bytes: p.tx_bytes,
            rx_frames: p.rx_frames,
            rx_bytes: p.rx_bytes,
        }
    }

    fn plus(self, o: Counts) -> Counts {
        Counts {
            tx_frames: self.tx_frames + o.tx_frames,
            tx_bytes: self.tx_bytes + o.tx_bytes,
            rx_frames: self.rx_frames + o.rx_frames,
            rx_bytes: self.rx_bytes + o.rx_bytes,
        }
    }
}

/// Per second, over the last second of samples.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Rates {
    pub tx_frames: f64,
    pub tx_bytes: f64,
    pub rx_frames: f64,
    pub rx_bytes: f64,
}

/// Latency over every launch of a test: min, max and the frame-weighted mean.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Latency {
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub frames: u64,
}

/// One flow of the loaded config, as the test stands.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FlowState {
    /// Counted by the launches that ended.
    pub base: Counts,
    /// Counted by the launch under way.
    pub live: Counts,
    pub rates: Rates,
    pub latency: Option<Latency>,
    pub first_rx_ns: Option<u64>,
    pub last_rx_ns: Option<u64>,
}

impl FlowState {
    pub fn total(&self) -> Counts {
        self.base.plus(self.live)
    }
}

/// The traffic's phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Idle,
    Starting,
    Running,
    Stopping,
    Paused,
}

/// A config the server took.
#[derive(Debug)]
pub struct Loaded {
    pub cfg: Config,
    pub captures: Vec<CaptureSpec>,
    /// What get_config answers: the model's JSON, defaults filled in.
    pub value: Value,
}

struct PortCapture {
    buf: Arc<Mutex<Buffer>>,
    tap: Option<Box<dyn Tap>>,
}

pub(super) struct Inner {
    pub loaded: Option<Arc<Loaded>>,
    pub phase: Phase,
    /// The launch under way or last made (a supervisor's results count only for its own).
    generation: u64,
    pub flows: Vec<FlowState>,
    samples: VecDeque<(u64, Vec<Counts>)>,
    stop: Option<Arc<AtomicBool>>,
    pause_requested: bool,
    /// The last launch's failure, reported to the next request that waits on it.
    failure: Option<String>,
    captures: Vec<(String, PortCapture)>,
}

/// The server's state, shared by the handlers and the supervisors.
pub struct Shared {
    engine: Arc<dyn Engine>,
    capturer: Arc<dyn Capturer>,
    clock: Arc<dyn Clock>,
    pub opts: Options,
    inner: Mutex<Inner>,
    /// The generation of the last launch that ended.
    ended: watch::Sender<u64>,
    epoch: Instant,
    last_request_ms: AtomicU64,
    supervisors: Mutex<Vec<std::thread::JoinHandle<()>>>,
}

/// What a transmit request leaves to its handler.
pub enum Next {
    /// Done.
    Done,
    /// Wait until the launch of this generation ended.
    Wait(u64),
    /// Launch this config (for flows `idx` of the loaded one) as generation `gen`.
    Launch(Job),
}

/// A launch to make, off the handlers' thread.
pub struct Job {
    cfg: Config,
    idx: Vec<usize>,
    generation: u64,
    stop: Arc<AtomicBool>,
    endless: bool,
}

fn endless(d: &Duration) -> bool {
    matches!(
        d,
        Duration::Continuous { .. } | Duration::Burst { bursts: 0, .. }
    )
}

impl Shared {
    pub fn new(
        engine: Arc<dyn Engine>,
        capturer: Arc<dyn Capturer>,
        clock: Arc<dyn Clock>,
        opts: Options,
    ) -> Arc<Shared> {
        Arc::new(Shared {
            engine,
            capturer,
            clock,
            opts,
            inner: Mutex::new(Inner {
                loaded: None,
                phase: Phase::Idle,
                generation: 0,
                flows: Vec::new(),
                samples: VecDeque::new(),
                stop: None,
                pause_requested: false,
                failure: None,
                captures: Vec::new(),
            }),
            ended: watch::channel(0).0,
            epoch: Instant::now(),
            last_request_ms: AtomicU64::new(0),
            supervisors: Mutex::new(Vec::new()),
        })
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// A request came (for the watchdog).
    pub fn touch(&self) {
        self.last_request_ms.store(self.now_ms(), Ordering::Relaxed);
    }

    /// A receiver of the generation of the last launch that ended.
    pub fn ended(&self) -> watch::Receiver<u64> {
        self.ended.subscribe()
    }

    /// The loaded config, if any.
    pub fn loaded(&self) -> Option<Arc<Loaded>> {
        self.lock().loaded.clone()
    }

    /// set_config: checks `doc` (the model's Config, `captures` included), then takes it in
    /// place of the last one, unless traffic runs.
    pub fn set_config(&self, mut doc: Value) -> Result<(), ApiError> {
        let caps = doc.as_object_mut().and_then(|o| o.remove("captures"));
        let cfg = Config::from_value(&doc)?;
        for (i, p) in cfg.ports.iter().enumerate() {
            if !self.opts.allow.allows(&p.location) {
                return Err(ApiError::refused(
                    axum::http::StatusCode::FORBIDDEN,
                    format!(
                        "ports[{i}].location: {} is outside what this server may touch (--allow: {})",
                        p.location,
                        self.opts.allow.describe()
                    ),
                ));
            }
        }
        let captures = capture::parse(caps.as_ref(), &cfg)?;
        // Planned now as the start will plan it: a refusal is this request's 400, its path
        // first (the plan names the config "the config").
        if let Err(e) = self.engine.check(&cfg) {
            let e = format!("{e:#}");
            return Err(ApiError::bad(
                e.strip_prefix("the config: ").unwrap_or(&e).to_string(),
            ));
        }
        let mut value = cfg.to_value();
        if !captures.is_empty() {
            value["captures"] =
                serde_json::to_value(captures.iter().map(|c| &c.model).collect::<Vec<_>>())
                    .unwrap_or(Value::Null);
        }
        let taps = {
            let mut g = self.lock();
            if !matches!(g.phase, Phase::Idle | Phase::Paused) {
                return Err(ApiError::conflict(
                    "traffic is running: stop it (set_control_state traffic.flow_transmit stop) before set_config",
                ));
            }
            g.flows = vec![FlowState::default(); cfg.flows.len()];
            g.samples.clear();
            g.phase = Phase::Idle;
            g.failure = None;
            g.loaded = Some(Arc::new(Loaded {
                cfg,
                captures,
                value,
            }));
            std::mem::take(&mut g.captures)
        };
        for (_, c) in taps {
            if let Some(t) = c.tap {
                t.stop();
            }
        }
        Ok(())
    }

    /// set_control_state traffic.flow_transmit: what is left to do.
    pub fn transmit(&self, state: TransmitState, names: &[String]) -> Result<Next, ApiError> {
        let mut g = self.lock();
        let Some(loaded) = g.loaded.clone() else {
            return Err(ApiError::bad("no config: set_config first"));
        };
        let cfg = &loaded.cfg;
        for n in names {
            if !cfg.flows.iter().any(|f| &f.name == n) {
                return Err(ApiError::bad(format!(
                    "flow_transmit.flow_names: no flow named {n:?}"
                )));
            }
        }
        if !names.is_empty() && cfg.flows.iter().any(|f| !names.contains(&f.name)) {
            return Err(ApiError::bad(
                "flow_transmit.flow_names: not supported for some of the flows (upktgen starts, stops, pauses and resumes a config's flows together: name them all, or none)",
            ));
        }
        match (state, g.phase) {
            (TransmitState::Start, Phase::Idle | Phase::Paused) => {
                if cfg.flows.is_empty() {
                    return Err(ApiError::bad("the config has no flows to start"));
                }
                g.flows = vec![FlowState::default(); cfg.flows.len()];
                g.samples.clear();
                Ok(Next::Launch(self.job(
                    &mut g,
                    cfg.clone(),
                    (0..cfg.flows.len()).collect(),
                )))
            }
            (
                TransmitState::Start | TransmitState::Pause | TransmitState::Resume,
                Phase::Starting,
            ) => Err(ApiError::conflict("traffic is starting")),
            (TransmitState::Start, _) => Err(ApiError::conflict(
                "traffic is already running: stop it first",
            )),
            (TransmitState::Stop, Phase::Idle) => Ok(Next::Done),
            (TransmitState::Stop, Phase::Paused) => {
                g.phase = Phase::Idle;
                Ok(Next::Done)
            }
            (TransmitState::Stop, Phase::Starting) => Err(ApiError::conflict(
                "traffic is starting: stop it once the start answered",
            )),
            (TransmitState::Stop | TransmitState::Pause, Phase::Running | Phase::Stopping) => {
                if state == TransmitState::Pause {
                    if let Some(f) = cfg
                        .flows
                        .iter()
                        .find(|f| matches!(f.duration, Duration::Burst { bursts: 1.., .. }))
                    {
                        return Err(ApiError::bad(format!(
                            "pause: not supported for flow {:?} (a flow of a fixed number of bursts); stop and start it instead",
                            f.name
                        )));
                    }
                    g.pause_requested = true;
                } else {
                    g.pause_requested = false;
                }
                if let Some(s) = &g.stop {
                    s.store(true, Ordering::SeqCst);
                }
                g.phase = Phase::Stopping;
                Ok(Next::Wait(g.generation))
            }
            (TransmitState::Pause, Phase::Paused) | (TransmitState::Resume, Phase::Running) => {
                Ok(Next::Done)
            }
            (TransmitState::Pause, Phase::Idle) => Err(ApiError::conflict("no traffic is running")),
            (TransmitState::Resume, Phase::Idle | Phase::Stopping) => {
                Err(ApiError::conflict("no traffic is paused"))
            }
            (TransmitState::Resume, Phase::Paused) => {
                let (rest, idx) = remainder(cfg, &g.flows);
                if idx.is_empty() {
                    g.phase = Phase::Idle;
                    return Ok(Next::Done);
                }
                Ok(Next::Launch(self.job(&mut g, rest, idx)))
            }
        }
    }

    fn job(&self, g: &mut Inner, cfg: Config, idx: Vec<usize>) -> Job {
        g.generation += 1;
        g.phase = Phase::Starting;
        g.pause_requested = false;
        g.failure = None;
        let stop = Arc::new(AtomicBool::new(false));
        g.stop = Some(Arc::clone(&stop));
        let endless = cfg.flows.iter().any(|f| endless(&f.duration));
        Job {
            cfg,
            idx,
            generation: g.generation,
            stop,
            endless,
        }
    }

    /// Makes the launch (blocking: on a thread where the handlers do not run), then leaves
    /// it to a supervisor thread.
    pub fn launch(self: &Arc<Self>, job: Job) -> Result<(), ApiError> {
        let launched = match self.engine.launch(&job.cfg, Arc::clone(&job.stop)) {
            Ok(l) => l,
            Err(e) => {
                let mut g = self.lock();
                if g.generation == job.generation {
                    g.phase = Phase::Idle;
                    g.stop = None;
                }
                // What the ports are now (an interface gone) conflicts with the start; any
                // other failure is the server's.
                let msg = format!("starting the flows: {e:#}");
                return Err(
                    if e.downcast_ref::<crate::run::streams::NotStarted>()
                        .is_some()
                    {
                        ApiError::conflict(msg)
                    } else {
                        ApiError::internal(msg)
                    },
                );
            }
        };
        {
            let mut g = self.lock();
            if g.generation == job.generation && g.phase == Phase::Starting {
                g.phase = Phase::Running;
            }
        }
        let me = Arc::clone(self);
        let handle = std::thread::Builder::new()
            .name("upktgen-otg-supervisor".into())
            .spawn(move || me.supervise(job, launched))
            .map_err(|e| ApiError::internal(format!("starting a supervisor thread: {e}")))?;
        let mut s = self.supervisors.lock().unwrap_or_else(|e| e.into_inner());
        s.retain(|h| !h.is_finished());
        s.push(handle);
        Ok(())
    }

    fn supervise(&self, job: Job, launched: Box<dyn Launched>) {
        loop {
            let p = launched.progress();
            let t = self.clock.now_ns();
            let done = launched.finished();
            self.sample(job.generation, t, &job.idx, &p);
            if let Some(w) = self.opts.watchdog
                && job.endless
                && self
                    .now_ms()
                    .saturating_sub(self.last_request_ms.load(Ordering::Relaxed))
                    > u64::try_from(w.as_millis()).unwrap_or(u64::MAX)
            {
                job.stop.store(true, Ordering::SeqCst);
            }
            if done {
                break;
            }
            std::thread::sleep(self.opts.tick);
        }
        let out = launched.wait();
        let mut g = self.lock();
        if g.generation == job.generation {
            match out {
                Ok(o) => {
                    for (i, f) in job.idx.iter().zip(&o.flows) {
                        if let Some(s) = g.flows.get_mut(*i) {
                            settle(s, f);
                        }
                    }
                }
                Err(e) => g.failure = Some(format!("{e:#}")),
            }
            g.phase = if g.pause_requested {
                Phase::Paused
            } else {
                Phase::Idle
            };
            g.pause_requested = false;
            g.stop = None;
            g.samples.clear();
            for f in &mut g.flows {
                f.rates = Rates::default();
            }
        }
        drop(g);
        self.ended.send_replace(job.generation);
    }

    /// Takes a sample of launch `generation`: the live counts, and rates over the last second.
    fn sample(&self, generation: u64, t: u64, idx: &[usize], p: &[FlowProgress]) {
        let mut g = self.lock();
        if g.generation != generation {
            return;
        }
        for (i, fp) in idx.iter().zip(p) {
            if let Some(s) = g.flows.get_mut(*i) {
                s.live = Counts::of(fp);
            }
        }
        let totals: Vec<Counts> = g.flows.iter().map(FlowState::total).collect();
        if g.samples.back().is_some_and(|(t0, _)| *t0 >= t) {
            return;
        }
        g.samples.push_back((t, totals));
        while g.samples.len() > 2
            && g.samples
                .get(1)
                .is_some_and(|(t1, _)| t - t1 >= 1_000_000_000)
        {
            g.samples.pop_front();
        }
        while g.samples.len() > 32 {
            g.samples.pop_front();
        }
        if let (Some((t0, a)), Some((t1, b))) = (g.samples.front(), g.samples.back())
            && t1 > t0
        {
            let dt = (t1 - t0) as f64 / 1e9;
            let rate = |x: u64, y: u64| y.saturating_sub(x) as f64 / dt;
            let rates: Vec<Rates> = a
                .iter()
                .zip(b)
                .map(|(a, b)| Rates {
                    tx_frames: rate(a.tx_frames, b.tx_frames),
                    tx_bytes: rate(a.tx_bytes, b.tx_bytes),
                    rx_frames: rate(a.rx_frames, b.rx_frames),
                    rx_bytes: rate(a.rx_bytes, b.rx_bytes),
                })
                .collect();
            for (s, r) in g.flows.iter_mut().zip(rates) {
                s.rates = r;
            }
        }
    }

    /// Waits (on the caller's thread) until launch `generation` ended or the stop timeout
    /// passed; a failure of the launch is the answer's.
    pub async fn wait_ended(&self, generation: u64) -> Result<(), ApiError> {
        let mut rx = self.ended();
        let ok = tokio::time::timeout(self.opts.stop_timeout, rx.wait_for(|g| *g >= generation))
            .await
            .is_ok_and(|r| r.is_ok());
        if !ok {
            return Err(ApiError::internal(format!(
                "the senders did not stop within {} s",
                self.opts.stop_timeout.as_secs()
            )));
        }
        match self.lock().failure.take() {
            Some(f) => Err(ApiError::internal(format!("the flows failed: {f}"))),
            None => Ok(()),
        }
    }

    /// set_control_state port.capture: starts or stops the captures of `names` (none: every
    /// port a capture of the config names). Blocking (opens sockets, joins threads).
    pub fn capture(&self, start: bool, names: &[String]) -> Result<(), ApiError> {
        let loaded = self
            .loaded()
            .ok_or_else(|| ApiError::bad("no config: set_config first"))?;
        let spec_of = |p: &str| {
            loaded
                .captures
                .iter()
                .find(|c| c.model.port_names.iter().any(|n| n == p))
        };
        let ports: Vec<String> = if names.is_empty() {
            loaded
                .captures
                .iter()
                .flat_map(|c| c.model.port_names.clone())
                .collect()
        } else {
            for n in names {
                if loaded.cfg.port(n).is_none() {
                    return Err(ApiError::bad(format!(
                        "capture.port_names: no port named {n:?}"
                    )));
                }
                if spec_of(n).is_none() {
                    return Err(ApiError::bad(format!(
                        "capture.port_names: port {n:?} is in no capture of the config (captures[].port_names)"
                    )));
                }
            }
            names.to_vec()
        };
        for p in &ports {
            let old = {
                let mut g = self.lock();
                match g.captures.iter().position(|(n, _)| n == p) {
                    Some(i) if start => g.captures.remove(i).1.tap,
                    Some(i) => g.captures[i].1.tap.take(),
                    None => None,
                }
            };
            if let Some(t) = old {
                t.stop();
            }
            if !start {
                continue;
            }
            let (Some(spec), Some(port)) = (spec_of(p), loaded.cfg.port(p)) else {
                continue;
            };
            let buf = Arc::new(Mutex::new(Buffer::new(
                self.opts.capture_bytes,
                spec.model.overwrite,
                spec.snaplen(),
            )));
            let tap = self
                .capturer
                .start(&port.location, Arc::clone(&buf))
                .map_err(|e| ApiError::internal(format!("port {p:?}: {e:#}")))?;
            self.lock().captures.push((
                p.clone(),
                PortCapture {
                    buf,
                    tap: Some(tap),
                },
            ));
        }
        Ok(())
    }

    /// Whether port `p` captures now (None: no capture of the config names it).
    pub(super) fn capturing(&self, g: &Inner, p: &str) -> Option<bool> {
        let loaded = g.loaded.as_ref()?;
        loaded
            .captures
            .iter()
            .any(|c| c.model.port_names.iter().any(|n| n == p))
            .then(|| g.captures.iter().any(|(n, c)| n == p && c.tap.is_some()))
    }

    /// get_capture: stops the port's capture and gives `count` frames from the `start`-th
    /// (0-based) as a pcap file. Blocking (joins the capture's thread).
    pub fn get_capture(&self, port: &str, start: usize, count: usize) -> Result<Vec<u8>, ApiError> {
        let (buf, tap) = {
            let mut g = self.lock();
            let Some(loaded) = g.loaded.clone() else {
                return Err(ApiError::bad("no config: set_config first"));
            };
            if loaded.cfg.port(port).is_none() {
                return Err(ApiError::bad(format!("port_name: no port named {port:?}")));
            }
            let Some((_, c)) = g.captures.iter_mut().find(|(n, _)| n == port) else {
                return Err(ApiError::bad(format!(
                    "port {port:?} has captured nothing: start a capture first (set_control_state port.capture start)"
                )));
            };
            (Arc::clone(&c.buf), c.tap.take())
        };
        if let Some(t) = tap {
            t.stop();
        }
        let b = buf.lock().unwrap_or_else(|e| e.into_inner());
        b.pcap(start, count)
            .map_err(|e| ApiError::internal(format!("writing the pcap: {e}")))
    }

    /// Stops the traffic and the captures, and waits for the supervisors (the server's end).
    pub fn shutdown(&self) {
        let taps: Vec<_> = {
            let mut g = self.lock();
            if let Some(s) = &g.stop {
                s.store(true, Ordering::SeqCst);
            }
            g.captures
                .iter_mut()
                .filter_map(|(_, c)| c.tap.take())
                .collect()
        };
        for t in taps {
            t.stop();
        }
        let hs = std::mem::take(&mut *self.supervisors.lock().unwrap_or_else(|e| e.into_inner()));
        for h in hs {
            let _ = h.join();
        }
    }
}

/// The final figures of a launch into the flow's state.
fn settle(s: &mut FlowState, f: &FlowFigures) {
    s.base = s.base.plus(Counts::of(&f.progress()));
    s.live = Counts::default();
    if let Some(l) = f.latency_ns {
        let n = f.rx_frames.max(1);
        s.latency = Some(match s.latency {
            None => Latency {
                min: l.min as f64,
                max: l.max as f64,
                mean: l.mean,
                frames: n,
            },
            Some(o) => Latency {
                min: o.min.min(l.min as f64),
                max: o.max.max(l.max as f64),
                mean: (o.mean * o.frames as f64 + l.mean * n as f64) / (o.frames + n) as f64,
                frames: o.frames + n,
            },
        });
    }
    if let Some(t) = f.first_rx_ns {
        s.first_rx_ns = Some(s.first_rx_ns.map_or(t, |o| o.min(t)));
    }
    if let Some(t) = f.last_rx_ns {
        s.last_rx_ns = Some(s.last_rx_ns.map_or(t, |o| o.max(t)));
    }
}

/// What is left of `cfg`'s flows after what `flows` counted: the remaining frames of a
/// fixed count, the remaining seconds (from the frames sent at the flow's rate), all of an
/// endless flow; a flow with nothing left is left out. Gives the config and, per flow of
/// it, its index in `cfg`.
pub fn remainder(cfg: &Config, flows: &[FlowState]) -> (Config, Vec<usize>) {
    let mut rest = Config {
        ports: cfg.ports.clone(),
        layer1: cfg.layer1.clone(),
        flows: Vec::new(),
    };
    let mut idx = Vec::new();
    for (i, (f, s)) in cfg.flows.iter().zip(flows).enumerate() {
        let sent = s.total().tx_frames;
        let mut f = f.clone();
        let zero = crate::otg::Span::Nanoseconds(0.0);
        match &mut f.duration {
            Duration::FixedPackets { packets, delay } => {
                let left = u64::from(*packets).saturating_sub(sent);
                if left == 0 {
                    continue;
                }
                *packets = u32::try_from(left).unwrap_or(u32::MAX);
                if sent > 0 {
                    *delay = zero;
                }
            }
            Duration::FixedSeconds { seconds, delay } => {
                let pps = f.rate.pps(f.size.mean(), None).unwrap_or(0.0);
                let done = if pps > 0.0 { sent as f64 / pps } else { 0.0 };
                if *seconds - done <= 1e-9 && sent > 0 {
                    continue;
                }
                *seconds -= done;
                if sent > 0 {
                    *delay = zero;
                }
            }
            Duration::Continuous { delay } => {
                if sent > 0 {
                    *delay = zero;
                }
            }
            Duration::Burst { .. } => {}
        }
        rest.flows.push(f);
        idx.push(i);
    }
    (rest, idx)
}
