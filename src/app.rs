//! `upktgen run`: resolve the target (lab or named device), validate everything, sample the
//! system around the send loop, and report.

use crate::backend::af_packet::{AfPacket, AfPacketConfig};
use crate::backend::af_xdp::{AfXdp, AfXdpConfig};
use crate::backend::tx_ring::{TxRing, TxRingConfig};
use crate::backend::xdp_live::{self, XdpLive, XdpLiveConfig};
use crate::backend::{BackendInfo, BackendKind, TxBackend};
use crate::caps::{self, Cap};
use crate::cli::RunArgs;
use crate::frames::{self, FrameSource, Frames};
use crate::lab::receiver::LabReceiver;
use crate::lab::{self, Lab};
use crate::params::{self, Addressing};
use crate::pg::generate::{DeviceInfo, Generator};
use crate::pg::{DevConfig, Flag, XmitMode};
use crate::replay::ReplayFrames;
use crate::report::run::{Reconciliation, RunReport, Target, ThreadReport};
use crate::rx::report::RxAnalysis;
use crate::sample::{IfaceCounters, NetDevSnapshot, SystemSnapshot};
use crate::sender::{self, Limits, SendOutcome, StopReason};
use crate::sys::{self, netns, packet::PacketSocket};
use crate::txq::RingConfig;
use crate::wire::MacAddr;
use anyhow::{Context, Result, anyhow, bail};
use std::fs::File;
use std::io::{Read, Seek};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// How a run ended, for the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Done,
    Interrupted,
}

/// `--lab-rx-setup`: `sh -c COMMAND` in the lab's receiving namespace; its failure is the run's.
fn lab_rx_setup(ns: &str, cmd: &str) -> Result<()> {
    let o = std::process::Command::new("ip")
        .args(["netns", "exec", ns, "sh", "-c", cmd])
        .stdin(std::process::Stdio::null())
        .output()
        .context("--lab-rx-setup: running ip netns exec")?;
    if !o.status.success() {
        bail!(
            "--lab-rx-setup {cmd:?} failed ({}): {}",
            o.status,
            String::from_utf8_lossy(&o.stderr).trim()
        );
    }
    Ok(())
}

/// Flag set by SIGINT/SIGTERM/SIGHUP; installed once per process.
pub fn stop_flag() -> Result<Arc<AtomicBool>> {
    let flag = Arc::new(AtomicBool::new(false));
    for sig in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        signal_hook::flag::register(sig, Arc::clone(&flag))
            .context("installing signal handlers")?;
    }
    Ok(flag)
}

/// One transmit path with its validated settings.
#[derive(Debug, Clone)]
struct Plan {
    kind: BackendKind,
    /// Frames per syscall (af_packet, tx_ring, af_xdp).
    batch: usize,
    ring: Option<RingConfig>,
    xdp_live: Option<XdpLiveConfig>,
}

/// Validates the options against one backend.
fn plan_for(a: &RunArgs, kind: BackendKind, cfg: &DevConfig) -> Result<Plan> {
    if a.replay.is_some() && kind == BackendKind::XdpLive {
        bail!(
            "xdp_live cannot --replay: its program rewrites one frame; af_packet, tx_ring and af_xdp send a file's frames"
        );
    }
    let xdp_live = xdp_live::config_from_args(a, kind, cfg).map_err(|e| anyhow!(e))?;
    if a.sndbuf.is_some() && kind != BackendKind::AfPacket {
        bail!(
            "--sndbuf applies to af_packet (whose queue is the socket send buffer), not to {}",
            kind.name()
        );
    }
    if a.qdisc_bypass.is_some() && !matches!(kind, BackendKind::AfPacket | BackendKind::TxRing) {
        bail!(
            "--qdisc-bypass applies to af_packet and tx_ring, not to {}",
            kind.name()
        );
    }
    if a.qdisc_bypass.is_some() && cfg.xmit_mode.is_some() {
        bail!("--qdisc-bypass and --xmit-mode both choose whether frames pass the qdisc: give one");
    }
    let default_batch = if kind == BackendKind::AfXdp { 32 } else { 64 };
    Ok(Plan {
        kind,
        batch: usize::from(a.batch.unwrap_or(default_batch)),
        ring: ring_config(a, kind)?,
        xdp_live,
    })
}

/// The plans for `--backend`: one, or for `auto` every candidate the options allow, fastest
/// first.
/// Also returns, for `auto`, the candidates the options ruled out and why.
fn plans(a: &RunArgs, cfg: &DevConfig) -> Result<(Vec<Plan>, Vec<String>)> {
    if a.backend != BackendKind::Auto {
        return Ok((vec![plan_for(a, a.backend, cfg)?], Vec::new()));
    }
    let candidates: &[BackendKind] = if a.dev.is_none() {
        &[
            BackendKind::XdpLive,
            BackendKind::AfXdp,
            BackendKind::TxRing,
            BackendKind::AfPacket,
        ]
    } else {
        &[
            BackendKind::AfXdp,
            BackendKind::TxRing,
            BackendKind::AfPacket,
        ]
    };
    let mut out = Vec::new();
    let mut refused = Vec::new();
    for &k in candidates {
        match plan_for(a, k, cfg) {
            Ok(p) => out.push(p),
            Err(e) => refused.push(format!("{} ruled out: {e:#}", k.name())),
        }
    }
    if out.is_empty() {
        bail!(
            "--backend auto: no backend accepts these options ({})",
            refused.join("; ")
        );
    }
    Ok((out, refused))
}

