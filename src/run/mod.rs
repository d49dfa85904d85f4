//! `upktgen run` and a script's `pgctrl start`: a [`plan::RunPlan`] executed. The plan has
//! decided everything; here the target is made (the lab) or probed (the devices,
//! [`device`]), the frames are built for each device, the senders run on their threads
//! ([`threads`]) with the system sampled around them, and the report is assembled.

pub mod agent;
pub(crate) mod device;
#[doc(hidden)]
pub mod fake_agent;
mod observe;
pub(crate) mod pcap;
pub(crate) mod plan;
pub mod rx;
pub(crate) mod session;
pub mod streams;
pub(crate) mod threads;

use crate::agent::far::RemoteReceiver;
use crate::caps::{self, Cap};
use crate::cli::RunArgs;
use crate::exit::Exit;
use crate::lab::receiver::LabReceiver;
use crate::lab::{self, Lab};
use crate::pg::Flag;
use crate::pg::generate::Generator;
use crate::report::run::{
    Addressing, Flags, Reconciliation, RunReport, StartReport, Target, ThreadReport, ThreadStart,
};
use crate::sample::IfaceCounters;
use crate::sender::{Limits, SendOutcome, StopReason};
use crate::stream::{self, FrameSource, Frames};
use crate::wire::MacAddr;
use anyhow::{Result, anyhow, bail};
use device::{Device, check_frame_fits};
use plan::{RunPlan, SenderPlan, SenderSpec};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use threads::{SendJob, SenderRun};

