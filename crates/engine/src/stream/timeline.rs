//! One timeline per transmit queue: every stream on the queue ordered by its next
//! deadline, earliest first, as the kernel's pktgen thread serves the device whose next
//! transmit time is earliest.
//!
//! Time is passed in (nanoseconds on any monotonic scale the caller chooses), never read
//! here. A stream's deadlines are exact multiples of its interval from its start (kept in
//! 2^-32 ns, so no drift accumulates over a run); a sender that falls behind gets the
//! frames it owes in deadline order, so every stream catches up at once and streams stay
//! interleaved. The queue ([`Queue`]) holds `(deadline, stream)` keys packed in one
//! integer, ties going to the lower stream index: a run of keys in ascending order (a
//! stream moved on whose key is the largest joins its end, O(1): streams of one rate go
//! round so) beside a 4-ary heap for the others (O(log4 n)); nothing allocated per frame. What a frame needs of its stream (its deadline, pace and bounds)
//! is kept apart from the rest of its schedule, so 1,024 streams' hot state stays small.
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

/// What the timeline reads and writes of a stream for every frame.
#[derive(Debug, Clone)]
struct Hot {
    /// The next frame's deadline, 2^-32 ns.
    next_fp: u128,
    /// Frames due from the duration's end on are not sent.
    end_fp: u128,
    count: Count,
    /// The frame count it ends at (`u64::MAX`: none).
    last_packet: u64,
    /// The interval after every frame when the pace is one, else 0 (read from `Cold`).
    interval: u128,
    /// The frame's length when fixed, else 0 (read from `Cold`).
    fixed_len: u32,
    /// Frames a burst when it sends bursts, else 0 (the rest is read from `Cold`).
    burst_packets: u64,
    in_burst: u64,
    bursts: u64,
}

/// The rest of a stream's schedule: read for a frame only when its size varies, its pace
/// is a bit rate or it sends bursts.
#[derive(Debug, Clone)]
struct Cold {
    sched: Schedule,
}

impl Hot {
    /// Moves past the frame just handed out (`len` bytes); false when the stream has ended.
    #[inline]
    fn advance(&mut self, len: u32, cold: &Cold) -> bool {
        self.count.packets += 1;
        self.count.bytes += u64::from(len);
        self.next_fp += if self.interval != 0 {
            self.interval
        } else {
            cold.sched.pace.after(len)
        };
        if self.burst_packets != 0
            && let Some(b) = &cold.sched.burst
        {
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
        if self.count.packets == self.last_packet {
            return false;
        }
        self.next_fp < self.end_fp
    }

    #[inline]
    fn deadline_ns(&self) -> u64 {
        (self.next_fp >> 32) as u64
    }

    #[inline]
    fn len(&self, cold: &Cold) -> u32 {
        if self.fixed_len != 0 {
            self.fixed_len
        } else {
            cold.sched.sizes.at(self.count.packets)
        }
    }
}

/// The timeline's keys, smallest first: `deadline << 32 | stream` in one `u128`, so one
/// comparison orders by deadline and then by the lower stream.
///
/// A key that is not below the largest key of `run` joins `run`'s end, so `run` stays in
/// ascending order and costs O(1); any other key goes to `heap`. The smallest key is the
/// smaller of the two fronts. Streams at one rate, or a slow stream among fast ones, come
/// back after everything queued and stay in `run`.
#[derive(Debug, Clone, Default)]
pub struct Queue {
    run: Ring,
    heap: Heap,
}

/// An ascending run of keys in a ring whose size is a power of two, so the front moving
/// to the back (a stream moved on past every other) is two stores.
#[derive(Debug, Clone, Default)]
struct Ring {
    buf: Vec<u128>,
    head: usize,
    len: usize,
}

impl Ring {
    fn with_capacity(n: usize) -> Ring {
        Ring {
            buf: vec![0; n.max(1).next_power_of_two()],
            head: 0,
            len: 0,
        }
    }

    #[inline]
    fn mask(&self) -> usize {
        self.buf.len() - 1
    }

    #[inline]
    fn front(&self) -> Option<u128> {
        (self.len > 0).then(|| self.buf[self.head])
    }

    #[inline]
    fn back(&self) -> Option<u128> {
        (self.len > 0).then(|| self.buf[(self.head + self.len - 1) & self.mask()])
    }