/// Checks made before any privilege is needed: pure validation of the options. Returns
/// pktgen's device configuration, and --replay's frames, read and checked.
fn check_args(a: &RunArgs) -> Result<(DevConfig, Option<ReplayFrames>)> {
    let ifname = a.dev.as_deref().unwrap_or(lab::TX_IF);
    crate::replay::check_replay_args(a)?;
    let mut cfg = a
        .dev_config(ifname, a.dev.is_none())
        .map_err(|e| anyhow!(e))?;
    let replay = crate::replay::from_args(a)?;
    if let Some(r) = &replay {
        cfg.count = r.count(cfg.count, a.replay_loops.unwrap_or(0));
    }
    if a.dev.is_some() && replay.is_none() {
        if cfg.dst_min.is_empty() && !cfg.has(Flag::Ipv6) {
            bail!(
                "--dst: required with --dev (the destination IPv4 address to put in the frames; --dst6 for IPv6)"
            );
        }
        if cfg.dst_mac == MacAddr::default() {
            bail!(
                "--dst-mac: required with --dev (pktgen's default of 00:00:00:00:00:00 is dropped by every receiver)"
            );
        }
    }
    cfg.check_start().map_err(|e| anyhow!(e))?;
    plans(a, &cfg)?;
    Ok((cfg, replay))
}

/// Default ring size of each ring backend.
fn default_ring(kind: BackendKind) -> Option<u32> {
    match kind {
        BackendKind::AfPacket => None,
        BackendKind::TxRing => Some(1024),
        BackendKind::AfXdp => Some(2048),
        BackendKind::XdpLive | BackendKind::Auto => None,
    }
}

/// The ring and thresholds of a ring backend, validated; None for the others.
fn ring_config(a: &RunArgs, kind: BackendKind) -> Result<Option<RingConfig>> {
    let Some(default) = default_ring(kind) else {
        if a.ring.is_some() || a.start_thresh.is_some() || a.stop_thresh != 1 {
            bail!(
                "--ring/--stop-thresh/--start-thresh apply to the ring backends (tx_ring, af_xdp), not to {}",
                kind.name()
            );
        }
        return Ok(None);
    };
    let size = a.ring.unwrap_or(default);
    if !size.is_power_of_two() || size > 1 << 16 {
        bail!(
            "--ring {size}: {} needs a power of two from 1 to 65536",
            kind.name()
        );
    }
    let start = a.start_thresh.unwrap_or((size / 2).max(a.stop_thresh));
    RingConfig::new(size, a.stop_thresh, start)
        .map(Some)
        .map_err(|e| anyhow!(e))
}

/// The sending interface, probed in its namespace.
struct Device {
    name: String,
    netns: Option<PathBuf>,
    ifindex: u32,
    mtu: u32,
    mac: [u8; 6],
    addr4: Option<std::net::Ipv4Addr>,
    /// Real TX queues (from sysfs when the device is in this namespace; else 1).
    tx_queues: u16,
}

fn probe_device(name: &str, ns: Option<&Path>) -> Result<Device> {
    let owned = name.to_string();
    let probe = move || -> std::io::Result<(Device, u32)> {
        let ifindex = sys::if_nametoindex(&owned)?;
        // A packet socket is the handle for the interface ioctls; it is closed right away.
        let sock = PacketSocket::open(ifindex)?;
        let flags = sock.if_flags(&owned)?;
        let dev = Device {
            mtu: sock.if_mtu(&owned)?,
            mac: sock.if_hwaddr(&owned)?,
            addr4: sock.if_addr4(&owned)?,
            tx_queues: 1,
            name: owned,
            netns: None,
            ifindex,
        };
        Ok((dev, flags))
    };
    let r = match ns {
        Some(p) => netns::in_netns(p, probe),
        None => probe(),
    };
    let (mut dev, flags) = r.map_err(|e| match e.raw_os_error() {
        Some(libc::ENODEV) | Some(libc::ENXIO) => anyhow!("--dev {name}: no such interface"),
        Some(libc::EPERM) | Some(libc::EACCES) => {
            anyhow!("--dev {name}: opening a packet socket needs CAP_NET_RAW: run as root")
        }
        _ => anyhow!("--dev {name}: {e}"),
    })?;
    if flags & libc::IFF_UP as u32 == 0 {
        bail!("--dev {name}: the interface is down (bring it up with `ip link set {name} up`)");
    }
    dev.netns = ns.map(Path::to_path_buf);
    if ns.is_none() {
        // sysfs shows the namespace it was mounted in: only trusted for our own.
        let dir = format!("/sys/class/net/{name}/queues");
        if let Ok(rd) = std::fs::read_dir(dir) {
            let n = rd
                .filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().starts_with("tx-"))
                .count();
            dev.tx_queues = (n as u16).max(1);
        }
    }
    Ok(dev)
}

