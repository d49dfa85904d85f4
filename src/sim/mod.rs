//! `upktgen sim`: a discrete-event model of the machine the seed measured.
//!
//! The seed ran the kernel's pktgen on a 2007 PC with a 100 Mbit/s sis900-like NIC, at three
//! CPU clocks, with the driver waking its stopped TX queue at 1 and then at 16 free
//! descriptors. This module models that whole system: the wire (line rate with Ethernet
//! framing), the NIC (descriptor ring, DMA into a TX FIFO, per-descriptor or coalesced
//! completion interrupts), the driver (xmit, stop / start thresholds through
//! [`crate::txq::TxQueue`], completion in the interrupt handler or a NAPI poll, the TX softirq),
//! one CPU (hard interrupts over softirqs over processes, every cost in cycles or in bus
//! nanoseconds) and pktgen itself (its loop, its idle accounting, the final drain). A run
//! reports through [`crate::sender::PktgenResult`] and [`crate::sample::CpuShares`], so it prints
//! exactly like a real one.
//!
//! - [`Model`]: every constant, with [`Model::seed`] the fitted seed machine.
//! - [`simulate`]: runs a model, returns an [`Outcome`].
//! - [`seed`]: the seed's six iterations and the comparison table.
//! - [`SimArgs`] / [`run_cli`]: the command line (`--preset seed`, any parameter, `--sweep`).
//!
//! See docs/sim.md for the model, the source or fit of every constant, and how well it
//! reproduces the seed.

pub(crate) mod engine;
pub(crate) mod model;
pub mod seed;

pub use engine::{Outcome, simulate, wake_latency_min_s};
pub use model::{Completion, Model, ModelError, SEED_CLOCKS_MHZ};

use serde::Serialize;
use std::fmt::Write as _;

/// A preset of the whole experiment.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    /// The seed's six iterations (three clocks x wake at 1 and 16 free), each beside the seed's
    /// measured figures.
    Seed,
}

