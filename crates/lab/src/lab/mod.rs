//! The private lab: two network namespaces joined by a veth pair.
//!
//! ```text
//!   netns upktgen-<pid>-<start>-<n>-tx          netns upktgen-<pid>-<start>-<n>-rx
//!   veth-tx 02:00:00:99:00:01 10.99.0.1/24 <--> veth-rx 02:00:00:99:00:02 10.99.0.2/24
//! ```
//! Names carry the creating process's pid and start time, so labs of concurrent runs never
//! collide, and a later run can tell a lab whose owner is gone (killed with SIGKILL, say)
//! and remove it ([`sweep_stale`]). The veth pair is created directly inside the two
//! namespaces: nothing ever exists in, or is routed to, the caller's namespace. IPv6 is
//! disabled in both namespaces and the neighbours are static, so the only traffic on the
//! pair is upktgen's. Dropping a [`Lab`] removes both namespaces (which destroys the veth
//! pair and detaches any XDP program on it).
//!
//! `receiver` runs the receive side's [`crate::rx::Receiver`] on veth-rx for
//! `upktgen run --rx-analyze`; `xdp` attaches the lab's own receivers (the counting drop
//! sink, XDP_PASS), whose programs are in [`crate::bpf::prog`].

pub mod delay;
pub mod dut;
pub mod receiver;
mod xdp;

use crate::sys::{self, netns};
use crate::wire::MacAddr;
use std::net::Ipv4Addr;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use xdp::{RxVerdict, XdpCounter, attach_rx_program};

/// Prefix of every namespace upktgen creates.
pub const NS_PREFIX: &str = "upktgen-";

/// The most TX (and RX) queues a veth may have (the kernel refuses more), so the most
/// senders a lab can give a queue each.
pub const MAX_QUEUES: usize = 4096;

/// The MTU of the lab's veth pair (the kernel's default for a veth, which the lab keeps).
pub const MTU: u32 = 1500;

/// Why the lab could not be built, sampled or removed: each names the step, the namespace
/// or interface, and the command or call that failed.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    #[error(
        "{0} senders: the lab gives each sender its own queue of the veth pair, and a veth has at most {MAX_QUEUES}"
    )]
    TooManyQueues(usize),
    #[error(
        "the `ip` command (iproute2) is needed to build the lab and was not found: install iproute2"
    )]
    NoIp,
    /// `cmd`: the arguments, space-separated.
    #[error("running `ip {cmd}`: {err}")]
    IpRun { cmd: String, err: std::io::Error },
    #[error("`ip {cmd}` failed: {stderr}")]
    IpFailed { cmd: String, stderr: String },
    #[error("reading /proc/self/stat: no start time (field 22) in it")]
    SelfStat,
    #[error("disabling IPv6 in {}: {err}", .ns.display())]
    DisableIpv6 { ns: PathBuf, err: std::io::Error },
    #[error("waiting for {ifname}: {err}")]
    WaitRunning {
        ifname: &'static str,
        err: std::io::Error,
    },
    #[error("creating the drop receiver's per-CPU counter map: {0}")]
    Counter(std::io::Error),
    #[error(
        "attaching the lab's XDP {verdict:?} program to {ifname} (needs a kernel with BPF links, 5.9+): {err}"
    )]
    Attach {
        verdict: RxVerdict,
        ifname: &'static str,
        err: std::io::Error,
    },
    #[error("mapping veth-tx's TX queues to CPUs (XPS): {0}")]
    Xps(Box<LabError>),
    #[error("setting sysctls in {ns}: {err}")]
    Sysctl { ns: String, err: Box<LabError> },
    #[error("creating the lab: {0}")]
    Create(Box<LabError>),
    #[error("creating the DUT lab: {0}")]
    CreateDut(Box<LabError>),
    /// Every namespace that could not be removed, with why.
    #[error("removing the lab: {}", join(.0))]
    Remove(Vec<LabError>),
    #[error("no DUT namespace")]
    NoDutNs,
    #[error("reading the DUT's counters in {ns}: {err}")]
    DutCounters { ns: String, err: std::io::Error },
    #[error("running tc in the DUT: {0}")]
    Tc(std::io::Error),
    #[error("tc -s qdisc show dev {dev} in the DUT: {0}", dev = dut::DUT_OUT_IF)]
    TcFailed(String),
    #[error(transparent)]
    Sample(#[from] crate::sample::SampleError),
    #[error(transparent)]
    Qdisc(#[from] crate::sample::dut::QdiscError),
    /// `opt` (--dut-setup or --dut-setup-file) and its value, quoted in the message.
    #[error("{opt} {what:?}: cannot run sh: {err}")]
    SetupSpawn {
        opt: &'static str,
        what: String,
        err: std::io::Error,
    },
    /// `how`: the exit status or "killed by a signal"; `last`: its last line of output.
    #[error("{opt} {what:?} failed in the DUT namespace ({how}): {last}")]
    SetupFailed {
        opt: &'static str,
        what: String,
        how: String,
        last: String,
    },
    /// Stopped by SIGINT/SIGTERM/SIGHUP while it ran (its process group was killed).
    #[error(
        "{opt} {what:?} interrupted: stopped on a signal to upktgen, with every process it started"
    )]
    SetupInterrupted { opt: &'static str, what: String },
    /// Ran past `--dut-setup-timeout` (its process group was killed).
    #[error(
        "{opt} {what:?} did not end within {secs} s (--dut-setup-timeout): killed, with every process it started"
    )]
    SetupTimedOut {
        opt: &'static str,
        what: String,
        secs: f64,
    },
    #[error("starting the DUT's delay line (--dut-delay) in its namespace: {0}")]
    DelayLine(std::io::Error),
    #[error("the DUT's delay line (--dut-delay) stopped: {0}")]
    DelayLineFailed(String),
    #[error("setting up the receiver on veth-rx: {0}")]
    Receiver(crate::rx::background::RxThreadError),
}

