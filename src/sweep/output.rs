//! What a sweep writes: the seed's layout per run, the summary per point, runs.json,
//! runs.csv, summary.csv, SVG plots and an index.html that shows them together.

use super::compare::{self, Comparison, Sample};
use super::exec::{RunRecord, Status};
use super::file::{Spec, Val};
use super::metrics::{FIELDS, Metrics};
use super::points::Point;
use crate::outdir::SessionDir;
use crate::plot::{self, BarChart, Line, Series, esc};
use crate::stats;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

/// runs.json: everything needed to redraw without rerunning.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunsFile {
    /// Format version of this file.
    pub format: u32,
    pub spec: Spec,
    pub points: Vec<Point>,
    pub interrupted: bool,
    pub runs: Vec<RunRecord>,
}

pub const FORMAT: u32 = 1;

/// runs.json borrowed (same fields, same order as [`RunsFile`]), to write it without copying.
#[derive(Serialize)]
struct RunsView<'a> {
    schema: &'static str,
    format: u32,
    spec: &'a Spec,
    points: &'a [Point],
    interrupted: bool,
    runs: &'a [RunRecord],
}

fn runs_json_text(
    spec: &Spec,
    points: &[Point],
    interrupted: bool,
    runs: &[RunRecord],
) -> Result<String> {
    let v = RunsView {
        schema: crate::schema::SWEEP,
        format: FORMAT,
        spec,
        points,
        interrupted,
        runs,
    };
    Ok(serde_json::to_string_pretty(&v)? + "\n")
}

/// Least time between two checkpoints of runs.json: each rewrites the whole file, so a sweep
/// of many short runs would otherwise spend its time rewriting it.
pub const CHECKPOINT_EVERY: Duration = Duration::from_secs(1);

/// runs.json rewritten while the sweep goes (after a run, at most once per
/// [`CHECKPOINT_EVERY`]), so a sweep killed outright (SIGKILL, a crash, power) leaves the runs
/// done so far. A checkpoint says `interrupted: true`: the sweep had not finished; the final
/// write replaces it.
pub struct Checkpoint(crate::experiment::writer::Checkpoint);

impl Checkpoint {
    /// Checkpoints into `dir`; none without a directory.
    pub fn new(dir: Option<SessionDir>) -> Self {
        Checkpoint(crate::experiment::writer::Checkpoint::new(
            dir,
            "runs.json",
            "upktgen sweep: saving the runs so far",
            CHECKPOINT_EVERY,
        ))
    }

    /// The directory, for the final write.
    pub fn into_dir(self) -> Option<SessionDir> {
        self.0.into_dir()
    }

    /// Writes runs.json with `runs` unless the last write was less than
    /// [`CHECKPOINT_EVERY`] ago. A failure is reported once and the sweep goes on (the final
    /// write reports it again as an error).
    pub fn save(&mut self, spec: &Spec, points: &[Point], runs: &[RunRecord]) {
        self.0.save(|| runs_json_text(spec, points, true, runs));
    }
}

/// `Iteration K (label):` and the run's seed lines (or why it failed).
pub fn iteration_text(r: &RunRecord) -> String {
    let head = format!("Iteration {} ({}):\n", r.iteration, r.label);
    match (r.status, r.metrics()) {
        (Status::Ok, Some(m)) => head + &m.seed_lines(),
        (Status::Interrupted, _) => head + "interrupted\n",
        _ => format!(
            "{head}FAILED: {}\n",
            r.error.as_deref().unwrap_or("unknown error")
        ),
    }
}

/// Median, min and max of one figure over a point's successful runs.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Mmm {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

/// One point's summary.
#[derive(Debug, Clone, Serialize)]
pub struct PointSummary {
    pub point: usize,
    pub label: String,
    pub planned: u32,
    pub ok: usize,
    pub failed: usize,
    pub interrupted: usize,
    /// Distinct failure messages.
    pub errors: Vec<String>,
    /// Per entry of [`FIELDS`], in that order (NaN without a successful run).
    pub figures: Vec<Mmm>,
    /// Median us and the rest (ni + wa + st) of the CPU time, for the stacked plot.
    pub cpu_us: f64,
    pub cpu_other: f64,
}