/// Reads an interface's counters from /proc/net/dev of one network namespace. The file is
/// opened by a thread inside the namespace and stays bound to it.
struct NetDevReader {
    file: File,
}

impl NetDevReader {
    fn open(ns: Option<&Path>) -> Result<Self> {
        let open = || File::open("/proc/thread-self/net/dev");
        let file = match ns {
            Some(p) => netns::in_netns(p, open),
            None => open(),
        }
        .context("opening /proc/net/dev")?;
        Ok(NetDevReader { file })
    }

    fn read(&mut self, iface: &str) -> Result<IfaceCounters> {
        let mut s = String::new();
        self.file.rewind()?;
        self.file
            .read_to_string(&mut s)
            .context("reading /proc/net/dev")?;
        let snap = NetDevSnapshot::parse(&s).map_err(|e| anyhow!("parsing /proc/net/dev: {e}"))?;
        snap.get(iface)
            .cloned()
            .ok_or_else(|| anyhow!("{iface} vanished from /proc/net/dev during the run"))
    }
}

/// Refuses frames the device cannot carry: the largest frame, less its VLAN tags, must fit
/// the MTU plus the Ethernet header.
pub(crate) fn check_frame_fits(cfg: &DevConfig, mtu: u32, dev: &str) -> Result<()> {
    let tags = cfg.vlan_tag_bytes();
    let max = cfg.max_frame_len();
    let room = mtu as usize + crate::wire::ETH_HLEN + tags;
    if max > room {
        bail!(
            "frames of up to {max} bytes (pkt_size/max_pkt_size/imix_weights, with headers) do not fit {dev}: {mtu} MTU + 14-byte Ethernet header{} = {room}",
            if tags > 0 { " + VLAN tags" } else { "" }
        );
    }
    Ok(())
}

/// The report's view of the addresses: single addresses, or `min-max` ranges.
fn addressing(cfg: &DevConfig, dev: &DeviceInfo) -> Addressing {
    let range = |min: &str, max: &str| {
        if max.is_empty() || max == min {
            min.to_string()
        } else {
            format!("{min}-{max}")
        }
    };
    let src_mac = if cfg.src_mac == MacAddr::default() {
        dev.mac
    } else {
        cfg.src_mac
    };
    let (src_ip, dst_ip) = if cfg.has(Flag::Ipv6) {
        let src = if cfg.src6.is_unspecified() {
            crate::pg::generate::link_local_from_mac(src_mac)
        } else {
            cfg.src6
        };
        let dst = if cfg.dst6_min.is_unspecified() {
            cfg.dst6.to_string()
        } else {
            format!("{}-{}", cfg.dst6_min, cfg.dst6_max)
        };
        (src.to_string(), dst)
    } else {
        let src = if cfg.src_min.is_empty() {
            dev.ipv4
                .unwrap_or(std::net::Ipv4Addr::UNSPECIFIED)
                .to_string()
        } else {
            range(&cfg.src_min, &cfg.src_max)
        };
        (src, range(&cfg.dst_min, &cfg.dst_max))
    };
    Addressing {
        src_mac,
        dst_mac: cfg.dst_mac,
        src_ip,
        dst_ip,
    }
}

/// One sender: pktgen's device (the name may carry an `@tag`, as `dev@1`) and the CPU its
/// thread is pinned to.
#[derive(Debug, Clone)]
pub struct SenderSpec {
    pub cfg: DevConfig,
    pub cpu: Option<usize>,
}

/// A finished sender.
pub struct SenderDone {
    pub spec: SenderSpec,
    pub info: BackendInfo,
    pub outcome: SendOutcome,
    /// The walk's state at the end (for pktgen's `Current:` section), when frames came from
    /// the full walk.
    pub walk: Option<Generator>,
    /// CLOCK_MONOTONIC at the start and end of its send loop, ns.
    pub started_ns: u64,
    pub stopped_ns: u64,
}

/// A finished run: the report and each sender.
pub struct RunResult {
    pub report: RunReport,
    pub senders: Vec<SenderDone>,
    pub interrupted: bool,
}

/// The senders `-t N` asks for: one per thread, named `dev@i` as the kernel's sample scripts
/// name them, pinned to CPU i (or --cpu + i), each with its share of the rate so the total
/// is what was asked. With one thread: the device itself, on --cpu.
fn thread_specs(a: &RunArgs, cfg: &DevConfig) -> Result<Vec<SenderSpec>> {
    let n = usize::from(a.threads);
    if n == 0 {
        bail!("-t/--threads 0: give at least one sender thread");
    }
    if n == 1 {
        return Ok(vec![SenderSpec {
            cfg: cfg.clone(),
            cpu: a.cpu,
        }]);
    }
    if a.rx_analyze {
        bail!(
            "--rx-analyze with -t {n}: the receiver tells sequences apart by address and VLAN, and every thread's sequence starts at 1 from the same address; run one thread, or give threads distinct sources with `upktgen script`"
        );
    }
    // Thread i runs on the i-th CPU this process may use, counting from --cpu's.
    let cpus = sys::allowed_cpus();
    let first = match a.cpu {
        Some(c) => cpus.iter().position(|&x| x == c).with_context(|| {
            format!("--cpu {c}: not a CPU this process may run on (allowed: {cpus:?})")
        })?,
        None => 0,
    };
    Ok((0..n)
        .map(|i| {
            let mut c = cfg.clone();
            c.ifname = format!("{}@{i}", cfg.device());
            if c.delay != 0 && c.delay != u64::MAX {
                c.delay = c.delay.saturating_mul(n as u64);
            }
            SenderSpec {
                cfg: c,
                cpu: Some(cpus[(first + i) % cpus.len()]),
            }
        })
        .collect())
}

