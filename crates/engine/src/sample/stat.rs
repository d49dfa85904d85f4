//! `/proc/stat`: the `cpu` and `cpuN` lines (other lines are ignored).

use super::CpuShares;
use super::{ParseError, parse_u64, read_proc};
use serde::Serialize;
use std::collections::HashMap;

const FILE: &str = "/proc/stat";

/// One `cpu` line of `/proc/stat`: time in jiffies (`USER_HZ`) per state.
///
/// `guest` and `guest_nice` are already included in `user` and `nice`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CpuTimes {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
    pub guest: u64,
    pub guest_nice: u64,
}

impl CpuTimes {
    /// Builds from the numbers after the `cpu` label, in file order. At least 4 (`user nice
    /// system idle`, Linux 2.4) are needed; missing trailing fields are 0, fields beyond
    /// the 10 known ones are ignored.
    pub fn from_fields(fields: &[u64]) -> Option<Self> {
        if fields.len() < 4 {
            return None;
        }
        let f = |i: usize| fields.get(i).copied().unwrap_or(0);
        Some(Self {
            user: f(0),
            nice: f(1),
            system: f(2),
            idle: f(3),
            iowait: f(4),
            irq: f(5),
            softirq: f(6),
            steal: f(7),
            guest: f(8),
            guest_nice: f(9),
        })
    }

    /// top's total: every state except `guest` and `guest_nice` (already in `user`/`nice`).
    pub fn total(&self) -> u64 {
        [
            self.user,
            self.nice,
            self.system,
            self.idle,
            self.iowait,
            self.irq,
            self.softirq,
            self.steal,
        ]
        .iter()
        .fold(0u64, |acc, v| acc.saturating_add(*v))
    }

    /// `later - self`, field by field, saturating at 0 (idle and iowait can step back).
    pub fn delta(&self, later: &CpuTimes) -> CpuTimes {
        CpuTimes {
            user: later.user.saturating_sub(self.user),
            nice: later.nice.saturating_sub(self.nice),
            system: later.system.saturating_sub(self.system),
            idle: later.idle.saturating_sub(self.idle),
            iowait: later.iowait.saturating_sub(self.iowait),
            irq: later.irq.saturating_sub(self.irq),
            softirq: later.softirq.saturating_sub(self.softirq),
            steal: later.steal.saturating_sub(self.steal),
            guest: later.guest.saturating_sub(self.guest),
            guest_nice: later.guest_nice.saturating_sub(self.guest_nice),
        }
    }

    /// Percent shares as top computes them (each state * 100 / [`total`](Self::total)).
    /// Meant for a delta; a zero total gives all-zero shares.
    pub fn shares(&self) -> CpuShares {
        let total = self.total();
        if total == 0 {
            return CpuShares::default();
        }
        let pct = |v: u64| v as f64 * 100.0 / total as f64;
        CpuShares {
            us: pct(self.user),
            sy: pct(self.system),
            ni: pct(self.nice),
            id: pct(self.idle),
            wa: pct(self.iowait),
            hi: pct(self.irq),
            si: pct(self.softirq),
            st: pct(self.steal),
        }
    }
}

/// The cpu lines of one `/proc/stat` sample.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatSnapshot {
    /// The aggregate `cpu` line (all possible CPUs).
    pub all: CpuTimes,
    /// `cpuN` lines (online CPUs) in file order: `(N, times)`.
    pub per_cpu: Vec<(u32, CpuTimes)>,
    /// Malformed or duplicate `cpuN` lines that were skipped.
    pub skipped: usize,
}

/// Saturating differences between two [`StatSnapshot`]s.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct StatDelta {
    /// Aggregate line.
    pub all: CpuTimes,
    /// CPUs present in both samples, in the later sample's order.
    pub per_cpu: Vec<(u32, CpuTimes)>,
}

/// What is wrong with a `cpu...` line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum CpuLineError {
    #[error("bad cpu label `cpu{0}`")]
    Label(String),
    #[error("non-numeric field")]
    NotNumber,
    #[error("{0} fields, expected at least 4")]
    Fields(usize),
}

