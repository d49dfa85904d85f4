//! What `upktgen rfc2544` prints and writes: per frame size the RFC's tables (throughput,
//! latency with PDV and IPDV, the frame loss rate at each step, back-to-back frames with
//! RFC 9004's buffer times), the summary of every size, CSV, SVG plots, index.html; and
//! `upktgen compare` of two results files.

use super::{Record, Rfc2544Run, SizeOutcome};
use crate::plot::{self, Line, esc};
use crate::stats;
use anyhow::Result;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;

/// The latency trials of a size, summarised over the trials: the lowest minimum, the median
/// of the trials' means, medians, 99th percentiles, PDVs and IPDVs (RFC 8219 reports the
/// median over its trials), the highest maximum. µs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LatencySummary {
    pub rate: f64,
    pub trials: usize,
    pub trial_s: f64,
    pub min_us: f64,
    pub mean_us: f64,
    pub median_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
    pub pdv_us: f64,
    pub ipdv_p999_us: Option<f64>,
    pub ipdv_max_us: Option<f64>,
}

/// One step of the frame loss rate test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LossStep {
    /// Percent of the maximum rate.
    pub offered_pct: f64,
    pub rate: f64,
    pub sent: u64,
    pub lost: u64,
    /// RFC 2544's frame loss rate: (sent − received) × 100 / sent.
    pub loss_pct: f64,
}

/// The back-to-back test of a size: each repetition's longest burst without loss, their mean,
/// and RFC 9004's buffer times from it and the measured throughput.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BackToBack {
    pub max_rate: f64,
    pub frames: Vec<u64>,
    pub mean: f64,
    pub min: u64,
    pub max: u64,
    pub sd: f64,
    /// Repetitions whose result is the longest burst asked (`--max-burst`).
    pub at_limit: usize,
    /// Implied DUT buffer time: mean / max rate, in seconds.
    pub implied_s: f64,
    /// Corrected DUT buffer time (RFC 9004): implied × (1 − throughput / max rate).
    pub corrected_s: Option<f64>,
}

/// Every test's result of one frame size.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SizeSummary {
    pub size: u32,
    pub throughput_pps: Option<f64>,
    pub throughput_mbps: Option<f64>,
    pub throughput_bound: Option<String>,
    pub latency: Option<LatencySummary>,
    pub loss: Vec<LossStep>,
    pub back_to_back: Option<BackToBack>,
    pub notes: Vec<String>,
}

fn median(v: &[f64]) -> f64 {
    if v.is_empty() { 0.0 } else { stats::median(v) }
}

fn recs<'a>(run: &'a Rfc2544Run, idx: &'a [usize]) -> impl Iterator<Item = &'a Record> + 'a {
    idx.iter().filter_map(|&i| run.trials.get(i))
}