impl LabError {
    /// The lab was not made because upktgen was asked to stop while a `--dut-setup` ran
    /// (an interruption, not a failure).
    pub fn is_interrupted(&self) -> bool {
        match self {
            LabError::SetupInterrupted { .. } => true,
            LabError::Create(e) | LabError::CreateDut(e) => e.is_interrupted(),
            _ => false,
        }
    }
}

/// `errs` in one line, `; ` between them.
fn join(errs: &[LabError]) -> String {
    errs.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

type Result<T, E = LabError> = std::result::Result<T, E>;

/// Refuses a lab of more queues than a veth can have, before anything is created.
pub fn check_queues(senders: usize) -> Result<()> {
    if senders > MAX_QUEUES {
        return Err(LabError::TooManyQueues(senders));
    }
    Ok(())
}
const NETNS_DIR: &str = "/run/netns";
pub const TX_IF: &str = "veth-tx";
pub const RX_IF: &str = "veth-rx";
pub const TX_MAC: MacAddr = MacAddr([0x02, 0, 0, 0x99, 0, 0x01]);
pub const RX_MAC: MacAddr = MacAddr([0x02, 0, 0, 0x99, 0, 0x02]);
pub const TX_IP: Ipv4Addr = Ipv4Addr::new(10, 99, 0, 1);
pub const RX_IP: Ipv4Addr = Ipv4Addr::new(10, 99, 0, 2);

crate::choice! {
    /// What receives the frames at the far end of the pair.
    #[derive(
        Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize,
    )]
    #[serde(rename_all = "snake_case")]
    pub enum RxMode {
        /// An XDP program on veth-rx drops every frame (rx_packets still counts it): the
        /// cheapest receiver, so the figures measure the sender.
        Drop = "drop",
        /// No program: frames climb the receiving namespace's IP/UDP stack.
        Stack = "stack",
    }
}

static LAB_SEQ: AtomicU32 = AtomicU32::new(0);

