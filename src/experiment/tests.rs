//! The core against fake devices: no process, no root.

use super::figures::Figures;
use super::grid::Grid;
use super::resume::Replay;
use super::search::{Config, Obs, Precision};
use super::searching::{SearchPlanner, Space, TrialRecord};
use super::trial::Command;
use super::*;
use std::cell::Cell;

fn space(sizes: Vec<u32>) -> Space {
    Space {
        sizes,
        repeat: 1,
        latency: true,
        config: Config {
            loss: 0.0,
            pdr: None,
            precision: Precision::Relative(0.01),
            max_rate: Some(100_000.0),
            min_rate: 0.0,
            search_s: 1.0,
            final_s: 10.0,
            tolerance: 0.02,
        },
        line_rate_mbps: None,
        run_args: vec![],
    }
}

/// A device that forwards at most `cap` pps, behind a sender of 500 kpps.
fn device(cap: f64, ran: &Cell<usize>) -> impl FnMut(&Trial) -> Ran<TrialRecord> + '_ {
    move |t| {
        ran.set(ran.get() + 1);
        let Coords::Search {
            size,
            round,
            request,
            ..
        } = t.coords
        else {
            panic!("a search's trial: {t:?}")
        };
        // The child would be asked for this rate: the trial's own arguments say so.
        let argv = t.argv();
        if let Some(r) = request.rate {
            let i = argv.iter().position(|a| a == "--ratep").unwrap();
            assert_eq!(argv[i + 1], format!("{}", r.round().max(1.0) as u64));
        }
        assert!(t.plan.is_some(), "checked before it runs");
        let achieved = request.rate.unwrap_or(500_000.0).min(500_000.0);
        let sent = (achieved * request.duration_s) as u64;
        let passed = (sent as f64).min(cap * request.duration_s) as u64;
        Ran::Done(TrialRecord {
            size,
            round,
            request,
            obs: Obs {
                requested: request.rate,
                duration_s: request.duration_s,
                achieved,
                sent,
                dut_lost: sent - passed,
                ..Obs::default()
            },
            figures: Figures::default(),
            seconds: request.duration_s,
        })
    }
}

#[test]
fn a_search_finds_a_device_that_drops_above_37000_pps_within_its_precision() {
    let sp = space(vec![64, 1518]);
    let mut planner = SearchPlanner::new(sp.clone());
    planner.check_space().unwrap();
    let ran = Cell::new(0);
    let stop = AtomicBool::new(false);
    let mut saves = 0;
    let d = drive(
        &mut planner,
        &mut FnRunner(device(37_000.0, &ran)),
        &mut Replay::none(),
        &stop,
        |_| {
            saves += 1;
            Ok(())
        },
    )
    .unwrap();
    assert!(!d.interrupted);
    assert_eq!(ran.get(), d.outcomes.len());
    assert_eq!(saves, d.outcomes.len());
    let res = planner.results();
    assert_eq!(res.iter().map(|r| r.size).collect::<Vec<_>>(), [64, 1518]);
    for r in &res {
        let ndr = r.targets[0].rate.unwrap();
        assert!(
            (37_000.0 * 0.99..=37_000.0).contains(&ndr),
            "{}: {ndr}",
            r.size
        );
        // Then latency at 90, 50 and 10 % of it.
        assert_eq!(r.latency_trials.len(), 3);
    }
}

#[test]
fn a_resumed_search_answers_its_records_and_runs_only_the_rest() {
    let stop = AtomicBool::new(false);
    let run = |stored: Vec<TrialRecord>, ran: &Cell<usize>| {
        let mut p = SearchPlanner::new(space(vec![64]));
        let d = drive(
            &mut p,
            &mut FnRunner(device(37_000.0, ran)),
            &mut Replay::new(stored, TrialRecord::answers, |_, _| {}),
            &stop,
            |_| Ok(()),
        )
        .unwrap();
        (d.outcomes, p.results())
    };
    let ran = Cell::new(0);
    let (all, whole) = run(vec![], &ran);
    let ran = Cell::new(0);
    let (again, res) = run(all[..4].to_vec(), &ran);
    assert_eq!(ran.get() + 4, all.len());
    assert_eq!(again.len(), all.len());
    assert_eq!(res[0].targets[0].rate, whole[0].targets[0].rate);
}

