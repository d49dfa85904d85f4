//! `upktgen sweep FILE`: run a matrix of configurations, repeated, and report it like the seed
//! (`Iteration K (label):` with the Cpu(s), Result and Interrupts lines), then a summary per
//! point, CSV/JSON of every run, SVG plots and an index.html; `upktgen compare`: A/B between
//! sets of runs with confidence intervals.
//!
//! - [`file`]: the TOML sweep file, errors with line numbers.
//! - [`points`]: expansion into points, each checked by the real option parser.
//! - [`env`]: what the sweep varies around a run (cpufreq clock, competing load).
//! - [`exec`]: child processes, interleaved repetitions, progress, Ctrl-C.
//! - [`metrics`], [`output`], [`compare`]: figures, files and plots, A/B statistics.
//!
//! See docs/sweep.md.

pub(crate) mod compare;
pub(crate) mod env;
pub(crate) mod exec;
pub(crate) mod file;
pub(crate) mod metrics;
pub(crate) mod output;
pub(crate) mod points;

pub use crate::cli::sweep::{CompareArgs, SweepArgs};
use crate::exit::Exit;
use crate::out::{self, OutputError};
use anyhow::{Context, Result, anyhow, bail};
use metrics::Metrics;
use output::RunsFile;
use std::io::IsTerminal;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// More runs than this need `--yes` (or a "y" on a terminal).
pub const MAX_RUNS_UNASKED: usize = 200;

fn cpufreq_for(
    spec: &file::Spec,
    pts: &[points::Point],
    root: &Path,
) -> Result<Option<env::CpuFreq>> {
    if pts.iter().all(|p| p.cpu_mhz.is_none()) {
        return Ok(None);
    }
    let l = &spec.lines;
    let line_of_value = |mhz: f64| -> usize {
        if let Some(i) = spec.base.iter().position(|(n, _)| n == points::CPU_MHZ) {
            return l.base[i].1;
        }
        if let Some(i) = spec
            .dimensions
            .iter()
            .position(|d| d.name == points::CPU_MHZ)
        {
            let d = &spec.dimensions[i];
            if let Some(k) = d.values.iter().position(|v| v.as_f64() == Some(mhz)) {
                return l.dims[i].1[k];
            }
            return l.dims[i].0;
        }
        l.sweep
    };
    let first = pts.iter().find_map(|p| p.cpu_mhz).unwrap_or(0.0);
    let f = env::CpuFreq::open(root).map_err(|e| l.at(line_of_value(first), e))?;
    for mhz in pts.iter().filter_map(|p| p.cpu_mhz) {
        f.check(mhz).map_err(|e| l.at(line_of_value(mhz), e))?;
    }
    Ok(Some(f))
}

fn confirm(total: usize, n_points: usize, reps: u32, yes: bool) -> Result<()> {
    if total <= MAX_RUNS_UNASKED || yes {
        return Ok(());
    }
    let what = format!("{total} runs ({n_points} points x {reps} repetitions)");
    if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
        crate::out::stderr(format_args!("upktgen sweep: {what}. Run them all? [y/N] "));
        let mut answer = String::new();
        std::io::stdin().read_line(&mut answer)?;
        if matches!(answer.trim(), "y" | "Y" | "yes") {
            return Ok(());
        }
        bail!("{what}: not confirmed");
    }
    bail!("{what}: more than {MAX_RUNS_UNASKED}; add --yes to run them");
}

fn print_comparison(c: &compare::Comparison) -> Result<(), OutputError> {
    out::println(c.sentence())?;
    if c.result.is_ok() {
        out::println(c.table())
    } else {
        out::println("")
    }
}

fn print_report(f: &RunsFile) -> Result<(), OutputError> {
    let s = output::summarise(f);
    out::println(output::summary_text(f, &s))?;
    let cmp = output::sweep_comparisons(f);
    if !cmp.is_empty() {
        out::println(format_args!(
            "Comparisons ([compare] {}):",
            f.spec
                .compare
                .as_ref()
                .map(|c| c.dimension.as_str())
                .unwrap_or("")
        ))?;
        for c in &cmp {
            print_comparison(c)?;
        }
    }
    Ok(())
}

/// Says which files of an earlier session in `dir` were removed (none: nothing).
fn removed_note(dir: &std::path::Path, removed: &[String]) {
    crate::experiment::writer::removed_note("[sweep]", dir, removed);
}