impl PointSummary {
    pub fn fig(&self, key: &str) -> Mmm {
        let i = FIELDS
            .iter()
            .position(|f| f.key == key)
            .expect("known field");
        self.figures[i]
    }

    pub fn complete(&self) -> bool {
        self.ok as u32 >= self.planned
    }
}

fn metrics_of<'a>(runs: &'a [RunRecord], point: usize) -> impl Iterator<Item = Metrics> + 'a {
    runs.iter()
        .filter(move |r| r.point == point)
        .filter_map(RunRecord::metrics)
}

/// Summaries of every point.
pub fn summarise(f: &RunsFile) -> Vec<PointSummary> {
    f.points
        .iter()
        .map(|p| {
            let mine: Vec<&RunRecord> = f.runs.iter().filter(|r| r.point == p.index).collect();
            let ms: Vec<Metrics> = metrics_of(&f.runs, p.index).collect();
            let mut errors: Vec<String> = Vec::new();
            for r in &mine {
                if r.status == Status::Failed
                    && let Some(e) = &r.error
                    && !errors.contains(e)
                {
                    errors.push(e.clone());
                }
            }
            let figures = FIELDS
                .iter()
                .map(|fd| {
                    let xs: Vec<f64> = ms.iter().map(fd.get).collect();
                    let (median, min, max) = stats::median_min_max(&xs);
                    Mmm { median, min, max }
                })
                .collect();
            let med = |g: fn(&Metrics) -> f64| stats::median(&ms.iter().map(g).collect::<Vec<_>>());
            PointSummary {
                point: p.index,
                label: p.label.clone(),
                planned: f.spec.repetitions,
                ok: ms.len(),
                failed: mine.iter().filter(|r| r.status == Status::Failed).count(),
                interrupted: mine
                    .iter()
                    .filter(|r| r.status == Status::Interrupted)
                    .count(),
                errors,
                figures,
                cpu_us: med(|m| m.cpu.us),
                cpu_other: med(|m| m.cpu.ni + m.cpu.wa + m.cpu.st),
            }
        })
        .collect()
}

fn num(v: f64, decimals: usize) -> String {
    if v.is_nan() {
        "-".into()
    } else {
        format!("{v:.decimals$}")
    }
}

/// The summary table for the terminal.
pub fn summary_text(f: &RunsFile, s: &[PointSummary]) -> String {
    let mut o = String::new();
    let w = s.iter().map(|p| p.label.len()).max().unwrap_or(5).max(5);
    let _ = writeln!(
        o,
        "Summary of sweep \"{}\" ({} {} per point; median [min-max] over the successful runs):",
        f.spec.name,
        f.spec.repetitions,
        if f.spec.repetitions == 1 {
            "run"
        } else {
            "runs"
        }
    );
    let _ = writeln!(
        o,
        "{:>3}  {:<w$}  {:>5}  {:>27}  {:>5} {:>5} {:>5} {:>5}  {:>8}  {:>9}",
        "#",
        "point",
        "runs",
        "pps median [min-max]",
        "sy%",
        "hi%",
        "si%",
        "id%",
        "irq/pkt",
        "wakes/pkt"
    );
    for p in s {
        let pps = p.fig("pps");
        let pps_s = if pps.median.is_nan() {
            "-".to_string()
        } else {
            format!("{:.0} [{:.0}-{:.0}]", pps.median, pps.min, pps.max)
        };
        let _ = writeln!(
            o,
            "{:>3}  {:<w$}  {:>5}  {:>27}  {:>5} {:>5} {:>5} {:>5}  {:>8}  {:>9}",
            p.point + 1,
            p.label,
            format!("{}/{}", p.ok, p.planned),
            pps_s,
            num(p.fig("cpu_sy").median, 1),
            num(p.fig("cpu_hi").median, 1),
            num(p.fig("cpu_si").median, 1),
            num(p.fig("cpu_id").median, 1),
            num(p.fig("irq_per_pkt").median, 4),
            num(p.fig("wakes_per_pkt").median, 4),
        );
    }
    let incomplete: Vec<&PointSummary> = s.iter().filter(|p| !p.complete()).collect();
    if incomplete.is_empty() {
        let _ = writeln!(o, "All points complete.");
    } else {
        let _ = writeln!(o, "Incomplete points:");
        for p in incomplete {
            let _ = write!(
                o,
                "  point {} ({}): {} of {} runs ok, {} failed, {} interrupted, {} not run",
                p.point + 1,
                p.label,
                p.ok,
                p.planned,
                p.failed,
                p.interrupted,
                (p.planned as usize).saturating_sub(p.ok + p.failed + p.interrupted)
            );
            if !p.errors.is_empty() {
                let _ = write!(o, "; {}", p.errors.join("; "));
            }
            let _ = writeln!(o);
        }
    }
    o
}

