//! System samplers: pure parsers of Linux `/proc` files and a thin reader around them.
//!
//! A run takes a [`SystemSnapshot`] before and after sending and reports the
//! [`SystemDelta`] between them: where the CPU time went (top's `Cpu(s)` line), how many
//! hardware interrupts and softirqs the run caused. Interface counters come from
//! [`NetDevSnapshot`], read separately because they belong to a network namespace.
//!
//! # The files and what their counters mean
//!
//! - **`/proc/stat`** ([`StatSnapshot`]): the `cpu` line is the sum over all *possible*
//!   CPUs, the `cpuN` lines are the *online* CPUs (so numbering may have gaps, and a CPU
//!   that goes offline disappears). Each field is time in jiffies (`USER_HZ`, normally
//!   1/100 s) spent in: `user`, `nice` (user at positive nice), `system` (kernel, outside
//!   interrupts), `idle`, `iowait` (idle with I/O outstanding: a hint, not a
//!   measurement), `irq` (hard interrupt handlers), `softirq` (softirq processing,
//!   including the network stack's NET_RX/NET_TX when run from interrupt exit),
//!   `steal` (time a hypervisor ran another guest), `guest` and `guest_nice` (running a
//!   KVM guest; already *included* in `user` and `nice`). Older kernels print fewer
//!   fields (7 on 2.6.0-2.6.10, 4 on 2.4): missing trailing fields read as 0. Caveats:
//!   `idle` and `iowait` of a CPU can step backwards on some kernels (NO_HZ
//!   accounting), so deltas saturate at 0; `irq`/`softirq` are only accounted precisely
//!   with `CONFIG_IRQ_TIME_ACCOUNTING`, otherwise they are sampled at timer ticks; network
//!   softirq work done in `ksoftirqd` threads is accounted as `softirq` too, but work done
//!   in a busy-polling or threaded-NAPI thread is `system`.
//! - **`/proc/interrupts`** ([`InterruptsSnapshot`]): one column per *online* CPU (the
//!   header names them; gaps are possible), one row per interrupt source. Numeric rows
//!   are device interrupt lines: per-CPU counts, then the chip (`IO-APIC`,
//!   `PCI-MSIX-0000:00:03.0`), hardware IRQ number and trigger type, then the device
//!   names (`eth0-TxRx-3`, `virtio2-input.0`). On a VM the NIC's interrupts are
//!   `virtioN-input.Q`/`virtioN-output.Q` (virtio-net; with a shared vector there is a
//!   single `virtioN-virtqueues`), on bare metal they are driver-named (`eth0-TxRx-Q`
//!   for ixgbe/i40e, `mlx5_compN@pci:...` for mlx5). Named rows are architecture
//!   counters; on x86: `NMI` non-maskable, `LOC` *local APIC timer interrupts* (the
//!   scheduler tick: present on every busy CPU whatever the run does, and included in
//!   the all-rows total), `SPU` spurious, `PMI` perf monitoring, `IWI` IRQ work, `RTR`
//!   APIC ICR read retries, `RES` rescheduling IPIs, `CAL` function call IPIs, `TLB`
//!   TLB shootdowns, `TRM` thermal, `THR` threshold APIC, `DFR` deferred error APIC,
//!   `MCE` machine check exceptions, `MCP` machine check polls, `HYP`/`HRE`/`HVS`
//!   hypervisor callbacks, `PIN`/`NPI`/`PIW` posted-interrupt events, `PLE` ... ;
//!   `ERR` and `MIS` are a single system-wide count each (erroneous and mis-routed
//!   interrupts). Recent x86 kernels hide some named rows while they are zero, so a row
//!   may appear between two samples: it then counts from 0.
//! - **`/proc/softirqs`** ([`SoftirqsSnapshot`]): one column per *possible* CPU, one row
//!   per softirq vector: `HI` and `TASKLET` (tasklets), `TIMER`, `NET_TX` (transmit
//!   completion / qdisc run), `NET_RX` (NAPI receive polling, which on most drivers also
//!   reclaims transmit completions), `BLOCK`, `IRQ_POLL`, `SCHED` (load balancing),
//!   `HRTIMER`, `RCU`. Counts are *raisings* handled, not packets.
//! - **`/proc/net/dev`** ([`NetDevSnapshot`]): per-interface packet, byte, error and drop
//!   counters of the reading *thread's* network namespace (as `/proc/thread-self/net/dev`
//!   shows it). Counters are the driver's `ndo_get_stats64`: drivers differ in whether
//!   bytes include the FCS and whether `tx_dropped` counts qdisc drops.
//!
//! # Malformed input
//!
//! The parsers take `&str` and never panic. A file that is structurally unusable (empty,
//! no CPU header line, no aggregate `cpu` line, no `/proc/net/dev` header) is a
//! [`ParseError`] naming the file and line. A single row that cannot be parsed (no
//! colon, a non-numeric count, fewer counts than CPU columns, ...) is *skipped* and
//! counted in the snapshot's `skipped` field, so that one odd architecture-specific row
//! does not abort a run; callers may warn when `skipped != 0`. Numbers are plain ASCII
//! decimal (no sign); counts that overflow `u64` make a row malformed.
//!
//! # Deltas
//!
//! All deltas are `later - earlier`, per counter, saturating at 0. Per-CPU figures are
//! only compared for CPUs present in both samples (a CPU that went offline or came online
//! in between is left out rather than counted from 0, because its counters survive
//! offlining). Rows (interrupt sources, softirq vectors, interfaces) are matched by name;
//! a row that only appears in the later sample counts from 0, a row that vanished is
//! ignored.
//!
//! # Selecting interrupts (`--irq NAME`)
//!
//! A filter selects the `/proc/interrupts` rows whose name equals it (`LOC`, `24`) or whose
//! description contains it, case-sensitively (`virtio2-output`, `eth0-TxRx-3`, or
//! `eth0-TxRx` for all queues). An all-digit filter is an IRQ number and only matches the
//! name, so `24` selects IRQ 24, not 124 nor a device called `i2400`. Substrings stay
//! substrings: `eth0-TxRx-1` also selects `eth0-TxRx-10`..`19`. Check a filter before the
//! run with [`InterruptsSnapshot::matches`]; after it, [`SystemDelta::irq_filter_matched`]
//! says whether it selected anything.

