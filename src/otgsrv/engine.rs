//! What the server needs of the traffic engine: start a config's flows, read their counters
//! while they run, and collect the final figures. It mirrors the API of the run engine's
//! streams (`crate::run::streams`: `launch`, `Launched::{progress, finished, wait}`), so
//! that the adapter to it is a few lines; [`super::fake`] is an engine for tests.
//!
//! Byte counts are the model's: each frame with its 4-byte FCS (an OTG size of 64 is 64
//! bytes here, a 60-byte frame handed to the kernel).

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::otg::Config;

/// Starts the flows of configs.
pub trait Engine: Send + Sync + 'static {
    /// Plans `cfg` as a launch would, without sending (at set_config): what the engine
    /// cannot send is refused here, with the config's path, rather than at the start.
    fn check(&self, _cfg: &Config) -> anyhow::Result<()> {
        Ok(())
    }

    /// Starts every flow of `cfg` and returns once sending began. The senders stop by
    /// themselves when their durations end, or soon after `stop` is set.
    fn launch(&self, cfg: &Config, stop: Arc<AtomicBool>) -> anyhow::Result<Box<dyn Launched>>;
}

/// Flows that were launched.
pub trait Launched: Send + Sync {
    /// Each flow's counters so far, in the config's order. Cheap (atomics): callable at
    /// 10 Hz from any thread.
    fn progress(&self) -> Vec<FlowProgress>;
    /// Whether every sender has stopped (durations ended or the stop flag set).
    fn finished(&self) -> bool;
    /// Waits for the senders and the receivers, and gives the final per-flow figures.
    fn wait(self: Box<Self>) -> anyhow::Result<StreamsOutcome>;
}

/// One flow's counters while it runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlowProgress {
    pub name: String,
    pub tx_frames: u64,
    /// Bytes sent, FCS included.
    pub tx_bytes: u64,
    /// Frames of this flow counted at its receiving ports.
    pub rx_frames: u64,
    /// Bytes received, FCS included.
    pub rx_bytes: u64,
}

/// The final figures of a launch.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StreamsOutcome {
    /// In the config's order.
    pub flows: Vec<FlowFigures>,
}

/// One flow's final figures (bytes with the FCS, as the model counts them) and their
/// latency: the run's own types.
pub use crate::run::streams::{FlowFigures, LatencyNs};

impl FlowFigures {
    /// The counters part of the figures.
    pub fn progress(&self) -> FlowProgress {
        FlowProgress {
            name: self.name.clone(),
            tx_frames: self.tx_frames,
            tx_bytes: self.tx_bytes,
            rx_frames: self.rx_frames,
            rx_bytes: self.rx_bytes,
        }
    }
}