/// A finished sender.
pub struct SenderDone {
    pub spec: SenderSpec,
    pub info: crate::backend::BackendInfo,
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

/// Runs `upktgen run`.
pub fn run(a: &RunArgs, stop: &Arc<AtomicBool>) -> Result<Exit> {
    if let Some(path) = &a.config {
        let cfg = plan::streams::read(path)?;
        if plan::streams::both_ways_in_lab(&cfg) {
            // The lab outlives the runs on its ends.
            let (plans, _lab) = streams::plan_in_lab(a, &cfg, path)?;
            return run_ports(plans, stop);
        }
    }
    let mut plans = RunPlan::each_from_args(a)?;
    if plans.len() > 1 {
        return run_ports(plans, stop);
    }
    let plan = plans.remove(0);
    if let Some(p) = &plan.pcap {
        return pcap::write(&plan, p, stop);
    }
    let output = plan.output;
    let metrics = plan.metrics.start()?;
    let Some(r) = execute_with(plan, stop, metrics.as_ref(), None)? else {
        return Ok(Exit::Interrupted);
    };
    if let Some(m) = &metrics {
        m.finish_run(&r.report);
    }
    if output.json {
        crate::out::println(crate::schema::to_pretty(crate::schema::RUN, &r.report)?)?;
    } else {
        crate::out::print(r.report.text(output.per_cpu))?;
    }
    if let Some(m) = &metrics {
        m.linger(stop);
    }
    if let Some((what, why)) = r.report.missing.first() {
        // The report is out, whole but for this part: the failure is the last word.
        bail!("the {what} failed after the send: {why} (the report above lacks its part)");
    }
    Ok(if r.interrupted {
        Exit::Interrupted
    } else {
        Exit::Done
    })
}

/// A config whose flows leave from several ports, or from one port to several: one run per
/// leg (a transmitting port to one receiving port), side by side; each report printed, then every flow and port, or (`--json`) one document of them
/// all. With `--metrics-listen`, one endpoint serves every port's run, each run's series
/// labelled by its port.
fn run_ports(plans: Vec<RunPlan>, stop: &Arc<AtomicBool>) -> Result<Exit> {
    let json = plans.first().is_some_and(|p| p.output.json);
    // Bound before anything is sent: a bad address stops the run first.
    let metrics = match plans.first() {
        Some(p) => p.metrics.start()?,
        None => None,
    };
    let scopes: Vec<crate::metrics::Scope> = plans.iter().map(streams::scope_of).collect();
    if let Some(m) = &metrics {
        m.begin_parts();
    }
    let legs = match streams::start(plans, stop, metrics.as_ref()) {
        // Ctrl-C while the ports were being set up: nothing sent, as for one port.
        Err(e) if e.is::<streams::StoppedBeforeSending>() => return Ok(Exit::Interrupted),
        r => r?,
    };
    if let Some(m) = &metrics {
        m.parts_running();
    }
    let results = legs.into_iter().map(streams::Leg::wait).collect::<Vec<_>>();
    let mut done = Vec::new();
    let mut interrupted = false;
    for (r, scope) in results.into_iter().zip(scopes) {
        let Some(r) = r? else {
            interrupted = true;
            continue;
        };
        interrupted |= r.interrupted;
        done.push((scope, r.report));
    }
    if let Some(m) = &metrics {
        let runs: Vec<_> = done.iter().map(|(s, r)| (s, r)).collect();
        m.finish_parts(&runs);
    }
    let reports: Vec<&RunReport> = done.iter().map(|(_, r)| r).collect();
    if reports.is_empty() {
        // Stopped before any port sent: nothing to report, as for one port.
        return Ok(Exit::Interrupted);
    }
    if json {
        let doc = crate::report::streams::PortsDoc::new(&reports)?;
        crate::out::println(crate::schema::to_pretty(crate::schema::RUN_PORTS, &doc)?)?;
    } else {
        for r in &reports {
            crate::out::print(r.text(false))?;
            crate::out::print("\n")?;
        }
        let runs: Vec<_> = reports.iter().filter_map(|r| r.streams.as_ref()).collect();
        crate::out::print(crate::report::streams::PortsRun::new(&runs).text())?;
    }
    if let Some(m) = &metrics {
        m.linger(stop);
    }
    if let Some((what, why)) = reports.iter().find_map(|r| r.missing.first()) {
        // The reports are out, whole but for this part: the failure is the last word.
        bail!("the {what} failed after the send: {why} (the report above lacks its part)");
    }
    Ok(if interrupted {
        Exit::Interrupted
    } else {
        Exit::Done
    })
}

/// Where the senders run: the lab made for the run (removed when this is dropped), or the
/// current namespace.
struct Site {
    lab: Option<Lab>,
    /// The senders' network namespace (None: the current one).
    ns: Option<PathBuf>,
}

impl Site {
    /// Checks the privileges the target needs and makes the lab.
    fn open(plan: &RunPlan, stop: &AtomicBool) -> Result<Site> {
        match &plan.target {
            plan::Target::Device(d) => {
                caps::require(&[Cap::NetRaw], &format!("sending on {d}"))?;
                // A config's port in a namespace is sent on from inside it.
                let ns = plan
                    .streams
                    .as_ref()
                    .and_then(plan::streams::StreamsPlan::tx_netns);
                if ns.is_some() {
                    caps::require(
                        &[Cap::SysAdmin],
                        &format!("sending on {d} in its namespace"),
                    )?;
                }
                Ok(Site { lab: None, ns })
            }
            plan::Target::Lab(l) => {
                caps::require(
                    &[Cap::SysAdmin, Cap::NetAdmin, Cap::NetRaw],
                    "the private lab (network namespaces and a veth pair)",
                )?;
                let lab = Lab::create_opts(l.rx_mode, l.peer_napi, l.queues)?;
                // netif_receive: the senders inject into veth-rx, in the receiving namespace.
                let ns = Some(if l.inject {
                    lab.rx_path()
                } else {
                    lab.tx_path()
                });
                Ok(Site { lab: Some(lab), ns })
            }
            plan::Target::DutLab(l, d) => {
                caps::require(
                    &[Cap::SysAdmin, Cap::NetAdmin, Cap::NetRaw],
                    "the DUT lab (network namespaces and veth pairs)",
                )?;
                let lab = Lab::create_dut_until(l.rx_mode, l.peer_napi, l.queues, d, stop)?;
                let ns = Some(lab.tx_path());
                Ok(Site { lab: Some(lab), ns })
            }
        }
    }

    /// Each distinct device of the senders, probed once.
    fn probe(&self, senders: &[SenderPlan]) -> Result<Vec<Device>> {
        let mut devices: Vec<Device> = Vec::new();
        for s in senders {
            let name = s.spec.cfg.device();
            if !devices.iter().any(|d| d.name == name) {
                let mut dev = Device::probe(name, self.ns.as_deref())?;
                if let Some(l) = &self.lab {
                    dev.info.tx_queues = l.queues;
                    if s.backends.iter().any(crate::backend::BackendPlan::injects) {
                        // Into veth-rx as veth-tx would send them: from the lab's sender.
                        let tx = plan::lab_sender();
                        (dev.info.mac, dev.info.ipv4) = (tx.mac, tx.ipv4);
                    }
                }
                devices.push(dev);
            }
        }
        Ok(devices)
    }
}

fn device_of<'a>(devices: &'a [Device], name: &str) -> Result<&'a Device> {
    devices
        .iter()
        .find(|d| d.name == name)
        .ok_or_else(|| anyhow!("{name}: not probed"))
}

