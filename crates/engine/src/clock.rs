//! The clocks the send loop ([`crate::sender`]) paces and stamps by.
//!
//! [`SystemClock`] is the machine's: CLOCK_MONOTONIC for the schedule, CLOCK_REALTIME for
//! the frames' timestamps, waits that sleep and then spin. [`ScheduleClock`] is a clock for
//! a sink that is not a wire (`run --pcap`): time moves only when the loop waits for a due
//! time (it jumps there) or when the sink hands a frame over (1 ns per frame), so the
//! frames come out at once, stamped on the run's schedule.

use crate::sys;
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

/// Waits shorter than this are spun (clock_nanosleep overshoots by tens of microseconds).
const SPIN_NS: u64 = 100_000;

/// A clock for the send loop.
pub trait Clock {
    /// The schedule's clock, ns.
    fn monotonic_ns(&self) -> u64;
    /// The timestamps' clock, ns since the epoch.
    fn realtime_ns(&self) -> u64;
    /// Waits until [`Clock::monotonic_ns`] reaches `deadline_ns`, or until `stop`. Returns
    /// the time waited.
    fn wait_until(&self, deadline_ns: u64, stop: &AtomicBool) -> u64;
    /// Called once before a paced run.
    fn prepare_pacing(&self) {}
}

/// The machine's clocks.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    #[inline]
    fn monotonic_ns(&self) -> u64 {
        sys::monotonic_ns()
    }

    #[inline]
    fn realtime_ns(&self) -> u64 {
        sys::realtime_ns()
    }

    /// Sleeps, then spins for the last stretch.
    fn wait_until(&self, deadline_ns: u64, stop: &AtomicBool) -> u64 {
        let t0 = sys::monotonic_ns();
        loop {
            let now = sys::monotonic_ns();
            if now >= deadline_ns || stop.load(Ordering::Relaxed) {
                return now - t0;
            }
            let left = deadline_ns - now;
            if left > SPIN_NS {
                // Sleep in slices of at most 50 ms so a stop request is seen promptly.
                sys::sleep_until_monotonic_ns(now + (left - SPIN_NS / 2).min(50_000_000));
            } else {
                std::hint::spin_loop();
            }
        }
    }

    fn prepare_pacing(&self) {
        // Sleeps end on time instead of up to 50 us late (the default slack); best effort.
        let _ = sys::set_timer_slack_ns(1);
    }
}

/// A clock that runs on the schedule alone: it starts at 0 (monotonic) and at
/// `start_realtime_ns` (realtime); a wait jumps to its deadline and a frame handed over
/// ([`ScheduleClock::advance`]) takes 1 ns. Driven by the send loop with a batch of one
/// frame, frame `k` is due, stamped and handed over at `tick * burst * delay + k % burst`
/// (tick `k / burst`), or at `k` at delay 0.
#[derive(Debug)]
pub struct ScheduleClock {
    start_realtime_ns: u64,
    now: Cell<u64>,
}

impl ScheduleClock {
    pub fn new(start_realtime_ns: u64) -> Self {
        ScheduleClock {
            start_realtime_ns,
            now: Cell::new(0),
        }
    }

    /// Moves the clock on by `ns`.
    pub fn advance(&self, ns: u64) {
        self.now.set(self.now.get().saturating_add(ns));
    }
}

impl Clock for ScheduleClock {
    fn monotonic_ns(&self) -> u64 {
        self.now.get()
    }

    fn realtime_ns(&self) -> u64 {
        self.start_realtime_ns.saturating_add(self.now.get())
    }

    fn wait_until(&self, deadline_ns: u64, stop: &AtomicBool) -> u64 {
        let now = self.now.get();
        if stop.load(Ordering::Relaxed) || deadline_ns <= now {
            return 0;
        }
        self.now.set(deadline_ns);
        deadline_ns - now
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_clock_jumps_to_deadlines_and_moves_per_frame() {
        let c = ScheduleClock::new(1_000);
        let stop = AtomicBool::new(false);
        assert_eq!((c.monotonic_ns(), c.realtime_ns()), (0, 1_000));
        assert_eq!(c.wait_until(500, &stop), 500);
        assert_eq!(c.wait_until(400, &stop), 0, "never goes back");
        c.advance(1);
        assert_eq!((c.monotonic_ns(), c.realtime_ns()), (501, 1_501));
        stop.store(true, Ordering::Relaxed);
        assert_eq!(c.wait_until(9_000, &stop), 0, "a stop ends the wait");
        assert_eq!(c.monotonic_ns(), 501);
    }
}