/// `upktgen sim`: simulate the seed's machine (or any other) and print pktgen's Result line,
/// top's Cpu(s) line and the interrupt count, as a real run would.
///
/// Without --preset, one run of the seed machine at its normal clock (1397.657 MHz, waking the
/// queue at 1 free descriptor), changed by any flag given. Every flag's default is the seed
/// machine's; "fitted" means fitted on the seed's three runs without hysteresis (docs/sim.md).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct SimArgs {
    /// Run a preset experiment. `seed`: the seed's six iterations, each beside the seed's
    /// figures, then a table of differences. Other flags change the base machine of all six
    /// (except --clock-mhz and --start-thresh, which the iterations set).
    #[arg(long, value_enum)]
    pub preset: Option<Preset>,

    /// Sweep a parameter: NAME=V1,V2,... with NAME a flag of this command without the dashes
    /// (e.g. start-thresh=1,4,16 ring=16,64,256). Repeat for a grid; prints one row per
    /// combination with a bar of pps against line rate.
    #[arg(long, value_name = "NAME=V1,V2,...")]
    pub sweep: Vec<String>,

    /// Print JSON (the model and the outcome of every run) instead of text.
    #[arg(long)]
    pub json: bool,

    // --- workload ---
    /// Packets to send (pktgen's count). Default 4000000 (the seed). 0 ("forever" in pktgen)
    /// is refused: a simulation needs an end.
    #[arg(long, help_heading = "Workload")]
    pub count: Option<u64>,
    /// Frame size in bytes without FCS (pktgen's pkt_size). Default 60 (the seed); frames
    /// shorter than 60 are padded on the wire.
    #[arg(long, help_heading = "Workload")]
    pub pkt_size: Option<u32>,

    // --- link ---
    /// Link rate in Mbit/s. Default 100 (the seed's card).
    #[arg(long, allow_negative_numbers = true, help_heading = "Link")]
    pub link_mbps: Option<f64>,
    /// FCS bytes per frame on the wire. Default 4 (IEEE 802.3).
    #[arg(long, help_heading = "Link")]
    pub fcs: Option<u32>,
    /// Preamble + start-of-frame delimiter bytes. Default 8 (IEEE 802.3).
    #[arg(long, help_heading = "Link")]
    pub preamble: Option<u32>,
    /// Inter-frame gap bytes. Default 12 (IEEE 802.3).
    #[arg(long, help_heading = "Link")]
    pub ifg: Option<u32>,

    // --- NIC and driver ---
    /// TX descriptors in the ring. Default 16 (sis900's NUM_TX_DESC).
    #[arg(long, help_heading = "NIC and driver")]
    pub ring: Option<u32>,
    /// Stop the queue when fewer than this many descriptors are free after a post.
    /// Default 1 (stop when the ring is full, as the seed's driver).
    #[arg(long, help_heading = "NIC and driver")]
    pub stop_thresh: Option<u32>,
    /// Wake a stopped queue when at least this many descriptors are free (netdev_queues.h's
    /// start threshold). Default 1 (the seed before its change; 16 after).
    #[arg(long, help_heading = "NIC and driver")]
    pub start_thresh: Option<u32>,
    /// Time to fetch a descriptor and copy its frame over the bus, in ns. Default 1000
    /// (assumed: a few PCI transactions at 33 MHz).
    #[arg(long, allow_negative_numbers = true, help_heading = "NIC and driver")]
    pub dma_ns: Option<f64>,
    /// TX FIFO size in frames; a descriptor completes when its frame is in the FIFO. 0: no
    /// FIFO, a descriptor completes when its frame has left the wire. Default 32 (sis900's
    /// 2 KiB TX FIFO holds about 32 minimum-size frames; needed for the seed's interrupt counts).
    #[arg(long, help_heading = "NIC and driver")]
    pub fifo_frames: Option<u32>,
    /// Interrupt after this many completions (1 = per descriptor). Default 1 (the seed's
    /// card); above 1 needs --coalesce-usecs.
    #[arg(long, help_heading = "NIC and driver")]
    pub coalesce_frames: Option<u32>,
    /// ... or this many microseconds after the first completion not yet signalled (0 = off).
    /// Default 0.
    #[arg(long, allow_negative_numbers = true, help_heading = "NIC and driver")]
    pub coalesce_usecs: Option<f64>,
    /// Where completions are reclaimed: `irq` (in the interrupt handler; skbs freed by the TX
    /// softirq, as sis900) or `napi` (in a softirq poll; the interrupt stays masked until the
    /// poll is done). Default irq.
    #[arg(long, value_parser = parse_completion, help_heading = "NIC and driver")]
    pub completion: Option<Completion>,

    // --- CPU ---
    /// CPU clock in MHz. Default 1397.657 (the seed's normal clock; its others: 1052.476 and
    /// 1575.819).
    #[arg(long, allow_negative_numbers = true, help_heading = "CPU")]
    pub clock_mhz: Option<f64>,
    /// pktgen's per-packet work plus the driver's xmit, in cycles (top: sy). Default 792
    /// (fitted).
    #[arg(long, allow_negative_numbers = true, help_heading = "CPU")]
    pub xmit_cycles: Option<f64>,
    /// Bus I/O in the driver's xmit (doorbell), in ns (sy). Default 250 (assumed).
    #[arg(long, allow_negative_numbers = true, help_heading = "CPU")]
    pub xmit_io_ns: Option<f64>,
    /// Hard interrupt entry, handler and exit, in cycles (hi). Default 915 (fitted).
    #[arg(long, allow_negative_numbers = true, help_heading = "CPU")]
    pub irq_cycles: Option<f64>,
    /// Bus I/O per interrupt (status read, interrupt controller ack), in ns (hi). Default 480
    /// (fitted).
    #[arg(long, allow_negative_numbers = true, help_heading = "CPU")]
    pub irq_io_ns: Option<f64>,
    /// Reclaiming one descriptor, in cycles (hi with --completion irq, si with napi).
    /// Default 1262 (fitted).
    #[arg(long, allow_negative_numbers = true, help_heading = "CPU")]
    pub reclaim_cycles: Option<f64>,
    /// Freeing one sent skb in the softirq, in cycles (si). Default 3948 (fitted).
    #[arg(long, allow_negative_numbers = true, help_heading = "CPU")]
    pub free_cycles: Option<f64>,
    /// Entering and leaving the softirq handler once, in cycles (si). Default 400 (assumed).
    #[arg(long, allow_negative_numbers = true, help_heading = "CPU")]
    pub softirq_cycles: Option<f64>,
    /// One queue wake: netif_wake_queue plus the TX softirq's run of the (empty) qdisc, in
    /// cycles (si). Default 100 (fitted).
    #[arg(long, allow_negative_numbers = true, help_heading = "CPU")]
    pub wake_cycles: Option<f64>,
    /// One turn of pktgen's loop while the queue is stopped, in cycles (sy). Default 600
    /// (assumed: three clock reads and the checks).
    #[arg(long, allow_negative_numbers = true, help_heading = "CPU")]
    pub spin_cycles: Option<f64>,
    /// The part of that turn between pktgen's two idle timestamps, in cycles; it, and any
    /// interrupt landing in it, counts as pktgen idle (d). Default 115 (fitted).
    #[arg(long, allow_negative_numbers = true, help_heading = "CPU")]
    pub idle_window_cycles: Option<f64>,
    /// Share of the CPU other tasks take (top itself), as a fraction; pktgen yields to them and
    /// counts that as idle (us). Default 0.003 (the seed's 0.3 %us).
    #[arg(long, allow_negative_numbers = true, help_heading = "CPU")]
    pub bg_share: Option<f64>,
    /// How long another task runs each time pktgen yields, in us. Default 2400 (fitted on the
    /// fast clocks' small shortfall from line rate).
    #[arg(long, allow_negative_numbers = true, help_heading = "CPU")]
    pub bg_slice_us: Option<f64>,
    /// Relative jitter of every CPU cost (each is multiplied by 1 + jitter*u, u uniform in
    /// [-1, 1]). Default 0.05 (assumed: cache and bus variation).
    #[arg(long, allow_negative_numbers = true, help_heading = "CPU")]
    pub jitter: Option<f64>,
    /// Seed of the jitter's pseudo-random sequence (same seed, same result). Default 1.
    #[arg(long, help_heading = "CPU")]
    pub seed: Option<u64>,
}