/// A live lab; removed on drop.
#[derive(Debug)]
pub struct Lab {
    pub tx_ns: String,
    pub rx_ns: String,
    pub rx_mode: RxMode,
    /// With the stack receiver: an XDP_PASS program on veth-rx gives it NAPI, which frames
    /// redirected by XDP into veth-tx need (without it veth drops them silently).
    pub rx_napi: bool,
    /// Keeps the receive-side XDP program attached (a BPF link detaches on close).
    _xdp_link: Option<OwnedFd>,
    /// With the drop receiver: the per-CPU counter its program bumps for every frame.
    rx_counter: Option<XdpCounter>,
    removed: bool,
    /// TX/RX queues on each end of the veth pair.
    pub queues: u16,
    /// The DUT lab's middle namespace (see [`dut`]).
    pub dut_ns: Option<String>,
    /// Keeps the DUT ingress's XDP_PASS program attached (xdp_live senders).
    _dut_link: Option<OwnedFd>,
    /// The DUT's delay line (`--dut-delay`), when it forwards through one.
    delay_line: Option<delay::DelayLine>,
}

impl Lab {
    /// Creates the lab; on any failure what was created so far is removed.
    pub fn create(rx_mode: RxMode) -> Result<Lab> {
        Lab::create_with(rx_mode, false)
    }

    /// [`Lab::create`]; with `rx_napi`, the stack receiver gets an XDP_PASS program (for
    /// senders that redirect XDP frames into veth-tx; the drop receiver has NAPI anyway).
    pub fn create_with(rx_mode: RxMode, rx_napi: bool) -> Result<Lab> {
        Lab::create_opts(rx_mode, rx_napi, 1)
    }

    /// [`Lab::create_with`] with `queues` TX and RX queues on each end of the veth pair
    /// (one per sender thread, so `-t N` senders do not share one queue).
    pub fn create_opts(rx_mode: RxMode, rx_napi: bool, queues: u16) -> Result<Lab> {
        Lab::create_topology(rx_mode, rx_napi, queues, None)
    }

    /// The DUT lab: sender, device under test and receiver namespaces ([`dut`]).
    pub fn create_dut(
        rx_mode: RxMode,
        rx_napi: bool,
        queues: u16,
        o: &dut::DutOptions,
    ) -> Result<Lab> {
        Lab::create_dut_until(rx_mode, rx_napi, queues, o, &AtomicBool::new(false))
    }

    /// [`Lab::create_dut`], its set-up steps ended (and the lab removed) when `stop` is set.
    pub fn create_dut_until(
        rx_mode: RxMode,
        rx_napi: bool,
        queues: u16,
        o: &dut::DutOptions,
        stop: &AtomicBool,
    ) -> Result<Lab> {
        Lab::create_topology(rx_mode, rx_napi, queues, Some((o, stop)))
    }

    fn create_topology(
        rx_mode: RxMode,
        rx_napi: bool,
        queues: u16,
        dut: Option<(&dut::DutOptions, &AtomicBool)>,
    ) -> Result<Lab> {
        check_queues(usize::from(queues))?;
        for (ns, owner) in sweep_stale() {
            crate::errln!(
                "upktgen: removed stale lab namespace {ns} (its run, pid {owner}, is gone)"
            );
        }
        let (pid, start) = self_identity()?;
        let n = LAB_SEQ.fetch_add(1, Ordering::Relaxed);
        let base = format!("{NS_PREFIX}{pid}-{start}-{n}");
        let mut lab = Lab {
            tx_ns: format!("{base}-tx"),
            rx_ns: format!("{base}-rx"),
            rx_mode,
            rx_napi: rx_napi || rx_mode == RxMode::Drop,
            queues: queues.max(1),
            _xdp_link: None,
            rx_counter: None,
            removed: false,
            dut_ns: dut.map(|_| format!("{base}-dut")),
            _dut_link: None,
            delay_line: None,
        };
        // From here on, Drop removes whatever exists.
        match dut {
            None => lab.build().map_err(|e| LabError::Create(Box::new(e)))?,
            Some((o, stop)) => lab
                .build_dut(o, stop)
                .map_err(|e| LabError::CreateDut(Box::new(e)))?,
        }
        Ok(lab)
    }

