//! The seed's six measured iterations, and the model's run of each beside them.

use super::engine::{Outcome, simulate};
use super::model::{Model, ModelError, SEED_CLOCKS_MHZ};
use crate::sample::CpuShares;
use crate::sender::PktgenResult;
use serde::Serialize;
use std::fmt::Write as _;

/// One iteration as the seed reports it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SeedRun {
    /// Iteration number in the seed.
    pub iteration: u32,
    /// The seed's name for the clock.
    pub clock_name: &'static str,
    pub clock_mhz: f64,
    /// Wake the queue at this many free descriptors (1 before the change, 16 after).
    pub start_thresh: u32,
    /// top's line (us, sy, ni, id, wa, hi, si, st).
    pub cpu: CpuShares,
    pub elapsed_us: u64,
    pub idle_us: u64,
    pub interrupts: u64,
}

const fn cpu(us: f64, sy: f64, hi: f64, si: f64) -> CpuShares {
    CpuShares {
        us,
        sy,
        ni: 0.0,
        id: 0.0,
        wa: 0.0,
        hi,
        si,
        st: 0.0,
    }
}

/// The seed, `seed/000_e51b97a0f95fed87.txt`: 4,000,000 packets of 60 bytes each run.
pub const SEED_RUNS: [SeedRun; 6] = [
    SeedRun {
        iteration: 0,
        clock_name: "under-clocked",
        clock_mhz: SEED_CLOCKS_MHZ[0],
        start_thresh: 1,
        cpu: cpu(0.3, 13.6, 31.2, 54.8),
        elapsed_us: 28_910_148,
        idle_us: 118_564,
        interrupts: 3_234_740,
    },
    SeedRun {
        iteration: 1,
        clock_name: "normal",
        clock_mhz: SEED_CLOCKS_MHZ[1],
        start_thresh: 1,
        cpu: cpu(0.3, 20.9, 29.9, 48.8),
        elapsed_us: 26_947_273,
        idle_us: 4_309_931,
        interrupts: 3_998_176,
    },
    SeedRun {
        iteration: 2,
        clock_name: "over-clocked",
        clock_mhz: SEED_CLOCKS_MHZ[2],
        start_thresh: 1,
        cpu: cpu(0.3, 33.0, 27.3, 39.3),
        elapsed_us: 26_937_148,
        idle_us: 5_281_143,
        interrupts: 3_999_634,
    },
    SeedRun {
        iteration: 3,
        clock_name: "under-clocked",
        clock_mhz: SEED_CLOCKS_MHZ[0],
        start_thresh: 16,
        cpu: cpu(0.3, 16.3, 30.0, 53.3),
        elapsed_us: 28_246_751,
        idle_us: 77_315,
        interrupts: 3_227_925,
    },
    SeedRun {
        iteration: 4,
        clock_name: "normal",
        clock_mhz: SEED_CLOCKS_MHZ[1],
        start_thresh: 16,
        cpu: cpu(0.3, 23.7, 30.0, 46.0),
        elapsed_us: 26_935_554,
        idle_us: 1_876_682,
        interrupts: 3_994_491,
    },
    SeedRun {
        iteration: 5,
        clock_name: "over-clocked",
        clock_mhz: SEED_CLOCKS_MHZ[2],
        start_thresh: 16,
        cpu: cpu(0.3, 30.8, 27.2, 41.7),
        elapsed_us: 26_933_751,
        idle_us: 3_785_597,
        interrupts: 3_999_595,
    },
];

/// Packets per seed iteration.
pub const SEED_COUNT: u64 = 4_000_000;

impl SeedRun {
    /// The seed's Result figures.
    pub fn result(&self) -> PktgenResult {
        PktgenResult {
            elapsed_ns: self.elapsed_us * 1000,
            idle_ns: self.idle_us * 1000,
            sent: SEED_COUNT,
            pkt_size: 60,
            frags: 0,
            errors: 0,
            imix_bytes: None,
            size_range: None,
        }
    }

    /// Interrupts per packet.
    pub fn irqs_per_packet(&self) -> f64 {
        self.interrupts as f64 / SEED_COUNT as f64
    }

    /// The model of this iteration: `base` with the iteration's clock and wake threshold.
    pub fn model(&self, base: &Model) -> Model {
        let mut m = base.clone();
        m.clock_mhz = self.clock_mhz;
        m.ring.start_thresh = self.start_thresh;
        m
    }
}

/// One iteration: the seed's figures and the model's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub seed: SeedRun,
    /// The model's parameters for this iteration.
    pub model: Model,
    pub sim: Outcome,
}

