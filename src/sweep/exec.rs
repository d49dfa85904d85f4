//! Running the points on the experiment core: its grid planner proposes each repetition of
//! each point (interleaved: repetition 1 of every point, then repetition 2, ...) so slow
//! drift of the machine spreads over all points instead of biasing the last ones; the
//! sweep's runner sets the point's CPU clock and load and runs it as a child `upktgen
//! run|sim ... --json`, so every run has a fresh lab and a failure stays in its run.

use super::env::{CpuFreq, FreqGuard, Load};
use super::metrics::Metrics;
use super::points::Point;
use crate::experiment::child::{self, ChildEnd};
use crate::experiment::grid::Grid;
use crate::experiment::{Coords, Ran, Runner, Trial};
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

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
    if end.killed {
        r.status = Status::Interrupted;
        r.error = Some("interrupted; killed after it did not stop on SIGTERM".into());
        return r;
    }
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
            r.error = Some(child::message_of(&end.stderr, c));
            r.json = json;
        }
    }
    r
}

/// The point's arguments for repetition `rep` ([`crate::experiment::trial::rep_argv`]).
#[cfg(test)]
fn rep_args(p: &Point, rep: u32) -> Vec<String> {
    crate::experiment::trial::rep_argv(p.args.clone(), rep)
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

/// A run that could not be started because its surroundings could not be set up (the CPU
/// clock, the load): a failed run with the reason, so the sweep goes on.
fn not_started(iteration: usize, p: &Point, rep: u32, why: String) -> RunRecord {
    RunRecord {
        iteration,
        point: p.index,
        rep,
        label: p.label.clone(),
        status: Status::Failed,
        error: Some(why),
        exit_code: None,
        pid: None,
        seconds: 0.0,
        json: None,
    }
}

/// The sweep's runner: each trial's point with its CPU clock and load set up around it,
/// run as a child of `exe`, with the progress line before it.
struct PointRunner<'a> {
    exe: &'a Path,
    points: &'a [Point],
    cpufreq: Option<&'a CpuFreq>,
    repetitions: u32,
    total: usize,
    /// Runs so far and their wall time, for the ETA.
    ran: usize,
    seconds: f64,
}

impl Runner<RunRecord> for PointRunner<'_> {
    fn run(&mut self, t: &Trial, stop: &AtomicBool) -> Ran<RunRecord> {
        let Coords::Point { point, rep } = t.coords else {
            unreachable!("a sweep runs a grid's points")
        };
        let p = &self.points[point];
        let (n, total, repetitions) = (self.ran, self.total, self.repetitions);
        let eta = if n == 0 {
            String::new()
        } else {
            let mean = self.seconds / n as f64;
            format!(", ETA {}", fmt_dur(mean * (total - n) as f64))
        };
        crate::errln!(
            "[sweep] run {}/{total}: point {}/{} ({}), repetition {rep}/{repetitions}{eta}",
            n + 1,
            p.index + 1,
            self.points.len(),
            p.label
        );
        let set_up = match (self.cpufreq, p.cpu_mhz) {
            (Some(f), Some(mhz)) => f
                .set(mhz)
                .map_err(|e| format!("setting cpu_mhz = {mhz}: {e:#}")),
            _ => Ok(()),
        }
        .and_then(|()| {
            Load::start(p.load).map_err(|e| format!("starting load = {}: {e:#}", p.load))
        });
        let r = match set_up {
            Ok(load) => {
                let end = child::run_trial(self.exe, t, stop);
                drop(load);
                record(n, p, rep, end)
            }
            Err(why) => not_started(n, p, rep, why),
        };
        self.ran += 1;
        self.seconds += r.seconds;
        if r.status == Status::Interrupted || stop.load(Ordering::Relaxed) {
            Ran::Interrupted(Some(r))
        } else {
            Ran::Done(r)
        }
    }
}

