//! The HTTP endpoint (`GET /metrics`) and the probes it runs before each scrape.

use super::{Direction, Format, Metrics, RunState, RxTotals, Scope};
use crate::http;
use crate::live::LiveError;
use crate::live::{DevReader, Watched};
use crate::report::run::RunReport;
use crate::rx::recv::RxProgress;
use crate::rx::report::RxReport;
use crate::sample::SampleError;
use crate::sample::{IfaceCounters, StatSnapshot};
use std::io;
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A closure the server thread runs before each scrape, to bring the metrics up to date.
pub type Probe = Box<dyn FnMut(&Metrics) + Send>;

struct Shared {
    metrics: Metrics,
    probes: Mutex<Vec<Probe>>,
}

impl Shared {
    /// Runs the probes, then encodes.
    fn scrape(&self, format: Format) -> String {
        {
            let mut probes = self.probes.lock().unwrap_or_else(|e| e.into_inner());
            for p in probes.iter_mut() {
                p(&self.metrics);
            }
        }
        self.metrics.encode(format)
    }
}

/// The listening endpoint; its server thread ends when this is dropped. Or a part of one
/// ([`Endpoint::part`]): a sending port's run of several, whose series carry its
/// [`Scope`]'s labels, served by the whole run's endpoint.
pub struct Endpoint {
    shared: Arc<Shared>,
    /// None for a part.
    server: Option<http::Server>,
    addr: SocketAddr,
    linger: Duration,
    scope: Scope,
}

/// What a failed bind means, for the one error line.
fn bind_hint(e: &io::Error) -> &'static str {
    match e.kind() {
        io::ErrorKind::AddrInUse => " (another process listens there; pick another port)",
        io::ErrorKind::AddrNotAvailable => {
            " (not an address of this host, or of this network namespace)"
        }
        io::ErrorKind::PermissionDenied => " (ports below 1024 need CAP_NET_BIND_SERVICE)",
        _ => "",
    }
}

/// Why the endpoint cannot listen or a probe cannot be made: the message names the address
/// or what was read.
#[derive(Debug, thiserror::Error)]
pub enum MetricsError {
    #[error("--metrics-listen {addr}: cannot listen: {err}{hint}", hint = bind_hint(.err))]
    Listen { addr: SocketAddr, err: io::Error },
    #[error("--metrics-listen {addr}: cannot serve: {err}")]
    Serve {
        addr: SocketAddr,
        err: http::ServeError,
    },
    #[error(transparent)]
    Live(#[from] LiveError),
    #[error(transparent)]
    Sample(#[from] SampleError),
}

type Result<T, E = MetricsError> = std::result::Result<T, E>;

/// The metrics' router: GET (and HEAD) /metrics (a query string is ignored; OpenMetrics
/// unless the Accept header lists only text/plain), 405 with `Allow` for other methods there,
/// 404 elsewhere. The probes and the encoding run on the server's blocking thread, never on
/// a caller's.
fn router(shared: Arc<Shared>) -> axum::Router {
    use axum::http::{HeaderMap, StatusCode, header};
    use axum::response::IntoResponse;
    let scrape = move |headers: HeaderMap| async move {
        let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok());
        let format = Format::from_accept(accept);
        match tokio::task::spawn_blocking(move || shared.scrape(format)).await {
            Ok(body) => ([(header::CONTENT_TYPE, format.content_type())], body).into_response(),
            Err(_) => http::text(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the scrape failed; see upktgen's stderr\n",
            ),
        }
    };
    let not_allowed = || async {
        let mut r = http::text(
            StatusCode::METHOD_NOT_ALLOWED,
            "method not allowed: GET /metrics\n",
        );
        r.headers_mut().insert(
            header::ALLOW,
            axum::http::HeaderValue::from_static("GET, HEAD"),
        );
        r
    };
    axum::Router::new()
        .route("/metrics", axum::routing::get(scrape).fallback(not_allowed))
        .fallback(|| async {
            http::text(
                StatusCode::NOT_FOUND,
                "not found: the metrics are at /metrics\n",
            )
        })
}

impl Endpoint {
    /// Listens on `addr` and starts serving (state `starting`), within the bounds of
    /// [`http::Limits::default`]. An address in use or not on this host is an error naming
    /// it; nothing has been sent by then.
    pub fn start(addr: SocketAddr, linger: Duration) -> Result<Endpoint> {
        let listener = TcpListener::bind(addr).map_err(|err| MetricsError::Listen { addr, err })?;
        let addr = listener.local_addr().unwrap_or(addr);
        let shared = Arc::new(Shared {
            metrics: Metrics::new(),
            probes: Mutex::new(Vec::new()),
        });
        let server = http::Server::start(
            listener,
            router(Arc::clone(&shared)),
            http::Limits::default(),
            "upktgen-metrics",
        )
        .map_err(|err| MetricsError::Serve { addr, err })?;
        Ok(Endpoint {
            shared,
            server: Some(server),
            addr,
            linger,
            scope: Scope::default(),
        })
    }