/// Differences the issue bounds (model minus seed).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Deltas {
    /// pps, relative (model / seed - 1).
    pub pps_rel: f64,
    /// Interrupts per packet, relative.
    pub irq_rel: f64,
    /// Cpu(s) shares, in percentage points.
    pub sy_pts: f64,
    pub hi_pts: f64,
    pub si_pts: f64,
    /// pktgen's idle as a share of elapsed, in percentage points.
    pub idle_pts: f64,
}

impl Comparison {
    pub fn deltas(&self) -> Deltas {
        let s = &self.seed;
        let r = &self.sim.result;
        let seed_pps = s.result().pps() as f64;
        let idle_share = |idle: u64, elapsed: u64| idle as f64 * 100.0 / elapsed.max(1) as f64;
        Deltas {
            pps_rel: r.pps() as f64 / seed_pps - 1.0,
            irq_rel: self.sim.irqs_per_packet() / s.irqs_per_packet() - 1.0,
            sy_pts: self.sim.cpu.sy - s.cpu.sy,
            hi_pts: self.sim.cpu.hi - s.cpu.hi,
            si_pts: self.sim.cpu.si - s.cpu.si,
            idle_pts: idle_share(r.idle_ns, r.elapsed_ns) - idle_share(s.idle_us, s.elapsed_us),
        }
    }
}

/// The bounds for the reproduction.
pub const PPS_BOUND: f64 = 0.01;
pub const IRQ_BOUND: f64 = 0.02;
pub const SHARE_BOUND_PTS: f64 = 5.0;

/// Runs the six iterations with `base` (its clock and start threshold are replaced by each
/// iteration's; its count is kept, so a shorter run can stand for the seed's 4,000,000).
pub fn reproduce(base: &Model) -> Result<Vec<Comparison>, ModelError> {
    SEED_RUNS
        .iter()
        .map(|s| {
            let model = s.model(base);
            let sim = simulate(&model)?;
            Ok(Comparison {
                seed: *s,
                model,
                sim,
            })
        })
        .collect()
}

/// What the reproduction must show, beyond the bounds: the direction of every change the seed
/// shows between waking at 1 and at 16 free descriptors.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    /// Every iteration within the pps, interrupt and share bounds.
    pub within_bounds: bool,
    /// pps up at the slow clock with hysteresis.
    pub slow_pps_up: bool,
    /// pktgen idle down at the normal clock with hysteresis.
    pub normal_idle_down: bool,
    /// Lines that failed, for the report.
    pub failures: Vec<String>,
}

/// Checks the bounds and directions on a reproduction (in seed order).
pub fn verdict(rows: &[Comparison]) -> Verdict {
    let mut failures = Vec::new();
    for c in rows {
        let d = c.deltas();
        let it = c.seed.iteration;
        if d.pps_rel.abs() > PPS_BOUND {
            failures.push(format!(
                "iteration {it}: pps off by {:+.2} %",
                d.pps_rel * 100.0
            ));
        }
        if d.irq_rel.abs() > IRQ_BOUND {
            failures.push(format!(
                "iteration {it}: interrupts off by {:+.2} %",
                d.irq_rel * 100.0
            ));
        }
        for (name, v) in [("sy", d.sy_pts), ("hi", d.hi_pts), ("si", d.si_pts)] {
            if v.abs() > SHARE_BOUND_PTS {
                failures.push(format!("iteration {it}: {name} off by {v:+.1} points"));
            }
        }
    }
    let within_bounds = failures.is_empty();
    let find = |clock: f64, start: u32| {
        rows.iter()
            .find(|c| c.seed.clock_mhz == clock && c.seed.start_thresh == start)
    };
    let pair = |clock: f64| find(clock, 1).zip(find(clock, 16));
    let slow_pps_up = pair(SEED_CLOCKS_MHZ[0])
        .map(|(a, b)| b.sim.result.pps() > a.sim.result.pps())
        .unwrap_or(false);
    let normal_idle_down = pair(SEED_CLOCKS_MHZ[1])
        .map(|(a, b)| b.sim.result.idle_ns < a.sim.result.idle_ns)
        .unwrap_or(false);
    if !slow_pps_up {
        failures.push("pps does not rise at the slow clock with hysteresis".into());
    }
    if !normal_idle_down {
        failures.push("pktgen idle does not fall at the normal clock with hysteresis".into());
    }
    Verdict {
        within_bounds,
        slow_pps_up,
        normal_idle_down,
        failures,
    }
}