/// A completion mode that is neither of the two (the text given).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?}: expected irq or napi")]
pub struct BadCompletion(String);

/// Why `upktgen sim` cannot run as asked: the message names the option and what is wrong.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("--{name} {value:?}: not a valid number")]
    NotNumber { name: String, value: String },
    #[error("--completion {0}")]
    Completion(BadCompletion),
    #[error("unknown parameter {0:?}; one of: {names}", names = PARAM_NAMES.join(", "))]
    UnknownParam(String),
    #[error("--sweep {0:?}: expected NAME=V1,V2,...")]
    SweepSyntax(String),
    #[error(
        "--sweep {spec:?}: unknown parameter {name:?}; one of: {names}",
        names = PARAM_NAMES.join(", ")
    )]
    SweepParam { spec: String, name: String },
    #[error("--sweep {0:?}: no values")]
    SweepNoValues(String),
    #[error("--sweep: {0} combinations; at most 10000")]
    SweepTooBig(usize),
    /// `label`: the point's `NAME=VALUE`s.
    #[error("--sweep point {label}: {error}")]
    SweepPoint { label: String, error: ModelError },
    /// `point`: the first combination's `NAME=VALUE`s; `why`: why it cannot run.
    #[error("--sweep: no combination can run; e.g. {point}: {why}")]
    SweepNone { point: String, why: String },
    #[error("--clock-mhz: --preset seed runs the seed's three clocks; drop one of the two")]
    SeedClock,
    #[error(
        "--start-thresh: --preset seed runs the seed's wake thresholds (1 and 16); drop one of the two"
    )]
    SeedStartThresh,
    #[error("--sweep: cannot be combined with --preset seed")]
    SeedSweep,
    #[error(
        "--ring {0}: the seed's second set wakes at 16 free descriptors, so the ring needs at least 16"
    )]
    SeedRing(u32),
    #[error(
        "--stop-thresh {0}: the seed's first set wakes at 1 free descriptor, so the stop threshold must be 1"
    )]
    SeedStopThresh(u32),
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error("writing the JSON report: {0}")]
    Json(serde_json::Error),
}

// By hand, not `#[from]`: that would also make it the source, and the one-line message
// (`upktgen: ...`, every cause after a colon) would name it twice.
impl From<serde_json::Error> for SimError {
    fn from(e: serde_json::Error) -> Self {
        SimError::Json(e)
    }
}

type Result<T, E = SimError> = std::result::Result<T, E>;

fn parse_completion(s: &str) -> Result<Completion, BadCompletion> {
    match s {
        "irq" => Ok(Completion::Irq),
        "napi" => Ok(Completion::Napi),
        _ => Err(BadCompletion(s.to_string())),
    }
}

