//! What ring backends share: the transmit queue with its stop/start thresholds, and the
//! accounting of the time spent waiting for it.

use super::{BackendKind, BackendStats, Refusal};
use crate::txq::{RingConfig, TxQueue};
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// --ring, --stop-thresh and --start-thresh as given (None: not given).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RingOptions {
    pub size: Option<u32>,
    pub stop_thresh: Option<u32>,
    pub start_thresh: Option<u32>,
}

impl RingOptions {
    pub fn given(&self) -> bool {
        self.size.is_some() || self.stop_thresh.is_some() || self.start_thresh.is_some()
    }

    /// For a backend without a ring of its own: none of the options may be given.
    pub fn refuse(&self, kind: BackendKind) -> Result<(), Refusal> {
        if self.given() {
            return Err(Refusal::Ring(kind));
        }
        Ok(())
    }

    /// A ring backend's ring: `default_size` descriptors unless --ring (a power of two up
    /// to 65536), stop when none is free (S = 1) unless --stop-thresh, wake at half the ring
    /// (or at S, if above) unless --start-thresh; validated.
    pub fn resolve(&self, kind: BackendKind, default_size: u32) -> Result<RingConfig, Refusal> {
        let size = self.size.unwrap_or(default_size);
        if !size.is_power_of_two() || size > 1 << 16 {
            return Err(Refusal::RingSize { size, kind });
        }
        let stop = self.stop_thresh.unwrap_or(1);
        let start = self.start_thresh.unwrap_or((size / 2).max(stop));
        Ok(RingConfig::new(size, stop, start)?)
    }
}

/// A ring backend's queue and counters.
#[derive(Debug)]
pub struct RingQueue {
    pub txq: TxQueue,
    pub stats: BackendStats,
}

impl RingQueue {
    pub fn new(cfg: RingConfig) -> Self {
        RingQueue {
            txq: TxQueue::new(cfg),
            stats: BackendStats::default(),
        }
    }

    /// Records `n` reclaimed slots (waking the queue if the start threshold is reached).
    #[inline]
    pub fn reclaimed(&mut self, n: u32) {
        if n > 0 {
            self.txq.complete(n);
        }
    }

    /// While the queue is stopped, calls `step` (which blocks briefly — poll, kick, sleep —
    /// and returns the slots it reclaimed) until the start threshold wakes the queue or
    /// `stop` is set. The time is idle and stopped time. Returns false if stopping.
    pub fn wait_wake(
        &mut self,
        stop: &AtomicBool,
        mut step: impl FnMut() -> io::Result<u32>,
    ) -> io::Result<bool> {
        if !self.txq.is_stopped() {
            return Ok(true);
        }
        let t0 = crate::sys::monotonic_ns();
        while self.txq.is_stopped() && !stop.load(Ordering::Relaxed) {
            let n = step()?;
            self.reclaimed(n);
        }
        let dt = crate::sys::monotonic_ns() - t0;
        self.stats.idle_ns += dt;
        self.stats.stopped_ns += dt;
        Ok(!self.txq.is_stopped())
    }

    /// Waits up to `timeout` for every slot in flight to be reclaimed (idle time);
    /// what is left is reported as `undrained`.
    pub fn drain(
        &mut self,
        timeout: Duration,
        mut step: impl FnMut() -> io::Result<u32>,
    ) -> io::Result<()> {
        let t0 = crate::sys::monotonic_ns();
        let limit = t0 + timeout.as_nanos() as u64;
        while self.txq.in_flight() > 0 && crate::sys::monotonic_ns() < limit {
            let n = step()?;
            self.reclaimed(n);
        }
        self.stats.undrained = u64::from(self.txq.in_flight());
        self.stats.idle_ns += crate::sys::monotonic_ns() - t0;
        Ok(())
    }

    /// The counters with the queue's own.
    pub fn snapshot(&self) -> BackendStats {
        BackendStats {
            queue: self.txq.stats(),
            ..self.stats.clone()
        }
    }
}