/// `upktgen sweep`.
pub fn run_cli(args: &SweepArgs, stop: &Arc<AtomicBool>) -> Result<Exit> {
    if let Some(dir) = &args.redraw {
        let f = output::read_runs(&dir.join("runs.json"))?;
        print_report(&f)?;
        let session = crate::outdir::SessionDir::open(dir, "--redraw", &["runs.json"])?;
        let (w, removed) = output::write_dir(session, &f, false)?;
        crate::errln!("[sweep] redrew {} in {}", w.join(", "), dir.display());
        removed_note(dir, &removed);
        return Ok(Exit::Done);
    }
    let path = args
        .file
        .as_ref()
        .ok_or_else(|| anyhow!("a sweep file is needed"))?;
    match prepare(args, path, stop) {
        Err(e) if e.is::<points::Interrupted>() => {
            crate::errln!("upktgen sweep: interrupted before running anything");
            Ok(Exit::Interrupted)
        }
        r => r,
    }
}

/// Parses `src` on a thread of its own, so that Ctrl-C ends the wait (the parse, bounded by
/// the file's cap, is left to end with the process).
fn parse_until(name: String, src: String, stop: &AtomicBool) -> Result<file::Spec> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(file::parse(&name, &src));
    });
    loop {
        match rx.recv_timeout(std::time::Duration::from_millis(20)) {
            Ok(r) => return r,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if stop.load(Ordering::Relaxed) {
                    bail!(points::Interrupted);
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                bail!("parsing the sweep file failed")
            }
        }
    }
}