#[test]
fn a_space_the_plan_refuses_is_refused_before_any_trial() {
    let mut sp = space(vec![64]);
    sp.run_args = vec!["--dev".into(), "lo".into()];
    let e = SearchPlanner::new(sp).check_space().unwrap_err();
    assert!(e.first && e.size == 64, "{e:?}");
    assert!(e.to_string().contains("--dst"), "{e}");
}

fn points(n: usize, refuse_at: Option<usize>) -> Vec<Trial> {
    (0..n)
        .map(|i| {
            let mut o = vec![format!("--count={}", i + 1)];
            if Some(i) == refuse_at {
                // Refused by the plan, not by the option parser.
                o.extend(["--rx-analyze".into(), "--threads=2".into()]);
            }
            Trial::new(
                format!("p{}", i + 1),
                Coords::Point { point: i, rep: 1 },
                Ask::point(Command::Run, o),
            )
        })
        .collect()
}

#[test]
fn a_grid_runs_every_point_in_order_repetition_by_repetition() {
    let mut g = Grid::new(points(3, None), 2).unwrap();
    assert_eq!(g.runs(), 6);
    let stop = AtomicBool::new(false);
    let d = drive(
        &mut g,
        &mut FnRunner(|t: &Trial| {
            let Coords::Point { point, rep } = t.coords else {
                panic!()
            };
            Ran::Done((point, rep, t.argv()[1].clone()))
        }),
        &mut Replay::none(),
        &stop,
        |_| Ok(()),
    )
    .unwrap();
    let order: Vec<(usize, u32)> = d.outcomes.iter().map(|o| (o.0, o.1)).collect();
    assert_eq!(order, [(0, 1), (1, 1), (2, 1), (0, 2), (1, 2), (2, 2)]);
    assert_eq!(d.outcomes[4].2, "--count=2");
}

#[test]
fn a_refused_40th_point_fails_before_the_runner_is_called_once() {
    let called = Cell::new(0);
    let r = Grid::new(points(40, Some(39)), 1).map(|mut g| {
        let stop = AtomicBool::new(false);
        drive(
            &mut g,
            &mut FnRunner(|_: &Trial| {
                called.set(called.get() + 1);
                Ran::Done(())
            }),
            &mut Replay::none(),
            &stop,
            |_| Ok(()),
        )
    });
    let e = r.unwrap_err();
    assert_eq!(e.index, 39);
    let m = e.to_string();
    assert!(m.starts_with("point 40 (p40): "), "{m}");
    assert!(m.contains("--rx-analyze with -t 2"), "{m}");
    assert_eq!(called.get(), 0);
    // The 39 before it are accepted.
    assert_eq!(Grid::new(points(39, None), 1).unwrap().runs(), 39);
}

#[test]
fn ctrl_c_ends_the_experiment_before_the_next_trial_keeping_what_ran() {
    let stop = AtomicBool::new(false);
    let mut g = Grid::new(points(3, None), 1).unwrap();
    let d = drive(
        &mut g,
        &mut FnRunner(|t: &Trial| {
            let Coords::Point { point, .. } = t.coords else {
                panic!()
            };
            if point == 1 {
                stop.store(true, Ordering::Relaxed);
                return Ran::Interrupted(Some(point));
            }
            Ran::Done(point)
        }),
        &mut Replay::none(),
        &stop,
        |_| Ok(()),
    )
    .unwrap();
    assert!(d.interrupted);
    assert_eq!(d.outcomes, [0, 1]);
}