/// The summary of one size's outcome.
pub fn summary(run: &Rfc2544Run, s: &SizeOutcome) -> SizeSummary {
    let tp = s.throughput.as_ref().and_then(|t| t.rate);
    let lat: Vec<_> = recs(run, &s.latency_trials)
        .filter_map(|r| r.delay.map(|d| (r.request.rate.unwrap_or(0.0), d)))
        .collect();
    let latency = (!lat.is_empty()).then(|| {
        let col = |f: fn(&super::Delay) -> f64| lat.iter().map(|(_, d)| f(d)).collect::<Vec<_>>();
        let opt = |f: fn(&super::Delay) -> Option<f64>| {
            let v: Vec<f64> = lat.iter().filter_map(|(_, d)| f(d)).collect();
            v
        };
        let ipdv999 = opt(|d| d.ipdv_p999_us);
        let ipdvmax = opt(|d| d.ipdv_max_us);
        LatencySummary {
            rate: lat[0].0,
            trials: lat.len(),
            trial_s: run.header.suite.latency_s,
            min_us: col(|d| d.min_us).into_iter().fold(f64::INFINITY, f64::min),
            mean_us: median(&col(|d| d.mean_us)),
            median_us: median(&col(|d| d.p50_us)),
            p99_us: median(&col(|d| d.p99_us)),
            max_us: col(|d| d.max_us).into_iter().fold(0.0, f64::max),
            pdv_us: median(&col(|d| d.pdv_us)),
            ipdv_p999_us: (!ipdv999.is_empty()).then(|| median(&ipdv999)),
            ipdv_max_us: ipdvmax.into_iter().reduce(f64::max),
        }
    });
    let max_rate = s.max_rate.unwrap_or(0.0);
    let loss = recs(run, &s.loss_trials)
        .filter(|r| r.obs.error.is_none())
        .map(|r| {
            let lost = r.obs.dut_lost + r.obs.receiver_lost + r.obs.sender_lost;
            let rate = r.request.rate.unwrap_or(0.0);
            LossStep {
                offered_pct: if max_rate > 0.0 {
                    (rate / max_rate * 1000.0).round() / 10.0
                } else {
                    0.0
                },
                rate,
                sent: r.obs.sent,
                lost,
                loss_pct: r.obs.loss_ratio() * 100.0,
            }
        })
        .collect();
    let frames: Vec<u64> = s.bursts.iter().filter_map(|b| b.frames).collect();
    let back_to_back = (!frames.is_empty() && max_rate > 0.0).then(|| {
        let f: Vec<f64> = frames.iter().map(|&n| n as f64).collect();
        let mean = f.iter().sum::<f64>() / f.len() as f64;
        let sd = if f.len() > 1 {
            (f.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (f.len() - 1) as f64).sqrt()
        } else {
            0.0
        };
        let implied = mean / max_rate;
        BackToBack {
            max_rate,
            mean,
            min: *frames.iter().min().unwrap_or(&0),
            max: *frames.iter().max().unwrap_or(&0),
            sd,
            at_limit: s.bursts.iter().filter(|b| b.at_limit).count(),
            implied_s: implied,
            corrected_s: tp.map(|t| implied * (1.0 - (t / max_rate).min(1.0))),
            frames,
        }
    });
    SizeSummary {
        size: s.size,
        throughput_pps: tp,
        throughput_mbps: tp.map(|t| t * f64::from(s.size) * 8.0 / 1e6),
        throughput_bound: s.throughput.as_ref().map(|t| t.bound.name().to_string()),
        latency,
        loss,
        back_to_back,
        notes: s.notes.clone(),
    }
}

fn opt(v: Option<f64>, prec: usize) -> String {
    v.map_or("-".into(), |x| format!("{x:.prec$}"))
}