/// Runs the plan's senders at once, each on its own thread: every backend is set up first,
/// then the system is sampled and all start together; the report adds them up. None when
/// stopped before anything was sent.
pub fn execute(plan: RunPlan, stop: &Arc<AtomicBool>) -> Result<Option<RunResult>> {
    execute_with(plan, stop, None, None)
}

/// [`execute`], feeding a metrics endpoint while it runs: the site opened, the jobs built,
/// then a session ([`session`]) of the plan's observers around the send.
fn execute_with(
    mut plan: RunPlan,
    stop: &Arc<AtomicBool>,
    metrics: Option<&crate::metrics::Endpoint>,
    live: Option<&streams::LiveSlot>,
) -> Result<Option<RunResult>> {
    let site = match Site::open(&plan, stop) {
        Ok(s) => s,
        // Stopped during the DUT's set-up: an interruption, said so, not a failure.
        Err(e)
            if e.downcast_ref::<lab::LabError>()
                .is_some_and(lab::LabError::is_interrupted) =>
        {
            crate::errln!("upktgen: {e:#}");
            return Ok(None);
        }
        Err(e) => return Err(e),
    };
    let devices = site.probe(&plan.senders)?;
    let inject = plan.injects();
    if inject {
        // netif_receive: unless dst_mac says otherwise, the device's own MAC, so that the
        // stack takes the frames as its host's (PACKET_HOST). In the lab the probed MAC
        // stands for the lab's sender: veth-rx's is known.
        for s in &mut plan.senders {
            if s.spec.cfg.dst_mac == MacAddr::default() {
                s.spec.cfg.dst_mac = match &site.lab {
                    Some(_) => lab::RX_MAC,
                    None => device_of(&devices, s.spec.cfg.device())?.info.mac,
                };
            }
        }
    }
    if stop.load(Ordering::Relaxed) {
        return Ok(None);
    }
    let (mut jobs, uses_random) = jobs(&plan, &devices)?;
    let tally = jobs.first().and_then(|j| match &j.frames {
        Frames::Multi(m) => Some(m.tally()),
        _ => None,
    });
    // The live lines show what the senders say they sent, counted as the Result counts it:
    // an interface counts other bytes (veth: 46 of a 60-byte frame), and injected frames
    // (netif_receive) not at all.
    let progress: Vec<_> = jobs
        .iter_mut()
        .map(|j| {
            let p = Arc::new(crate::sender::Progress::default());
            j.limits.progress = Some(Arc::clone(&p));
            p
        })
        .collect();
    if let Some(f) = &plan.irq {
        let snap = crate::sample::InterruptsSnapshot::read()?;
        if !snap.matches(f) {
            bail!(
                "--irq {f}: no line of /proc/interrupts matches (look at `cat /proc/interrupts` for the device's queue names)"
            );
        }
    }
    let lab = site.lab.as_ref();
    let (observers, rx_progress) = observers(&plan, &site, &devices, progress, metrics)?;
    if let (Some(slot), Some(t)) = (live, &tally) {
        slot.fill(Arc::clone(t), rx_progress);
    }
    let (ns, start_at) = (site.ns.clone(), plan.start_at);
    let ((ran, outcome), mut parts) = session::observe(
        observers,
        |moments| {
            let ran = threads::run_jobs(ns, jobs, stop, start_at, moments)?;
            // Frames in flight on veth are delivered within the sender's own softirq; a
            // short pause lets any deferred NAPI poll on the receiving end finish before
            // counting.
            std::thread::sleep(std::time::Duration::from_millis(20));
            let outcome = SendOutcome::combine(ran.senders.iter().map(|r| &r.outcome));
            Ok((ran, outcome))
        },
        |(_, outcome)| outcome.result.sent,
    )?;
    let system = parts
        .system
        .take()
        .ok_or_else(|| anyhow!("the system's CPU and interrupts were not sampled"))?;
    // One per device, in the run's order (a thread's devices shared one sender).
    let mut senders: Vec<(usize, usize, SenderDone)> = plan
        .senders
        .into_iter()
        .zip(ran.senders)
        .enumerate()
        .flat_map(|(i, (p, r))| done(p, r).into_iter().map(move |(at, d)| (at, i, d)))
        .collect();
    senders.sort_by_key(|(at, _, _)| *at);
    let sender_of: Vec<usize> = senders.iter().map(|(_, i, _)| *i).collect();
    let senders: Vec<SenderDone> = senders.into_iter().map(|(_, _, d)| d).collect();
    let interrupted = outcome.stop_reason == StopReason::Interrupted;
    let first = &senders[0].spec.cfg;
    let tx_if = parts.tx_iface.unwrap_or_default();
    let mut reconciliation =
        Reconciliation::new(outcome.result.sent, &tx_if, parts.rx_iface.as_ref());
    if parts.receive_path.is_some() {
        // Nothing was transmitted: the interface counts do not reconcile with sent.
        (reconciliation.lost, reconciliation.vanished) = (None, None);
    }
    let start = start_at.map(|at| start_report(at, ran.late_ns, &senders));
    let streams = match (&plan.streams, &tally) {
        (Some(s), Some(t)) => {
            let rx = parts
                .rx_analysis
                .as_ref()
                .and_then(|a| a.receiver.streams.as_ref());
            Some(
                crate::report::streams::StreamsRun::new(
                    s.config.display().to_string(),
                    (
                        format!("{} ({})", s.tx_port.0, s.tx_port.1),
                        format!("{} ({})", s.rx_port.0, s.rx_port.1),
                    ),
                    (&s.ids, &s.names),
                    t,
                    rx,
                )
                .expecting(rx, &s.expected)
                .sharing(s.iface.legs)
                .on_queues(queue_runs(s, &senders)),
            )
        }
        _ => None,
    };
    let report = RunReport {
        host: crate::report::hostname(),
        version: crate::report::VERSION.into(),
        target: report_target(&devices, lab, inject),
        backend: senders[0].info.clone(),
        addressing: addressing(first, &device_of(&devices, first.device())?.info),
        flags: Flags {
            udp_csum: first.has(Flag::Udpcsum),
            no_timestamp: first.has(Flag::NoTimestamp),
        },
        seed: uses_random.then_some(plan.seed),
        // A config's queues each send their streams' count: the run's is their sum.
        count: if plan.streams.is_some() {
            total_count(senders.iter().map(|d| d.spec.cfg.count))
        } else {
            first.count
        },
        delay_ns: first.delay,
        reconciliation,
        tx_iface: tx_if,
        rx_iface: parts.rx_iface,
        outcome,
        threads: thread_reports(&senders, &sender_of),
        system,
        rx_analysis: parts.rx_analysis,
        xdp_sink_packets: lab.and_then(Lab::rx_sink_count),
        peer: parts.peer,
        dut: parts.dut,
        start,
        streams,
        receive_path: parts.receive_path,
        missing: parts.missing,
        extra: parts.extra,
    };
    drop(site);
    Ok(Some(RunResult {
        report,
        senders,
        interrupted,
    }))
}

