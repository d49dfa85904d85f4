//! `/proc/softirqs`: per-CPU counts of softirq vectors handled.

use super::{ParseError, common_cpus, find_cpu_header, parse_u64, per_cpu_delta, read_proc};
use serde::Serialize;
use std::collections::HashMap;

const FILE: &str = "/proc/softirqs";

/// One softirq vector (`NET_RX`, `TIMER`, ...) and its count on each CPU column.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SoftirqRow {
    pub name: String,
    /// One count per CPU column of the header, in header order.
    pub per_cpu: Vec<u64>,
}

impl SoftirqRow {
    /// Sum over the CPUs.
    #[cfg(test)]
    pub fn total(&self) -> u64 {
        self.per_cpu.iter().fold(0, |acc, n| acc.saturating_add(*n))
    }
}

/// One `/proc/softirqs` sample.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SoftirqsSnapshot {
    /// The header's CPUs (possible CPUs, unlike `/proc/interrupts`' online ones).
    pub cpus: Vec<u32>,
    /// Vectors in file order.
    pub rows: Vec<SoftirqRow>,
    /// Rows skipped as malformed (no colon, bad number, not one count per CPU) or as a
    /// duplicate name.
    pub skipped: usize,
}

/// One vector's change between two samples.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SoftirqRowDelta {
    pub name: String,
    /// Sum of `per_cpu`.
    pub total: u64,
    /// `(cpu, delta)` for CPUs in both samples (all the later sample's CPUs for a new row).
    pub per_cpu: Vec<(u32, u64)>,
}

/// The change of every vector present in the later sample, in its order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SoftirqsDelta {
    pub rows: Vec<SoftirqRowDelta>,
}

impl SoftirqsDelta {
    /// One vector by name (`"NET_RX"`).
    pub fn get(&self, name: &str) -> Option<&SoftirqRowDelta> {
        self.rows.iter().find(|r| r.name == name)
    }
}

fn parse_row(line: &str, ncpus: usize) -> Option<SoftirqRow> {
    let (name, rest) = line.split_once(':')?;
    let name = name.trim();
    if name.is_empty() || name.contains(char::is_whitespace) {
        return None;
    }
    let per_cpu: Vec<u64> = rest
        .split_whitespace()
        .map(parse_u64)
        .collect::<Option<_>>()?;
    (per_cpu.len() == ncpus).then(|| SoftirqRow {
        name: name.to_string(),
        per_cpu,
    })
}

impl SoftirqsSnapshot {
    /// Parses `/proc/softirqs` text. Errors on an empty file or a missing CPU header;
    /// rows without exactly one count per CPU column are skipped and counted.
    pub fn parse(text: &str) -> Result<Self, ParseError> {
        let (header, cpus) = find_cpu_header(text, FILE)?;
        let mut rows: Vec<SoftirqRow> = Vec::new();
        let mut skipped = 0;
        for line in text.lines().skip(header + 1) {
            if line.trim().is_empty() {
                continue;
            }
            match parse_row(line, cpus.len()) {
                Some(row) if !rows.iter().any(|r| r.name == row.name) => rows.push(row),
                _ => skipped += 1,
            }
        }
        Ok(Self {
            cpus,
            rows,
            skipped,
        })
    }

    /// Reads and parses `/proc/softirqs`.
    pub fn read() -> Result<Self, super::SampleError> {
        Ok(Self::parse(&read_proc(FILE)?)?)
    }

    /// One vector by name (`"NET_RX"`).
    #[cfg(test)]
    pub fn get(&self, name: &str) -> Option<&SoftirqRow> {
        self.rows.iter().find(|r| r.name == name)
    }

