//! A trial: one run an experiment asks for, typed ([`Ask`]: the command, the user's options
//! and what the experiment sets itself), with its label and coordinates, and checked by the
//! run's own plan ([`Trial::checked`]: parsed as `upktgen run` parses it, then
//! `RunPlan::from_args`) before it runs.
//!
//! The child process still takes an argument list: [`Ask::argv`] is the one place it is made,
//! for the check and for the run alike, so what was checked is what runs.

use super::search::Request;
use crate::run::plan::RunPlan;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// RFC 2544 frame sizes count the 4-byte FCS; pktgen's pkt_size does not.
pub const FCS: u32 = 4;
/// Preamble, start delimiter and inter-frame gap: what a frame takes on the wire beyond its bytes.
pub const WIRE_OVERHEAD: u32 = 20;

/// Which upktgen command a trial runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Command {
    /// `upktgen run ... --json --no-live` (real packets; root; a fresh lab per run).
    Run,
    /// `upktgen sim ... --json` (the model; no root; deterministic).
    Sim,
}

impl Command {
    pub fn name(self) -> &'static str {
        match self {
            Command::Run => "run",
            Command::Sim => "sim",
        }
    }
}

/// What a search sets of a trial: frames of `frame` bytes (with the FCS) at `rate` packets
/// per second (None: as fast as the sender goes) for `duration_s` seconds, or until `count`
/// frames are sent (a burst; None: the duration alone ends it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Frames {
    pub frame: u32,
    pub rate: Option<f64>,
    pub duration_s: f64,
    pub count: Option<u64>,
}

/// One run asked of a child `upktgen`: the command, the user's options for it (a sweep
/// point's values, ndr's run options), and what the experiment sets itself.
#[derive(Debug, Clone, PartialEq)]
pub struct Ask {
    pub command: Command,
    /// The user's options, as the command's own command line reads them.
    pub options: Vec<String>,
    /// A search's trial (frame size, rate, duration); None: the options decide.
    pub frames: Option<Frames>,
    /// A grid's repetition (1-based): a simulation then gets `--seed=R` unless the options
    /// set a seed, so the repetitions sample the model's jitter.
    pub rep: Option<u32>,
}

impl Ask {
    /// A grid point: `command options`.
    pub fn point(command: Command, options: Vec<String>) -> Ask {
        Ask {
            command,
            options,
            frames: None,
            rep: None,
        }
    }

    /// A search's trial: `upktgen run` of `f` with the user's run options.
    pub fn frames(f: Frames, options: Vec<String>) -> Ask {
        Ask {
            command: Command::Run,
            options,
            frames: Some(f),
            rep: None,
        }
    }

    /// The child's arguments (after the program's name): the one place they are made.
    ///
    /// A grid point is `CMD OPTIONS --json` (and `--no-live` for `run`), then `--seed=R` for
    /// a simulation's repetition R. A search's trial is `run --json --no-live --count 0
    /// --duration T --pkt-size S [--rx-analyze] [--ratep R] OPTIONS`: the lab's own receiver
    /// unless the options name another (`--peer`, `--rx-dev`). With `--config FILE` among
    /// the options, the flows are the frames: `run --json --no-live --duration T
    /// [--config-rate R] OPTIONS`.
    pub fn argv(&self) -> Vec<String> {
        let Some(f) = &self.frames else {
            let mut a = vec![self.command.name().to_string()];
            a.extend(self.options.iter().cloned());
            a.push("--json".into());
            if self.command == Command::Run {
                a.push("--no-live".into());
            }
            return match self.rep {
                Some(rep) => rep_argv(a, rep),
                None => a,
            };
        };
        let named = |o: &str| {
            self.options
                .iter()
                .any(|x| x == o || x.starts_with(&format!("{o}=")))
        };
        let mut a: Vec<String> = vec!["run".into(), "--json".into(), "--no-live".into()];
        let duration = format!("{}ms", (f.duration_s * 1000.0).round().max(1.0) as u64);
        if named("--config") {
            // A config's flows are the frames (their sizes, their receiving port): the trial
            // scales their rates to its own in all, for its duration.
            a.extend(["--duration".into(), duration]);
            if let Some(r) = f.rate {
                a.push("--config-rate".into());
                a.push(format!("{}", r.round().max(1.0) as u64));
            }
            a.extend(self.options.iter().cloned());
            return a;
        }
        a.extend([
            "--count".into(),
            f.count.unwrap_or(0).to_string(),
            "--duration".into(),
            duration,
            "--pkt-size".into(),
            (f.frame.saturating_sub(FCS)).to_string(),
        ]);
        if !["--rx-analyze", "--peer", "--rx-dev"]
            .iter()
            .any(|o| named(o))
        {
            a.push("--rx-analyze".into());
        }
        if let Some(r) = f.rate {
            a.push("--ratep".into());
            a.push(format!("{}", r.round().max(1.0) as u64));
        }
        a.extend(self.options.iter().cloned());
        a
    }
}

