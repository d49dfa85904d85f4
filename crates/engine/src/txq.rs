//! A transmit queue over a ring of descriptors, with the stop and start (wake) thresholds of
//! the kernel's `include/net/netdev_queues.h`.
//!
//! The semantics, as a driver uses them:
//! - after posting a frame, the driver *maybe stops* the queue: if fewer than `stop_thresh`
//!   descriptors are free, the queue is stopped (one *stop*). (The kernel then re-checks
//!   against `start_thresh` because a completion on another CPU may have raced in; here the
//!   completions are reaped by the same thread that posts, so that race cannot happen.)
//! - on completion (descriptors reclaimed), a stopped queue is *woken* when at least
//!   `start_thresh` descriptors are free (one *wake*).
//!
//! `start_thresh == stop_thresh` means no hysteresis: a queue stopped at the last free slot
//! wakes as soon as one slot is reclaimed, paying one stop + one wake per packet under
//! load. `start_thresh > stop_thresh` is hysteresis: the queue stays stopped until
//! `start_thresh` slots are free, so the stop/wake churn is divided by about
//! `start_thresh - stop_thresh + 1`.
//!
//! This type is pure bookkeeping (no syscalls): ring backends and the simulator drive it.

use serde::Serialize;

/// Ring size and thresholds, validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RingConfig {
    /// Descriptors in the ring.
    size: u32,
    /// Stop the queue when fewer than this many descriptors are free after a post.
    stop_thresh: u32,
    /// Wake a stopped queue only when at least this many descriptors are free.
    start_thresh: u32,
}

impl RingConfig {
    pub fn size(&self) -> u32 {
        self.size
    }

    pub fn stop_thresh(&self) -> u32 {
        self.stop_thresh
    }

    pub fn start_thresh(&self) -> u32 {
        self.start_thresh
    }

    /// "stop when fewer than S free, wake when at least W free", for reports.
    pub fn thresholds(&self) -> String {
        format!(
            "stop when fewer than {} free, wake when at least {} free",
            self.stop_thresh, self.start_thresh
        )
    }
}

/// A ring configuration the kernel's helpers would not accept.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RingConfigError {
    #[error("--ring: must be at least 1 descriptor")]
    Empty,
    #[error("--stop-thresh {stop}: must be between 1 and the ring size ({size})")]
    Stop { stop: u32, size: u32 },
    #[error(
        "--start-thresh {start}: must be between --stop-thresh ({stop}) and the ring size ({size})"
    )]
    Start { start: u32, stop: u32, size: u32 },
}

impl RingConfig {
    /// Checks `1 <= stop_thresh <= start_thresh <= size`.
    pub fn new(size: u32, stop_thresh: u32, start_thresh: u32) -> Result<Self, RingConfigError> {
        if size == 0 {
            return Err(RingConfigError::Empty);
        }
        if stop_thresh == 0 || stop_thresh > size {
            return Err(RingConfigError::Stop {
                stop: stop_thresh,
                size,
            });
        }
        if start_thresh < stop_thresh || start_thresh > size {
            return Err(RingConfigError::Start {
                start: start_thresh,
                stop: stop_thresh,
                size,
            });
        }
        Ok(RingConfig {
            size,
            stop_thresh,
            start_thresh,
        })
    }
}

/// Counters of a queue's life.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct QueueStats {
    /// Frames posted to the ring.
    pub posted: u64,
    /// Descriptors reclaimed (completed).
    pub completed: u64,
    /// Times the queue was stopped.
    pub stops: u64,
    /// Times a stopped queue was woken by a completion.
    pub wakes: u64,
}

impl std::ops::AddAssign for QueueStats {
    fn add_assign(&mut self, o: QueueStats) {
        self.posted += o.posted;
        self.completed += o.completed;
        self.stops += o.stops;
        self.wakes += o.wakes;
    }
}

/// Ring accounting with netdev_queues.h stop/start semantics.
#[derive(Debug, Clone)]
pub struct TxQueue {
    cfg: RingConfig,
    in_flight: u32,
    stopped: bool,
    stats: QueueStats,
}

impl TxQueue {
    pub fn new(cfg: RingConfig) -> Self {
        TxQueue {
            cfg,
            in_flight: 0,
            stopped: false,
            stats: QueueStats::default(),
        }
    }

    pub fn config(&self) -> RingConfig {
        self.cfg
    }

    /// Free descriptors.
    pub fn free(&self) -> u32 {
        self.cfg.size - self.in_flight
    }

    /// Descriptors posted and not yet reclaimed.
    pub fn in_flight(&self) -> u32 {
        self.in_flight
    }

    pub fn is_stopped(&self) -> bool {
        self.stopped
    }

    pub fn stats(&self) -> QueueStats {
        self.stats
    }

