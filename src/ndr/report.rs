//! What `upktgen ndr` prints and writes: the table per frame size, CSV, SVG plots,
//! index.html; and `upktgen compare` of two results files.

use super::search::{Bound, Partial, Purpose, TargetResult, Verdict, pct, verdict};
use super::trial::{Latency, WIRE_OVERHEAD};
use super::{NdrRun, SizeResult, TrialRecord};
use crate::plot::{self, Line, esc};
use crate::stats;
use anyhow::Result;
use std::fmt::Write as _;
use std::path::Path;

fn mbps(pps: f64, frame: u32) -> f64 {
    pps * f64::from(frame) * 8.0 / 1e6
}

fn line_pct(pps: f64, frame: u32, line: Option<f64>) -> Option<f64> {
    line.map(|l| pps * f64::from(frame + WIRE_OVERHEAD) * 8.0 / (l * 1e6) * 100.0)
}

fn target<'a>(s: &'a SizeResult, name: &str) -> Option<&'a TargetResult> {
    s.targets.iter().find(|t| t.name == name)
}

/// The trial that stands for a result: the longest passing trial at its rate.
pub fn result_trial<'a>(run: &'a NdrRun, t: &TargetResult) -> Option<&'a TrialRecord> {
    let tol = run.header.config.tolerance;
    t.trials_at_rate
        .iter()
        .filter_map(|&i| run.trials.get(i))
        .filter(|r| {
            matches!(
                verdict(&r.obs, t.loss, tol),
                Verdict::Pass | Verdict::SenderBound
            )
        })
        .max_by(|a, b| a.request.duration_s.total_cmp(&b.request.duration_s))
}

fn lat_text(l: Option<&Latency>) -> String {
    match l {
        Some(l) => format!(
            "{:.0}/{:.0}/{:.0}/{:.0}",
            l.min_us, l.p50_us, l.p99_us, l.max_us
        ),
        None => "-".into(),
    }
}

fn rate_text(t: Option<&TargetResult>, partial: Option<&Partial>) -> String {
    match (t, partial) {
        (Some(t), _) => t.rate.map_or("none".into(), |r| format!("{r:.0}")),
        (None, Some(p)) => p.highest_pass.map_or("?".into(), |l| format!(">={l:.0}?")),
        (None, None) => "-".into(),
    }
}

