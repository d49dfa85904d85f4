//! `run --config FILE`: an OTG config's ports and flows, planned as `run`'s own options say
//! where to send and receive (so every check and default of the plan applies), plus the
//! streams the sender sends and the receiving port counts.
//!
//! The ports' locations become the options a user would give: `lab:tx`/`lab:rx` the
//! private lab (`--lab dut` on the command line puts a device under test between them),
//! an interface `--dev`, a receiving `netns:NAME/IFACE` or `ssh://host/IFACE` `--peer` with
//! `--peer-dev`, a receiving local interface `--rx-dev`. Options that would say it again,
//! and pktgen's frame options (the config describes the frames), are refused.

use super::Refusal;
use crate::cli::RunArgs;
use crate::lab::dut;
use crate::otg::streams::Context;
use crate::otg::{Config, Location};
use crate::stream::multi::MultiStream;
use crate::stream::spec::{Burst, Length, StreamSpec};
use anyhow::{Result, anyhow};
use std::path::PathBuf;

/// The streams of a run (one transmitting port's flows), as the plan resolved them.
#[derive(Debug, Clone)]
pub struct StreamsPlan {
    /// The file they came from.
    pub config: PathBuf,
    /// The flows this port sends.
    pub specs: Vec<StreamSpec>,
    /// Each spec's flow index in the config: its signature id (unique across the ports).
    pub ids: Vec<u16>,
    /// Every flow's name in the config, by stream id (the receiving port's table).
    pub names: Vec<String>,
    /// The ids of every flow the receiving port receives, from any sending port (ascending):
    /// a frame of another stream arriving there is unexpected.
    pub expected: Vec<u16>,
    /// The transmitting port's and the receiving port's names and locations.
    pub tx_port: Port,
    pub rx_port: Port,
    /// The transmitting port's line rate in bits per second, when known ([`line_rate`]: a
    /// percentage and a gap in bytes are reckoned against it).
    pub line_bps: Option<u64>,
    /// Where it comes from.
    pub line_from: Option<LineFrom>,
    /// The port's transmit queues (`-t N`): each a sender thread with its own socket and
    /// timeline of these streams; one queue without -t.
    pub queues: Vec<Queue>,
    /// What the plan decided that the user should hear (printed once, before the send).
    pub notes: Vec<String>,
    /// The transmit queues this leg's senders bind on the sending interface, which the
    /// port's other legs (its flows to other receiving ports) share.
    pub iface: IfaceQueues,
}

/// Where a leg's senders stand among the senders of every leg on their interface (a port
/// sending to several ports is a leg for each, on its one interface): sender `i` of the leg
/// is the interface's sender `first + i` and binds that queue (af_xdp: two sockets cannot
/// bind one queue; af_packet and tx_ring bind none; xdp_live's frames take the CPU's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IfaceQueues {
    /// The legs on the interface (1: the port sends to one port).
    pub legs: u16,
    /// The leg's first sender among the interface's.
    pub first: u16,
    /// Every leg's senders on the interface.
    pub senders: u16,
    /// The queues an AF_XDP sender may bind there (the driver's TX queues), asked when
    /// there are several legs; None: not asked, or not known yet (the
    /// interface is refused where the plan opens it).
    pub queues: Option<u16>,
}

impl IfaceQueues {
    /// One leg alone on its interface, of `senders` senders.
    pub fn alone(senders: u16) -> IfaceQueues {
        IfaceQueues {
            legs: 1,
            first: 0,
            senders,
            queues: None,
        }
    }
}

/// One transmit queue of a port: the streams it sends and the frame rate they add up to.
#[derive(Debug, Clone, PartialEq)]
pub struct Queue {
    /// Indices in the plan's `specs`, ascending (the queue's timeline takes them in that
    /// order).
    pub streams: Vec<usize>,
    /// The sum of their rates, frames per second.
    pub pps: f64,
}

