//! A [`Timeline`] as the send loop reads it: [`Ahead::due_ns`] looks at the run's frame `k`
//! (counting every stream's frames together) before it is taken, and [`Ahead::take`] hands
//! out the frames in that order. The frames looked at but not yet taken wait in a short
//! queue (at most one batch), so looking ahead costs nothing twice. What the frames are is
//! the caller's: a config's streams ([`super::multi`]), a thread's pktgen devices
//! ([`super::devices`]).

use super::timeline::{Due, Timeline};
use std::collections::VecDeque;

/// A timeline's frames, looked at ahead and taken in deadline order.
#[derive(Debug, Clone)]
pub struct Ahead {
    timeline: Timeline,
    /// Frames taken from the timeline the loop has not taken yet, in order.
    ahead: VecDeque<Due>,
    /// Frames taken so far (the run's index of `ahead`'s first).
    taken: u64,
    /// The deadline of the last frame taken.
    last_due: u64,
}

impl Ahead {
    pub fn new(timeline: Timeline) -> Ahead {
        Ahead {
            timeline,
            ahead: VecDeque::new(),
            taken: 0,
            last_due: 0,
        }
    }

    /// The next frame, the one [`Ahead::due_ns`] said first; None when every stream has
    /// ended (the loop then asked for a frame it was not told was due).
    #[inline]
    pub fn take(&mut self) -> Option<Due> {
        let d = match self.ahead.pop_front() {
            Some(d) => Some(d),
            None => self.timeline.next(u64::MAX),
        };
        self.taken += 1;
        if let Some(d) = &d {
            self.last_due = d.deadline_ns;
        }
        d
    }

    /// The frame `i` places after the next one to take, if the loop has already looked
    /// that far ahead (nothing is taken from the timeline).
    #[inline]
    pub fn queued(&self, i: usize) -> Option<&Due> {
        self.ahead.get(i)
    }

    /// When frame `k` of the run is due, in ns from the start: its stream's deadline; a
    /// frame already taken (a batch the backend sent only part of) is due as the last one
    /// taken was; after the last frame of every stream, `u64::MAX` (never).
    #[inline]
    pub fn due_ns(&mut self, k: u64) -> u64 {
        if k < self.taken {
            return self.last_due;
        }
        let i = (k - self.taken) as usize;
        while self.ahead.len() <= i {
            match self.timeline.next(u64::MAX) {
                Some(d) => self.ahead.push_back(d),
                None => return u64::MAX,
            }
        }
        self.ahead[i].deadline_ns
    }
}
