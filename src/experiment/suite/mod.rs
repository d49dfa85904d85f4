//! The RFC 2544 suite planner (`upktgen rfc2544`): per frame size, the throughput search
//! (the [`Search`] that ndr runs), then at the rate it found the latency trials (§26.2), the
//! frame loss rate steps down from the maximum rate (§26.3) and the back-to-back bursts at the
//! maximum rate (§26.4 as RFC 9004 updates it), each repetition an independent search of the
//! burst length. Pure: no clock, no process; the records it reads are what the trials
//! measured (answered again from a results file, or run).

use super::Planner;
use super::figures::Figures;
use super::search::{Obs, Purpose, Request, Search, TargetResult};
use super::searching::Space;
use super::trial::{Ask, Coords, Frames, Trial};
use serde::{Deserialize, Serialize};

/// One of RFC 2544's tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Test {
    Throughput,
    Latency,
    Loss,
    BackToBack,
}

impl Test {
    /// In the order they run (the others need the throughput).
    pub const ALL: [Test; 4] = [
        Test::Throughput,
        Test::Latency,
        Test::Loss,
        Test::BackToBack,
    ];

    /// The name on the command line and in the records.
    pub fn name(self) -> &'static str {
        match self {
            Test::Throughput => "throughput",
            Test::Latency => "latency",
            Test::Loss => "loss",
            Test::BackToBack => "back-to-back",
        }
    }

    pub fn from_name(s: &str) -> Option<Test> {
        Test::ALL.into_iter().find(|t| t.name() == s)
    }
}

/// What the suite runs beside the throughput search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuiteConfig {
    /// The tests, in [`Test::ALL`]'s order; throughput is always among them.
    pub tests: Vec<Test>,
    /// Latency: trials per frame size (RFC 2544: 20) and their length (RFC 2544: 120 s).
    pub latency_trials: u32,
    pub latency_s: f64,
    /// Frame loss: the step down, as a share of the maximum rate (RFC 2544: 10 %), and the
    /// length of each step's trial.
    pub loss_step: f64,
    pub loss_s: f64,
    /// Back-to-back: repetitions (RFC 2544: 50), the longest burst searched (frames) and the
    /// trial's cap in seconds (RFC 2544: at least 2 s).
    pub b2b_trials: u32,
    pub max_burst: u64,
    pub b2b_s: f64,
}

/// One trial's record (a results file's line).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Record {
    pub test: Test,
    /// Frame size with the FCS.
    pub size: u32,
    /// 1-based repetition (latency trial, back-to-back search); 1 for the others.
    pub rep: u32,
    /// 0-based step within the repetition (throughput trial, loss step, burst trial).
    pub step: u32,
    pub request: Request,
    /// Frames in the burst (back-to-back).
    pub burst: Option<u64>,
    pub obs: Obs,
    pub figures: Figures,
    /// Latency figures of every frame, when the receiver recorded them.
    pub delay: Option<Delay>,
    /// Wall time of the child.
    pub seconds: f64,
}

impl Record {
    /// Whether this record answers `t` (the same test, size, repetition, step, request, burst).
    pub fn answers(&self, t: &Trial) -> bool {
        matches!(&t.coords, Coords::Test { test, size, rep, step, request, burst }
            if *test == self.test.name() && *size == self.size && *rep == self.rep
                && *step == self.step && *request == self.request && *burst == self.burst)
    }
}

/// A trial's one-way delays (µs) over every frame received: RFC 2544's latency summarised,
/// RFC 8219's PDV (the 99.9th percentile minus the minimum, RFC 5481's D − Dmin) and IPDV
/// (|D(i) − D(i−1)| of consecutive frames).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Delay {
    pub count: u64,
    pub min_us: f64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
    pub pdv_us: f64,
    /// IPDV's median, 99.9th percentile and maximum (None: no consecutive pair).
    pub ipdv_p50_us: Option<f64>,
    pub ipdv_p999_us: Option<f64>,
    pub ipdv_max_us: Option<f64>,
}

