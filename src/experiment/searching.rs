//! The search planner (ndr, RFC 2544's throughput): per round and frame size, the
//! [`Search`]'s trials one at a time, then latency trials below the NDR. The whole space
//! (every frame size x the rate bounds x the trial lengths) is checked by the plan before
//! the first trial ([`SearchPlanner::check_space`]); each proposal is checked again by the
//! experiment's loop before it runs.

use super::Planner;
use super::figures::Figures;
use super::search::{self, Config, Obs, Purpose, Request, Search};
use super::trial::{Ask, Coords, Frames, Refused, Trial, WIRE_OVERHEAD};
use serde::{Deserialize, Serialize};

/// Packets per second of `frame`-byte frames (with FCS) at `mbps` on the wire.
pub fn line_pps(frame: u32, mbps: f64) -> f64 {
    mbps * 1e6 / (f64::from(frame + WIRE_OVERHEAD) * 8.0)
}

/// What a search covers.
#[derive(Debug, Clone)]
pub struct Space {
    /// Frame sizes with the FCS, in the order searched.
    pub sizes: Vec<u32>,
    /// Rounds (each size searched again per round).
    pub repeat: u32,
    /// Latency trials at 90, 50 and 10 % of each size's NDR.
    pub latency: bool,
    /// The search's settings (max_rate None: the line rate's, when known, per size).
    pub config: Config,
    pub line_rate_mbps: Option<f64>,
    /// `upktgen run`'s options for every trial.
    pub run_args: Vec<String>,
}

impl Space {
    /// The search's settings for frames of `size` bytes.
    pub fn config_for(&self, size: u32) -> Config {
        let mut cfg = self.config.clone();
        if cfg.max_rate.is_none() {
            cfg.max_rate = self.line_rate_mbps.map(|m| line_pps(size, m).floor());
        }
        cfg
    }

    /// A trial of this space.
    pub fn trial(&self, size: u32, round: u32, request: Request, latency_at: Option<f64>) -> Trial {
        let ask = Ask::frames(
            Frames {
                frame: size,
                rate: request.rate,
                duration_s: request.duration_s,
                count: None,
            },
            self.run_args.clone(),
        );
        Trial::new(
            format!("size {size}"),
            Coords::Search {
                size,
                round,
                request,
                latency_at,
            },
            ask,
        )
    }
}

/// One trial's record (a results file's line): where it sat, what it measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrialRecord {
    /// Frame size with the FCS.
    pub size: u32,
    /// 1-based round (--repeat).
    pub round: u32,
    pub request: Request,
    pub obs: Obs,
    pub figures: Figures,
    /// Wall time of the child.
    pub seconds: f64,
}

impl TrialRecord {
    /// Whether this record answers `t` (the same size, round and request).
    pub fn answers(&self, t: &Trial) -> bool {
        matches!(&t.coords, Coords::Search { size, round, request, .. }
            if *size == self.size && *round == self.round && *request == self.request)
    }
}

/// A frame size's search, or the state it was left in.
#[derive(Debug, Clone, Serialize)]
pub struct SizeResult {
    pub size: u32,
    pub round: u32,
    pub targets: Vec<search::TargetResult>,
    /// Unfinished targets: (name, highest pass, upper bound) so far.
    pub partial: Vec<search::Partial>,
    /// Indices into the run's trials.
    pub trials: Vec<usize>,
    pub failed: Option<String>,
    /// Latency at 10, 50, 90 % of the NDR: (fraction, index of the trial).
    pub latency_trials: Vec<(f64, usize)>,
}

/// The search of one size in one round.
struct Current {
    size: u32,
    round: u32,
    s: Search,
    /// Indices into the history: every trial of this size's search, and the latency ones.
    mine: Vec<usize>,
    lat: Vec<(f64, usize)>,
    queue: Vec<(Request, Option<f64>)>,
    /// The proposal whose outcome the next call reads.
    pending: Option<(Request, Option<f64>)>,
}

impl Current {
    fn result(&self) -> SizeResult {
        // The search's trial indices are its own: map them to the run's.
        let search_idx: Vec<usize> = self
            .mine
            .iter()
            .copied()
            .filter(|i| !self.lat.iter().any(|l| l.1 == *i))
            .collect();
        SizeResult {
            size: self.size,
            round: self.round,
            targets: self
                .s
                .results()
                .into_iter()
                .flatten()
                .map(|mut r| {
                    r.trials_at_rate = r
                        .trials_at_rate
                        .iter()
                        .filter_map(|&k| search_idx.get(k).copied())
                        .collect();
                    r
                })
                .collect(),
            partial: self.s.partial(),
            trials: self.mine.clone(),
            failed: self.s.failed.clone(),
            latency_trials: self.lat.clone(),
        }
    }
}

