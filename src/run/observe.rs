//! The observers of a run (see [`super::session`]): the interfaces' counters, the lab's
//! receiver, the far end, the device under test's counters, the receive path of injected
//! frames, and the live lines. Each is made when the plan asks for it and gives its part.

use super::device::{Device, NetDevReader};
use super::session::{Ended, Observer, Parts};
use crate::agent::far::{FarWatch, RemoteReceiver};
use crate::lab::receiver::LabReceiver;
use crate::lab::{self, Lab};
use crate::report::dut::DutPath;
use crate::rx::report::RxAnalysis;
use crate::sample::SystemSnapshot;
use anyhow::Result;

/// The senders' devices' counters (summed), and the lab's receiving end's.
pub(crate) struct Interfaces {
    tx: NetDevReader,
    rx: Option<NetDevReader>,
    devices: Vec<String>,
    before: Option<(
        crate::sample::IfaceCounters,
        Option<crate::sample::IfaceCounters>,
    )>,
}

impl Interfaces {
    pub fn open(
        ns: Option<&std::path::Path>,
        lab: Option<&Lab>,
        devices: &[Device],
    ) -> Result<Self> {
        Ok(Interfaces {
            tx: NetDevReader::open(ns)?,
            rx: match lab {
                Some(l) => Some(NetDevReader::open(Some(&l.rx_path()))?),
                None => None,
            },
            devices: devices.iter().map(|d| d.name.clone()).collect(),
            before: None,
        })
    }

    fn read(
        &mut self,
    ) -> Result<(
        crate::sample::IfaceCounters,
        Option<crate::sample::IfaceCounters>,
    )> {
        let tx = self.tx.read_sum(self.devices.iter().map(String::as_str))?;
        let rx = match &mut self.rx {
            Some(r) => Some(r.read(lab::RX_IF)?),
            None => None,
        };
        Ok((tx, rx))
    }
}

impl Observer for Interfaces {
    fn name(&self) -> &'static str {
        "interface counters"
    }
    fn start(&mut self) -> Result<()> {
        self.before = Some(self.read()?);
        Ok(())
    }
    fn finish(mut self: Box<Self>, _: &Ended, parts: &mut Parts) -> Result<()> {
        let (tx1, rx1) = self.read()?;
        let (tx0, rx0) = self.before.take().expect("started");
        parts.tx_iface = Some(tx0.delta(&tx1));
        parts.rx_iface = rx0.zip(rx1).map(|(a, b)| a.delta(&b));
        Ok(())
    }
}

/// `--rx-analyze`: upktgen's receiver on the lab's veth-rx, receiving from before the start.
pub(crate) struct LabRx(pub LabReceiver);

impl Observer for LabRx {
    fn name(&self) -> &'static str {
        "lab's receiver"
    }
    fn finish(self: Box<Self>, ended: &Ended, parts: &mut Parts) -> Result<()> {
        let rx = parts.rx_iface.unwrap_or_default();
        let report = self.0.finish(rx.rx_packets)?;
        parts.rx_analysis = Some(RxAnalysis::new(
            ended.sent,
            parts.tx()?.tx_packets,
            rx.rx_packets,
            report,
        ));
        Ok(())
    }
}

/// `--peer` / `--rx-dev`: the far end's receiver, receiving from before the start. Its part
/// (the receiver's account, the far interface, the peer line) replaces the lab's; when the
/// far end fails after the send, only its part is missing.
pub(crate) struct Far {
    /// Read every interval (the live lines, the metrics, and the far agent's watchdog,
    /// which ends a session that hears nothing).
    watch: FarWatch,
    /// The sending device's name, for the path the analysis names.
    tx_name: String,
}

impl Far {
    /// Reads the far receiver's totals every `interval` while the senders run (and the
    /// live figures of its `streams`, named by id, when it counts a config's).
    pub fn new(
        r: RemoteReceiver,
        interval: std::time::Duration,
        tx_name: String,
        streams: Option<Vec<String>>,
    ) -> Result<Far> {
        Ok(Far {
            watch: r.watch(interval, streams)?,
            tx_name,
        })
    }

    /// Its totals as they are read.
    pub fn progress(&self) -> std::sync::Arc<crate::rx::RxProgress> {
        self.watch.progress()
    }
}