/// Reads, checks and runs the sweep file at `path`.
fn prepare(args: &SweepArgs, path: &Path, stop: &Arc<AtomicBool>) -> Result<Exit> {
    let src = crate::input::read_text(path, crate::input::MAX_SWEEP_FILE, "a sweep file")
        .map_err(|e| anyhow!("reading {}: {e}", path.display()))?;
    // The size from the dimensions' sizes first (refused before any value is looked at),
    // then names and values, then the question, then the points; Ctrl-C ends each.
    let spec = parse_until(path.display().to_string(), src, stop)?;
    let (n_points, total) = points::size(&spec)?;
    points::check_until(&spec, stop)?;
    if !args.dry_run {
        confirm(total, n_points, spec.repetitions, args.yes)?;
    }
    let (pts, trials) = points::expand_until(&spec, stop)?;
    let freq = cpufreq_for(&spec, &pts, &args.cpufreq_root)?;
    if args.dry_run {
        out::println(format_args!(
            "{} points x {} repetitions = {total} runs of `upktgen {}`:",
            pts.len(),
            spec.repetitions,
            spec.command.name()
        ))?;
        for p in &pts {
            if stop.load(Ordering::Relaxed) {
                return Ok(Exit::Interrupted);
            }
            let mut extra = String::new();
            if p.load > 0 {
                extra += &format!(" with {} busy threads", p.load);
            }
            if let Some(m) = p.cpu_mhz {
                extra += &format!(" at {m} MHz");
            }
            out::println(format_args!(
                "{:>3}  {}: upktgen {}{extra}",
                p.index + 1,
                p.label,
                crate::text::shell_line(&p.args)
            ))?;
        }
        return Ok(Exit::Done);
    }
    let session = match &args.out {
        Some(dir) => Some(crate::outdir::SessionDir::open(dir, "--out", &[])?),
        None => None,
    };
    // Every point was checked by the plan as it was expanded: the grid holds them checked.
    let mut grid = crate::experiment::grid::Grid::new(trials, spec.repetitions)?;
    let exe = std::env::current_exe().context("finding the upktgen executable")?;
    let mut checkpoint = output::Checkpoint::new(session);
    // A line that cannot be printed stops the sweep as Ctrl-C does (the running child is
    // stopped and its lab removed); the error is returned once the runs have ended.
    let mut print_err: Option<OutputError> = None;
    let done = exec::run_all(&exe, &mut grid, &pts, freq.as_ref(), stop, |runs| {
        // runs.json first: what the terminal shows is then already on disk.
        checkpoint.save(&spec, &pts, runs);
        if let Some(r) = runs.last()
            && print_err.is_none()
            && let Err(e) = out::println(output::iteration_text(r))
        {
            print_err = Some(e);
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    })?;
    if let Some(e) = print_err {
        return Err(e.into());
    }
    let f = RunsFile {
        format: output::FORMAT,
        spec,
        points: pts,
        interrupted: done.interrupted,
        runs: done.records,
    };
    if f.interrupted {
        out::println(format_args!(
            "Interrupted after {} of {total} runs.\n",
            f.runs.len()
        ))?;
    }
    print_report(&f)?;
    if let Some(session) = checkpoint.into_dir() {
        let dir = session.path().to_path_buf();
        let (w, removed) = output::write_dir(session, &f, true)?;
        crate::errln!("[sweep] wrote {} in {}", w.join(", "), dir.display());
        removed_note(&dir, &removed);
    }
    Ok(if f.interrupted {
        Exit::Interrupted
    } else {
        Exit::Done
    })
}

/// A document given to `compare`.
enum Doc {
    Sweep(Box<RunsFile>),
    Runs(Vec<Metrics>),
}

fn load(path: &Path) -> Result<Doc> {
    let v: serde_json::Value =
        crate::input::read_json(path, crate::input::MAX_JSON, "a JSON document")?;
    let name = path.display().to_string();
    let kind = crate::schema::kind_of(&name, &v)?;
    let (sweep, run, sim) = (
        crate::schema::kind(crate::schema::SWEEP),
        crate::schema::kind(crate::schema::RUN),
        crate::schema::kind(crate::schema::SIM),
    );
    if let Some(k) = kind.filter(|k| ![sweep, run, sim].contains(k)) {
        bail!(
            "{name}: {} document (\"{}\"): compare takes a sweep's runs.json, `run --json` or `sim --json` documents (or an array of them), or ndr results files",
            crate::schema::a_kind(k),
            crate::schema::tag_of(&v)
        );
    }
    if kind == Some(sweep) || kind.is_none() && v.get("runs").is_some() && v.get("spec").is_some() {
        let f: RunsFile = serde_json::from_value(v)
            .with_context(|| format!("{}: not a sweep's runs.json", path.display()))?;
        output::validate(&f)
            .map_err(|e| anyhow!("{}: inconsistent runs.json: {e}", path.display()))?;
        return Ok(Doc::Sweep(Box::new(f)));
    }
    let one = |x: &serde_json::Value| -> Option<Metrics> {
        Metrics::from_json(x).or_else(|| {
            // A record of runs.json copied out: {"status": "ok", "json": {...}}.
            if x.get("status")?.as_str()? != "ok" {
                return None;
            }
            Metrics::from_json(x.get("json")?)
        })
    };
    match &v {
        serde_json::Value::Array(items) => {
            let mut ms = Vec::new();
            for (i, x) in items.iter().enumerate() {
                let el = format!("{name} (element {i})");
                if let Some(k) = crate::schema::kind_of(&el, x)?.filter(|k| ![run, sim].contains(k))
                {
                    bail!(
                        "{el}: {} document: an array's elements must be runs (upktgen run/sim --json)",
                        crate::schema::a_kind(k)
                    );
                }
                ms.push(one(x).ok_or_else(|| {
                    anyhow!(
                        "{}: element {i} is not a run's JSON (upktgen run/sim --json)",
                        path.display()
                    )
                })?);
            }
            Ok(Doc::Runs(ms))
        }
        x => match one(x) {
            Some(m) => Ok(Doc::Runs(vec![m])),
            None => bail!(
                "{}: neither a sweep's runs.json, nor a run's JSON, nor an array of runs",
                path.display()
            ),
        },
    }
}

/// Points of `f` matching `sel` (`NAME=VALUE,...` or a label).
fn select<'a>(f: &'a RunsFile, sel: &str) -> Vec<&'a points::Point> {
    let pairs: Option<Vec<(String, String)>> = sel
        .split(',')
        .map(|kv| {
            kv.split_once('=')
                .map(|(k, v)| (file::normalize(k), v.trim().to_string()))
        })
        .collect();
    f.points
        .iter()
        .filter(|p| match &pairs {
            _ if p.label == sel => true,
            Some(pairs) => pairs.iter().all(|(k, v)| {
                let Some(di) = f.spec.dimensions.iter().position(|d| d.name == *k) else {
                    return false;
                };
                let d = &f.spec.dimensions[di];
                let Some(pv) = p.values.get(di).map(|x| &x.1) else {
                    return false;
                };
                pv.text() == *v
                    || d.values
                        .iter()
                        .position(|x| x == pv)
                        .and_then(|i| d.labels.get(i))
                        .is_some_and(|l| *l == *v)
            }),
            None => false,
        })
        .collect()
}

