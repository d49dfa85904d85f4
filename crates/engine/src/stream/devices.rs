//! Several pktgen devices on one kpktgend thread as one [`FrameSource`]: each device keeps
//! its own frames (the fast path or the full walk, as it would alone: its sizes, addresses,
//! ports, flags and pktgen sequence numbers), its own pace (`delay`, `burst`) and its own
//! `count`; one [`Timeline`] of the devices says whose frame is next, earliest deadline
//! first, as the kernel's thread loop serves the device whose next transmit time is
//! earliest.
//!
//! Paced devices are due as they would be alone: burst `b` of device `i` at
//! `j * b * delay_i`. Devices without a delay share the thread in turn (each is given
//! 1 ns a frame on the timeline, so ties go round: no device takes more than its burst in a
//! row); a thread cannot mix the two (the unpaced ones would starve the others) nor hold a
//! device that never sends (`delay` at its maximum): [`TimelineError`].
//!
//! A buffer may hold another device's frame: each frame is written whole, its device's
//! prefilled bytes first. What each device handed over (frames, bytes) is kept for its own
//! `Result:` ([`DeviceTimeline::parts`]); the source's own figures are the thread's, its
//! bytes every frame's real length.

use super::ahead::Ahead;
use super::timeline::{BurstShape, FP_ONE, Pace, Schedule, Timeline};
use super::{FrameSource, Frames, Stamp};
use crate::pg::generate::Generator;

/// How one device is paced and bounded, as its own sender would be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// pktgen's `count` (0: until stopped).
    pub count: u64,
    /// ns between frames (pktgen's delay; 0: as fast as the thread goes).
    pub delay_ns: u64,
    /// Frames back to back per tick of `burst * delay_ns`.
    pub burst: u32,
    /// Stamp its pktgen header (false with NO_TIMESTAMP).
    pub timestamps: bool,
}

/// Why devices cannot share one timeline.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimelineError {
    #[error("no device")]
    Empty,
    #[error("device {0} never sends (delay at its maximum): it has no place on a timeline")]
    NeverSends(usize),
    #[error(
        "devices {paced} (paced) and {unpaced} (no delay) on one timeline: the unpaced one would take the thread"
    )]
    Mixed { paced: usize, unpaced: usize },
}

impl Timing {
    fn schedule(&self) -> Schedule {
        let burst = u64::from(self.burst.max(1));
        // Unpaced: 1 ns a frame on the timeline, so that such devices take turns.
        let tick = u128::from(self.delay_ns.max(1)) * FP_ONE;
        Schedule {
            pace: Pace::Interval(0),
            // The lengths are the device's own frames'; the timeline's are not read.
            sizes: super::spec::SizeSeq::Fixed(0),
            packets: (self.count != 0).then_some(self.count),
            duration_ns: None,
            burst: Some(BurstShape {
                packets: burst,
                gap_fp: tick * u128::from(burst),
                count: None,
            }),
            start_delay_ns: 0,
        }
    }
}

/// One device's frames and what it has handed over.
struct Part {
    frames: Frames,
    prefill: Vec<u8>,
    timestamps: bool,
    handed: u64,
    bytes: u64,
}

/// What one device handed over in a run, for its own `Result:` and `Current:`.
#[derive(Debug, Clone)]
pub struct PartFigures {
    /// Frames handed to the backend (sent, or refused by the kernel).
    pub frames: u64,
    /// Their bytes, each frame's real length.
    pub bytes: u64,
    /// What its own sender's Result would show: `pkt_size`, IMIX's bytes, a size range.
    pub pkt_size: u32,
    pub imix_bytes: Option<u64>,
    pub size_range: Option<(u32, u32)>,
    /// The walk's state at the end, when its frames came from the full walk.
    pub walk: Option<Generator>,
}

/// A thread's devices on one timeline.
pub struct DeviceTimeline {
    parts: Vec<Part>,
    timeline: Ahead,
    cur: usize,
    len: usize,
    max_len: usize,
    handed: u64,
    bytes: u64,
    /// The smallest and largest frame handed over.
    lo: u32,
    hi: u32,
}

