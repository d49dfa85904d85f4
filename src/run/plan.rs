//! The Params stage: turns what the user asked for — `upktgen run`'s options, a script's
//! devices at `pgctrl start` — into one [`RunPlan`], with every default resolved once and
//! every refusal made here, before anything needs privileges or touches the system (a
//! `--replay` file is read; nothing else is). The run layer ([`super`]) then only executes
//! the plan. Errors name the option the user gave.

use crate::agent::client::Transport;
use crate::agent::transport::PeerUri;
use crate::backend::{BackendKind, BackendPlan, SenderSlot, TxOptions, ring::RingOptions};
use crate::choice::Choice;
use crate::cli::run::LabKind;
use crate::cli::{LiveArgs, RunArgs, ScriptArgs, TxArgs};
use crate::lab::dut::{self, DutOptions, DutSetup};
use crate::lab::{self, RxMode};
use crate::live::LiveOptions;
use crate::pg::generate::DeviceInfo;
use crate::pg::{CommandError, DevConfig, Flag};
use crate::rx::recv::RxBackend;
use crate::stream::replay::{REPLAY_PARAMS, ReplayFrames, ReplayTiming};
use crate::wire::MacAddr;
use anyhow::Result;
pub use refusal::Refusal;
use std::path::PathBuf;
use std::time::Duration;

/// The seed's packet count: `count` when no --count is given.
pub const DEFAULT_COUNT: u64 = 4_000_000;

/// Where the frames go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A private lab made for the run.
    Lab(LabPlan),
    /// The DUT lab (`--lab dut`): sender -> device under test -> receiver.
    DutLab(LabPlan, DutOptions),
    /// An interface the user named (--dev, or a script's device without --lab), in the
    /// current network namespace.
    Device(String),
}

/// The lab to make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LabPlan {
    pub rx_mode: RxMode,
    /// Give veth-rx the NAPI live frames need (an XDP_PASS program): a backend that may
    /// be used needs it, and no AF_XDP receiver's program will give it.
    pub peer_napi: bool,
    /// TX and RX queues on each end: one per sender.
    pub queues: u16,
    /// `xmit_mode netif_receive`: the senders run in the receiving namespace and inject
    /// into veth-rx's receive path (frames as veth-tx would send them).
    pub inject: bool,
}

/// The far end of a two-ended run (--peer, --rx-dev): its agent's transport, its
/// interface, and `upktgen rx`'s options for its receiver.
#[derive(Debug, Clone)]
pub struct FarPlan {
    pub transport: Transport,
    pub dev: String,
    pub rx_args: Vec<String>,
}

impl FarPlan {
    /// With a config's streams: the far receiver counts each of them, on every protocol
    /// (the streams need not be IPv4 and UDP).
    fn counting(mut self, streams: Option<&streams::StreamsPlan>) -> FarPlan {
        if let Some(s) = streams {
            self.rx_args.push("--all-frames".into());
            for n in &s.names {
                self.rx_args.push("--stream".into());
                self.rx_args.push(n.clone());
            }
        }
        self
    }
}

/// One sender: pktgen's device (the name may carry an `@tag`, as `dev@1`) and the CPU its
/// thread is pinned to.
#[derive(Debug, Clone)]
pub struct SenderSpec {
    pub cfg: DevConfig,
    pub cpu: Option<usize>,
}

/// A sender with its transmit paths: one backend, or for `--backend auto` every candidate
/// the options allow, fastest first.
#[derive(Debug, Clone)]
pub struct SenderPlan {
    pub spec: SenderSpec,
    /// The devices after `spec` that share its sender, one timeline of them all (a
    /// script's devices of one thread on one interface, [`timeline`]); empty for most.
    pub joined: Vec<SenderSpec>,
    /// Where `spec` and each of `joined` stand among the run's devices (the report lists
    /// the devices in that order).
    pub places: Vec<usize>,
    pub backends: Vec<BackendPlan>,
    /// Candidates `auto` ruled out, and why (empty otherwise).
    pub ruled_out: Vec<String>,
}

impl SenderPlan {
    /// Whether `auto` chooses among several (the choice is then reported).
    pub fn is_auto(&self) -> bool {
        self.backends.len() > 1 || !self.ruled_out.is_empty()
    }
}

/// The receiver in the lab (--rx-analyze).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RxPlan {
    pub backend: RxBackend,
    pub hist: bool,
    /// Count these streams by their signature (names by stream id).
    pub streams: Option<Vec<String>>,
}

/// `--pcap FILE`: write the frames instead of sending them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PcapPlan {
    pub path: PathBuf,
    /// Frames to write (never 0).
    pub count: u64,
    /// --dev, whose addresses the frames take (read without privileges).
    pub dev: Option<String>,
}

