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
use crate::lab::{self, Lab};
use crate::params::{self, Addressing};
use crate::pg::generate::{DeviceInfo, Generator};
use crate::pg::{DevConfig, Flag, XmitMode};
use crate::report::run::{Reconciliation, RunReport, Target};
use crate::rx::lab::LabReceiver;
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

/// Checks made before any privilege is needed: pure validation of the options.
struct Checked {
    /// The transmit paths to try, in order (one unless --backend auto).
    plans: Vec<Plan>,
    /// With --backend auto: candidates the options ruled out, and why.
    ruled_out: Vec<String>,
    /// pktgen's device configuration.
    cfg: DevConfig,
    /// --replay's frames, read and checked.
    replay: Option<crate::replay::ReplayFrames>,
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

fn check_args(a: &RunArgs) -> Result<Checked> {
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
    let (plans, ruled_out) = plans(a, &cfg)?;
    Ok(Checked {
        plans,
        ruled_out,
        cfg,
        replay,
    })
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
    let tags = 4
        * (usize::from(cfg.vlan_id != crate::pg::NO_VLAN)
            + usize::from(cfg.vlan_id != crate::pg::NO_VLAN && cfg.svlan_id != crate::pg::NO_VLAN));
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

/// Runs `upktgen run`.
pub fn run(a: &RunArgs, stop: &Arc<AtomicBool>) -> Result<Exit> {
    let mut c = check_args(a)?;
    if let Some(path) = &a.pcap {
        return crate::replay::write_pcap(a, &c.cfg, path, stop);
    }
    if a.rx_analyze && a.lab_rx == Some(lab::RxMode::Drop) {
        bail!(
            "--rx-analyze needs the frames to reach a socket in the receiving namespace: use --lab-rx stack (its default), not drop"
        );
    }
    if a.dev.is_some() && a.lab_rx.is_some() {
        bail!("--lab-rx: chooses the lab's receiver; with --dev there is no lab");
    }
    if a.rx_analyze && a.dev.is_some() {
        bail!(
            "--rx-analyze: the receiver runs in the lab's receiving namespace; with --dev run `upktgen rx --dev IFACE` on the receiving host"
        );
    }
    let mut lab_guard: Option<Lab> = None;
    let dev = match &a.dev {
        Some(d) => {
            caps::require(&[Cap::NetRaw], &format!("sending on {d}"))?;
            probe_device(d, None)?
        }
        None => {
            caps::require(
                &[Cap::SysAdmin, Cap::NetAdmin, Cap::NetRaw],
                "the private lab (network namespaces and a veth pair)",
            )?;
            let l = Lab::create_with(
                a.lab_rx.unwrap_or(if a.rx_analyze {
                    lab::RxMode::Stack
                } else {
                    lab::RxMode::Drop
                }),
                c.plans.iter().any(|p| p.kind == BackendKind::XdpLive),
            )?;
            let d = probe_device(lab::TX_IF, Some(&l.tx_path()))?;
            lab_guard = Some(l);
            d
        }
    };
    if stop.load(std::sync::atomic::Ordering::Relaxed) {
        return Ok(Exit::Interrupted);
    }
    let cfg = &c.cfg;
    check_frame_fits(cfg, dev.mtu, &dev.name)?;
    let lab = lab_guard.as_ref();
    let seed = a
        .seed
        .unwrap_or_else(|| sys::realtime_ns() ^ u64::from(std::process::id()));
    let dev_info = DeviceInfo {
        mac: MacAddr(dev.mac),
        ipv4: dev.addr4,
        tx_queues: 1,
    };
    let frames = match c.replay.take() {
        Some(r) => {
            r.check_fits(dev.mtu, &dev.name)?;
            Frames::Replay(Box::new(r))
        }
        None => frames::for_config(cfg, &dev_info, seed, a.cpu.unwrap_or(0) as u16)
            .map_err(|e| anyhow!(e))?,
    };
    let addressing = addressing(cfg, &dev_info);
    for n in &cfg.notes {
        eprintln!("upktgen: note: {n}");
    }
    let uses_random = frames.generator().is_some_and(Generator::uses_random);
    let mut tx_reader = NetDevReader::open(dev.netns.as_deref())?;
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

    let limits = Limits {
        count: cfg.count,
        duration: a.duration,
        delay_ns: cfg.delay,
        burst: cfg.burst,
        timestamps: !cfg.has(Flag::NoTimestamp),
    };
    let rx_sink = match lab.filter(|_| a.rx_analyze) {
        Some(l) => Some(LabReceiver::start(
            &l.rx_path(),
            crate::rx::lab::config(a.hist),
        )?),
        None => None,
    };
    let tx0 = tx_reader.read(&dev.name)?;
    let rx0 = match &mut rx_reader {
        Some(r) => Some(r.read(lab::RX_IF)?),
        None => None,
    };
    let live_frame_len = match &frames {
        Frames::Replay(r) => r.prefill().len(),
        _ => cfg.max_frame_len(),
    };
    let job = SendJob {
        plans: c.plans.clone(),
        skipped: c.ruled_out.clone(),
        sndbuf: a.sndbuf,
        qdisc_bypass: a
            .qdisc_bypass
            .or(cfg.xmit_mode.map(|m| m == XmitMode::StartXmit)),
        priority: cfg.skb_priority,
        queue: cfg.queue_map_min,
        ifindex: dev.ifindex,
        frames,
        limits,
        cpu: a.cpu,
        stop: Arc::clone(stop),
    };
    let dev_name = dev.name.clone();
    let live = crate::live::start_for_run(
        a,
        live_frame_len,
        cfg.count,
        crate::live::Watched {
            iface: dev.name.clone(),
            netns: dev.netns.clone(),
        },
        lab.map(|l| crate::live::Watched {
            iface: lab::RX_IF.to_string(),
            netns: Some(l.rx_path()),
        }),
        rx_sink.as_ref().map(LabReceiver::progress),
    )?;
    let m = on_thread_in(dev.netns.clone(), move || send(job))
        .with_context(|| format!("sending on {dev_name}"))?;
    let (info, outcome, sys0, sys1) = (m.info, m.outcome, m.sys0, m.sys1);
    // Frames in flight on veth are delivered within the sender's own softirq; a short
    // pause lets any deferred NAPI poll on the receiving end finish before counting.
    std::thread::sleep(std::time::Duration::from_millis(20));
    let tx1 = tx_reader.read(&dev.name)?;
    let rx1 = match &mut rx_reader {
        Some(r) => Some(r.read(lab::RX_IF)?),
        None => None,
    };

    let system = sys0.delta(&sys1, a.irq.as_deref());
    let tx_if = tx0.delta(&tx1);
    let rx_if = rx0.zip(rx1).map(|(a, b)| a.delta(&b));
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
    let report = RunReport {
        target: Target {
            device: dev.name.clone(),
            netns: lab.map(|l| l.tx_ns.clone()),
            lab_rx: lab.map(|l| l.rx_mode),
            rx_netns: lab.map(|l| l.rx_ns.clone()),
        },
        backend: info,
        addressing,
        flags: params::Flags {
            udp_csum: cfg.has(Flag::Udpcsum),
            no_timestamp: cfg.has(Flag::NoTimestamp),
        },
        seed: uses_random.then_some(seed),
        count: cfg.count,
        delay_ns: cfg.delay,
        reconciliation: Reconciliation::new(outcome.result.sent, &tx_if, rx_if.as_ref()),
        tx_iface: tx_if,
        rx_iface: rx_if,
        outcome,
        system,
        rx_analysis,
        xdp_sink_packets: lab.and_then(Lab::rx_sink_count),
    };
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.text(a.per_cpu));
    }
    drop(lab_guard);
    Ok(if interrupted {
        Exit::Interrupted
    } else {
        Exit::Done
    })
}