    /// A part of this endpoint for one run of several side by side: what that run observes
    /// ([`watch_run`]) goes into this endpoint's families under `scope`; its `running` does
    /// not begin a run (the whole run's endpoint does, [`Endpoint::begin_parts`]).
    pub fn part(&self, scope: Scope) -> Endpoint {
        Endpoint {
            shared: Arc::clone(&self.shared),
            server: None,
            addr: self.addr,
            linger: Duration::ZERO,
            scope,
        }
    }

    /// The labels its run's series carry.
    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    /// Runs of several ports are about to start (before any [`Endpoint::part`] of this one
    /// watches its run): their totals count from here on.
    pub fn begin_parts(&self) {
        self.metrics().begin_run();
    }

    /// The address listened on (the port the kernel chose for port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The metric families, to observe into.
    pub fn metrics(&self) -> &Metrics {
        &self.shared.metrics
    }

    /// Adds a probe run before each scrape.
    pub fn add_probe(&self, p: Probe) {
        self.shared
            .probes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(p);
    }

    /// A run begins (its totals count on from the previous runs'): state `running`. A part
    /// does nothing: its whole run's endpoint says when they run.
    pub fn running(&self) {
        if self.server.is_none() {
            return;
        }
        self.metrics().begin_run();
        self.metrics().set_state(RunState::Running);
    }

    /// Runs the probes one last time, then drops them: from here on scrapes serve what the
    /// caller observes next (the report) and nothing else.
    fn last_probe(&self) {
        let mut probes = self.shared.probes.lock().unwrap_or_else(|e| e.into_inner());
        for p in probes.iter_mut() {
            p(&self.shared.metrics);
        }
        probes.clear();
    }

    /// The receiver's report is in: the final counters, state `finished`.
    pub fn finish_rx(&self, r: &RxReport) {
        self.last_probe();
        self.metrics().observe_rx_report(r);
        self.metrics().set_state(RunState::Finished);
    }

    /// The run's report is in: the final counters, state `finished`.
    pub fn finish_run(&self, r: &RunReport) {
        self.last_probe();
        self.metrics().observe_run_report(r);
        self.metrics().set_state(RunState::Finished);
    }

    /// Every part's run is set up and sending: state `running`.
    pub fn parts_running(&self) {
        self.metrics().set_state(RunState::Running);
    }

    /// The reports of the runs side by side are in, each with its part's scope: the final
    /// counters of each, state `finished`.
    pub fn finish_parts(&self, runs: &[(&Scope, &RunReport)]) {
        self.last_probe();
        for (scope, r) in runs {
            self.metrics().observe_run_report_in(scope, r);
        }
        self.metrics().set_state(RunState::Finished);
    }

    /// Keeps serving the final values for `--metrics-linger` (call after the report is
    /// printed); returns at once without it. `stop` is the command's stop flag: it is
    /// cleared first (a Ctrl-C may have ended the run), and a signal during the linger
    /// ends it early.
    pub fn linger(&self, stop: &AtomicBool) {
        if self.linger.is_zero() {
            return;
        }
        stop.store(false, Ordering::Relaxed);
        let end = std::time::Instant::now() + self.linger;
        while !stop.load(Ordering::Relaxed) {
            let left = end.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                break;
            }
            std::thread::sleep(left.min(Duration::from_millis(50)));
        }
    }
}

impl Drop for Endpoint {
    /// Stops the server on time, whatever its clients do (see [`http::Server::stop`]).
    fn drop(&mut self) {
        if let Some(s) = &mut self.server {
            s.stop();
        }
    }
}

/// The probe of a running receiver: its published totals and flows (the flows as the
/// receive loop last published them, at most [`crate::rx::recv::FLOW_PUBLISH_INTERVAL`] old).
pub fn rx_probe(progress: Arc<RxProgress>) -> Probe {
    rx_probe_in(Scope::default(), progress)
}