/// The table, a row per frame size (and round), then each size's notes.
pub fn table(run: &NdrRun) -> String {
    let h = &run.header;
    let c = &h.config;
    let mut s = String::new();
    let prec = match c.precision {
        super::search::Precision::Relative(p) => pct(p),
        super::search::Precision::Absolute(w) => format!("{w:.0} pps"),
    };
    let _ = writeln!(
        s,
        "NDR (loss <= {}){}, precision {prec}, final trials {} s (searching {} s); frame sizes with the FCS{}",
        pct(c.loss),
        c.pdr
            .map_or(String::new(), |p| format!(", PDR (loss <= {})", pct(p))),
        c.final_s,
        c.search_s,
        h.line_rate_mbps
            .map_or(", no line rate known".into(), |l| format!(
                ", line rate {l} Mb/s"
            ))
    );
    if let Some(file) = super::config::config_in(&h.run_args) {
        let flows = run
            .trials
            .iter()
            .find(|t| !t.figures.flows.is_empty())
            .map_or("-".to_string(), |t| {
                let names: Vec<String> = t
                    .figures
                    .flows
                    .iter()
                    .map(|f| crate::text::printable(&f.name).into_owned())
                    .collect();
                names.join(", ")
            });
        let _ = writeln!(
            s,
            "config {}: the aggregate of its flows ({flows}); size: their mean frame, weighted by their rates",
            crate::text::printable(&file.to_string_lossy())
        );
    }
    if run.interrupted {
        let _ = writeln!(
            s,
            "INTERRUPTED: partial results (>=X? is the highest rate passed so far, unconfirmed)"
        );
    }
    let _ = writeln!(
        s,
        "{:>5} {:>5} {:>11} {:>9} {:>6} {:>11} {:>21} {:>17} {:>6} {:>8}",
        "size",
        "round",
        "NDR pps",
        "Mb/s",
        "line%",
        "PDR pps",
        "lat@NDR us min/50/99/max",
        "p50@10/50/90% us",
        "trials",
        "bound"
    );
    for r in &run.sizes {
        let ndr = target(r, "NDR");
        let pdr = target(r, "PDR");
        let part = |n: &str| r.partial.iter().find(|p| p.name == n);
        let ndr_rate = ndr.and_then(|t| t.rate);
        let nt = ndr.and_then(|t| result_trial(run, t));
        let lat_at = |f: f64| {
            r.latency_trials
                .iter()
                .find(|l| (l.0 - f).abs() < 1e-9)
                .and_then(|l| run.trials.get(l.1))
                .and_then(|t| t.figures.latency)
                .map_or("-".into(), |l| format!("{:.0}", l.p50_us))
        };
        let _ = writeln!(
            s,
            "{:>5} {:>5} {:>11} {:>9} {:>6} {:>11} {:>21} {:>17} {:>6} {:>8}",
            r.size,
            r.round,
            rate_text(ndr, part("NDR")),
            ndr_rate.map_or("-".into(), |p| format!("{:.1}", mbps(p, r.size))),
            ndr_rate
                .and_then(|p| line_pct(p, r.size, h.line_rate_mbps))
                .map_or("-".into(), |p| format!("{p:.1}")),
            if c.pdr.is_some() {
                rate_text(pdr, part("PDR"))
            } else {
                "-".into()
            },
            lat_text(nt.and_then(|t| t.figures.latency.as_ref())),
            format!("{}/{}/{}", lat_at(0.1), lat_at(0.5), lat_at(0.9)),
            r.trials.len(),
            ndr.map_or("-", |t| t.bound.name()),
        );
    }
    for r in &run.sizes {
        let mut notes = Vec::new();
        for t in &r.targets {
            if let Some(n) = &t.note {
                notes.push(format!("{}: {n}", t.name));
            }
            match (t.bound, t.rate) {
                (Bound::Sender, Some(_))
                    if run.header.config.max_rate.is_none()
                        && run.header.line_rate_mbps.is_some_and(|m| {
                            t.upper.unwrap_or(0.0)
                                >= 0.99 * crate::experiment::searching::line_pps(r.size, m)
                        }) =>
                {
                    // The ceiling asked was the line rate at this size and the sender
                    // reached it: the result is the line's, not the sender's nor the DUT's.
                    notes.push(format!(
                        "{}: bounded by the line rate at {:.0} pps (the ceiling asked, {} Mb/s at {} bytes), not by the DUT (no DUT result above it)",
                        t.name,
                        t.upper.unwrap_or(0.0),
                        run.header.line_rate_mbps.unwrap_or(0.0),
                        r.size
                    ))
                }
                (Bound::Sender, Some(_)) => notes.push(format!(
                    "{}: bounded by the sender at {:.0} pps, not by the DUT (no DUT result above it)",
                    t.name,
                    t.upper.unwrap_or(0.0)
                )),
                (Bound::Receiver, Some(r)) => notes.push(format!(
                    "{}: bounded by the receiver: it kept up at {r:.0} pps, not at {:.0} pps (no DUT result above {r:.0})",
                    t.name,
                    t.upper.unwrap_or(0.0)
                )),
                _ => {}
            }
            let at: Vec<&TrialRecord> = t
                .trials_at_rate
                .iter()
                .filter_map(|&i| run.trials.get(i))
                .collect();
            if at.len() > 1 {
                let ls: Vec<f64> = at.iter().map(|x| x.obs.loss_ratio()).collect();
                let (lo, hi) = (
                    ls.iter().copied().fold(f64::INFINITY, f64::min),
                    ls.iter().copied().fold(0.0, f64::max),
                );
                notes.push(format!(
                    "{}: {} trials at {:.0} pps, loss {} to {}",
                    t.name,
                    at.len(),
                    t.rate.unwrap_or(0.0),
                    pct(lo),
                    pct(hi)
                ));
            }
        }
        if let Some(t) = target(r, "NDR").and_then(|t| result_trial(run, t)) {
            let f = &t.figures;
            // A config's flows, each with its own latency (the row's is their union).
            if f.flows.iter().any(|fl| fl.latency.is_some()) {
                let per: Vec<String> = f
                    .flows
                    .iter()
                    .map(|fl| {
                        format!(
                            "{} {}",
                            crate::text::printable(&fl.name),
                            lat_text(fl.latency.as_ref())
                        )
                    })
                    .collect();
                notes.push(format!(
                    "NDR trial's flows, latency us min/50/99/max: {}",
                    per.join(", ")
                ));
            }
            if let Some(cpu) = f.cpu {
                let per = f
                    .interrupts
                    .map(|i| format!(", {:.4} per packet", i as f64 / t.obs.sent.max(1) as f64))
                    .unwrap_or_default();
                notes.push(format!(
                    "NDR trial ({} s, {} sent): Cpu(s) {:.1} us, {:.1} sy, {:.1} hi, {:.1} si, {:.1} id; interrupts {}{per}; softirqs NET_RX {}, NET_TX {}",
                    t.request.duration_s,
                    t.obs.sent,
                    cpu[0],
                    cpu[1],
                    cpu[2],
                    cpu[3],
                    cpu[4],
                    f.interrupts.map_or("-".into(), |i| i.to_string()),
                    f.softirq_net_rx.map_or("-".into(), |i| i.to_string()),
                    f.softirq_net_tx.map_or("-".into(), |i| i.to_string()),
                ));
            }
        }
        for p in &r.partial {
            if r.targets.iter().any(|t| t.name == p.name) {
                continue;
            }
            notes.push(format!(
                "{}: unfinished: highest pass {}, lowest failure or cap {}",
                p.name,
                p.highest_pass
                    .map_or("none".into(), |l| format!("{l:.0} pps")),
                p.upper
                    .map_or("none".into(), |(h, b)| format!("{h:.0} pps ({})", b.name()))
            ));
        }
        if let Some(e) = &r.failed {
            // A resumed file's error texts are its own: shown, not obeyed by the terminal.
            notes.push(format!("the search failed: {}", crate::text::printable(e)));
        }
        for n in notes {
            let _ = writeln!(s, "  {} (round {}): {n}", r.size, r.round);
        }
    }
    let secs: f64 = run.trials.iter().map(|t| t.seconds).sum();
    let trial_s: f64 = run.trials.iter().map(|t| t.request.duration_s).sum();
    let _ = writeln!(
        s,
        "{} trials ({:.1} s of trials, {:.1} s with each run's set-up); every trial: {}",
        run.trials.len(),
        trial_s,
        secs,
        run.results_file.display()
    );
    s
}