/// The A/B comparisons the sweep's [compare] section asks for: for every combination of the
/// other dimensions, each variant against the baseline.
pub fn sweep_comparisons(f: &RunsFile) -> Vec<Comparison> {
    let Some(c) = &f.spec.compare else {
        return Vec::new();
    };
    let Some(di) = f.spec.dimensions.iter().position(|d| d.name == c.dimension) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let is = |p: &Point, v: &Val| p.values.get(di).map(|x| &x.1) == Some(v);
    for base in f.points.iter().filter(|p| is(p, &c.baseline)) {
        for other in &f.points {
            let same_rest = other
                .values
                .iter()
                .enumerate()
                .all(|(k, v)| k == di || base.values.get(k) == Some(v));
            let Some((_, v)) = other.values.get(di) else {
                continue;
            };
            if !same_rest || v == &c.baseline || c.variant.as_ref().is_some_and(|x| x != v) {
                continue;
            }
            let a = Sample {
                name: base.label.clone(),
                runs: metrics_of(&f.runs, base.index).collect(),
            };
            let b = Sample {
                name: other.label.clone(),
                runs: metrics_of(&f.runs, other.index).collect(),
            };
            out.push(compare::compare(&a, &b));
        }
    }
    out
}

/// Axis title of a dimension, with its unit when known.
pub fn dim_title(name: &str) -> String {
    let unit = match name {
        "cpu_mhz" | "clock_mhz" => "MHz",
        "load" => "busy threads",
        "pkt_size" => "bytes",
        "ring" => "descriptors",
        "start_thresh" | "stop_thresh" => "free descriptors",
        "ratep" => "packets per second",
        "delay" => "ns",
        "link_mbps" => "Mbit/s",
        "batch" | "coalesce_frames" => "frames",
        "count" => "packets",
        "coalesce_usecs" => "us",
        n if n.ends_with("_cycles") => "cycles",
        n if n.ends_with("_ns") => "ns",
        _ => "value",
    };
    format!("{name} ({unit})")
}

