//! Prometheus / OpenMetrics endpoint: `--metrics-listen ADDR:PORT` serves the run's counters
//! at `GET /metrics` in the OpenMetrics text format (exposition by the prometheus-client
//! crate, HTTP by [`crate::http`]: axum and hyper on a tokio runtime of its own thread, within
//! [`crate::http::Limits`]).
//!
//! # Feeding it (the hot path does nothing)
//!
//! [`Metrics`] holds the metric families. Everything it shows is set from *absolute*
//! snapshots (totals since the start), never from increments on a hot path: a counter keeps
//! its last value and is advanced by the difference, so it never goes backwards even when a
//! later snapshot is lower (the final report is taken after the last live reading, so it
//! normally only adds). Callers feed it in two ways:
//!
//! - live: [`Endpoint::add_probe`] registers a closure the server thread calls before each
//!   scrape. It reads what is already published for other threads (the receiver's
//!   [`crate::rx::recv::RxProgress`]: its totals' atomics, updated after each ring block,
//!   and its flows' counters, copied in by the receive loop at most every
//!   [`crate::rx::recv::FLOW_PUBLISH_INTERVAL`] without waiting for a reader;
//!   `/proc/net/dev` of a namespace through
//!   [`IfaceProbe`], `/proc/stat` through [`CpuProbe`]) and hands it to the `observe_*`
//!   methods. Nothing is read unless someone scrapes; the sending threads do no extra work
//!   for it, the receive loop only its flows' copy about every 250 ms, scraped or not
//!   (the totals' atomics are there anyway, for the live lines and the agent's `rx.stats`).
//! - final: once the report exists, [`Endpoint::finish_rx`] / [`Endpoint::finish_run`] set
//!   the counters from it, drop the probes (later scrapes serve exactly the report's
//!   figures) and set the state to `finished`. [`Endpoint::linger`] then keeps serving
//!   for `--metrics-linger` after the report was printed; the server thread ends when the
//!   [`Endpoint`] is dropped.
//!
//! # Call sequence (`rx` and `run` do this; `agent` does the same for each run)
//!
//! 1. `let ep = args.metrics.start()?` ([`MetricsArgs::start`]) before anything is sent or
//!    received: it binds, and a bad address is one error naming it.
//! 2. Once the receiver / senders are set up (where the live monitor starts):
//!    [`watch_rx`]`(&ep, dev, rx.progress())` or [`watch_run`]`(&ep, &tx, rx.as_ref(),
//!    receiver)` (the monitor's [`crate::live::Watched`] interfaces): state `running`. A new
//!    run counts on from the previous runs' totals ([`Metrics::begin_run`]).
//! 3. With the report, before printing it: [`Endpoint::finish_rx`] / [`Endpoint::finish_run`].
//! 4. Print the report, then [`Endpoint::linger`]`(&stop)`; drop `ep` when the process is
//!    done serving (the server thread ends; an agent keeps one endpoint for all its runs).
//!
//! # Families
//!
//! See [`FAMILIES`] (and docs/live.md): per sending thread (final), per interface (live),
//! the receiver's frames and bytes (live), per flow (live, about every 250 ms; at most [`MAX_FLOW_LABELS`]
//! flows are labelled, the others summed under `flow="other"`), CPU busy ratio (live), the
//! run state (one gauge per state, 1 for the current one) and build info.
//!
//! # Several sending ports
//!
//! A config whose flows leave from several ports (or from one port to several) runs one
//! run per leg (a sending port to one receiving port) side by
//! side, all on one endpoint: the whole run's endpoint begins them
//! ([`Endpoint::begin_parts`]), each run observes into its [`Endpoint::part`], whose
//! [`Scope`] puts `port` and `rx_port` first in each of its series and keeps its own
//! streams only, and [`Endpoint::finish_parts`] sets every run's report once all are in.

mod server;
mod streams;

pub use server::{
    CpuProbe, Endpoint, IfaceProbe, MetricsError, Probe, netns_name, rx_probe, watch_run, watch_rx,
};
pub use streams::{MAX_STREAM_LABELS, OTHER_STREAM, bounded_streams, bounded_streams_of};

