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
    ring: Option<RingConfig>,
    flags: params::Flags,
    delay_ns: u64,
    udp_src: (u16, u16),
    udp_dst: (u16, u16),
    xdp_live: Option<XdpLiveConfig>,
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
    let xdp_live =
        xdp_live::config_from_args(a, &flags, udp_src, udp_dst).map_err(|e| anyhow!(e))?;
    Ok(Checked {
        xdp_live,
        ring: ring_config(a)?,
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
        BackendKind::XdpLive => None,
    }
}

/// The ring and thresholds of a ring backend, validated; None for the others.
fn ring_config(a: &RunArgs) -> Result<Option<RingConfig>> {
    let Some(default) = default_ring(a.backend) else {
        if a.ring.is_some() || a.start_thresh.is_some() || a.stop_thresh != 1 {
            bail!(
                "--ring/--stop-thresh/--start-thresh apply to the ring backends (tx_ring, af_xdp); {}'s queue is the socket send buffer (--sndbuf)",
                a.backend.name()
            );
        }
        return Ok(None);
    };
    let size = a.ring.unwrap_or(default);
    if !size.is_power_of_two() || size > 1 << 16 {
        bail!(
            "--ring {size}: {} needs a power of two from 1 to 65536",
            a.backend.name()
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
            let l = Lab::create_with(a.lab_rx, a.backend == BackendKind::XdpLive)?;
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
    let tx0 = tx_reader.read(&dev.name)?;
    let rx0 = match &mut rx_reader {
        Some(r) => Some(r.read(lab::RX_IF)?),
        None => None,
    };
    let job = SendJob {
        backend: a.backend,
        af_packet: AfPacketConfig {
            batch: usize::from(a.batch.unwrap_or(match a.backend {
                BackendKind::AfXdp => 32,
                _ => 64,
            })),
            sndbuf: a.sndbuf,
            qdisc_bypass: a.qdisc_bypass.unwrap_or(false),
        },
        ring: c.ring,
        xdp_live: c.xdp_live,
        qdisc_bypass: a.qdisc_bypass.unwrap_or(true),
        ifindex: dev.ifindex,
        template,
        stream,
        limits,
        cpu: a.cpu,
        stop: Arc::clone(stop),
    };
    let dev_name = dev.name.clone();
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
    backend: BackendKind,
    af_packet: AfPacketConfig,
    ring: Option<RingConfig>,
    xdp_live: Option<XdpLiveConfig>,
    /// PACKET_QDISC_BYPASS for tx_ring.
    qdisc_bypass: bool,
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
    match job.backend {
        BackendKind::AfPacket => {
            let sock = PacketSocket::open(job.ifindex).context("opening the AF_PACKET socket")?;
            let b = AfPacket::new(sock, job.template.frame(), job.af_packet)
                .context("setting up the af_packet socket")?;
            measure(b, &mut job)
        }
        BackendKind::TxRing => {
            let sock = PacketSocket::open(job.ifindex).context("opening the AF_PACKET socket")?;
            let cfg = TxRingConfig {
                ring: job.ring.context("tx_ring without a ring configuration")?,
                batch: job.af_packet.batch,
                qdisc_bypass: job.qdisc_bypass,
            };
            let b = TxRing::new(sock, job.template.frame(), cfg)
                .context("setting up the PACKET_MMAP TX ring (tx_ring)")?;
            measure(b, &mut job)
        }
        BackendKind::AfXdp => {
            let cfg = AfXdpConfig {
                ring: job.ring.context("af_xdp without a ring configuration")?,
                batch: job.af_packet.batch,
                queue: 0,
                zerocopy: None,
            };
            let b = AfXdp::new(job.ifindex, job.template.frame(), cfg).map_err(|e| {
                anyhow!(
                    "af_xdp: cannot set up an AF_XDP socket on queue 0 ({e}); the kernel needs CONFIG_XDP_SOCKETS (5.4+); --backend tx_ring or af_packet work everywhere"
                )
            })?;
            measure(b, &mut job)
        }
        BackendKind::XdpLive => {
            let mut cfg = job.xdp_live.context("xdp_live without its configuration")?;
            cfg.ifindex = job.ifindex;
            let frame = xdp_live::first_frame(&job.template, &job.stream);
            let b = XdpLive::new(&frame, cfg)?;
            measure(b, &mut job)
        }
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