/// What the seed's own counters allow the wake threshold to do at the slow clock.
///
/// The threshold acts only while the queue is stopped. A stopped queue means a full ring, and a
/// full ring means the NIC, not the CPU, paces the completions: one per frame time (6.72 us),
/// far longer than an interrupt handler (about 2.8 us at 1052 MHz), so each completion gets its
/// own interrupt. The seed shows it: at the normal clock, waking at 1, the queue stops on every
/// packet and there are 0.9995 interrupts per packet. When the CPU paces the completions
/// instead, they come right after the posts and about one in five lands in a running handler
/// (0.81 per packet at the slow clock; the model gets 0.808 with no constant of its own). So the slow
/// clock's interrupt count bounds how many of its packets were sent with the queue stopped, and
/// that bounds what any wake-threshold mechanism could save. docs/sim.md discusses the one
/// assumption: the interrupt rate with the queue never stopped (taken as iteration 3's).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SlowClockBound {
    /// Interrupts per packet with the queue stopped on nearly every packet (iteration 1).
    pub irq_stopped: f64,
    /// Interrupts per packet at the slow clock, waking at 1 (iteration 0) and at 16 (iteration 3).
    pub irq_wake1: f64,
    pub irq_wake16: f64,
    /// Most packets iteration 0 can have sent with the queue stopped, taking iteration 3's
    /// interrupt rate (the lower one) as the rate with the queue never stopped.
    pub stopped_packets_max: f64,
    /// Run time the seed's hysteresis saved at the slow clock (s).
    pub saved_s: f64,
    /// Run time per packet at the slow clock, waking at 1 (us); the CPU is never idle.
    pub per_packet_us: f64,
    /// What hysteresis would have to save on each packet sent with the queue stopped (us).
    pub needed_per_stopped_packet_us: f64,
    /// The largest pps gain the threshold could give: every packet sent with the queue stopped
    /// made free (its whole share of the run removed).
    pub max_gain: f64,
    /// The gain the seed measured.
    pub seed_gain: f64,
    /// A generous saving per stopped packet from waking at 16 instead of 1 (us): a wake, a TX
    /// softirq pass and a turn of pktgen's loop, about 1,000 cycles at 1052 MHz (the model's
    /// wake + softirq + spin costs are 1,100 cycles).
    pub plausible_saving_us: f64,
    /// The share of packets that would have to be sent with the queue stopped for that saving
    /// to give the seed's gain.
    pub stopped_share_needed: f64,
    /// The interrupts per packet the wake-at-1 run would then show.
    pub irq_if_needed: f64,
}

/// Computes [`SlowClockBound`] from the seed's figures alone.
pub fn slow_clock_bound() -> SlowClockBound {
    let [i0, i1, _, i3, _, _] = SEED_RUNS;
    let n = SEED_COUNT as f64;
    let irq_stopped = i1.irqs_per_packet();
    let irq_wake1 = i0.irqs_per_packet();
    let irq_wake16 = i3.irqs_per_packet();
    let base = irq_wake1.min(irq_wake16);
    let stopped_packets_max = n * (irq_wake1 - base) / (irq_stopped - base);
    let saved_s = (i0.elapsed_us as f64 - i3.elapsed_us as f64) / 1e6;
    let per_packet_us = i0.elapsed_us as f64 / n;
    let needed_per_stopped_packet_us = if stopped_packets_max > 0.0 {
        saved_s * 1e6 / stopped_packets_max
    } else {
        f64::INFINITY
    };
    let max_gain = n / (n - stopped_packets_max) - 1.0;
    let seed_gain = i3.result().pps() as f64 / i0.result().pps() as f64 - 1.0;
    let plausible_saving_us = 1.0;
    let stopped_share_needed = saved_s * 1e6 / plausible_saving_us / n;
    let irq_if_needed = base + stopped_share_needed * (irq_stopped - base);
    SlowClockBound {
        irq_stopped,
        irq_wake1,
        irq_wake16,
        stopped_packets_max,
        saved_s,
        per_packet_us,
        needed_per_stopped_packet_us,
        max_gain,
        seed_gain,
        plausible_saving_us,
        stopped_share_needed,
        irq_if_needed,
    }
}

impl SlowClockBound {
    /// Three lines for the report.
    pub fn lines(&self) -> String {
        format!(
            "Slow clock: a wake threshold acts only while the queue is stopped, and stopped means one interrupt per packet ({:.4} at\n\
             the normal clock). The seed's {:.4} and {:.4} interrupts/packet (wake at 1, 16) leave at most {:.2} % of the packets for\n\
             that: even made free, {:+.2} % pps, not the seed's {:+.2} %; at {:.1} us saved per stopped packet it needs {:.0} % of them ({:.3} irq/pkt).",
            self.irq_stopped,
            self.irq_wake1,
            self.irq_wake16,
            self.stopped_packets_max * 100.0 / SEED_COUNT as f64,
            self.max_gain * 100.0,
            self.seed_gain * 100.0,
            self.plausible_saving_us,
            self.stopped_share_needed * 100.0,
            self.irq_if_needed,
        )
    }
}