/// The tables: every size's summary, then each size's tests in the RFC's terms.
pub fn tables(run: &Rfc2544Run) -> String {
    let mut o = String::new();
    let su = &run.header.suite;
    let _ = writeln!(
        o,
        "RFC 2544 tests: {}",
        su.tests
            .iter()
            .map(|t| t.name())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = writeln!(
        o,
        "{:>5} {:>11} {:>8} {:>8} {:>8} {:>8} {:>10} {:>9} {:>10} {:>10}",
        "size",
        "thru pps",
        "Mb/s",
        "lat p50",
        "PDV us",
        "IPDV999",
        "loss@max%",
        "b2b fr",
        "buffer ms",
        "bound"
    );
    for s in &run.summaries {
        let _ = writeln!(
            o,
            "{:>5} {:>11} {:>8} {:>8} {:>8} {:>8} {:>10} {:>9} {:>10} {:>10}",
            s.size,
            opt(s.throughput_pps, 0),
            opt(s.throughput_mbps, 1),
            opt(s.latency.map(|l| l.median_us), 0),
            opt(s.latency.map(|l| l.pdv_us), 0),
            opt(s.latency.and_then(|l| l.ipdv_p999_us), 0),
            opt(s.loss.first().map(|l| l.loss_pct), 2),
            opt(s.back_to_back.as_ref().map(|b| b.mean), 1),
            opt(
                s.back_to_back
                    .as_ref()
                    .and_then(|b| b.corrected_s)
                    .map(|t| t * 1000.0),
                3
            ),
            s.throughput_bound.as_deref().unwrap_or("-"),
        );
    }
    for s in &run.summaries {
        size_tables(&mut o, run, s);
    }
    let secs: f64 = run.trials.iter().map(|t| t.request.duration_s).sum();
    let wall: f64 = run.trials.iter().map(|t| t.seconds).sum();
    let _ = writeln!(
        o,
        "{} trials ({secs:.1} s of trials, {wall:.1} s with each run's set-up){}",
        run.trials.len(),
        if run.interrupted {
            "; interrupted: the tables are partial"
        } else {
            ""
        }
    );
    o
}

fn size_tables(o: &mut String, run: &Rfc2544Run, s: &SizeSummary) {
    let su = &run.header.suite;
    let _ = writeln!(o, "\n{}-byte frames", s.size);
    let _ = writeln!(
        o,
        "  Throughput (26.1): {} pps ({} Mb/s), bound by {}",
        opt(s.throughput_pps, 0),
        opt(s.throughput_mbps, 1),
        s.throughput_bound.as_deref().unwrap_or("-")
    );
    if let Some(l) = &s.latency {
        let _ = writeln!(
            o,
            "  Latency (26.2) at {:.0} pps, {} trials of {} s (RFC 2544 asks 20 x 120 s), us:",
            l.rate, l.trials, l.trial_s
        );
        let _ = writeln!(
            o,
            "    {:>5} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>20}",
            "trial", "min", "mean", "median", "p99", "max", "PDV", "IPDV p50/p99.9/max"
        );
        let o_s = run.sizes.iter().find(|x| x.size == s.size);
        for r in o_s.into_iter().flat_map(|x| recs(run, &x.latency_trials)) {
            if let Some(d) = r.delay {
                let _ = writeln!(
                    o,
                    "    {:>5} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>20}",
                    r.rep,
                    d.min_us,
                    d.mean_us,
                    d.p50_us,
                    d.p99_us,
                    d.max_us,
                    d.pdv_us,
                    format!(
                        "{}/{}/{}",
                        opt(d.ipdv_p50_us, 1),
                        opt(d.ipdv_p999_us, 1),
                        opt(d.ipdv_max_us, 1)
                    )
                );
            }
        }
        let _ = writeln!(
            o,
            "    {:>5} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>20}",
            "all",
            l.min_us,
            l.mean_us,
            l.median_us,
            l.p99_us,
            l.max_us,
            l.pdv_us,
            format!("-/{}/{}", opt(l.ipdv_p999_us, 1), opt(l.ipdv_max_us, 1))
        );
    }
    if !s.loss.is_empty() {
        let _ = writeln!(
            o,
            "  Frame loss rate (26.3), {} s trials, steps of {} % of the maximum rate:",
            su.loss_s,
            su.loss_step * 100.0
        );
        let _ = writeln!(
            o,
            "    {:>9} {:>11} {:>11} {:>11} {:>9}",
            "offered%", "pps", "sent", "lost", "loss %"
        );
        for l in &s.loss {
            let _ = writeln!(
                o,
                "    {:>9.1} {:>11.0} {:>11} {:>11} {:>9.3}",
                l.offered_pct, l.rate, l.sent, l.lost, l.loss_pct
            );
        }
    }
    if let Some(b) = &s.back_to_back {
        let _ = writeln!(
            o,
            "  Back-to-back frames (26.4, RFC 9004) at {:.0} pps, {} repetitions (RFC 2544 asks 50): {}",
            b.max_rate,
            b.frames.len(),
            b.frames
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        );
        let _ = writeln!(
            o,
            "    mean {:.1} frames (min {}, max {}, sd {:.1}){}; implied buffer time {:.3} ms; corrected (RFC 9004, throughput {}) {} ms",
            b.mean,
            b.min,
            b.max,
            b.sd,
            if b.at_limit > 0 {
                format!("; {} at --max-burst {}", b.at_limit, su.max_burst)
            } else {
                String::new()
            },
            b.implied_s * 1000.0,
            opt(s.throughput_pps, 0),
            opt(b.corrected_s.map(|t| t * 1000.0), 3)
        );
    }
    for n in &s.notes {
        let _ = writeln!(o, "  note: {}", crate::text::printable(n));
    }
}

/// One row per frame size.
pub fn results_csv(run: &Rfc2544Run) -> String {
    let mut o = String::from(
        "size,throughput_pps,throughput_mbps,bound,latency_trials,latency_min_us,latency_mean_us,latency_median_us,latency_p99_us,latency_max_us,pdv_us,ipdv_p999_us,ipdv_max_us,loss_at_max_pct,b2b_reps,b2b_mean_frames,b2b_min,b2b_max,implied_buffer_s,corrected_buffer_s\n",
    );
    for s in &run.summaries {
        let l = s.latency;
        let b = s.back_to_back.as_ref();
        let _ = writeln!(
            o,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            s.size,
            opt(s.throughput_pps, 1),
            opt(s.throughput_mbps, 3),
            s.throughput_bound.as_deref().unwrap_or(""),
            l.map_or(0, |l| l.trials),
            opt(l.map(|l| l.min_us), 3),
            opt(l.map(|l| l.mean_us), 3),
            opt(l.map(|l| l.median_us), 3),
            opt(l.map(|l| l.p99_us), 3),
            opt(l.map(|l| l.max_us), 3),
            opt(l.map(|l| l.pdv_us), 3),
            opt(l.and_then(|l| l.ipdv_p999_us), 3),
            opt(l.and_then(|l| l.ipdv_max_us), 3),
            opt(s.loss.first().map(|x| x.loss_pct), 4),
            b.map_or(0, |b| b.frames.len()),
            opt(b.map(|b| b.mean), 2),
            b.map_or(String::new(), |b| b.min.to_string()),
            b.map_or(String::new(), |b| b.max.to_string()),
            opt(b.map(|b| b.implied_s), 9),
            opt(b.and_then(|b| b.corrected_s), 9),
        );
    }
    o.replace(",-", ",")
}

/// Every trial, one row each.
pub fn trials_csv(run: &Rfc2544Run) -> String {
    let mut o = String::from(
        "test,size,rep,step,rate_pps,duration_s,burst,sent,dut_lost,receiver_lost,sender_lost,achieved_pps,latency_p50_us,pdv_us,ipdv_p999_us,error\n",
    );
    for r in &run.trials {
        let _ = writeln!(
            o,
            "{},{},{},{},{},{},{},{},{},{},{},{:.1},{},{},{},{}",
            r.test.name(),
            r.size,
            r.rep,
            r.step,
            r.request.rate.map_or(String::new(), |x| format!("{x:.0}")),
            r.request.duration_s,
            r.burst.map_or(String::new(), |n| n.to_string()),
            r.obs.sent,
            r.obs.dut_lost,
            r.obs.receiver_lost,
            r.obs.sender_lost,
            r.obs.achieved,
            r.delay
                .map_or(String::new(), |d| format!("{:.3}", d.p50_us)),
            r.delay
                .map_or(String::new(), |d| format!("{:.3}", d.pdv_us)),
            r.delay
                .and_then(|d| d.ipdv_p999_us)
                .map_or(String::new(), |x| format!("{x:.3}")),
            r.obs
                .error
                .as_deref()
                .map(|e| format!("\"{}\"", e.replace('"', "'")))
                .unwrap_or_default()
        );
    }
    o
}

/// The plots: (file name, caption, SVG).
pub fn plots(run: &Rfc2544Run) -> Vec<(String, String, String)> {
    let mut v = Vec::new();
    let loss: Vec<Line> = run
        .summaries
        .iter()
        .filter(|s| !s.loss.is_empty())
        .map(|s| Line {
            name: format!("{} B", s.size),
            points: s
                .loss
                .iter()
                .map(|l| (l.offered_pct, l.loss_pct, None))
                .collect(),
        })
        .collect();
    if !loss.is_empty() {
        v.push((
            "loss_curve.svg".to_string(),
            "Frame loss rate against the offered rate (RFC 2544 26.3)".to_string(),
            plot::line_chart(
                "Frame loss rate",
                "offered rate (% of the maximum rate)",
                "frames lost (%)",
                &loss,
            ),
        ));
    }
    let lat: Vec<plot::XyPoint> = run
        .summaries
        .iter()
        .filter_map(|s| {
            s.latency
                .map(|l| (f64::from(s.size), l.median_us, Some((l.min_us, l.p99_us))))
        })
        .collect();
    if !lat.is_empty() {
        let pdv = run
            .summaries
            .iter()
            .filter_map(|s| s.latency.map(|l| (f64::from(s.size), l.pdv_us, None)))
            .collect();
        v.push((
            "latency_by_size.svg".to_string(),
            "Latency at the throughput rate by frame size: median (bars: min to p99) and PDV (RFC 2544 26.2, RFC 8219)".to_string(),
            plot::line_chart(
                "Latency at the throughput rate",
                "frame size (bytes)",
                "one-way delay (us)",
                &[
                    Line { name: "median".into(), points: lat },
                    Line { name: "PDV (p99.9 - min)".into(), points: pdv },
                ],
            ),
        ));
    }
    let b2b: Vec<plot::XyPoint> = run
        .summaries
        .iter()
        .filter_map(|s| {
            s.back_to_back.as_ref().map(|b| {
                (
                    f64::from(s.size),
                    b.mean,
                    Some((b.min as f64, b.max as f64)),
                )
            })
        })
        .collect();
    if !b2b.is_empty() {
        v.push((
            "burst_length.svg".to_string(),
            "Back-to-back frames by frame size: mean of the repetitions, bars min to max (RFC 2544 26.4, RFC 9004)".to_string(),
            plot::line_chart(
                "Back-to-back frames",
                "frame size (bytes)",
                "longest burst without loss (frames)",
                &[Line { name: "mean".into(), points: b2b }],
            ),
        ));
    }
    v
}

/// Writes rfc2544.json, rfc2544.csv, trials.csv, the plots and index.html into the session
/// directory, then ends the session. Returns the names written and removed.
pub fn write_dir(
    dir: crate::outdir::SessionDir,
    run: &Rfc2544Run,
) -> Result<(Vec<String>, Vec<String>)> {
    let mut files = vec![
        (
            "rfc2544.json".to_string(),
            crate::schema::to_pretty(crate::schema::RFC2544, run)? + "\n",
        ),
        ("rfc2544.csv".to_string(), results_csv(run)),
        ("trials.csv".to_string(), trials_csv(run)),
        ("tables.txt".to_string(), tables(run)),
    ];
    let ps = plots(run);
    let mut index = String::from(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>upktgen rfc2544</title></head><body><h1>RFC 2544</h1>\n",
    );
    let _ = writeln!(index, "<pre>{}</pre>", esc(&tables(run)));
    for (name, caption, _) in &ps {
        let _ = writeln!(
            index,
            "<figure><img src=\"{}\" alt=\"{}\"><figcaption>{}</figcaption></figure>",
            esc(name),
            esc(caption),
            esc(caption)
        );
    }
    index.push_str("<p><a href=\"rfc2544.csv\">rfc2544.csv</a>, <a href=\"rfc2544.json\">rfc2544.json</a>, <a href=\"trials.csv\">trials.csv</a></p></body></html>\n");
    files.extend(ps.into_iter().map(|(n, _, svg)| (n, svg)));
    files.push(("index.html".to_string(), index));
    crate::experiment::writer::write_files(dir, files)
}

/// A figure of a size's summary, for `compare`.
type Figure = fn(&SizeSummary) -> Option<f64>;

fn change(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if a != 0.0 => format!("{:+.2} %", (b / a - 1.0) * 100.0),
        _ => "-".into(),
    }
}