pub mod cpu;
pub mod dut;
mod interrupts;
mod net_dev;
mod snmp;
mod softirqs;
mod stat;

pub use interrupts::InterruptsSnapshot;
pub use net_dev::{IfaceCounters, NetDevSnapshot};
pub use snmp::SnmpSnapshot;
pub use softirqs::SoftirqsSnapshot;
pub use stat::{CpuTimes, StatSnapshot};

pub use cpu::CpuShares;
use serde::Serialize;
use std::collections::HashMap;
use std::fmt;

/// A `/proc` file that could not be used at all (see the module docs for what is skipped
/// instead).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// The file, e.g. `/proc/stat`.
    pub file: &'static str,
    /// 1-based line number, when the problem is on one line.
    pub line: Option<usize>,
    /// What is wrong.
    pub reason: String,
}

impl ParseError {
    fn new(file: &'static str, line: Option<usize>, reason: impl Into<String>) -> Self {
        Self {
            file,
            line,
            reason: reason.into(),
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}: line {}: {}", self.file, line, self.reason),
            None => write!(f, "{}: {}", self.file, self.reason),
        }
    }
}

impl std::error::Error for ParseError {}

/// Why a sample could not be taken: a `/proc` file that cannot be read or used, or an
/// interface that is not there.
#[derive(Debug, thiserror::Error)]
pub enum SampleError {
    #[error("reading {path}: {err}")]
    Read { path: String, err: std::io::Error },
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// `have`: the interfaces there are, comma-separated.
    #[error("no interface {iface} in /proc/net/dev of this network namespace (have: {have})")]
    NoIface { iface: String, have: String },
}