/// Scales a simulated run of `count` packets to the seed's 4,000,000 for display: elapsed and
/// idle times are multiplied by 4e6 / count (rates and shares are unchanged).
fn scaled(r: &PktgenResult) -> PktgenResult {
    if r.sent == SEED_COUNT || r.sent == 0 {
        return *r;
    }
    let k = SEED_COUNT as f64 / r.sent as f64;
    PktgenResult {
        elapsed_ns: (r.elapsed_ns as f64 * k).round() as u64,
        idle_ns: (r.idle_ns as f64 * k).round() as u64,
        sent: SEED_COUNT,
        ..*r
    }
}

/// The six iterations in the seed's layout, the model's lines under the seed's, then a table of
/// the differences and the verdict.
pub fn render(rows: &[Comparison]) -> String {
    let mut out = String::new();
    let count = rows
        .first()
        .map(|c| c.sim.result.sent)
        .unwrap_or(SEED_COUNT);
    let _ = writeln!(
        out,
        "Simulated seed (upktgen sim --preset seed): {} {}-byte packets per iteration{}.",
        count,
        rows.first().map(|c| c.model.pkt_size).unwrap_or(60),
        if count == SEED_COUNT {
            String::new()
        } else {
            format!(" (times in the summary scaled to {SEED_COUNT})")
        }
    );
    let _ = writeln!(
        out,
        "Each iteration: the seed's three lines, then the model's (\"sim\")."
    );
    for (i, c) in rows.iter().enumerate() {
        let s = &c.seed;
        if i == 3 {
            let _ = writeln!(
                out,
                "\nWith the change: the queue is woken only when at least 16 descriptors are free."
            );
        }
        let _ = writeln!(
            out,
            "\nIteration {} ({} {:.3} MHz, wake at {} free, ring {}):",
            s.iteration, s.clock_name, s.clock_mhz, s.start_thresh, c.model.ring.size
        );
        let _ = writeln!(out, "seed {}", s.cpu.top_line("Cpu(s)"));
        let _ = writeln!(out, "sim  {}", c.sim.cpu.top_line("Cpu(s)"));
        let _ = writeln!(out, "seed Result: {}", indent(&s.result().lines()));
        let _ = writeln!(out, "sim  Result: {}", indent(&c.sim.result.lines()));
        let _ = writeln!(out, "seed Interrupts: {}", s.interrupts);
        let _ = writeln!(out, "sim  Interrupts: {}", c.sim.interrupts);
    }
    let _ = writeln!(out, "\n{}", table(rows));
    let v = verdict(rows);
    let _ = writeln!(
        out,
        "Bounds (pps within {:.0} %, interrupts within {:.0} %, sy/hi/si within {:.0} points): {}",
        PPS_BOUND * 100.0,
        IRQ_BOUND * 100.0,
        SHARE_BOUND_PTS,
        if v.within_bounds { "met" } else { "NOT met" }
    );
    let _ = writeln!(
        out,
        "Directions: pps up at the slow clock with hysteresis: {}; idle down at the normal clock: {}",
        yes(v.slow_pps_up),
        yes(v.normal_idle_down)
    );
    for f in &v.failures {
        let _ = writeln!(out, "  - {f}");
    }
    if !v.slow_pps_up {
        let _ = writeln!(out, "{}", slow_clock_bound().lines());
    }
    out
}

fn yes(b: bool) -> &'static str {
    if b { "yes" } else { "NO" }
}

fn indent(lines: &str) -> String {
    lines.replace("\n  ", "\n       ")
}

/// The compact seed-vs-model table.
pub fn table(rows: &[Comparison]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "it  clock MHz wake |  pps seed    sim    diff | irq/pkt seed   sim   diff |  sy seed  sim |  hi seed  sim |  si seed  sim | idle(d) s seed   sim | wakes/pkt sim"
    );
    for c in rows {
        let s = &c.seed;
        let d = c.deltas();
        let r = scaled(&c.sim.result);
        let _ = writeln!(
            out,
            "{:>2} {:>10.3} {:>4} | {:>8} {:>7} {:>+6.2}% | {:>12.4} {:>5.4} {:>+5.1}% | {:>8.1} {:>4.1} | {:>8.1} {:>4.1} | {:>8.1} {:>4.1} | {:>14.3} {:>5.3} | {:>13.3}",
            s.iteration,
            s.clock_mhz,
            s.start_thresh,
            s.result().pps(),
            r.pps(),
            d.pps_rel * 100.0,
            s.irqs_per_packet(),
            c.sim.irqs_per_packet(),
            d.irq_rel * 100.0,
            s.cpu.sy,
            c.sim.cpu.sy,
            s.cpu.hi,
            c.sim.cpu.hi,
            s.cpu.si,
            c.sim.cpu.si,
            s.idle_us as f64 / 1e6,
            r.idle_ns as f64 / 1e9,
            c.sim.queue.wakes as f64 / c.sim.result.sent.max(1) as f64,
        );
    }
    out
}
