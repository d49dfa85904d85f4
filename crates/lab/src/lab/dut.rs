//! The DUT lab: three namespaces, sender -> device under test -> receiver.
//!
//! ```text
//!  netns ...-tx                 netns ...-dut (forwards IPv4 and IPv6)           netns ...-rx
//!  veth-tx 10.99.0.1  <-->  dut-in 10.99.0.254   dut-out 10.99.1.254  <-->  veth-rx 10.99.1.2
//!  fd00:99::1               fd00:99::fe          fd00:99:1::fe              fd00:99:1::2
//! ```
//! Frames are addressed to dut-in's MAC and the receiver's IP; the DUT routes them and they
//! reach veth-rx with dut-out's MAC as source. Neighbours are static everywhere and IPv6 is
//! on only when the run sends IPv6, so the run's frames are the only traffic. `--dut-setup`
//! commands run inside the DUT namespace after it is built (an nftables ruleset, a tc qdisc,
//! an XDP program, sysctls). Each runs in its own process group, for at most its timeout
//! (`--dut-setup-timeout`), and is killed, group and all, at the timeout or when upktgen is
//! asked to stop (SIGINT, SIGTERM, SIGHUP). What it leaves running in the background is
//! killed with the lab: every process in the DUT namespace, when the lab is removed.

use super::{Lab, LabError, RX_IF, RX_MAC, Result, TX_IF, TX_MAC, ip, netns_path};
use crate::sample::dut::{DutSample, qdisc_drops};
use crate::sample::{NetDevSnapshot, SnmpSnapshot};
use crate::sys::netns;
use crate::wire::MacAddr;
use std::io::{BufRead, BufReader, Read};
use std::net::{Ipv4Addr, Ipv6Addr};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const DUT_IN_IF: &str = "dut-in";
pub const DUT_OUT_IF: &str = "dut-out";
pub const DUT_IN_MAC: MacAddr = MacAddr([0x02, 0, 0, 0x99, 0, 0x11]);
pub const DUT_OUT_MAC: MacAddr = MacAddr([0x02, 0, 0, 0x99, 0, 0x12]);
pub const DUT_IN_IP: Ipv4Addr = Ipv4Addr::new(10, 99, 0, 254);
pub const DUT_OUT_IP: Ipv4Addr = Ipv4Addr::new(10, 99, 1, 254);
/// The receiver's address behind the DUT.
pub const DUT_RX_IP: Ipv4Addr = Ipv4Addr::new(10, 99, 1, 2);
pub const TX_IP6: Ipv6Addr = Ipv6Addr::new(0xfd00, 0x99, 0, 0, 0, 0, 0, 1);
pub const DUT_IN_IP6: Ipv6Addr = Ipv6Addr::new(0xfd00, 0x99, 0, 0, 0, 0, 0, 0xfe);
pub const DUT_OUT_IP6: Ipv6Addr = Ipv6Addr::new(0xfd00, 0x99, 1, 0, 0, 0, 0, 0xfe);
pub const DUT_RX_IP6: Ipv6Addr = Ipv6Addr::new(0xfd00, 0x99, 1, 0, 0, 0, 0, 2);

/// A set-up step for the DUT namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DutSetup {
    /// `sh -c COMMAND`.
    Command(String),
    /// `sh FILE`.
    File(PathBuf),
}

/// How long a set-up step may run by default (`--dut-setup-timeout`).
pub const DEFAULT_SETUP_TIMEOUT: Duration = Duration::from_secs(60);

/// How to build the DUT.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DutOptions {
    /// IPv6 on (addresses, forwarding) for a run that sends IPv6.
    pub ipv6: bool,
    /// An XDP_PASS program on dut-in: it gives the veth end the NAPI that frames redirected
    /// by XDP (xdp_live) need.
    pub ingress_napi: bool,
    pub setup: Vec<DutSetup>,
    /// How long each set-up step may run before it is killed.
    pub setup_timeout: Duration,
    /// `--dut-delay`: the DUT forwards through a delay line holding each frame this long
    /// ([`super::delay`]) instead of its kernel's forwarding.
    pub delay: Option<Duration>,
}

impl Default for DutOptions {
    fn default() -> Self {
        DutOptions {
            ipv6: false,
            ingress_napi: false,
            setup: Vec::new(),
            setup_timeout: DEFAULT_SETUP_TIMEOUT,
            delay: None,
        }
    }
}