    /// From `self` (earlier) to `later`, by vector name; per CPU for CPUs in both samples.
    /// A vector only in `later` counts from 0, one only in `self` is ignored.
    pub fn delta(&self, later: &SoftirqsSnapshot) -> SoftirqsDelta {
        let pairs = common_cpus(&self.cpus, &later.cpus);
        let earlier: HashMap<&str, &SoftirqRow> =
            self.rows.iter().map(|r| (r.name.as_str(), r)).collect();
        let rows = later
            .rows
            .iter()
            .map(|l| {
                let per_cpu: Vec<(u32, u64)> = match earlier.get(l.name.as_str()) {
                    Some(e) => per_cpu_delta(&pairs, &e.per_cpu, &l.per_cpu),
                    None => later
                        .cpus
                        .iter()
                        .copied()
                        .zip(l.per_cpu.iter().copied())
                        .collect(),
                };
                SoftirqRowDelta {
                    name: l.name.clone(),
                    total: per_cpu.iter().fold(0, |acc, (_, d)| acc.saturating_add(*d)),
                    per_cpu,
                }
            })
            .collect();
        SoftirqsDelta { rows }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VM_A: &str = include_str!("testdata/vm_softirqs_a.txt");
    const VM_B: &str = include_str!("testdata/vm_softirqs_b.txt");
    const BIG_A: &str = include_str!("testdata/big_softirqs_a.txt");
    const BIG_B: &str = include_str!("testdata/big_softirqs_b.txt");

    const NAMES: [&str; 10] = [
        "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER",
        "RCU",
    ];

    #[test]
    fn vm_sample_exact() {
        let s = SoftirqsSnapshot::parse(VM_A).unwrap();
        assert_eq!(s.skipped, 0);
        assert_eq!(s.cpus, vec![0, 1]);
        assert_eq!(
            s.rows.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(),
            NAMES
        );
        assert_eq!(s.get("NET_RX").unwrap().per_cpu, vec![908, 1097]);
        assert_eq!(s.get("NET_TX").unwrap().per_cpu, vec![4, 0]);
        assert_eq!(s.get("RCU").unwrap().total(), 7494 + 8217);
        assert!(s.get("NET").is_none());
    }

    #[test]
    fn vm_delta_exact() {
        let a = SoftirqsSnapshot::parse(VM_A).unwrap();
        let b = SoftirqsSnapshot::parse(VM_B).unwrap();
        let d = a.delta(&b);
        let totals: Vec<(&str, u64)> = d.rows.iter().map(|r| (r.name.as_str(), r.total)).collect();
        assert_eq!(
            totals,
            vec![
                ("HI", 0),
                ("TIMER", 41),
                ("NET_TX", 0),
                ("NET_RX", 232_950),
                ("BLOCK", 42),
                ("IRQ_POLL", 0),
                ("TASKLET", 0),
                ("SCHED", 106),
                ("HRTIMER", 0),
                ("RCU", 85)
            ]
        );
        assert_eq!(d.get("NET_RX").unwrap().per_cpu, vec![(0, 0), (1, 232_950)]);
        assert_eq!(d.get("TIMER").unwrap().per_cpu, vec![(0, 17), (1, 24)]);
    }

    #[test]
    fn big_machine_exact() {
        let a = SoftirqsSnapshot::parse(BIG_A).unwrap();
        let b = SoftirqsSnapshot::parse(BIG_B).unwrap();
        assert_eq!(a.cpus, vec![0, 1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(a.rows.len(), 10);
        assert_eq!(
            a.get("NET_RX").unwrap().per_cpu,
            vec![
                5_000_000, 4_000_000, 10, 10, 3_000_000, 900_000, 700_000, 600_000
            ]
        );
        let d = a.delta(&b);
        let rx = d.get("NET_RX").unwrap();
        assert_eq!(rx.total, 40_000 + 30_000 + 100_000 + 25_000);
        assert_eq!(
            rx.per_cpu,
            vec![
                (0, 40_000),
                (1, 30_000),
                (2, 0),
                (3, 0),
                (4, 100_000),
                (5, 0),
                (6, 0),
                (7, 25_000)
            ]
        );
        assert_eq!(d.get("NET_TX").unwrap().total, 1_234);
        assert_eq!(d.get("TIMER").unwrap().total, 8_000);
        assert_eq!(d.get("HI").unwrap().total, 0);
    }

    #[test]
    fn gaps_new_and_vanished_rows() {
        let a = SoftirqsSnapshot::parse(
            "      CPU0  CPU2  CPU3\n  HI:  1  2  3\nNET_RX: 10 20 30\nOLD: 5 5 5\n",
        )
        .unwrap();
        let b = SoftirqsSnapshot::parse(
            "      CPU0  CPU3  CPU8\n  HI:  2  2  9\nNET_RX: 15 31 100\nNEW: 1 2 3\n",
        )
        .unwrap();
        assert_eq!(a.cpus, vec![0, 2, 3]);
        let d = a.delta(&b);
        assert_eq!(d.rows.len(), 3);
        assert_eq!(d.get("HI").unwrap().per_cpu, vec![(0, 1), (3, 0)]);
        assert_eq!(d.get("HI").unwrap().total, 1);
        assert_eq!(d.get("NET_RX").unwrap().total, 6);
        assert_eq!(d.get("NEW").unwrap().per_cpu, vec![(0, 1), (3, 2), (8, 3)]);
        assert_eq!(d.get("NEW").unwrap().total, 6);
        assert!(d.get("OLD").is_none());
    }

    #[test]
    fn malformed() {
        for bad in ["", "   \n", "garbage\n", "HI: 1 2\n", "CPU0 CPU1 x\n"] {
            assert!(SoftirqsSnapshot::parse(bad).is_err(), "{bad:?}");
        }
        let s = SoftirqsSnapshot::parse(
            "   CPU0 CPU1\nHI: 1 2\nTIMER: 1\nNET_TX: 1 2 3\nNET_RX 1 2\nBLOCK: 1 -2\n\
             IRQ_POLL:\nHI: 3 4\nSCHED: 7 8\nRCU: 1 99999999999999999999\n",
        )
        .unwrap();
        assert_eq!(s.skipped, 7);
        assert_eq!(
            s.rows,
            vec![
                SoftirqRow {
                    name: "HI".into(),
                    per_cpu: vec![1, 2]
                },
                SoftirqRow {
                    name: "SCHED".into(),
                    per_cpu: vec![7, 8]
                }
            ]
        );
    }
}