fn opt(x: Option<f64>, d: usize) -> String {
    x.map_or(String::new(), |v| format!("{v:.d$}"))
}

/// ndr.csv: a row per frame size and round.
pub fn results_csv(run: &NdrRun) -> String {
    let mut s = String::from(
        "size,round,ndr_pps,ndr_mbps,ndr_line_pct,ndr_upper_pps,ndr_bound,pdr_pps,pdr_upper_pps,pdr_bound,lat_min_us,lat_p50_us,lat_p99_us,lat_max_us,trials\n",
    );
    for r in &run.sizes {
        let n = target(r, "NDR");
        let p = target(r, "PDR");
        let nr = n.and_then(|t| t.rate);
        let l = n
            .and_then(|t| result_trial(run, t))
            .and_then(|t| t.figures.latency);
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            r.size,
            r.round,
            opt(nr, 0),
            opt(nr.map(|x| mbps(x, r.size)), 3),
            opt(
                nr.and_then(|x| line_pct(x, r.size, run.header.line_rate_mbps)),
                2
            ),
            opt(n.and_then(|t| t.upper), 0),
            n.map_or("", |t| t.bound.name()),
            opt(p.and_then(|t| t.rate), 0),
            opt(p.and_then(|t| t.upper), 0),
            p.map_or("", |t| t.bound.name()),
            opt(l.map(|l| l.min_us), 1),
            opt(l.map(|l| l.p50_us), 1),
            opt(l.map(|l| l.p99_us), 1),
            opt(l.map(|l| l.max_us), 1),
            r.trials.len()
        );
    }
    s
}

/// trials.csv: every trial.
pub fn trials_csv(run: &NdrRun) -> String {
    let mut s = String::from(
        "size,round,purpose,requested_pps,duration_s,achieved_pps,sent,dut_lost,receiver_lost,sender_lost,loss_pct,lat_p50_us,lat_p99_us,error\n",
    );
    for t in &run.trials {
        let o = &t.obs;
        let _ = writeln!(
            s,
            "{},{},{:?},{},{},{:.0},{},{},{},{},{:.6},{},{},\"{}\"",
            t.size,
            t.round,
            t.request.purpose,
            opt(t.request.rate, 0),
            t.request.duration_s,
            o.achieved,
            o.sent,
            o.dut_lost,
            o.receiver_lost,
            o.sender_lost,
            o.loss_ratio() * 100.0,
            opt(t.figures.latency.map(|l| l.p50_us), 1),
            opt(t.figures.latency.map(|l| l.p99_us), 1),
            o.error.as_deref().unwrap_or("").replace('"', "'")
        );
    }
    s
}