/// Runs every repetition of every point of `grid` (`points[i]` is its point `i`),
/// interleaved, calling `done` with the runs so far after each run. A run whose CPU clock
/// or load cannot be set up is recorded as failed and the sweep goes on. Progress goes to
/// standard error.
pub fn run_all(
    exe: &Path,
    grid: &mut Grid,
    points: &[Point],
    cpufreq: Option<&CpuFreq>,
    stop: &Arc<AtomicBool>,
    mut done: impl FnMut(&[RunRecord]),
) -> Result<Executed> {
    // Saved before the first change, restored when this returns (any way it returns).
    let _freq: Option<FreqGuard> = cpufreq.map(CpuFreq::save).transpose()?;
    let mut runner = PointRunner {
        exe,
        points,
        cpufreq,
        repetitions: grid.repetitions(),
        total: grid.runs(),
        ran: 0,
        seconds: 0.0,
    };
    let d = crate::experiment::drive(
        grid,
        &mut runner,
        &mut crate::experiment::resume::Replay::none(),
        stop,
        |runs| {
            done(runs);
            Ok(())
        },
    )?;
    Ok(Executed {
        records: d.outcomes,
        interrupted: d.interrupted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::child::{message_of, run_child};
    use std::time::Duration;

    #[test]
    fn a_childs_message_is_its_error_line() {
        // clap's error, not the "For more information" line after it.
        let clap = b"error: the argument '--pcap <FILE>' cannot be used with '--duration <TIME>'\n\nUsage: upktgen run --pcap <FILE>\n\nFor more information, try '--help'.\n";
        assert_eq!(
            message_of(clap, Some(2)),
            "the argument '--pcap <FILE>' cannot be used with '--duration <TIME>'"
        );
        assert_eq!(
            message_of(
                b"upktgen: warning: x\nupktgen: eth9: no such device\n",
                Some(1)
            ),
            "eth9: no such device"
        );
        assert_eq!(
            message_of(b"", Some(1)),
            "exited with status 1 and no message"
        );
    }

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
            killed: false,
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

    fn tmp_dir(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("upktgen-exec-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// A child that ignores SIGTERM (its shell creates `ready` once the trap is set, then
    /// becomes `sleep`, which keeps SIGTERM ignored), stopped while it runs; `second` asks a
    /// second time once the first request was taken.
    fn stubborn_child(tag: &str, grace: Duration, second: bool) -> (ChildEnd, bool) {
        let d = tmp_dir(tag);
        let ready = d.join("ready");
        let script = format!("trap '' TERM; : > '{}'; exec sleep 30", ready.display());
        let stop = Arc::new(AtomicBool::new(false));
        let asker = {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                while !ready.exists() {
                    std::thread::sleep(Duration::from_millis(10));
                }
                stop.store(true, Ordering::Relaxed);
                if second {
                    while stop.load(Ordering::Relaxed) {
                        std::thread::sleep(Duration::from_millis(10));
                    }
                    stop.store(true, Ordering::Relaxed);
                }
            })
        };
        let end = run_child(
            Path::new("/bin/sh"),
            &["-c".to_string(), script],
            &stop,
            grace,
        )
        .unwrap();
        asker.join().unwrap();
        let _ = std::fs::remove_dir_all(&d);
        (end, stop.load(Ordering::Relaxed))
    }

    #[test]
    fn a_child_that_ignores_sigterm_is_killed_after_the_grace() {
        let (end, stop) = stubborn_child("grace", Duration::from_millis(200), false);
        assert!(end.killed);
        assert_eq!(end.code, Some(128 + libc::SIGKILL));
        assert!(stop, "the stop request is kept for run_all");
        let r = record(0, &point(), 1, Ok(end));
        assert_eq!(r.status, Status::Interrupted);
    }

    #[test]
    fn a_second_stop_request_kills_the_child_at_once() {
        // The grace alone would wait ten minutes (longer than the child lives).
        let (end, stop) = stubborn_child("second", Duration::from_secs(600), true);
        assert!(end.killed);
        assert_eq!(end.code, Some(128 + libc::SIGKILL));
        assert!(stop);
    }

    #[test]
    fn a_clock_that_cannot_be_set_fails_its_run_and_the_sweep_goes_on() {
        let root = tmp_dir("mhz");
        let c = root.join("cpu0/cpufreq");
        std::fs::create_dir_all(&c).unwrap();
        for (f, v) in [
            ("cpuinfo_min_freq", "800000"),
            ("cpuinfo_max_freq", "2400000"),
            ("scaling_min_freq", "800000"),
            ("scaling_max_freq", "2400000"),
        ] {
            std::fs::write(c.join(f), v).unwrap();
        }
        let f = CpuFreq::open(&root).unwrap();
        let pts: Vec<Point> = [Some(1000.0), Some(5000.0), None]
            .into_iter()
            .enumerate()
            .map(|(i, mhz)| Point {
                index: i,
                cpu_mhz: mhz,
                ..point()
            })
            .collect();
        let trials = pts
            .iter()
            .map(|p| {
                Trial::new(
                    p.label.clone(),
                    Coords::Point {
                        point: p.index,
                        rep: 1,
                    },
                    crate::experiment::Ask::point(
                        crate::experiment::trial::Command::Sim,
                        vec!["--count=1".into()],
                    ),
                )
            })
            .collect();
        let mut grid = Grid::new(trials, 1).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let mut seen = Vec::new();
        let done = run_all(
            Path::new("/bin/true"),
            &mut grid,
            &pts,
            Some(&f),
            &stop,
            |runs| seen.push(runs.len()),
        )
        .unwrap();
        assert_eq!(seen, [1, 2, 3]);
        assert!(!done.interrupted);
        let r = &done.records;
        assert_eq!(r.len(), 3);
        assert!(r.iter().all(|x| x.status == Status::Failed));
        // /bin/true ran (and printed no report); the 5000 MHz point never started.
        assert!(r[0].pid.is_some() && r[2].pid.is_some());
        assert_eq!(r[1].pid, None);
        assert_eq!(
            r[1].error.as_deref(),
            Some(
                "setting cpu_mhz = 5000: cpu_mhz = 5000: outside this CPU's range 800 to 2400 MHz"
            )
        );
        // The guard put the clock back.
        assert_eq!(
            std::fs::read_to_string(c.join("scaling_max_freq")).unwrap(),
            "2400000"
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn durations_read_well() {
        assert_eq!(fmt_dur(5.4), "5s");
        assert_eq!(fmt_dur(125.0), "2m05s");
        assert_eq!(fmt_dur(3700.0), "1h01m");
    }
}
