//! The grid planner (a sweep): a fixed list of points, every one checked by the plan before
//! the first runs, proposed repetition by repetition (repetition 1 of every point, then
//! repetition 2, ...) so slow drift of the machine spreads over all points.

use super::Planner;
use super::trial::{Coords, Refused, Trial};

/// A point the plan refused: the experiment does not start.
#[derive(Debug, thiserror::Error)]
#[error("point {} ({label}): {refused}", .index + 1)]
pub struct PointRefused {
    /// 0-based.
    pub index: usize,
    pub label: String,
    pub refused: Refused,
}

/// Every point of a sweep, checked, and how many times each runs.
#[derive(Debug)]
pub struct Grid {
    points: Vec<Trial>,
    repetitions: u32,
}

impl Grid {
    /// Checks every point (in order; the first refused is the error) before any runs.
    /// `points[i]` is point `i`: its coordinates are set here.
    pub fn new(points: Vec<Trial>, repetitions: u32) -> Result<Grid, PointRefused> {
        let points = points
            .into_iter()
            .enumerate()
            .map(|(index, mut t)| {
                t.coords = Coords::Point {
                    point: index,
                    rep: 1,
                };
                let label = t.label.clone();
                t.checked().map_err(|refused| PointRefused {
                    index,
                    label,
                    refused,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Grid {
            points,
            repetitions,
        })
    }

    /// Runs in all (points x repetitions).
    pub fn runs(&self) -> usize {
        self.points.len() * self.repetitions as usize
    }

    /// How many times each point runs.
    pub fn repetitions(&self) -> u32 {
        self.repetitions
    }

    /// The checked points, in order.
    pub fn points(&self) -> &[Trial] {
        &self.points
    }
}

impl<O> Planner<O> for Grid {
    fn next(&mut self, history: &[O]) -> Option<Trial> {
        let i = history.len();
        if i >= self.runs() {
            return None;
        }
        let n = self.points.len();
        let rep = (i / n) as u32 + 1;
        let mut t = self.points[i % n].clone();
        t.ask.rep = Some(rep);
        t.coords = Coords::Point { point: i % n, rep };
        Some(t)
    }
}