/// A port's queues as the report shows them (none with one sender): queue i's streams, its
/// rate, and what sender i sent.
fn queue_runs(
    s: &plan::streams::StreamsPlan,
    senders: &[SenderDone],
) -> Vec<crate::report::streams::QueueRun> {
    if senders.len() < 2 || senders.len() != s.queues.len() {
        return Vec::new();
    }
    s.queues
        .iter()
        .zip(senders)
        .map(|(q, d)| crate::report::streams::QueueRun {
            sender: d.spec.cfg.ifname.clone(),
            ids: q.streams.iter().map(|&k| s.ids[k]).collect(),
            pps: q.pps,
            tx_frames: d.outcome.result.sent,
        })
        .collect()
}

/// The plan's observers, in the order they start and finish: the far receiver first (it
/// receives before anything is sent), the DUT's and the interfaces' counters, the lab's
/// receiver, the receive path of injected frames, and last the live lines and the metrics
/// endpoint (which show what the others count).
/// A run's observers, in order.
type Observers<'a> = Vec<Box<dyn session::Observer + 'a>>;

fn observers<'a>(
    plan: &'a RunPlan,
    site: &'a Site,
    devices: &'a [Device],
    sent_progress: Vec<Arc<crate::sender::Progress>>,
    metrics: Option<&crate::metrics::Endpoint>,
) -> Result<(Observers<'a>, Option<Arc<crate::rx::recv::RxProgress>>)> {
    let lab = site.lab.as_ref();
    // Made first: the far receiver receives before anything is set up here.
    let far = match &plan.far {
        Some(f) => Some(RemoteReceiver::start(&f.transport, &f.dev, &f.rx_args)?),
        None => None,
    };
    if let Some(f) = &far
        && let Some(c) = &f.started().choice
    {
        crate::errln!(
            "upktgen: peer {}: {}",
            f.peer_name(),
            crate::text::printable(c)
        );
    }
    // The system's accounting first: it finishes first, nearest to the stop.
    let mut list: Vec<Box<dyn session::Observer + 'a>> =
        vec![Box::new(observe::System::new(plan.irq.clone()))];
    list.push(Box::new(observe::Interfaces::open(
        site.ns.as_deref(),
        lab,
        devices,
    )?));
    let lab_rx = match (lab, &plan.rx) {
        (Some(l), Some(rx)) => Some(LabReceiver::start(&l.rx_path(), lab_rx_config(rx))?),
        _ => None,
    };
    // The far receiver's totals, read each interval when live lines or metrics show them,
    // and every KEEPALIVE at least, shown or not: the far agent's watchdog ends a session
    // that hears nothing (a lost management link) instead of receiving for hours.
    let lo = &plan.live;
    let shown = metrics.is_some()
        || crate::live::choose(lo.live, lo.no_live, lo.json_lines, lo.interval)?.is_some();
    let keepalive = crate::agent::far::KEEPALIVE;
    let far = match far {
        Some(f) => Some(observe::Far::new(
            f,
            if shown {
                lo.interval.min(keepalive)
            } else {
                keepalive
            },
            devices[0].name.clone(),
            plan.streams.as_ref().map(|s| s.names.clone()),
        )?),
        None => None,
    };
    let receiver = lab_rx
        .as_ref()
        .map(LabReceiver::progress)
        .or_else(|| far.as_ref().map(observe::Far::progress));
    let receiver_progress = receiver.clone();
    if let Some(r) = lab_rx {
        list.push(Box::new(observe::LabRx(r)));
    }
    // After the lab's receiver: the far end's account replaces it.
    if let Some(f) = far {
        list.push(Box::new(f));
    }
    if let Some(l) = lab {
        list.push(Box::new(observe::Dut {
            lab: l,
            before: None,
            line_before: None,
        }));
    }
    if plan.injects() {
        let first = &plan.senders[0].spec.cfg;
        list.push(Box::new(observe::ReceivePath {
            ns: site.ns.clone(),
            dev: device_of(devices, first.device())?,
            cfg: first,
            lab,
            before: None,
        }));
    }
    let tx_watch = crate::live::Watched {
        iface: devices[0].name.clone(),
        netns: site.ns.clone(),
    };
    let rx_watch = lab.map(|l| crate::live::Watched {
        iface: lab::RX_IF.to_string(),
        netns: Some(l.rx_path()),
    });
    if let Some(m) = metrics {
        crate::metrics::watch_run(m, &tx_watch, rx_watch.as_ref(), receiver.clone())?;
    }
    let count = total_count(
        plan.senders
            .iter()
            .flat_map(|s| std::iter::once(&s.spec).chain(&s.joined))
            .map(|d| d.cfg.count),
    );
    if let Some(m) = crate::live::start_for_run(
        &plan.live,
        count,
        tx_watch,
        rx_watch,
        receiver,
        sent_progress,
    )? {
        list.push(Box::new(observe::Live(m)));
    }
    Ok((list, receiver_progress))
}