/// A port's streams of rates `pps` (frames per second) spread over `n` transmit queues, a
/// stream on one queue only (its frames and sequence stay in order): the largest rate
/// first onto the least-loaded queue (equal rates in stream order, equally loaded queues
/// the lowest first), so the queues' rates come out as even as the streams allow. At most
/// one queue per stream (`n` above their number gives one each) and at least one.
pub fn split(pps: &[f64], n: usize) -> Vec<Queue> {
    let n = n.min(pps.len()).max(1);
    let mut order: Vec<usize> = (0..pps.len()).collect();
    // Stable: equal rates keep the streams' order.
    order.sort_by(|&a, &b| pps[b].total_cmp(&pps[a]));
    let mut queues = vec![
        Queue {
            streams: Vec::new(),
            pps: 0.0,
        };
        n
    ];
    for i in order {
        let q = (0..n)
            .min_by(|&a, &b| queues[a].pps.total_cmp(&queues[b].pps))
            .unwrap_or(0);
        queues[q].streams.push(i);
        queues[q].pps += pps[i];
    }
    for q in &mut queues {
        q.streams.sort_unstable();
    }
    queues
}

/// A port's name and location.
pub type Port = (String, Location);

impl StreamsPlan {
    /// Whether a stream sends IPv6 (a DUT lab then routes it).
    pub fn has_ipv6(&self) -> bool {
        self.specs.iter().any(|s| {
            s.headers
                .iter()
                .any(|h| matches!(h, crate::stream::spec::Header::Ipv6(_)))
        })
    }

    /// The network namespace the transmitting port is in, when not the current one.
    pub fn tx_netns(&self) -> Option<PathBuf> {
        self.tx_port.1.netns_path()
    }

    /// The count of queue `q`'s sender: its streams' frames when every one ends by a
    /// count, else 0 (it ends when its timeline is empty, at the run's duration or Ctrl-C).
    pub fn queue_count(&self, q: &Queue) -> u64 {
        let specs: Vec<StreamSpec> = q.streams.iter().map(|&i| self.specs[i].clone()).collect();
        count(&specs).unwrap_or(0)
    }
}

/// The config file `path`, read; a refusal of the document as a whole names the file
/// itself, any other its path too.
pub fn read(path: &std::path::Path) -> Result<Config> {
    crate::otg::read_file(path).map_err(|e| match e.why {
        crate::otg::Why::Document(_) => anyhow!("{e}"),
        _ => anyhow!("{}: {e}", path.display()),
    })
}

/// A config's runs, one per transmitting port: the options its ports stand for and its
/// streams; with no config, none (the plan of `a` is `run`'s own).
pub fn apply(a: &RunArgs, seed: u64) -> Result<Option<Vec<(RunArgs, StreamsPlan)>>> {
    let Some(path) = &a.config else {
        return Ok(None);
    };
    apply_config(a, &read(path)?, path, seed).map(Some)
}

/// The options `a` with the config `cfg` (named `path` in messages) planned into them: one
/// run per transmitting port, in the order the flows name them.
pub fn apply_config(
    a: &RunArgs,
    cfg: &Config,
    path: &std::path::Path,
    seed: u64,
) -> Result<Vec<(RunArgs, StreamsPlan)>> {
    apply_config_in(a, cfg, path, seed, None)
}

/// The namespaces of a private lab made for a config whose flows go both ways between
/// lab:tx and lab:rx: each end is then a port in its namespace (veth-tx in `tx_ns`, veth-rx
/// in `rx_ns`) that sends and receives as a `netns:` port does.
#[derive(Debug, Clone, Copy)]
pub struct LabEnds<'a> {
    pub tx_ns: &'a str,
    pub rx_ns: &'a str,
}

/// Whether `cfg`'s flows leave from both ends of the private lab (the run then makes the
/// lab first and plans its ends as [`LabEnds`]).
pub fn both_ways_in_lab(cfg: &Config) -> bool {
    let from_lab = |want: bool| {
        cfg.flows.iter().any(|f| {
            cfg.port(&f.tx_port)
                .is_some_and(|p| p.location == Location::Lab { tx: want })
        })
    };
    from_lab(true) && from_lab(false)
}