/// [`rx_probe`] for `scope`'s series.
pub fn rx_probe_in(scope: Scope, progress: Arc<RxProgress>) -> Probe {
    Box::new(move |m: &Metrics| {
        m.observe_rx_in(&scope, &RxTotals::from_progress(&progress));
        m.observe_flows_in(&scope, &progress.flows.snapshot());
        if let Some(t) = progress.streams.get() {
            m.observe_streams_in(&scope, t);
        }
    })
}

/// The name of the network namespace at `path` under /run/netns, or of the process's own
/// when it is one of those (`ip netns exec`); empty when it has no name.
pub fn netns_name(path: Option<&std::path::Path>) -> String {
    use std::os::unix::fs::MetadataExt;
    if let Some(p) = path {
        return p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
    }
    let Ok(own) = std::fs::metadata("/proc/self/ns/net") else {
        return String::new();
    };
    let Ok(dir) = std::fs::read_dir("/run/netns") else {
        return String::new();
    };
    dir.flatten()
        .find(|e| {
            std::fs::metadata(e.path()).is_ok_and(|m| m.ino() == own.ino() && m.dev() == own.dev())
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// An interface's counters in one direction, since the probe was made.
pub struct IfaceProbe {
    reader: DevReader,
    iface: String,
    netns: String,
    dir: Direction,
    base: IfaceCounters,
    scope: Scope,
}

impl IfaceProbe {
    /// Reads the interface's counters now (the base the metrics count from).
    pub fn new(w: &Watched, dir: Direction) -> Result<IfaceProbe> {
        let mut reader = DevReader::open(w)?;
        let base = reader.read()?;
        Ok(IfaceProbe {
            reader,
            iface: w.iface.clone(),
            netns: netns_name(w.netns.as_deref()),
            dir,
            base,
            scope: Scope::default(),
        })
    }

    /// Its series in `scope`.
    pub fn scoped(self, scope: Scope) -> IfaceProbe {
        IfaceProbe { scope, ..self }
    }

    pub fn into_probe(mut self) -> Probe {
        Box::new(move |m: &Metrics| {
            if let Ok(now) = self.reader.read() {
                let delta = self.base.delta(&now);
                m.observe_iface_in(&self.scope, &self.iface, &self.netns, self.dir, &delta);
            }
        })
    }
}

/// The CPUs' busy share since the probe was made.
pub struct CpuProbe {
    base: StatSnapshot,
}

impl CpuProbe {
    pub fn new() -> Result<CpuProbe> {
        Ok(CpuProbe {
            base: StatSnapshot::read()?,
        })
    }

    pub fn into_probe(self) -> Probe {
        Box::new(move |m: &Metrics| {
            if let Ok(now) = StatSnapshot::read() {
                m.observe_cpu_busy(crate::live::cpu_busy(&self.base, &now) / 100.0);
            }
        })
    }
}

/// `upktgen rx`'s live feed: the receiver's totals, its interface's rx counters (in the
/// process's namespace) and the CPUs' busy share, read at each scrape; state `running`.
pub fn watch_rx(e: &Endpoint, dev: &str, progress: Arc<RxProgress>) -> Result<()> {
    let w = Watched {
        iface: dev.to_string(),
        netns: None,
    };
    e.running();
    e.add_probe(rx_probe(progress));
    e.add_probe(IfaceProbe::new(&w, Direction::Rx)?.into_probe());
    e.add_probe(CpuProbe::new()?.into_probe());
    Ok(())
}

/// `upktgen run`'s live feed: the sending interface's tx counters and, in the lab, the
/// receiving interface's rx counters (each read in its own namespace), the lab receiver's
/// totals with --rx-analyze, and the CPUs' busy share; state `running`. Call where the run
/// starts its live monitor, with the same [`Watched`] interfaces.
pub fn watch_run(
    e: &Endpoint,
    tx: &Watched,
    rx: Option<&Watched>,
    receiver: Option<Arc<RxProgress>>,
) -> Result<()> {
    e.running();
    let scope = e.scope();
    let label = |w: &Watched| (w.iface.clone(), netns_name(w.netns.as_deref()));
    e.metrics().watching(scope, label(tx), rx.map(label));
    e.add_probe(
        IfaceProbe::new(tx, Direction::Tx)?
            .scoped(scope.clone())
            .into_probe(),
    );
    if let Some(w) = rx {
        e.add_probe(
            IfaceProbe::new(w, Direction::Rx)?
                .scoped(scope.clone())
                .into_probe(),
        );
    }
    if let Some(p) = receiver {
        e.add_probe(rx_probe_in(scope.clone(), p));
    }
    e.add_probe(CpuProbe::new()?.into_probe());
    Ok(())
}