fn sysctl(ns: &str, settings: &[(&str, &str)]) -> Result<()> {
    let script: String = settings
        .iter()
        .map(|(k, v)| format!("echo {v} > /proc/sys/{}\n", k.replace('.', "/")))
        .collect();
    ip(&["netns", "exec", ns, "sh", "-ec", &script]).map_err(|e| LabError::Sysctl {
        ns: ns.to_string(),
        err: Box::new(e),
    })
}

fn neigh(ns: &str, addr: &str, mac: MacAddr, dev: &str) -> Result<()> {
    ip(&[
        "-n",
        ns,
        "neigh",
        "replace",
        addr,
        "lladdr",
        &mac.to_string(),
        "dev",
        dev,
        "nud",
        "permanent",
    ])
}

/// A route via a gateway on `dev`; `onlink` because the links are still down, so their
/// connected routes do not exist yet.
fn route(ns: &str, net: &str, via: &str, dev: &str) -> Result<()> {
    ip(&[
        "-n", ns, "route", "add", net, "via", via, "dev", dev, "onlink",
    ])
}

fn addr(ns: &str, a: &str, dev: &str) -> Result<()> {
    let mut args = vec!["-n", ns, "addr", "add", a, "dev", dev];
    if a.contains(':') {
        args.push("nodad");
    }
    ip(&args)
}

impl Lab {
    /// The DUT namespace's path (DUT lab only).
    pub fn dut_path(&self) -> Option<PathBuf> {
        self.dut_ns.as_deref().map(netns_path)
    }