/// [`apply_config`], the lab's ends at `lab` when given.
pub fn apply_config_in(
    a: &RunArgs,
    cfg: &Config,
    path: &std::path::Path,
    seed: u64,
    lab: Option<LabEnds>,
) -> Result<Vec<(RunArgs, StreamsPlan)>> {
    refuse_options(a)?;
    if lab.is_some() && a.far.lab == crate::cli::run::LabKind::Dut {
        return Err(Refusal::ConfigBothWaysDut.into());
    }
    if let Some(r) = a.config_rate
        && !(r.is_finite() && (1.0..=1e9).contains(&r))
    {
        return Err(Refusal::ConfigRate {
            given: r.to_string(),
        }
        .into());
    }
    let legs = legs(cfg, lab).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    if legs.len() > 1 && a.config_rate.is_some() {
        return Err(Refusal::ConfigRatePorts.into());
    }
    let mut planned = legs
        .into_iter()
        .map(|l| apply_leg(a, cfg, path, seed, l))
        .collect::<Result<Vec<_>>>()?;
    share_interfaces(&mut planned, interface_queues);
    Ok(planned)
}

/// Each leg's place on its sending interface ([`IfaceQueues`]): the legs of one port (its
/// flows to several receiving ports) take the interface's queues one after the other, in
/// the legs' order, each as many as its senders (`-t N`: N each); `queues_of` tells how many
/// queues an interface has, asked only where several legs share one.
pub(crate) fn share_interfaces(
    legs: &mut [(RunArgs, StreamsPlan)],
    queues_of: impl Fn(&Location) -> Option<u16>,
) {
    for i in 0..legs.len() {
        let at = legs[i].1.tx_port.1.clone();
        if legs[..i].iter().any(|(_, s)| s.tx_port.1 == at) {
            continue;
        }
        let on: Vec<usize> = (i..legs.len())
            .filter(|&k| legs[k].1.tx_port.1 == at)
            .collect();
        let senders: u16 = on.iter().map(|&k| legs[k].0.threads.max(1)).sum();
        let queues = (on.len() > 1).then(|| queues_of(&at)).flatten();
        let mut first = 0u16;
        for &k in &on {
            let n = legs[k].0.threads.max(1);
            legs[k].1.iface = IfaceQueues {
                legs: u16::try_from(on.len()).unwrap_or(u16::MAX),
                first,
                senders,
                queues,
            };
            first = first.saturating_add(n);
        }
    }
}

/// The queues an AF_XDP sender may bind on the interface at `l` (its TX queues), asked of
/// its driver (inside a `netns:` port's
/// namespace; a driver that does not say has one, as the run's probe takes it, and a local
/// interface's sysfs then tells its TX queues); None for an interface that is not there (it
/// is refused where the plan opens it) or a place that is no interface of ours.
fn interface_queues(l: &Location) -> Option<u16> {
    let (iface, ns) = match l {
        Location::Local { iface } => (iface.clone(), None),
        Location::Netns { iface, .. } => (iface.clone(), l.netns_path()),
        _ => return None,
    };
    let local = ns.is_none();
    let name = iface.clone();
    let ask = move || -> std::io::Result<Option<u32>> {
        let tx = crate::sys::ethtool::tx_queues(&name)?;
        let rx = crate::sys::ethtool::rx_queues(&name)?;
        // A sender's socket transmits: its queue is a TX queue, as the run's probe counts
        // them (the kernel takes a queue below the larger of the two counts).
        Ok(tx.or(rx))
    };
    let asked = match ns {
        Some(p) => crate::sys::netns::in_netns(&p, ask),
        None => ask(),
    }
    .ok()?;
    let n = match asked {
        Some(n) => u16::try_from(n).unwrap_or(u16::MAX),
        None if local => crate::run::device::sysfs_tx_queues(&iface).unwrap_or(1),
        None => 1,
    };
    Some(n.max(1))
}