use crate::report::run::RunReport;
use crate::rx::recv::RxProgress;
use crate::rx::report::RxReport;
use crate::rx::sink::{FlowReport, SeqCounters};
use crate::sample::IfaceCounters;
use clap::Args;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::{Registry, Unit};
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Flows labelled one by one; the rest are summed under `flow="other"`.
pub const MAX_FLOW_LABELS: usize = 64;

/// The label value of the flows beyond [`MAX_FLOW_LABELS`].
pub const OTHER_FLOW: &str = "other";

/// The exposition formats `GET /metrics` serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// OpenMetrics text 1.0.0: the default, and what Prometheus asks for first.
    OpenMetrics,
    /// Prometheus text 0.0.4, for a client whose Accept header lists `text/plain` and not
    /// OpenMetrics (older tools, e.g. `promtool check metrics` before OpenMetrics support).
    PrometheusText,
}

impl Format {
    /// The format an `Accept` header asks for (OpenMetrics unless only text/plain is listed).
    pub fn from_accept(accept: Option<&str>) -> Format {
        match accept {
            Some(a) if !a.contains("application/openmetrics-text") && a.contains("text/plain") => {
                Format::PrometheusText
            }
            _ => Format::OpenMetrics,
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Format::OpenMetrics => CONTENT_TYPE,
            Format::PrometheusText => prometheus_client::encoding::prometheus_text::CONTENT_TYPE,
        }
    }
}

/// The content type of `GET /metrics` (OpenMetrics).
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The families' names as exposed (a test holds the registry and docs/live.md to this list).
pub const FAMILIES: &[&str] = &[
    "upktgen_thread_sent_packets",
    "upktgen_thread_sent_bytes",
    "upktgen_thread_errors",
    "upktgen_thread_queue_stops",
    "upktgen_thread_queue_wakes",
    "upktgen_thread_pacing_late_p50_seconds",
    "upktgen_thread_pacing_late_p99_seconds",
    "upktgen_thread_pacing_late_max_seconds",
    "upktgen_iface_packets",
    "upktgen_iface_bytes",
    "upktgen_iface_dropped_packets",
    "upktgen_rx_frames",
    "upktgen_rx_bytes",
    "upktgen_rx_socket_dropped_frames",
    "upktgen_rx_lost_packets",
    "upktgen_rx_flow_received_packets",
    "upktgen_rx_flow_lost_packets",
    "upktgen_rx_flow_duplicate_packets",
    "upktgen_rx_flow_reordered_packets",
    "upktgen_stream_rx_frames",
    "upktgen_stream_rx_bytes",
    "upktgen_stream_lost_packets",
    "upktgen_stream_latency_seconds",
    "upktgen_cpu_busy_ratio",
    "upktgen_state",
    "upktgen_build",
];

/// `--metrics-listen` and `--metrics-linger`, shared by the commands that serve metrics.
#[derive(Args, Debug, Clone, Default)]
pub struct MetricsArgs {
    /// Serve live counters in the OpenMetrics text format at http://ADDR:PORT/metrics
    /// (a bare PORT means 127.0.0.1:PORT; IPv6 as `[::1]:PORT`). Default: nothing listens.
    /// Checked before anything is received or sent: an address in use or not on this host
    /// is an error.
    #[arg(long, value_name = "ADDR:PORT", value_parser = parse_listen)]
    pub metrics_listen: Option<SocketAddr>,

    /// Keep serving the final counters this long after the report is printed (e.g. 30s).
    /// Prometheus sees the last values only if this is longer than its scrape interval.
    /// Default: the endpoint closes once the report is printed.
    #[arg(long, value_parser = crate::units::parse_duration, value_name = "TIME", requires = "metrics_listen")]
    pub metrics_linger: Option<Duration>,
}

impl MetricsArgs {
    /// Binds the endpoint when `--metrics-listen` asks for one (None otherwise): call before
    /// anything is sent or received, so that a bad address stops the command first.
    pub fn start(&self) -> Result<Option<Endpoint>, MetricsError> {
        self.metrics_listen
            .map(|addr| Endpoint::start(addr, self.metrics_linger.unwrap_or_default()))
            .transpose()
    }
}

