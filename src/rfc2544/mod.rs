//! `upktgen rfc2544`: RFC 2544's throughput, latency, frame loss rate and back-to-back frames
//! per frame size (docs/rfc2544.md), on the experiment core: its suite planner
//! ([`crate::experiment::suite`]), its child runner, its results file and resume, its compare.
//!
//! - [`trial`]: one trial as a child `upktgen run --json`, its loss attributed and its delays
//!   (with PDV and IPDV) read from the receiver's report.
//! - [`report`]: the RFC's tables per frame size, JSON, CSV, SVG plots, and `compare`.

pub mod check;
pub mod report;
pub mod trial;

use crate::exit::Exit;
use crate::experiment::resume::Replay;
pub use crate::experiment::suite::{Delay, Record, SizeOutcome, SuiteConfig, SuitePlanner, Test};
use crate::experiment::writer::Journal;
use crate::ndr::Header as SearchHeader;
use anyhow::{Context, Result, anyhow};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

pub use crate::cli::rfc2544::Rfc2544Args;

/// The format of a results file's header.
pub const FORMAT: u32 = 1;
/// The results file in an `--out` directory.
pub const RESULTS_FILE: &str = "rfc2544.jsonl";

/// The first line of a results file: the throughput search's settings (ndr's) and the suite's.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Header {
    pub upktgen_rfc2544: u32,
    pub search: SearchHeader,
    pub suite: SuiteConfig,
}

/// A whole run of `upktgen rfc2544` (what --json prints).
#[derive(Debug, Clone, Serialize)]
pub struct Rfc2544Run {
    pub header: Header,
    pub results_file: PathBuf,
    pub interrupted: bool,
    pub sizes: Vec<SizeOutcome>,
    /// Every size's tests summarised (what the tables and CSV show).
    pub summaries: Vec<report::SizeSummary>,
    pub trials: Vec<Record>,
}

/// A run with its summaries.
pub fn finish(
    header: Header,
    results_file: PathBuf,
    interrupted: bool,
    sizes: Vec<SizeOutcome>,
    trials: Vec<Record>,
) -> Rfc2544Run {
    let mut run = Rfc2544Run {
        header,
        results_file,
        interrupted,
        sizes,
        summaries: Vec::new(),
        trials,
    };
    run.summaries = run.sizes.iter().map(|s| report::summary(&run, s)).collect();
    run
}

/// The suite's planner of a header.
fn planner(h: &Header) -> SuitePlanner {
    SuitePlanner::new(crate::ndr::space_of(&h.search), h.suite.clone())
}

/// Runs every size's tests, trial by trial, on the experiment core: `stored` answered again
/// while they match, `runner` for the others.
pub fn drive(
    header: &Header,
    stored: Vec<Record>,
    stop: &AtomicBool,
    runner: &mut dyn crate::experiment::Runner<Record>,
    saved: impl FnMut(&[Record]) -> Result<()>,
) -> Result<(Vec<SizeOutcome>, Vec<Record>, bool)> {
    let mut p = planner(header);
    let mut replay = Replay::new(stored, Record::answers, |t, rest| {
        if let crate::experiment::Coords::Test { test, size, .. } = t.coords {
            crate::errln!(
                "upktgen rfc2544: the results file's trials stop matching the tests at size {size} ({test}); the rest ({rest}) are not used"
            );
        }
    });
    let d = crate::experiment::drive(&mut p, runner, &mut replay, stop, saved)?;
    Ok((p.results(), d.outcomes, d.interrupted))
}

/// Reads a results file (through the bounded reader), its header and every record checked.
pub fn read_results(path: &Path) -> Result<(Header, Vec<Record>)> {
    let j = crate::experiment::resume::Journal {
        cmd: "rfc2544",
        file: "an rfc2544 results file",
        header: crate::schema::RFC2544_RESULTS,
        record: crate::schema::RFC2544_TRIAL,
        record_what: "an rfc2544 trial record",
        format: FORMAT,
    };
    crate::experiment::resume::read_journal(
        path,
        &j,
        |h: &Header| h.upktgen_rfc2544,
        check::header,
        check::record,
    )
}

/// Whether `path` starts like an rfc2544 results file.
pub fn is_results_file(path: &Path) -> bool {
    use std::io::Read;
    let mut buf = [0u8; 48];
    let n = crate::input::open_regular(path)
        .ok()
        .and_then(|mut f| f.read(&mut buf).ok())
        .unwrap_or(0);
    buf[..n].starts_with(b"{\"schema\":\"upktgen.rfc2544-results/")
}

