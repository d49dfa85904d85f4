//! `upktgen run`: resolve the target (lab or named device), validate everything, sample the
//! system around the send loop, and report.

use crate::backend::af_packet::{AfPacket, AfPacketConfig};
use crate::backend::af_xdp::{AfXdp, AfXdpConfig};
use crate::backend::tx_ring::{TxRing, TxRingConfig};
use crate::backend::xdp_live::{self, XdpLive, XdpLiveConfig};
use crate::backend::{BackendInfo, BackendKind, TxBackend};
use crate::caps::{self, Cap};
use crate::cli::RunArgs;
use crate::lab::{self, Lab};
use crate::params::{self, Addressing};
use crate::report::run::{Reconciliation, RunReport, Target};
use crate::rx::lab::LabReceiver;
use crate::rx::report::RxAnalysis;
use crate::sample::{IfaceCounters, NetDevSnapshot, SystemSnapshot};
use crate::sender::{self, Limits, SendOutcome, StopReason};
use crate::stream::{PortRange, Stream};
use crate::sys::{self, netns, packet::PacketSocket};
use crate::txq::RingConfig;
use crate::wire::{FrameSpec, Udp4Template};
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
    flags: params::Flags,
    delay_ns: u64,
    udp_src: (u16, u16),
    udp_dst: (u16, u16),
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
fn plan_for(
    a: &RunArgs,
    kind: BackendKind,
    flags: &params::Flags,
    udp_src: (u16, u16),
    udp_dst: (u16, u16),
) -> Result<Plan> {
    let xdp_live =
        xdp_live::config_from_args(a, kind, flags, udp_src, udp_dst).map_err(|e| anyhow!(e))?;
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
fn plans(
    a: &RunArgs,
    flags: &params::Flags,
    udp_src: (u16, u16),
    udp_dst: (u16, u16),
) -> Result<(Vec<Plan>, Vec<String>)> {
    if a.backend != BackendKind::Auto {
        return Ok((
            vec![plan_for(a, a.backend, flags, udp_src, udp_dst)?],
            Vec::new(),
        ));
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
        match plan_for(a, k, flags, udp_src, udp_dst) {
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
    let flags = a.flags().map_err(|e| anyhow!(e))?;
    let delay_ns = params::delay_ns(a.delay, a.ratep).map_err(|e| anyhow!(e))?;
    let udp_src = (a.udp_src_min, a.udp_src_max.unwrap_or(a.udp_src_min));
    let udp_dst = (a.udp_dst_min, a.udp_dst_max.unwrap_or(a.udp_dst_min));
    params::check_port_range("udp-src", udp_src.0, udp_src.1).map_err(|e| anyhow!(e))?;
    params::check_port_range("udp-dst", udp_dst.0, udp_dst.1).map_err(|e| anyhow!(e))?;
    params::check_pkt_size(a.pkt_size, None, "").map_err(|e| anyhow!(e))?;
    if a.dev.is_some() {
        if a.dst.is_none() {
            bail!("--dst: required with --dev (the destination IPv4 address to put in the frames)");
        }
        if a.dst_mac.is_none() {
            bail!(
                "--dst-mac: required with --dev (pktgen's default of 00:00:00:00:00:00 is dropped by every receiver)"
            );
        }
    }
    let (plans, ruled_out) = plans(a, &flags, udp_src, udp_dst)?;
    Ok(Checked {
        plans,
        ruled_out,
        flags,
        delay_ns,
        udp_src,
        udp_dst,
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

/// Runs `upktgen run`.
pub fn run(a: &RunArgs, stop: &Arc<AtomicBool>) -> Result<Exit> {
    let c = check_args(a)?;
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
                // An AF_XDP receiver's own program gives veth-rx the NAPI xdp_live needs.
                c.plans.iter().any(|p| p.kind == BackendKind::XdpLive)
                    && !(a.rx_analyze && a.rx_backend != crate::rx::recv::RxBackend::AfPacket),
            )?;
            let d = probe_device(lab::TX_IF, Some(&l.tx_path()))?;
            lab_guard = Some(l);
            d
        }
    };
    if stop.load(std::sync::atomic::Ordering::Relaxed) {
        return Ok(Exit::Interrupted);
    }
    params::check_pkt_size(a.pkt_size, Some(dev.mtu), &dev.name).map_err(|e| anyhow!(e))?;
    let lab = lab_guard.as_ref();
    let addressing = Addressing {
        src_mac: a.src_mac.unwrap_or(crate::wire::MacAddr(dev.mac)),
        dst_mac: a.dst_mac.unwrap_or(lab::RX_MAC),
        src_ip: a
            .src
            .or(dev.addr4)
            .unwrap_or(std::net::Ipv4Addr::UNSPECIFIED),
        dst_ip: a.dst.unwrap_or(lab::RX_IP),
    };
    let template = Udp4Template::new(&FrameSpec {
        dst_mac: addressing.dst_mac,
        src_mac: addressing.src_mac,
        src_ip: addressing.src_ip,
        dst_ip: addressing.dst_ip,
        tos: 0,
        pkt_size: a.pkt_size,
        udp_csum: c.flags.udp_csum,
    })
    .map_err(|e| anyhow!(e))?;
    let stream = Stream::new(
        PortRange::new(c.udp_src.0, c.udp_src.1),
        PortRange::new(c.udp_dst.0, c.udp_dst.1),
    );
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
        count: a.count,
        duration: a.duration,
        delay_ns: c.delay_ns,
        timestamps: !c.flags.no_timestamp,
    };
    let rx_sink = match lab.filter(|_| a.rx_analyze) {
        Some(l) => Some(LabReceiver::start(
            &l.rx_path(),
            crate::rx::recv::RxConfig {
                backend: a.rx_backend,
                ..crate::rx::lab::config(a.hist)
            },
        )?),
        None => None,
    };
    let tx0 = tx_reader.read(&dev.name)?;
    let rx0 = match &mut rx_reader {
        Some(r) => Some(r.read(lab::RX_IF)?),
        None => None,
    };
    let job = SendJob {
        plans: c.plans.clone(),
        skipped: c.ruled_out.clone(),
        sndbuf: a.sndbuf,
        qdisc_bypass: a.qdisc_bypass,
        ifindex: dev.ifindex,
        template,
        stream,
        limits,
        cpu: a.cpu,
        stop: Arc::clone(stop),
    };
    let dev_name = dev.name.clone();
    let live = crate::live::start_for_run(
        a,
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
        flags: c.flags,
        count: a.count,
        delay_ns: c.delay_ns,
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
    ifindex: u32,
    template: Udp4Template,
    stream: Stream,
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
    let frame = job.template.frame().to_vec();
    let ifindex = job.ifindex;
    match plan.kind {
        BackendKind::AfPacket => {
            let cfg = AfPacketConfig {
                batch: plan.batch,
                sndbuf: job.sndbuf,
                qdisc_bypass: job.qdisc_bypass.unwrap_or(false),
            };
            let b = PacketSocket::open(ifindex)
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
                    PacketSocket::open(ifindex)
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
                        queue: 0,
                        zerocopy: None,
                    };
                    AfXdp::new(ifindex, &frame, cfg).map_err(|e| {
                        anyhow!(
                            "af_xdp: cannot set up an AF_XDP socket on queue 0 ({e}); the kernel needs CONFIG_XDP_SOCKETS (5.4+); --backend tx_ring or af_packet work everywhere"
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
                    let frame = xdp_live::first_frame(&job.template, &job.stream);
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
    let outcome = sender::run(
        &mut backend,
        &job.template,
        &mut job.stream,
        &job.limits,
        &job.stop,
    )?;
    let sys1 = SystemSnapshot::take()?;
    Ok(Measured {
        info,
        outcome,
        sys0,
        sys1,
    })
}
