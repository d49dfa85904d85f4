//! `upktgen ndr`: the no-drop rate (and the partial-drop rate) of a device per frame size, by
//! a search over real trials (docs/ndr.md).
//!
//! The experiment core ([`crate::experiment`]) runs it: its search planner (the [`search`] per
//! frame size, pure, tested on a simulated DUT), its child runner, its results file and its
//! resume; ndr adds its options and the results file's checks.
//!
//! - [`trial`]: one trial as a child `upktgen run --json --rx-analyze`, its loss attributed.
//! - [`report`]: the table, JSON, CSV, SVG plots, index.html, and `compare` of two results.

pub mod config;
pub mod report;
pub use crate::experiment::{resume, search};
pub mod trial;

use crate::exit::Exit;
use crate::experiment::resume::Replay;
use crate::experiment::searching::{SearchPlanner, Space};
pub use crate::experiment::searching::{SizeResult, TrialRecord, line_pps};
use crate::experiment::writer::Journal;
use crate::experiment::{FnRunner, Ran};
use anyhow::{Context, Result, anyhow, bail};
use search::{Config, Obs, Precision, Purpose, Request, pct};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use trial::Figures;

pub use crate::cli::ndr::{NdrArgs, RFC2544_SIZES};

/// A share in percent, with or without the sign (`0.5%` and `0.5` are both 0.5 %), as a ratio.
pub fn parse_pct(opt: &str, s: &str) -> Result<f64> {
    let t = s.trim();
    let n = t.strip_suffix('%').unwrap_or(t).trim();
    let v: f64 = n
        .parse()
        .map_err(|_| anyhow!("{opt} {s}: not a percentage (e.g. 0, 0.5%, 1%)"))?;
    if !v.is_finite() || !(0.0..100.0).contains(&v) {
        bail!("{opt} {s}: must be at least 0 % and below 100 %");
    }
    Ok(v / 100.0)
}

/// `1%` or `500` / `500pps`.
pub fn parse_precision(s: &str) -> Result<Precision> {
    let t = s.trim();
    let bad = || anyhow!("--precision {s}: give a share (1%) or packets per second (500, 500pps)");
    let p = if let Some(n) = t.strip_suffix('%') {
        Precision::Relative(n.trim().parse::<f64>().map_err(|_| bad())? / 100.0)
    } else {
        Precision::Absolute(
            t.strip_suffix("pps")
                .unwrap_or(t)
                .trim()
                .parse()
                .map_err(|_| bad())?,
        )
    };
    check_precision(&p).map_err(|e| anyhow!("--precision {s}: {e}"))?;
    Ok(p)
}

/// The finest relative precision: 0.001 % (finer would take more trials than any search
/// needs, and below the rate's own jitter).
pub const MIN_RELATIVE_PRECISION: f64 = 1e-5;
/// The highest rate ndr asks for, in packets per second: `run --ratep`'s limit.
pub const MAX_RATE: f64 = 1e9;
/// The highest line rate, in Mb/s (10 Tb/s).
pub const MAX_LINE_RATE: f64 = 1e7;
/// The shortest trial, in seconds: a shorter one is mostly the run's start and stop.
pub const MIN_TRIAL_S: f64 = 0.1;
/// The longest trial, in seconds (24 h).
pub const MAX_TRIAL_S: f64 = 86_400.0;

fn check_precision(p: &Precision) -> Result<()> {
    match *p {
        Precision::Relative(v) if (MIN_RELATIVE_PRECISION..0.5).contains(&v) => Ok(()),
        Precision::Absolute(v) if v.is_finite() && (1.0..=MAX_RATE).contains(&v) => Ok(()),
        Precision::Relative(_) => {
            bail!("must be above 0 % (at least 0.001 %) and below 50 %")
        }
        Precision::Absolute(_) => bail!("must be at least 1 pps (and at most {MAX_RATE} pps)"),
    }
}

fn check_sizes(v: &[u32], given: &str) -> Result<()> {
    for (i, &n) in v.iter().enumerate() {
        if !(64..=9018).contains(&n) {
            bail!(
                "--sizes {given}: {n} is outside 64 to 9018 (Ethernet frames with the FCS, as RFC 2544 counts them)"
            );
        }
        if v[..i].contains(&n) {
            bail!("--sizes {given}: {n} is given twice");
        }
    }
    if v.is_empty() {
        bail!("--sizes: give at least one frame size");
    }
    Ok(())
}

pub fn parse_sizes(s: &str) -> Result<Vec<u32>> {
    let mut v = Vec::new();
    for w in s.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        let n: u32 = w
            .parse()
            .map_err(|_| anyhow!("--sizes {s}: '{w}' is not a frame size in bytes"))?;
        v.push(n);
    }
    check_sizes(&v, s)?;
    Ok(v)
}

/// The first line of a results file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Header {
    pub upktgen_ndr: u32,
    pub sizes: Vec<u32>,
    pub repeat: u32,
    pub latency: bool,
    /// The search's settings (max_rate: as given; per size it may be the line rate's).
    pub config: Config,
    pub line_rate_mbps: Option<f64>,
    pub run_args: Vec<String>,
}

/// A whole run of `upktgen ndr` (what --json prints).
#[derive(Debug, Clone, Serialize)]
pub struct NdrRun {
    pub header: Header,
    pub results_file: PathBuf,
    pub interrupted: bool,
    pub sizes: Vec<SizeResult>,
    pub trials: Vec<TrialRecord>,
}

const FORMAT: u32 = 1;

/// The defaults of ndr's options (applied here, not by clap, so that an option given beside
/// `--resume` can be told from one left out).
const DEFAULT_LOSS: &str = "0";
const DEFAULT_PDR: &str = "0.5%";
const DEFAULT_TRIAL: std::time::Duration = std::time::Duration::from_secs(10);
const DEFAULT_PRECISION: &str = "1%";
const DEFAULT_TOLERANCE: &str = "2%";

/// A config's trials are held by `run` to its `layer1` speed: a `--max-rate` or a
/// `--line-rate` above it would only be refused at a trial, so it is refused now.
fn check_config_line(args: &NdrArgs, agg: &config::Aggregate) -> Result<()> {
    let Some(bps) = agg.layer1_bps else {
        return Ok(());
    };
    let mbps = bps as f64 / 1e6;
    if let Some(l) = args.line_rate.filter(|&l| l > mbps) {
        bail!(
            "--line-rate {l}: above the config's layer1 speed for its sending port, {mbps} Mb/s, which run holds every trial's flows to: change the config's layer1 speed"
        );
    }
    // At the flows' exact mean, as run reckons each trial.
    let wire = agg.mean_exact + f64::from(crate::experiment::trial::WIRE_OVERHEAD);
    let line = 1e6 * mbps / (wire * 8.0);
    if let Some(max) = args.max_rate.filter(|&m| m > line) {
        bail!(
            "--max-rate {max}: above the sending port's layer1 speed, {mbps} Mb/s, at the flows' mean frame of {:.1} bytes ({:.0} pps): trials above it would be refused",
            agg.mean_exact,
            line.floor()
        );
    }
    Ok(())
}