/// One back-to-back repetition: the longest burst that lost nothing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BurstSearch {
    pub rep: u32,
    /// Longest burst without loss (0: even one frame was lost; None: unfinished).
    pub frames: Option<u64>,
    /// The longest burst asked for (`max_burst`) passed: the result is that bound.
    pub at_limit: bool,
    /// Indices into the run's records.
    pub trials: Vec<usize>,
}

/// A frame size's tests, or the state they were left in.
#[derive(Debug, Clone, Serialize)]
pub struct SizeOutcome {
    pub size: u32,
    /// The maximum rate (pps) the loss and back-to-back tests start from.
    pub max_rate: Option<f64>,
    /// The throughput (the search's NDR result).
    pub throughput: Option<TargetResult>,
    /// Indices into the records of each test's trials.
    pub throughput_trials: Vec<usize>,
    pub latency_trials: Vec<usize>,
    pub loss_trials: Vec<usize>,
    pub bursts: Vec<BurstSearch>,
    /// Why a test has no result at this size (the search failed, no throughput, a trial
    /// gave no report).
    pub notes: Vec<String>,
}

/// The back-to-back search of one repetition.
#[derive(Debug, Clone)]
struct Bursts {
    /// Longest pass and shortest failure so far.
    lo: u64,
    hi: u64,
    /// The next burst when the last failed: the frames it delivered.
    estimate: Option<u64>,
    /// Estimates tried in a row (bounded, then bisection: a DUT losing one frame of any
    /// burst would otherwise creep).
    estimates: u32,
    /// Passes in a row: the next step above the longest pass is 2^passes frames.
    passes: u32,
}

impl Bursts {
    fn new(max: u64) -> Bursts {
        Bursts {
            lo: 0,
            hi: max + 1,
            estimate: None,
            estimates: 0,
            passes: 0,
        }
    }

    /// The next burst to try (None: the search is done: `lo` is the result).
    fn next(&mut self, max: u64) -> Option<u64> {
        if self.hi <= self.lo + 1 {
            return None;
        }
        if self.hi == max + 1 && self.lo == 0 && self.estimate.is_none() {
            return Some(max);
        }
        let mid = self.lo + (self.hi - self.lo) / 2;
        if let Some(e) = self.estimate.take()
            && e > self.lo
            && e < self.hi
            && self.estimates < 4
        {
            self.estimates += 1;
            return Some(e);
        }
        if self.lo > 0 && self.passes > 0 {
            let step = 1u64 << (self.passes - 1).min(40);
            return Some((self.lo + step).min(mid.max(self.lo + 1)));
        }
        Some(mid.max(self.lo + 1))
    }

    fn record(&mut self, n: u64, o: &Obs) {
        let lost = o.dut_lost + o.receiver_lost + o.sender_lost;
        if lost == 0 {
            self.lo = self.lo.max(n);
            self.passes += 1;
            self.estimates = 0;
        } else {
            self.hi = self.hi.min(n);
            self.passes = 0;
            self.estimate = Some(o.sent.saturating_sub(lost));
        }
    }
}

enum Phase {
    Throughput(Box<Search>),
    Latency { rate: f64, k: u32 },
    Loss { k: u32, zeros: u32 },
    BackToBack { rep: u32, b: Bursts, k: u32 },
    Done,
}

/// The suite planner: frame sizes in order, each size's tests in [`Test::ALL`]'s order.
pub struct SuitePlanner {
    space: Space,
    cfg: SuiteConfig,
    next_size: usize,
    cur: Option<(SizeOutcome, Phase)>,
    done: Vec<SizeOutcome>,
    /// The proposal whose outcome the next call reads: its test, step and request.
    pending: Option<(Test, u32, Request, Option<u64>)>,
}

impl SuitePlanner {
    /// `space`: the throughput search's (its sizes are the suite's; one round).
    pub fn new(space: Space, cfg: SuiteConfig) -> SuitePlanner {
        SuitePlanner {
            space,
            cfg,
            next_size: 0,
            cur: None,
            done: Vec::new(),
            pending: None,
        }
    }

    /// Every size's outcome so far: the finished ones, then the one under way.
    pub fn results(&self) -> Vec<SizeOutcome> {
        let mut v = self.done.clone();
        if let Some((o, ph)) = &self.cur {
            let mut o = o.clone();
            if let Phase::Throughput(s) = ph {
                o.throughput = s.results().first().cloned().flatten();
            }
            v.push(o);
        }
        v
    }