/// Parses `cpu...` lines: `None` if the label is not a cpu label at all, `Some(Err)` if it
/// is but the line is malformed. The CPU number is `None` for the aggregate line.
fn parse_cpu_line(line: &str) -> Option<Result<(Option<u32>, CpuTimes), CpuLineError>> {
    let mut tokens = line.split_whitespace();
    let rest = tokens.next()?.strip_prefix("cpu")?;
    let cpu = if rest.is_empty() {
        None
    } else {
        match parse_u64(rest).and_then(|n| u32::try_from(n).ok()) {
            Some(n) => Some(n),
            None => return Some(Err(CpuLineError::Label(rest.to_string()))),
        }
    };
    let Some(fields) = tokens.map(parse_u64).collect::<Option<Vec<u64>>>() else {
        return Some(Err(CpuLineError::NotNumber));
    };
    Some(
        CpuTimes::from_fields(&fields)
            .map(|t| (cpu, t))
            .ok_or(CpuLineError::Fields(fields.len())),
    )
}

impl StatSnapshot {
    /// Parses `/proc/stat` text. Errors if the aggregate `cpu` line is missing or
    /// malformed; malformed or duplicate `cpuN` lines are skipped and counted.
    pub fn parse(text: &str) -> Result<Self, ParseError> {
        let mut all = None;
        let mut per_cpu: Vec<(u32, CpuTimes)> = Vec::new();
        let mut skipped = 0;
        for (idx, line) in text.lines().enumerate() {
            match parse_cpu_line(line) {
                None => {}
                Some(Ok((None, t))) => {
                    if all.is_some() {
                        return Err(ParseError::new(
                            FILE,
                            Some(idx + 1),
                            "second aggregate `cpu` line",
                        ));
                    }
                    all = Some(t);
                }
                Some(Ok((Some(n), t))) => {
                    if per_cpu.iter().any(|(c, _)| *c == n) {
                        skipped += 1;
                    } else {
                        per_cpu.push((n, t));
                    }
                }
                Some(Err(reason)) if line.split_whitespace().next() == Some("cpu") => {
                    return Err(ParseError::new(
                        FILE,
                        Some(idx + 1),
                        format!("aggregate `cpu` line: {reason}"),
                    ));
                }
                Some(Err(_)) => skipped += 1,
            }
        }
        let all = all.ok_or_else(|| ParseError::new(FILE, None, "no aggregate `cpu` line"))?;
        Ok(Self {
            all,
            per_cpu,
            skipped,
        })
    }

    /// Reads and parses `/proc/stat`.
    pub fn read() -> Result<Self, super::SampleError> {
        Ok(Self::parse(&read_proc(FILE)?)?)
    }

    /// One CPU's times, if it was online.
    #[cfg(test)]
    pub fn cpu(&self, n: u32) -> Option<&CpuTimes> {
        self.per_cpu.iter().find(|(c, _)| *c == n).map(|(_, t)| t)
    }