/// One transmitting port's run: `leg`'s flows of `cfg`.
fn apply_leg(
    a: &RunArgs,
    cfg: &Config,
    path: &std::path::Path,
    seed: u64,
    leg: Leg,
) -> Result<(RunArgs, StreamsPlan)> {
    let Leg {
        tx: tx_port,
        rx: rx_port,
        flows,
        neighbour: lab_neighbour,
    } = leg;
    if tx_port.1 == rx_port.1 {
        return Err(Refusal::ConfigSamePort {
            tx: tx_port.0.clone(),
            rx: rx_port.0.clone(),
            location: tx_port.1.to_string(),
        }
        .into());
    }
    let mut e = a.clone();
    e.seed = Some(seed);
    let in_lab = match &tx_port.1 {
        Location::Lab { tx: true } => true,
        // A namespace's interface is sent on from inside it (the plan's tx_netns).
        Location::Local { iface } | Location::Netns { iface, .. } => {
            e.dev = Some(iface.clone());
            false
        }
        other => {
            return Err(Refusal::ConfigTxPort {
                port: tx_port.0.clone(),
                location: other.to_string(),
            }
            .into());
        }
    };
    match &rx_port.1 {
        Location::Lab { tx: false } if in_lab => e.rx_analyze = true,
        // From lab:tx the frames reach lab:rx only: any other receiving port is refused
        // here, in the config's words (not as the options it would stand for).
        Location::Local { iface } if !in_lab => e.far.rx_dev = Some(iface.clone()),
        l @ (Location::Netns { iface, .. } | Location::Ssh { iface, .. }) if !in_lab => {
            e.far.peer = Some(l.peer());
            e.far.peer_dev = Some(iface.clone());
        }
        other => {
            return Err(Refusal::ConfigRxPort {
                port: rx_port.0.clone(),
                location: other.to_string(),
            }
            .into());
        }
    }
    let dut = a.far.lab == crate::cli::run::LabKind::Dut;
    // The next hop an Ethernet destination `auto` goes to: the lab's receiver, or the
    // device under test's ingress.
    let neighbour = match lab_neighbour {
        Some(mac) => Some(mac),
        None => in_lab.then_some(if dut {
            dut::DUT_IN_MAC
        } else {
            crate::lab::RX_MAC
        }),
    };
    // A layer1 speed is the port's line, checked when the config was read; an interface's
    // reported speed reckons percentages and gaps in bytes only (a veth's 10 Gb/s is
    // nominal, and a host may carry more through it), so nothing is refused above it.
    let line = line_rate(cfg, &tx_port);
    let line_bps = line.map(|l| l.bps);
    let cx = Context {
        neighbour,
        line_bps,
        seed,
    };
    // The leg's flows, in the config's order (`flows` is ascending), each in this port's
    // context only.
    let mut specs: Vec<StreamSpec> =
        crate::otg::streams::streams_of(cfg, &cx, flows.iter().copied())
            .map_err(|e| anyhow!("{}: {e}", path.display()))?;
    if let Some(total) = a.config_rate {
        scale_to(&mut specs, total, line_bps.map(|b| b as f64))?;
        if let Some(line) = line.filter(|l| l.from == LineFrom::Layer1).map(|l| l.bps) {
            // The config's own rates were checked against its line; scaled, they are again.
            let wire: f64 = specs
                .iter()
                .map(|s| {
                    spec_pps(s, None).unwrap_or(0.0)
                        * (s.size.mean() + crate::wire::WIRE_OVERHEAD as f64)
                        * 8.0
                })
                .sum();
            if wire > line as f64 * (1.0 + 1e-9) {
                return Err(Refusal::ConfigRateAboveLine {
                    total: total.to_string(),
                    mbps: format!("{:.3}", wire / 1e6),
                    port: tx_port.0.clone(),
                    line_mbps: (line as f64 / 1e6).to_string(),
                }
                .into());
            }
        }
    }
    // Flow indices are below the signature's 65,536 ids: the config's reader bounds them.
    let ids: Vec<u16> = flows.iter().map(|&i| i as u16).collect();
    // Built once here, so a stream the engine cannot send is refused before anything is.
    let frames = MultiStream::signed(&specs, &ids, line_bps.map(|b| b as f64))
        .map_err(|e| anyhow!("{}: {e}", path.display()))?;
    e.pg.items
        .push(("count", count(&specs).unwrap_or(0).to_string()));
    e.pg.items.push(("pkt_size", frames.max_len().to_string()));
    if e.duration.is_none() {
        e.duration = wall_time(&specs);
    }
    // -t N: the streams spread over N queues by rate (every rate is known here: a
    // percentage without a line rate was refused by the build above).
    let rates: Vec<f64> = specs
        .iter()
        .map(|s| spec_pps(s, line_bps.map(|b| b as f64)).unwrap_or(0.0))
        .collect();
    let want = usize::from(a.threads);
    let queues = split(&rates, want);
    let mut notes = Vec::new();
    if let Some(LineRate {
        bps,
        from: LineFrom::Interface,
    }) = line
        && specs
            .iter()
            .any(|s| matches!(s.rate, crate::stream::spec::Rate::Percent(_)))
    {
        notes.push(format!(
            "port {:?}: percentages are of {} Mb/s, {} (the config has no layer1 speed for it)",
            tx_port.0,
            bps / 1_000_000,
            LineFrom::Interface
        ));
    }
    if want > queues.len() {
        // A port sending to several ports has a leg for each: the note names this one's.
        let fans_out = cfg
            .flows
            .iter()
            .any(|f| f.tx_port == tx_port.0 && f.rx_ports.first() != Some(&rx_port.0));
        notes.push(format!(
            "-t {want}: port {:?} sends {} flow{}{}, so {} queue{} (a flow stays on one queue, its frames in order)",
            tx_port.0,
            specs.len(),
            if specs.len() == 1 { "" } else { "s" },
            if fans_out {
                format!(" to port {:?}", rx_port.0)
            } else {
                String::new()
            },
            queues.len(),
            if queues.len() == 1 { "" } else { "s" },
        ));
        e.threads_given = Some(a.threads);
        e.threads = u16::try_from(queues.len()).unwrap_or(u16::MAX);
    }
    let threads = e.threads.max(1);
    let names = cfg.flows.iter().map(|f| f.name.clone()).collect();
    let expected = (0..cfg.flows.len())
        .filter(|&i| cfg.flows[i].rx_ports.first() == Some(&rx_port.0))
        .map(|i| i as u16)
        .collect();
    Ok((
        e,
        StreamsPlan {
            config: path.to_path_buf(),
            specs,
            ids,
            names,
            expected,
            tx_port,
            rx_port,
            line_bps,
            line_from: line.map(|l| l.from),
            iface: IfaceQueues::alone(threads),
            queues,
            notes,
        },
    ))
}

