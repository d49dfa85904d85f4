//! Per-stream counters one thread writes and any other reads while a run goes on (the
//! sender's frames handed over, the receiver's frames seen): frames and bytes by stream id.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// What one stream handed to the backend so far: frames and their bytes (without FCS).
#[derive(Debug, Default)]
pub struct StreamCount {
    pub frames: AtomicU64,
    pub bytes: AtomicU64,
}

/// Every stream's [`StreamCount`], by stream id.
#[derive(Debug)]
pub struct Tally(Box<[StreamCount]>);

impl Tally {
    /// `n` streams, all at zero.
    pub fn new(n: usize) -> Tally {
        Tally((0..n).map(|_| StreamCount::default()).collect())
    }

    /// A tally of known counts (frames, bytes) by stream id: a report rebuilt, a test.
    pub fn of(counts: &[(u64, u64)]) -> Tally {
        let t = Tally::new(counts.len());
        for (c, &(f, b)) in t.0.iter().zip(counts) {
            c.frames.store(f, Relaxed);
            c.bytes.store(b, Relaxed);
        }
        t
    }

    /// Counts one frame of `len` bytes in stream `i`. One writer per tally (a sender's or a
    /// receiver's thread): a load and a store, no locked add.
    #[inline]
    pub fn add(&self, i: usize, len: u64) {
        if let Some(c) = self.0.get(i) {
            c.frames.store(c.frames.load(Relaxed) + 1, Relaxed);
            c.bytes.store(c.bytes.load(Relaxed) + len, Relaxed);
        }
    }

    /// Sets stream `i`'s frames and bytes (figures read elsewhere); nothing beyond the tally.
    pub fn set(&self, i: usize, frames: u64, bytes: u64) {
        if let Some(c) = self.0.get(i) {
            c.frames.store(frames, Relaxed);
            c.bytes.store(bytes, Relaxed);
        }
    }

    /// Stream `i`'s frames and bytes so far.
    pub fn get(&self, i: usize) -> (u64, u64) {
        let c = &self.0[i];
        (c.frames.load(Relaxed), c.bytes.load(Relaxed))
    }

    /// How many streams it counts.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether it counts none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}