/// netif_receive: the receive path's account of the device the first sender injected into.
fn receive_path(
    dev: &Device,
    cfg: &crate::pg::DevConfig,
    lab: Option<&Lab>,
    passed: u64,
    (before, after): (&crate::sample::SnmpSnapshot, &crate::sample::SnmpSnapshot),
    counters: &IfaceCounters,
) -> crate::report::receive::ReceivePath {
    // In the lab the frames' source stands in for the device's MAC: veth-rx's is known.
    let own = if lab.is_some() {
        lab::RX_MAC
    } else {
        dev.info.mac
    };
    let mut p = crate::report::receive::ReceivePath::new(
        &dev.name,
        lab.map(|l| l.rx_ns.clone()),
        passed,
        (own, cfg.dst_mac),
        cfg.has(Flag::Ipv6),
        before,
        after,
        counters,
    );
    p.source_is_own = lab.is_none()
        && !cfg.has(Flag::Ipv6)
        && dev.info.ipv4.is_some()
        && (cfg.src_min.is_empty() || cfg.src_min.parse().ok() == dev.info.ipv4);
    p
}

/// Where the frames went, for the report: every device (`a+b`), and the lab's namespaces
/// (the devices are in the receiving one when they `inject`).
fn report_target(devices: &[Device], lab: Option<&Lab>, inject: bool) -> Target {
    Target {
        device: devices
            .iter()
            .map(|d| d.name.as_str())
            .collect::<Vec<_>>()
            .join("+"),
        netns: lab.map(|l| if inject { &l.rx_ns } else { &l.tx_ns }.clone()),
        lab_rx: lab.map(|l| l.rx_mode),
        rx_netns: lab.map(|l| l.rx_ns.clone()),
        stands_for: Vec::new(),
    }
}