/// Names the sweep (and [`set_param`]) accepts, in help order.
pub const PARAM_NAMES: [&str; 29] = [
    "count",
    "pkt-size",
    "link-mbps",
    "fcs",
    "preamble",
    "ifg",
    "ring",
    "stop-thresh",
    "start-thresh",
    "dma-ns",
    "fifo-frames",
    "coalesce-frames",
    "coalesce-usecs",
    "completion",
    "clock-mhz",
    "xmit-cycles",
    "xmit-io-ns",
    "irq-cycles",
    "irq-io-ns",
    "reclaim-cycles",
    "free-cycles",
    "softirq-cycles",
    "wake-cycles",
    "spin-cycles",
    "idle-window-cycles",
    "bg-share",
    "bg-slice-us",
    "jitter",
    "seed",
];

fn num<T: std::str::FromStr>(name: &str, value: &str) -> Result<T> {
    value.trim().parse::<T>().map_err(|_| SimError::NotNumber {
        name: name.to_string(),
        value: value.to_string(),
    })
}

/// Sets one parameter by its flag name (without dashes) from text. Does not validate the
/// whole model: call [`Model::validate`] after.
pub fn set_param(m: &mut Model, name: &str, value: &str) -> Result<()> {
    let n = name;
    match name {
        "count" => m.count = num(n, value)?,
        "pkt-size" => m.pkt_size = num(n, value)?,
        "link-mbps" => m.link_mbps = num(n, value)?,
        "fcs" => m.fcs = num(n, value)?,
        "preamble" => m.preamble = num(n, value)?,
        "ifg" => m.ifg = num(n, value)?,
        "ring" => m.ring.size = num(n, value)?,
        "stop-thresh" => m.ring.stop_thresh = num(n, value)?,
        "start-thresh" => m.ring.start_thresh = num(n, value)?,
        "dma-ns" => m.dma_ns = num(n, value)?,
        "fifo-frames" => m.fifo_frames = num(n, value)?,
        "coalesce-frames" => m.coalesce_frames = num(n, value)?,
        "coalesce-usecs" => m.coalesce_usecs = num(n, value)?,
        "completion" => {
            m.completion = parse_completion(value.trim()).map_err(SimError::Completion)?
        }
        "clock-mhz" => m.clock_mhz = num(n, value)?,
        "xmit-cycles" => m.xmit_cycles = num(n, value)?,
        "xmit-io-ns" => m.xmit_io_ns = num(n, value)?,
        "irq-cycles" => m.irq_cycles = num(n, value)?,
        "irq-io-ns" => m.irq_io_ns = num(n, value)?,
        "reclaim-cycles" => m.reclaim_cycles = num(n, value)?,
        "free-cycles" => m.free_cycles = num(n, value)?,
        "softirq-cycles" => m.softirq_cycles = num(n, value)?,
        "wake-cycles" => m.wake_cycles = num(n, value)?,
        "spin-cycles" => m.spin_cycles = num(n, value)?,
        "idle-window-cycles" => m.idle_window_cycles = num(n, value)?,
        "bg-share" => m.bg_share = num(n, value)?,
        "bg-slice-us" => m.bg_slice_us = num(n, value)?,
        "jitter" => m.jitter = num(n, value)?,
        "seed" => m.seed = num(n, value)?,
        _ => return Err(SimError::UnknownParam(name.to_string())),
    }
    Ok(())
}

impl SimArgs {
    /// The machine these flags describe: the seed machine with every given flag applied.
    pub fn model(&self) -> Model {
        let mut m = Model::seed();
        macro_rules! take {
            ($($field:ident => $($target:ident).+),* $(,)?) => {
                $( if let Some(v) = self.$field { m.$($target).+ = v; } )*
            };
        }
        take!(
            count => count, pkt_size => pkt_size, link_mbps => link_mbps, fcs => fcs,
            preamble => preamble, ifg => ifg, ring => ring.size, stop_thresh => ring.stop_thresh,
            start_thresh => ring.start_thresh, dma_ns => dma_ns, fifo_frames => fifo_frames,
            coalesce_frames => coalesce_frames, coalesce_usecs => coalesce_usecs,
            completion => completion, clock_mhz => clock_mhz, xmit_cycles => xmit_cycles,
            xmit_io_ns => xmit_io_ns, irq_cycles => irq_cycles, irq_io_ns => irq_io_ns,
            reclaim_cycles => reclaim_cycles, free_cycles => free_cycles,
            softirq_cycles => softirq_cycles, wake_cycles => wake_cycles,
            spin_cycles => spin_cycles, idle_window_cycles => idle_window_cycles,
            bg_share => bg_share, bg_slice_us => bg_slice_us, jitter => jitter, seed => seed,
        );
        m
    }
}