    fn build(&mut self) -> Result<()> {
        let (tx, rx) = (self.tx_ns.clone(), self.rx_ns.clone());
        ip(&["netns", "add", &tx])?;
        ip(&["netns", "add", &rx])?;
        for ns in [&tx, &rx] {
            disable_ipv6(&netns_path(ns))?;
            ip(&["-n", ns, "link", "set", "dev", "lo", "up"])?;
        }
        let q = self.queues.to_string();
        ip(&[
            "-n",
            &tx,
            "link",
            "add",
            TX_IF,
            "numtxqueues",
            &q,
            "numrxqueues",
            &q,
            "address",
            &TX_MAC.to_string(),
            "type",
            "veth",
            "peer",
            "name",
            RX_IF,
            "numtxqueues",
            &q,
            "numrxqueues",
            &q,
            "address",
            &RX_MAC.to_string(),
            "netns",
            &rx,
        ])?;
        ip(&[
            "-n",
            &tx,
            "addr",
            "add",
            &format!("{TX_IP}/24"),
            "dev",
            TX_IF,
        ])?;
        ip(&[
            "-n",
            &rx,
            "addr",
            "add",
            &format!("{RX_IP}/24"),
            "dev",
            RX_IF,
        ])?;
        ip(&[
            "-n",
            &tx,
            "neigh",
            "replace",
            &RX_IP.to_string(),
            "lladdr",
            &RX_MAC.to_string(),
            "dev",
            TX_IF,
            "nud",
            "permanent",
        ])?;
        ip(&[
            "-n",
            &rx,
            "neigh",
            "replace",
            &TX_IP.to_string(),
            "lladdr",
            &TX_MAC.to_string(),
            "dev",
            RX_IF,
            "nud",
            "permanent",
        ])?;
        self.attach_receiver()?;
        if self.queues > 1 {
            self.map_queues_to_cpus(&tx)?;
        }
        ip(&["-n", &tx, "link", "set", "dev", TX_IF, "up"])?;
        ip(&["-n", &rx, "link", "set", "dev", RX_IF, "up"])?;
        wait_running(&netns_path(&tx), TX_IF)?;
        wait_running(&netns_path(&rx), RX_IF)?;
        Ok(())
    }

    /// The receiver's XDP program on veth-rx: the counting drop sink, or XDP_PASS for NAPI.
    fn attach_receiver(&mut self) -> Result<()> {
        if self.rx_mode == RxMode::Drop {
            let counter = XdpCounter::new().map_err(LabError::Counter)?;
            self._xdp_link = Some(attach_rx_program(
                &self.rx_path(),
                RX_IF,
                RxVerdict::Drop,
                Some(counter.program()),
            )?);
            self.rx_counter = Some(counter);
        } else if self.rx_napi {
            self._xdp_link = Some(attach_rx_program(
                &self.rx_path(),
                RX_IF,
                RxVerdict::Pass,
                None,
            )?);
        }
        Ok(())
    }

    pub fn tx_path(&self) -> PathBuf {
        netns_path(&self.tx_ns)
    }

    pub fn rx_path(&self) -> PathBuf {
        netns_path(&self.rx_ns)
    }

    /// Frames the drop receiver's XDP program counted so far (None with the stack receiver,
    /// or if the counter cannot be read).
    pub fn rx_sink_count(&self) -> Option<u64> {
        self.rx_counter.as_ref()?.count().ok()
    }