/// Whether every backend the plans may use is af_xdp (the one that takes a queue).
fn jobs_plans_all_xdp(plans: &[Plan]) -> bool {
    plans.iter().all(|p| p.kind == BackendKind::AfXdp)
}

/// The TX queue an af_xdp sender binds, modulo the device's queues as the kernel reduces its
/// queue map: the CPU's with QUEUE_MAP_CPU; with several senders, a queue_map range spreads
/// them over it and without one sender i takes queue i (two AF_XDP sockets cannot share a
/// queue without sharing a UMEM); otherwise queue_map_min.
fn xsk_queue(
    cfg: &DevConfig,
    cpu: Option<usize>,
    index: usize,
    senders: usize,
    queues: u16,
) -> u16 {
    let q = if cfg.has(Flag::QueueMapCpu) {
        cpu.unwrap_or(0)
    } else if senders > 1 && cfg.queue_map_min < cfg.queue_map_max {
        usize::from(cfg.queue_map_min)
            + index % (usize::from(cfg.queue_map_max - cfg.queue_map_min) + 1)
    } else if senders > 1 && cfg.queue_map_min == 0 && cfg.queue_map_max == 0 {
        index
    } else {
        usize::from(cfg.queue_map_min)
    };
    (q % usize::from(queues.max(1))) as u16
}

/// Runs `upktgen run`.
pub fn run(a: &RunArgs, stop: &Arc<AtomicBool>) -> Result<Exit> {
    let (cfg, replay) = check_args(a)?;
    if let Some(path) = &a.pcap {
        return crate::replay::write_pcap(a, &cfg, path, stop);
    }
    let specs = thread_specs(a, &cfg)?;
    let Some(r) = run_senders_with(a, specs, replay.as_ref(), stop)? else {
        return Ok(Exit::Interrupted);
    };
    if a.json {
        crate::out::println(serde_json::to_string_pretty(&r.report)?)?;
    } else {
        crate::out::print(r.report.text(a.per_cpu))?;
    }
    Ok(if r.interrupted {
        Exit::Interrupted
    } else {
        Exit::Done
    })
}

/// A device as the senders see it, probed once.
struct Target0 {
    dev: Device,
    info: DeviceInfo,
}

/// Runs `specs` at once, each on its own thread (in the lab the options describe, or on the
/// named devices in this namespace): every backend is set up first, then the system is
/// sampled and all start together; the report adds them up. None when stopped before
/// anything was sent.
pub fn run_senders(
    a: &RunArgs,
    specs: Vec<SenderSpec>,
    stop: &Arc<AtomicBool>,
) -> Result<Option<RunResult>> {
    run_senders_with(a, specs, None, stop)
}