/// How the report is printed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Output {
    pub json: bool,
    pub per_cpu: bool,
}

/// One run, decided.
#[derive(Debug, Clone)]
pub struct RunPlan {
    pub target: Target,
    pub senders: Vec<SenderPlan>,
    /// --replay's frames, read and checked (every sender sends them).
    pub replay: Option<ReplayFrames>,
    /// The random draws' seed: --seed, or a fresh one (printed in the report when used).
    pub seed: u64,
    pub duration: Option<Duration>,
    /// --irq: count only matching /proc/interrupts lines.
    pub irq: Option<String>,
    pub output: Output,
    pub live: LiveOptions,
    pub rx: Option<RxPlan>,
    /// Some: write a pcap file instead of sending (then `senders` holds one, unsent).
    pub pcap: Option<PcapPlan>,
    /// --metrics-listen / --metrics-linger (`run` only).
    pub metrics: crate::metrics::MetricsArgs,
    /// --peer / --rx-dev: the receiver at the far end.
    pub far: Option<FarPlan>,
    /// --start-at: the senders start at this CLOCK_REALTIME instant, ns since the epoch.
    pub start_at: Option<u64>,
    /// `--config`: the streams the sender sends and the receiving port counts.
    pub streams: Option<streams::StreamsPlan>,
}

impl RunPlan {
    /// Whether the frames go into a receive path (`xmit_mode netif_receive`) instead of out
    /// of a device: the backends the plan chose say it, for every part of the run.
    pub fn injects(&self) -> bool {
        self.senders
            .iter()
            .any(|s| s.backends.iter().any(BackendPlan::injects))
    }

    /// `upktgen run`'s plan, threads placed on the CPUs this process may use.
    pub fn from_args(a: &RunArgs) -> Result<RunPlan> {
        RunPlan::from_args_on(a, &crate::sys::allowed_cpus())
    }

    /// [`RunPlan::from_args`] with the CPUs of the affinity mask given (for tests). A
    /// config whose flows leave from several ports is refused (see [`RunPlan::each_from_args_on`]).
    pub fn from_args_on(a: &RunArgs, cpus: &[usize]) -> Result<RunPlan> {
        let mut plans = RunPlan::each_from_args_on(a, cpus)?;
        if plans.len() > 1 {
            return Err(Refusal::ConfigPorts.into());
        }
        Ok(plans.remove(0))
    }

    /// `upktgen run`'s plans: one, or with a config one per transmitting port (each its own
    /// sender and receiving port, run side by side).
    pub fn each_from_args(a: &RunArgs) -> Result<Vec<RunPlan>> {
        RunPlan::each_from_args_on(a, &crate::sys::allowed_cpus())
    }

    /// [`RunPlan::each_from_args`] with the CPUs of the affinity mask given (for tests).
    pub fn each_from_args_on(a: &RunArgs, cpus: &[usize]) -> Result<Vec<RunPlan>> {
        // A config's ports stand for the options that say where: planned as those.
        let seed = a.seed.unwrap_or_else(fresh_seed);
        match streams::apply(a, seed)? {
            Some(legs) => RunPlan::legs(a, legs, cpus, seed),
            None => Ok(vec![RunPlan::prepared(a, cpus, None, seed)?]),
        }
    }

    /// The plans of the config `cfg` (named `name` in messages; an OTG server's
    /// set_config), one per transmitting port, with `run`'s options `a` (which must not say
    /// where: the config's ports do).
    pub fn from_config(
        a: &RunArgs,
        cfg: &crate::otg::Config,
        name: &std::path::Path,
        lab: Option<streams::LabEnds>,
    ) -> Result<Vec<RunPlan>> {
        let seed = a.seed.unwrap_or_else(fresh_seed);
        let legs = streams::apply_config_in(a, cfg, name, seed, lab)?;
        RunPlan::legs(a, legs, &crate::sys::allowed_cpus(), seed)
    }

    /// The plans of a config's transmitting ports (`legs`, planned from options `a`), their
    /// sender threads placed on `cpus`.
    fn legs(
        a: &RunArgs,
        mut legs: Vec<(RunArgs, streams::StreamsPlan)>,
        cpus: &[usize],
        seed: u64,
    ) -> Result<Vec<RunPlan>> {
        let placed = port_cpus(a, &mut legs, cpus)?;
        legs.into_iter()
            .zip(placed)
            .map(|((e, s), cpus)| RunPlan::prepared(&e, &cpus, Some(s), seed))
            .collect()
    }