    /// Removes both namespaces now (also done on drop). Errors are reported, not fatal.
    pub fn remove(&mut self) -> Result<()> {
        if self.removed {
            return Ok(());
        }
        self.removed = true;
        // The line's thread first: it sends into the namespaces removed below.
        self.delay_line = None;
        self._xdp_link = None;
        self._dut_link = None;
        self.rx_counter = None;
        let mut errs = Vec::new();
        if let Some(dut) = &self.dut_ns {
            // What a --dut-setup left running there goes with the lab (deleting the name
            // alone would leave the namespace alive around them).
            kill_processes_in(&netns_path(dut));
        }
        for ns in [Some(&self.tx_ns), self.dut_ns.as_ref(), Some(&self.rx_ns)]
            .into_iter()
            .flatten()
        {
            if netns_path(ns).exists()
                && let Err(e) = ip(&["netns", "del", ns])
            {
                errs.push(e);
            }
        }
        if errs.is_empty() {
            Ok(())
        } else {
            Err(LabError::Remove(errs))
        }
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        if let Err(e) = self.remove() {
            crate::errln!("upktgen: warning: {e:#}");
        }
    }
}

/// Kills (SIGKILL) every process whose network namespace is the one at `ns` (a lab's own
/// namespace: what a `--dut-setup` started there), except this process; returns how many.
/// Each is held by a pidfd and checked again before the signal, so a pid reused meanwhile
/// is never signalled. A few passes, for what was forked during the last.
pub fn kill_processes_in(ns: &Path) -> usize {
    use std::os::unix::fs::MetadataExt;
    let Ok(t) = std::fs::metadata(ns) else {
        return 0;
    };
    let target = (t.dev(), t.ino());
    let me = std::process::id();
    let in_ns = |pid: u32| {
        std::fs::metadata(format!("/proc/{pid}/ns/net")).is_ok_and(|m| (m.dev(), m.ino()) == target)
    };
    let mut killed = 0;
    for _ in 0..5 {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            break;
        };
        let mut found = 0;
        for e in dir.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            if pid == me || !in_ns(pid) {
                continue;
            }
            found += 1;
            if let Ok(fd) = sys::proc::Pidfd::open(pid)
                && in_ns(pid)
                && fd.send_signal(libc::SIGKILL).is_ok()
            {
                killed += 1;
            }
        }
        if found == 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    killed
}

/// Path of a named namespace.
pub fn netns_path(name: &str) -> PathBuf {
    Path::new(NETNS_DIR).join(name)
}