    /// Builds the three namespaces and their links (called by [`Lab::create_dut`]).
    pub(super) fn build_dut(&mut self, o: &DutOptions, stop: &AtomicBool) -> Result<()> {
        let (tx, rx) = (self.tx_ns.clone(), self.rx_ns.clone());
        let dut = self.dut_ns.clone().ok_or(LabError::NoDutNs)?;
        for ns in [&tx, &dut, &rx] {
            ip(&["netns", "add", ns])?;
            if o.ipv6 {
                // Quiet IPv6: no router solicitations, no DAD, no link-local addresses,
                // and a group's MLD reports sent at once when it is joined (the kernel
                // takes an interval of 0 as one jiffy), not up to seconds later, when they
                // would leave the DUT during a run and count as traffic it forwarded.
                sysctl(
                    ns,
                    &[
                        ("net.ipv6.conf.all.mldv1_unsolicited_report_interval", "0"),
                        (
                            "net.ipv6.conf.default.mldv1_unsolicited_report_interval",
                            "0",
                        ),
                        ("net.ipv6.conf.all.mldv2_unsolicited_report_interval", "0"),
                        (
                            "net.ipv6.conf.default.mldv2_unsolicited_report_interval",
                            "0",
                        ),
                        ("net.ipv6.conf.all.router_solicitations", "0"),
                        ("net.ipv6.conf.default.router_solicitations", "0"),
                        ("net.ipv6.conf.all.accept_dad", "0"),
                        ("net.ipv6.conf.default.accept_dad", "0"),
                        ("net.ipv6.conf.default.addr_gen_mode", "1"),
                    ],
                )?;
            } else {
                super::disable_ipv6(&netns_path(ns))?;
            }
            ip(&["-n", ns, "link", "set", "dev", "lo", "up"])?;
        }
        let q = self.queues.to_string();
        let pair = |a_ns: &str, a: &str, a_mac: MacAddr, b_ns: &str, b: &str, b_mac: MacAddr| {
            ip(&[
                "-n",
                a_ns,
                "link",
                "add",
                a,
                "numtxqueues",
                &q,
                "numrxqueues",
                &q,
                "address",
                &a_mac.to_string(),
                "type",
                "veth",
                "peer",
                "name",
                b,
                "numtxqueues",
                &q,
                "numrxqueues",
                &q,
                "address",
                &b_mac.to_string(),
                "netns",
                b_ns,
            ])
        };
        pair(&tx, TX_IF, TX_MAC, &dut, DUT_IN_IF, DUT_IN_MAC)?;
        pair(&dut, DUT_OUT_IF, DUT_OUT_MAC, &rx, RX_IF, RX_MAC)?;
        sysctl(
            &dut,
            &[
                ("net.ipv4.ip_forward", "1"),
                ("net.ipv4.conf.all.rp_filter", "0"),
                ("net.ipv4.conf.default.rp_filter", "0"),
            ],
        )?;
        addr(&tx, &format!("{}/24", super::TX_IP), TX_IF)?;
        addr(&dut, &format!("{DUT_IN_IP}/24"), DUT_IN_IF)?;
        addr(&dut, &format!("{DUT_OUT_IP}/24"), DUT_OUT_IF)?;
        addr(&rx, &format!("{DUT_RX_IP}/24"), RX_IF)?;
        neigh(&tx, &DUT_IN_IP.to_string(), DUT_IN_MAC, TX_IF)?;
        neigh(&dut, &super::TX_IP.to_string(), TX_MAC, DUT_IN_IF)?;
        neigh(&dut, &DUT_RX_IP.to_string(), RX_MAC, DUT_OUT_IF)?;
        neigh(&rx, &DUT_OUT_IP.to_string(), DUT_OUT_MAC, RX_IF)?;
        if o.ipv6 {
            sysctl(&dut, &[("net.ipv6.conf.all.forwarding", "1")])?;
            addr(&tx, &format!("{TX_IP6}/64"), TX_IF)?;
            addr(&dut, &format!("{DUT_IN_IP6}/64"), DUT_IN_IF)?;
            addr(&dut, &format!("{DUT_OUT_IP6}/64"), DUT_OUT_IF)?;
            addr(&rx, &format!("{DUT_RX_IP6}/64"), RX_IF)?;
            neigh(&tx, &DUT_IN_IP6.to_string(), DUT_IN_MAC, TX_IF)?;
            neigh(&dut, &TX_IP6.to_string(), TX_MAC, DUT_IN_IF)?;
            neigh(&dut, &DUT_RX_IP6.to_string(), RX_MAC, DUT_OUT_IF)?;
            neigh(&rx, &DUT_OUT_IP6.to_string(), DUT_OUT_MAC, RX_IF)?;
        }
        self.attach_receiver()?;
        if o.ingress_napi {
            self._dut_link = Some(super::xdp::attach_rx_program(
                &netns_path(&dut),
                DUT_IN_IF,
                super::xdp::RxVerdict::Pass,
                None,
            )?);
        }
        if let Some(d) = o.delay {
            self.delay_line = Some(super::delay::DelayLine::start(&netns_path(&dut), d)?);
        }
        if self.queues > 1 {
            self.map_queues_to_cpus(&tx)?;
        }
        for (ns, dev) in [
            (&tx, TX_IF),
            (&dut, DUT_IN_IF),
            (&dut, DUT_OUT_IF),
            (&rx, RX_IF),
        ] {
            ip(&["-n", ns, "link", "set", "dev", dev, "up"])?;
        }
        route(&tx, "10.99.1.0/24", &DUT_IN_IP.to_string(), TX_IF)?;
        route(&rx, "10.99.0.0/24", &DUT_OUT_IP.to_string(), RX_IF)?;
        if o.ipv6 {
            route(&tx, "fd00:99:1::/64", &DUT_IN_IP6.to_string(), TX_IF)?;
            route(&rx, "fd00:99::/64", &DUT_OUT_IP6.to_string(), RX_IF)?;
        }
        for (ns, dev) in [
            (&tx, TX_IF),
            (&dut, DUT_IN_IF),
            (&dut, DUT_OUT_IF),
            (&rx, RX_IF),
        ] {
            super::wait_running(&netns_path(ns), dev)?;
        }
        for s in &o.setup {
            run_setup(&dut, s, o.setup_timeout, stop)?;
        }
        Ok(())
    }

    /// The DUT's delay line's counts, when it has one (`--dut-delay`).
    pub fn delay_watch(&self) -> Option<super::delay::LineWatch> {
        self.delay_line.as_ref().map(super::delay::DelayLine::watch)
    }

    /// The DUT's counters now (None outside the DUT lab).
    pub fn dut_sample(&self) -> Result<Option<DutSample>> {
        let (Some(ns), Some(path)) = (self.dut_ns.clone(), self.dut_path()) else {
            return Ok(None);
        };
        let (net, snmp) = netns::in_netns(&path, || {
            let r = NetDevSnapshot::read().and_then(|n| Ok((n, SnmpSnapshot::read()?)));
            r.map_err(std::io::Error::other)
        })
        .map_err(|err| LabError::DutCounters {
            ns: ns.clone(),
            err,
        })?;
        let out = Command::new("ip")
            .args([
                "netns", "exec", &ns, "tc", "-s", "-j", "qdisc", "show", "dev", DUT_OUT_IF,
            ])
            .output()
            .map_err(LabError::Tc)?;
        if !out.status.success() {
            return Err(LabError::TcFailed(
                String::from_utf8_lossy(&out.stderr).trim().to_string(),
            ));
        }
        Ok(Some(DutSample {
            ingress: net.iface(DUT_IN_IF)?,
            egress: net.iface(DUT_OUT_IF)?,
            snmp,
            egress_qdisc_drops: qdisc_drops(&String::from_utf8_lossy(&out.stdout))?,
        }))
    }
}