/// [`run_senders`]; with `replay`, every sender sends the file's frames instead of its
/// configuration's.
fn run_senders_with(
    a: &RunArgs,
    specs: Vec<SenderSpec>,
    replay: Option<&ReplayFrames>,
    stop: &Arc<AtomicBool>,
) -> Result<Option<RunResult>> {
    let first = specs.first().context("no sender to run")?.cfg.clone();
    let mut planned = Vec::with_capacity(specs.len());
    for s in &specs {
        let (p, skipped) = plans(a, &s.cfg)?;
        planned.push((p, skipped));
    }
    if a.rx_analyze && a.lab_rx == Some(lab::RxMode::Drop) {
        bail!(
            "--rx-analyze needs the frames to reach a socket in the receiving namespace: use --lab-rx stack (its default), not drop"
        );
    }
    if a.dev.is_some() && a.lab_rx.is_some() {
        bail!("--lab-rx: chooses the lab's receiver; with --dev there is no lab");
    }
    if a.lab_rx_setup.is_some() && a.dev.is_some() {
        bail!("--lab-rx-setup: runs in the lab's receiving namespace; with --dev there is no lab");
    }
    if a.rx_analyze && a.dev.is_some() {
        bail!(
            "--rx-analyze: the receiver runs in the lab's receiving namespace; with --dev run `upktgen rx --dev IFACE` on the receiving host"
        );
    }
    let mut lab_guard: Option<Lab> = None;
    let ns: Option<PathBuf> = match &a.dev {
        Some(d) => {
            caps::require(&[Cap::NetRaw], &format!("sending on {d}"))?;
            None
        }
        None => {
            caps::require(
                &[Cap::SysAdmin, Cap::NetAdmin, Cap::NetRaw],
                "the private lab (network namespaces and a veth pair)",
            )?;
            let l = Lab::create_opts(
                a.lab_rx.unwrap_or(if a.rx_analyze {
                    lab::RxMode::Stack
                } else {
                    lab::RxMode::Drop
                }),
                // An AF_XDP receiver's own program gives veth-rx the NAPI xdp_live needs.
                planned
                    .iter()
                    .any(|(p, _)| p.iter().any(|p| p.kind == BackendKind::XdpLive))
                    // Only when af_xdp is asked for by name: `auto` may fall back to
                    // af_packet, and veth-rx must then still have NAPI (with the lab's
                    // program in place, auto's af_xdp cannot attach and falls back at once).
                    && !(a.rx_analyze && a.rx_backend == crate::rx::recv::RxBackend::AfXdp),
                a.threads.max(1),
            )?;
            let p = l.tx_path();
            if let Some(cmd) = &a.lab_rx_setup {
                lab_rx_setup(&l.rx_ns, cmd)?;
            }
            lab_guard = Some(l);
            Some(p)
        }
    };
    // Each distinct device once.
    let mut targets: Vec<Target0> = Vec::new();
    for s in &specs {
        let name = s.cfg.device();
        if !targets.iter().any(|t| t.dev.name == name) {
            let mut dev = probe_device(name, ns.as_deref())?;
            if let Some(l) = &lab_guard {
                dev.tx_queues = l.queues;
            }
            let info = DeviceInfo {
                mac: MacAddr(dev.mac),
                ipv4: dev.addr4,
                tx_queues: dev.tx_queues,
            };
            targets.push(Target0 { dev, info });
        }
    }
    let target = |name: &str| {
        targets
            .iter()
            .find(|t| t.dev.name == name)
            .expect("every device was probed")
    };
    if stop.load(std::sync::atomic::Ordering::Relaxed) {
        return Ok(None);
    }
    let lab = lab_guard.as_ref();
    let seed = a
        .seed
        .unwrap_or_else(|| sys::realtime_ns() ^ u64::from(std::process::id()));
    let mut jobs = Vec::with_capacity(specs.len());
    let mut uses_random = false;
    for (i, (s, (plans, skipped))) in specs.iter().zip(planned).enumerate() {
        let t = target(s.cfg.device());
        let frames = match replay {
            Some(r) => {
                r.check_fits(t.dev.mtu, &t.dev.name)?;
                Frames::Replay(Box::new(r.clone()))
            }
            None => {
                check_frame_fits(&s.cfg, t.dev.mtu, &t.dev.name)?;
                // Each sender draws its own random sequence; the seed reproduces all of them.
                frames::for_config(
                    &s.cfg,
                    &t.info,
                    seed.wrapping_add(i as u64),
                    s.cpu.unwrap_or(0) as u16,
                )
                .map_err(|e| anyhow!("{}: {e}", s.cfg.ifname))?
            }
        };
        uses_random |= frames.generator().is_some_and(Generator::uses_random);
        if i == 0 {
            let mut notes = s.cfg.range_notes();
            let queue_map = s.cfg.queue_map_min != 0
                || s.cfg.queue_map_max != 0
                || s.cfg.has(Flag::QueueMapRnd)
                || s.cfg.has(Flag::QueueMapCpu);
            if queue_map && !jobs_plans_all_xdp(&plans) {
                notes.push(
                    "queue_map_*/QUEUE_MAP_*: a packet socket cannot choose the TX queue per packet; af_packet and tx_ring frames take the queue the kernel picks (XPS, or the hash); af_xdp binds the queue".into(),
                );
            }
            for n in s.cfg.notes.iter().chain(&notes) {
                crate::errln!("upktgen: note: {n}");
            }
        }
        jobs.push(SendJob {
            plans,
            skipped,
            sndbuf: a.sndbuf,
            qdisc_bypass: a
                .qdisc_bypass
                .or(s.cfg.xmit_mode.map(|m| m == XmitMode::StartXmit)),
            priority: s.cfg.skb_priority,
            queue: xsk_queue(&s.cfg, s.cpu, i, specs.len(), t.dev.tx_queues),
            ifindex: t.dev.ifindex,
            frames,
            limits: Limits {
                count: s.cfg.count,
                duration: a.duration,
                delay_ns: s.cfg.delay,
                burst: s.cfg.burst,
                timestamps: !s.cfg.has(Flag::NoTimestamp),
            },
            cpu: s.cpu,
            stop: Arc::clone(stop),
        });
    }
    let addressing = addressing(&first, &target(first.device()).info);
    let mut tx_reader = NetDevReader::open(ns.as_deref())?;
    let mut rx_reader = match lab {
        Some(l) => Some(NetDevReader::open(Some(&l.rx_path()))?),
        None => None,
    };
    if let Some(f) = &a.irq {
        let snap = crate::sample::InterruptsSnapshot::read()?;
        if !snap.matches(f) {
            bail!(
                "--irq {f}: no line of /proc/interrupts matches (look at `cat /proc/interrupts` for the device's queue names)"
            );
        }
    }
    let rx_sink = match lab.filter(|_| a.rx_analyze) {
        Some(l) => Some(LabReceiver::start(
            &l.rx_path(),
            crate::rx::recv::RxConfig {
                backend: a.rx_backend,
                ..crate::lab::receiver::config(a.hist)
            },
        )?),
        None => None,
    };
    let read_tx = |r: &mut NetDevReader| -> Result<IfaceCounters> {
        let mut sum = IfaceCounters::default();
        for t in &targets {
            sum = sum.plus(&r.read(&t.dev.name)?);
        }
        Ok(sum)
    };
    let tx0 = read_tx(&mut tx_reader)?;
    let rx0 = match &mut rx_reader {
        Some(r) => Some(r.read(lab::RX_IF)?),
        None => None,
    };
    let live = crate::live::start_for_run(
        a,
        first.count.saturating_mul(specs.len() as u64),
        crate::live::Watched {
            iface: targets[0].dev.name.clone(),
            netns: ns.clone(),
        },
        lab.map(|l| crate::live::Watched {
            iface: lab::RX_IF.to_string(),
            netns: Some(l.rx_path()),
        }),
        rx_sink.as_ref().map(LabReceiver::progress),
    )?;
    let (done, sys0, sys1) = run_jobs(ns.clone(), jobs, stop)?;
    // Frames in flight on veth are delivered within the sender's own softirq; a short
    // pause lets any deferred NAPI poll on the receiving end finish before counting.
    std::thread::sleep(std::time::Duration::from_millis(20));
    let tx1 = read_tx(&mut tx_reader)?;
    let rx1 = match &mut rx_reader {
        Some(r) => Some(r.read(lab::RX_IF)?),
        None => None,
    };
    let system = sys0.delta(&sys1, a.irq.as_deref());
    let tx_if = tx0.delta(&tx1);
    let rx_if = rx0.zip(rx1).map(|(a, b)| a.delta(&b));
    let outcome = SendOutcome::combine(done.iter().map(|(_, o, _, _, _)| o));
    let interrupted = outcome.stop_reason == StopReason::Interrupted;
    let rx_analysis = match (rx_sink, &rx_if) {
        (Some(r), Some(rx)) => Some(RxAnalysis::new(
            outcome.result.sent,
            tx_if.tx_packets,
            rx.rx_packets,
            r.finish(rx.rx_packets)?,
        )),
        _ => None,
    };
    if let Some(m) = live {
        m.finish();
    }
    let senders: Vec<SenderDone> = specs
        .into_iter()
        .zip(done)
        .map(|(spec, (info, outcome, walk, t0, t1))| SenderDone {
            spec,
            info,
            outcome,
            walk,
            started_ns: t0,
            stopped_ns: t1,
        })
        .collect();
    let threads = if senders.len() > 1 {
        senders
            .iter()
            .map(|s| ThreadReport {
                device: s.spec.cfg.ifname.clone(),
                cpu: s.spec.cpu,
                backend: s.info.name,
                detail: s.info.detail.clone(),
                outcome: s.outcome.clone(),
            })
            .collect()
    } else {
        Vec::new()
    };
    let report = RunReport {
        target: Target {
            device: targets
                .iter()
                .map(|t| t.dev.name.as_str())
                .collect::<Vec<_>>()
                .join("+"),
            netns: lab.map(|l| l.tx_ns.clone()),
            lab_rx: lab.map(|l| l.rx_mode),
            rx_netns: lab.map(|l| l.rx_ns.clone()),
        },
        backend: senders[0].info.clone(),
        addressing,
        flags: params::Flags {
            udp_csum: first.has(Flag::Udpcsum),
            no_timestamp: first.has(Flag::NoTimestamp),
        },
        seed: uses_random.then_some(seed),
        count: first.count,
        delay_ns: first.delay,
        reconciliation: Reconciliation::new(outcome.result.sent, &tx_if, rx_if.as_ref()),
        tx_iface: tx_if,
        rx_iface: rx_if,
        outcome,
        threads,
        system,
        rx_analysis,
        xdp_sink_packets: lab.and_then(Lab::rx_sink_count),
    };
    drop(lab_guard);
    Ok(Some(RunResult {
        report,
        senders,
        interrupted,
    }))
}