/// A port's line rate and where upktgen learnt it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineRate {
    pub bps: u64,
    pub from: LineFrom,
}

/// Where a port's line rate comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineFrom {
    /// The config's `layer1` entry for the port (its `speed`).
    Layer1,
    /// The speed the port's interface's driver reports (ethtool), when `layer1` names none.
    Interface,
}

impl std::fmt::Display for LineFrom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LineFrom::Layer1 => "the config's layer1 speed",
            LineFrom::Interface => "the speed its driver reports",
        })
    }
}

/// The line rate in bits per second of the port named `name` ([`line_rate`]).
pub fn port_line_bps(cfg: &Config, name: &str) -> Option<u64> {
    cfg.port(name)
        .and_then(|p| line_rate(cfg, &(p.name.clone(), p.location.clone())))
        .map(|l| l.bps)
}

/// Port `port`'s line rate: its `layer1` speed, else what the driver of its interface
/// reports (an interface here or `netns:NAME/IFACE`, asked from inside the namespace; a
/// veth reports 10 Gb/s); none for the private lab's ends (made later, with no speed of
/// their own), a far end, or a driver that reports none.
pub fn line_rate(cfg: &Config, port: &Port) -> Option<LineRate> {
    if let Some(bps) = cfg.line_bps(&port.0) {
        return Some(LineRate {
            bps,
            from: LineFrom::Layer1,
        });
    }
    let (iface, ns) = match &port.1 {
        Location::Local { iface } => (iface.clone(), None),
        l @ Location::Netns { iface, .. } => (iface.clone(), l.netns_path()),
        _ => return None,
    };
    let ask = move || crate::sys::ethtool::link_speed_mbps(&iface);
    let mbps = match ns {
        Some(p) => crate::sys::netns::in_netns(&p, ask),
        None => ask(),
    };
    // An interface that is not there is refused later, where the plan opens it.
    mbps.ok().flatten().map(|m| LineRate {
        bps: u64::from(m) * 1_000_000,
        from: LineFrom::Interface,
    })
}

/// Options that would say again what a config says, and pktgen's frame options.
fn refuse_options(a: &RunArgs) -> Result<()> {
    if let Some((name, _)) = a.pg.items.first() {
        return Err(Refusal::ConfigWithPktgen {
            option: name.replace('_', "-"),
        }
        .into());
    }
    for (given, option) in [
        (a.dev.is_some(), "--dev"),
        (a.far.peer.is_some(), "--peer"),
        (a.far.rx_dev.is_some(), "--rx-dev"),
        (a.rx_analyze, "--rx-analyze"),
        (a.replay.is_some(), "--replay"),
    ] {
        if given {
            return Err(Refusal::ConfigWithOption { option }.into());
        }
    }
    Ok(())
}