/// `upktgen compare A B` of two rfc2544 results files: per frame size, each test's result in
/// A and B and the change.
pub fn compare_files(a: &Path, b: &Path) -> Result<String> {
    let ra = super::rebuild(a)?;
    let rb = super::rebuild(b)?;
    let mut s = String::new();
    let _ = writeln!(s, "A: {}\nB: {}", a.display(), b.display());
    let _ = writeln!(
        s,
        "{:>5} {:<22} {:>12} {:>12} {:>10}",
        "size", "figure", "A", "B", "change"
    );
    let mut any = false;
    for x in &ra.summaries {
        let Some(y) = rb.summaries.iter().find(|y| y.size == x.size) else {
            continue;
        };
        any = true;
        let rows: [(&str, Figure); 6] = [
            ("throughput pps", |s| s.throughput_pps),
            ("latency median us", |s| s.latency.map(|l| l.median_us)),
            ("PDV us", |s| s.latency.map(|l| l.pdv_us)),
            ("IPDV p99.9 us", |s| s.latency.and_then(|l| l.ipdv_p999_us)),
            ("loss at max rate %", |s| s.loss.first().map(|l| l.loss_pct)),
            ("back-to-back frames", |s| {
                s.back_to_back.as_ref().map(|b| b.mean)
            }),
        ];
        for (name, f) in rows {
            let (va, vb) = (f(x), f(y));
            if va.is_none() && vb.is_none() {
                continue;
            }
            let _ = writeln!(
                s,
                "{:>5} {:<22} {:>12} {:>12} {:>10}",
                x.size,
                name,
                opt(va, 2),
                opt(vb, 2),
                change(va, vb)
            );
        }
    }
    if !any {
        anyhow::bail!(
            "{} and {}: no frame size in common",
            a.display(),
            b.display()
        );
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc_9004s_corrected_buffer_time() {
        // 100 frames at 10,000 pps: implied 10 ms; the DUT forwarded at 2,500 pps meanwhile,
        // so a quarter of the burst left during it: corrected 7.5 ms.
        let s = SizeOutcome {
            size: 64,
            max_rate: Some(10_000.0),
            throughput: None,
            throughput_trials: vec![],
            latency_trials: vec![],
            loss_trials: vec![],
            bursts: vec![crate::experiment::suite::BurstSearch {
                rep: 1,
                frames: Some(100),
                at_limit: false,
                trials: vec![],
            }],
            notes: vec![],
        };
        let h: super::super::Header = serde_json::from_value(serde_json::json!({
            "upktgen_rfc2544": 1,
            "search": {"upktgen_ndr": 1, "sizes": [64], "repeat": 1, "latency": false,
                "line_rate_mbps": null, "run_args": [],
                "config": {"loss": 0.0, "pdr": null, "precision": {"relative": 0.01},
                    "max_rate": 10000.0, "min_rate": 0.0, "search_s": 1.0, "final_s": 1.0,
                    "tolerance": 0.02}},
            "suite": {"tests": ["throughput", "back_to_back"], "latency_trials": 1,
                "latency_s": 1.0, "loss_step": 0.1, "loss_s": 1.0, "b2b_trials": 1,
                "max_burst": 1000, "b2b_s": 1.0}}))
        .unwrap();
        let mut run = super::super::finish(h, "x".into(), false, vec![s], vec![]);
        let mut o = run.sizes[0].clone();
        o.throughput = Some(crate::experiment::search::TargetResult {
            name: "NDR".into(),
            loss: 0.0,
            rate: Some(2500.0),
            upper: None,
            bound: crate::experiment::search::Bound::Dut,
            trials_at_rate: vec![],
            note: None,
        });
        run.sizes[0] = o;
        let b = summary(&run, &run.sizes[0]).back_to_back.unwrap();
        assert!((b.implied_s - 0.010).abs() < 1e-12);
        assert!((b.corrected_s.unwrap() - 0.0075).abs() < 1e-12);
    }
}