/// A `--metrics-listen` value that is no address to listen on (the value).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListenError {
    #[error("'{0}' is not ADDR:PORT (examples: 9100, 127.0.0.1:9100, [::1]:9100, 0.0.0.0:9100)")]
    NotAddress(String),
    #[error("'{0}': give a port from 1 to 65535")]
    PortZero(String),
}

/// `--metrics-listen`: `ADDR:PORT`, `[V6]:PORT`, or a bare `PORT` (127.0.0.1).
pub fn parse_listen(s: &str) -> Result<SocketAddr, ListenError> {
    let s = s.trim();
    if let Ok(port) = s.parse::<u16>() {
        return nonzero(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port), s);
    }
    match s.parse::<SocketAddr>() {
        Ok(a) => nonzero(a, s),
        Err(_) => Err(ListenError::NotAddress(s.to_string())),
    }
}

fn nonzero(a: SocketAddr, s: &str) -> Result<SocketAddr, ListenError> {
    if a.port() == 0 {
        Err(ListenError::PortZero(s.to_string()))
    } else {
        Ok(a)
    }
}

/// A label set: (name, value) pairs in a fixed order.
type Labels = Vec<(&'static str, String)>;

/// Whose series an observation sets: a run alone's carry no label of their own; each
/// leg's run of a config whose flows leave from several ports (or one to several) carries `port` (its
/// name in the config) and `rx_port` (the port it sends to) first, and shows only its own
/// streams (the flows it sends, by id), so one endpoint serves every port's run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Scope {
    labels: Labels,
    /// The stream ids of the flows it sends, ascending; None: every stream.
    ids: Option<Vec<u16>>,
}

impl Scope {
    /// The run of the sending port `port` to `rx_port`, sending the streams `ids`.
    pub fn port(port: &str, rx_port: &str, ids: &[u16]) -> Scope {
        let mut ids = ids.to_vec();
        ids.sort_unstable();
        Scope {
            labels: vec![("port", port.to_string()), ("rx_port", rx_port.to_string())],
            ids: Some(ids),
        }
    }

    /// Its labels, then `rest`.
    fn with(&self, rest: Labels) -> Labels {
        self.labels.iter().cloned().chain(rest).collect()
    }
}
type CounterFamily = Family<Labels, Counter>;
type GaugeF64 = Gauge<f64, AtomicU64>;

/// The run's states, one gauge each (`upktgen_state{state="..."}`, 1 for the current).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunState {
    /// Setting up (the endpoint is up, nothing sent or received yet).
    Starting,
    /// Sending or receiving.
    Running,
    /// The report is out; the figures are final.
    Finished,
}

impl RunState {
    const ALL: [RunState; 3] = [RunState::Starting, RunState::Running, RunState::Finished];

    pub fn name(self) -> &'static str {
        match self {
            RunState::Starting => "starting",
            RunState::Running => "running",
            RunState::Finished => "finished",
        }
    }
}

/// Direction of an interface's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Tx,
    Rx,
}

impl Direction {
    pub fn name(self) -> &'static str {
        match self {
            Direction::Tx => "tx",
            Direction::Rx => "rx",
        }
    }
}

/// A run's interfaces as its live probes label them: (iface, netns) of the sending one and,
/// when one is read here, of the receiving one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct WatchedIfaces {
    tx: (String, String),
    rx: Option<(String, String)>,
}