/// Everything a sender thread needs, moved into it.
struct SendJob {
    plans: Vec<Plan>,
    /// Candidates --backend auto ruled out before sending, and why.
    skipped: Vec<String>,
    sndbuf: Option<u32>,
    /// PACKET_QDISC_BYPASS [af_packet: off; tx_ring: on].
    qdisc_bypass: Option<bool>,
    /// SO_PRIORITY of packet sockets (pktgen's skb_priority; 0 = leave it).
    priority: u32,
    /// af_xdp's queue (pktgen's queue_map_min).
    queue: u16,
    ifindex: u32,
    frames: Frames,
    limits: Limits,
    cpu: Option<usize>,
    stop: Arc<AtomicBool>,
}

/// What one sender thread hands back: its backend, outcome, final walk state and the
/// monotonic start/stop of its loop.
type JobDone = (BackendInfo, SendOutcome, Option<Generator>, u64, u64);

/// Start line for the sender threads: each says when its backend is ready (or failed);
/// Start line for the sender threads: each says once when its backend is ready (or why it
/// is not); the coordinator then opens the gate for all, or closes it if any failed. A gate
/// dropped without having reported (an error return, a panic) reports a failure, so the
/// coordinator never waits for a thread that is gone.
struct Gate {
    ready: std::sync::mpsc::Sender<std::result::Result<(), String>>,
    go: Arc<(std::sync::Mutex<Option<bool>>, std::sync::Condvar)>,
    reported: std::cell::Cell<bool>,
}

