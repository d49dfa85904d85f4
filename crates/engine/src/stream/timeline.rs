//! One timeline per transmit queue: every stream on the queue ordered by its next
//! deadline, earliest first, as the kernel's pktgen thread serves the device whose next
//! transmit time is earliest.
//!
//! Time is passed in (nanoseconds on any monotonic scale the caller chooses), never read
//! here. A stream's deadlines are exact multiples of its interval from its start (kept in
//! 2^-32 ns, so no drift accumulates over a run); a sender that falls behind gets the
//! frames it owes in deadline order, so every stream catches up at once and streams stay
//! interleaved. The queue is a binary heap of `(deadline, stream)`: O(log n) per frame,
//! nothing allocated per frame; ties go to the lower stream index.
//!
//! A sender loop:
//! ```text
//! loop {
//!     let n = timeline.fill_batch(now_ns, &mut batch);   // up to batch.len() due frames
//!     for d in &batch[..n] { frames[d.stream].write(d.seq, d.len, tx_ns, buf) ... }
//!     if timeline.done() { break }
//!     if n == 0 { wait until timeline.next_deadline() }
//! }
//! ```

use super::spec::SizeSeq;
use crate::wire::WIRE_OVERHEAD;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::collections::binary_heap::PeekMut;

/// One nanosecond in the timeline's fixed point (2^-32 ns units).
pub const FP_ONE: u128 = 1 << 32;

/// How a stream's frames are spaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pace {
    /// The same interval after every frame, in 2^-32 ns (a rate in frames per second).
    Interval(u128),
    /// After each frame, its wire bytes (length + [`WIRE_OVERHEAD`]) times this, in
    /// 2^-32 ns per byte (a rate in bits per second on the wire).
    PerWireByte(u128),
}

impl Pace {
    /// `pps` frames per second (finite, > 0). The interval is rounded up, so frame `k` is
    /// never due before `k / pps` seconds and a duration holds exactly `ceil(T * pps)`.
    pub fn pps(pps: f64) -> Pace {
        Pace::Interval(per(1_000_000_000, pps))
    }

    /// `bps` bits per second on the wire (finite, > 0), rounded as [`Pace::pps`].
    pub fn bps(bps: f64) -> Pace {
        Pace::PerWireByte(per(8_000_000_000, bps))
    }

    /// The interval after a frame of `len` bytes, in 2^-32 ns.
    #[inline]
    pub fn after(&self, len: u32) -> u128 {
        match *self {
            Pace::Interval(i) => i,
            Pace::PerWireByte(b) => b * (u128::from(len) + WIRE_OVERHEAD as u128),
        }
    }
}

/// `ns` nanoseconds divided by `rate`, in 2^-32 ns, rounded up: exactly for a whole rate.
fn per(ns: u64, rate: f64) -> u128 {
    let whole = u128::from(ns) * FP_ONE;
    if rate.fract() == 0.0 && rate >= 1.0 && rate < 2f64.powi(63) {
        whole.div_ceil(rate as u128)
    } else {
        (whole as f64 / rate).ceil() as u128
    }
}

/// Bursts: `packets` frames at the stream's pace, then `gap_fp` (2^-32 ns) more before the
/// next burst's first frame; `count` bursts, or until stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BurstShape {
    pub packets: u64,
    pub gap_fp: u128,
    pub count: Option<u64>,
}

/// A stream's timing, as the timeline needs it (made by `StreamSpec::schedule`). At most one
/// of `packets`, `duration_ns` and `burst.count` is expected to bound the stream; with
/// none, it runs until the caller stops.
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    pub pace: Pace,
    /// The length of each frame (the `len` of [`Due`]).
    pub sizes: SizeSeq,
    /// Ends after this many frames.
    pub packets: Option<u64>,
    /// Ends with its last frame due before its start plus this.
    pub duration_ns: Option<u64>,
    pub burst: Option<BurstShape>,
    /// Its first frame is due this long after the timeline's start.
    pub start_delay_ns: u64,
}

/// A frame to send now: the stream (its index in the timeline's list), the stream's packet
/// index (0 for its first frame), the frame's length and when it was due.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Due {
    pub stream: u32,
    pub seq: u64,
    pub len: u32,
    pub deadline_ns: u64,
}

/// What a stream has been handed out so far (for the Result line): frames, and their bytes
/// without FCS.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Count {
    pub packets: u64,
    pub bytes: u64,
}