/// A finished sender's devices, each with its place in the run: one, or a thread's devices
/// that shared its timeline, each with its own figures ([`SendOutcome::of_part`]).
fn done(p: SenderPlan, r: SenderRun) -> Vec<(usize, SenderDone)> {
    let one = |spec, outcome, walk| SenderDone {
        spec,
        info: r.info.clone(),
        outcome,
        walk,
        started_ns: r.started_ns,
        stopped_ns: r.stopped_ns,
    };
    if p.joined.is_empty() {
        return vec![(p.places[0], one(p.spec, r.outcome.clone(), r.walk.clone()))];
    }
    std::iter::once(p.spec)
        .chain(p.joined)
        .zip(p.places)
        .zip(&r.parts)
        .map(|((spec, at), part)| {
            let outcome = r.outcome.of_part(part);
            (at, one(spec, outcome, part.walk.clone()))
        })
        .collect()
}

/// --start-at in the report: each sender's first send against the instant, and the clock.
fn start_report(at: u64, late_ns: u64, senders: &[SenderDone]) -> StartReport {
    StartReport {
        requested_ns: at,
        requested: crate::start_at::format_rfc3339(at),
        setup_late_ns: late_ns,
        threads: senders
            .iter()
            .map(|s| {
                let o = &s.outcome;
                let started = o.result.sent > 0 || o.stop_reason != StopReason::Interrupted;
                ThreadStart {
                    device: s.spec.cfg.ifname.clone(),
                    first_send_ns: o.start_realtime_ns,
                    error_ns: started.then(|| o.start_realtime_ns as i64 - at as i64),
                }
            })
            .collect(),
        clock: crate::sys::clock::clock_sync().ok(),
    }
}

/// One line per device in the report, when there are several (`sender_of`: the sender
/// thread each device ran on).
fn thread_reports(senders: &[SenderDone], sender_of: &[usize]) -> Vec<ThreadReport> {
    if senders.len() < 2 {
        return Vec::new();
    }
    senders
        .iter()
        .zip(sender_of)
        .map(|(s, &sender)| ThreadReport {
            sender,
            device: s.spec.cfg.ifname.clone(),
            cpu: s.spec.cpu,
            backend: s.info.name,
            detail: s.info.detail.clone(),
            outcome: s.outcome.clone(),
        })
        .collect()
}

/// Refuses senders that would bind one TX queue twice: af_xdp (when it is a sender's only
/// backend) binds its queue modulo the device's, and a second socket on a queue fails at
/// set-up with EBUSY, which says nothing of the cause.
fn check_xdp_queues(plan: &RunPlan, devices: &[Device]) -> Result<()> {
    let mut bound: Vec<(&str, u32)> = Vec::new();
    for s in &plan.senders {
        let [crate::backend::BackendPlan::AfXdp(c)] = s.backends.as_slice() else {
            continue;
        };
        let name = s.spec.cfg.device();
        let dev = device_of(devices, name)?;
        let q = c.queue % u32::from(dev.info.tx_queues.max(1));
        if bound.contains(&(name, q)) {
            let n = plan
                .senders
                .iter()
                .filter(|o| o.spec.cfg.device() == name)
                .count();
            let queues = dev.info.tx_queues;
            bail!(
                "--backend af_xdp: {n} senders on {name}, which has {queues} TX queue{}: an AF_XDP socket binds a queue of its own (give {name} {n} queues: `ethtool -L {name} tx {n}`, or a veth made with `numtxqueues {n} numrxqueues {n}`; or fewer threads, or af_packet or tx_ring, which share queues)",
                if queues == 1 { "" } else { "s" }
            );
        }
        bound.push((name, q));
    }
    Ok(())
}