    /// The plan of options `a` (a config's ports already planned into them, its streams
    /// `streams`) with `seed`.
    fn prepared(
        a: &RunArgs,
        cpus: &[usize],
        streams: Option<streams::StreamsPlan>,
        seed: u64,
    ) -> Result<RunPlan> {
        let in_lab = a.dev.is_none();
        check_replay_args(a)?;
        let far = far_plan(a)?;
        let dut = dut_options(a)?;
        let ifname = a.dev.as_deref().unwrap_or(lab::TX_IF);
        let mut cfg = dev_config(a, ifname, in_lab && dut.is_none())?;
        if dut.is_some() {
            fill_dut_destination(&mut cfg);
        }
        let replay = load_replay(a)?;
        if let Some(r) = &replay {
            cfg.count = r.count(cfg.count, a.replay_loops.unwrap_or(0));
        }
        if !in_lab && replay.is_none() && streams.is_none() {
            if cfg.dst_min.is_empty() && !cfg.has(Flag::Ipv6) {
                return Err(Refusal::DevNeedsDst.into());
            }
            // netif_receive: the device's own MAC, filled in once it is probed.
            if cfg.dst_mac == MacAddr::default() && !injects(&cfg) {
                return Err(Refusal::DevNeedsDstMac.into());
            }
        }
        cfg.check_start()?;
        let pcap = match &a.pcap {
            Some(path) => Some(pcap_plan(a, &cfg, path)?),
            None => None,
        };
        if pcap.is_some() && a.start_at.is_some() {
            return Err(Refusal::StartAtWithPcap.into());
        }
        let start_at = start_at(a.start_at.as_deref(), crate::sys::realtime_ns())?;
        // --pcap writes one sender's frames: -t does not apply.
        let specs = if pcap.is_some() {
            vec![SenderSpec { cfg, cpu: a.cpu }]
        } else {
            thread_specs(a, &cfg, cpus, streams.as_ref())?
        };
        let knobs = Knobs {
            dev: a.dev.clone(),
            tx: &a.tx,
            xdp_live_plain: a.xdp_live_plain,
            streams: streams.is_some(),
            shared: streams.as_ref().filter(|s| s.iface.legs > 1),
            lab_rx: a.lab_rx,
            rx: a.rx_analyze.then_some(RxPlan {
                backend: a.rx_backend,
                hist: a.hist,
                streams: streams.as_ref().map(|s| s.names.clone()),
            }),
        };
        let (target, senders) = knobs.plan(timeline::alone(specs), replay.is_some())?;
        let target = match (target, dut) {
            (Target::Lab(l), Some(_)) if l.inject => return Err(Refusal::InjectInDutLab.into()),
            (Target::Lab(l), Some(mut d)) => {
                // Live frames need NAPI where they land: the DUT's ingress.
                d.ingress_napi = senders
                    .iter()
                    .any(|s| s.backends.iter().any(BackendPlan::needs_peer_napi));
                d.ipv6 = senders.iter().any(|s| s.spec.cfg.has(Flag::Ipv6))
                    || streams.as_ref().is_some_and(streams::StreamsPlan::has_ipv6);
                Target::DutLab(l, d)
            }
            (t, _) => t,
        };
        Ok(RunPlan {
            target,
            senders,
            replay,
            seed,
            duration: a.duration,
            irq: a.irq.clone(),
            output: Output {
                json: a.json,
                per_cpu: a.per_cpu,
            },
            live: live_options(&a.live),
            rx: knobs.rx,
            pcap,
            metrics: a.metrics.clone(),
            far: far.map(|f| f.counting(streams.as_ref())),
            start_at,
            streams,
        })
    }

    /// The plan of a script's `pgctrl start`: its devices as `specs` (checked, and mapped
    /// to the lab with --lab), with `upktgen script`'s options. Without --lab the target is
    /// the devices themselves, in the current network namespace.
    pub fn from_script(a: &ScriptArgs, specs: Vec<SenderSpec>) -> Result<RunPlan> {
        let dev = if !a.lab {
            Some(
                specs
                    .first()
                    .ok_or(Refusal::NoSender)?
                    .cfg
                    .device()
                    .to_string(),
            )
        } else {
            None
        };
        let knobs = Knobs {
            dev,
            tx: &a.tx,
            xdp_live_plain: false,
            streams: false,
            shared: None,
            lab_rx: a.lab_rx,
            rx: None,
        };
        // A thread's devices on one interface: one sender, one timeline.
        let (target, senders) = knobs.plan(timeline::groups(specs, a.tx.backend), false)?;
        Ok(RunPlan {
            target,
            senders,
            replay: None,
            seed: a.seed.unwrap_or_else(fresh_seed),
            duration: a.duration,
            irq: None,
            output: Output {
                json: a.json,
                per_cpu: false,
            },
            live: LiveOptions {
                no_live: a.no_live,
                ..LiveOptions::default()
            },
            rx: None,
            pcap: None,
            metrics: crate::metrics::MetricsArgs::default(),
            far: None,
            start_at: start_at(a.start_at.as_deref(), crate::sys::realtime_ns())?,
            streams: None,
        })
    }

