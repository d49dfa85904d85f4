//! `/proc/interrupts`: per-CPU hardware interrupt and IPI counts.

use super::{ParseError, common_cpus, find_cpu_header, parse_u64, per_cpu_delta, read_proc};
use serde::Serialize;
use std::collections::HashMap;

const FILE: &str = "/proc/interrupts";

/// One row of `/proc/interrupts`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IrqRow {
    /// The label before the colon: an IRQ number (`24`) or a counter name (`LOC`, `ERR`).
    pub name: String,
    /// One count per CPU column of the header, in header order; empty for the
    /// system-wide single counts (`ERR`, `MIS`).
    pub per_cpu: Vec<u64>,
    /// Sum of `per_cpu`, or the single count of a system-wide row.
    pub total: u64,
    /// The rest of the line with whitespace runs collapsed to one space: chip, hwirq and
    /// trigger type, device names (`PCI-MSIX-0000:00:03.0 1-edge virtio2-input.0`), or the
    /// text of a named counter (`Local timer interrupts`); empty for `ERR`/`MIS`.
    pub description: String,
}

/// The `--irq` rule: the filter equals the row name, or is a (case-sensitive) substring of
/// the description. Names are compared whole so that `24` does not also pick 124 and 240,
/// and an all-digit filter is an IRQ number: it is not looked for in descriptions (where
/// `8` would find `i801_smbus`). An empty filter matches nothing. Note that `eth0-TxRx-1`
/// is a substring of `eth0-TxRx-10`.
fn irq_matches(name: &str, description: &str, filter: &str) -> bool {
    if filter.is_empty() {
        return false;
    }
    name == filter || (parse_u64(filter).is_none() && description.contains(filter))
}

impl IrqRow {
    /// A system-wide counter (`ERR`, `MIS`) rather than per-CPU counts.
    pub fn is_system_wide(&self) -> bool {
        self.per_cpu.is_empty()
    }

    /// Whether `filter` selects this row: equal to the name, or (unless all digits) a
    /// substring of the description; case-sensitive; an empty filter matches nothing.
    pub fn matches(&self, filter: &str) -> bool {
        irq_matches(&self.name, &self.description, filter)
    }

    /// Parses one row given the number of CPU columns; `None` if malformed.
    fn parse(line: &str, ncpus: usize) -> Option<Self> {
        let (name, mut rest) = line.split_once(':')?;
        let name = name.trim();
        if name.is_empty() || name.contains(char::is_whitespace) {
            return None;
        }
        let mut counts = Vec::with_capacity(ncpus);
        while counts.len() < ncpus {
            let trimmed = rest.trim_start();
            let end = trimmed.find(char::is_whitespace).unwrap_or(trimmed.len());
            let Some(n) = parse_u64(&trimmed[..end]) else {
                break;
            };
            counts.push(n);
            rest = &trimmed[end..];
        }
        let description = rest.split_whitespace().collect::<Vec<_>>().join(" ");
        let (per_cpu, total) = if counts.len() == 1 && description.is_empty() {
            (Vec::new(), counts[0])
        } else if counts.len() == ncpus {
            let total = counts.iter().fold(0u64, |acc, n| acc.saturating_add(*n));
            (counts, total)
        } else {
            return None;
        };
        Some(Self {
            name: name.to_string(),
            per_cpu,
            total,
            description,
        })
    }
}

/// One `/proc/interrupts` sample.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct InterruptsSnapshot {
    /// The online CPUs of the header, in column order (may have gaps: `[0, 1, 4, 5]`).
    pub cpus: Vec<u32>,
    /// Rows in file order.
    pub rows: Vec<IrqRow>,
    /// Rows skipped as malformed (no colon, bad number, wrong number of counts) or as a
    /// duplicate name.
    pub skipped: usize,
}