/// Each counter series' value when the current run first touched it: a run's totals count
/// from there, so that a process that runs several times (`agent`) keeps adding up.
type Bases = HashMap<(&'static str, Labels), u64>;

/// Advances the series `labels` of `f` (named `name`) to `abs` counted from the current
/// run's base; never backwards.
fn advance_in(bases: &mut Bases, name: &'static str, f: &CounterFamily, labels: &Labels, abs: u64) {
    let c = f.get_or_create(labels);
    let base = *bases
        .entry((name, labels.clone()))
        .or_insert_with(|| c.get());
    let target = base.saturating_add(abs);
    let now = c.get();
    if target > now {
        c.inc_by(target - now);
    }
}

fn thread_labels(thread: &str) -> Labels {
    vec![("thread", thread.to_string())]
}

fn flow_labels(flow: &str) -> Labels {
    vec![("flow", flow.to_string())]
}

/// A flow's label value: `10.0.0.1:9 -> 10.0.0.2:9` (ports 0 with the default flow key),
/// ` vlan N` when tagged.
pub fn flow_name(f: &FlowReport) -> String {
    let a = &f.flow;
    format!(
        "{}:{} -> {}:{}{}",
        a.src_ip,
        a.src_port,
        a.dst_ip,
        a.dst_port,
        a.vlan.map_or(String::new(), |v| format!(" vlan {v}"))
    )
}

fn add_seq(a: &mut SeqCounters, b: &SeqCounters) {
    a.received += b.received;
    a.lost += b.lost;
    a.duplicates += b.duplicates;
    a.reordered += b.reordered;
}

/// The flows' label values and counters: the first [`MAX_FLOW_LABELS`] flows (in the order
/// the receiver first saw them) by name, the others summed under [`OTHER_FLOW`].
pub fn bounded_flows(flows: &[FlowReport]) -> Vec<(String, SeqCounters)> {
    let mut out: Vec<(String, SeqCounters)> = flows
        .iter()
        .take(MAX_FLOW_LABELS)
        .map(|f| (flow_name(f), f.seq))
        .collect();
    if flows.len() > MAX_FLOW_LABELS {
        let mut rest = SeqCounters::default();
        for f in &flows[MAX_FLOW_LABELS..] {
            add_seq(&mut rest, &f.seq);
        }
        out.push((OTHER_FLOW.to_string(), rest));
    }
    out
}

/// The receiver's totals at one instant (from [`RxProgress`] or the final report).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RxTotals {
    pub frames: u64,
    pub bytes: u64,
    /// Sequence holes open, all flows.
    pub lost: u64,
    /// Frames the socket dropped.
    pub drops: u64,
}

impl RxTotals {
    /// Reads the running receiver's published totals.
    pub fn from_progress(p: &RxProgress) -> RxTotals {
        RxTotals {
            frames: p.frames.load(Ordering::Relaxed),
            bytes: p.bytes.load(Ordering::Relaxed),
            lost: p.lost.load(Ordering::Relaxed),
            drops: p.drops.load(Ordering::Relaxed),
        }
    }

    pub fn from_report(r: &RxReport) -> RxTotals {
        RxTotals {
            frames: r.frames.frames,
            bytes: r.frames.bytes,
            lost: r.sink.totals.lost,
            drops: r.ring.drops,
        }
    }
}

/// One sending thread's totals (from a run's report).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ThreadTotals {
    pub packets: u64,
    pub bytes: u64,
    pub errors: u64,
    pub queue_stops: u64,
    pub queue_wakes: u64,
    /// Pacing lateness p50 / p99 / max, ns (paced runs only).
    pub late_ns: Option<[u64; 3]>,
}

impl ThreadTotals {
    pub fn from_outcome(o: &crate::sender::SendOutcome) -> ThreadTotals {
        let r = &o.result;
        ThreadTotals {
            packets: r.sent,
            bytes: r
                .imix_bytes
                .unwrap_or_else(|| r.sent.saturating_mul(u64::from(r.pkt_size))),
            errors: r.errors,
            queue_stops: o.backend.queue.stops,
            queue_wakes: o.backend.queue.wakes,
            late_ns: o
                .pacing
                .as_ref()
                .map(|p| [p.late_p50_ns, p.late_p99_ns, p.late_max_ns]),
        }
    }
}