pub(crate) fn header_from(args: &NdrArgs) -> Result<Header> {
    // ndr's --config, or one among the run options (`-- --config FILE`): the same search.
    let config = args.config.clone().or_else(|| config::config_in(&args.run));
    // A config's sending port may say its line rate (its layer1 speed).
    let mut layer1_bps = None;
    let sizes = match &config {
        // The flows' sizes are the frames: the search's one size is their mean.
        Some(c) => {
            config::check_sizes(args.sizes.as_deref())?;
            let agg = config::read(c)?;
            layer1_bps = agg.line_bps;
            check_config_line(args, &agg)?;
            config::check_options(
                None,
                args.max_rate,
                config::ceiling_line(args.line_rate, layer1_bps),
            )?;
            vec![agg.mean_frame]
        }
        None => parse_sizes(args.sizes.as_deref().unwrap_or(RFC2544_SIZES))?,
    };
    let loss_text = args.loss.as_deref().unwrap_or(DEFAULT_LOSS);
    let pdr_text = args.pdr.as_deref().unwrap_or(DEFAULT_PDR);
    let loss = parse_pct("--loss", loss_text)?;
    let pdr = parse_pdr(pdr_text)?;
    if let Some(p) = pdr
        && p < loss
    {
        bail!(
            "--pdr {pdr_text} is below --loss {loss_text}: the partial-drop rate allows more loss than the no-drop rate"
        );
    }
    let precision = parse_precision(args.precision.as_deref().unwrap_or(DEFAULT_PRECISION))?;
    let tolerance = parse_pct(
        "--rate-tolerance",
        args.rate_tolerance.as_deref().unwrap_or(DEFAULT_TOLERANCE),
    )?;
    let final_s = args.trial.unwrap_or(DEFAULT_TRIAL).as_secs_f64();
    let search_s = match args.search_trial {
        Some(d) => d.as_secs_f64(),
        None => (final_s / 10.0).max(1.0).min(final_s),
    };
    let line = config::ceiling_line(args.line_rate, layer1_bps).or_else(|| link_speed(&args.run));
    let h = Header {
        upktgen_ndr: FORMAT,
        sizes,
        repeat: args.repeat.unwrap_or(1),
        latency: !args.no_latency,
        config: Config {
            loss,
            pdr,
            precision,
            max_rate: args.max_rate,
            min_rate: args.min_rate.unwrap_or(0.0),
            search_s,
            final_s,
            tolerance,
        },
        line_rate_mbps: line,
        run_args: run_options(args),
    };
    check_header(&h)?;
    Ok(h)
}

/// The run options of every trial: ndr's `--config FILE` first, then those given.
fn run_options(args: &NdrArgs) -> Vec<String> {
    let mut run = Vec::new();
    if let Some(c) = &args.config {
        run.extend(["--config".to_string(), c.to_string_lossy().into_owned()]);
    }
    run.extend(args.run.iter().cloned());
    run
}

fn parse_pdr(s: &str) -> Result<Option<f64>> {
    match s.trim() {
        "none" | "off" => Ok(None),
        p => Ok(Some(parse_pct("--pdr", p)?)),
    }
}

/// Seconds as an option's value reads them back (`0.25 s`).
fn secs_text(s: f64) -> String {
    format!("{} s", num_text(s))
}