/// Why a lab's end and another port are not in one config of several sending ports.
const BESIDE_LAB: &str = "the private lab's ends send to each other only (lab:tx to lab:rx and back): flows from several ports beside them need ports at interfaces or netns:NAME/IFACE";

/// One leg of a config: a transmitting port, the one port that receives these flows, and
/// the flows (their indices in the config). A port sending to several ports is a leg for
/// each, all on its interface.
#[derive(Debug)]
struct Leg {
    tx: Port,
    rx: Port,
    flows: Vec<usize>,
    /// Where an Ethernet destination `auto` goes when the sending port is an end of a lab
    /// made for flows both ways: the other end.
    neighbour: Option<crate::wire::MacAddr>,
}

/// The config's flows grouped by their transmitting and their receiving port (a leg each
/// pair), in the order the flows first name the pairs. A port may send to several ports
/// (a leg for each) and a port may hear several (each leg's receiver counts there); a flow
/// is received at one port; the private lab has one sending end and one receiving end.
/// What does not fit is refused at the flow's path.
fn legs(cfg: &Config, lab: Option<LabEnds>) -> Result<Vec<Leg>, crate::otg::Refusal> {
    use crate::otg::{Path, Refusal as R};
    let at = |i: usize| Path::root().key("flows").index(i).key("tx_rx").key("port");
    if cfg.flows.is_empty() {
        return Err(R::bad(Path::root().key("flows"), "no flow to send"));
    }
    // An end of a lab made for flows both ways is a port in its namespace.
    let place = |l: &Location| match (l, lab) {
        (Location::Lab { tx }, Some(ends)) => Location::Netns {
            netns: (if *tx { ends.tx_ns } else { ends.rx_ns }).to_string(),
            iface: (if *tx {
                crate::lab::TX_IF
            } else {
                crate::lab::RX_IF
            })
            .to_string(),
        },
        (l, _) => l.clone(),
    };
    // The config's reader refuses a flow naming no port; a config made otherwise is refused
    // here the same way.
    let port = |i: usize, name: &str, key: &str| {
        cfg.port(name)
            .map(|p| (p.name.clone(), place(&p.location)))
            .ok_or_else(|| R::bad(at(i).key(key), format!("no port named {name:?}")))
    };
    if lab.is_some() {
        // The lab's ends are joined to each other only.
        for (i, f) in cfg.flows.iter().enumerate() {
            for (key, name) in [("tx_name", &f.tx_port)]
                .into_iter()
                .chain(f.rx_ports.iter().map(|r| ("rx_names", r)))
            {
                if cfg
                    .port(name)
                    .is_some_and(|p| !matches!(p.location, Location::Lab { .. }))
                {
                    return Err(R::unsupported_because(at(i).key(key), BESIDE_LAB));
                }
            }
        }
    }
    let neighbour = |name: &str| match (cfg.port(name).map(|p| &p.location), lab) {
        (Some(Location::Lab { tx: true }), Some(_)) => Some(crate::lab::RX_MAC),
        (Some(Location::Lab { tx: false }), Some(_)) => Some(crate::lab::TX_MAC),
        _ => None,
    };
    let mut legs: Vec<Leg> = Vec::new();
    for (i, f) in cfg.flows.iter().enumerate() {
        let rx_name = match f.rx_ports.as_slice() {
            [] => {
                return Err(R::bad(
                    at(i).key("rx_names"),
                    "no receiving port (upktgen counts every flow at the port that receives it: name one)",
                ));
            }
            [one] => one,
            _ => {
                return Err(R::unsupported_because(
                    at(i).key("rx_names"),
                    "a flow is received at one port (several are not yet)",
                ));
            }
        };
        if let Some(l) = legs
            .iter_mut()
            .find(|l| l.tx.0 == f.tx_port && l.rx.0 == *rx_name)
        {
            l.flows.push(i);
            continue;
        }
        legs.push(Leg {
            tx: port(i, &f.tx_port, "tx_name")?,
            rx: port(i, rx_name, "rx_names")?,
            flows: vec![i],
            neighbour: neighbour(&f.tx_port),
        });
    }
    if lab.is_none() && both_ways_in_lab(cfg) {
        return Err(R::unsupported_because(
            at(legs[1].flows[0]).key("tx_name"),
            "flows both ways in the private lab are sent by `upktgen run` and `upktgen otg`, which make the lab for them; this command takes one transmitting port",
        ));
    }
    let in_lab = |l: &Location| matches!(l, Location::Lab { .. });
    if legs.len() > 1 && legs.iter().any(|l| in_lab(&l.tx.1) || in_lab(&l.rx.1)) {
        // At the first flow that leaves the lab or enters it from elsewhere (lab:tx to a
        // port beside lab:rx too: the lab's sending end reaches lab:rx only).
        let (l, key) = legs
            .iter()
            .find_map(|l| match (in_lab(&l.tx.1), in_lab(&l.rx.1)) {
                (true, false) => Some((l, "rx_names")),
                (false, true) => Some((l, "tx_name")),
                _ => None,
            })
            .unwrap_or((&legs[1], "tx_name"));
        return Err(R::unsupported_because(at(l.flows[0]).key(key), BESIDE_LAB));
    }
    Ok(legs)
}