/// rfc2544's results for `upktgen compare`.
pub struct Rfc2544Results;

/// rfc2544's kind of results.
pub const RESULTS: Rfc2544Results = Rfc2544Results;

impl crate::experiment::compare::Results for Rfc2544Results {
    fn file_in_dir(&self) -> &'static str {
        RESULTS_FILE
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

/// A results file's tests, rebuilt from its records (no trial is run).
pub fn rebuild(path: &Path) -> Result<Rfc2544Run> {
    let (header, stored) = read_results(path)?;
    let stop = AtomicBool::new(true);
    let mut none = crate::experiment::FnRunner(|_: &crate::experiment::Trial| {
        crate::experiment::Ran::Interrupted(None)
    });
    let (sizes, trials, interrupted) = drive(&header, stored, &stop, &mut none, |_| Ok(()))?;
    Ok(finish(
        header,
        path.to_path_buf(),
        interrupted,
        sizes,
        trials,
    ))
}

/// `upktgen rfc2544`.
pub fn run_cli(args: &Rfc2544Args, stop: &Arc<AtomicBool>) -> Result<Exit> {
    let (header, stored, path) = match &args.ndr.resume {
        Some(p) => {
            let (h, t) = read_results(p)?;
            check::given_beside_resume(args, &h, p)?;
            crate::experiment::resume::check_run_options(p, &h.search.run_args, &args.ndr.run)?;
            check::links(&h)?;
            crate::ndr::plan_run_args(&h.search)?;
            crate::errln!(
                "upktgen rfc2544: resuming {} ({} trials recorded; its settings are used)",
                p.display(),
                t.len()
            );
            (h, t, p.clone())
        }
        None => {
            let h = check::header_from(args)?;
            check::links(&h)?;
            crate::ndr::plan_run_args(&h.search)?;
            let path = match (&args.ndr.results, &args.ndr.out) {
                (Some(p), _) => p.clone(),
                (None, Some(d)) => d.join(RESULTS_FILE),
                (None, None) => PathBuf::from(format!(
                    "upktgen-rfc2544-{}.jsonl",
                    crate::sys::realtime_ns() / 1_000_000_000
                )),
            };
            (h, Vec::new(), path)
        }
    };
    let session = match &args.ndr.out {
        Some(d) => Some(crate::outdir::SessionDir::open(
            d,
            "--out",
            &[RESULTS_FILE],
        )?),
        None => None,
    };
    let exe = std::env::current_exe().context("finding the upktgen executable")?;
    let mut file = Journal::new(
        path.clone(),
        crate::schema::RFC2544_RESULTS,
        &header,
        crate::schema::RFC2544_TRIAL,
        &stored,
    )?;
    crate::errln!("upktgen rfc2544: every trial goes to {}", path.display());
    let mut runner = trial::ChildTrials { exe, n: 0 };
    let (sizes, trials, interrupted) =
        drive(&header, stored, stop, &mut runner, |all| file.save(all))?;
    file.save(&trials)?;
    let run = finish(header, path, interrupted, sizes, trials);
    if args.ndr.json {
        crate::out::println(crate::schema::to_pretty(crate::schema::RFC2544, &run)?)?;
    } else {
        crate::out::print(report::tables(&run))?;
    }
    if let Some(session) = session {
        let d = session.path().to_path_buf();
        let (w, removed) = report::write_dir(session, &run)?;
        crate::errln!("[rfc2544] wrote {} in {}", w.join(", "), d.display());
        crate::experiment::writer::removed_note("[rfc2544]", &d, &removed);
    }
    let failed: Vec<&SizeOutcome> = run
        .sizes
        .iter()
        .filter(|s| s.notes.iter().any(|n| n.contains("failed")))
        .collect();
    if !interrupted && let Some(first) = failed.first() {
        anyhow::bail!(
            "{} of {} frame sizes had a test fail ({}); the first: {}",
            failed.len(),
            run.sizes.len(),
            failed
                .iter()
                .map(|s| s.size.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            crate::text::printable(
                first
                    .notes
                    .iter()
                    .find(|n| n.contains("failed"))
                    .map(String::as_str)
                    .unwrap_or_default()
            )
        );
    }
    Ok(if interrupted {
        Exit::Interrupted
    } else {
        Exit::Done
    })
}