    /// The sending end's namespace is a lab's.
    pub fn in_lab(&self) -> Option<&LabPlan> {
        match &self.target {
            Target::Lab(l) | Target::DutLab(l, _) => Some(l),
            Target::Device(_) => None,
        }
    }
}

/// What `run` and `script` share of the plan: the transmit path and the target.
struct Knobs<'a> {
    dev: Option<String>,
    tx: &'a TxArgs,
    xdp_live_plain: bool,
    /// The frames are a config's streams.
    streams: bool,
    /// A config's leg whose sending interface other legs share (its port sends to several
    /// ports): its senders take the queues after the earlier legs' there.
    shared: Option<&'a streams::StreamsPlan>,
    lab_rx: Option<RxMode>,
    rx: Option<RxPlan>,
}

impl Knobs<'_> {
    fn plan(
        &self,
        groups: Vec<timeline::Group>,
        replay: bool,
    ) -> Result<(Target, Vec<SenderPlan>)> {
        if groups.is_empty() {
            return Err(Refusal::NoSender.into());
        }
        let o = TxOptions {
            batch: self.tx.batch,
            ring: RingOptions {
                size: self.tx.ring.ring,
                stop_thresh: self.tx.ring.stop_thresh,
                start_thresh: self.tx.ring.start_thresh,
            },
            sndbuf: self.tx.sndbuf,
            qdisc_bypass: self.tx.qdisc_bypass,
            xdp_live_plain: self.xdp_live_plain,
            replay,
            streams: self.streams,
        };
        let n = groups.len();
        let devices = groups.iter().map(|g| g.specs.len()).sum();
        let inject = groups
            .iter()
            .flat_map(|g| &g.specs)
            .filter(|s| injects(&s.cfg))
            .count();
        if inject > 0 && inject < devices {
            return Err(Refusal::MixedXmitModes { inject, n: devices }.into());
        }
        let mut senders = groups
            .into_iter()
            .enumerate()
            .map(|(index, g)| {
                let mut specs = g.specs.into_iter();
                let spec = specs.next().ok_or(Refusal::NoSender)?;
                let joined: Vec<SenderSpec> = specs.collect();
                // On an interface that other legs share: the interface's sender `first + i`.
                let (index, of) = match self.shared {
                    Some(s) => (
                        usize::from(s.iface.first) + index,
                        usize::from(s.iface.senders).max(n),
                    ),
                    None => (index, n),
                };
                let slot = SenderSlot {
                    index,
                    senders: of,
                    cpu: spec.cpu,
                };
                let kind = self
                    .tx
                    .backend
                    .unwrap_or_else(|| BackendKind::default_for(&spec.cfg));
                let (mut backends, mut ruled_out) =
                    backends(kind, self.dev.is_none(), &o, &spec.cfg, slot)?;
                if let Some(s) = self.shared {
                    leg_queue(s, index, &mut backends, &mut ruled_out)?;
                }
                if !joined.is_empty() {
                    timeline::rule_out_one_frame_backends(&mut backends, &mut ruled_out)?;
                }
                Ok(SenderPlan {
                    spec,
                    joined,
                    places: g.places,
                    backends,
                    ruled_out,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let target = self.target(&senders)?;
        if matches!(&target, Target::Lab(l) if l.inject) {
            // The lab's receiving end takes the frames: veth-rx stands for the device.
            for s in &mut senders {
                s.spec.cfg.ifname = match s.spec.cfg.ifname.split_once('@') {
                    Some((_, tag)) => format!("{}@{tag}", lab::RX_IF),
                    None => lab::RX_IF.to_string(),
                };
            }
        }
        Ok((target, senders))
    }

    fn target(&self, senders: &[SenderPlan]) -> Result<Target> {
        if self.rx.is_some() && self.lab_rx == Some(RxMode::Drop) {
            return Err(Refusal::RxAnalyzeWithDropReceiver.into());
        }
        if let Some(d) = &self.dev {
            if self.lab_rx.is_some() {
                return Err(Refusal::LabRxWithDev.into());
            }
            if self.rx.is_some() {
                return Err(Refusal::RxAnalyzeWithDev.into());
            }
            return Ok(Target::Device(d.clone()));
        }
        let inject = senders
            .iter()
            .any(|s| s.backends.iter().any(BackendPlan::injects));
        if inject {
            if self.lab_rx == Some(RxMode::Drop) {
                return Err(Refusal::InjectWithDropReceiver.into());
            }
            if self.rx.is_some() {
                return Err(Refusal::InjectWithRxAnalyze.into());
            }
        }
        let rx_mode = self.lab_rx.unwrap_or(if self.rx.is_some() || inject {
            RxMode::Stack
        } else {
            RxMode::Drop
        });
        // An AF_XDP receiver's own program gives veth-rx the NAPI xdp_live needs. Only when
        // af_xdp is asked for by name: `auto` may fall back to af_packet, and veth-rx must
        // then still have NAPI (with the lab's program in place, auto's af_xdp cannot
        // attach and falls back at once).
        let receiver_gives_napi = self
            .rx
            .as_ref()
            .is_some_and(|r| r.backend == RxBackend::AfXdp);
        let peer_napi = senders
            .iter()
            .any(|s| s.backends.iter().any(BackendPlan::needs_peer_napi))
            && !receiver_gives_napi;
        Ok(Target::Lab(LabPlan {
            rx_mode,
            peer_napi,
            queues: u16::try_from(senders.len()).unwrap_or(u16::MAX).max(1),
            inject,
        }))
    }
}

/// The backend plans for `kind`: one, or for `auto` every candidate the options allow,
/// fastest first, with the candidates ruled out and why.
fn backends(
    kind: BackendKind,
    in_lab: bool,
    o: &TxOptions,
    cfg: &DevConfig,
    slot: SenderSlot,
) -> Result<(Vec<BackendPlan>, Vec<String>)> {
    if injects(cfg) {
        // Only live frames reach a receive path: one backend, or a refusal.
        let p = BackendPlan::new(kind.injecting()?, o, cfg, slot)
            .map_err(|e| Refusal::InjectRefused(e.to_string()))?;
        return Ok((vec![p], Vec::new()));
    }
    if kind != BackendKind::Auto {
        let p = BackendPlan::new(kind, o, cfg, slot)?;
        return Ok((vec![p], Vec::new()));
    }
    let mut out = Vec::new();
    let mut refused = Vec::new();
    for &k in kind.candidates(in_lab) {
        match BackendPlan::new(k, o, cfg, slot) {
            Ok(p) => out.push(p),
            Err(e) => refused.push(format!("{} ruled out: {e}", k.name())),
        }
    }
    if out.is_empty() {
        return Err(Refusal::NoBackend(refused.join("; ")).into());
    }
    Ok((out, refused))
}

/// A config's leg whose interface other legs share (`s`), its sender `index` among the
/// interface's: an AF_XDP socket binds a queue of its own, so where the interface has no
/// such queue af_xdp is refused (asked for by name) or ruled out (`auto`: the next
/// candidate sends).
fn leg_queue(
    s: &streams::StreamsPlan,
    index: usize,
    backends: &mut Vec<BackendPlan>,
    ruled_out: &mut Vec<String>,
) -> Result<()> {
    let Some(have) = s.iface.queues else {
        return Ok(());
    };
    if index < usize::from(have) || !backends.iter().any(BackendPlan::binds_a_queue) {
        return Ok(());
    }
    let why = Refusal::LegQueues {
        port: s.tx_port.0.clone(),
        location: s.tx_port.1.to_string(),
        legs: usize::from(s.iface.legs),
        senders: usize::from(s.iface.senders),
        queues: usize::from(have),
    };
    if backends.iter().all(BackendPlan::binds_a_queue) {
        return Err(why.into());
    }
    backends.retain(|b| !b.binds_a_queue());
    ruled_out.push(format!("af_xdp ruled out: {why}"));
    Ok(())
}

/// Whether the device injects into its receive path (`xmit_mode netif_receive`).
pub fn injects(cfg: &DevConfig) -> bool {
    cfg.xmit_mode == Some(crate::pg::XmitMode::NetifReceive)
}

/// --start-at TIME against the wall clock's `now_ns`: the instant, refused in the past and
/// beyond [`crate::start_at::MAX_AHEAD`].
pub fn start_at(s: Option<&str>, now_ns: u64) -> Result<Option<u64>> {
    s.map(|s| crate::start_at::parse(s, now_ns).map_err(|e| Refusal::StartAt(e.to_string()).into()))
        .transpose()
}

/// A seed for a run that gave none.
fn fresh_seed() -> u64 {
    crate::sys::realtime_ns() ^ u64::from(std::process::id())
}

/// The live statistics the options ask for.
pub fn live_options(l: &LiveArgs) -> LiveOptions {
    LiveOptions {
        live: l.live,
        no_live: l.no_live,
        json_lines: l.json_lines,
        interval: l.interval,
    }
}

/// The lab's receiving end as the frames' destination, where the configuration names none.
/// The DUT lab's destination: the receiver behind the DUT, through the DUT's ingress MAC.
pub fn fill_dut_destination(c: &mut DevConfig) {
    if c.dst_min.is_empty() && !c.has(Flag::Ipv6) {
        c.dst_min = dut::DUT_RX_IP.to_string();
    }
    if c.has(Flag::Ipv6) {
        if c.dst6.is_unspecified() && c.dst6_min.is_unspecified() {
            c.dst6 = dut::DUT_RX_IP6;
        }
        if c.src6.is_unspecified() {
            c.src6 = dut::TX_IP6;
        }
    }
    if c.dst_mac == MacAddr::default() {
        c.dst_mac = dut::DUT_IN_MAC;
    }
}

/// --peer / --rx-dev: the far receiver, checked.
fn far_plan(a: &RunArgs) -> Result<Option<FarPlan>> {
    let f = &a.far;
    let (uri, dev) = match (&f.peer, &f.peer_dev, &f.rx_dev) {
        (Some(u), Some(d), None) => (u.clone(), d.clone()),
        (None, None, Some(d)) => (PeerUri::Local, d.clone()),
        (None, None, None) => return Ok(None),
        // clap refuses the other combinations.
        _ => return Err(Refusal::PeerDevPairing.into()),
    };
    let what = if f.rx_dev.is_some() {
        "--rx-dev"
    } else {
        "--peer"
    };
    if a.dev.is_none() {
        return Err(Refusal::FarEndWithoutDev { what }.into());
    }
    if a.pcap.is_some() {
        return Err(Refusal::FarEndWithPcap { what }.into());
    }
    if dev.is_empty() || dev.contains(['/', ' ']) {
        return Err(Refusal::FarDevName { what, dev }.into());
    }
    let mut rx_args = vec![
        "--rx-backend".to_string(),
        a.rx_backend.name().to_string(),
        // upktgen numbers every sender's packets from 1.
        "--expect-first".into(),
        "1".into(),
    ];
    if a.hist {
        rx_args.push("--hist".into());
    }
    Ok(Some(FarPlan {
        transport: Transport {
            uri,
            agent: f.peer_agent.clone(),
            ssh_config: f.ssh_config.clone(),
        },
        dev,
        rx_args,
    }))
}

/// --lab dut and its set-up steps, checked.
fn dut_options(a: &RunArgs) -> Result<Option<DutOptions>> {
    let f = &a.far;
    let setup: Vec<DutSetup> = f
        .dut_setup
        .iter()
        .cloned()
        .map(DutSetup::Command)
        .chain(f.dut_setup_file.iter().cloned().map(DutSetup::File))
        .collect();
    if f.lab != LabKind::Dut {
        if !setup.is_empty() || f.dut_setup_timeout.is_some() {
            return Err(Refusal::DutSetupWithoutDut.into());
        }
        if f.dut_delay.is_some() {
            return Err(Refusal::DutDelayWithoutDut.into());
        }
        return Ok(None);
    }
    if let Some(d) = f.dut_delay
        && d > crate::lab::delay::MAX_DELAY
    {
        return Err(Refusal::DutDelayTooLong(d).into());
    }
    if a.dev.is_some() {
        return Err(Refusal::DutLabWithDev.into());
    }
    for p in &f.dut_setup_file {
        match crate::input::check_regular(p) {
            Ok(()) => {}
            Err(crate::input::ReadError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Refusal::NoDutSetupFile(p.display().to_string()).into());
            }
            Err(e) => {
                return Err(Refusal::DutSetupFileNotRegular {
                    file: p.display().to_string(),
                    what: e.to_string(),
                }
                .into());
            }
        }
    }
    Ok(Some(DutOptions {
        setup,
        setup_timeout: f.dut_setup_timeout.unwrap_or(dut::DEFAULT_SETUP_TIMEOUT),
        delay: f.dut_delay,
        ..DutOptions::default()
    }))
}

pub fn fill_lab_destination(c: &mut DevConfig) {
    if c.dst_min.is_empty() && !c.has(Flag::Ipv6) {
        c.dst_min = lab::RX_IP.to_string();
    }
    if c.dst_mac == MacAddr::default() {
        c.dst_mac = lab::RX_MAC;
    }
}

/// The lab's sending end as the frames' source (its MAC and address), for what is built
/// without a lab (--pcap, a script's `Current:` section).
pub fn lab_sender() -> DeviceInfo {
    DeviceInfo {
        mac: lab::TX_MAC,
        ipv4: Some(lab::TX_IP),
        tx_queues: 1,
    }
}

/// A pktgen parameter of the command line that the device language refused, named as an
/// option.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionError {
    #[error("--{0} and --{1} both set the packet rate: give one of them")]
    TwoRates(&'static str, &'static str),
    /// `name`: the parameter's (with `_`), `value` as given.
    #[error("--{} {value}: {error}", .name.replace('_', "-"))]
    Pktgen {
        name: &'static str,
        value: String,
        error: CommandError,
    },
}

/// The device configuration the options describe: pktgen's defaults but the seed's count,
/// then every pktgen parameter in command-line order; in the lab, the destination defaults
/// to the lab's receiving end.
pub fn dev_config(
    a: &RunArgs,
    ifname: &str,
    lab: bool,
) -> std::result::Result<DevConfig, OptionError> {
    let mut c = DevConfig::new(ifname);
    c.count = DEFAULT_COUNT;
    let rates: Vec<&'static str> = ["delay", "rate", "ratep"]
        .into_iter()
        .filter(|n| a.pg.has(n))
        .collect();
    if rates.len() > 1 {
        return Err(OptionError::TwoRates(rates[0], rates[1]));
    }
    // `rate` is Mb/s of min_pkt_size-byte frames, computed when it is applied (as in the
    // kernel); on the command line, where option order reads as irrelevant, it comes last
    // so that it uses the size given anywhere on the line.
    let (rates, rest): (Vec<_>, Vec<_>) = a.pg.items.iter().partition(|(n, _)| *n == "rate");
    for (name, value) in rest.into_iter().chain(rates) {
        c.set(name, value).map_err(|error| OptionError::Pktgen {
            name,
            value: value.clone(),
            error,
        })?;
    }
    if lab {
        fill_lab_destination(&mut c);
    }
    Ok(c)
}

/// The pktgen parameters of `run`'s options, checked as `run` checks them (for a sweep's
/// points).
pub fn check_pktgen_params(a: &RunArgs) -> std::result::Result<(), OptionError> {
    let ifname = a.dev.as_deref().unwrap_or(lab::TX_IF);
    dev_config(a, ifname, a.dev.is_none()).map(|_| ())
}

/// The senders `-t N` asks for: one per thread, named `dev@i` as the kernel's sample scripts
/// name them, pinned to the i-th CPU of `cpus` (counting from --cpu's), each with its share
/// of the rate so the total is what was asked. With one thread: the device itself, on --cpu.
/// More threads than CPUs need --allow-oversubscribe. A config's streams are not split
/// evenly: thread i sends queue i's streams (`count` their frames), each counted by its
/// signature, so the lab's receiver tells the threads' streams apart.
fn thread_specs(
    a: &RunArgs,
    cfg: &DevConfig,
    cpus: &[usize],
    streams: Option<&streams::StreamsPlan>,
) -> Result<Vec<SenderSpec>> {
    let n = usize::from(a.threads);
    if n == 0 {
        return Err(Refusal::NoThreads.into());
    }
    if n == 1 {
        return Ok(vec![SenderSpec {
            cfg: cfg.clone(),
            cpu: a.cpu,
        }]);
    }
    if a.rx_analyze && streams.is_none() {
        return Err(Refusal::RxAnalyzeWithThreads(n).into());
    }
    if cpus.is_empty() {
        return Err(Refusal::NoCpu(n).into());
    }
    if n > cpus.len() && !a.allow_oversubscribe {
        return Err(Refusal::TooManyThreads {
            n: a.threads_given.map_or(n, usize::from),
            cpus: cpus.to_vec(),
        }
        .into());
    }
    let first = match a.cpu {
        Some(c) => cpus
            .iter()
            .position(|&x| x == c)
            .ok_or_else(|| Refusal::NotAllowedCpu {
                cpu: c,
                cpus: cpus.to_vec(),
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
            if let Some(q) = streams.and_then(|s| s.queues.get(i).map(|q| (s, q))) {
                c.count = q.0.queue_count(q.1);
            }
            SenderSpec {
                cfg: c,
                cpu: Some(cpus[(first + i) % cpus.len()]),
            }
        })
        .collect())
}

/// The CPUs each of a config's legs (`legs`: a transmitting port and one receiving port
/// each; a port sending to several ports is a leg for each) places its threads on, in
/// order: with several legs of several threads (`-t N`, N for each leg), leg k's threads on
/// the CPUs after leg k-1's (from --cpu's, or the first), every thread on a CPU of its own
/// unless --allow-oversubscribe; otherwise `cpus` for each, as for one port. A leg of one
/// thread stays where `-t 1` puts it.
fn port_cpus(
    a: &RunArgs,
    legs: &mut [(RunArgs, streams::StreamsPlan)],
    cpus: &[usize],
) -> Result<Vec<Vec<usize>>> {
    let threads: Vec<usize> = legs.iter().map(|(e, _)| usize::from(e.threads)).collect();
    if legs.len() < 2 || threads.iter().all(|&t| t <= 1) || cpus.is_empty() {
        return Ok(vec![cpus.to_vec(); legs.len()]);
    }
    let total: usize = threads.iter().sum();
    if total > cpus.len() && !a.allow_oversubscribe {
        let mut ports: Vec<&str> = legs.iter().map(|(_, s)| s.tx_port.0.as_str()).collect();
        ports.sort_unstable();
        ports.dedup();
        let on = if ports.len() == legs.len() {
            format!("{} sending ports", legs.len())
        } else {
            format!(
                "{} legs of {} sending port{} (a leg for each port a port sends to, N threads each)",
                legs.len(),
                ports.len(),
                if ports.len() == 1 { "" } else { "s" }
            )
        };
        return Err(Refusal::PortsTooManyThreads {
            n: usize::from(a.threads),
            on,
            legs: legs.len(),
            total,
            cpus: cpus.to_vec(),
        }
        .into());
    }
    // From --cpu's place among the CPUs (one not among them is refused by thread_specs).
    let base = match a.cpu {
        Some(c) => match cpus.iter().position(|&x| x == c) {
            Some(p) => p,
            None => return Ok(vec![cpus.to_vec(); legs.len()]),
        },
        None => 0,
    };
    let mut offset = base;
    Ok(legs
        .iter_mut()
        .zip(threads)
        .map(|((e, _), t)| {
            let mine: Vec<usize> = (0..cpus.len())
                .map(|i| cpus[(offset + i) % cpus.len()])
                .collect();
            if t > 1 {
                // Its first thread on the first of its CPUs.
                e.cpu = a.cpu.map(|_| mine[0]);
                offset += t;
            }
            mine
        })
        .collect())
}

/// Option checks for --replay: pktgen's frame parameters do not apply to recorded frames.
fn check_replay_args(a: &RunArgs) -> Result<()> {
    if a.replay.is_none() {
        return Ok(());
    }
    let follow = a.replay_timing == Some(ReplayTiming::File);
    if a.replay_speed.is_some() && !follow {
        return Err(Refusal::ReplaySpeedWithoutTiming.into());
    }
    if follow
        && let Some((name, _)) =
            a.pg.items
                .iter()
                .find(|(n, _)| ["delay", "ratep", "burst"].contains(n))
    {
        return Err(Refusal::PacingWithFileTiming(name.to_string()).into());
    }
    for (name, _) in &a.pg.items {
        if *name == "rate" {
            return Err(Refusal::RateWithReplay.into());
        }
        if !REPLAY_PARAMS.contains(name) {
            return Err(Refusal::FrameParamWithReplay {
                name: name.replace('_', "-"),
                allowed: REPLAY_PARAMS
                    .iter()
                    .map(|p| format!("--{}", p.replace('_', "-")))
                    .collect::<Vec<_>>()
                    .join(", "),
            }
            .into());
        }
    }
    Ok(())
}

/// --replay's frames, read, checked and paced as the options say (None without --replay).
fn load_replay(a: &RunArgs) -> Result<Option<ReplayFrames>> {
    let Some(path) = &a.replay else {
        return Ok(None);
    };
    let mut r = ReplayFrames::load(path)?;
    if a.replay_timing == Some(ReplayTiming::File) {
        r.follow_file_timing(a.replay_speed.unwrap_or(1.0))
            .map_err(|e| Refusal::ReplayTiming {
                path: path.display().to_string(),
                why: e.to_string(),
            })?;
    }
    Ok(Some(r))
}

/// --pcap's frames to write: --pcap-count, else count (never 0, never a delay that sends
/// nothing).
fn pcap_plan(a: &RunArgs, cfg: &DevConfig, path: &std::path::Path) -> Result<PcapPlan> {
    let count = a.pcap_count.unwrap_or(cfg.count);
    if count == 0 {
        return Err(Refusal::PcapCountZero.into());
    }
    if cfg.delay == u64::MAX {
        return Err(Refusal::PcapNeverSends(cfg.delay).into());
    }
    Ok(PcapPlan {
        path: path.to_path_buf(),
        count,
        dev: a.dev.clone(),
    })
}

mod refusal;
pub mod streams;
#[cfg(test)]
mod tests;
pub mod timeline;