/// A stream's rate in frames per second: a rate in bits per second (on the wire) or a
/// percentage of `line_bps` at its mean frame size; None for a percentage without a line
/// rate.
pub fn spec_pps(s: &StreamSpec, line_bps: Option<f64>) -> Option<f64> {
    use crate::stream::spec::Rate;
    let wire_bits = (s.size.mean() + crate::wire::WIRE_OVERHEAD as f64) * 8.0;
    match s.rate {
        Rate::Pps(p) => Some(p),
        Rate::Bps(b) => Some(b / wire_bits),
        Rate::Percent(x) => line_bps.map(|l| l * x / 100.0 / wire_bits),
    }
}

/// `--config-rate`: every stream continuous from the run's start, at its share of `total`
/// frames per second (its rate in frames per second over the streams' sum).
pub fn scale_to(
    specs: &mut [StreamSpec],
    total: f64,
    line_bps: Option<f64>,
) -> Result<(), Refusal> {
    let rates = specs
        .iter()
        .map(|s| {
            spec_pps(s, line_bps).ok_or_else(|| Refusal::ConfigRateUnknown {
                stream: s.name.clone(),
            })
        })
        .collect::<Result<Vec<f64>, Refusal>>()?;
    let sum: f64 = rates.iter().sum();
    for (s, r) in specs.iter_mut().zip(rates) {
        s.rate = crate::stream::spec::Rate::Pps(r * total / sum);
        s.length = Length::Continuous;
        s.start_delay_ns = 0;
    }
    Ok(())
}

/// The run's count when every stream ends by a count (their sum, as pktgen's `count`);
/// otherwise none: the send ends when the last stream has ended (the timeline is empty),
/// at --duration, or at Ctrl-C.
fn count(specs: &[StreamSpec]) -> Option<u64> {
    specs.iter().try_fold(0u64, |sum, s| match s.length {
        Length::Packets(n) => Some(sum.saturating_add(n)),
        Length::Bursts(Burst {
            packets,
            count: Some(c),
            ..
        }) => Some(sum.saturating_add(packets.saturating_mul(c))),
        _ => None,
    })
}

/// How late a sender may be with a timed flow's last frames before the run's end cuts them.
const LATE_GRACE_NS: u64 = 50_000_000;

/// The run's wall-clock length when every stream ends by a time (the latest end, its delay
/// included, plus [`LATE_GRACE_NS`]): a flow of `fixed_seconds` lasts that long even when
/// its rate is above what the path carries, as the model means it, instead of sending
/// every frame that was due before its end, late. None when a stream ends by a count or
/// not at all.
fn wall_time(specs: &[StreamSpec]) -> Option<std::time::Duration> {
    specs
        .iter()
        .try_fold(0u64, |end, s| match s.length {
            Length::Duration { ns } => Some(end.max(s.start_delay_ns.saturating_add(ns))),
            _ => None,
        })
        .filter(|&ns| ns > 0)
        .map(|ns| std::time::Duration::from_nanos(ns.saturating_add(LATE_GRACE_NS)))
}

#[cfg(test)]
mod tests;