/// `argv` of a grid point for repetition `rep`: a simulation is deterministic for a given
/// seed, so unless it sets `--seed=`, repetition R simulates with `--seed=R`.
pub fn rep_argv(mut argv: Vec<String>, rep: u32) -> Vec<String> {
    if argv.first().map(String::as_str) == Some("sim")
        && !argv.iter().any(|x| x.starts_with("--seed="))
    {
        argv.push(format!("--seed={rep}"));
    }
    argv
}

/// Where a trial sits in its experiment.
#[derive(Debug, Clone, PartialEq)]
pub enum Coords {
    /// A grid's point (0-based) and repetition (1-based).
    Point { point: usize, rep: u32 },
    /// A search's trial: the frame size (with the FCS), the round (1-based), the request
    /// (rate, duration, why), and for a latency trial the fraction of the NDR it runs at.
    Search {
        size: u32,
        round: u32,
        request: Request,
        latency_at: Option<f64>,
    },
    /// A trial of one of a suite's tests (RFC 2544's latency, frame loss, back-to-back): the
    /// test's name, the frame size, the repetition (1-based), the step within it (0-based),
    /// the request and, for a burst, its frames.
    Test {
        test: &'static str,
        size: u32,
        rep: u32,
        step: u32,
        request: Request,
        burst: Option<u64>,
    },
}

/// What the plan made of a trial.
#[derive(Debug)]
pub enum Plan {
    /// `upktgen run`'s plan. A `--replay` file's frames are not kept (the run reads the file
    /// again): a sweep of many points over one capture would otherwise hold one copy each.
    Run(Box<RunPlan>),
    /// `upktgen sim`: its options parsed (the model has no plan beyond them).
    Sim,
}

/// One trial: what it asks, where it sits, and (once checked) its plan.
#[derive(Debug, Clone)]
pub struct Trial {
    /// How progress lines and tables name it ("hysteresis, load=1", "size 64").
    pub label: String,
    pub coords: Coords,
    pub ask: Ask,
    /// The plan, once [`Trial::checked`]; shared by a grid's repetitions of one point.
    pub plan: Option<Arc<Plan>>,
}

impl Trial {
    /// An unchecked trial.
    pub fn new(label: String, coords: Coords, ask: Ask) -> Trial {
        Trial {
            label,
            coords,
            ask,
            plan: None,
        }
    }

    /// The trial checked by the plan (unchanged when it already was).
    pub fn checked(mut self) -> Result<Trial, Refused> {
        if self.plan.is_none() {
            self.plan = Some(Arc::new(plan(&self.ask.argv())?));
        }
        Ok(self)
    }

    /// The child's arguments ([`Ask::argv`]).
    pub fn argv(&self) -> Vec<String> {
        self.ask.argv()
    }
}

/// Why a trial's argument list is refused: by the option parser, by pktgen's device language
/// (the values of `run`'s pktgen parameters, checked as `run` checks them), or by the run's
/// plan (options that go together).
#[derive(Debug)]
pub enum Refused {
    Clap(clap::Error),
    Pktgen(Box<crate::run::plan::OptionError>),
    /// What the run's plan refuses of a whole trial.
    Plan(String),
    /// Not `run` nor `sim`.
    NotSwept(String),
}

impl Refused {
    /// A required option missing from a partial argument list is not an error yet.
    pub fn only_missing(&self) -> bool {
        matches!(self, Refused::Clap(e) if matches!(e.kind(), clap::error::ErrorKind::MissingRequiredArgument))
    }

