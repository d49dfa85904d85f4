//! The AF_PACKET receiver: drains the TPACKET_V3 ring into the frame counters and the sink.

use super::frame::{Class, FrameCounters, classify};
use super::report::{RxReport, RxStop};
use super::sink::{FlowKeyMode, Sink};
use crate::sys::rx_ring::{RingStats, RxRing, RxRingConfig};
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// What the receiver is asked to do.
#[derive(Debug, Clone)]
pub struct RxConfig {
    pub ring: RxRingConfig,
    pub flow_key: FlowKeyMode,
    /// The first sequence number each sender is known to start at (the lab: 1).
    pub expect_first: Option<u32>,
    /// Stop after this many frames (0 = no limit): checked after each ring block, so the
    /// frames of the block in which it is reached are all counted.
    pub count: u64,
    pub duration: Option<Duration>,
    /// Keep the whole latency histogram for the report.
    pub hist: bool,
}

/// Running totals of a receiver, readable from other threads while it runs (updated after
/// each ring block).
#[derive(Debug, Default)]
pub struct RxProgress {
    /// Frames seen.
    pub frames: AtomicU64,
    /// Sequence holes open (summed over flows).
    pub lost: AtomicU64,
}

/// A receiver on one interface of the calling thread's network namespace.
pub struct Receiver {
    ring: RxRing,
    cfg: RxConfig,
    frames: FrameCounters,
    sink: Sink,
    progress: Arc<RxProgress>,
    started: Option<Instant>,
    elapsed: Duration,
}

impl Receiver {
    /// Opens the ring on `ifindex`; frames are received from here on.
    pub fn open(ifindex: u32, cfg: RxConfig) -> io::Result<Receiver> {
        let ring = RxRing::open(ifindex, cfg.ring)?;
        Ok(Receiver {
            ring,
            frames: FrameCounters::default(),
            sink: Sink::new(cfg.flow_key, cfg.expect_first),
            cfg,
            progress: Arc::new(RxProgress::default()),
            started: None,
            elapsed: Duration::ZERO,
        })
    }

    /// Running totals, updated after each ring block.
    pub fn progress(&self) -> Arc<RxProgress> {
        Arc::clone(&self.progress)
    }

    /// Processes every block the kernel has handed over; returns the frames processed.
    pub fn drain(&mut self) -> usize {
        let mut total = 0;
        let (frames, sink) = (&mut self.frames, &mut self.sink);
        while let Some(n) = self.ring.next_block(|data, meta| {
            let mut class = classify(data);
            if let Class::Pktgen(p) = &mut class {
                if p.addr.vlan.is_none() {
                    p.addr.vlan = meta.vlan;
                }
                sink.record(p, Some(meta.ts_ns));
            }
            frames.count(&class, meta.wire_len as usize);
        }) {
            total += n;
        }
        if total > 0 {
            self.progress
                .lost
                .store(self.sink.totals().lost, Ordering::Relaxed);
            self.progress
                .frames
                .store(self.frames.frames, Ordering::Relaxed);
        }
        total
    }

    /// Receives until `stop` is set, the count or the duration is reached.
    pub fn run(&mut self, stop: &AtomicBool) -> io::Result<RxStop> {
        let t0 = Instant::now();
        self.started.get_or_insert(t0);
        let deadline = self.cfg.duration.map(|d| t0 + d);
        let reason = loop {
            if stop.load(Ordering::Relaxed) {
                break RxStop::Interrupted;
            }
            if self.cfg.count > 0 && self.frames.frames >= self.cfg.count {
                break RxStop::Count;
            }
            let timeout = match deadline {
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        break RxStop::Duration;
                    }
                    (d - now).as_millis().clamp(1, 100) as i32
                }
                None => 100,
            };
            if self.ring.wait(timeout)? {
                self.drain();
            }
        };
        // Count what is already in the ring: a partly filled block is handed over within
        // the retire timeout, so keep draining until none comes within three of them (and
        // for at most 100 ms, so that steady traffic cannot keep the receiver going).
        let settle = (3 * self.cfg.ring.retire_ms + 10) as i32;
        let until = Instant::now() + Duration::from_millis(100);
        self.drain();
        while Instant::now() < until && self.ring.wait(settle)? {
            self.drain();
        }
        self.elapsed += t0.elapsed();
        Ok(reason)
    }

    /// PACKET_STATISTICS so far.
    pub fn ring_stats(&mut self) -> io::Result<RingStats> {
        self.ring.stats()
    }

    /// The report of everything received so far.
    pub fn report(&mut self, device: &str, stop: RxStop) -> io::Result<RxReport> {
        let ring = self.ring.stats()?;
        Ok(RxReport {
            device: device.to_string(),
            mode: if self.cfg.ring.all_frames {
                "af_packet TPACKET_V3, ETH_P_ALL (a tap: before tc/nftables ingress)"
            } else {
                "af_packet TPACKET_V3, ETH_P_IP (after tc/nftables ingress)"
            }
            .to_string(),
            ring_bytes: self.ring.bytes() as u64,
            stopped_by: stop,
            elapsed_ns: self.elapsed.as_nanos() as u64,
            frames: self.frames,
            ring,
            sink: self.sink.report(self.cfg.hist),
        })
    }
}
