use super::*;
use crate::experiment::resume::Replay;
use crate::experiment::search::{Config, Precision};
use crate::experiment::{FnRunner, Ran, drive};
use std::sync::atomic::AtomicBool;

/// A DUT that forwards `r` pps through a buffer of `q` frames, 5 µs of latency.
fn dut(r: f64, q: f64) -> impl FnMut(&Trial) -> Ran<Record> {
    move |t: &Trial| {
        let Coords::Test {
            test,
            size,
            rep,
            step,
            request,
            burst,
        } = t.coords
        else {
            panic!("a suite's trial")
        };
        let rate = request.rate.unwrap_or(500_000.0);
        let (sent, passed) = match burst {
            Some(n) => {
                let nf = n as f64;
                let passed = nf.min(q + r * nf / rate).floor() as u64;
                (n, passed.min(n))
            }
            None => {
                let sent = (rate * request.duration_s) as u64;
                let passed = (sent as f64).min(r * request.duration_s + q) as u64;
                (sent, passed)
            }
        };
        let obs = Obs {
            requested: request.rate,
            duration_s: request.duration_s,
            achieved: rate,
            sent,
            dut_lost: sent - passed,
            ..Obs::default()
        };
        let delay = Delay {
            count: passed,
            min_us: 4.0,
            mean_us: 5.0,
            p50_us: 5.0,
            p99_us: 7.0,
            p999_us: 8.0,
            max_us: 9.0,
            pdv_us: 4.0,
            ipdv_p50_us: Some(0.5),
            ipdv_p999_us: Some(2.0),
            ipdv_max_us: Some(3.0),
        };
        Ran::Done(Record {
            test: Test::from_name(test).unwrap(),
            size,
            rep,
            step,
            request,
            burst,
            obs,
            figures: Figures::default(),
            delay: Some(delay),
            seconds: request.duration_s,
        })
    }
}

fn planner() -> SuitePlanner {
    let space = Space {
        sizes: vec![64, 512],
        repeat: 1,
        latency: false,
        config: Config {
            loss: 0.0,
            pdr: None,
            precision: Precision::Relative(0.005),
            max_rate: Some(40_000.0),
            min_rate: 0.0,
            search_s: 0.5,
            final_s: 1.0,
            tolerance: 0.02,
        },
        line_rate_mbps: None,
        run_args: vec![],
    };
    SuitePlanner::new(
        space,
        SuiteConfig {
            tests: Test::ALL.to_vec(),
            latency_trials: 3,
            latency_s: 1.0,
            loss_step: 0.1,
            loss_s: 1.0,
            b2b_trials: 2,
            max_burst: 80_000,
            b2b_s: 2.0,
        },
    )
}

fn run(stored: Vec<Record>, limit: usize) -> (Vec<SizeOutcome>, Vec<Record>, bool) {
    let mut p = planner();
    let mut sim = dut(20_000.0, 10.0);
    let mut n = 0;
    let mut runner = FnRunner(|t: &Trial| {
        n += 1;
        if n > limit {
            Ran::Interrupted(None)
        } else {
            sim(t)
        }
    });
    let mut replay = Replay::new(stored, Record::answers, |_, _| {});
    let stop = AtomicBool::new(false);
    let d = drive(&mut p, &mut runner, &mut replay, &stop, |_| Ok(())).unwrap();
    (p.results(), d.outcomes, d.interrupted)
}

#[test]
fn the_suite_finds_what_the_device_was_built_to_give() {
    let (sizes, recs, interrupted) = run(vec![], usize::MAX);
    assert!(!interrupted);
    assert_eq!(sizes.len(), 2);
    for s in &sizes {
        // Throughput: 20,000 pps (+ the buffer's 10 frames over a 1 s trial), to 0.5 %.
        let t = s.throughput.as_ref().unwrap().rate.unwrap();
        assert!((19_900.0..=20_010.0).contains(&t), "{t}");
        assert_eq!(s.latency_trials.len(), 3);
        // Loss: 100 % ... 50 % of 40,000 pps lose, then 50 % and 40 % lose nothing.
        let steps: Vec<(f64, f64)> = s
            .loss_trials
            .iter()
            .map(|&i| (recs[i].request.rate.unwrap(), recs[i].obs.loss_ratio()))
            .collect();
        assert_eq!(steps.len(), 7, "{steps:?}");
        for (rate, loss) in &steps {
            let want = (1.0 - 20_000.0 / rate).max(0.0);
            assert!((loss - want).abs() < 0.001, "{rate}: {loss} vs {want}");
        }
        assert_eq!(steps[6].1, 0.0);
        assert_eq!(steps[5].1, 0.0);
        // Back-to-back: q / (1 - r/M) = 10 / 0.5 = 20 frames, in each repetition.
        assert_eq!(s.bursts.len(), 2);
        for b in &s.bursts {
            assert_eq!(b.frames, Some(20), "{b:?}");
            assert!(!b.at_limit);
            assert!(b.trials.len() < 25, "{}", b.trials.len());
        }
    }
}

#[test]
fn an_interrupted_suite_resumed_ends_as_one_that_ran_through() {
    let (whole, all, _) = run(vec![], usize::MAX);
    for cut in [1, 5, all.len() / 2, all.len() - 1] {
        let (_, some, interrupted) = run(vec![], cut);
        assert!(interrupted);
        assert_eq!(some.len(), cut);
        let (again, all2, interrupted) = run(some, usize::MAX);
        assert!(!interrupted);
        assert_eq!(all2, all, "cut at {cut}");
        assert_eq!(
            serde_json::to_value(&again).unwrap(),
            serde_json::to_value(&whole).unwrap()
        );
    }
}

#[test]
fn a_burst_search_stops_at_its_limit_and_at_a_lossy_device() {
    let o = |sent: u64, lost: u64| Obs {
        sent,
        dut_lost: lost,
        ..Obs::default()
    };
    // Nothing lost at the longest burst: that is the result.
    let mut b = Bursts::new(100);
    assert_eq!(b.next(100), Some(100));
    b.record(100, &o(100, 0));
    assert_eq!(b.next(100), None);
    assert_eq!(b.lo, 100);
    // A device that loses one frame of every burst: every burst fails, down to 1.
    let mut b = Bursts::new(1000);
    let mut n = 0;
    while let Some(x) = b.next(1000) {
        b.record(x, &o(x, 1));
        n += 1;
        assert!(n < 30, "it creeps");
    }
    assert_eq!(b.lo, 0);
}
