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

/// The streams of a run, as the plan resolved them.
#[derive(Debug, Clone)]
pub struct StreamsPlan {
    /// The file they came from.
    pub config: PathBuf,
    /// Stream `i` is the config's flow `i`, signed with id `i`.
    pub specs: Vec<StreamSpec>,
    /// The flows' names, by stream id.
    pub names: Vec<String>,
    /// The transmitting port's and the receiving port's names and locations.
    pub tx_port: Port,
    pub rx_port: Port,
    /// The transmitting port's line rate in bits per second, when its `layer1` names a
    /// speed (a percentage and a gap in bytes are reckoned against it).
    pub line_bps: Option<u64>,
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
}

/// Options a config's ports stand for; with none, the plan of `a` is `run`'s own.
pub fn apply(a: &RunArgs, seed: u64) -> Result<Option<(RunArgs, StreamsPlan)>> {
    let Some(path) = &a.config else {
        return Ok(None);
    };
    // A refusal of the document as a whole names the file itself.
    let cfg = crate::otg::read_file(path).map_err(|e| match e.why {
        crate::otg::Why::Document(_) => anyhow!("{e}"),
        _ => anyhow!("{}: {e}", path.display()),
    })?;
    apply_config(a, &cfg, path, seed).map(Some)
}

/// The options `a` with the config `cfg` (named `path` in messages) planned into them.
pub fn apply_config(
    a: &RunArgs,
    cfg: &Config,
    path: &std::path::Path,
    seed: u64,
) -> Result<(RunArgs, StreamsPlan)> {
    refuse_options(a)?;
    let (tx_port, rx_port) = ports(cfg).map_err(|e| anyhow!("{}: {e}", path.display()))?;
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
        Location::Local { iface } => {
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
    let neighbour = in_lab.then_some(if dut {
        dut::DUT_IN_MAC
    } else {
        crate::lab::RX_MAC
    });
    let line_bps = cfg.line_bps(&tx_port.0);
    let cx = Context {
        neighbour,
        line_bps,
        seed,
    };
    let specs =
        crate::otg::streams::streams(cfg, &cx).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    // Built once here, so a stream the engine cannot send is refused before anything is.
    let frames = MultiStream::new(&specs, line_bps.map(|b| b as f64))
        .map_err(|e| anyhow!("{}: {e}", path.display()))?;
    e.pg.items
        .push(("count", count(&specs).unwrap_or(0).to_string()));
    e.pg.items.push(("pkt_size", frames.max_len().to_string()));
    let names = cfg.flows.iter().map(|f| f.name.clone()).collect();
    Ok((
        e,
        StreamsPlan {
            config: path.to_path_buf(),
            specs,
            names,
            tx_port,
            rx_port,
            line_bps,
        },
    ))
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
    if a.threads != 1 {
        return Err(Refusal::ConfigWithThreads.into());
    }
    Ok(())
}

/// The one transmitting and the one receiving port every flow uses.
fn ports(cfg: &Config) -> Result<(Port, Port), crate::otg::Refusal> {
    let at = |i: usize| {
        crate::otg::Path::root()
            .key("flows")
            .index(i)
            .key("tx_rx")
            .key("port")
    };
    let first = cfg.flows.first().ok_or_else(|| {
        crate::otg::Refusal::bad(crate::otg::Path::root().key("flows"), "no flow to send")
    })?;
    for (i, f) in cfg.flows.iter().enumerate() {
        if f.rx_ports.is_empty() {
            return Err(crate::otg::Refusal::bad(
                at(i).key("rx_names"),
                "no receiving port (upktgen counts every flow at the port that receives it: name one)",
            ));
        }
        if f.tx_port != first.tx_port {
            return Err(crate::otg::Refusal::unsupported_because(
                at(i).key("tx_name"),
                format!(
                    "every flow of a run sends from one port ({:?}, flows[0]'s)",
                    first.tx_port
                ),
            ));
        }
        if f.rx_ports.len() != 1 || f.rx_ports != first.rx_ports {
            return Err(crate::otg::Refusal::unsupported_because(
                at(i).key("rx_names"),
                format!(
                    "every flow of a run is received at one port ({:?}, flows[0]'s)",
                    first.rx_ports.first().map_or("", String::as_str)
                ),
            ));
        }
    }
    // The config's reader refuses a flow naming no port; a config made otherwise is refused
    // here the same way.
    let port = |name: &str, key: &str| {
        cfg.port(name)
            .map(|p| (p.name.clone(), p.location.clone()))
            .ok_or_else(|| {
                crate::otg::Refusal::bad(at(0).key(key), format!("no port named {name:?}"))
            })
    };
    Ok((
        port(&first.tx_port, "tx_name")?,
        port(&first.rx_ports[0], "rx_names")?,
    ))
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

#[cfg(test)]
mod tests;