/// The SVG plots: (file name, caption, SVG).
pub fn plots(f: &RunsFile, s: &[PointSummary]) -> Vec<(String, String, String)> {
    let cats: Vec<String> = s.iter().map(|p| p.label.clone()).collect();
    let mut out = Vec::new();
    let pps: Vec<Mmm> = s.iter().map(|p| p.fig("pps")).collect();
    let title = format!("{}: packets per second per point", f.spec.name);
    out.push((
        "pps.svg".to_string(),
        "Packets per second per point: median, bars from min to max".to_string(),
        plot::bar_chart(&BarChart {
            title: &title,
            x_title: "point",
            y_title: "packets per second",
            categories: &cats,
            series: &[Series {
                name: "median pps".into(),
                values: pps.iter().map(|m| m.median).collect(),
                range: Some(pps.iter().map(|m| (m.min, m.max)).collect()),
            }],
            stacked: false,
        }),
    ));
    let cpu_series: Vec<Series> = [
        ("us", None),
        ("sy", Some("cpu_sy")),
        ("hi", Some("cpu_hi")),
        ("si", Some("cpu_si")),
        ("id", Some("cpu_id")),
        ("ni+wa+st", None),
    ]
    .iter()
    .map(|(n, k)| Series {
        name: n.to_string(),
        values: s
            .iter()
            .map(|p| match k {
                Some(k) => p.fig(k).median,
                None if *n == "us" => p.cpu_us,
                None => p.cpu_other,
            })
            .collect(),
        range: None,
    })
    .collect();
    let title = format!("{}: CPU time split (median)", f.spec.name);
    out.push((
        "cpu.svg".to_string(),
        "Where the CPU time went (top's shares, medians, stacked)".to_string(),
        plot::bar_chart(&BarChart {
            title: &title,
            x_title: "point",
            y_title: "% of CPU time",
            categories: &cats,
            series: &cpu_series,
            stacked: true,
        }),
    ));
    let pp: Vec<Series> = [
        ("interrupts per packet", "irq_per_pkt"),
        ("wakes per packet", "wakes_per_pkt"),
    ]
    .iter()
    .map(|(n, k)| Series {
        name: n.to_string(),
        values: s.iter().map(|p| p.fig(k).median).collect(),
        range: Some(s.iter().map(|p| (p.fig(k).min, p.fig(k).max)).collect()),
    })
    .collect();
    let title = format!("{}: interrupts and queue wakes per packet", f.spec.name);
    out.push((
        "per_packet.svg".to_string(),
        "Interrupts and transmit-queue wakes per packet sent (median, min-max)".to_string(),
        plot::bar_chart(&BarChart {
            title: &title,
            x_title: "point",
            y_title: "events per packet",
            categories: &cats,
            series: &pp,
            stacked: false,
        }),
    ));
    // pps against every numeric dimension, one line per combination of the others.
    for (di, d) in f.spec.dimensions.iter().enumerate() {
        if d.values.len() < 2 || d.values.iter().any(|v| v.as_f64().is_none()) {
            continue;
        }
        let mut lines: Vec<Line> = Vec::new();
        for (p, sm) in f.points.iter().zip(s) {
            let rest: Vec<String> = f
                .spec
                .dimensions
                .iter()
                .enumerate()
                .filter(|(k, _)| *k != di)
                .map(|(k, dd)| {
                    let vi = dd
                        .values
                        .iter()
                        .position(|x| Some(x) == p.values.get(k).map(|y| &y.1));
                    vi.and_then(|i| dd.labels.get(i).cloned())
                        .unwrap_or_default()
                })
                .collect();
            let name = if rest.is_empty() {
                "median pps".to_string()
            } else {
                rest.join(", ")
            };
            let x = p
                .values
                .get(di)
                .and_then(|v| v.1.as_f64())
                .unwrap_or(f64::NAN);
            let m = sm.fig("pps");
            let pt = (x, m.median, Some((m.min, m.max)));
            match lines.iter_mut().find(|l| l.name == name) {
                Some(l) => l.points.push(pt),
                None => lines.push(Line {
                    name,
                    points: vec![pt],
                }),
            }
        }
        let title = format!("{}: packets per second against {}", f.spec.name, d.name);
        out.push((
            format!("pps_vs_{}.svg", d.name),
            format!("Packets per second against {} (median, min-max)", d.name),
            plot::line_chart(&title, &dim_title(&d.name), "packets per second", &lines),
        ));
    }
    out
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// runs.csv: one row per run.
pub fn runs_csv(f: &RunsFile) -> String {
    let mut o = String::new();
    let dims: Vec<&str> = f.spec.dimensions.iter().map(|d| d.name.as_str()).collect();
    let mut head = vec!["iteration", "point", "rep", "label"];
    head.extend(dims.iter().copied());
    head.extend([
        "status",
        "seconds",
        "sent",
        "errors",
        "elapsed_ns",
        "idle_ns",
        "pkt_size",
        "interrupts",
        "wakes",
        "stops",
    ]);
    head.extend(["cpu_us", "cpu_ni", "cpu_wa", "cpu_st"]);
    head.extend(FIELDS.iter().map(|x| x.key));
    head.push("error");
    let _ = writeln!(o, "{}", head.join(","));
    for r in &f.runs {
        let mut row = vec![
            r.iteration.to_string(),
            (r.point + 1).to_string(),
            r.rep.to_string(),
            csv_field(&r.label),
        ];
        if let Some(p) = f.points.get(r.point) {
            row.extend(p.values.iter().map(|(_, v)| csv_field(&v.text())));
        }
        row.push(format!("{:?}", r.status).to_lowercase());
        row.push(format!("{:.3}", r.seconds));
        match r.metrics() {
            Some(m) => {
                let x = &m.result;
                row.extend(
                    [
                        x.sent,
                        x.errors,
                        x.elapsed_ns,
                        x.idle_ns,
                        u64::from(x.pkt_size),
                        m.interrupts,
                        m.wakes,
                        m.stops,
                    ]
                    .map(|v| v.to_string()),
                );
                row.extend([m.cpu.us, m.cpu.ni, m.cpu.wa, m.cpu.st].map(|v| format!("{v:.2}")));
                row.extend(FIELDS.iter().map(|fd| format!("{:.6}", (fd.get)(&m))));
            }
            None => row.extend(std::iter::repeat_n(String::new(), 14 + FIELDS.len())),
        }
        row.push(csv_field(r.error.as_deref().unwrap_or("")));
        let _ = writeln!(o, "{}", row.join(","));
    }
    o
}

/// summary.csv: one row per point.
pub fn summary_csv(f: &RunsFile, s: &[PointSummary]) -> String {
    let mut o = String::new();
    let mut head: Vec<String> = vec!["point".into(), "label".into()];
    head.extend(f.spec.dimensions.iter().map(|d| d.name.clone()));
    head.extend(["runs_ok", "runs_planned", "runs_failed"].map(String::from));
    for fd in FIELDS {
        for s in ["median", "min", "max"] {
            head.push(format!("{}_{s}", fd.key));
        }
    }
    let _ = writeln!(o, "{}", head.join(","));
    for (p, sm) in f.points.iter().zip(s) {
        let mut row = vec![(p.index + 1).to_string(), csv_field(&p.label)];
        row.extend(p.values.iter().map(|(_, v)| csv_field(&v.text())));
        row.extend([
            sm.ok.to_string(),
            sm.planned.to_string(),
            sm.failed.to_string(),
        ]);
        for m in &sm.figures {
            for v in [m.median, m.min, m.max] {
                row.push(if v.is_nan() {
                    String::new()
                } else {
                    format!("{v:.6}")
                });
            }
        }
        let _ = writeln!(o, "{}", row.join(","));
    }
    o
}

/// index.html: the summary table, the comparisons and the plots, readable offline.
pub fn index_html(
    f: &RunsFile,
    s: &[PointSummary],
    cmp: &[Comparison],
    plots: &[(String, String, String)],
) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\n<style>\
body{{font-family:sans-serif;margin:2em;max-width:1100px}}table{{border-collapse:collapse}}\
td,th{{border:1px solid #ccc;padding:3px 8px;text-align:right}}td.l,th.l{{text-align:left}}\
tr.incomplete{{background:#fdd}}figure{{margin:1.5em 0}}img{{max-width:100%}}</style></head><body>",
        esc(&f.spec.name)
    );
    let _ = writeln!(o, "<h1>Sweep: {}</h1>", esc(&f.spec.name));
    let _ = writeln!(
        o,
        "<p>Command <code>upktgen {}</code>, {} points x {} repetitions (interleaved: repetition 1 of every point, then 2, ...), {} runs recorded{}.</p>",
        f.spec.command.name(),
        f.points.len(),
        f.spec.repetitions,
        f.runs.len(),
        if f.interrupted {
            ", <strong>interrupted</strong>"
        } else {
            ""
        }
    );
    let _ = writeln!(
        o,
        "<h2>Summary</h2><p>Median [min-max] over each point's successful runs.</p><table><tr><th>#</th><th class=\"l\">point</th><th>runs ok</th><th>pps median</th><th>pps min-max</th><th>us %</th><th>sy %</th><th>hi %</th><th>si %</th><th>id %</th><th>interrupts / packet</th><th>wakes / packet</th><th class=\"l\">errors</th></tr>"
    );
    for p in s {
        let pps = p.fig("pps");
        let _ = writeln!(
            o,
            "<tr{}><td>{}</td><td class=\"l\">{}</td><td>{}/{}</td><td>{}</td><td>{}-{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td></tr>",
            if p.complete() {
                ""
            } else {
                " class=\"incomplete\""
            },
            p.point + 1,
            esc(&p.label),
            p.ok,
            p.planned,
            num(pps.median, 0),
            num(pps.min, 0),
            num(pps.max, 0),
            num(p.cpu_us, 1),
            num(p.fig("cpu_sy").median, 1),
            num(p.fig("cpu_hi").median, 1),
            num(p.fig("cpu_si").median, 1),
            num(p.fig("cpu_id").median, 1),
            num(p.fig("irq_per_pkt").median, 4),
            num(p.fig("wakes_per_pkt").median, 4),
            esc(&p.errors.join("; "))
        );
    }
    let _ = writeln!(o, "</table>");
    if !cmp.is_empty() {
        let _ = writeln!(o, "<h2>Comparisons</h2>");
        for c in cmp {
            let _ = writeln!(
                o,
                "<p><strong>{}</strong></p><pre>{}</pre>",
                esc(&c.sentence()),
                esc(&c.table())
            );
        }
    }
    let _ = writeln!(o, "<h2>Plots</h2>");
    for (name, caption, _) in plots {
        let _ = writeln!(
            o,
            "<figure><img src=\"{}\" alt=\"{}\"><figcaption>{}</figcaption></figure>",
            esc(name),
            esc(caption),
            esc(caption)
        );
    }
    let _ = writeln!(
        o,
        "<p>Raw figures of every run: <a href=\"runs.json\">runs.json</a>, <a href=\"runs.csv\">runs.csv</a>; per point: <a href=\"summary.csv\">summary.csv</a>.</p></body></html>"
    );
    o
}

/// Writes runs.json (unless `write_runs` is false, when redrawing) and everything drawn
/// from it into the session directory, then ends the session (files an earlier session
/// drew and this one did not are removed). Returns the names written and the names removed.
pub fn write_dir(
    dir: SessionDir,
    f: &RunsFile,
    write_runs: bool,
) -> Result<(Vec<String>, Vec<String>)> {
    let mut files = Vec::new();
    if write_runs {
        files.push((
            "runs.json".to_string(),
            runs_json_text(&f.spec, &f.points, f.interrupted, &f.runs)?,
        ));
    }
    let s = summarise(f);
    files.push(("runs.csv".to_string(), runs_csv(f)));
    files.push(("summary.csv".to_string(), summary_csv(f, &s)));
    let ps = plots(f, &s);
    let index = index_html(f, &s, &sweep_comparisons(f), &ps);
    files.extend(ps.into_iter().map(|(name, _, svg)| (name, svg)));
    files.push(("index.html".to_string(), index));
    crate::experiment::writer::write_files(dir, files)
}

/// Reads runs.json, checked with [`validate`].
pub fn read_runs(path: &Path) -> Result<RunsFile> {
    let v: serde_json::Value =
        crate::input::read_json(path, crate::input::MAX_JSON, "a sweep's runs.json")?;
    let name = path.display().to_string();
    crate::schema::expect(&name, &v, crate::schema::SWEEP, "a sweep's runs.json")?;
    let f: RunsFile = serde_json::from_value(v)
        .map_err(|e| anyhow::anyhow!("{name}: not a sweep's runs.json: {e}"))?;
    validate(&f).map_err(|e| anyhow::anyhow!("{}: inconsistent runs.json: {e}", path.display()))?;
    Ok(f)
}

/// How a runs.json read back does not hold together.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Inconsistent {
    #[error("dimension {name:?} has {values} values but {labels} labels")]
    Labels {
        name: String,
        values: usize,
        labels: usize,
    },
    /// Point `n` (1-based) says it is at `says` (1-based).
    #[error("point {n} says its index is {says}")]
    Index { n: usize, says: usize },
    #[error("point {n} ({label}) has values for [{}], the dimensions are [{}]", .have.join(", "), .dims.join(", "))]
    Values {
        n: usize,
        label: String,
        have: Vec<String>,
        dims: Vec<String>,
    },
    #[error("run {iteration} is of point {point}, there are {points} points")]
    Run {
        iteration: usize,
        point: usize,
        points: usize,
    },
}

/// Checks that a runs.json read back holds together as a sweep writes it (the tables, plots
/// and comparisons index by it): every dimension has one label per value, every point is at
/// its own index with one value per dimension, every run names a point.
pub fn validate(f: &RunsFile) -> std::result::Result<(), Inconsistent> {
    for d in &f.spec.dimensions {
        if d.labels.len() != d.values.len() {
            return Err(Inconsistent::Labels {
                name: d.name.clone(),
                values: d.values.len(),
                labels: d.labels.len(),
            });
        }
    }
    let names: Vec<&str> = f.spec.dimensions.iter().map(|d| d.name.as_str()).collect();
    for (i, p) in f.points.iter().enumerate() {
        if p.index != i {
            return Err(Inconsistent::Index {
                n: i + 1,
                says: p.index + 1,
            });
        }
        let have: Vec<&str> = p.values.iter().map(|(n, _)| n.as_str()).collect();
        if have != names {
            return Err(Inconsistent::Values {
                n: i + 1,
                label: p.label.clone(),
                have: have.iter().map(|s| s.to_string()).collect(),
                dims: names.iter().map(|s| s.to_string()).collect(),
            });
        }
    }
    for r in &f.runs {
        if r.point >= f.points.len() {
            return Err(Inconsistent::Run {
                iteration: r.iteration,
                point: r.point + 1,
                points: f.points.len(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{file, points};
    use super::*;

    fn sweep() -> RunsFile {
        let spec = file::parse(
            "s.toml",
            "[sweep]\ncommand = \"sim\"\nrepetitions = 2\n[[dimension]]\nname = \"ring\"\n\
             values = [64, 256]\n[[dimension]]\nname = \"start_thresh\"\nvalues = [1, 16]\n\
             [compare]\ndimension = \"start_thresh\"\nbaseline = 1\n",
        )
        .unwrap();
        let points = points::expand(&spec).unwrap();
        let runs = points
            .iter()
            .map(|p| RunRecord {
                iteration: p.index,
                point: p.index,
                rep: 1,
                label: p.label.clone(),
                status: Status::Failed,
                error: Some("x".into()),
                exit_code: Some(1),
                pid: None,
                seconds: 0.1,
                json: None,
            })
            .collect();
        RunsFile {
            format: FORMAT,
            spec,
            points,
            interrupted: false,
            runs,
        }
    }

    fn tmp_dir(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("upktgen-output-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// `f` as JSON, changed by `edit`, read back.
    fn reread(
        f: &RunsFile,
        tag: &str,
        edit: impl FnOnce(&mut serde_json::Value),
    ) -> Result<RunsFile> {
        let d = tmp_dir(tag);
        let mut v = serde_json::to_value(f).unwrap();
        edit(&mut v);
        let p = d.join("runs.json");
        std::fs::write(&p, v.to_string()).unwrap();
        let r = read_runs(&p);
        std::fs::remove_dir_all(&d).unwrap();
        r
    }

    #[test]
    fn inconsistent_runs_json_is_refused_not_a_panic() {
        let f = sweep();
        assert!(reread(&f, "ok", |_| {}).is_ok());
        let e = reread(&f, "short", |v| {
            v["points"][1]["values"].as_array_mut().unwrap().pop();
        })
        .unwrap_err();
        let e = format!("{e:#}");
        assert!(
            e.ends_with(
                "runs.json: inconsistent runs.json: point 2 (ring=64, start_thresh=16) has values \
                 for [ring], the dimensions are [ring, start_thresh]"
            ),
            "{e}"
        );
        let e = reread(&f, "run", |v| v["runs"][0]["point"] = 9.into()).unwrap_err();
        assert!(format!("{e:#}").contains("run 0 is of point 10, there are 4 points"));
        let e = reread(&f, "labels", |v| {
            v["spec"]["dimensions"][0]["labels"]
                .as_array_mut()
                .unwrap()
                .pop();
        })
        .unwrap_err();
        assert!(format!("{e:#}").contains("\"ring\" has 2 values but 1 labels"));
        let e = reread(&f, "index", |v| v["points"][3]["index"] = 0.into()).unwrap_err();
        assert!(format!("{e:#}").contains("point 4 says its index is 1"));

        // What reads the points directly copes with a short one too (it used to index).
        let mut bad = f.clone();
        bad.points[1].values.pop();
        assert_eq!(sweep_comparisons(&bad).len(), 1);
        let s = summarise(&bad);
        assert_eq!(plots(&bad, &s).len(), 5);
    }

    #[test]
    fn runs_json_is_replaced_whole_and_checkpoints_read_back() {
        let f = sweep();
        let d = tmp_dir("ckpt");
        let mut c = Checkpoint::new(Some(SessionDir::open(&d, "--out", &[]).unwrap()));
        c.save(&f.spec, &f.points, &f.runs[..1]);
        let back = read_runs(&d.join("runs.json")).unwrap();
        assert!(back.interrupted, "a checkpoint is of an unfinished sweep");
        assert_eq!(back.runs.len(), 1);
        assert_eq!(back.points.len(), 4);
        // Within CHECKPOINT_EVERY of the last one: not rewritten.
        c.save(&f.spec, &f.points, &f.runs[..2]);
        assert_eq!(read_runs(&d.join("runs.json")).unwrap().runs.len(), 1);
        write_dir(c.into_dir().unwrap(), &f, true).unwrap();
        let back = read_runs(&d.join("runs.json")).unwrap();
        assert!(!back.interrupted);
        assert_eq!(back.runs.len(), 4);
        // No temporary file is left.
        let names: Vec<String> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains("tmp"))
            .collect();
        assert!(names.is_empty(), "{names:?}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_sweep_with_fewer_plots_leaves_none_of_the_last_ones_and_none_of_the_users() {
        let f = sweep();
        let d = tmp_dir("stale");
        let (first, removed) =
            write_dir(SessionDir::open(&d, "--out", &[]).unwrap(), &f, true).unwrap();
        assert!(removed.is_empty());
        assert!(first.iter().any(|n| n.ends_with(".svg")), "{first:?}");
        std::fs::write(d.join("notes.txt"), "mine").unwrap();
        // A sweep of one dimension draws no plot along the second: that one is removed.
        let mut less = f.clone();
        less.spec.dimensions.truncate(1);
        for p in &mut less.points {
            p.values.truncate(1);
        }
        let (second, removed) =
            write_dir(SessionDir::open(&d, "--out", &[]).unwrap(), &less, true).unwrap();
        let gone: Vec<&String> = first.iter().filter(|n| !second.contains(n)).collect();
        assert_eq!(gone, ["pps_vs_start_thresh.svg"], "{first:?} {second:?}");
        assert_eq!(removed.iter().collect::<Vec<_>>(), gone);
        for n in &gone {
            assert!(!d.join(n).exists(), "{n}");
        }
        assert_eq!(
            std::fs::read_to_string(d.join("notes.txt")).unwrap(),
            "mine"
        );
        std::fs::remove_dir_all(&d).unwrap();
        // A directory of someone else's files is refused before anything is run or written.
        let d = tmp_dir("theirs");
        std::fs::write(d.join("index.html"), "their page").unwrap();
        let e = SessionDir::open(&d, "--out", &[]).unwrap_err().to_string();
        assert!(e.contains("not empty (index.html)"), "{e}");
        assert_eq!(
            std::fs::read_to_string(d.join("index.html")).unwrap(),
            "their page"
        );
        std::fs::remove_dir_all(&d).unwrap();
    }
}
