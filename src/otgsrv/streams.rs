//! The [`Engine`] of `upktgen otg`: the run engine's streams (`crate::run::streams`), the
//! same planning and sending as `upktgen run --config`, in this process. The engine counts
//! bytes without the FCS; the model (and this server) with it, so 4 bytes a frame are added.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use super::engine::{Engine, FlowFigures, FlowProgress, Launched, StreamsOutcome};
use crate::otg::{Config, FCS_LEN};
use crate::run::streams;

/// The run engine's streams.
#[derive(Debug, Default)]
pub struct StreamsEngine {
    /// Transmit queues per sending port (`upktgen otg -t N`).
    pub queues: streams::Queues,
}

struct Running(streams::Launched);

/// Bytes with the FCS of each frame.
fn with_fcs(bytes: u64, frames: u64) -> u64 {
    bytes + frames * u64::from(FCS_LEN)
}

impl Engine for StreamsEngine {
    fn check(&self, cfg: &Config) -> anyhow::Result<()> {
        streams::plan_on(cfg, self.queues).map(drop)
    }

    fn launch(&self, cfg: &Config, stop: Arc<AtomicBool>) -> anyhow::Result<Box<dyn Launched>> {
        Ok(Box::new(Running(streams::launch_on(
            cfg,
            stop,
            self.queues,
        )?)))
    }
}

impl Launched for Running {
    fn progress(&self) -> Vec<FlowProgress> {
        self.0
            .progress()
            .into_iter()
            .map(|p| FlowProgress {
                tx_bytes: with_fcs(p.tx_bytes, p.tx_frames),
                rx_bytes: with_fcs(p.rx_bytes, p.rx_frames),
                name: p.name,
                tx_frames: p.tx_frames,
                rx_frames: p.rx_frames,
            })
            .collect()
    }

    fn finished(&self) -> bool {
        self.0.finished()
    }

    fn wait(self: Box<Self>) -> anyhow::Result<StreamsOutcome> {
        let o = self.0.wait()?;
        Ok(StreamsOutcome {
            flows: o
                .flows
                .into_iter()
                .map(|f| FlowFigures {
                    tx_bytes: with_fcs(f.tx_bytes, f.tx_frames),
                    rx_bytes: with_fcs(f.rx_bytes, f.rx_frames),
                    ..f
                })
                .collect(),
        })
    }
}