/// One run of a single model, for text and JSON.
#[derive(Debug, Clone, Serialize)]
pub struct Run {
    pub model: Model,
    pub outcome: Outcome,
}

/// The run's lines as a real run prints them, plus the model's own counters.
pub fn render_run(m: &Model, o: &Outcome) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Simulated: {} x {}-byte packets, {} Mbit/s, ring {} (stop below {} free, wake at {} free), {} MHz, completion in {}{}",
        m.count,
        m.pkt_size,
        m.link_mbps,
        m.ring.size,
        m.ring.stop_thresh,
        m.ring.start_thresh,
        m.clock_mhz,
        m.completion,
        if m.fifo_frames > 0 {
            format!(", {}-frame TX FIFO", m.fifo_frames)
        } else {
            String::new()
        }
    );
    let _ = writeln!(out, "{}", o.cpu.top_line("Cpu(s)"));
    let _ = writeln!(out, "Result: {}", o.result.lines());
    let _ = writeln!(out, "Interrupts: {}", o.interrupts);
    let _ = writeln!(
        out,
        "Queue: {} stops, {} wakes; link busy {:.2} % (line rate {:.0} pps); {:.4} interrupts/packet",
        o.queue.stops,
        o.queue.wakes,
        o.link_utilisation() * 100.0,
        m.line_rate_pps(),
        o.irqs_per_packet()
    );
    out
}

/// Parses `NAME=V1,V2,...` into the name and its values.
fn parse_sweep(spec: &str) -> Result<(String, Vec<String>)> {
    let (name, values) = spec
        .split_once('=')
        .ok_or_else(|| SimError::SweepSyntax(spec.to_string()))?;
    let name = name.trim().trim_start_matches('-').to_string();
    if !PARAM_NAMES.contains(&name.as_str()) {
        return Err(SimError::SweepParam {
            spec: spec.to_string(),
            name,
        });
    }
    let values: Vec<String> = values
        .split(',')
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .collect();
    if values.is_empty() {
        return Err(SimError::SweepNoValues(spec.to_string()));
    }
    Ok((name, values))
}

/// One row of a sweep.
#[derive(Debug, Clone, Serialize)]
pub struct SweepRow {
    /// The swept parameters' values, in --sweep order.
    pub point: Vec<(String, String)>,
    pub model: Model,
    /// The run; None when this combination is impossible (see `skipped`).
    pub outcome: Option<Outcome>,
    /// Why the combination was not run (e.g. a start threshold above the ring).
    pub skipped: Option<String>,
}

/// Runs the grid of `specs` over `base`. Errors name the sweep point that failed.
pub fn sweep(base: &Model, specs: &[String]) -> Result<Vec<SweepRow>> {
    let axes: Vec<(String, Vec<String>)> = specs
        .iter()
        .map(|s| parse_sweep(s))
        .collect::<Result<_>>()?;
    let total: usize = axes.iter().map(|a| a.1.len()).product();
    if total > 10_000 {
        return Err(SimError::SweepTooBig(total));
    }
    let mut rows = Vec::with_capacity(total);
    for i in 0..total {
        let mut m = base.clone();
        let mut point = Vec::with_capacity(axes.len());
        let mut rest = i;
        // Last axis varies fastest.
        let mut idx = vec![0; axes.len()];
        for (k, axis) in axes.iter().enumerate().rev() {
            idx[k] = rest % axis.1.len();
            rest /= axis.1.len();
        }
        for (k, (name, values)) in axes.iter().enumerate() {
            let v = &values[idx[k]];
            set_param(&mut m, name, v)?;
            point.push((name.clone(), v.clone()));
        }
        let label = point
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect::<Vec<_>>()
            .join(" ");
        // A grid can hold impossible points (a start threshold above a small ring): those
        // are skipped with the reason; a grid of only impossible points is an error.
        if let Err(e) = m.validate() {
            rows.push(SweepRow {
                point,
                model: m,
                outcome: None,
                skipped: Some(e.to_string()),
            });
            continue;
        }
        let outcome = simulate(&m).map_err(|error| SimError::SweepPoint { label, error })?;
        rows.push(SweepRow {
            point,
            model: m,
            outcome: Some(outcome),
            skipped: None,
        });
    }
    if let Some(first) = rows.first()
        && rows.iter().all(|r| r.outcome.is_none())
    {
        return Err(SimError::SweepNone {
            point: first
                .point
                .iter()
                .map(|(n, v)| format!("{n}={v}"))
                .collect::<Vec<_>>()
                .join(" "),
            why: first.skipped.clone().unwrap_or_default(),
        });
    }
    Ok(rows)
}

