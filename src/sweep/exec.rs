//! Running the points: each repetition of each point is a child `upktgen run|sim ... --json`,
//! so every run has a fresh lab and a failure stays in its run. Repetitions are interleaved
//! (repetition 1 of every point, then repetition 2, ...) so slow drift of the machine spreads
//! over all points instead of biasing the last ones.

use super::env::{CpuFreq, FreqGuard, Load};
use super::metrics::Metrics;
use super::points::Point;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How one run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Failed,
    /// Stopped by Ctrl-C (its partial figures, if any, are kept but not summarised).
    Interrupted,
}

/// One run of one point.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunRecord {
    /// 0-based order of execution (the `Iteration K` of the text output).
    pub iteration: usize,
    /// Index of the point.
    pub point: usize,
    /// 1-based repetition.
    pub rep: u32,
    pub label: String,
    pub status: Status,
    /// Why it failed: the child's error message.
    pub error: Option<String>,
    pub exit_code: Option<i32>,
    /// Process id of the child (its lab's namespaces are named `upktgen-PID-*`).
    #[serde(default)]
    pub pid: Option<u32>,
    /// Wall time of the child process in seconds.
    pub seconds: f64,
    /// The child's JSON document as it printed it.
    pub json: Option<serde_json::Value>,
}

impl RunRecord {
    /// Figures of a successful run.
    pub fn metrics(&self) -> Option<Metrics> {
        if self.status != Status::Ok {
            return None;
        }
        Metrics::from_json(self.json.as_ref()?)
    }
}

/// What a child printed and how it ended.
struct ChildEnd {
    pid: u32,
    code: Option<i32>,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    seconds: f64,
}

/// Runs `exe args`, forwarding a stop request as SIGTERM (the child stops cleanly and prints
/// its partial report; on a terminal it got the SIGINT too).
fn run_child(exe: &Path, args: &[String], stop: &AtomicBool) -> std::io::Result<ChildEnd> {
    let t0 = Instant::now();
    let mut child = Command::new(exe)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let pid = child.id();
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let t_out = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let t_err = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let mut signalled = false;
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break s;
        }
        if stop.load(Ordering::Relaxed) && !signalled {
            // The child is ours and not yet reaped, so its pid is still its own.
            let _ = crate::sys::proc::send_signal(child.id(), libc::SIGTERM);
            signalled = true;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stdout = t_out.join().unwrap_or_default();
    let stderr = t_err.join().unwrap_or_default();
    use std::os::unix::process::ExitStatusExt;
    let code = status.code().or_else(|| status.signal().map(|s| 128 + s));
    Ok(ChildEnd {
        pid,
        code,
        stdout,
        stderr,
        seconds: t0.elapsed().as_secs_f64(),
    })
}

/// The child's message: its last lines on standard error, without the program's prefix.
fn message_of(stderr: &[u8], code: Option<i32>) -> String {
    let text = String::from_utf8_lossy(stderr);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    match lines.last() {
        Some(l) => l.trim_start_matches("upktgen: ").to_string(),
        None => match code {
            Some(c) => format!("exited with status {c} and no message"),
            None => "ended without a status".to_string(),
        },
    }
}

/// Classifies a finished child into a record.
fn record(iteration: usize, p: &Point, rep: u32, end: std::io::Result<ChildEnd>) -> RunRecord {
    let mut r = RunRecord {
        iteration,
        point: p.index,
        rep,
        label: p.label.clone(),
        status: Status::Failed,
        error: None,
        exit_code: None,
        pid: None,
        seconds: 0.0,
        json: None,
    };
    let end = match end {
        Ok(e) => e,
        Err(e) => {
            r.error = Some(format!("could not start upktgen: {e}"));
            return r;
        }
    };
    r.exit_code = end.code;
    r.pid = Some(end.pid);
    r.seconds = end.seconds;
    let json: Option<serde_json::Value> = serde_json::from_slice(&end.stdout).ok();
    match end.code {
        Some(0) => match json {
            Some(j) if Metrics::from_json(&j).is_some() => {
                r.status = Status::Ok;
                r.json = Some(j);
            }
            _ => {
                r.error = Some(format!(
                    "no report: the output is not a run's JSON ({} bytes)",
                    end.stdout.len()
                ));
            }
        },
        Some(130) | Some(143) => {
            r.status = Status::Interrupted;
            r.json = json;
            r.error = Some("interrupted".into());
        }
        c => {
            r.error = Some(message_of(&end.stderr, c));
            r.json = json;
        }
    }
    r
}