/// One row's change between two samples.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IrqRowDelta {
    pub name: String,
    /// The later sample's description.
    pub description: String,
    /// Interrupts in the interval: the sum of `per_cpu`, or for `ERR`/`MIS` the change of
    /// the single count.
    pub delta: u64,
    /// `(cpu, delta)` for CPUs present in both samples (all the later sample's CPUs for a
    /// row that is new); empty for system-wide rows.
    pub per_cpu: Vec<(u32, u64)>,
}

impl IrqRowDelta {
    /// Same rule as [`IrqRow::matches`].
    pub fn matches(&self, filter: &str) -> bool {
        irq_matches(&self.name, &self.description, filter)
    }
}

/// The change of every row present in the later sample, in its order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct InterruptsDelta {
    pub rows: Vec<IrqRowDelta>,
}

impl InterruptsDelta {
    /// All interrupts of the interval, every row included (`LOC` timer ticks, IPIs, ...).
    pub fn total(&self) -> u64 {
        self.rows
            .iter()
            .fold(0, |acc, r| acc.saturating_add(r.delta))
    }

    /// Interrupts of the rows matching `filter` (see [`IrqRow::matches`]).
    pub fn filtered_total(&self, filter: &str) -> u64 {
        self.matching_rows(filter)
            .fold(0, |acc, r| acc.saturating_add(r.delta))
    }

    /// The rows matching `filter`.
    pub fn matching_rows<'a>(&'a self, filter: &'a str) -> impl Iterator<Item = &'a IrqRowDelta> {
        self.rows.iter().filter(move |r| r.matches(filter))
    }

    /// One row by name.
    #[cfg(test)]
    pub fn get(&self, name: &str) -> Option<&IrqRowDelta> {
        self.rows.iter().find(|r| r.name == name)
    }
}