/// The longest line of a set-up's output kept (the rest of the line is dropped).
const MAX_SETUP_LINE: u64 = 64 << 10;

/// Forwards the lines of `r` to standard error as the set-up's, keeping the last non-empty
/// one in `last`.
fn forward(r: impl Read, last: Arc<Mutex<String>>) {
    let mut r = BufReader::new(r);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match r.by_ref().take(MAX_SETUP_LINE).read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let line = String::from_utf8_lossy(&buf);
        let line = line.trim_end_matches(['\n', '\r']);
        // Control characters shown, not obeyed by the terminal.
        crate::errln!("upktgen: dut-setup: {}", crate::text::printable(line));
        if !line.trim().is_empty()
            && let Ok(mut l) = last.lock()
        {
            *l = line.to_string();
        }
    }
}

/// Runs one set-up step inside the DUT namespace, in its own process group; what it prints
/// goes to standard error as it comes, and a failure is an error with its status and last
/// line. At `timeout`, or when `stop` is set (SIGINT/SIGTERM/SIGHUP), its group is killed.
/// What it starts in the background may outlive it (and keep its output open): it is
/// killed with the lab ([`super::Lab::remove`]).
fn run_setup(dut: &str, s: &DutSetup, timeout: Duration, stop: &AtomicBool) -> Result<()> {
    use std::os::unix::process::CommandExt;
    let (opt, what) = match s {
        DutSetup::Command(c) => ("--dut-setup", c.clone()),
        DutSetup::File(f) => ("--dut-setup-file", f.display().to_string()),
    };
    let mut cmd = Command::new("ip");
    cmd.args(["netns", "exec", dut, "sh"]);
    match s {
        DutSetup::Command(c) => cmd.args(["-c", c]),
        DutSetup::File(f) => cmd.arg(f),
    };
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // A set-up never outlives upktgen, even one killed with SIGKILL.
    crate::sys::proc::die_with_parent(&mut cmd, libc::SIGKILL);
    let mut child = cmd.spawn().map_err(|err| LabError::SetupSpawn {
        opt,
        what: what.clone(),
        err,
    })?;
    let pgid = child.id();
    let last = Arc::new(Mutex::new(String::new()));
    let readers: Vec<_> = [
        child
            .stdout
            .take()
            .map(|r| Box::new(r) as Box<dyn Read + Send>),
        child
            .stderr
            .take()
            .map(|r| Box::new(r) as Box<dyn Read + Send>),
    ]
    .into_iter()
    .flatten()
    .map(|r| {
        let last = Arc::clone(&last);
        std::thread::spawn(move || forward(r, last))
    })
    .collect();
    let t0 = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break Ok(st),
            Ok(None) => {}
            Err(e) => break Err(e),
        }
        let ended = if stop.load(Ordering::Relaxed) {
            Some(LabError::SetupInterrupted {
                opt,
                what: what.clone(),
            })
        } else if t0.elapsed() >= timeout {
            Some(LabError::SetupTimedOut {
                opt,
                what: what.clone(),
                secs: timeout.as_secs_f64(),
            })
        } else {
            None
        };
        if let Some(e) = ended {
            // The leader is ours and not yet reaped: the group id is still its own.
            let _ = crate::sys::proc::signal_group(pgid, libc::SIGKILL);
            let _ = child.wait();
            return Err(e);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let status = match status {
        Ok(st) => st,
        Err(err) => {
            let _ = crate::sys::proc::signal_group(pgid, libc::SIGKILL);
            let _ = child.wait();
            return Err(LabError::SetupSpawn { opt, what, err });
        }
    };
    // Its output to the end, unless a background process it started holds the pipes open:
    // then what came so far (the readers go on until the lab kills that process).
    let t1 = Instant::now();
    while readers.iter().any(|r| !r.is_finished()) && t1.elapsed() < Duration::from_millis(200) {
        std::thread::sleep(Duration::from_millis(5));
    }
    if !status.success() {
        let last = last.lock().map(|l| l.clone()).unwrap_or_default();
        return Err(LabError::SetupFailed {
            opt,
            what,
            how: match status.code() {
                Some(c) => format!("exit status {c}"),
                None => "killed by a signal".into(),
            },
            last: if last.is_empty() {
                "no output".into()
            } else {
                last
            },
        });
    }
    Ok(())
}