#[derive(Debug, Clone)]
struct State {
    sched: Schedule,
    /// The next frame's deadline, 2^-32 ns.
    next_fp: u128,
    /// Frames due from the duration's end on are not sent.
    end_fp: u128,
    in_burst: u64,
    bursts: u64,
    count: Count,
}

impl State {
    /// Moves past the frame just handed out (`len` bytes); false when the stream has ended.
    #[inline]
    fn advance(&mut self, len: u32) -> bool {
        self.count.packets += 1;
        self.count.bytes += u64::from(len);
        self.next_fp += self.sched.pace.after(len);
        if let Some(b) = &self.sched.burst {
            self.in_burst += 1;
            if self.in_burst == b.packets {
                self.in_burst = 0;
                self.bursts += 1;
                if b.count == Some(self.bursts) {
                    return false;
                }
                self.next_fp += b.gap_fp;
            }
        }
        if self.sched.packets == Some(self.count.packets) {
            return false;
        }
        self.next_fp < self.end_fp
    }

    #[inline]
    fn deadline_ns(&self) -> u64 {
        (self.next_fp >> 32) as u64
    }
}

/// The streams of one transmit queue, by next deadline.
#[derive(Debug, Clone)]
pub struct Timeline {
    heap: BinaryHeap<Reverse<(u64, u32)>>,
    streams: Vec<State>,
}

impl Timeline {
    /// Streams starting at `start_ns` (each after its own delay). At most `u32::MAX`
    /// streams (a run has at most `wire::signature::MAX_STREAMS`).
    pub fn new(schedules: Vec<Schedule>, start_ns: u64) -> Timeline {
        let mut heap = BinaryHeap::with_capacity(schedules.len());
        let streams: Vec<State> = schedules
            .into_iter()
            .enumerate()
            .map(|(i, sched)| {
                let first = u128::from(start_ns.saturating_add(sched.start_delay_ns)) * FP_ONE;
                let end_fp = match sched.duration_ns {
                    Some(d) => first + u128::from(d) * FP_ONE,
                    None => u128::MAX,
                };
                let s = State {
                    sched,
                    next_fp: first,
                    end_fp,
                    in_burst: 0,
                    bursts: 0,
                    count: Count::default(),
                };
                heap.push(Reverse((s.deadline_ns(), i as u32)));
                s
            })
            .collect();
        Timeline { heap, streams }
    }

    /// The next frame due at or before `now_ns`, if any; the stream moves on past it.
    #[inline]
    pub fn next(&mut self, now_ns: u64) -> Option<Due> {
        let mut top = self.heap.peek_mut()?;
        let Reverse((deadline_ns, i)) = *top;
        if deadline_ns > now_ns {
            return None;
        }
        let s = &mut self.streams[i as usize];
        let seq = s.count.packets;
        let len = s.sched.sizes.at(seq);
        if s.advance(len) {
            *top = Reverse((s.deadline_ns(), i));
        } else {
            PeekMut::pop(top);
        }
        Some(Due {
            stream: i,
            seq,
            len,
            deadline_ns,
        })
    }

    /// Fills `out` with the frames due at or before `now_ns`, earliest first, as many as
    /// fit; returns how many.
    #[inline]
    pub fn fill_batch(&mut self, now_ns: u64, out: &mut [Due]) -> usize {
        let mut n = 0;
        while n < out.len() {
            match self.next(now_ns) {
                Some(d) => out[n] = d,
                None => break,
            }
            n += 1;
        }
        n
    }

    /// When the earliest stream's next frame is due (None when all have ended).
    #[inline]
    pub fn next_deadline(&self) -> Option<u64> {
        self.heap.peek().map(|Reverse((d, _))| *d)
    }

    /// Whether every stream has ended.
    #[inline]
    pub fn done(&self) -> bool {
        self.heap.is_empty()
    }

    /// How many streams the timeline holds.
    pub fn len(&self) -> usize {
        self.streams.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.streams.is_empty()
    }

    /// What stream `i` has been handed out so far.
    pub fn count(&self, i: usize) -> Count {
        self.streams[i].count
    }

    /// Every stream's count, in order.
    pub fn counts(&self) -> impl Iterator<Item = Count> + '_ {
        self.streams.iter().map(|s| s.count)
    }

    /// The sum over all streams.
    pub fn total(&self) -> Count {
        self.counts().fold(Count::default(), |a, c| Count {
            packets: a.packets + c.packets,
            bytes: a.bytes + c.bytes,
        })
    }
}

#[cfg(test)]
mod tests;