    fn has(&self, t: Test) -> bool {
        self.cfg.tests.contains(&t)
    }

    /// A trial of test `t` at the current size.
    pub fn trial(
        &self,
        t: Test,
        size: u32,
        rep: u32,
        step: u32,
        q: Request,
        burst: Option<u64>,
    ) -> Trial {
        let ask = Ask::frames(
            Frames {
                frame: size,
                rate: q.rate,
                duration_s: q.duration_s,
                count: burst,
            },
            self.space.run_args.clone(),
        );
        Trial::new(
            format!("size {size} {}", t.name()),
            Coords::Test {
                test: t.name(),
                size,
                rep,
                step,
                request: q,
                burst,
            },
            ask,
        )
    }

    /// The phase after `after` at this size, given its throughput.
    fn phase_after(&self, after: Test, o: &mut SizeOutcome) -> Phase {
        let rate = o.throughput.as_ref().and_then(|t| t.rate);
        for t in Test::ALL.into_iter().skip_while(|t| *t != after).skip(1) {
            if !self.has(t) {
                continue;
            }
            let Some(rate) = rate else {
                o.notes.push(format!(
                    "{}: not run: the throughput search found no rate",
                    t.name()
                ));
                continue;
            };
            match t {
                Test::Latency => return Phase::Latency { rate, k: 0 },
                Test::Loss if o.max_rate.is_some() => return Phase::Loss { k: 0, zeros: 0 },
                Test::BackToBack if o.max_rate.is_some() => {
                    return Phase::BackToBack {
                        rep: 1,
                        b: Bursts::new(self.cfg.max_burst),
                        k: 0,
                    };
                }
                _ => o
                    .notes
                    .push(format!("{}: not run: no maximum rate", t.name())),
            }
        }
        Phase::Done
    }

    /// Reads the outcome of the pending proposal (the last record).
    fn take(&mut self, history: &[Record]) {
        let Some((test, step, q, burst)) = self.pending.take() else {
            return;
        };
        let Some(rec) = history.last() else { return };
        let i = history.len() - 1;
        let Some((mut o, ph)) = self.cur.take() else {
            return;
        };
        let failed = rec.obs.error.clone();
        let next = match (ph, test) {
            (Phase::Throughput(mut s), Test::Throughput) => {
                o.throughput_trials.push(i);
                s.record(q, rec.obs.clone());
                Phase::Throughput(s)
            }
            (Phase::Latency { rate, k }, Test::Latency) => {
                o.latency_trials.push(i);
                match failed {
                    Some(e) => {
                        o.notes.push(format!("latency: a trial failed: {e}"));
                        self.phase_after(Test::Latency, &mut o)
                    }
                    None => Phase::Latency { rate, k: k + 1 },
                }
            }
            (Phase::Loss { k, zeros }, Test::Loss) => {
                o.loss_trials.push(i);
                let lost = rec.obs.dut_lost + rec.obs.receiver_lost + rec.obs.sender_lost;
                match failed {
                    Some(e) => {
                        o.notes.push(format!("loss: a trial failed: {e}"));
                        self.phase_after(Test::Loss, &mut o)
                    }
                    None => Phase::Loss {
                        k: k + 1,
                        zeros: if lost == 0 { zeros + 1 } else { 0 },
                    },
                }
            }
            (Phase::BackToBack { rep, mut b, k }, Test::BackToBack) => {
                let n = burst.unwrap_or(0);
                match o.bursts.iter_mut().find(|x| x.rep == rep) {
                    Some(x) => x.trials.push(i),
                    None => o.bursts.push(BurstSearch {
                        rep,
                        frames: None,
                        at_limit: false,
                        trials: vec![i],
                    }),
                }
                match failed {
                    Some(e) => {
                        o.notes.push(format!("back-to-back: a trial failed: {e}"));
                        Phase::Done
                    }
                    None => {
                        b.record(n, &rec.obs);
                        let _ = step;
                        Phase::BackToBack { rep, b, k: k + 1 }
                    }
                }
            }
            (ph, _) => ph,
        };
        self.cur = Some((o, next));
    }