/// The senders' jobs: each one's frames built for its device (and checked against it), its
/// limits and backends. Also says whether any walk draws random numbers (the report then
/// prints the seed). The first sender's notes are printed.
fn jobs(plan: &RunPlan, devices: &[Device]) -> Result<(Vec<SendJob>, bool)> {
    check_xdp_queues(plan, devices)?;
    let mut jobs = Vec::with_capacity(plan.senders.len());
    let mut uses_random = false;
    let mut tally: Option<Arc<stream::multi::Tally>> = None;
    for (i, s) in plan.senders.iter().enumerate() {
        let cfg = &s.spec.cfg;
        let dev = device_of(devices, cfg.device())?;
        let frames = match (&plan.replay, &plan.streams) {
            (None, None) if !s.joined.is_empty() => device_timeline(plan, s, dev)?,
            (Some(r), _) => {
                r.check_fits(dev.mtu, &dev.name)?;
                Frames::Replay(Box::new(r.clone()))
            }
            (None, Some(s)) => {
                check_frame_fits(cfg, dev.mtu, &dev.name)?;
                // Checked by the plan: the same streams build again, sender i sending queue
                // i's, every queue counting in the port's tally.
                let tally =
                    tally.get_or_insert_with(|| Arc::new(stream::multi::Tally::new(s.specs.len())));
                let all: Vec<usize>;
                let on = match s.queues.get(i) {
                    Some(q) if plan.senders.len() > 1 => &q.streams,
                    _ => {
                        all = (0..s.specs.len()).collect();
                        &all
                    }
                };
                let specs: Vec<_> = on.iter().map(|&k| s.specs[k].clone()).collect();
                let ids: Vec<u16> = on.iter().map(|&k| s.ids[k]).collect();
                let slots: Vec<u32> = on.iter().map(|&k| k as u32).collect();
                Frames::Multi(Box::new(
                    stream::multi::MultiStream::on_queue(
                        &specs,
                        &ids,
                        s.line_bps.map(|b| b as f64),
                        Arc::clone(tally),
                        &slots,
                    )
                    .map_err(|e| anyhow!("{}: {e}", s.config.display()))?,
                ))
            }
            (None, None) => {
                check_frame_fits(cfg, dev.mtu, &dev.name)?;
                // Each sender draws its own random sequence; the seed reproduces all of them.
                pg_frames(plan.seed, &s.spec, s.places[0], dev)?
            }
        };
        uses_random |= match &frames {
            Frames::Devices(d) => d.uses_random(),
            f => f.generator().is_some_and(Generator::uses_random),
        };
        if i == 0 {
            print_notes(s);
            for n in plan.streams.iter().flat_map(|s| &s.notes) {
                crate::errln!("upktgen: note: {n}");
            }
        }
        jobs.push(SendJob {
            backends: s.backends.clone(),
            auto: s.is_auto(),
            ruled_out: s.ruled_out.clone(),
            priority: cfg.skb_priority,
            ifindex: dev.ifindex,
            tx_queues: dev.info.tx_queues,
            frames,
            limits: limits(plan, s),
            cpu: s.spec.cpu,
        });
    }
    Ok((jobs, uses_random))
}

/// A device's frames as its own sender makes them: its walk seeded by its place among the
/// run's devices (each draws its own random sequence; the seed reproduces all of them).
fn pg_frames(seed: u64, spec: &SenderSpec, place: usize, dev: &Device) -> Result<Frames> {
    let cfg = &spec.cfg;
    stream::for_config(
        cfg,
        &dev.info,
        seed.wrapping_add(place as u64),
        spec.cpu.unwrap_or(0) as u16,
    )
    .map_err(|e| anyhow!("{}: {e}", cfg.ifname))
}