/// (file name, caption, SVG).
pub fn plots(run: &NdrRun) -> Vec<(String, String, String)> {
    let tol = run.header.config.tolerance;
    let mut v = Vec::new();
    let mut lines = Vec::new();
    for name in ["NDR", "PDR"] {
        let pts: Vec<plot::XyPoint> = run
            .sizes
            .iter()
            .filter_map(|r| {
                let t = target(r, name)?;
                Some((f64::from(r.size), t.rate? / 1000.0, None))
            })
            .collect();
        if !pts.is_empty() {
            lines.push(Line {
                name: name.into(),
                points: pts,
            });
        }
    }
    v.push((
        "ndr_vs_size.svg".into(),
        "NDR and PDR against frame size".into(),
        plot::line_chart(
            "NDR and PDR against frame size",
            "frame size (bytes, with FCS)",
            "kpps",
            &lines,
        ),
    ));
    let sizes: Vec<u32> = run.header.sizes.clone();
    let per_size = |f: &dyn Fn(&TrialRecord) -> Option<plot::XyPoint>| -> Vec<Line> {
        sizes
            .iter()
            .map(|&sz| Line {
                name: format!("{sz} B"),
                points: run
                    .trials
                    .iter()
                    .filter(|t| t.size == sz && t.obs.error.is_none())
                    .filter_map(f)
                    .collect(),
            })
            .filter(|l| !l.points.is_empty())
            .collect()
    };
    let loss = per_size(&|t: &TrialRecord| {
        (t.request.purpose != Purpose::Latency)
            .then(|| (t.obs.load(tol) / 1000.0, t.obs.loss_ratio() * 100.0, None))
    });
    v.push((
        "loss_vs_rate.svg".into(),
        "Loss against offered rate, every trial".into(),
        plot::line_chart(
            "Loss against offered rate (every trial)",
            "offered rate (kpps)",
            "loss (%)",
            &loss,
        ),
    ));
    let lat = per_size(&|t: &TrialRecord| {
        t.figures.latency.map(|l| {
            (
                t.obs.load(tol) / 1000.0,
                l.p50_us,
                Some((l.min_us, l.p99_us)),
            )
        })
    });
    v.push((
        "latency_vs_rate.svg".into(),
        "Latency (p50, bars min to p99) against offered rate".into(),
        plot::line_chart(
            "Latency against offered rate (p50; bars: min to p99)",
            "offered rate (kpps)",
            "latency (us)",
            &lat,
        ),
    ));
    v
}

/// index.html: the table, the plots and links to the files.
pub fn index_html(run: &NdrRun, plots: &[(String, String, String)]) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>upktgen ndr</title>\n<style>body{{font-family:sans-serif;margin:2em;max-width:1100px}}figure{{margin:1.5em 0}}img{{max-width:100%}}</style></head><body>"
    );
    let _ = writeln!(o, "<h1>upktgen ndr</h1>");
    let _ = writeln!(
        o,
        "<p>Run options: <code>{}</code></p>",
        esc(&run.header.run_args.join(" "))
    );
    let _ = writeln!(o, "<pre>{}</pre>", esc(&table(run)));
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
        "<p>Results per frame size: <a href=\"ndr.csv\">ndr.csv</a>, <a href=\"ndr.json\">ndr.json</a>; every trial: <a href=\"trials.csv\">trials.csv</a>.</p></body></html>"
    );
    o
}

/// Writes ndr.json, ndr.csv, trials.csv, the plots and index.html into the session directory
/// (the results file, trials.jsonl, is written beside them as the search goes), then ends
/// the session: files an earlier session wrote and this one did not are removed. Returns the
/// names written and the names removed.
pub fn write_dir(
    dir: crate::outdir::SessionDir,
    run: &NdrRun,
) -> Result<(Vec<String>, Vec<String>)> {
    let mut files = vec![
        (
            "ndr.json".to_string(),
            crate::schema::to_pretty(crate::schema::NDR, run)? + "\n",
        ),
        ("ndr.csv".to_string(), results_csv(run)),
        ("trials.csv".to_string(), trials_csv(run)),
    ];
    let ps = plots(run);
    let index = index_html(run, &ps);
    files.extend(ps.into_iter().map(|(name, _, svg)| (name, svg)));
    files.push(("index.html".to_string(), index));
    crate::experiment::writer::write_files(dir, files)
}