    /// How many frames may be posted now, one at a time, each followed by maybe_stop:
    /// zero while stopped; otherwise up to the point where the queue would stop
    /// (free slots down to `stop_thresh - 1`), never more than the free slots.
    pub fn postable(&self) -> u32 {
        if self.stopped {
            return 0;
        }
        // Posting k frames leaves free - k; the queue stops after the post that leaves
        // fewer than stop_thresh free. That post is still allowed.
        let free = self.free();
        if free == 0 {
            return 0;
        }
        (free + 1)
            .saturating_sub(self.cfg.stop_thresh)
            .clamp(1, free)
    }

    /// Records `n` frames posted (n <= postable()), then applies maybe_stop.
    /// Returns true when the queue is stopped afterwards.
    pub fn post(&mut self, n: u32) -> bool {
        debug_assert!(n <= self.free(), "posting more than the free descriptors");
        let n = n.min(self.free());
        self.in_flight += n;
        self.stats.posted += u64::from(n);
        self.maybe_stop()
    }

    /// netif_txq_maybe_stop: stop when fewer than stop_thresh are free.
    fn maybe_stop(&mut self) -> bool {
        if !self.stopped && self.free() < self.cfg.stop_thresh {
            self.stopped = true;
            self.stats.stops += 1;
        }
        self.stopped
    }

    /// Records `n` descriptors reclaimed, then netif_txq_completed_wake: a stopped queue is
    /// woken when at least start_thresh are free. Returns true when this call woke it.
    pub fn complete(&mut self, n: u32) -> bool {
        debug_assert!(n <= self.in_flight, "completing more than in flight");
        let n = n.min(self.in_flight);
        self.in_flight -= n;
        self.stats.completed += u64::from(n);
        if self.stopped && self.free() >= self.cfg.start_thresh {
            self.stopped = false;
            self.stats.wakes += 1;
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(size: u32, stop: u32, start: u32) -> TxQueue {
        TxQueue::new(RingConfig::new(size, stop, start).unwrap())
    }

    #[test]
    fn config_is_validated() {
        assert!(RingConfig::new(0, 1, 1).is_err());
        assert!(RingConfig::new(8, 0, 1).is_err());
        assert!(RingConfig::new(8, 9, 9).is_err());
        assert!(
            RingConfig::new(8, 2, 1)
                .unwrap_err()
                .to_string()
                .contains("--start-thresh 1")
        );
        assert!(RingConfig::new(8, 1, 9).is_err());
        assert!(RingConfig::new(8, 1, 8).is_ok());
    }

    #[test]
    fn stops_when_fewer_than_stop_thresh_are_free() {
        let mut t = q(8, 2, 2);
        assert_eq!(t.postable(), 7); // 7 posts leave 1 free < 2: the 7th stops
        assert!(!t.post(6));
        assert_eq!(t.free(), 2);
        assert!(t.post(1));
        assert_eq!(t.stats().stops, 1);
        assert_eq!(t.postable(), 0);
    }

    #[test]
    fn no_hysteresis_wakes_on_every_reclaimed_slot() {
        // Ring of 16, stop at the last slot, wake at 1 free: the seed's "before".
        let mut t = q(16, 1, 1);
        t.post(16);
        assert!(t.is_stopped());
        let mut wakes = 0;
        for _ in 0..1000 {
            if t.complete(1) {
                wakes += 1;
            }
            assert_eq!(t.postable(), 1);
            assert!(t.post(1));
        }
        assert_eq!(wakes, 1000);
        assert_eq!(t.stats().stops, 1001);
    }

    #[test]
    fn hysteresis_divides_the_churn() {
        // Same load with wake at 16 free: one stop/wake per 16 reclaimed slots.
        let mut t = q(32, 1, 16);
        t.post(32);
        let mut wakes = 0;
        let mut sent = 32;
        while sent < 1000 + 32 {
            if t.complete(1) {
                wakes += 1;
                let n = t.postable();
                assert_eq!(n, 16);
                t.post(n);
                sent += n;
            }
        }
        assert_eq!(wakes, 1000 / 16 + 1);
        assert!(t.stats().wakes * 16 <= t.stats().posted);
    }

    #[test]
    fn stays_stopped_until_start_thresh_is_free() {
        let mut t = q(8, 1, 4);
        t.post(8);
        assert!(t.is_stopped());
        assert!(!t.complete(3));
        assert!(t.is_stopped());
        assert_eq!(t.postable(), 0);
        assert!(t.complete(1));
        assert_eq!(t.stats().wakes, 1);
        assert_eq!(t.postable(), 4);
    }

    #[test]
    fn conservation() {
        let mut t = q(64, 4, 32);
        let mut x: u64 = 0x9e3779b97f4a7c15;
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let p = t.postable().min((x % 9) as u32);
            t.post(p);
            let c = t.in_flight().min(((x >> 8) % 7) as u32);
            t.complete(c);
            let s = t.stats();
            assert_eq!(s.posted - s.completed, u64::from(t.in_flight()));
            assert!(t.free() <= 64);
        }
    }
}
