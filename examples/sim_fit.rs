//! Fits the simulator's 8 free constants to the seed's three runs WITHOUT hysteresis
//! (iterations 0-2), then prints how the fitted model predicts the three runs WITH hysteresis
//! (iterations 3-5), which it never saw.
//!
//! ```text
//! cargo run --release --example sim_fit -- [COUNT [ITERATIONS [name=value ...]]]
//! cargo run --release --example sim_fit -- 100000 300
//! ```
//!
//! COUNT packets per run (default 150000; rates and shares are steady-state figures, so a
//! shorter run than the seed's 4,000,000 fits the same constants), ITERATIONS of Nelder-Mead in
//! log space (default 6), starting from `Model::seed()` changed by any `name=value` given
//! (xmit, irq, iio, reclaim, free, wake, ring, fifo, dma, irqmode (0 irq, 1 napi), win, spin,
//! jit, bgs). The loss weighs, per run: pps (0.1 %), interrupts per packet (0.5 %), sy, hi, si
//! (1.5 points each) and pktgen's idle share (2 points). About 30 s for 300 iterations.
//! docs/sim.md reports the result.
use upktgen::sim::{Model, seed};

type Get = fn(&Model) -> f64;
type Set = fn(&mut Model, f64);

fn params() -> Vec<(&'static str, Get, Set)> {
    vec![
        ("xmit_cycles", |m| m.xmit_cycles, |m, v| m.xmit_cycles = v),
        (
            "reclaim_cycles",
            |m| m.reclaim_cycles,
            |m, v| m.reclaim_cycles = v,
        ),
        ("irq_cycles", |m| m.irq_cycles, |m, v| m.irq_cycles = v),
        ("irq_io_ns", |m| m.irq_io_ns, |m, v| m.irq_io_ns = v),
        ("free_cycles", |m| m.free_cycles, |m, v| m.free_cycles = v),
        (
            "idle_window_cycles",
            |m| m.idle_window_cycles,
            |m, v| m.idle_window_cycles = v.min(m.spin_cycles),
        ),
        ("wake_cycles", |m| m.wake_cycles, |m, v| m.wake_cycles = v),
        ("bg_slice_us", |m| m.bg_slice_us, |m, v| m.bg_slice_us = v),
    ]
}

fn loss(base: &Model, its: &[usize], verbose: bool) -> f64 {
    let mut l = 0.0;
    for &i in its {
        let s = &seed::SEED_RUNS[i];
        let m = s.model(base);
        let o = upktgen::sim::simulate(&m).unwrap();
        let c = seed::Comparison {
            seed: *s,
            model: m,
            sim: o,
        };
        let d = c.deltas();
        let terms = [
            d.pps_rel / 0.002,
            d.irq_rel / 0.005,
            d.sy_pts / 1.5,
            d.hi_pts / 1.5,
            d.si_pts / 1.5,
            d.idle_pts / 2.0,
        ];
        if verbose {
            println!(
                "it{i}: pps {:+.3}% irq {:+.2}% sy {:+.1} hi {:+.1} si {:+.1} idle {:+.1}",
                d.pps_rel * 100.0,
                d.irq_rel * 100.0,
                d.sy_pts,
                d.hi_pts,
                d.si_pts,
                d.idle_pts
            );
        }
        l += terms.iter().map(|t| t * t).sum::<f64>();
    }
    l
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let count: u64 = args.get(1).map(|s| s.parse().unwrap()).unwrap_or(150_000);
    let rounds: usize = args.get(2).map(|s| s.parse().unwrap()).unwrap_or(6);
    let mut m = Model {
        count,
        ..Model::seed()
    };
    for kv in &args[3..] {
        let (k, v) = kv.split_once('=').unwrap();
        let f: f64 = v.parse().unwrap();
        match k {
            "xmit" => m.xmit_cycles = f,
            "irq" => m.irq_cycles = f,
            "iio" => m.irq_io_ns = f,
            "reclaim" => m.reclaim_cycles = f,
            "free" => m.free_cycles = f,
            "wake" => m.wake_cycles = f,
            "ring" => m.ring.size = f as u32,
            "fifo" => m.fifo_frames = f as u32,
            "dma" => m.dma_ns = f,
            "irqmode" => {
                m.completion = if f == 0.0 {
                    upktgen::sim::Completion::Irq
                } else {
                    upktgen::sim::Completion::Napi
                }
            }
            "win" => m.idle_window_cycles = f,
            "spin" => m.spin_cycles = f,
            "jit" => m.jitter = f,
            "bgs" => m.bg_slice_us = f,
            _ => panic!("{k}"),
        }
    }
    let fit_on = [0usize, 1, 2];
    let ps = params();
    let best = loss(&m, &fit_on, true);
    println!("start loss {best:.2}");
    let n = ps.len();
    let x0: Vec<f64> = ps.iter().map(|(_, g, _)| g(&m).ln()).collect();
    let apply = |x: &[f64]| {
        let mut t = m.clone();
        for (i, (_, _, set)) in ps.iter().enumerate() {
            set(&mut t, x[i].exp());
        }
        t
    };
    let f = |x: &[f64]| loss(&apply(x), &fit_on, false);
    let mut simplex: Vec<(Vec<f64>, f64)> = vec![(x0.clone(), best)];
    for i in 0..n {
        let mut x = x0.clone();
        x[i] += 0.15;
        let v = f(&x);
        simplex.push((x, v));
    }
    for it in 0..rounds {
        simplex.sort_by(|a, b| a.1.partial_cmp(&b.1).unwrap());
        if it % 20 == 0 {
            println!("iter {it} best {:.2}", simplex[0].1);
        }
        let centroid: Vec<f64> = (0..n)
            .map(|j| simplex[..n].iter().map(|p| p.0[j]).sum::<f64>() / n as f64)
            .collect();
        let worst = simplex[n].clone();
        let pt = |c: f64| -> Vec<f64> {
            (0..n)
                .map(|j| centroid[j] + c * (worst.0[j] - centroid[j]))
                .collect()
        };
        let xr = pt(-1.0);
        let fr = f(&xr);
        if fr < simplex[0].1 {
            let xe = pt(-2.0);
            let fe = f(&xe);
            simplex[n] = if fe < fr { (xe, fe) } else { (xr, fr) };
        } else if fr < simplex[n - 1].1 {
            simplex[n] = (xr, fr);
        } else {
            let xc = pt(0.5);
            let fc = f(&xc);
            if fc < worst.1 {
                simplex[n] = (xc, fc);
            } else {
                let b = simplex[0].0.clone();
                for p in simplex.iter_mut().skip(1) {
                    let x: Vec<f64> = (0..n).map(|j| b[j] + 0.5 * (p.0[j] - b[j])).collect();
                    let v = f(&x);
                    *p = (x, v);
                }
            }
        }
    }
    simplex.sort_by(|a, b| a.1.partial_cmp(&b.1).unwrap());
    println!("final loss {:.2}", simplex[0].1);
    m = apply(&simplex[0].0);
    loss(&m, &fit_on, true);
    println!("predict hysteresis:");
    loss(&m, &[3, 4, 5], true);
    for (name, get, _) in &ps {
        println!("{name} = {:.1}", get(&m));
    }
}