/// Parses an unsigned decimal made of ASCII digits only (no sign, no spaces).
fn parse_u64(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Parses the `CPU0 CPU1 CPU4 ...` header of `/proc/interrupts` and `/proc/softirqs`.
/// `None` unless every token is `CPU<n>` and there is at least one.
fn parse_cpu_header(line: &str) -> Option<Vec<u32>> {
    let cpus: Vec<u32> = line
        .split_whitespace()
        .map(|t| {
            let n = parse_u64(t.strip_prefix("CPU")?)?;
            u32::try_from(n).ok()
        })
        .collect::<Option<_>>()?;
    (!cpus.is_empty()).then_some(cpus)
}

/// Parses the first non-empty line as the CPU header; returns its 0-based index and CPUs.
fn find_cpu_header(text: &str, file: &'static str) -> Result<(usize, Vec<u32>), ParseError> {
    let Some((idx, line)) = text.lines().enumerate().find(|(_, l)| !l.trim().is_empty()) else {
        return Err(ParseError::new(file, None, "empty file"));
    };
    let cpus = parse_cpu_header(line).ok_or_else(|| {
        ParseError::new(
            file,
            Some(idx + 1),
            "expected a `CPU0 CPU1 ...` header line",
        )
    })?;
    Ok((idx, cpus))
}

/// The CPUs present in two samples' column lists: `(cpu, earlier column, later column)`,
/// in the later sample's order.
fn common_cpus(earlier: &[u32], later: &[u32]) -> Vec<(u32, usize, usize)> {
    let earlier_col: HashMap<u32, usize> =
        earlier.iter().enumerate().map(|(i, &c)| (c, i)).collect();
    later
        .iter()
        .enumerate()
        .filter_map(|(l, cpu)| Some((*cpu, *earlier_col.get(cpu)?, l)))
        .collect()
}

/// Per-CPU saturating deltas of one row for the CPUs in `pairs` (from [`common_cpus`]).
fn per_cpu_delta(pairs: &[(u32, usize, usize)], earlier: &[u64], later: &[u64]) -> Vec<(u32, u64)> {
    pairs
        .iter()
        .filter_map(|&(cpu, e, l)| Some((cpu, later.get(l)?.saturating_sub(*earlier.get(e)?))))
        .collect()
}

/// Reads a whole `/proc` file, naming it in the error.
fn read_proc(path: &str) -> Result<String, SampleError> {
    std::fs::read_to_string(path).map_err(|err| SampleError::Read {
        path: path.to_string(),
        err,
    })
}

/// top's label for a `/proc/stat` CPU name: `cpu` -> `Cpu(s)`, `cpu0` -> `Cpu0  `,
/// `cpu12` -> `Cpu12 `: padded to the width of `Cpu(s)` (procps 3.2's `Cpu%-3d`) so that
/// [`CpuShares::top_line`] lines align. CPU numbers above 999 make a longer label.
/// A name not starting with `cpu` is padded as is.
pub fn top_label(cpu_name: &str) -> String {
    match cpu_name.strip_prefix("cpu") {
        Some("") => "Cpu(s)".to_string(),
        Some(n) => format!("Cpu{n:<3}"),
        None => format!("{cpu_name:<6}"),
    }
}

/// The three system-wide files, sampled together.
#[derive(Debug, Clone, PartialEq)]
pub struct SystemSnapshot {
    /// `/proc/stat` cpu lines.
    pub stat: StatSnapshot,
    /// `/proc/interrupts`.
    pub interrupts: InterruptsSnapshot,
    /// `/proc/softirqs`.
    pub softirqs: SoftirqsSnapshot,
}

/// What happened between two [`SystemSnapshot`]s, ready for the report and JSON.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SystemDelta {
    /// top's `Cpu(s)` shares of the aggregate `cpu` line.
    pub cpu_all: CpuShares,
    /// Shares per online CPU (present in both samples), named `cpu0`, `cpu1`, ...
    pub cpu_per_cpu: Vec<(String, CpuShares)>,
    /// Raw jiffies of the aggregate line.
    pub jiffies_all: CpuTimes,
    /// Raw jiffies per CPU, same names and order as `cpu_per_cpu`.
    pub jiffies_per_cpu: Vec<(String, CpuTimes)>,
    /// Interrupts of the rows matching `irq_filter`, or of all rows without a filter.
    pub interrupts: u64,
    /// Interrupts of all rows, including `LOC` (timer ticks) and IPIs.
    pub interrupts_all: u64,
    /// The `--irq` filter, if one was given.
    pub irq_filter: Option<String>,
    /// Names of the rows the filter matched in either sample (empty without a filter).
    pub irq_filter_rows: Vec<String>,
    /// False only when a filter was given and matched no row in either sample: the
    /// caller should tell the user (`interrupts` is then 0 and meaningless).
    pub irq_filter_matched: bool,
    /// `(name, description, delta)` of every row with a nonzero delta, in file order.
    pub irq_rows: Vec<(String, String, u64)>,
    /// `NET_TX` softirqs, all CPUs.
    pub softirq_net_tx: u64,
    /// `NET_RX` softirqs, all CPUs.
    pub softirq_net_rx: u64,
    /// Every softirq vector's delta, all CPUs, in file order.
    pub softirqs: Vec<(String, u64)>,
}