    /// From `self` (earlier) to `later`: only CPUs present in both.
    pub fn delta(&self, later: &StatSnapshot) -> StatDelta {
        let earlier: HashMap<u32, &CpuTimes> = self.per_cpu.iter().map(|(c, t)| (*c, t)).collect();
        StatDelta {
            all: self.all.delta(&later.all),
            per_cpu: later
                .per_cpu
                .iter()
                .filter_map(|(c, t)| Some((*c, earlier.get(c)?.delta(t))))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VM_A: &str = include_str!("testdata/vm_stat_a.txt");
    const VM_B: &str = include_str!("testdata/vm_stat_b.txt");
    const BIG_A: &str = include_str!("testdata/big_stat_a.txt");
    const BIG_B: &str = include_str!("testdata/big_stat_b.txt");

    fn approx(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn vm_sample_exact() {
        let s = StatSnapshot::parse(VM_A).unwrap();
        assert_eq!(s.skipped, 0);
        assert_eq!(
            s.all,
            CpuTimes {
                user: 3995,
                nice: 0,
                system: 1632,
                idle: 39760,
                iowait: 245,
                irq: 0,
                softirq: 15,
                steal: 10,
                guest: 0,
                guest_nice: 0,
            }
        );
        assert_eq!(s.per_cpu.len(), 2);
        assert_eq!(s.per_cpu[0].0, 0);
        assert_eq!(s.per_cpu[1].0, 1);
        assert_eq!(s.cpu(1).unwrap().system, 942);
        assert_eq!(s.cpu(1).unwrap().iowait, 211);
        assert!(s.cpu(2).is_none());
    }

    #[test]
    fn vm_delta_and_shares() {
        let a = StatSnapshot::parse(VM_A).unwrap();
        let b = StatSnapshot::parse(VM_B).unwrap();
        let d = a.delta(&b);
        assert_eq!(
            d.all,
            CpuTimes {
                user: 23,
                system: 74,
                idle: 114,
                softirq: 18,
                ..Default::default()
            }
        );
        assert_eq!(d.all.total(), 229);
        let sh = d.all.shares();
        assert!(approx(sh.us, 2300.0 / 229.0));
        assert!(approx(sh.sy, 7400.0 / 229.0));
        assert!(approx(sh.id, 11400.0 / 229.0));
        assert!(approx(sh.si, 1800.0 / 229.0));
        assert_eq!((sh.ni, sh.wa, sh.hi, sh.st), (0.0, 0.0, 0.0, 0.0));
        assert_eq!(
            sh.top_line("Cpu(s)"),
            "Cpu(s): 10.0%us, 32.3%sy,  0.0%ni, 49.8%id,  0.0%wa,  0.0%hi,  7.9%si,  0.0%st"
        );
        // cpu1: user 23, system 70, idle 4, softirq 18.
        assert_eq!(d.per_cpu.len(), 2);
        let (n, t) = d.per_cpu[1];
        assert_eq!(n, 1);
        assert_eq!(
            (t.user, t.system, t.idle, t.softirq, t.total()),
            (23, 70, 4, 18, 115)
        );
    }

    #[test]
    fn older_kernels_short_lines() {
        // Linux 2.6.0-2.6.10: 7 fields.
        let s = StatSnapshot::parse("cpu  100 2 30 800 5 6 7\ncpu0 100 2 30 800 5 6 7\nintr 1 2\n")
            .unwrap();
        assert_eq!(
            s.all,
            CpuTimes {
                user: 100,
                nice: 2,
                system: 30,
                idle: 800,
                iowait: 5,
                irq: 6,
                softirq: 7,
                ..Default::default()
            }
        );
        assert_eq!(s.all.total(), 950);
        assert_eq!(s.per_cpu, vec![(0, s.all)]);
        // Linux 2.4: 4 fields.
        let s = StatSnapshot::parse("cpu  1 2 3 4\n").unwrap();
        assert_eq!(s.all.total(), 10);
        assert_eq!(s.all.iowait, 0);
        // Fields beyond the known 10 are ignored.
        let s = StatSnapshot::parse("cpu 1 2 3 4 5 6 7 8 9 10 11 12\n").unwrap();
        assert_eq!(s.all.guest_nice, 10);
    }

    #[test]
    fn guest_is_not_double_counted() {
        let t = CpuTimes {
            user: 60,
            nice: 10,
            idle: 30,
            guest: 50,
            guest_nice: 10,
            ..Default::default()
        };
        assert_eq!(t.total(), 100);
        let sh = t.shares();
        assert!(approx(sh.us, 60.0));
        assert!(approx(sh.ni, 10.0));
        assert!(approx(sh.id, 30.0));
    }

    #[test]
    fn zero_total_gives_zero_shares() {
        let sh = CpuTimes::default().shares();
        assert_eq!(sh, CpuShares::default());
        assert!(!sh.us.is_nan());
        // Only guest time (impossible, but no NaN either).
        let sh = CpuTimes {
            guest: 5,
            ..Default::default()
        }
        .shares();
        assert_eq!(sh, CpuShares::default());
    }

    #[test]
    fn idle_stepping_back_saturates() {
        let a = StatSnapshot::parse("cpu 10 0 10 1000 50 0 0 0 0 0\n").unwrap();
        let b = StatSnapshot::parse("cpu 20 0 30 998 40 0 0 0 0 0\n").unwrap();
        let d = a.delta(&b);
        assert_eq!(
            d.all,
            CpuTimes {
                user: 10,
                system: 20,
                ..Default::default()
            }
        );
        let sh = d.all.shares();
        assert!(approx(sh.us + sh.sy, 100.0));
    }

    #[test]
    fn big_machine_gaps_and_offlining() {
        let a = StatSnapshot::parse(BIG_A).unwrap();
        let b = StatSnapshot::parse(BIG_B).unwrap();
        assert_eq!(
            a.per_cpu.iter().map(|(c, _)| *c).collect::<Vec<_>>(),
            vec![0, 1, 4, 5, 6, 7]
        );
        // cpu5 went offline, cpu2 came online.
        assert_eq!(
            b.per_cpu.iter().map(|(c, _)| *c).collect::<Vec<_>>(),
            vec![0, 1, 2, 4, 6, 7]
        );
        let d = a.delta(&b);
        assert_eq!(
            d.per_cpu.iter().map(|(c, _)| *c).collect::<Vec<_>>(),
            vec![0, 1, 4, 6, 7]
        );
        assert_eq!(
            d.all,
            CpuTimes {
                user: 210,
                nice: 0,
                system: 1190,
                idle: 3600,
                iowait: 0,
                irq: 300,
                softirq: 700,
                steal: 0,
                guest: 150,
                guest_nice: 0,
            }
        );
        assert_eq!(d.all.total(), 6000);
        let sh = d.all.shares();
        assert!(approx(sh.us, 3.5));
        assert!(approx(sh.sy, 1190.0 / 60.0));
        assert!(approx(sh.id, 60.0));
        assert!(approx(sh.hi, 5.0));
        assert!(approx(sh.si, 700.0 / 60.0));
        // cpu4 ran the softirqs of the NIC queue: 100 jiffies of the interval.
        let cpu4 = d.per_cpu.iter().find(|(c, _)| *c == 4).unwrap().1;
        assert_eq!(
            cpu4,
            CpuTimes {
                system: 300,
                irq: 150,
                softirq: 550,
                ..Default::default()
            }
        );
        assert_eq!(
            cpu4.shares().top_line("Cpu4  "),
            "Cpu4  :  0.0%us, 30.0%sy,  0.0%ni,  0.0%id,  0.0%wa, 15.0%hi, 55.0%si,  0.0%st"
        );
        // The guest time is counted once, inside user.
        let cpu7 = d.per_cpu.iter().find(|(c, _)| *c == 7).unwrap().1;
        assert_eq!((cpu7.user, cpu7.guest, cpu7.total()), (200, 150, 1000));
    }

    #[test]
    fn malformed() {
        for bad in [
            "",
            "\n\n",
            "garbage",
            "intr 1 2 3\nctxt 5\n",
            "cpux 1 2 3 4\n",
        ] {
            let e = StatSnapshot::parse(bad).unwrap_err();
            assert_eq!(
                e.to_string(),
                "/proc/stat: no aggregate `cpu` line",
                "{bad:?}"
            );
        }
        let e = StatSnapshot::parse("cpu 1 2 x 4\n").unwrap_err();
        assert_eq!(e.line, Some(1));
        assert_eq!(
            e.to_string(),
            "/proc/stat: line 1: aggregate `cpu` line: non-numeric field"
        );
        let e = StatSnapshot::parse("cpu 1 2 3\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "/proc/stat: line 1: aggregate `cpu` line: 3 fields, expected at least 4"
        );
        assert!(StatSnapshot::parse("cpu -1 2 3 4\n").is_err());
        assert!(StatSnapshot::parse("cpu 99999999999999999999 2 3 4\n").is_err());
        assert!(StatSnapshot::parse("cpu 1 2 3 4\ncpu 1 2 3 4\n").is_err());
        // Malformed, truncated and duplicate per-CPU lines are skipped.
        let s = StatSnapshot::parse(
            "cpu 4 3 2 1\ncpu0 1 1 1 1\ncpu1 1 1\ncpu2 1 1 z 1\ncpu+3 1 1 1 1\ncpu0 9 9 9 9\ncpu4 2 2 2 2\n",
        )
        .unwrap();
        assert_eq!(s.skipped, 4);
        assert_eq!(s.per_cpu.len(), 2);
        assert_eq!(s.cpu(0).unwrap().user, 1);
        assert_eq!(s.cpu(4).unwrap().user, 2);
    }
}