impl Gate {
    fn report(&self, r: std::result::Result<(), String>) {
        if !self.reported.replace(true) {
            let _ = self.ready.send(r);
        }
    }

    /// Reports ready and waits for the start; false when the run is called off.
    fn ready_and_wait(&self) -> bool {
        self.report(Ok(()));
        let (m, cv) = &*self.go;
        let mut g = m.lock().unwrap_or_else(|e| e.into_inner());
        while g.is_none() {
            g = cv.wait(g).unwrap_or_else(|e| e.into_inner());
        }
        g.unwrap_or(false)
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        self.report(Err(
            "a sender thread ended before its backend was ready".into()
        ));
    }
}

/// Runs the jobs on their threads (in `ns`), sampling the system once all are ready and
/// again once all are done. The senders share one stop flag of their own: Ctrl-C sets it
/// (through `signal`), and so does any sender that fails, so the others do not run on alone.
fn run_jobs(
    ns: Option<PathBuf>,
    jobs: Vec<SendJob>,
    signal: &Arc<AtomicBool>,
) -> Result<(Vec<JobDone>, SystemSnapshot, SystemSnapshot)> {
    use std::sync::atomic::Ordering::Relaxed;
    let (tx, rx) = std::sync::mpsc::channel();
    let go = Arc::new((std::sync::Mutex::new(None), std::sync::Condvar::new()));
    let run_stop = Arc::new(AtomicBool::new(false));
    let open = |v: bool| {
        let (m, cv) = &*go;
        *m.lock().unwrap_or_else(|e| e.into_inner()) = Some(v);
        cv.notify_all();
    };
    let n = jobs.len();
    let mut handles = Vec::with_capacity(n);
    for (i, mut job) in jobs.into_iter().enumerate() {
        job.stop = Arc::clone(&run_stop);
        let gate = Gate {
            ready: tx.clone(),
            go: Arc::clone(&go),
            reported: std::cell::Cell::new(false),
        };
        let ns = ns.clone();
        let stop_all = Arc::clone(&run_stop);
        let spawned = std::thread::Builder::new()
            .name(format!("upktgen-tx{i}"))
            .spawn(move || -> Result<JobDone> {
                let r = (|| {
                    if let Some(p) = &ns {
                        netns::setns_net(p).with_context(|| {
                            format!("entering network namespace {}", p.display())
                        })?;
                    }
                    send(job, &gate)
                })();
                if let Err(e) = &r {
                    gate.report(Err(format!("{e:#}")));
                    stop_all.store(true, Relaxed);
                }
                r
            });
        match spawned {
            Ok(h) => handles.push(h),
            Err(e) => {
                // Call off the threads already started, and wait for them.
                open(false);
                for h in handles {
                    let _ = h.join();
                }
                return Err(anyhow!(e).context("starting a sender thread"));
            }
        }
    }
    drop(tx);
    let mut failed: Option<String> = None;
    for _ in 0..n {
        match rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                failed.get_or_insert(e);
                break;
            }
            Err(_) => break,
        }
    }
    let sys0 = match failed {
        None => match SystemSnapshot::take() {
            Ok(s) => {
                open(true);
                Some(s)
            }
            Err(e) => {
                failed = Some(format!("sampling /proc before the start: {e:#}"));
                open(false);
                None
            }
        },
        Some(_) => {
            open(false);
            None
        }
    };
    // Ctrl-C reaches the senders through their own flag.
    let watching = Arc::new(AtomicBool::new(true));
    let watcher = {
        let (signal, run_stop, watching) = (
            Arc::clone(signal),
            Arc::clone(&run_stop),
            Arc::clone(&watching),
        );
        std::thread::spawn(move || {
            while watching.load(Relaxed) {
                if signal.load(Relaxed) {
                    run_stop.store(true, Relaxed);
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        })
    };
    let mut done = Vec::with_capacity(n);
    let mut first_err: Option<anyhow::Error> = None;
    for h in handles {
        match h.join() {
            Ok(Ok(d)) => done.push(d),
            Ok(Err(e)) => {
                first_err.get_or_insert(e);
            }
            Err(_) => {
                first_err.get_or_insert(anyhow!("a sender thread panicked"));
            }
        }
    }
    watching.store(false, Relaxed);
    let _ = watcher.join();
    let sys1 = SystemSnapshot::take()?;
    // The sender that could not start says why; the others only that they were called off.
    if let Some(e) = failed {
        bail!(e);
    }
    if let Some(e) = first_err {
        return Err(e);
    }
    let sys0 = sys0.context("the system was not sampled before the start")?;
    Ok((done, sys0, sys1))
}

/// On a sender thread: pin, build the chosen backend, wait for the start, send.
fn send(mut job: SendJob, gate: &Gate) -> Result<JobDone> {
    if let Some(cpu) = job.cpu {
        sys::pin_to_cpu(cpu).map_err(|e| {
            anyhow!("--cpu {cpu}: cannot run the sender there ({e}); online CPUs are listed in /sys/devices/system/cpu/online")
        })?;
    }
    let plans = std::mem::take(&mut job.plans);
    let auto = plans.len() > 1 || !job.skipped.is_empty();
    let mut skipped = std::mem::take(&mut job.skipped);
    for (i, plan) in plans.iter().enumerate() {
        match attempt(plan, &mut job, gate) {
            Attempt::Ran(r) => {
                let r = *r;
                if auto && r.is_ok() {
                    let why = if skipped.is_empty() {
                        "the fastest candidate".to_string()
                    } else {
                        skipped.join("; ")
                    };
                    crate::errln!("upktgen: --backend auto chose {} ({why})", plan.kind.name());
                }
                return r;
            }
            Attempt::Unavailable(e) if i + 1 < plans.len() => {
                skipped.push(format!("{} unavailable: {e:#}", plan.kind.name()));
            }
            Attempt::Unavailable(e) => return Err(e),
        }
    }
    bail!("no backend to try")
}

/// A backend that could not be set up (auto moves on), or the result of running one.
enum Attempt {
    Unavailable(anyhow::Error),
    Ran(Box<Result<JobDone>>),
}

/// Sets up the plan's backend and, if that works, runs it once the gate opens.
fn attempt(plan: &Plan, job: &mut SendJob, gate: &Gate) -> Attempt {
    fn go<B: TxBackend>(b: Result<B>, job: &mut SendJob, gate: &Gate) -> Attempt {
        match b {
            Ok(b) => Attempt::Ran(Box::new(measure(b, job, gate))),
            Err(e) => Attempt::Unavailable(e),
        }
    }
    let frame = job.frames.prefill();
    let ifindex = job.ifindex;
    let priority = job.priority;
    let open = move || -> std::io::Result<PacketSocket> {
        let s = PacketSocket::open(ifindex)?;
        if priority != 0 {
            s.set_priority(priority)?;
        }
        Ok(s)
    };
    match plan.kind {
        BackendKind::AfPacket => {
            let cfg = AfPacketConfig {
                batch: plan.batch,
                sndbuf: job.sndbuf,
                qdisc_bypass: job.qdisc_bypass.unwrap_or(false),
            };
            let b = open()
                .and_then(|s| AfPacket::new(s, &frame, cfg))
                .context("af_packet: setting up the AF_PACKET socket");
            go(b, job, gate)
        }
        BackendKind::TxRing => {
            let b = plan
                .ring
                .context("tx_ring without a ring configuration")
                .and_then(|ring| {
                    let cfg = TxRingConfig {
                        ring,
                        batch: plan.batch,
                        qdisc_bypass: job.qdisc_bypass.unwrap_or(true),
                    };
                    open()
                        .and_then(|s| TxRing::new(s, &frame, cfg))
                        .context("tx_ring: setting up the PACKET_MMAP TX ring")
                });
            go(b, job, gate)
        }
        BackendKind::AfXdp => {
            let b = plan
                .ring
                .context("af_xdp without a ring configuration")
                .and_then(|ring| {
                    let cfg = AfXdpConfig {
                        ring,
                        batch: plan.batch,
                        queue: u32::from(job.queue),
                        zerocopy: None,
                    };
                    let q = job.queue;
                    AfXdp::new(ifindex, &frame, cfg).map_err(|e| {
                        let hint = match e.raw_os_error() {
                            Some(libc::EAFNOSUPPORT | libc::ENOPROTOOPT) => {
                                "the kernel needs CONFIG_XDP_SOCKETS (5.4+); "
                            }
                            Some(libc::EINVAL) => "is there such a queue? ",
                            Some(libc::EBUSY) => "another AF_XDP socket or program holds it; ",
                            _ => "",
                        };
                        anyhow!(
                            "af_xdp: cannot set up an AF_XDP socket on queue {q} ({e}); {hint}--backend tx_ring or af_packet work everywhere"
                        )
                    })
                });
            go(b, job, gate)
        }
        BackendKind::XdpLive => {
            let b = plan
                .xdp_live
                .context("xdp_live without its configuration")
                .and_then(|mut cfg| {
                    cfg.ifindex = ifindex;
                    let Frames::Fast(fast) = &job.frames else {
                        bail!("xdp_live: the frames need per-packet work its program does not do");
                    };
                    let frame = xdp_live::first_frame(fast.template(), fast.stream());
                    Ok(XdpLive::new(&frame, cfg)?)
                });
            go(b, job, gate)
        }
        BackendKind::Auto => Attempt::Unavailable(anyhow!("auto is resolved before sending")),
    }
}

/// Waits for the start, then runs one send loop.
fn measure<B: TxBackend>(mut backend: B, job: &mut SendJob, gate: &Gate) -> Result<JobDone> {
    let info = backend.info();
    if !gate.ready_and_wait() {
        bail!("called off: another sender could not start");
    }
    let t0 = sys::monotonic_ns();
    let outcome = sender::run(&mut backend, &mut job.frames, &job.limits, &job.stop)?;
    let t1 = sys::monotonic_ns();
    let walk = job.frames.generator().cloned();
    Ok((info, outcome, walk, t0, t1))
}