/// The point's arguments for repetition `rep`: a simulation is deterministic for a given
/// seed, so unless the file sets `seed`, repetition R simulates with `--seed=R` and the
/// repetitions sample the model's cost jitter.
fn rep_args(p: &Point, rep: u32) -> Vec<String> {
    let mut a = p.args.clone();
    if a.first().map(String::as_str) == Some("sim") && !a.iter().any(|x| x.starts_with("--seed=")) {
        a.push(format!("--seed={rep}"));
    }
    a
}

/// How the runs went.
pub struct Executed {
    pub records: Vec<RunRecord>,
    /// Stopped by a signal before the end.
    pub interrupted: bool,
}

fn fmt_dur(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, s / 60 % 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

/// Runs every repetition of every point, interleaved, calling `done` after each run.
/// Progress goes to standard error.
pub fn run_all(
    exe: &Path,
    points: &[Point],
    repetitions: u32,
    cpufreq: Option<&CpuFreq>,
    stop: &Arc<AtomicBool>,
    mut done: impl FnMut(&RunRecord),
) -> Result<Executed> {
    // Saved before the first change, restored when this returns (any way it returns).
    let _freq: Option<FreqGuard> = cpufreq.map(CpuFreq::save).transpose()?;
    let total = points.len() * repetitions as usize;
    let mut records: Vec<RunRecord> = Vec::with_capacity(total);
    let mut interrupted = false;
    'reps: for rep in 1..=repetitions {
        for p in points {
            if stop.load(Ordering::Relaxed) {
                interrupted = true;
                break 'reps;
            }
            let n = records.len();
            let eta = if n == 0 {
                String::new()
            } else {
                let mean = records.iter().map(|r| r.seconds).sum::<f64>() / n as f64;
                format!(", ETA {}", fmt_dur(mean * (total - n) as f64))
            };
            eprintln!(
                "[sweep] run {}/{total}: point {}/{} ({}), repetition {rep}/{repetitions}{eta}",
                n + 1,
                p.index + 1,
                points.len(),
                p.label
            );
            if let (Some(f), Some(mhz)) = (cpufreq, p.cpu_mhz) {
                f.set(mhz)?;
            }
            let end = {
                let _load = Load::start(p.load)?;
                run_child(exe, &rep_args(p, rep), stop)
            };
            let r = record(n, p, rep, end);
            if r.status == Status::Interrupted || stop.load(Ordering::Relaxed) {
                interrupted = true;
            }
            done(&r);
            records.push(r);
            if interrupted {
                break 'reps;
            }
        }
    }
    Ok(Executed {
        records,
        interrupted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point() -> Point {
        Point {
            index: 2,
            label: "x".into(),
            values: vec![],
            args: vec![],
            load: 0,
            cpu_mhz: None,
        }
    }

    fn end(code: i32, out: &str, err: &str) -> std::io::Result<ChildEnd> {
        Ok(ChildEnd {
            pid: 1,
            code: Some(code),
            stdout: out.as_bytes().to_vec(),
            stderr: err.as_bytes().to_vec(),
            seconds: 1.5,
        })
    }

    #[test]
    fn failures_keep_the_message() {
        let r = record(
            0,
            &point(),
            1,
            end(1, "", "warning\nupktgen: --dev nope0: no such interface\n"),
        );
        assert_eq!(r.status, Status::Failed);
        assert_eq!(r.error.as_deref(), Some("--dev nope0: no such interface"));
        let r = record(0, &point(), 1, end(0, "{\"a\": 1}", ""));
        assert_eq!(r.status, Status::Failed);
        assert!(r.error.unwrap().contains("not a run's JSON"));
        let r = record(0, &point(), 1, end(130, "", ""));
        assert_eq!(r.status, Status::Interrupted);
        let r = record(
            3,
            &point(),
            2,
            Err(std::io::Error::from(std::io::ErrorKind::NotFound)),
        );
        assert!(r.error.unwrap().starts_with("could not start"));
        assert_eq!(r.point, 2);
    }

    #[test]
    fn simulations_repeat_with_their_own_seed() {
        let mut p = point();
        p.args = vec!["sim".into(), "--json".into()];
        assert_eq!(rep_args(&p, 2), ["sim", "--json", "--seed=2"]);
        p.args.push("--seed=9".into());
        assert_eq!(rep_args(&p, 2), ["sim", "--json", "--seed=9"]);
        p.args = vec!["run".into()];
        assert_eq!(rep_args(&p, 2), ["run"]);
    }

    #[test]
    fn durations_read_well() {
        assert_eq!(fmt_dur(5.4), "5s");
        assert_eq!(fmt_dur(125.0), "2m05s");
        assert_eq!(fmt_dur(3700.0), "1h01m");
    }
}