/// The sweep as a table with a bar of pps against line rate.
pub fn render_sweep(rows: &[SweepRow]) -> String {
    let mut out = String::new();
    let Some(first) = rows.first() else {
        return out;
    };
    let names: Vec<&str> = first.point.iter().map(|(n, _)| n.as_str()).collect();
    let widths: Vec<usize> = names
        .iter()
        .enumerate()
        .map(|(k, n)| {
            rows.iter()
                .map(|r| r.point[k].1.len())
                .max()
                .unwrap_or(0)
                .max(n.len())
        })
        .collect();
    for (n, w) in names.iter().zip(&widths) {
        let _ = write!(out, "{n:>w$} ");
    }
    let _ = writeln!(
        out,
        "|      pps  %line | irq/pkt wakes/pkt |   sy   hi   si | idle d % | pps / line rate"
    );
    for r in rows {
        for ((_, v), w) in r.point.iter().zip(&widths) {
            let _ = write!(out, "{v:>w$} ");
        }
        let Some(o) = &r.outcome else {
            let _ = writeln!(
                out,
                "| skipped: {}",
                r.skipped.as_deref().unwrap_or("invalid")
            );
            continue;
        };
        let line = r.model.line_rate_pps();
        let frac = o.result.pps() as f64 / line;
        let sent = o.result.sent.max(1) as f64;
        let bar_len = (frac * 30.0).round().clamp(0.0, 30.0) as usize;
        let _ = writeln!(
            out,
            "| {:>8} {:>6.2} | {:>7.3} {:>9.3} | {:>4.1} {:>4.1} {:>4.1} | {:>8.1} | {}",
            o.result.pps(),
            frac * 100.0,
            o.irqs_per_packet(),
            o.queue.wakes as f64 / sent,
            o.cpu.sy,
            o.cpu.hi,
            o.cpu.si,
            o.result.idle_ns as f64 * 100.0 / o.result.elapsed_ns.max(1) as f64,
            "#".repeat(bar_len)
        );
    }
    out
}