/// A number as given, in scientific notation when it is far from everyday sizes (`1e300`,
/// not 301 digits).
fn num_text(v: f64) -> String {
    if v == 0.0 || (v.is_finite() && (1e-3..1e12).contains(&v.abs())) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

/// What ndr accepts, checked on the values: the command line's (after parsing) and a
/// resumed file's header alike, so a file holds nothing the command line would refuse.
/// Each refusal names the option that sets the value.
pub fn check_header(h: &Header) -> Result<()> {
    let c = &h.config;
    check_sizes(
        &h.sizes,
        &h.sizes
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(","),
    )?;
    if !(1..=100).contains(&h.repeat) {
        bail!("--repeat {}: must be 1 to 100", h.repeat);
    }
    let share = |opt: &str, v: f64| -> Result<()> {
        if !(v.is_finite() && (0.0..1.0).contains(&v)) {
            bail!("{opt} {}: must be at least 0 % and below 100 %", pct(v));
        }
        Ok(())
    };
    share("--loss", c.loss)?;
    share("--rate-tolerance", c.tolerance)?;
    if let Some(p) = c.pdr {
        share("--pdr", p)?;
        if p < c.loss {
            bail!(
                "--pdr {} is below --loss {}: the partial-drop rate allows more loss than the no-drop rate",
                pct(p),
                pct(c.loss)
            );
        }
    }
    check_precision(&c.precision).map_err(|e| {
        let given = match c.precision {
            Precision::Relative(v) => pct(v),
            Precision::Absolute(v) => format!("{v} pps"),
        };
        anyhow!("--precision {given}: {e}")
    })?;
    for (opt, v) in [("--trial", c.final_s), ("--search-trial", c.search_s)] {
        if !v.is_finite() || v < MIN_TRIAL_S {
            bail!(
                "{opt} {}: shorter than {} ms, the shortest trial ndr runs (a trial is a whole run: its start and stop would be most of it)",
                secs_text(v),
                MIN_TRIAL_S * 1000.0
            );
        }
        if v > MAX_TRIAL_S {
            bail!(
                "{opt} {}: longer than 24 h, the longest trial ndr runs",
                secs_text(v)
            );
        }
    }
    if c.search_s > c.final_s {
        bail!("--search-trial is longer than --trial: searching trials are the short ones");
    }
    let min_rate = (c.min_rate != 0.0).then_some(c.min_rate);
    for (opt, v) in [("--max-rate", c.max_rate), ("--min-rate", min_rate)] {
        if let Some(v) = v
            && !(v.is_finite() && (1.0..=MAX_RATE).contains(&v))
        {
            bail!(
                "{opt} {}: must be at least 1 and at most {MAX_RATE} packets per second (the most `run --ratep` sends)",
                num_text(v)
            );
        }
    }
    if let (Some(lo), Some(hi)) = (min_rate, c.max_rate)
        && lo >= hi
    {
        bail!("--min-rate {lo} is not below --max-rate {hi}");
    }
    if let Some(l) = h.line_rate_mbps
        && !(l.is_finite() && l > 0.0 && l <= MAX_LINE_RATE)
    {
        bail!(
            "--line-rate {}: must be a positive rate in Mb/s, at most {MAX_LINE_RATE} (10 Tb/s)",
            num_text(l)
        );
    }
    if config::config_in(&h.run_args).is_some() {
        config::check_options(None, c.max_rate, h.line_rate_mbps)?;
    }
    check_run_args(&h.run_args)?;
    Ok(())
}

/// A trial record of a resumed file, checked against what a trial can measure: a record
/// that could not come from a trial is refused (it would steer the search).
pub(crate) fn check_record(h: &Header, t: &TrialRecord) -> Result<()> {
    let o = &t.obs;
    let q = &t.request;
    if !h.sizes.contains(&t.size) {
        bail!("frame size {} is not one of the header's", t.size);
    }
    if !(1..=h.repeat).contains(&t.round) {
        bail!("round {} is not 1 to {}", t.round, h.repeat);
    }
    let rate_ok = |r: Option<f64>| r.is_none_or(|r| r.is_finite() && (1.0..=MAX_RATE).contains(&r));
    if !rate_ok(q.rate) || o.requested != q.rate {
        bail!("its rate is not one a trial asks for");
    }
    let dur_ok = |d: f64| d.is_finite() && (MIN_TRIAL_S..=MAX_TRIAL_S).contains(&d);
    if !dur_ok(q.duration_s) || o.duration_s != q.duration_s {
        bail!("its duration is not one a trial runs for");
    }
    if !(o.achieved.is_finite() && o.achieved >= 0.0 && t.seconds.is_finite() && t.seconds >= 0.0) {
        bail!("its achieved rate or wall time is not a finite, non-negative number");
    }
    let lost = o
        .dut_lost
        .checked_add(o.receiver_lost)
        .and_then(|l| l.checked_add(o.sender_lost));
    if lost.is_none_or(|l| l > o.sent) {
        bail!(
            "it lost more frames ({} + {} + {}) than it sent ({})",
            o.dut_lost,
            o.receiver_lost,
            o.sender_lost,
            o.sent
        );
    }
    Ok(())
}

/// The run options are `run`'s, without those the search sets.
fn check_run_args(run: &[String]) -> Result<()> {
    for a in run {
        let name = a.split('=').next().unwrap_or(a);
        if trial::OWN_OPTIONS.contains(&name) {
            bail!(
                "{name}: ndr sets it for every trial (rate, duration, frame size, output); leave it out"
            );
        }
    }
    // Parsed as a trial's child will be (with the options ndr adds).
    let probe = Request {
        rate: Some(1000.0),
        duration_s: 1.0,
        purpose: Purpose::Search,
    };
    let mut argv = vec!["upktgen".to_string()];
    argv.extend(trial::child_args(64, &probe, run));
    use clap::Parser;
    if let Err(e) = crate::cli::Cli::try_parse_from(&argv) {
        let msg = e.to_string();
        let first = msg
            .lines()
            .next()
            .unwrap_or("")
            .trim_start_matches("error: ");
        bail!(
            "run options {}: {first}",
            crate::text::printable(&run.join(" "))
        );
    }
    Ok(())
}

/// The search's space of a header: its sizes, rounds, settings and run options.
pub(crate) fn space_of(h: &Header) -> Space {
    Space {
        sizes: h.sizes.clone(),
        repeat: h.repeat,
        latency: h.latency,
        config: h.config.clone(),
        line_rate_mbps: h.line_rate_mbps,
        run_args: h.run_args.clone(),
    }
}

/// The run options planned as the trials' runs will plan them (`RunPlan::from_args`, what
/// `run` refuses before it makes a lab), at every frame size and the rate bounds, so that
/// options no trial could run are refused once, before the first trial, not by every trial.
/// Called after the resume's check ([`resume::check_run_options`]): planning reads the
/// files the options name.
pub(crate) fn plan_run_args(h: &Header) -> Result<()> {
    SearchPlanner::new(space_of(h)).check_space().map_err(|e| {
        let opts = crate::text::printable(&h.run_args.join(" ")).into_owned();
        if e.first {
            anyhow!("run options {opts}: {e}")
        } else {
            anyhow!(
                "run options {opts}: for {}-byte frames at {} for {} s: {e}",
                e.size,
                e.rate
                    .map_or("the sender's ceiling".into(), |r| format!("{r} pps")),
                e.duration_s
            )
        }
    })
}

/// The link speed of `--dev IFACE` from sysfs, when it says one.
fn link_speed(run: &[String]) -> Option<f64> {
    let i = run.iter().position(|a| a == "--dev")?;
    let dev = run.get(i + 1)?;
    if dev.contains('/') || dev.starts_with('.') {
        return None;
    }
    let s = std::fs::read_to_string(format!("/sys/class/net/{dev}/speed")).ok()?;
    let v: f64 = s.trim().parse().ok()?;
    (v > 0.0).then_some(v)
}

/// Reads a results file (through the bounded reader: at most [`crate::input::MAX_JSON`]).
pub fn read_results(path: &Path) -> Result<(Header, Vec<TrialRecord>)> {
    let j = crate::experiment::resume::Journal {
        cmd: "ndr",
        file: "an ndr results file",
        header: crate::schema::NDR_RESULTS,
        record: crate::schema::NDR_TRIAL,
        record_what: "a trial record",
        format: FORMAT,
    };
    crate::experiment::resume::read_journal(
        path,
        &j,
        |h: &Header| h.upktgen_ndr,
        check_header,
        check_record,
    )
}

/// Whether `path` starts like an ndr results file.
pub fn is_results_file(path: &Path) -> bool {
    use std::io::Read;
    let mut buf = [0u8; 40];
    // Through the one input opener: a FIFO is refused, not waited on.
    let n = crate::input::open_regular(path)
        .ok()
        .and_then(|mut f| f.read(&mut buf).ok())
        .unwrap_or(0);
    // Since schema version 1 the header names its schema first; before, its format.
    buf[..n].starts_with(b"{\"upktgen_ndr\"")
        || buf[..n].starts_with(b"{\"schema\":\"upktgen.ndr-results/")
}

/// Runs the search of every size (and round), trial by trial, on the experiment core: its
/// search planner, `stored` answered again while they match, `run_trial` for the others (a
/// simulation in the tests, which runs every trial through the plan's check first); None:
/// interrupted.
pub fn drive(
    header: &Header,
    stored: Vec<TrialRecord>,
    stop: &AtomicBool,
    mut run_trial: impl FnMut(u32, &Request) -> Option<(Obs, Figures, f64)>,
    saved: impl FnMut(&[TrialRecord]) -> Result<()>,
) -> Result<(Vec<SizeResult>, Vec<TrialRecord>, bool)> {
    let mut runner = FnRunner(|t: &crate::experiment::Trial| {
        let crate::experiment::Coords::Search {
            size,
            round,
            request,
            ..
        } = t.coords
        else {
            unreachable!("a search's trial")
        };
        match run_trial(size, &request) {
            Some((obs, figures, seconds)) => Ran::Done(TrialRecord {
                size,
                round,
                request,
                obs,
                figures,
                seconds,
            }),
            None => Ran::Interrupted(None),
        }
    });
    drive_with(header, stored, stop, &mut runner, saved)
}

/// [`drive`] with a runner of the core's.
fn drive_with(
    header: &Header,
    stored: Vec<TrialRecord>,
    stop: &AtomicBool,
    runner: &mut dyn crate::experiment::Runner<TrialRecord>,
    saved: impl FnMut(&[TrialRecord]) -> Result<()>,
) -> Result<(Vec<SizeResult>, Vec<TrialRecord>, bool)> {
    let mut planner = SearchPlanner::new(space_of(header));
    let mut replay = Replay::new(stored, TrialRecord::answers, |t, rest| {
        if let crate::experiment::Coords::Search { size, round, .. } = t.coords {
            crate::errln!(
                "upktgen ndr: the results file's trials stop matching the search at size {size} (round {round}); the rest ({rest}) are not used"
            );
        }
    });
    let d = crate::experiment::drive(&mut planner, runner, &mut replay, stop, saved)?;
    Ok((planner.results(), d.outcomes, d.interrupted))
}

/// ndr's results for `upktgen compare` ([`crate::experiment::compare`]): two results files
/// (or `--out` directories, by their trials.jsonl), the change in NDR per frame size.
pub struct NdrResults;

/// ndr's kind of results.
pub const RESULTS: NdrResults = NdrResults;

impl crate::experiment::compare::Results for NdrResults {
    fn file_in_dir(&self) -> &'static str {
        "trials.jsonl"
    }
    fn takes(&self, a: &Path, b: Option<&Path>) -> bool {
        b.is_some() && is_results_file(a)
    }
    fn compare(&self, args: &crate::cli::CompareArgs) -> Result<()> {
        let b = args
            .b
            .as_deref()
            .ok_or_else(|| anyhow!("two results files"))?;
        crate::out::print(report::compare_files(&args.a, b)?)?;
        Ok(())
    }
}

