//! The receiver inside the lab's receiving namespace, for `upktgen run --rx-analyze`.
//!
//! [`LabReceiver::start`] opens the ring on veth-rx from a thread that joined the receiving
//! namespace and returns once the socket is bound (so no frame of the run is missed); the
//! thread then receives until [`LabReceiver::finish`] (after the sender is done) sees the
//! frame count settle, or until the handle is dropped (error paths).

use super::LabError;
use super::RX_IF;
use crate::rx::background::RxThreadError;
use crate::rx::background::{RxThread, Settle};
use crate::rx::{DEFAULT_XSK_FRAMES, FlowKeyMode, RxBackend, RxConfig, RxProgress, RxReport};
use crate::sys::rx_ring::RxRingConfig;
use std::path::Path;
use std::sync::Arc;

/// The receiver's settings in the lab: upktgen's sender starts at sequence number 1. The
/// backend is af_packet here; `upktgen run --rx-analyze` sets the one --rx-backend asks for.
pub fn config(hist: bool) -> RxConfig {
    RxConfig {
        backend: RxBackend::AfPacket,
        xsk_frames: DEFAULT_XSK_FRAMES,
        zerocopy: None,
        ring: RxRingConfig::default(),
        flow_key: FlowKeyMode::Addr,
        expect_first: Some(1),
        count: 0,
        duration: None,
        hist,
        streams: None,
    }
}

/// A receiver running on veth-rx: the one background receiver, started in the lab's
/// receiving namespace.
pub struct LabReceiver(RxThread);

impl LabReceiver {
    /// Starts receiving on veth-rx in the namespace at `rx_ns`; returns once the socket is
    /// bound. With `auto`, standard error says which backend was taken and why.
    pub fn start(rx_ns: &Path, cfg: RxConfig) -> Result<LabReceiver, LabError> {
        let t =
            RxThread::start(Some(rx_ns.to_path_buf()), RX_IF, cfg).map_err(LabError::Receiver)?;
        if let Some(c) = &t.started().choice {
            crate::errln!("upktgen: {c}");
        }
        Ok(LabReceiver(t))
    }

    /// Frames received so far.
    pub fn frames(&self) -> u64 {
        self.0.frames()
    }

    /// Running totals (frames, sequence holes) for live statistics.
    pub fn progress(&self) -> Arc<RxProgress> {
        self.0.progress()
    }

    /// After the sender is done: waits until `expected` frames are in or the count has not
    /// moved for 250 ms (at most 3 s), then stops the receiver, which drains what is left in
    /// its ring, and returns its report.
    pub fn finish(self, expected: u64) -> Result<RxReport, RxThreadError> {
        self.0.finish(Settle::expecting(expected))
    }
}