    fn start_next(&mut self) -> bool {
        let Some(&size) = self.space.sizes.get(self.next_size) else {
            return false;
        };
        self.next_size += 1;
        let cfg = self.space.config_for(size);
        let o = SizeOutcome {
            size,
            max_rate: cfg.max_rate,
            throughput: None,
            throughput_trials: Vec::new(),
            latency_trials: Vec::new(),
            loss_trials: Vec::new(),
            bursts: Vec::new(),
            notes: Vec::new(),
        };
        self.cur = Some((o, Phase::Throughput(Box::new(Search::new(cfg)))));
        true
    }
}

impl Planner<Record> for SuitePlanner {
    fn next(&mut self, history: &[Record]) -> Option<Trial> {
        self.take(history);
        loop {
            if self.cur.is_none() && !self.start_next() {
                return None;
            }
            let (mut o, ph) = self.cur.take().expect("started");
            let size = o.size;
            let proposal = match ph {
                Phase::Throughput(mut s) => match s.next_trial() {
                    Some(q) => {
                        let step = o.throughput_trials.len() as u32;
                        self.cur = Some((o, Phase::Throughput(s)));
                        Some((Test::Throughput, 1, step, q, None))
                    }
                    None => {
                        o.throughput = s.results().first().cloned().flatten();
                        if let Some(e) = &s.failed {
                            o.notes.push(format!("throughput: the search failed: {e}"));
                        }
                        let next = self.phase_after(Test::Throughput, &mut o);
                        self.cur = Some((o, next));
                        None
                    }
                },
                Phase::Latency { rate, k } if k < self.cfg.latency_trials => {
                    let q = Request {
                        rate: Some(rate.round().max(1.0)),
                        duration_s: self.cfg.latency_s,
                        purpose: Purpose::Latency,
                    };
                    self.cur = Some((o, Phase::Latency { rate, k }));
                    Some((Test::Latency, k + 1, 0, q, None))
                }
                Phase::Latency { .. } => {
                    let next = self.phase_after(Test::Latency, &mut o);
                    self.cur = Some((o, next));
                    None
                }
                Phase::Loss { k, zeros } => {
                    let share = 1.0 - f64::from(k) * self.cfg.loss_step;
                    let rate = o.max_rate.unwrap_or(0.0) * share;
                    if zeros >= 2 || share <= 1e-9 || rate < 1.0 {
                        let next = self.phase_after(Test::Loss, &mut o);
                        self.cur = Some((o, next));
                        None
                    } else {
                        let q = Request {
                            rate: Some(rate.round().max(1.0)),
                            duration_s: self.cfg.loss_s,
                            purpose: Purpose::Search,
                        };
                        self.cur = Some((o, Phase::Loss { k, zeros }));
                        Some((Test::Loss, 1, k, q, None))
                    }
                }
                Phase::BackToBack { rep, mut b, k } => {
                    let max = self.cfg.max_burst;
                    match b.next(max) {
                        Some(n) => {
                            let q = Request {
                                rate: o.max_rate.map(|r| r.round().max(1.0)),
                                duration_s: self.cfg.b2b_s,
                                purpose: Purpose::Search,
                            };
                            self.cur = Some((o, Phase::BackToBack { rep, b, k }));
                            Some((Test::BackToBack, rep, k, q, Some(n)))
                        }
                        None => {
                            if let Some(x) = o.bursts.iter_mut().find(|x| x.rep == rep) {
                                x.frames = Some(b.lo);
                                x.at_limit = b.lo == max;
                            }
                            let next = if rep < self.cfg.b2b_trials {
                                Phase::BackToBack {
                                    rep: rep + 1,
                                    b: Bursts::new(max),
                                    k: 0,
                                }
                            } else {
                                Phase::Done
                            };
                            self.cur = Some((o, next));
                            None
                        }
                    }
                }
                Phase::Done => {
                    self.done.push(o);
                    None
                }
            };
            if let Some((t, rep, step, q, burst)) = proposal {
                self.pending = Some((t, step, q, burst));
                return Some(self.trial(t, size, rep, step, q, burst));
            }
        }
    }
}

#[cfg(test)]
mod tests;