/// The metric families and their registry. Observations are serialised by one lock, so
/// that each counter's difference is taken once.
pub struct Metrics {
    registry: Registry,
    update: Mutex<Bases>,
    thread_packets: CounterFamily,
    thread_bytes: CounterFamily,
    thread_errors: CounterFamily,
    queue_stops: CounterFamily,
    queue_wakes: CounterFamily,
    late: [Family<Labels, GaugeF64>; 3],
    iface_packets: CounterFamily,
    iface_bytes: CounterFamily,
    iface_drops: CounterFamily,
    // Families with one empty label set: shown only once observed (no receiver, no rx_*).
    rx_frames: CounterFamily,
    rx_bytes: CounterFamily,
    rx_drops: CounterFamily,
    rx_lost: Family<Labels, Gauge>,
    flow_received: CounterFamily,
    flow_lost: Family<Labels, Gauge>,
    flow_duplicates: CounterFamily,
    flow_reordered: CounterFamily,
    streams: streams::StreamFamilies,
    /// Each scope's interfaces as its live probes label them (iface, netns): the report's
    /// figures at the end go into the same series.
    watched: Mutex<HashMap<Scope, WatchedIfaces>>,
    cpu_busy: Family<Labels, GaugeF64>,
    state: Family<Labels, Gauge>,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        let mut reg = Registry::default();
        let m = Metrics {
            registry: Registry::default(),
            update: Mutex::new(Bases::new()),
            thread_packets: CounterFamily::default(),
            thread_bytes: CounterFamily::default(),
            thread_errors: CounterFamily::default(),
            queue_stops: CounterFamily::default(),
            queue_wakes: CounterFamily::default(),
            late: Default::default(),
            iface_packets: CounterFamily::default(),
            iface_bytes: CounterFamily::default(),
            iface_drops: CounterFamily::default(),
            rx_frames: CounterFamily::default(),
            rx_bytes: CounterFamily::default(),
            rx_drops: CounterFamily::default(),
            rx_lost: Family::default(),
            flow_received: CounterFamily::default(),
            flow_lost: Family::default(),
            flow_duplicates: CounterFamily::default(),
            flow_reordered: CounterFamily::default(),
            streams: streams::StreamFamilies::default(),
            watched: Mutex::new(HashMap::new()),
            cpu_busy: Family::default(),
            state: Family::default(),
        };
        let at_end = "; set from the run's report when it ends";
        reg.register(
            "upktgen_thread_sent_packets",
            format!("Packets the kernel accepted from each sending thread (pktgen's Result sent){at_end}"),
            m.thread_packets.clone(),
        );
        reg.register_with_unit(
            "upktgen_thread_sent",
            format!("Bytes each sending thread sent, without FCS, in pktgen's Result arithmetic (packets x pkt_size, IMIX: every frame's bytes; a size walk counts the last size){at_end}"),
            Unit::Bytes,
            m.thread_bytes.clone(),
        );
        reg.register(
            "upktgen_thread_errors",
            format!("Packets the kernel refused, per sending thread{at_end}"),
            m.thread_errors.clone(),
        );
        reg.register(
            "upktgen_thread_queue_stops",
            format!("Times each sending thread's transmit queue was stopped (full){at_end}"),
            m.queue_stops.clone(),
        );
        reg.register(
            "upktgen_thread_queue_wakes",
            format!("Times a stopped transmit queue was woken by a completion{at_end}"),
            m.queue_wakes.clone(),
        );
        for (i, q) in ["p50", "p99", "max"].iter().enumerate() {
            reg.register_with_unit(
                format!("upktgen_thread_pacing_late_{q}"),
                format!("How late each paced handover was against its due time, {q}, per sending thread (paced runs only){at_end}"),
                Unit::Seconds,
                m.late[i].clone(),
            );
        }
        let iface = "labels iface, netns (the namespace's name under /run/netns, empty for one without; a far end's interface its own, empty for ssh://), direction (tx or rx); read from /proc/net/dev (a far end's by its agent, at the end)";
        reg.register(
            "upktgen_iface_packets",
            format!("Packets an interface counted in one direction since the run started; {iface}"),
            m.iface_packets.clone(),
        );
        reg.register_with_unit(
            "upktgen_iface",
            format!("Bytes an interface counted in one direction since the run started; {iface}"),
            Unit::Bytes,
            m.iface_bytes.clone(),
        );
        reg.register(
            "upktgen_iface_dropped_packets",
            format!("Packets an interface dropped in one direction since the run started; {iface}"),
            m.iface_drops.clone(),
        );
        reg.register(
            "upktgen_rx_frames",
            "Frames the receiver read",
            m.rx_frames.clone(),
        );
        reg.register_with_unit(
            "upktgen_rx",
            "Bytes of the frames the receiver read (without FCS)",
            Unit::Bytes,
            m.rx_bytes.clone(),
        );
        reg.register(
            "upktgen_rx_socket_dropped_frames",
            "Frames the receiver's socket dropped (PACKET_STATISTICS, or XDP_STATISTICS rx_dropped + rx_ring_full + rx_invalid_descs)",
            m.rx_drops.clone(),
        );
        reg.register(
            "upktgen_rx_lost_packets",
            "Sequence holes still open, summed over flows (a late arrival closes its hole, so this can go down)",
            m.rx_lost.clone(),
        );
        let flows = format!(
            "label flow (source -> destination, ports 0 unless --flow-key addr-ports); the first {MAX_FLOW_LABELS} flows seen are labelled, the others summed under flow=\"{OTHER_FLOW}\"; updated from the receiver about every {} ms while it runs, the report's figures once it ends",
            crate::rx::recv::FLOW_PUBLISH_INTERVAL.as_millis()
        );
        reg.register(
            "upktgen_rx_flow_received_packets",
            format!("Distinct sequence numbers received per flow; {flows}"),
            m.flow_received.clone(),
        );
        reg.register(
            "upktgen_rx_flow_lost_packets",
            format!("Sequence holes still open per flow; {flows}"),
            m.flow_lost.clone(),
        );
        reg.register(
            "upktgen_rx_flow_duplicate_packets",
            format!("Duplicated sequence numbers per flow; {flows}"),
            m.flow_duplicates.clone(),
        );
        reg.register(
            "upktgen_rx_flow_reordered_packets",
            format!("Packets that arrived after a higher sequence number, per flow; {flows}"),
            m.flow_reordered.clone(),
        );
        m.streams.register(&mut reg);
        reg.register(
            "upktgen_cpu_busy_ratio",
            "Share of all CPUs' time not idle (nor iowait) since the run started, 0 to 1, from /proc/stat",
            m.cpu_busy.clone(),
        );
        reg.register(
            "upktgen_state",
            "The run's state: 1 for the current one of starting, running, finished (finished: the report is out and the figures are final)",
            m.state.clone(),
        );
        reg.register(
            "upktgen_build",
            "upktgen's version",
            Info::new(vec![("version", env!("CARGO_PKG_VERSION").to_string())]),
        );
        let m = Metrics { registry: reg, ..m };
        m.set_state(RunState::Starting);
        m
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Bases> {
        self.update.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new run begins: its totals count on from what the previous runs left (an `agent`
    /// runs several times in one process). [`watch_rx`] and [`watch_run`] call it.
    pub fn begin_run(&self) {
        self.lock().clear();
    }

    /// Sets the run state (one gauge per state, 1 for `s`).
    pub fn set_state(&self, s: RunState) {
        let _g = self.lock();
        for x in RunState::ALL {
            self.state
                .get_or_create(&vec![("state", x.name().to_string())])
                .set(i64::from(x == s));
        }
    }

    /// The receiver's totals (absolute, since it started).
    pub fn observe_rx(&self, t: &RxTotals) {
        self.observe_rx_in(&Scope::default(), t);
    }

    /// [`Metrics::observe_rx`] for `scope`'s series.
    pub fn observe_rx_in(&self, scope: &Scope, t: &RxTotals) {
        let mut g = self.lock();
        let none = scope.with(Labels::new());
        advance_in(&mut g, "rx_frames", &self.rx_frames, &none, t.frames);
        advance_in(&mut g, "rx_bytes", &self.rx_bytes, &none, t.bytes);
        advance_in(&mut g, "rx_drops", &self.rx_drops, &none, t.drops);
        self.rx_lost
            .get_or_create(&none)
            .set(i64::try_from(t.lost).unwrap_or(i64::MAX));
    }

    /// One interface's counters in one direction since the run started (absolute).
    pub fn observe_iface(&self, iface: &str, netns: &str, dir: Direction, c: &IfaceCounters) {
        self.observe_iface_in(&Scope::default(), iface, netns, dir, c);
    }

    /// [`Metrics::observe_iface`] for `scope`'s series.
    pub fn observe_iface_in(
        &self,
        scope: &Scope,
        iface: &str,
        netns: &str,
        dir: Direction,
        c: &IfaceCounters,
    ) {
        let (packets, bytes, drops) = match dir {
            Direction::Tx => (c.tx_packets, c.tx_bytes, c.tx_drop),
            Direction::Rx => (c.rx_packets, c.rx_bytes, c.rx_drop),
        };
        let l: Labels = scope.with(vec![
            ("iface", iface.to_string()),
            ("netns", netns.to_string()),
            ("direction", dir.name().to_string()),
        ]);
        let mut g = self.lock();
        advance_in(&mut g, "iface_packets", &self.iface_packets, &l, packets);
        advance_in(&mut g, "iface_bytes", &self.iface_bytes, &l, bytes);
        advance_in(&mut g, "iface_drops", &self.iface_drops, &l, drops);
    }

    /// `scope`'s run reads its sending interface `tx` and maybe a receiving one `rx` live,
    /// labelled (iface, netns): its report's interface figures go into those series.
    pub fn watching(&self, scope: &Scope, tx: (String, String), rx: Option<(String, String)>) {
        self.watched
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(scope.clone(), WatchedIfaces { tx, rx });
    }

    /// The CPUs' busy share, 0 to 1.
    pub fn observe_cpu_busy(&self, ratio: f64) {
        let _g = self.lock();
        self.cpu_busy
            .get_or_create(&Labels::new())
            .set(ratio.clamp(0.0, 1.0));
    }

    /// One sending thread's totals (absolute). `thread`: pktgen's device name (`veth-tx@0`,
    /// or the device itself for a one-thread run).
    pub fn observe_thread(&self, thread: &str, t: &ThreadTotals) {
        self.observe_thread_in(&Scope::default(), thread, t);
    }

    /// [`Metrics::observe_thread`] for `scope`'s series.
    pub fn observe_thread_in(&self, scope: &Scope, thread: &str, t: &ThreadTotals) {
        let l = scope.with(thread_labels(thread));
        let mut g = self.lock();
        advance_in(
            &mut g,
            "thread_packets",
            &self.thread_packets,
            &l,
            t.packets,
        );
        advance_in(&mut g, "thread_bytes", &self.thread_bytes, &l, t.bytes);
        advance_in(&mut g, "thread_errors", &self.thread_errors, &l, t.errors);
        advance_in(&mut g, "queue_stops", &self.queue_stops, &l, t.queue_stops);
        advance_in(&mut g, "queue_wakes", &self.queue_wakes, &l, t.queue_wakes);
        if let Some(late) = t.late_ns {
            for (g, ns) in self.late.iter().zip(late) {
                g.get_or_create(&l).set(ns as f64 / 1e9);
            }
        }
    }

    /// Per-flow sequence counters (absolute), bounded by [`bounded_flows`].
    pub fn observe_flows(&self, flows: &[FlowReport]) {
        self.observe_flows_in(&Scope::default(), flows);
    }

    /// [`Metrics::observe_flows`] for `scope`'s series.
    pub fn observe_flows_in(&self, scope: &Scope, flows: &[FlowReport]) {
        let flows = bounded_flows(flows);
        let mut g = self.lock();
        for (name, c) in flows {
            let l = scope.with(flow_labels(&name));
            advance_in(&mut g, "flow_received", &self.flow_received, &l, c.received);
            advance_in(
                &mut g,
                "flow_duplicates",
                &self.flow_duplicates,
                &l,
                c.duplicates,
            );
            advance_in(
                &mut g,
                "flow_reordered",
                &self.flow_reordered,
                &l,
                c.reordered,
            );
            self.flow_lost
                .get_or_create(&l)
                .set(i64::try_from(c.lost).unwrap_or(i64::MAX));
        }
    }

    /// A config's streams as the receiver's live table holds them (absolute), bounded by
    /// [`bounded_streams`].
    pub fn observe_streams(&self, t: &crate::rx::streams::LiveTable) {
        self.observe_streams_in(&Scope::default(), t);
    }

    /// [`Metrics::observe_streams`] for `scope`'s series (its streams only).
    pub fn observe_streams_in(&self, scope: &Scope, t: &crate::rx::streams::LiveTable) {
        let rows = t.rows();
        let mut g = self.lock();
        self.streams.observe(&mut g, scope, t.names(), &rows);
    }

    /// Everything a receiver's final report says.
    pub fn observe_rx_report(&self, r: &RxReport) {
        self.observe_rx_report_in(&Scope::default(), r);
    }

    /// [`Metrics::observe_rx_report`] for `scope`'s series.
    pub fn observe_rx_report_in(&self, scope: &Scope, r: &RxReport) {
        self.observe_rx_in(scope, &RxTotals::from_report(r));
        self.observe_flows_in(scope, &r.sink.flows);
    }

    /// Everything a run's final report says: each thread (the device for a one-thread run),
    /// the interfaces' deltas, the lab receiver's report when there was one.
    pub fn observe_run_report(&self, r: &RunReport) {
        self.observe_run_report_in(&Scope::default(), r);
    }

    /// [`Metrics::observe_run_report`] for `scope`'s series (the CPUs' share is the
    /// host's, in no scope).
    pub fn observe_run_report_in(&self, scope: &Scope, r: &RunReport) {
        if r.threads.is_empty() {
            self.observe_thread_in(
                scope,
                &r.target.device,
                &ThreadTotals::from_outcome(&r.outcome),
            );
        }
        for t in &r.threads {
            self.observe_thread_in(scope, &t.device, &ThreadTotals::from_outcome(&t.outcome));
        }
        // The labels the live probes gave (a port in a namespace is read there), else the
        // same netns label as they would give (the process's own when None).
        let ns = |n: &Option<String>| n.clone().unwrap_or_else(|| netns_name(None));
        let watched = self
            .watched
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(scope)
            .cloned();
        let (tx_if, tx_ns) = match &watched {
            Some(w) => w.tx.clone(),
            None => (r.target.device.clone(), ns(&r.target.netns)),
        };
        self.observe_iface_in(scope, &tx_if, &tx_ns, Direction::Tx, &r.tx_iface);
        if let Some(rx) = &r.rx_iface {
            // A far end's interface is its own (its name, its namespace), not the lab's.
            let (rx_if, rx_ns) = match (watched.as_ref().and_then(|w| w.rx.clone()), &r.peer) {
                (Some(l), _) => l,
                (None, Some(p)) => far_iface_label(&p.peer, &p.dev),
                (None, None) => (crate::lab::RX_IF.to_string(), ns(&r.target.rx_netns)),
            };
            self.observe_iface_in(scope, &rx_if, &rx_ns, Direction::Rx, rx);
        }
        if let Some(a) = &r.rx_analysis {
            self.observe_rx_report_in(scope, &a.receiver);
        }
        let busy = 1.0 - (r.system.cpu_all.id + r.system.cpu_all.wa) / 100.0;
        self.observe_cpu_busy(busy);
    }

    /// The exposition in `format`: OpenMetrics text (ending with `# EOF`) or Prometheus
    /// text 0.0.4.
    pub fn encode(&self, format: Format) -> String {
        let _g = self.lock();
        let mut s = String::new();
        // Writing into a String cannot fail.
        let _ = match format {
            Format::OpenMetrics => encode(&mut s, &self.registry),
            Format::PrometheusText => {
                prometheus_client::encoding::prometheus_text::encode(&mut s, &self.registry)
            }
        };
        s
    }
}

/// The (iface, netns) labels of the interface `dev` of the far end `peer` (its URI): its
/// name, and the namespace it is in as this host names it (`netns:NAME`'s NAME; `local`'s
/// is this process's own); an `ssh://` far end's namespace is the far host's own, which
/// has no name here (empty).
pub fn far_iface_label(peer: &str, dev: &str) -> (String, String) {
    use crate::agent::transport::PeerUri;
    let netns = match peer.parse::<PeerUri>() {
        Ok(PeerUri::Netns(n)) => n,
        Ok(PeerUri::Local) => netns_name(None),
        Ok(PeerUri::Ssh { .. }) | Err(_) => String::new(),
    };
    (dev.to_string(), netns)
}

#[cfg(test)]
mod tests;