/// What `upktgen sim` prints (the binary writes it to standard output): the run, the
/// sweep or the seed's reproduction the flags ask for.
pub fn run_to_string(args: &SimArgs) -> Result<String> {
    if args.preset == Some(Preset::Seed) {
        if args.clock_mhz.is_some() {
            return Err(SimError::SeedClock);
        }
        if args.start_thresh.is_some() {
            return Err(SimError::SeedStartThresh);
        }
        if !args.sweep.is_empty() {
            return Err(SimError::SeedSweep);
        }
    }
    let base = args.model();
    // Validate the base up front (a preset replaces clock and start threshold, which the
    // seed's values make valid whenever the ring holds 16).
    if args.preset == Some(Preset::Seed) {
        let mut probe = base.clone();
        probe.ring.start_thresh = 16.min(probe.ring.size).max(probe.ring.stop_thresh);
        probe.validate()?;
        if base.ring.size < 16 {
            return Err(SimError::SeedRing(base.ring.size));
        }
        if base.ring.stop_thresh > 1 {
            return Err(SimError::SeedStopThresh(base.ring.stop_thresh));
        }
        let rows = seed::reproduce(&base)?;
        if args.json {
            #[derive(Serialize)]
            struct Out<'a> {
                iterations: &'a [seed::Comparison],
                verdict: seed::Verdict,
            }
            let v = seed::verdict(&rows);
            return Ok(crate::schema::to_pretty(
                crate::schema::SIM_SEED,
                &Out {
                    iterations: &rows,
                    verdict: v,
                },
            )? + "\n");
        }
        return Ok(seed::render(&rows));
    }
    base.validate()?;
    if !args.sweep.is_empty() {
        let rows = sweep(&base, &args.sweep)?;
        if args.json {
            #[derive(Serialize)]
            struct Points<'a> {
                points: &'a [SweepRow],
            }
            return Ok(crate::schema::to_pretty(
                crate::schema::SIM_SWEEP,
                &Points { points: &rows },
            )? + "\n");
        }
        return Ok(render_sweep(&rows));
    }
    let outcome = simulate(&base)?;
    if args.json {
        return Ok(crate::schema::to_pretty(
            crate::schema::SIM,
            &Run {
                model: base,
                outcome,
            },
        )? + "\n");
    }
    Ok(render_run(&base, &outcome))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(clap::Parser, Debug)]
    struct Cli {
        #[command(flatten)]
        sim: SimArgs,
    }

    fn parse(args: &[&str]) -> SimArgs {
        let mut v = vec!["sim"];
        v.extend_from_slice(args);
        Cli::try_parse_from(v).unwrap().sim
    }

    fn err_of(args: &[&str]) -> String {
        let mut v = vec!["sim"];
        v.extend_from_slice(args);
        match Cli::try_parse_from(v) {
            Err(e) => e.to_string(),
            Ok(cli) => format!("{:#}", run_to_string(&cli.sim).unwrap_err()),
        }
    }

    #[test]
    fn flags_reach_the_model() {
        let a = parse(&[
            "--ring",
            "64",
            "--start-thresh",
            "16",
            "--clock-mhz",
            "1052",
            "--completion",
            "napi",
            "--link-mbps",
            "1000",
            "--count",
            "10",
        ]);
        let m = a.model();
        assert_eq!(m.ring.size, 64);
        assert_eq!(m.ring.start_thresh, 16);
        assert_eq!(m.clock_mhz, 1052.0);
        assert_eq!(m.completion, Completion::Napi);
        assert_eq!(m.link_mbps, 1000.0);
        assert_eq!(m.count, 10);
        // Untouched flags keep the seed machine's values.
        assert_eq!(m.free_cycles, Model::seed().free_cycles);
    }

    #[test]
    fn every_param_name_can_be_set() {
        let mut m = Model::seed();
        for name in PARAM_NAMES {
            let v = if name == "completion" { "napi" } else { "3" };
            set_param(&mut m, name, v).unwrap();
        }
        assert!(set_param(&mut m, "nope", "1").is_err());
    }

    #[test]
    fn bad_input_is_a_clear_error() {
        for (args, needle) in [
            (&["--clock-mhz", "0"][..], "--clock-mhz"),
            (&["--clock-mhz", "nan"][..], "--clock-mhz"),
            (&["--link-mbps", "0"][..], "--link-mbps"),
            (&["--start-thresh", "17"][..], "--start-thresh"),
            (
                &["--ring", "8", "--start-thresh", "16"][..],
                "--start-thresh",
            ),
            (&["--free-cycles", "-5"][..], "--free-cycles"),
            (&["--count", "0"][..], "--count"),
            (&["--jitter", "2"][..], "--jitter"),
            (
                &["--preset", "seed", "--clock-mhz", "1000"][..],
                "--clock-mhz",
            ),
            (&["--preset", "seed", "--ring", "8"][..], "--ring"),
            (&["--sweep", "bogus=1,2"][..], "bogus"),
            (&["--sweep", "ring"][..], "NAME=V1"),
            (&["--sweep", "ring=4,x"][..], "--ring"),
            (
                &["--ring", "8", "--sweep", "start-thresh=9,10"][..],
                "--start-thresh",
            ),
            (&["--completion", "poll"][..], "irq or napi"),
        ] {
            let e = err_of(args);
            assert!(
                e.contains(needle),
                "{args:?}: {e:?} should mention {needle}"
            );
        }
    }

    #[test]
    fn single_run_prints_like_pktgen() {
        let out = run_to_string(&parse(&["--count", "2000"])).unwrap();
        assert!(out.contains("Cpu(s):"), "{out}");
        assert!(out.contains("Result: OK: "), "{out}");
        assert!(out.contains(" usec, 2000 (60byte,0frags)\n  "), "{out}");
        assert!(out.contains("Interrupts: "), "{out}");
        let json = run_to_string(&parse(&["--count", "200", "--json"])).unwrap();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["outcome"]["result"]["sent"], 200);
    }

    #[test]
    fn sweep_covers_the_grid() {
        let rows = sweep(
            &Model {
                count: 3000,
                ..Model::seed()
            },
            &["ring=16,32".into(), "start-thresh=1,8,16".into()],
        )
        .unwrap();
        assert_eq!(rows.len(), 6);
        assert!(rows.iter().all(|r| r.outcome.is_some()));
        let rows2 = sweep(
            &Model {
                count: 500,
                ..Model::seed()
            },
            &["ring=8,16".into(), "start-thresh=16".into()],
        )
        .unwrap();
        assert!(
            rows2[0]
                .skipped
                .as_deref()
                .unwrap()
                .contains("--start-thresh")
        );
        assert!(rows2[1].outcome.is_some());
        assert!(render_sweep(&rows2).contains("skipped: --start-thresh"));
        assert_eq!(rows[1].model.ring.size, 16);
        assert_eq!(rows[1].model.ring.start_thresh, 8);
        assert_eq!(rows[5].model.ring.size, 32);
        let text = render_sweep(&rows);
        assert_eq!(text.lines().count(), 7);
    }

    /// The reproduction, on 150,000 packets per iteration so it runs in the debug profile in
    /// about a second; `cargo bench --bench sim` checks the full 4,000,000 (the conclusions are
    /// the same: all rates and shares are steady-state figures reached within milliseconds of
    /// simulated time).
    #[test]
    fn reproduces_the_seed_within_the_issue_bounds() {
        let base = Model {
            count: 150_000,
            ..Model::seed()
        };
        let rows = seed::reproduce(&base).unwrap();
        let v = seed::verdict(&rows);
        let table = seed::table(&rows);
        for c in &rows {
            let d = c.deltas();
            let it = c.seed.iteration;
            assert!(d.irq_rel.abs() <= seed::IRQ_BOUND, "it {it}\n{table}");
            for s in [d.sy_pts, d.hi_pts, d.si_pts] {
                assert!(s.abs() <= seed::SHARE_BOUND_PTS, "it {it}\n{table}");
            }
            if it == 3 {
                // The slow clock with hysteresis: the model, fitted without hysteresis,
                // predicts no gain (the CPU-bound ring never fills, so the wake threshold
                // never acts); the seed measured +2.35 %. docs/sim.md explains the miss.
                assert!(d.pps_rel.abs() <= 0.03, "it {it}\n{table}");
            } else {
                assert!(d.pps_rel.abs() <= seed::PPS_BOUND, "it {it}\n{table}");
            }
        }
        assert!(v.normal_idle_down, "{table}");
        // The documented miss: the model predicts the same pps at the slow clock whatever the
        // wake threshold, where the seed measured +2.35 % with hysteresis. Its queue never
        // stops there, so the threshold has nothing to act on (see the next test for why the
        // seed's own counters say the same of the real machine).
        let (slow, slow_hyst) = (rows[0].sim.result.pps(), rows[3].sim.result.pps());
        assert!(slow.abs_diff(slow_hyst) * 200 <= slow, "{table}");
        assert_eq!(rows[0].sim.queue.stops, 0, "{table}");
        assert_eq!(rows[3].sim.queue.stops, 0, "{table}");
    }

    /// Why no wake-threshold mechanism can give the seed's +2.35 % at the slow clock: the
    /// threshold acts only while the queue is stopped; a stopped queue means completions paced
    /// by the wire, one interrupt each; the seed's slow-clock interrupt counts leave room for at
    /// most 0.9 % of the packets to have been sent that way.
    #[test]
    fn the_slow_clock_gain_is_not_a_threshold_effect() {
        // The premise, in the model: at the slow clock with a wire slow enough for the queue to
        // stop on most packets, every completion gets its own interrupt; with the seed's
        // 100 Mbit/s wire the CPU paces the completions, about one in five merges, and the
        // queue never stops.
        let slow = |link_mbps: f64, start: u32| {
            let mut m = Model {
                count: 100_000,
                link_mbps,
                clock_mhz: SEED_CLOCKS_MHZ[0],
                ..Model::seed()
            };
            m.ring.start_thresh = start;
            simulate(&m).unwrap()
        };
        let stopped = slow(80.0, 1);
        let wakes = stopped.queue.wakes as f64 / stopped.result.sent as f64;
        assert!(wakes > 0.9, "{stopped:?}");
        assert!(stopped.irqs_per_packet() > 0.99, "{stopped:?}");
        for start in [1, 16] {
            let seed_wire = slow(100.0, start);
            assert_eq!(seed_wire.queue.stops, 0, "{seed_wire:?}");
            assert!(seed_wire.irqs_per_packet() < 0.85, "{seed_wire:?}");
        }
        // The bound, from the seed's figures alone.
        let b = seed::slow_clock_bound();
        assert!((b.seed_gain - 0.0235).abs() < 0.0005, "{b:?}");
        assert!(
            b.stopped_packets_max < 0.01 * seed::SEED_COUNT as f64,
            "{b:?}"
        );
        assert!(b.max_gain < 0.01, "{b:?}");
        assert!(
            b.needed_per_stopped_packet_us > 2.0 * b.per_packet_us,
            "{b:?}"
        );
    }
}