/// A search's trial refused by the plan before the first trial ran.
#[derive(Debug, thiserror::Error)]
#[error("{refused}")]
pub struct SpaceRefused {
    pub size: u32,
    /// Packets per second (None: unpaced).
    pub rate: Option<f64>,
    pub duration_s: f64,
    /// Whether this was the space's first trial (the refusal then holds for every trial
    /// as far as one can tell).
    pub first: bool,
    pub refused: Refused,
}

/// The search planner: rounds x sizes, each size's [`Search`], then its latency trials.
pub struct SearchPlanner {
    space: Space,
    /// The next (round, size index) to start.
    at: (u32, usize),
    cur: Option<Current>,
    done: Vec<SizeResult>,
}

impl SearchPlanner {
    pub fn new(space: Space) -> SearchPlanner {
        SearchPlanner {
            space,
            at: (1, 0),
            cur: None,
            done: Vec::new(),
        }
    }

    /// Checks, by the plan, a trial at each frame size at the highest and the lowest rate
    /// the search may ask for, searching and final lengths both: options no trial could
    /// run are refused once, before the first trial.
    pub fn check_space(&self) -> Result<(), SpaceRefused> {
        let c = &self.space.config;
        let mut first = true;
        for &size in &self.space.sizes {
            let hi = self.space.config_for(size).max_rate;
            let lo = Some(if c.min_rate > 0.0 { c.min_rate } else { 1.0 });
            for rate in [hi, lo] {
                for duration_s in [c.search_s, c.final_s] {
                    let q = Request {
                        rate,
                        duration_s,
                        purpose: Purpose::Search,
                    };
                    let t = self.space.trial(size, 1, q, None);
                    if let Err(refused) = t.checked() {
                        return Err(SpaceRefused {
                            size,
                            rate,
                            duration_s,
                            first,
                            refused,
                        });
                    }
                    first = false;
                }
            }
        }
        Ok(())
    }

    /// Every size's result so far: the finished ones, then the one under way.
    pub fn results(&self) -> Vec<SizeResult> {
        let mut v = self.done.clone();
        if let Some(c) = &self.cur {
            v.push(c.result());
        }
        v
    }

    fn start_next(&mut self) -> bool {
        let (round, k) = self.at;
        if round > self.space.repeat || self.space.sizes.is_empty() {
            return false;
        }
        let size = self.space.sizes[k];
        self.at = if k + 1 < self.space.sizes.len() {
            (round, k + 1)
        } else {
            (round + 1, 0)
        };
        self.cur = Some(Current {
            size,
            round,
            s: Search::new(self.space.config_for(size)),
            mine: Vec::new(),
            lat: Vec::new(),
            queue: Vec::new(),
            pending: None,
        });
        true
    }
}

impl Planner<TrialRecord> for SearchPlanner {
    fn next(&mut self, history: &[TrialRecord]) -> Option<Trial> {
        if let Some(c) = &mut self.cur
            && let Some((q, frac)) = c.pending.take()
            && let Some(rec) = history.last()
        {
            let i = history.len() - 1;
            c.mine.push(i);
            match frac {
                Some(f) => c.lat.push((f, i)),
                None => c.s.record(q, rec.obs.clone()),
            }
        }
        loop {
            if self.cur.is_none() && !self.start_next() {
                return None;
            }
            let c = self.cur.as_mut().expect("started");
            let next = match c.queue.pop() {
                Some(x) => Some(x),
                None => c.s.next_trial().map(|q| (q, None)),
            };
            let Some((q, frac)) = next else {
                // The search is done: latency below the NDR, once.
                let ndr =
                    c.s.results()
                        .first()
                        .cloned()
                        .flatten()
                        .and_then(|r| r.rate);
                if self.space.latency
                    && c.lat.is_empty()
                    && let Some(n) = ndr
                    && !c
                        .mine
                        .iter()
                        .any(|&i| history[i].request.purpose == Purpose::Latency)
                {
                    for f in [0.9, 0.5, 0.1] {
                        c.queue.push((
                            Request {
                                rate: Some((n * f).round().max(1.0)),
                                duration_s: self.space.config.search_s,
                                purpose: Purpose::Latency,
                            },
                            Some(f),
                        ));
                    }
                    continue;
                }
                let r = c.result();
                self.done.push(r);
                self.cur = None;
                continue;
            };
            c.pending = Some((q, frac));
            return Some(self.space.trial(c.size, c.round, q, frac));
        }
    }
}