/// Refuses ndr's options given beside `--resume` that differ from the file's settings
/// (a resumed search keeps them; an option is never dropped without a word).
pub(crate) fn check_given_beside_resume(args: &NdrArgs, h: &Header, path: &Path) -> Result<()> {
    let c = &h.config;
    let mut differ: Vec<String> = Vec::new();
    let mut say =
        |given: String, file: String| differ.push(format!("{given} (the file's: {file})"));
    let sizes = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    let pdr_text = |p: Option<f64>| p.map_or("none".into(), pct);
    if let Some(s) = &args.sizes
        && parse_sizes(s)? != h.sizes
    {
        say(format!("--sizes {s}"), sizes(&h.sizes));
    }
    if let Some(s) = &args.loss
        && parse_pct("--loss", s)? != c.loss
    {
        say(format!("--loss {s}"), pct(c.loss));
    }
    if let Some(s) = &args.pdr
        && parse_pdr(s)? != c.pdr
    {
        say(format!("--pdr {s}"), pdr_text(c.pdr));
    }
    if let Some(s) = &args.rate_tolerance
        && parse_pct("--rate-tolerance", s)? != c.tolerance
    {
        say(format!("--rate-tolerance {s}"), pct(c.tolerance));
    }
    if let Some(s) = &args.precision
        && parse_precision(s)? != c.precision
    {
        let file = match c.precision {
            Precision::Relative(v) => pct(v),
            Precision::Absolute(v) => format!("{v} pps"),
        };
        say(format!("--precision {s}"), file);
    }
    if let Some(d) = args.trial
        && d.as_secs_f64() != c.final_s
    {
        say(format!("--trial {d:?}"), secs_text(c.final_s));
    }
    if let Some(d) = args.search_trial
        && d.as_secs_f64() != c.search_s
    {
        say(format!("--search-trial {d:?}"), secs_text(c.search_s));
    }
    let opt_text = |v: Option<f64>| v.map_or("none".into(), |v| v.to_string());
    if let Some(v) = args.max_rate
        && Some(v) != c.max_rate
    {
        say(format!("--max-rate {v}"), opt_text(c.max_rate));
    }
    if let Some(v) = args.min_rate
        && v != c.min_rate
    {
        say(
            format!("--min-rate {v}"),
            opt_text((c.min_rate != 0.0).then_some(c.min_rate)),
        );
    }
    if let Some(v) = args.line_rate
        && Some(v) != h.line_rate_mbps
    {
        say(format!("--line-rate {v}"), opt_text(h.line_rate_mbps));
    }
    if let Some(n) = args.repeat
        && n != h.repeat
    {
        say(format!("--repeat {n}"), h.repeat.to_string());
    }
    if args.no_latency && h.latency {
        say("--no-latency".into(), "latency trials".into());
    }
    if !differ.is_empty() {
        bail!(
            "--resume {}: given beside --resume, {} differ from the file's settings. A resumed search keeps them: leave these out, or start a new search",
            path.display(),
            differ.join(", ")
        );
    }
    Ok(())
}

/// The search of a frame size failed (its trials gave no report: a bad run option, a
/// set-up that failed); ndr then ends with an error after its table.
#[derive(Debug, thiserror::Error)]
#[error("{} of {} frame-size searches failed ({}); the first: {first}", .failed.len(), .of, .failed.iter().map(u32::to_string).collect::<Vec<_>>().join(", "))]
pub struct SearchesFailed {
    pub failed: Vec<u32>,
    pub of: usize,
    pub first: String,
}

fn failed_searches(run: &NdrRun) -> Option<SearchesFailed> {
    let failed: Vec<&SizeResult> = run.sizes.iter().filter(|s| s.failed.is_some()).collect();
    let first =
        crate::text::printable(failed.first()?.failed.as_deref().unwrap_or_default()).into_owned();
    Some(SearchesFailed {
        failed: failed.iter().map(|s| s.size).collect(),
        of: run.sizes.len(),
        first,
    })
}