    /// The refusal's own line (for a clap error, not its usage lines).
    pub fn first_line(&self) -> String {
        match self {
            Refused::Clap(e) => clap_line(e),
            Refused::Pktgen(e) => e.to_string(),
            Refused::Plan(e) => e.clone(),
            Refused::NotSwept(sub) => format!("{sub:?}: not a command a sweep runs"),
        }
    }
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.first_line())
    }
}

impl std::error::Error for Refused {}

/// A clap error's first non-empty line, without `error: `.
pub fn clap_line(e: &clap::Error) -> String {
    let s = e.render().to_string();
    s.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("invalid arguments")
        .trim()
        .trim_start_matches("error: ")
        .to_string()
}

/// `upktgen run` and `upktgen sim` as the command line defines them, built once: building
/// the whole command line was most of what checking one value cost.
fn built_def(sub: &str) -> Option<&'static clap::Command> {
    use clap::CommandFactory;
    static DEF: std::sync::OnceLock<clap::Command> = std::sync::OnceLock::new();
    DEF.get_or_init(|| {
        let mut c = crate::cli::Cli::command();
        c.build();
        c
    })
    .find_subcommand(sub)
}

/// `args` (`run ...` or `sim ...`) parsed as the subcommand, and for `run` its pktgen
/// parameters checked as `run` checks them; `run`'s options handed back.
pub fn parse(args: &[String]) -> Result<Option<crate::cli::RunArgs>, Refused> {
    use clap::FromArgMatches as _;
    let sub = args.first().map(String::as_str).unwrap_or("");
    let Some(def) = built_def(sub) else {
        return Err(Refused::NotSwept(sub.to_string()));
    };
    let m = def
        .clone()
        .try_get_matches_from(args)
        .map_err(Refused::Clap)?;
    if sub == "run" {
        let r = crate::cli::RunArgs::from_arg_matches(&m).map_err(Refused::Clap)?;
        crate::run::plan::check_pktgen_params(&r).map_err(|e| Refused::Pktgen(Box::new(e)))?;
        Ok(Some(r))
    } else {
        crate::sim::SimArgs::from_arg_matches(&m).map_err(Refused::Clap)?;
        Ok(None)
    }
}

/// A whole argument list parsed, and for `upktgen run` planned as its run will plan it (the
/// options that go together, the threads on this machine's CPUs, a --replay file read).
pub fn plan(args: &[String]) -> Result<Plan, Refused> {
    match parse(args)? {
        Some(r) => {
            let mut p = RunPlan::from_args(&r).map_err(|e| Refused::Plan(format!("{e:#}")))?;
            p.replay = None;
            Ok(Plan::Run(Box::new(p)))
        }
        None => Ok(Plan::Sim),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::search::Purpose;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn a_grid_points_arguments_end_with_what_the_sweep_sets() {
        let a = Ask::point(Command::Run, s(&["--count=5"]));
        assert_eq!(a.argv(), ["run", "--count=5", "--json", "--no-live"]);
        let mut a = Ask::point(Command::Sim, s(&["--count=5"]));
        assert_eq!(a.argv(), ["sim", "--count=5", "--json"]);
        a.rep = Some(3);
        assert_eq!(a.argv(), ["sim", "--count=5", "--json", "--seed=3"]);
        a.options.push("--seed=9".into());
        assert_eq!(a.argv(), ["sim", "--count=5", "--seed=9", "--json"]);
    }

    #[test]
    fn a_search_trial_is_checked_by_the_plan() {
        let f = Frames {
            frame: 64,
            rate: Some(1000.0),
            duration_s: 1.0,
            count: None,
        };
        let req = Request {
            rate: f.rate,
            duration_s: 1.0,
            purpose: Purpose::Search,
        };
        let coords = Coords::Search {
            size: 64,
            round: 1,
            request: req,
            latency_at: None,
        };
        let t = Trial::new("size 64".into(), coords.clone(), Ask::frames(f, vec![]))
            .checked()
            .unwrap();
        let Some(p) = &t.plan else { panic!() };
        assert!(matches!(**p, Plan::Run(_)));
        // --dev without --dst: refused by the plan, not by the option parser.
        let e = Trial::new("x".into(), coords, Ask::frames(f, s(&["--dev", "lo"])))
            .checked()
            .unwrap_err();
        assert!(matches!(e, Refused::Plan(_)), "{e}");
        assert!(e.to_string().contains("--dst"), "{e}");
    }
}