impl SystemSnapshot {
    /// Reads and parses `/proc/stat`, `/proc/interrupts` and `/proc/softirqs`.
    pub fn take() -> Result<Self, SampleError> {
        Ok(Self {
            stat: StatSnapshot::read()?,
            interrupts: InterruptsSnapshot::read()?,
            softirqs: SoftirqsSnapshot::read()?,
        })
    }

    /// Parses the three files' contents (for tests and replays).
    #[cfg(test)]
    pub fn parse(stat: &str, interrupts: &str, softirqs: &str) -> Result<Self, ParseError> {
        Ok(Self {
            stat: StatSnapshot::parse(stat)?,
            interrupts: InterruptsSnapshot::parse(interrupts)?,
            softirqs: SoftirqsSnapshot::parse(softirqs)?,
        })
    }

    /// Rows skipped as malformed, over the three files.
    #[cfg(test)]
    pub fn skipped(&self) -> usize {
        self.stat.skipped + self.interrupts.skipped + self.softirqs.skipped
    }

    /// From `self` (earlier) to `later`. `irq_filter` selects interrupt rows as
    /// [`IrqRow::matches`] does.
    pub fn delta(&self, later: &SystemSnapshot, irq_filter: Option<&str>) -> SystemDelta {
        let stat = self.stat.delta(&later.stat);
        let irq = self.interrupts.delta(&later.interrupts);
        let soft = self.softirqs.delta(&later.softirqs);

        let interrupts_all = irq.total();
        let (interrupts, irq_filter_rows) = match irq_filter {
            Some(f) => {
                let mut names: Vec<String> = later
                    .interrupts
                    .matching_rows(f)
                    .map(|r| r.name.clone())
                    .collect();
                for r in self.interrupts.matching_rows(f) {
                    if !names.contains(&r.name) {
                        names.push(r.name.clone());
                    }
                }
                (irq.filtered_total(f), names)
            }
            None => (interrupts_all, Vec::new()),
        };
        let soft_total = |name: &str| soft.get(name).map_or(0, |r| r.total);

        SystemDelta {
            cpu_all: stat.all.shares(),
            cpu_per_cpu: stat
                .per_cpu
                .iter()
                .map(|(cpu, t)| (format!("cpu{cpu}"), t.shares()))
                .collect(),
            jiffies_all: stat.all,
            jiffies_per_cpu: stat
                .per_cpu
                .iter()
                .map(|(cpu, t)| (format!("cpu{cpu}"), *t))
                .collect(),
            interrupts,
            interrupts_all,
            irq_filter: irq_filter.map(str::to_string),
            irq_filter_matched: irq_filter.is_none() || !irq_filter_rows.is_empty(),
            irq_filter_rows,
            irq_rows: irq
                .rows
                .iter()
                .filter(|r| r.delta != 0)
                .map(|r| (r.name.clone(), r.description.clone(), r.delta))
                .collect(),
            softirq_net_tx: soft_total("NET_TX"),
            softirq_net_rx: soft_total("NET_RX"),
            softirqs: soft
                .rows
                .iter()
                .map(|r| (r.name.clone(), r.total))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests;
