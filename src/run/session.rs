//! A run as a session: the plan has opened the site and built the senders' jobs; a list of
//! observers, each started before the senders and finished after them, hands back its part
//! of the report. Adding a measurement is one new [`Observer`] (see `observe.rs` for the
//! run's own): nothing else changes.
//!
//! Inside the send, the observers hear of two [`Moments`]: every sender is ready (the gate
//! opens next) and the last one has stopped; the system's CPU and interrupt accounting
//! samples there, so it counts the send and not its set-up.
//!
//! The order of the list is the order of starting and of finishing, so an observer may
//! read the parts of those before it (the receiver's account needs the interfaces'
//! counters). A part that could not be had is named in [`Parts::missing`] when its
//! observer is [`Observer::optional`] (a far end that failed after the send costs its part,
//! not the report); otherwise the first such failure is the run's error, after every
//! observer was finished.

use crate::agent::far::PeerSummary;
use crate::report::dut::DutPath;
use crate::report::receive::ReceivePath;
use crate::rx::report::RxAnalysis;
use crate::sample::{IfaceCounters, SystemDelta};
use anyhow::Result;

/// What the senders did, as the observers' finish sees it.
pub(crate) struct Ended {
    /// Frames the senders handed over (pktgen's `sent`).
    pub sent: u64,
}

/// The parts of the report the observers give.
#[derive(Debug, Default)]
pub(crate) struct Parts {
    /// The senders' devices, summed.
    pub tx_iface: Option<IfaceCounters>,
    /// The receiving end's interface (the lab's veth-rx, or the far end's device).
    pub rx_iface: Option<IfaceCounters>,
    pub rx_analysis: Option<RxAnalysis>,
    pub peer: Option<PeerSummary>,
    pub dut: Option<DutPath>,
    pub receive_path: Option<ReceivePath>,
    /// The system's CPU time, interrupts and softirqs from the start to the stop.
    pub system: Option<SystemDelta>,
    /// Parts that could not be had: the observer's name and why.
    pub missing: Vec<(&'static str, String)>,
    /// Lines of the text report from observers with no field of the JSON document of
    /// their own (yet): a label and the text.
    pub extra: Vec<(&'static str, String)>,
}

impl Parts {
    /// The sending interfaces' counters; an observer that needs them comes after the one
    /// that reads them.
    pub fn tx(&self) -> Result<&IfaceCounters> {
        self.tx_iface
            .as_ref()
            .ok_or_else(|| anyhow::anyhow!("the interfaces' counters were not read"))
    }
}

/// One measurement around the send.
pub(crate) trait Observer {
    /// Its name, in the report when its part is missing.
    fn name(&self) -> &'static str;
    /// Just before the senders start (everything is set up).
    fn start(&mut self) -> Result<()> {
        Ok(())
    }
    /// Every sender is set up and the start gate is about to open: what the send itself
    /// costs is counted from here (the system's CPU time and interrupts).
    fn ready(&mut self) -> Result<()> {
        Ok(())
    }
    /// The last sender has stopped, before anything else is done (the pause for frames in
    /// flight, the other observers' finish).
    fn stopped(&mut self) -> Result<()> {
        Ok(())
    }
    /// After the senders stopped: its part, written into `parts`.
    fn finish(self: Box<Self>, ended: &Ended, parts: &mut Parts) -> Result<()>;
    /// Whether the run is reported without its part when its finish fails.
    fn optional(&self) -> bool {
        false
    }
}

/// The two moments inside the send the observers are told of: the send calls
/// [`Moments::ready`] when every sender is set up, just before they start, and
/// [`Moments::stopped`] as soon as the last one has stopped.
pub(crate) struct Moments<'o, 'a> {
    observers: &'o mut [Box<dyn Observer + 'a>],
}

impl Moments<'_, '_> {
    /// Tells every observer, in order, that the senders are about to start.
    pub fn ready(&mut self) -> Result<()> {
        for o in self.observers.iter_mut() {
            let name = o.name();
            o.ready()
                .map_err(|e| e.context(format!("the {name} before the start")))?;
        }
        Ok(())
    }

    /// Tells every observer, in order, that the senders have stopped.
    pub fn stopped(&mut self) -> Result<()> {
        for o in self.observers.iter_mut() {
            let name = o.name();
            o.stopped()
                .map_err(|e| e.context(format!("the {name} after the send")))?;
        }
        Ok(())
    }
}

/// Starts every observer in order, runs `send` (which tells them of its [`Moments`]), then
/// finishes every observer in order (all of them, also after a failure: each releases what
/// it holds). `sent` says what the send handed over. An observer that fails to start ends
/// the session before anything is sent.
pub(crate) fn observe<'a, R>(
    observers: Vec<Box<dyn Observer + 'a>>,
    send: impl FnOnce(&mut Moments<'_, 'a>) -> Result<R>,
    sent: impl Fn(&R) -> u64,
) -> Result<(R, Parts)> {
    let mut observers = observers;
    for o in &mut observers {
        let name = o.name();
        o.start()
            .map_err(|e| e.context(format!("starting the {name}")))?;
    }
    let r = send(&mut Moments {
        observers: &mut observers,
    })?;
    let ended = Ended { sent: sent(&r) };
    let mut parts = Parts::default();
    let mut failed = None;
    for o in observers {
        let (name, optional) = (o.name(), o.optional());
        if let Err(e) = o.finish(&ended, &mut parts) {
            if optional {
                parts.missing.push((name, format!("{e:#}")));
            } else {
                failed.get_or_insert(e.context(format!("the {name}")));
            }
        }
    }
    match failed {
        Some(e) => Err(e),
        None => Ok((r, parts)),
    }
}

#[cfg(test)]
mod tests;