/// `upktgen ndr`.
pub fn run_cli(args: &NdrArgs, stop: &Arc<AtomicBool>) -> Result<Exit> {
    let (header, stored, path) = match &args.resume {
        Some(p) => {
            let (h, t) = read_results(p)?;
            check_given_beside_resume(args, &h, p)?;
            resume::check_run_options(p, &h.run_args, &run_options(args))?;
            plan_run_args(&h)?;
            crate::errln!(
                "upktgen ndr: resuming {} ({} trials recorded; its settings are used)",
                p.display(),
                t.len()
            );
            (h, t, p.clone())
        }
        None => {
            let h = header_from(args)?;
            plan_run_args(&h)?;
            let path = match (&args.results, &args.out) {
                (Some(p), _) => p.clone(),
                (None, Some(d)) => d.join("trials.jsonl"),
                (None, None) => PathBuf::from(format!(
                    "upktgen-ndr-{}.jsonl",
                    crate::sys::realtime_ns() / 1_000_000_000
                )),
            };
            (h, Vec::new(), path)
        }
    };
    // A session directory (src/outdir.rs): refused when it holds what upktgen cannot prove
    // it wrote; the results file in it is this search's (or the resumed one's).
    let session = match &args.out {
        Some(d) => Some(crate::outdir::SessionDir::open(
            d,
            "--out",
            &["trials.jsonl"],
        )?),
        None => None,
    };
    let exe = std::env::current_exe().context("finding the upktgen executable")?;
    let mut file = Journal::new(
        path.clone(),
        crate::schema::NDR_RESULTS,
        &header,
        crate::schema::NDR_TRIAL,
        &stored,
    )?;
    crate::errln!("upktgen ndr: every trial goes to {}", path.display());
    let mut runner = trial::ChildTrials { exe, n: 0 };
    let (sizes, trials, interrupted) =
        drive_with(&header, stored, stop, &mut runner, |all| file.save(all))?;
    // Exactly the trials used (a resumed file's unmatched rest is dropped even when no new
    // trial ran).
    file.save(&trials)?;
    let run = NdrRun {
        header,
        results_file: path,
        interrupted,
        sizes,
        trials,
    };
    if args.json {
        crate::out::println(crate::schema::to_pretty(crate::schema::NDR, &run)?)?;
    } else {
        crate::out::print(report::table(&run))?;
    }
    if let Some(session) = session {
        let d = session.path().to_path_buf();
        let (w, removed) = report::write_dir(session, &run)?;
        crate::errln!("[ndr] wrote {} in {}", w.join(", "), d.display());
        crate::experiment::writer::removed_note("[ndr]", &d, &removed);
    }
    if !interrupted && let Some(e) = failed_searches(&run) {
        return Err(e.into());
    }
    Ok(if interrupted {
        Exit::Interrupted
    } else {
        Exit::Done
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_input_is_refused_with_the_option_named() {
        assert!(parse_sizes("64,1518").is_ok());
        for (s, want) in [
            ("63", "outside 64"),
            ("64,abc", "'abc'"),
            ("10000", "9018"),
            ("64,64", "twice"),
            ("", "at least one"),
        ] {
            let e = parse_sizes(s).unwrap_err().to_string();
            assert!(e.contains(want), "{s}: {e}");
        }
        assert_eq!(parse_precision("1%").unwrap(), Precision::Relative(0.01));
        assert_eq!(
            parse_precision("500pps").unwrap(),
            Precision::Absolute(500.0)
        );
        for s in ["0", "0%", "-1%", "x", "60%"] {
            assert!(parse_precision(s).is_err(), "{s}");
        }
        assert_eq!(parse_pct("--loss", "0.5%").unwrap(), 0.005);
        assert!(parse_pct("--loss", "100").is_err());
        use clap::Parser;
        let parse = |extra: &[&str]| {
            let mut v = vec!["upktgen", "ndr"];
            v.extend_from_slice(extra);
            let c = crate::cli::Cli::try_parse_from(v).unwrap();
            let Some(crate::cli::Cmd::Ndr(a)) = c.cmd else {
                panic!()
            };
            header_from(&a)
        };
        let e = parse(&["--loss", "1%", "--pdr", "0.5%"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("--pdr 0.5% is below --loss 1%"), "{e}");
        let e = parse(&["--", "--ratep", "5"]).unwrap_err().to_string();
        assert!(e.contains("--ratep: ndr sets it"), "{e}");
        let e = parse(&["--backend", "nope"]).unwrap_err().to_string();
        assert!(e.contains("run options --backend nope"), "{e}");
        let h = parse(&["--sizes", "64,128", "--trial", "2s", "--backend", "tx_ring"]).unwrap();
        assert_eq!(h.run_args, ["--backend", "tx_ring"]);
        assert_eq!(h.config.search_s, 1.0);
        assert_eq!(h.config.pdr, Some(0.005));
    }

    /// A config's flow from p1 to p2: `size` bytes at `pps`.
    fn flow(n: &str, size: u32, pps: u32) -> String {
        format!(
            "  - name: {n}\n    tx_rx: {{port: {{tx_name: p1, rx_names: [p2]}}}}\n    packet: [{{ethernet: {{}}}}, {{ipv4: {{}}}}, {{udp: {{}}}}]\n    size: {{fixed: {size}}}\n    rate: {{pps: {pps}}}\n"
        )
    }

    /// `ndr --config FILE EXTRA...`'s header.
    fn config_header(file: &str, extra: &[&str]) -> Result<Header> {
        use clap::Parser;
        let mut v = vec!["upktgen", "ndr", "--config", file];
        v.extend_from_slice(extra);
        let c = crate::cli::Cli::try_parse_from(v).unwrap();
        let Some(crate::cli::Cmd::Ndr(a)) = c.cmd else {
            panic!()
        };
        header_from(&a)
    }

    #[test]
    fn a_config_is_one_size_its_flows_mean_and_needs_a_ceiling() {
        use clap::Parser;
        let f =
            std::env::temp_dir().join(format!("upktgen-ndr-config-{}.yaml", std::process::id()));
        // 1,000 pps of 64 bytes, 2,000 of 512 and 3,000 of 1,400: a mean of 5,288,000 /
        // 6,000 = 881.3 bytes, rounded up.
        std::fs::write(
            &f,
            format!(
                "ports:\n  - {{name: p1, location: lab:tx}}\n  - {{name: p2, location: lab:rx}}\nflows:\n{}{}{}",
                flow("a", 64, 1000),
                flow("b", 512, 2000),
                flow("c", 1400, 3000)
            ),
        )
        .unwrap();
        let fs = f.to_str().unwrap();
        let parse = |extra: &[&str]| config_header(fs, extra);
        let h = parse(&["--max-rate", "40000", "--", "--lab", "dut"]).unwrap();
        assert_eq!(h.sizes, [882]);
        assert_eq!(h.run_args, ["--config", fs, "--lab", "dut"]);
        // Its trials: the flows scaled to the trial's rate, no frame size of ndr's.
        let q = Request {
            rate: Some(25000.4),
            duration_s: 0.5,
            purpose: Purpose::Search,
        };
        assert_eq!(
            trial::child_args(881, &q, &h.run_args),
            [
                "run",
                "--json",
                "--no-live",
                "--duration",
                "500ms",
                "--config-rate",
                "25000",
                "--config",
                fs,
                "--lab",
                "dut"
            ]
        );
        let e = parse(&["--sizes", "64", "--max-rate", "1000"])
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "--sizes 64: not with --config, whose flows give the frame sizes (the search is on their aggregate)"
        );
        let e = parse(&[]).unwrap_err().to_string();
        assert!(e.starts_with("--config: give --max-rate"), "{e}");
        assert!(parse(&["--line-rate", "1000"]).is_ok());
        // Given among the run options instead: the same search.
        let c = crate::cli::Cli::try_parse_from([
            "upktgen",
            "ndr",
            "--max-rate",
            "40000",
            "--",
            "--config",
            fs,
        ])
        .unwrap();
        let Some(crate::cli::Cmd::Ndr(a)) = c.cmd else {
            panic!()
        };
        let h2 = header_from(&a).unwrap();
        assert_eq!(
            (h2.sizes, h2.run_args),
            (vec![882], vec!["--config".to_string(), fs.to_string()])
        );
        // The trial sets the flows' total rate itself.
        let e = parse(&["--max-rate", "1000", "--", "--config-rate", "5"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("--config-rate: ndr sets it"), "{e}");
        let _ = std::fs::remove_file(&f);
    }

    #[test]
    fn a_configs_layer1_speed_is_its_ceiling_unless_given_otherwise() {
        let f =
            std::env::temp_dir().join(format!("upktgen-ndr-layer1-{}.yaml", std::process::id()));
        // 10 pps of 64 bytes and 30 of 1,400: a mean of 1,066 bytes; p1's line 10 Mb/s.
        std::fs::write(
            &f,
            format!(
                "ports:\n  - {{name: p1, location: lab:tx}}\n  - {{name: p2, location: lab:rx}}\nlayer1:\n  - {{name: l1, port_names: [p1], speed: speed_10_fd_mbps}}\nflows:\n{}{}",
                flow("a", 64, 10),
                flow("b", 1400, 30)
            ),
        )
        .unwrap();
        let fs = f.to_str().unwrap();
        let parse = |extra: &[&str]| config_header(fs, extra);
        // No --max-rate needed: the ceiling is 10 Mb/s at 1,066 + 20 bytes on the wire.
        let h = parse(&[]).unwrap();
        assert_eq!(h.sizes, [1066]);
        assert_eq!((h.line_rate_mbps, h.config.max_rate), (Some(10.0), None));
        let sp = space_of(&h);
        assert_eq!(sp.config_for(1066).max_rate, Some(1151.0));
        // The search's first trial asks it.
        let mut s = search::Search::new(sp.config_for(1066));
        assert_eq!(s.next_trial().unwrap().rate, Some(1151.0));
        // --max-rate sets the ceiling trial (the line rate still gives the table's line %);
        // --line-rate replaces the config's speed (the link as it is).
        let h = parse(&["--max-rate", "500"]).unwrap();
        assert_eq!(space_of(&h).config_for(1066).max_rate, Some(500.0));
        assert_eq!(h.line_rate_mbps, Some(10.0));
        // Above the port's line (1,151 pps here) a trial would be refused: said at once.
        let e = parse(&["--max-rate", "2000"]).unwrap_err().to_string();
        assert!(
            e.starts_with("--max-rate 2000: above the sending port's layer1 speed, 10 Mb/s, at the flows' mean frame of 1066.0 bytes (1151 pps)"),
            "{e}"
        );
        // So is a --line-rate above the config's speed (run holds the trials to it).
        let e = parse(&["--line-rate", "100"]).unwrap_err().to_string();
        assert!(
            e.starts_with(
                "--line-rate 100: above the config's layer1 speed for its sending port, 10 Mb/s"
            ),
            "{e}"
        );
        let h = parse(&["--line-rate", "1"]).unwrap();
        assert_eq!(h.line_rate_mbps, Some(1.0));
        assert_eq!(space_of(&h).config_for(1066).max_rate, Some(115.0));
        // Checked again as a resumed header is: a layer1 ceiling needs no option.
        check_header(&parse(&[]).unwrap()).unwrap();
        let _ = std::fs::remove_file(&f);
    }

    /// A results file of `header` (and `trials`), written for a test.
    fn results_file(
        tag: &str,
        header: &serde_json::Value,
        trials: &[serde_json::Value],
    ) -> PathBuf {
        let p =
            std::env::temp_dir().join(format!("upktgen-ndr-{tag}-{}.jsonl", std::process::id()));
        let mut text = header.to_string() + "\n";
        for t in trials {
            text += &(t.to_string() + "\n");
        }
        std::fs::write(&p, text).unwrap();
        p
    }

    fn hostile_header() -> serde_json::Value {
        serde_json::json!({"schema": "upktgen.ndr-results/1", "upktgen_ndr": 1, "sizes": [64],
            "repeat": 1, "latency": false, "line_rate_mbps": null,
            "config": {"loss": 0.0, "pdr": null, "precision": {"relative": 0.02},
                       "max_rate": 1000.0, "min_rate": 0.0, "search_s": 0.25, "final_s": 0.5,
                       "tolerance": 0.02},
            "run_args": []})
    }

    #[test]
    fn a_results_files_header_is_checked_as_the_command_line_is() {
        let p = results_file("ok", &hostile_header(), &[]);
        read_results(&p).unwrap();
        std::fs::remove_file(&p).unwrap();
        for (path, value, want) in [
            (
                "/sizes",
                serde_json::json!([0]),
                "--sizes 0: 0 is outside 64 to 9018",
            ),
            ("/sizes", serde_json::json!([]), "at least one frame size"),
            ("/repeat", serde_json::json!(0), "--repeat 0"),
            (
                "/config/max_rate",
                serde_json::json!(-1000.0),
                "--max-rate -1000",
            ),
            (
                "/config/max_rate",
                serde_json::json!(1e300),
                "--max-rate 1e300",
            ),
            ("/config/min_rate", serde_json::json!(-5.0), "--min-rate -5"),
            (
                "/config/search_s",
                serde_json::json!(-0.25),
                "--search-trial -0.25 s",
            ),
            (
                "/config/final_s",
                serde_json::json!(1e300),
                "--trial 1e300 s: longer than 24 h",
            ),
            ("/config/loss", serde_json::json!(-0.5), "--loss"),
            (
                "/config/tolerance",
                serde_json::json!(2.0),
                "--rate-tolerance",
            ),
            (
                "/config/precision",
                serde_json::json!({"relative": 1e-300}),
                "--precision",
            ),
            ("/line_rate_mbps", serde_json::json!(-1.0), "--line-rate -1"),
            (
                "/run_args",
                serde_json::json!(["--ratep", "5"]),
                "--ratep: ndr sets it",
            ),
            (
                "/run_args",
                serde_json::json!(["--pcap", "x.pcap"]),
                "--pcap: ndr sets it",
            ),
            (
                "/run_args",
                serde_json::json!(["--backend", "nope"]),
                "run options --backend nope",
            ),
        ] {
            let mut h = hostile_header();
            *h.pointer_mut(path).unwrap() = value;
            let p = results_file("bad", &h, &[]);
            let e = read_results(&p).unwrap_err().to_string();
            std::fs::remove_file(&p).unwrap();
            assert!(
                e.contains("the header holds what ndr refuses on its command line")
                    && e.contains(want),
                "{path}: {e}"
            );
        }
    }

    #[test]
    fn a_trial_record_that_no_trial_could_give_is_refused() {
        let t = serde_json::json!({"size": 64, "round": 1,
            "request": {"rate": 1000.0, "duration_s": 0.25, "purpose": "ceiling"},
            "obs": {"requested": 1000.0, "duration_s": 0.25, "achieved": 1000.0, "sent": 250,
                    "dut_lost": 0, "receiver_lost": 0, "sender_lost": 0, "error": null},
            "figures": Figures::default(), "seconds": 1.5});
        let p = results_file("rec", &hostile_header(), std::slice::from_ref(&t));
        let (_, trials) = read_results(&p).unwrap();
        std::fs::remove_file(&p).unwrap();
        assert_eq!(trials.len(), 1);
        for (path, value, want) in [
            (
                "/obs/dut_lost",
                serde_json::json!(u64::MAX),
                "lost more frames",
            ),
            ("/obs/dut_lost", serde_json::json!(251), "lost more frames"),
            ("/round", serde_json::json!(7), "round 7"),
            ("/size", serde_json::json!(128), "frame size 128"),
            ("/request/duration_s", serde_json::json!(1e300), "duration"),
            ("/obs/requested", serde_json::json!(5.0), "rate"),
            ("/seconds", serde_json::json!(-1.0), "wall time"),
        ] {
            let mut t = t.clone();
            *t.pointer_mut(path).unwrap() = value;
            let p = results_file("rec-bad", &hostile_header(), &[t]);
            let e = read_results(&p).unwrap_err().to_string();
            std::fs::remove_file(&p).unwrap();
            assert!(
                e.contains(":2: not a trial ndr could have recorded") && e.contains(want),
                "{path}: {e}"
            );
        }
    }

    #[test]
    fn options_beside_resume_must_match_the_file_or_are_refused() {
        use clap::Parser;
        let h: Header = serde_json::from_value(hostile_header()).unwrap();
        let args = |extra: &[&str]| {
            let mut v = vec!["upktgen", "ndr", "--resume", "r.jsonl"];
            v.extend_from_slice(extra);
            let c = crate::cli::Cli::try_parse_from(v).unwrap();
            let Some(crate::cli::Cmd::Ndr(a)) = c.cmd else {
                panic!()
            };
            a
        };
        let p = Path::new("r.jsonl");
        // The file's own values, and the per-invocation options, are fine.
        for ok in [
            &[][..],
            &[
                "--sizes",
                "64",
                "--trial",
                "500ms",
                "--search-trial",
                "250ms",
            ],
            &[
                "--precision",
                "2%",
                "--pdr",
                "none",
                "--no-latency",
                "--max-rate",
                "1000",
            ],
            &["--json", "--out", "d"],
        ] {
            check_given_beside_resume(&args(ok), &h, p).unwrap();
        }
        let e = check_given_beside_resume(
            &args(&["--sizes", "128", "--trial", "1s", "--repeat", "3"]),
            &h,
            p,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("--sizes 128 (the file's: 64)")
                && e.contains("--trial 1s (the file's: 0.5 s)")
                && e.contains("--repeat 3 (the file's: 1)"),
            "{e}"
        );
    }

    #[test]
    fn absurd_values_are_refused_naming_the_option() {
        use clap::Parser;
        let parse = |extra: &[&str]| {
            let mut v = vec!["upktgen", "ndr"];
            v.extend_from_slice(extra);
            let c = crate::cli::Cli::try_parse_from(v).unwrap();
            let Some(crate::cli::Cmd::Ndr(a)) = c.cmd else {
                panic!()
            };
            header_from(&a).unwrap_err().to_string()
        };
        for (args, want) in [
            (
                &["--max-rate", "1e300"][..],
                "--max-rate 1e300: must be at least 1 and at most 1000000000",
            ),
            (&["--trial", "1ns"], "--trial 1e-9 s: shorter than 100 ms"),
            (&["--trial", "48h"], "--trial 172800 s: longer than 24 h"),
            (
                &["--precision", "1e-300%"],
                "--precision 1e-300%: must be above 0 % (at least 0.001 %)",
            ),
            (&["--line-rate", "1e300"], "--line-rate 1e300"),
        ] {
            let e = parse(args);
            assert!(e.contains(want), "{args:?}: {e}");
        }
    }

    #[test]
    fn a_failed_search_is_an_error_after_the_table() {
        let h = header(vec![64, 128], 1);
        let stop = AtomicBool::new(false);
        let failing = |_: u32, q: &Request| {
            Some((
                Obs {
                    requested: q.rate,
                    duration_s: q.duration_s,
                    error: Some("no such device".into()),
                    ..Obs::default()
                },
                Figures::default(),
                0.1,
            ))
        };
        let (sizes, trials, _) = drive(&h, vec![], &stop, failing, |_| Ok(())).unwrap();
        let e = failed_searches(&run_of(h.clone(), sizes, trials))
            .unwrap()
            .to_string();
        assert!(
            e.starts_with("2 of 2 frame-size searches failed (64, 128)"),
            "{e}"
        );
        assert!(e.ends_with("no such device"), "{e}");
        let (sizes, trials, _) =
            drive(&h, vec![], &stop, limiter(100_000.0, 1), |_| Ok(())).unwrap();
        assert!(failed_searches(&run_of(h, sizes, trials)).is_none());
    }

    #[test]
    fn line_rate_in_packets() {
        // 10 Gb/s of 64-byte frames: 14.88 Mpps.
        assert_eq!(line_pps(64, 10_000.0).round(), 14_880_952.0);
        assert_eq!(line_pps(64, 100.0).round(), 148_810.0);
    }

    /// A token bucket of `r` pps (burst 100) behind a sender of 500 kpps, with jitter
    /// (`seed`) in what the sender achieves.
    fn limiter(r: f64, seed: u64) -> impl FnMut(u32, &Request) -> Option<(Obs, Figures, f64)> {
        limiter_seen_by(r, seed, f64::INFINITY)
    }

    /// [`limiter`] seen through a receiver whose socket takes `rx_max` pps and drops the rest.
    fn limiter_seen_by(
        r: f64,
        seed: u64,
        rx_max: f64,
    ) -> impl FnMut(u32, &Request) -> Option<(Obs, Figures, f64)> {
        let mut rng = crate::rng::Rng::from_state(seed);
        move |_, q| {
            let j = 1.0 + (rng.signed_unit() * 0.001);
            let achieved = q.rate.unwrap_or(500_000.0).min(500_000.0) * j;
            let sent = (achieved * q.duration_s) as u64;
            let passed = (sent as f64).min(r * q.duration_s + 100.0) as u64;
            let receiver_lost = (((achieved - rx_max) * q.duration_s).max(0.0) as u64).min(passed);
            let obs = Obs {
                requested: q.rate,
                duration_s: q.duration_s,
                achieved,
                sent,
                dut_lost: sent - passed,
                receiver_lost,
                ..Obs::default()
            };
            Some((obs, Figures::default(), q.duration_s + 1.0))
        }
    }

    fn header(sizes: Vec<u32>, repeat: u32) -> Header {
        Header {
            upktgen_ndr: FORMAT,
            sizes,
            repeat,
            latency: true,
            config: Config {
                loss: 0.0,
                pdr: Some(0.005),
                precision: Precision::Relative(0.01),
                max_rate: None,
                min_rate: 0.0,
                search_s: 1.0,
                final_s: 10.0,
                tolerance: 0.02,
            },
            line_rate_mbps: None,
            run_args: vec![],
        }
    }

    fn run_of(h: Header, sizes: Vec<SizeResult>, trials: Vec<TrialRecord>) -> NdrRun {
        NdrRun {
            header: h,
            results_file: PathBuf::from("x.jsonl"),
            interrupted: false,
            sizes,
            trials,
        }
    }

    #[test]
    fn a_search_interrupted_and_resumed_ends_as_one_that_ran_through() {
        let h = header(vec![64, 512], 1);
        let stop = AtomicBool::new(false);
        let (whole, all, int) =
            drive(&h, vec![], &stop, limiter(100_000.0, 1), |_| Ok(())).unwrap();
        assert!(!int);
        // Latency trials at 10/50/90 % of each size's NDR.
        assert_eq!(
            whole.iter().map(|s| s.latency_trials.len()).sum::<usize>(),
            6
        );
        // Interrupted after 3 trials...
        let mut sim = limiter(100_000.0, 1);
        let mut n = 0;
        let (part, some, int) = drive(
            &h,
            vec![],
            &stop,
            |s, q| {
                n += 1;
                if n > 3 { None } else { sim(s, q) }
            },
            |_| Ok(()),
        )
        .unwrap();
        assert!(int);
        assert_eq!(some.len(), 3);
        assert!(part.last().unwrap().targets.len() < 2);
        // ... and resumed: the three are not run again, and the end is the same.
        let mut sim = limiter(100_000.0, 1);
        let mut skip = 3;
        let mut ran = 0;
        let (again, all2, int) = drive(
            &h,
            some,
            &stop,
            |s, q| {
                // The simulation's jitter stream, advanced past the three recorded.
                while skip > 0 {
                    skip -= 1;
                    let _ = sim(s, q);
                }
                ran += 1;
                sim(s, q)
            },
            |_| Ok(()),
        )
        .unwrap();
        assert!(!int);
        assert_eq!(ran + 3, all2.len());
        assert_eq!(all2.len(), all.len());
        let rate = |v: &[SizeResult], k: usize| v[k].targets[0].rate;
        assert_eq!(rate(&again, 0), rate(&whole, 0));
        assert!(rate(&again, 1).is_some());
        // The table of a finished search names each size and its bound.
        let t = report::table(&run_of(h, whole, all));
        assert!(t.contains("   64     1 "), "{t}");
        assert!(t.contains("DUT"), "{t}");
    }

    #[test]
    fn a_receiver_bound_result_says_so_in_the_table() {
        // A 100 kpps limiter seen through a receiver whose socket takes 60 kpps: the receiver
        // bounds every target, and the table names it, its cap and the drops there.
        let h = header(vec![64], 1);
        let stop = AtomicBool::new(false);
        let sim = limiter_seen_by(100_000.0, 1, 60_000.0);
        let (sizes, trials, _) = drive(&h, vec![], &stop, sim, |_| Ok(())).unwrap();
        for t in &sizes[0].targets {
            assert_eq!(t.bound, search::Bound::Receiver, "{t:?}");
            assert!(t.rate.unwrap() <= 60_000.0, "{t:?}");
        }
        let t = report::table(&run_of(h, sizes, trials));
        let row = t
            .lines()
            .find(|l| l.trim_start().starts_with("64 "))
            .unwrap();
        assert!(row.trim_end().ends_with("receiver"), "{t}");
        assert!(
            t.contains("NDR: bounded by the receiver: it kept up at"),
            "{t}"
        );
        assert!(
            t.contains("the receiver's own socket dropped frames in 2 of"),
            "{t}"
        );
    }

    #[test]
    fn compare_gives_the_change_in_ndr_with_an_interval() {
        let stop = AtomicBool::new(false);
        let h = header(vec![64], 3);
        let (sa, ta, _) = drive(&h, vec![], &stop, limiter(100_000.0, 1), |_| Ok(())).unwrap();
        let (sb, tb, _) = drive(&h, vec![], &stop, limiter(110_000.0, 2), |_| Ok(())).unwrap();
        let a = run_of(h.clone(), sa, ta);
        let b = run_of(h, sb, tb);
        let c = report::size_changes(&a, &b);
        assert_eq!(c.len(), 1);
        assert_eq!((c[0].a.len(), c[0].b.len()), (3, 3));
        let (change, ci, how) = c[0].change.unwrap();
        assert_eq!(how, "95 % bootstrap");
        assert!((change - 10.0).abs() < 2.5, "{change}");
        assert!(ci.0 <= change && change <= ci.1);
    }
}