/// A thread's devices on one interface as one timeline, each with its own frames and pace.
fn device_timeline(plan: &RunPlan, s: &SenderPlan, dev: &Device) -> Result<Frames> {
    let mut parts = Vec::with_capacity(s.places.len());
    for (spec, &place) in std::iter::once(&s.spec).chain(&s.joined).zip(&s.places) {
        let c = &spec.cfg;
        check_frame_fits(c, dev.mtu, &dev.name)?;
        let timing = stream::devices::Timing {
            count: c.count,
            delay_ns: c.delay,
            burst: c.burst,
            timestamps: !c.has(Flag::NoTimestamp),
        };
        parts.push((pg_frames(plan.seed, spec, place, dev)?, timing));
    }
    let t = stream::devices::DeviceTimeline::new(parts)
        .map_err(|e| anyhow!("{}: {e}", s.spec.cfg.ifname))?;
    Ok(Frames::Devices(Box::new(t)))
}

/// What bounds and paces a sender: its device's count, delay and burst; a timeline of
/// devices paces itself and ends when each has sent its count (the run's count: their sum,
/// or none when any sends until stopped).
fn limits(plan: &RunPlan, s: &SenderPlan) -> Limits {
    let cfg = &s.spec.cfg;
    let mut l = Limits {
        count: cfg.count,
        duration: plan.duration,
        delay_ns: cfg.delay,
        burst: cfg.burst,
        timestamps: !cfg.has(Flag::NoTimestamp),
        progress: None,
    };
    if !s.joined.is_empty() {
        let all = || std::iter::once(&s.spec).chain(&s.joined).map(|d| &d.cfg);
        l.count = total_count(all().map(|c| c.count));
        (l.delay_ns, l.burst) = (0, 1);
        l.timestamps = all().any(|c| !c.has(Flag::NoTimestamp));
    }
    l
}

/// The frames of devices that send `counts` together: 0 (until stopped) when one of them
/// sends until stopped, else their sum, saturating (two counts near 2^64 must not wrap to
/// 0, which would send forever).
fn total_count(counts: impl Iterator<Item = u64>) -> u64 {
    let mut total = 0u64;
    for c in counts {
        if c == 0 {
            return 0;
        }
        total = total.saturating_add(c);
    }
    total
}

/// The lab receiver's configuration: with streams, each counted by its signature, on every
/// protocol (a tap: the streams need not be IPv4 and UDP).
fn lab_rx_config(rx: &plan::RxPlan) -> crate::rx::recv::RxConfig {
    let mut cfg = crate::rx::recv::RxConfig {
        backend: rx.backend,
        ..crate::lab::receiver::config(rx.hist)
    };
    if let Some(names) = &rx.streams {
        cfg.ring.all_frames = true;
        cfg.streams = Some(crate::rx::streams::RxStreams {
            from_start: true,
            shown: names.len(),
            ..crate::rx::streams::RxStreams::new(names.clone())
        });
    }
    cfg
}

/// The device's notes, and one when queue maps cannot apply.
fn print_notes(s: &SenderPlan) {
    let cfg = &s.spec.cfg;
    let mut notes = cfg.range_notes();
    let queue_map = cfg.queue_map_min != 0
        || cfg.queue_map_max != 0
        || cfg.has(Flag::QueueMapRnd)
        || cfg.has(Flag::QueueMapCpu);
    let binds = |b: &crate::backend::BackendPlan| b.binds_a_queue() || b.injects();
    if queue_map && !s.backends.iter().all(binds) {
        notes.push(
            "queue_map_*/QUEUE_MAP_*: a packet socket cannot choose the TX queue per packet; af_packet and tx_ring frames take the queue the kernel picks (XPS, or the hash); af_xdp binds the queue".into(),
        );
    }
    for n in cfg.notes.iter().chain(&notes) {
        crate::errln!("upktgen: note: {n}");
    }
}

/// The report's view of the addresses: single addresses, or `min-max` ranges.
fn addressing(cfg: &crate::pg::DevConfig, dev: &crate::pg::generate::DeviceInfo) -> Addressing {
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

#[cfg(test)]
mod tests {
    use super::total_count;

    #[test]
    fn devices_counts_add_up_without_wrapping() {
        assert_eq!(total_count([200, 600].into_iter()), 800);
        assert_eq!(
            total_count([200, 0, 600].into_iter()),
            0,
            "one sends until stopped"
        );
        // 2^63 + 2^63 would wrap to 0, "until stopped".
        assert_eq!(total_count([1 << 63, 1 << 63].into_iter()), u64::MAX);
        assert_eq!(total_count(std::iter::empty()), 0);
    }
}