    fn push_back(&mut self, k: u128) {
        if self.len == self.buf.len() {
            // Full (or never sized): twice as large, in order from index 0.
            let mut b = vec![0; (self.buf.len() * 2).max(1)];
            for (i, x) in b.iter_mut().take(self.len).enumerate() {
                *x = self.buf[(self.head + i) & self.mask()];
            }
            self.buf = b;
            self.head = 0;
        }
        let at = (self.head + self.len) & self.mask();
        self.buf[at] = k;
        self.len += 1;
    }

    #[inline]
    fn pop_front(&mut self) -> Option<u128> {
        let k = self.front()?;
        self.head = (self.head + 1) & self.mask();
        self.len -= 1;
        Some(k)
    }

    /// Takes the front off and puts `k` at the back (not below the back: the caller's
    /// check). In place: when the ring is full, the back's slot is the front's.
    #[inline]
    fn rotate(&mut self, k: u128) {
        let m = self.mask();
        self.buf[(self.head + self.len) & m] = k;
        self.head = (self.head + 1) & m;
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Queue {
    pub fn with_capacity(n: usize) -> Queue {
        Queue {
            run: Ring::with_capacity(n),
            heap: Heap::with_capacity(n),
        }
    }

    /// The smallest key, and whether it is `run`'s front.
    #[inline]
    fn front(&self) -> Option<(u128, bool)> {
        match (self.run.front(), self.heap.peek()) {
            (Some(r), Some(h)) if h < r => Some((h, false)),
            (Some(r), _) => Some((r, true)),
            (None, Some(h)) => Some((h, false)),
            (None, None) => None,
        }
    }

    /// The smallest key.
    #[inline]
    pub fn peek(&self) -> Option<u128> {
        self.front().map(|(k, _)| k)
    }

    pub fn len(&self) -> usize {
        self.run.len + self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.run.is_empty() && self.heap.is_empty()
    }

    /// Whether `k` can join `run`'s end.
    #[inline]
    fn joins_run(&self, k: u128) -> bool {
        self.run.back().is_none_or(|b| b <= k)
    }

    pub fn push(&mut self, k: u128) {
        if self.joins_run(k) {
            self.run.push_back(k);
        } else {
            self.heap.push(k);
        }
    }

    /// Replaces the smallest key by `k` (the stream it named, moved on). Nothing when
    /// empty.
    #[inline]
    pub fn replace_top(&mut self, k: u128) {
        match self.front() {
            Some((_, true)) => {
                if self.joins_run(k) {
                    self.run.rotate(k);
                } else {
                    self.run.pop_front();
                    self.heap.push(k);
                }
            }
            Some((_, false)) => {
                if self.joins_run(k) {
                    self.heap.pop();
                    self.run.push_back(k);
                } else {
                    self.heap.replace_top(k);
                }
            }
            None => {}
        }
    }

    /// Removes the smallest key.
    #[inline]
    pub fn pop(&mut self) -> Option<u128> {
        match self.front()? {
            (_, true) => self.run.pop_front(),
            (_, false) => self.heap.pop(),
        }
    }
}

/// A min-heap of keys, four children a node: half as deep as a binary heap, and a node's
/// children side by side.
#[derive(Debug, Clone, Default)]
struct Heap {
    keys: Vec<u128>,
}

/// The key of stream `i` due at `deadline_ns`.
#[inline]
pub fn key(deadline_ns: u64, i: u32) -> u128 {
    (u128::from(deadline_ns) << 32) | u128::from(i)
}

/// The deadline and stream of a key.
#[inline]
pub fn unkey(k: u128) -> (u64, u32) {
    ((k >> 32) as u64, k as u32)
}

impl Heap {
    fn with_capacity(n: usize) -> Heap {
        Heap {
            keys: Vec::with_capacity(n),
        }
    }

    #[inline]
    fn peek(&self) -> Option<u128> {
        self.keys.first().copied()
    }

    fn len(&self) -> usize {
        self.keys.len()
    }

    fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    fn push(&mut self, k: u128) {
        self.keys.push(k);
        self.sift_up(self.keys.len() - 1, k);
    }

    /// Replaces the smallest key by `k`.
    #[inline]
    fn replace_top(&mut self, k: u128) {
        // Down to a leaf along the smaller children, then up to where `k` belongs: a
        // stream moved on usually belongs near the bottom, so this compares less than
        // stopping on the way down.
        let pos = self.hole_to_leaf(0);
        self.sift_up(pos, k);
    }

    /// Removes the smallest key.
    #[inline]
    fn pop(&mut self) -> Option<u128> {
        let top = self.peek()?;
        let last = self.keys.pop()?;
        if !self.keys.is_empty() {
            let pos = self.hole_to_leaf(0);
            self.sift_up(pos, last);
        }
        Some(top)
    }

    /// Moves the hole at `pos` down to a leaf, each step filling it with its smallest
    /// child; returns the leaf.
    #[inline]
    fn hole_to_leaf(&mut self, mut pos: usize) -> usize {
        let k = &mut self.keys;
        let n = k.len();
        loop {
            let c = 4 * pos + 1;
            if c + 4 <= n {
                // Four children: the smallest without branching on the data.
                let (a, b) = if k[c + 1] < k[c] {
                    (c + 1, k[c + 1])
                } else {
                    (c, k[c])
                };
                let (d, e) = if k[c + 3] < k[c + 2] {
                    (c + 3, k[c + 3])
                } else {
                    (c + 2, k[c + 2])
                };
                let m = if e < b { d } else { a };
                k[pos] = k[m];
                pos = m;
            } else if c < n {
                let mut m = c;
                for j in c + 1..n {
                    if k[j] < k[m] {
                        m = j;
                    }
                }
                k[pos] = k[m];
                pos = m;
            } else {
                return pos;
            }
        }
    }

    /// Puts `key` at `pos` or above it, where it belongs.
    #[inline]
    fn sift_up(&mut self, mut pos: usize, key: u128) {
        let k = &mut self.keys;
        while pos > 0 {
            let parent = (pos - 1) / 4;
            if k[parent] <= key {
                break;
            }
            k[pos] = k[parent];
            pos = parent;
        }
        k[pos] = key;
    }
}

/// The streams of one transmit queue, by next deadline.
#[derive(Debug, Clone)]
pub struct Timeline {
    queue: Queue,
    hot: Vec<Hot>,
    cold: Vec<Cold>,
}

impl Timeline {
    /// Streams starting at `start_ns` (each after its own delay). At most `u32::MAX`
    /// streams (a run has at most `wire::signature::MAX_STREAMS`).
    pub fn new(schedules: Vec<Schedule>, start_ns: u64) -> Timeline {
        let mut queue = Queue::with_capacity(schedules.len());
        let mut hot = Vec::with_capacity(schedules.len());
        let mut cold = Vec::with_capacity(schedules.len());
        for (i, sched) in schedules.into_iter().enumerate() {
            let first = u128::from(start_ns.saturating_add(sched.start_delay_ns)) * FP_ONE;
            let end_fp = match sched.duration_ns {
                Some(d) => first + u128::from(d) * FP_ONE,
                None => u128::MAX,
            };
            let h = Hot {
                next_fp: first,
                end_fp,
                count: Count::default(),
                last_packet: sched.packets.unwrap_or(u64::MAX),
                interval: match sched.pace {
                    Pace::Interval(i) => i,
                    Pace::PerWireByte(_) => 0,
                },
                fixed_len: match sched.sizes {
                    SizeSeq::Fixed(l) => l,
                    _ => 0,
                },
                burst_packets: sched.burst.map_or(0, |b| b.packets),
                in_burst: 0,
                bursts: 0,
            };
            // A stream asked for no frame at all (a count of 0) is over before it starts.
            if h.last_packet != 0 {
                queue.push(key(h.deadline_ns(), i as u32));
            }
            hot.push(h);
            cold.push(Cold { sched });
        }
        Timeline { queue, hot, cold }
    }

    /// The next frame due at or before `now_ns`, if any; the stream moves on past it.
    #[inline]
    pub fn next(&mut self, now_ns: u64) -> Option<Due> {
        let (deadline_ns, i) = unkey(self.queue.peek()?);
        if deadline_ns > now_ns {
            return None;
        }
        let h = &mut self.hot[i as usize];
        let c = &self.cold[i as usize];
        let seq = h.count.packets;
        let len = h.len(c);
        if h.advance(len, c) {
            self.queue.replace_top(key(h.deadline_ns(), i));
        } else {
            self.queue.pop();
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
        self.queue.peek().map(|k| unkey(k).0)
    }

    /// Whether every stream has ended.
    #[inline]
    pub fn done(&self) -> bool {
        self.queue.is_empty()
    }

    /// How many streams the timeline holds.
    pub fn len(&self) -> usize {
        self.hot.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.hot.is_empty()
    }

    /// What stream `i` has been handed out so far.
    pub fn count(&self, i: usize) -> Count {
        self.hot[i].count
    }

    /// Every stream's count, in order.
    pub fn counts(&self) -> impl Iterator<Item = Count> + '_ {
        self.hot.iter().map(|s| s.count)
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