impl InterruptsSnapshot {
    /// Parses `/proc/interrupts` text. Errors on an empty file or a missing CPU header;
    /// malformed rows are skipped and counted. A row with exactly one count and no
    /// description is a system-wide counter (`ERR`, `MIS`); any other row must have one
    /// count per CPU column.
    pub fn parse(text: &str) -> Result<Self, ParseError> {
        let (header, cpus) = find_cpu_header(text, FILE)?;
        let mut rows: Vec<IrqRow> = Vec::new();
        let mut skipped = 0;
        for line in text.lines().skip(header + 1) {
            if line.trim().is_empty() {
                continue;
            }
            match IrqRow::parse(line, cpus.len()) {
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

    /// Reads and parses `/proc/interrupts`.
    pub fn read() -> Result<Self, super::SampleError> {
        Ok(Self::parse(&read_proc(FILE)?)?)
    }

    /// Sum of every row's total.
    #[cfg(test)]
    pub fn total(&self) -> u64 {
        self.rows
            .iter()
            .fold(0, |acc, r| acc.saturating_add(r.total))
    }

    /// One row by name (`"24"`, `"LOC"`).
    #[cfg(test)]
    pub fn get(&self, name: &str) -> Option<&IrqRow> {
        self.rows.iter().find(|r| r.name == name)
    }

    /// The rows `filter` selects (see [`IrqRow::matches`]).
    pub fn matching_rows<'a>(&'a self, filter: &'a str) -> impl Iterator<Item = &'a IrqRow> {
        self.rows.iter().filter(move |r| r.matches(filter))
    }

    /// Whether `filter` selects any row: check an `--irq NAME` before the run.
    pub fn matches(&self, filter: &str) -> bool {
        self.matching_rows(filter).next().is_some()
    }

    /// From `self` (earlier) to `later`, row by row by name. Rows only in `later` count
    /// from 0; rows only in `self` are ignored; per-CPU counts are compared for CPUs in
    /// both headers only.
    pub fn delta(&self, later: &InterruptsSnapshot) -> InterruptsDelta {
        let pairs = common_cpus(&self.cpus, &later.cpus);
        let mut earlier: HashMap<&str, &IrqRow> = HashMap::with_capacity(self.rows.len());
        for r in &self.rows {
            earlier.entry(r.name.as_str()).or_insert(r);
        }
        let rows = later
            .rows
            .iter()
            .map(|l| {
                let (delta, per_cpu) = match earlier.get(l.name.as_str()) {
                    Some(e) if !e.is_system_wide() && !l.is_system_wide() => {
                        let per_cpu = per_cpu_delta(&pairs, &e.per_cpu, &l.per_cpu);
                        let sum = per_cpu
                            .iter()
                            .fold(0u64, |acc, (_, d)| acc.saturating_add(*d));
                        (sum, per_cpu)
                    }
                    Some(e) => (l.total.saturating_sub(e.total), Vec::new()),
                    None => (
                        l.total,
                        later
                            .cpus
                            .iter()
                            .copied()
                            .zip(l.per_cpu.iter().copied())
                            .collect(),
                    ),
                };
                IrqRowDelta {
                    name: l.name.clone(),
                    description: l.description.clone(),
                    delta,
                    per_cpu,
                }
            })
            .collect();
        InterruptsDelta { rows }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VM_A: &str = include_str!("testdata/vm_interrupts_a.txt");
    const VM_B: &str = include_str!("testdata/vm_interrupts_b.txt");
    const BIG_A: &str = include_str!("testdata/big_interrupts_a.txt");
    const BIG_B: &str = include_str!("testdata/big_interrupts_b.txt");

    #[test]
    fn vm_sample_exact() {
        let s = InterruptsSnapshot::parse(VM_A).unwrap();
        assert_eq!(s.skipped, 0);
        assert_eq!(s.cpus, vec![0, 1]);
        assert_eq!(s.rows.len(), 35);
        assert_eq!(
            s.rows[0],
            IrqRow {
                name: "24".into(),
                per_cpu: vec![1, 0],
                total: 1,
                description: "IO-APIC 5-edge ACPI:Ged".into(),
            }
        );
        let r = s.get("39").unwrap();
        assert_eq!(r.per_cpu, vec![920, 0]);
        assert_eq!(
            r.description,
            "PCI-MSIX-0000:00:03.0 2-edge virtio2-output.0"
        );
        let loc = s.get("LOC").unwrap();
        assert_eq!(
            (loc.per_cpu.as_slice(), loc.total),
            (&[12371, 12663][..], 25034)
        );
        assert_eq!(loc.description, "Local timer interrupts");
        let err = s.get("ERR").unwrap();
        assert!(err.is_system_wide());
        assert_eq!((err.total, err.description.as_str()), (0, ""));
        assert!(s.get("MIS").unwrap().is_system_wide());
        assert_eq!(s.rows.last().unwrap().name, "PIW");
        assert_eq!(s.total(), 99_556);
    }

    #[test]
    fn vm_delta_exact() {
        let a = InterruptsSnapshot::parse(VM_A).unwrap();
        let b = InterruptsSnapshot::parse(VM_B).unwrap();
        let d = a.delta(&b);
        assert_eq!(d.rows.len(), 35);
        let nonzero: Vec<(&str, u64)> = d
            .rows
            .iter()
            .filter(|r| r.delta != 0)
            .map(|r| (r.name.as_str(), r.delta))
            .collect();
        assert_eq!(
            nonzero,
            vec![
                ("36", 42),
                ("42", 1),
                ("LOC", 354),
                ("RES", 36),
                ("CAL", 124),
                ("TLB", 23)
            ]
        );
        assert_eq!(d.total(), 580);
        assert_eq!(d.total(), b.total() - a.total());
        assert_eq!(d.get("LOC").unwrap().per_cpu, vec![(0, 66), (1, 288)]);
        assert_eq!(d.filtered_total("virtio1-req"), 42);
        assert_eq!(d.filtered_total("virtio3"), 1);
        assert_eq!(d.filtered_total("virtio2-output.0"), 0);
        assert!(a.matches("virtio2-output.0"));
        assert!(a.matches("virtio2-input"));
        assert!(!a.matches("eth0"));
    }

    #[test]
    fn big_machine_exact() {
        let a = InterruptsSnapshot::parse(BIG_A).unwrap();
        assert_eq!(a.skipped, 0);
        assert_eq!(a.cpus, vec![0, 1, 4, 5, 6, 7]);
        assert_eq!(a.rows.len(), 29);
        let q3 = a.get("124").unwrap();
        assert_eq!(q3.per_cpu, vec![0, 0, 0, 4_000_000, 0, 0]);
        assert_eq!(q3.total, 4_000_000);
        assert_eq!(
            q3.description,
            "IR-PCI-MSIX-0000:03:00.0 3-edge eth0-TxRx-3"
        );
        assert_eq!(
            a.get("16").unwrap().description,
            "IO-APIC 16-fasteoi ehci_hcd:usb1, i801_smbus"
        );
        let err = a.get("ERR").unwrap();
        assert_eq!((err.per_cpu.len(), err.total), (0, 3));
        assert_eq!(a.get("MIS").unwrap().total, 0);
        assert_eq!(
            a.matching_rows("eth0-TxRx")
                .map(|r| r.name.as_str())
                .collect::<Vec<_>>(),
            vec!["121", "122", "123", "124"]
        );
        assert_eq!(
            a.matching_rows("eth0")
                .map(|r| r.name.as_str())
                .collect::<Vec<_>>(),
            vec!["120", "121", "122", "123", "124"]
        );
        // Names match whole, descriptions by substring, case-sensitively.
        assert!(a.matches("LOC"));
        assert!(!a.matches("LO"));
        assert!(!a.matches("loc"));
        assert!(a.matches("Local timer"));
        // All-digit filters are IRQ numbers: `8` is IRQ 8, not `i801_smbus` of IRQ 16.
        assert_eq!(
            a.matching_rows("8")
                .map(|r| r.name.as_str())
                .collect::<Vec<_>>(),
            vec!["8"]
        );
        assert_eq!(a.matching_rows("12").count(), 0);
        assert_eq!(a.matching_rows("i801").count(), 1);
        assert_eq!(a.matching_rows("8-edge").count(), 1);
        assert!(!a.matches("eth1"));
        assert!(!a.matches(""));
    }

    #[test]
    fn big_machine_delta() {
        let a = InterruptsSnapshot::parse(BIG_A).unwrap();
        let b = InterruptsSnapshot::parse(BIG_B).unwrap();
        assert_eq!(b.cpus, vec![0, 1, 2, 4, 6, 7]);
        let d = a.delta(&b);
        // rtc0 (IRQ 8) vanished: ignored. IRQ 125 is new: counts from 0.
        assert!(d.get("8").is_none());
        assert_eq!(d.rows.len(), 29);
        let new = d.get("125").unwrap();
        assert_eq!(new.delta, 777);
        assert_eq!(
            new.per_cpu,
            vec![(0, 0), (1, 0), (2, 0), (4, 0), (6, 777), (7, 0)]
        );
        // eth0-TxRx-3 moved from CPU5 (offlined) to CPU7: only common CPUs count.
        let q3 = d.get("124").unwrap();
        assert_eq!(q3.delta, 25_000);
        assert_eq!(
            q3.per_cpu,
            vec![(0, 0), (1, 0), (4, 0), (6, 0), (7, 25_000)]
        );
        assert_eq!(d.filtered_total("eth0-TxRx-3"), 25_000);
        assert_eq!(d.filtered_total("eth0-TxRx"), 195_000);
        assert_eq!(d.filtered_total("eth0"), 195_000);
        assert_eq!(d.filtered_total("eth1-TxRx-0"), 777);
        assert_eq!(d.filtered_total("123"), 100_000);
        // LOC: +1000 on each of the 5 common CPUs; CPU2's 500 are not counted.
        assert_eq!(d.get("LOC").unwrap().delta, 5_000);
        assert_eq!(d.get("NMI").unwrap().delta, 0);
        assert_eq!(d.get("ERR").unwrap().delta, 2);
        assert!(d.get("ERR").unwrap().per_cpu.is_empty());
        assert_eq!(d.get("MIS").unwrap().delta, 0);
        assert_eq!(d.get("16").unwrap().delta, 2);
        assert_eq!(
            d.total(),
            2 + 40_000 + 30_000 + 100_000 + 25_000 + 777 + 1 + 5_000 + 50 + 100 + 5 + 5 + 2
        );
    }

    #[test]
    fn counters_going_backwards_saturate() {
        let a = "  CPU0 CPU1\n 5: 10 20 x\nERR: 7\n";
        let b = "  CPU0 CPU1\n 5: 12 15 x\nERR: 6\n";
        let d = InterruptsSnapshot::parse(a)
            .unwrap()
            .delta(&InterruptsSnapshot::parse(b).unwrap());
        assert_eq!(d.get("5").unwrap().per_cpu, vec![(0, 2), (1, 0)]);
        assert_eq!(d.get("ERR").unwrap().delta, 0);
        assert_eq!(d.total(), 2);
    }

    #[test]
    fn single_cpu_machine() {
        let s = InterruptsSnapshot::parse(
            "           CPU0\n  0:         37   IO-APIC   2-edge      timer\nLOC:     123   Local timer interrupts\nERR:          0\n",
        )
        .unwrap();
        assert_eq!(s.cpus, vec![0]);
        assert_eq!(s.get("0").unwrap().per_cpu, vec![37]);
        assert_eq!(s.get("LOC").unwrap().total, 123);
        // With one CPU, a lone count without description is read as system-wide.
        assert!(s.get("ERR").unwrap().is_system_wide());
        assert_eq!(s.total(), 160);
    }

    #[test]
    fn malformed() {
        for bad in [
            "",
            "\n  \n",
            "garbage",
            "CPU0 CPUx\n 1: 2\n",
            "CPU-1\n",
            "CPU\n",
            " 24: 1 2 x\n",
        ] {
            assert!(InterruptsSnapshot::parse(bad).is_err(), "{bad:?}");
        }
        let e = InterruptsSnapshot::parse("\n\nhello world\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "/proc/interrupts: line 3: expected a `CPU0 CPU1 ...` header line"
        );
        assert_eq!(
            InterruptsSnapshot::parse("").unwrap_err().to_string(),
            "/proc/interrupts: empty file"
        );
        let s = InterruptsSnapshot::parse(
            "   CPU0  CPU1  CPU2  CPU3\n\
             24:  1  2  3  4  PCI-MSI eth0-TxRx-0\n\
             25:  1  2  PCI-MSI eth0-TxRx-1\n\
             26:  1  2  3\n\
             27:  1  2  x  4  PCI-MSI eth0-TxRx-3\n\
             28  1  2  3  4  no colon\n\
             :  1  2  3  4  no name\n\
             a b:  1  2  3  4  space in name\n\
             29:  1  2  3  99999999999999999999  overflow\n\
             24:  5  5  5  5  duplicate\n\
             LOC:\n\
             ERR:  x\n\
             MIS:  1  2\n\
             NMI:  0  0  0  0  Non-maskable interrupts\n\
             \n\
             30:  4  3  2  1  5  6  more counts than CPUs\n",
        )
        .unwrap();
        assert_eq!(s.skipped, 11);
        assert_eq!(
            s.rows.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(),
            vec!["24", "NMI", "30"]
        );
        assert_eq!(s.get("24").unwrap().total, 10);
        // Extra numbers after the CPU columns are part of the description.
        assert_eq!(s.get("30").unwrap().per_cpu, vec![4, 3, 2, 1]);
        assert_eq!(
            s.get("30").unwrap().description,
            "5 6 more counts than CPUs"
        );
    }
}