impl DeviceTimeline {
    /// Device `i`'s frames `devices[i].0` on its timing `devices[i].1`; every device is due
    /// from the start of the send.
    pub fn new(devices: Vec<(Frames, Timing)>) -> Result<DeviceTimeline, TimelineError> {
        if devices.is_empty() {
            return Err(TimelineError::Empty);
        }
        if let Some(i) = devices.iter().position(|(_, t)| t.delay_ns == u64::MAX) {
            return Err(TimelineError::NeverSends(i));
        }
        let paced = devices.iter().position(|(_, t)| t.delay_ns != 0);
        let unpaced = devices.iter().position(|(_, t)| t.delay_ns == 0);
        if let (Some(paced), Some(unpaced)) = (paced, unpaced) {
            return Err(TimelineError::Mixed { paced, unpaced });
        }
        let schedules = devices.iter().map(|(_, t)| t.schedule()).collect();
        let parts: Vec<Part> = devices
            .into_iter()
            .map(|(frames, t)| Part {
                prefill: frames.prefill(),
                frames,
                timestamps: t.timestamps,
                handed: 0,
                bytes: 0,
            })
            .collect();
        Ok(DeviceTimeline {
            max_len: parts.iter().map(|p| p.prefill.len()).max().unwrap_or(0),
            parts,
            timeline: Ahead::new(Timeline::new(schedules, 0)),
            cur: 0,
            len: 0,
            handed: 0,
            bytes: 0,
            lo: u32::MAX,
            hi: 0,
        })
    }

    /// How many devices share the timeline.
    pub fn len(&self) -> usize {
        self.parts.len()
    }

    /// Whether it has none (never: [`DeviceTimeline::new`] refuses it).
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }

    /// Whether any device's walk draws random numbers.
    pub fn uses_random(&self) -> bool {
        self.parts
            .iter()
            .any(|p| p.frames.generator().is_some_and(Generator::uses_random))
    }

    /// Each device's figures so far, in the order given.
    pub fn parts(&self) -> Vec<PartFigures> {
        self.parts
            .iter()
            .map(|p| PartFigures {
                frames: p.handed,
                bytes: p.bytes,
                pkt_size: p.frames.pkt_size(),
                imix_bytes: p.frames.imix_bytes(),
                size_range: p.frames.size_range(),
                walk: p.frames.generator().cloned(),
            })
            .collect()
    }
}

impl FrameSource for DeviceTimeline {
    fn prefill(&self) -> Vec<u8> {
        // Every frame is written whole from its device's own prefill.
        vec![0; self.max_len]
    }

    #[inline]
    fn advance(&mut self) -> usize {
        // The loop asks only for frames it was told are due (or the run's count when every
        // device ends by its count): none left is a frame it will not send.
        if let Some(d) = self.timeline.take() {
            self.cur = d.stream as usize;
        }
        self.len = self.parts[self.cur].frames.advance();
        self.len
    }

    #[inline]
    fn write(&mut self, buf: &mut [u8], stamp: Stamp) {
        let p = &mut self.parts[self.cur];
        let n = buf.len();
        buf.copy_from_slice(&p.prefill[..n]);
        let stamp = if p.timestamps {
            stamp
        } else {
            Stamp::default()
        };
        p.frames.write(buf, stamp);
    }

    #[inline]
    fn sent(&mut self) {
        let p = &mut self.parts[self.cur];
        p.frames.sent();
        p.handed += 1;
        p.bytes += self.len as u64;
        self.handed += 1;
        self.bytes += self.len as u64;
        let len = self.len as u32;
        (self.lo, self.hi) = (self.lo.min(len), self.hi.max(len));
    }

    /// One size: that size; sizes that vary: the mean frame (the line gives the range).
    fn pkt_size(&self) -> u32 {
        match self.size_range() {
            Some(_) => u32::try_from(self.bytes / self.handed.max(1)).unwrap_or(u32::MAX),
            None => self.parts[0].frames.pkt_size(),
        }
    }

    /// Sizes that vary: the bytes of every frame, each counted at its real length (one
    /// size: `sent * pkt_size` is that).
    fn imix_bytes(&self) -> Option<u64> {
        self.size_range().map(|_| self.bytes)
    }

    fn size_range(&self) -> Option<(u32, u32)> {
        (self.handed > 0 && self.lo != self.hi).then_some((self.lo, self.hi))
    }

    fn due_ns(&mut self, k: u64) -> Option<u64> {
        Some(self.timeline.due_ns(k))
    }
}

#[cfg(test)]
mod tests;