/// Everything the sender thread needs, moved into it.
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

/// What the sender thread measured.
struct Measured {
    info: BackendInfo,
    outcome: SendOutcome,
    sys0: SystemSnapshot,
    sys1: SystemSnapshot,
}

/// Runs `f` on a new thread, inside network namespace `ns` when given: sockets, rings and
/// BPF objects a backend creates there belong to that namespace.
fn on_thread_in<T, F>(ns: Option<PathBuf>, f: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T> + Send + 'static,
{
    std::thread::Builder::new()
        .name("upktgen-tx".into())
        .spawn(move || {
            if let Some(p) = &ns {
                netns::setns_net(p)
                    .with_context(|| format!("entering network namespace {}", p.display()))?;
            }
            f()
        })
        .context("starting the sender thread")?
        .join()
        .map_err(|_| anyhow!("the sender thread panicked"))?
}

/// On the sender thread: pin, build the chosen backend, measure.
fn send(mut job: SendJob) -> Result<Measured> {
    if let Some(cpu) = job.cpu {
        sys::pin_to_cpu(cpu).map_err(|e| {
            anyhow!("--cpu {cpu}: cannot run the sender there ({e}); online CPUs are listed in /sys/devices/system/cpu/online")
        })?;
    }
    let plans = std::mem::take(&mut job.plans);
    let auto = plans.len() > 1 || !job.skipped.is_empty();
    let mut skipped = std::mem::take(&mut job.skipped);
    for (i, plan) in plans.iter().enumerate() {
        match attempt(plan, &mut job) {
            Attempt::Ran(r) => {
                let r = *r;
                if auto {
                    let why = if skipped.is_empty() {
                        "the fastest candidate".to_string()
                    } else {
                        skipped.join("; ")
                    };
                    eprintln!("upktgen: --backend auto chose {} ({why})", plan.kind.name());
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
    Ran(Box<Result<Measured>>),
}

/// Sets up the plan's backend and, if that works, measures a run with it.
fn attempt(plan: &Plan, job: &mut SendJob) -> Attempt {
    fn go<B: TxBackend>(b: Result<B>, job: &mut SendJob) -> Attempt {
        match b {
            Ok(b) => Attempt::Ran(Box::new(measure(b, job))),
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
            go(b, job)
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
            go(b, job)
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
                        anyhow!(
                            "af_xdp: cannot set up an AF_XDP socket on queue {q} ({e}); the kernel needs CONFIG_XDP_SOCKETS (5.4+); --backend tx_ring or af_packet work everywhere"
                        )
                    })
                });
            go(b, job)
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
            go(b, job)
        }
        BackendKind::Auto => Attempt::Unavailable(anyhow!("auto is resolved before sending")),
    }
}

/// Samples the system around one send loop.
fn measure<B: TxBackend>(mut backend: B, job: &mut SendJob) -> Result<Measured> {
    let info = backend.info();
    let sys0 = SystemSnapshot::take()?;
    let outcome = sender::run(&mut backend, &mut job.frames, &job.limits, &job.stop)?;
    let sys1 = SystemSnapshot::take()?;
    Ok(Measured {
        info,
        outcome,
        sys0,
        sys1,
    })
}