fn sample(path: &Path, doc: &Doc, sel: Option<&str>, which: &str) -> Result<compare::Sample> {
    let name = path.display().to_string();
    match doc {
        Doc::Runs(ms) => {
            if sel.is_some() {
                bail!(
                    "--{which}: {name} is not a sweep's runs.json; selectors pick points of a sweep"
                );
            }
            Ok(compare::Sample {
                name,
                runs: ms.clone(),
            })
        }
        Doc::Sweep(f) => {
            let pts: Vec<&points::Point> = match sel {
                Some(s) => select(f, s),
                None => f.points.iter().collect(),
            };
            let labels = || {
                f.points
                    .iter()
                    .map(|p| p.label.clone())
                    .collect::<Vec<_>>()
                    .join("; ")
            };
            match pts.as_slice() {
                [p] => Ok(compare::Sample {
                    name: if f.points.len() == 1 {
                        name
                    } else {
                        format!("{} ({name})", p.label)
                    },
                    runs: f
                        .runs
                        .iter()
                        .filter(|r| r.point == p.index)
                        .filter_map(|r| r.metrics())
                        .collect(),
                }),
                [] => bail!(
                    "--{which} {}: no point of {name} matches; its points: {}",
                    sel.unwrap_or(""),
                    labels()
                ),
                _ => bail!(
                    "{name} holds {} matching points; pick one with --{which} NAME=VALUE (points: {})",
                    pts.len(),
                    labels()
                ),
            }
        }
    }
}

/// A sweep's results for `upktgen compare` ([`crate::experiment::compare`]): sweeps' runs.json
/// (or `--out` directories, by their runs.json) and runs' JSON documents, every figure.
pub struct SweepResults;

/// The sweep's kind of results: it takes whatever another kind does not.
pub const RESULTS: SweepResults = SweepResults;

impl crate::experiment::compare::Results for SweepResults {
    fn file_in_dir(&self) -> &'static str {
        "runs.json"
    }
    fn takes(&self, _a: &Path, _b: Option<&Path>) -> bool {
        true
    }
    fn compare(&self, args: &CompareArgs) -> Result<()> {
        compare_cli(args)
    }
}

/// `upktgen compare` of sweeps' and runs' files (an ndr search's results are
/// [`crate::ndr::RESULTS`]' to compare).
pub fn compare_cli(args: &CompareArgs) -> Result<()> {
    let da = load(&args.a)?;
    let (pb, db) = match &args.b {
        Some(b) => (b.clone(), load(b)?),
        None => {
            let Doc::Sweep(f) = &da else {
                bail!("one file: it must be a sweep's runs.json (or give B.json)");
            };
            if args.sel_a.is_none() && args.sel_b.is_none() {
                let cmp = output::sweep_comparisons(f);
                if cmp.is_empty() {
                    bail!(
                        "{}: no [compare] section; pick the points with --a and --b",
                        args.a.display()
                    );
                }
                return print_comparisons(&cmp);
            }
            if args.sel_a.is_none() || args.sel_b.is_none() {
                bail!("one file: give both --a and --b");
            }
            (args.a.clone(), load(&args.a)?)
        }
    };
    let a = sample(&args.a, &da, args.sel_a.as_deref(), "a")?;
    let b = sample(&pb, &db, args.sel_b.as_deref(), "b")?;
    print_comparisons(&[compare::compare(&a, &b)])
}

/// Prints the comparisons that could be made; an error (a non-zero exit) naming those that
/// could not (too few runs).
fn print_comparisons(cs: &[compare::Comparison]) -> Result<()> {
    let mut failed = Vec::new();
    for c in cs {
        if c.result.is_ok() {
            print_comparison(c)?;
        } else {
            failed.push(c.sentence());
        }
    }
    match failed.as_slice() {
        [] => Ok(()),
        [one] if cs.len() == 1 => bail!("{one}"),
        _ => bail!(
            "{} of {} comparisons could not be made: {}",
            failed.len(),
            cs.len(),
            failed.join("; ")
        ),
    }
}
