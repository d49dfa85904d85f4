//! Benchmark of the simulator: the seed's six 4,000,000-packet iterations.
//!
//! `cargo bench --bench sim` prints, for each iteration, the wall time of the simulation and the
//! simulated packets per second of wall time (how fast the model runs, not the modelled pps),
//! then the seed-vs-model table and whether the bounds are met at full length.
//! `cargo bench --bench sim -- --quick` runs one iteration only.

use std::time::Instant;
use upktgen::sim::{Model, seed, simulate};

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let base = Model::seed();
    let mut rows = Vec::new();
    let mut total_packets = 0u64;
    let mut total_wall = 0.0f64;
    println!(
        "upktgen sim benchmark: {} packets per iteration (the seed's count)",
        base.count
    );
    for s in seed::SEED_RUNS.iter().take(if quick { 1 } else { 6 }) {
        let m = s.model(&base);
        let t0 = Instant::now();
        let o = match simulate(&m) {
            Ok(o) => o,
            Err(e) => {
                eprintln!("iteration {}: {e}", s.iteration);
                std::process::exit(1);
            }
        };
        let wall = t0.elapsed().as_secs_f64();
        total_packets += o.result.sent;
        total_wall += wall;
        println!(
            "iteration {} ({:>8.3} MHz, wake at {:>2}): wall {:>6.3} s, {:>6.2} M simulated packets/s, {:>5.1} engine steps/packet, {:>5.1} ns/step",
            s.iteration,
            s.clock_mhz,
            s.start_thresh,
            wall,
            o.result.sent as f64 / wall / 1e6,
            o.steps as f64 / o.result.sent as f64,
            wall * 1e9 / o.steps as f64
        );
        rows.push(seed::Comparison {
            seed: *s,
            model: m,
            sim: o,
        });
    }
    println!(
        "total: {} packets in {:.3} s of wall time: {:.2} M simulated packets/s",
        total_packets,
        total_wall,
        total_packets as f64 / total_wall / 1e6
    );
    if rows.len() == 6 {
        println!();
        print!("{}", seed::table(&rows));
        let v = seed::verdict(&rows);
        println!(
            "bounds met: {}; slow-clock pps up with hysteresis: {}; normal-clock idle down: {}",
            v.within_bounds, v.slow_pps_up, v.normal_idle_down
        );
        for f in &v.failures {
            println!("  - {f}");
        }
    }
}
