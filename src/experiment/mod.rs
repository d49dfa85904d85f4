//! One experiment core under `sweep` and `ndr` (DESIGN.md §9): a planner proposes trials, a
//! trial is a typed run checked by the run's own plan, a runner runs it, a results directory
//! keeps it.
//!
//! - [`trial`]: [`Trial`] (what a run asks, where it sits, its plan) and the one place its
//!   child's arguments are made.
//! - [`Planner`]: [`grid::Grid`] (a sweep: every trial known and checked up front) and
//!   [`searching::SearchPlanner`] (ndr: the [`search`] per frame size, its whole space
//!   checked up front, each proposal checked again before it runs).
//! - [`Runner`]: [`child`] runs a trial as a child `upktgen` (process group, SIGTERM then
//!   SIGKILL, the child's error line); [`FnRunner`] answers from a function (the tests' fake
//!   devices).
//! - [`writer`]: the results directory (on [`crate::outdir::SessionDir`]) and the files
//!   rewritten as the trials end; [`resume`]: a results file's trials answered again, and
//!   what a file may not decide; [`compare`]: `upktgen compare` of two results.

pub mod child;
pub mod compare;
pub mod figures;
pub mod grid;
pub mod resume;
pub mod search;
pub mod searching;
pub mod suite;
pub mod trial;
pub mod writer;

use anyhow::Result;
use std::sync::atomic::{AtomicBool, Ordering};
pub use trial::{Ask, Coords, Trial};

/// Proposes the next trial of an experiment from the outcomes so far (in the order they
/// came, answered again from a results file or run).
pub trait Planner<O> {
    /// The next trial; None: the experiment is done.
    fn next(&mut self, history: &[O]) -> Option<Trial>;
}

/// How a trial's run ended.
#[derive(Debug)]
pub enum Ran<O> {
    /// It gave an outcome (a failure is an outcome too).
    Done(O),
    /// Stopped by Ctrl-C: the experiment ends, keeping the outcome when there is one.
    Interrupted(Option<O>),
}

/// Runs a checked trial and returns its outcome (the report's figures, or why it failed).
pub trait Runner<O> {
    fn run(&mut self, trial: &Trial, stop: &AtomicBool) -> Ran<O>;
}

/// A runner answering from a function: the tests' fake devices, and a search rebuilt from
/// its file (which runs nothing).
pub struct FnRunner<F>(pub F);

impl<O, F: FnMut(&Trial) -> Ran<O>> Runner<O> for FnRunner<F> {
    fn run(&mut self, trial: &Trial, _stop: &AtomicBool) -> Ran<O> {
        (self.0)(trial)
    }
}

/// A proposal the plan refused while the experiment ran (a grid's are refused before the
/// first trial; a search's space is checked before, each proposal again before it runs).
#[derive(Debug, thiserror::Error)]
#[error("trial {label}: {refused}")]
pub struct TrialRefused {
    pub label: String,
    pub refused: trial::Refused,
}

/// The outcomes of an experiment, and whether Ctrl-C ended it.
#[derive(Debug)]
pub struct Driven<O> {
    pub outcomes: Vec<O>,
    pub interrupted: bool,
}

/// Runs an experiment: asks `planner` for trials until it has none, answers each from
/// `replay` (a resumed file's records) while they match, else checks it by the plan and runs
/// it with `runner`; `saved` gets every outcome so far after each trial that ran. `stop`
/// (Ctrl-C) ends it before the next trial runs.
pub fn drive<O>(
    planner: &mut dyn Planner<O>,
    runner: &mut dyn Runner<O>,
    replay: &mut resume::Replay<O>,
    stop: &AtomicBool,
    mut saved: impl FnMut(&[O]) -> Result<()>,
) -> Result<Driven<O>> {
    let mut outcomes: Vec<O> = Vec::new();
    let mut interrupted = false;
    while let Some(t) = planner.next(&outcomes) {
        if let Some(o) = replay.answer(&t) {
            outcomes.push(o);
            continue;
        }
        if stop.load(Ordering::Relaxed) {
            interrupted = true;
            break;
        }
        let label = t.label.clone();
        let t = t
            .checked()
            .map_err(|refused| TrialRefused { label, refused })?;
        match runner.run(&t, stop) {
            Ran::Done(o) => {
                outcomes.push(o);
                saved(&outcomes)?;
            }
            Ran::Interrupted(o) => {
                interrupted = true;
                if let Some(o) = o {
                    outcomes.push(o);
                    saved(&outcomes)?;
                }
                break;
            }
        }
    }
    Ok(Driven {
        outcomes,
        interrupted,
    })
}

#[cfg(test)]
mod tests;