/// A results file's searches, rebuilt from its trials (no trial is run).
fn rebuild(path: &Path) -> Result<NdrRun> {
    let (header, stored) = super::read_results(path)?;
    // Stopped from the start: the recorded trials are answered, none is run (or planned).
    let stop = std::sync::atomic::AtomicBool::new(true);
    let (sizes, trials, interrupted) =
        super::drive(&header, stored, &stop, |_, _| None, |_| Ok(()))?;
    Ok(NdrRun {
        header,
        results_file: path.to_path_buf(),
        interrupted,
        sizes,
        trials,
    })
}

/// One frame size's change in NDR.
#[derive(Debug, Clone, PartialEq)]
pub struct SizeChange {
    pub size: u32,
    pub a: Vec<f64>,
    pub b: Vec<f64>,
    /// Percent change of the median, and its interval: bootstrap with 3+ searches a side,
    /// else from the searches' brackets [highest pass, lowest failure].
    pub change: Option<(f64, (f64, f64), &'static str)>,
}

fn ndrs(run: &NdrRun, size: u32) -> (Vec<f64>, Vec<f64>) {
    let mut rates = Vec::new();
    let mut uppers = Vec::new();
    for r in run.sizes.iter().filter(|r| r.size == size) {
        if let Some(t) = target(r, "NDR")
            && let Some(x) = t.rate
        {
            rates.push(x);
            uppers.push(t.upper.unwrap_or(x));
        }
    }
    (rates, uppers)
}

pub fn size_changes(a: &NdrRun, b: &NdrRun) -> Vec<SizeChange> {
    let mut v = Vec::new();
    for &size in a.header.sizes.iter().filter(|s| b.header.sizes.contains(s)) {
        let (ra, ua) = ndrs(a, size);
        let (rb, ub) = ndrs(b, size);
        let change = if ra.len() >= stats::MIN_RUNS && rb.len() >= stats::MIN_RUNS {
            stats::compare(&ra, &rb)
                .ok()
                .filter(|c| c.relative)
                .map(|c| (c.change, c.ci, "95 % bootstrap"))
        } else if let (Some(&la), Some(&lb)) = (ra.first(), rb.first()) {
            let (ha, hb) = (ua[0], ub[0]);
            (la > 0.0).then(|| {
                (
                    (lb / la - 1.0) * 100.0,
                    ((lb / ha - 1.0) * 100.0, (hb / la - 1.0) * 100.0),
                    "bracket of the searches",
                )
            })
        } else {
            None
        };
        v.push(SizeChange {
            size,
            a: ra,
            b: rb,
            change,
        });
    }
    v
}

/// `upktgen compare A B` on two ndr results files.
pub fn compare_files(a: &Path, b: &Path) -> Result<String> {
    let ra = rebuild(a)?;
    let rb = rebuild(b)?;
    let mut s = String::new();
    let _ = writeln!(s, "A: {}\nB: {}", a.display(), b.display());
    let _ = writeln!(
        s,
        "{:>5} {:>12} {:>12} {:>9} {:>21}  interval",
        "size", "NDR A pps", "NDR B pps", "change", "95 % / bracket"
    );
    let changes = size_changes(&ra, &rb);
    if changes.is_empty() {
        anyhow::bail!(
            "{} and {}: no frame size in common",
            a.display(),
            b.display()
        );
    }
    for c in changes {
        let med = |x: &[f64]| {
            if x.is_empty() {
                "none".to_string()
            } else {
                format!("{:.0}", stats::median(x))
            }
        };
        let (ch, ci, how) = match c.change {
            Some((ch, ci, how)) => (
                format!("{ch:+.2} %"),
                format!("[{:+.2} %, {:+.2} %]", ci.0, ci.1),
                how,
            ),
            None => ("-".into(), "-".into(), "no NDR on one side"),
        };
        let _ = writeln!(
            s,
            "{:>5} {:>12} {:>12} {:>9} {:>21}  {how} ({} vs {} searches)",
            c.size,
            med(&c.a),
            med(&c.b),
            ch,
            ci,
            c.a.len(),
            c.b.len()
        );
    }
    Ok(s)
}