impl Observer for Far {
    fn name(&self) -> &'static str {
        "far end"
    }
    fn finish(self: Box<Self>, ended: &Ended, parts: &mut Parts) -> Result<()> {
        let progress = self.progress();
        let (far, closed) = self.watch.stop()?.finish(ended.sent)?;
        if let Some(e) = closed {
            // Its report came whole: the part is kept, the far end's trouble said beside it.
            let why = format!("{e:#}");
            crate::errln!("upktgen: warning: {why} (after its report, which is kept)");
            parts.extra.push(("Peer exit", why));
        }
        crate::agent::far::publish_report(&progress, &far.receiver);
        parts.rx_analysis = Some(
            RxAnalysis::new(
                ended.sent,
                parts.tx()?.tx_packets,
                far.iface.rx_packets,
                far.receiver.clone(),
            )
            .between(&self.tx_name, &far.dev),
        );
        parts.rx_iface = Some(far.iface);
        parts.peer = Some(far.summary());
        Ok(())
    }
    fn optional(&self) -> bool {
        true
    }
}

/// `--lab dut`: the device under test's counters around the send.
pub(crate) struct Dut<'a> {
    pub lab: &'a Lab,
    pub before: Option<crate::sample::dut::DutSample>,
}

impl Observer for Dut<'_> {
    fn name(&self) -> &'static str {
        "DUT counters"
    }
    fn start(&mut self) -> Result<()> {
        self.before = self.lab.dut_sample()?;
        Ok(())
    }
    fn finish(self: Box<Self>, _: &Ended, parts: &mut Parts) -> Result<()> {
        let (Some(d0), Some(d1)) = (&self.before, self.lab.dut_sample()?) else {
            return Ok(());
        };
        parts.dut = Some(DutPath::new(
            crate::lab::dut::DUT_IN_IF,
            crate::lab::dut::DUT_OUT_IF,
            parts.tx()?.tx_packets,
            d0,
            &d1,
        ));
        Ok(())
    }
}

/// netif_receive: the receive path's counters (/proc/net/snmp and friends) of the namespace
/// the frames were injected in, around the send.
pub(crate) struct ReceivePath<'a> {
    pub ns: Option<std::path::PathBuf>,
    pub dev: &'a Device,
    pub cfg: &'a crate::pg::DevConfig,
    pub lab: Option<&'a Lab>,
    pub before: Option<crate::sample::SnmpSnapshot>,
}

impl ReceivePath<'_> {
    fn read(&self) -> Result<crate::sample::SnmpSnapshot> {
        Ok(match &self.ns {
            Some(p) => crate::sys::netns::in_netns(p, || {
                crate::sample::SnmpSnapshot::read().map_err(std::io::Error::other)
            })?,
            None => crate::sample::SnmpSnapshot::read()?,
        })
    }
}

impl Observer for ReceivePath<'_> {
    fn name(&self) -> &'static str {
        "receive path"
    }
    fn start(&mut self) -> Result<()> {
        self.before = Some(self.read()?);
        Ok(())
    }
    fn finish(self: Box<Self>, ended: &Ended, parts: &mut Parts) -> Result<()> {
        let after = self.read()?;
        let before = self.before.as_ref().expect("started");
        parts.receive_path = Some(super::receive_path(
            self.dev,
            self.cfg,
            self.lab,
            ended.sent,
            (before, &after),
            parts.tx()?,
        ));
        Ok(())
    }
}

/// The live lines on standard error (already running: they show the set-up's end too).
pub(crate) struct Live(pub crate::live::Monitor);

impl Observer for Live {
    fn name(&self) -> &'static str {
        "live lines"
    }
    fn finish(self: Box<Self>, _: &Ended, _: &mut Parts) -> Result<()> {
        self.0.finish();
        Ok(())
    }
}

/// The system's CPU time (top's `Cpu(s)` line), interrupts and softirqs, sampled when every
/// sender is ready and as soon as the last one stopped, so the set-up is not counted.
pub(crate) struct System {
    irq: Option<String>,
    before: Option<SystemSnapshot>,
    after: Option<SystemSnapshot>,
}

impl System {
    /// `irq`: `--irq`'s filter of /proc/interrupts lines.
    pub fn new(irq: Option<String>) -> System {
        System {
            irq,
            before: None,
            after: None,
        }
    }
}

impl Observer for System {
    fn name(&self) -> &'static str {
        "CPU and interrupt accounting"
    }
    fn ready(&mut self) -> Result<()> {
        self.before = Some(SystemSnapshot::take()?);
        Ok(())
    }
    fn stopped(&mut self) -> Result<()> {
        self.after = Some(SystemSnapshot::take()?);
        Ok(())
    }
    fn finish(self: Box<Self>, _: &Ended, parts: &mut Parts) -> Result<()> {
        let (Some(before), Some(after)) = (&self.before, &self.after) else {
            anyhow::bail!("the send did not say when it started and stopped");
        };
        parts.system = Some(before.delta(after, self.irq.as_deref()));
        Ok(())
    }
}