/// Runs `ip ARGS`, turning a failure into an error that quotes the command and its stderr.
fn ip(args: &[&str]) -> Result<()> {
    let out = Command::new("ip").args(args).output().map_err(|err| {
        if err.kind() == std::io::ErrorKind::NotFound {
            LabError::NoIp
        } else {
            LabError::IpRun {
                cmd: args.join(" "),
                err,
            }
        }
    })?;
    if !out.status.success() {
        return Err(LabError::IpFailed {
            cmd: args.join(" "),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(())
}

impl Lab {
    /// XPS: TX queue i of veth-tx serves the i-th CPU this process may use (modulo their
    /// number), the CPU sender thread i is pinned to, so that it uses its own queue, and veth hands its frames to RX queue i of the
    /// peer. sysfs shows a namespace's devices only when mounted inside it, which
    /// `ip netns exec` does.
    fn map_queues_to_cpus(&self, tx: &str) -> Result<()> {
        let cpus = crate::sys::allowed_cpus();
        let mut script = String::new();
        for q in 0..usize::from(self.queues) {
            let cpu = cpus[q % cpus.len()];
            // A hex CPU mask, 32 bits per comma-separated word as sysfs writes them.
            let mut words = vec![0u32; cpu / 32 + 1];
            words[cpu / 32] |= 1 << (cpu % 32);
            let mask: Vec<String> = words.iter().rev().map(|w| format!("{w:x}")).collect();
            script.push_str(&format!(
                "echo {} > /sys/class/net/{TX_IF}/queues/tx-{q}/xps_cpus\n",
                mask.join(",")
            ));
        }
        ip(&["netns", "exec", tx, "sh", "-ec", &script]).map_err(|e| LabError::Xps(Box::new(e)))
    }
}

fn disable_ipv6(ns: &Path) -> Result<()> {
    netns::in_netns(ns, || {
        for which in ["all", "default"] {
            let p = format!("/proc/sys/net/ipv6/conf/{which}/disable_ipv6");
            // A kernel without IPv6 has no such file: nothing to quiet then.
            if Path::new(&p).exists() {
                std::fs::write(&p, "1")?;
            }
        }
        Ok(())
    })
    .map_err(|err| LabError::DisableIpv6 {
        ns: ns.to_path_buf(),
        err,
    })
}

fn wait_running(ns: &Path, ifname: &'static str) -> Result<()> {
    netns::in_netns(ns, move || {
        let idx = sys::if_nametoindex(ifname)?;
        let sock = sys::packet::PacketSocket::open(idx)?;
        for _ in 0..500 {
            let f = sock.if_flags(ifname)?;
            if f & (libc::IFF_UP as u32) != 0 && f & (libc::IFF_RUNNING as u32) != 0 {
                return Ok(());
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        Err(std::io::Error::other(format!(
            "{ifname} did not come up within 5 s"
        )))
    })
    .map_err(|err| LabError::WaitRunning { ifname, err })
}

/// This process's pid and start time (clock ticks since boot, field 22 of /proc/PID/stat).
fn self_identity() -> Result<(u32, u64)> {
    let pid = std::process::id();
    let start = proc_start_time(pid).ok_or(LabError::SelfStat)?;
    Ok((pid, start))
}

fn proc_start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_start_time(&stat)
}

/// Field 22 of a /proc/PID/stat line. The command name (field 2) is in parentheses and may
/// contain spaces and parentheses, so fields are counted after the last `)`.
pub fn parse_start_time(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Parses `upktgen-<pid>-<start>-<n>-<tx|rx>` into (pid, start).
pub fn parse_ns_name(name: &str) -> Option<(u32, u64)> {
    let rest = name.strip_prefix(NS_PREFIX)?;
    let mut it = rest.split('-');
    let pid = it.next()?.parse().ok()?;
    let start = it.next()?.parse().ok()?;
    let _n: u32 = it.next()?.parse().ok()?;
    let side = it.next()?;
    if !matches!(side, "tx" | "rx" | "dut") || it.next().is_some() {
        return None;
    }
    Some((pid, start))
}

/// Removes upktgen namespaces whose creating process no longer exists. Returns the names
/// removed with their owner's pid. Namespaces of live runs are left alone.
pub fn sweep_stale() -> Vec<(String, u32)> {
    let Ok(dir) = std::fs::read_dir(NETNS_DIR) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for e in dir.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some((pid, start)) = parse_ns_name(&name) else {
            continue;
        };
        if proc_start_time(pid) == Some(start) {
            continue; // its run is alive
        }
        // What its --dut-setup left running (its owner was killed before it removed them).
        kill_processes_in(&netns_path(&name));
        if ip(&["netns", "del", &name]).is_ok() {
            removed.push((name, pid));
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ns_names_roundtrip() {
        assert_eq!(parse_ns_name("upktgen-123-4567-0-tx"), Some((123, 4567)));
        assert_eq!(parse_ns_name("upktgen-123-4567-12-rx"), Some((123, 4567)));
        assert_eq!(parse_ns_name("upktgen-123-4567-3-dut"), Some((123, 4567)));
        assert_eq!(parse_ns_name("upktgen-123-4567-0-xx"), None);
        assert_eq!(parse_ns_name("upktgen-123-4567-0-tx-1"), None);
        assert_eq!(parse_ns_name("pgtx"), None);
        assert_eq!(parse_ns_name("upktgen-abc-1-0-tx"), None);
    }

    #[test]
    fn start_time_from_stat_with_odd_comm() {
        let stat = "4242 (we ird) name)) S 1 4242 4242 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 987654 1234 56";
        assert_eq!(parse_start_time(stat), Some(987654));
        assert_eq!(parse_start_time("garbage"), None);
        assert_eq!(parse_start_time("1 (x) S 1 2"), None);
    }

    #[test]
    fn own_start_time_is_readable() {
        let (pid, start) = self_identity().unwrap();
        assert_eq!(proc_start_time(pid), Some(start));
    }
}
