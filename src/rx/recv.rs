//! The receiver: a receive backend (AF_PACKET TPACKET_V3 ring, or AF_XDP sockets fed by an
//! XDP redirect program) drained into the shared frame counters, sink and report.

use super::frame::{Class, FrameCounters, classify};
use super::report::{RxReport, RxStop, XdpReport};
use super::sink::{FlowKeyMode, Sink};
use super::xsk::XskReceiver;
use crate::sys::rx_ring::{RingStats, RxRing, RxRingConfig};
use crate::sys::xsk::XdpMode;
use serde::Serialize;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The receive backend asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RxBackend {
    /// AF_XDP where it works (the socket binds and the program attaches), else af_packet.
    Auto,
    /// AF_XDP sockets, one per RX queue, fed by an XDP redirect program (before tc and
    /// nftables ingress); zero-copy where the driver has it, else copy mode.
    #[value(name = "af_xdp")]
    AfXdp,
    /// AF_PACKET TPACKET_V3 ring (after tc and nftables ingress; --all-frames: a tap).
    #[value(name = "af_packet")]
    AfPacket,
}

/// A backend that can actually be opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RxKind {
    AfXdp,
    AfPacket,
}

impl RxKind {
    pub fn name(self) -> &'static str {
        match self {
            RxKind::AfXdp => "af_xdp",
            RxKind::AfPacket => "af_packet",
        }
    }
}

/// The backends to try, in order, for `req` (pure: the selection rule). `all_frames` (a tap
/// of every protocol) is an AF_PACKET feature.
pub fn candidates(req: RxBackend, all_frames: bool) -> Result<Vec<RxKind>, String> {
    match (req, all_frames) {
        (RxBackend::AfPacket, _) | (RxBackend::Auto, true) => Ok(vec![RxKind::AfPacket]),
        (RxBackend::AfXdp, true) => Err(
            "--all-frames: a tap of every protocol is an af_packet feature; the af_xdp receiver sees IPv4/UDP before tc and nftables ingress"
                .into(),
        ),
        (RxBackend::AfXdp, false) => Ok(vec![RxKind::AfXdp]),
        (RxBackend::Auto, false) => Ok(vec![RxKind::AfXdp, RxKind::AfPacket]),
    }
}

/// What the receiver is asked to do.
#[derive(Debug, Clone)]
pub struct RxConfig {
    pub backend: RxBackend,
    /// AF_XDP: UMEM frames (and RX/fill ring entries) per queue, a power of two.
    pub xsk_frames: u32,
    /// AF_XDP: Some(true) zero-copy only, Some(false) copy only, None whichever works.
    pub zerocopy: Option<bool>,
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
    /// Bytes of the frames seen.
    pub bytes: AtomicU64,
    /// Frames the socket dropped so far (XDP_STATISTICS or PACKET_STATISTICS), read about
    /// every 100 ms.
    pub drops: AtomicU64,
}

/// The open backend.
enum Source {
    Packet(RxRing),
    Xdp(XskReceiver),
}

/// A receiver on one interface of the calling thread's network namespace.
pub struct Receiver {
    source: Source,
    /// With --rx-backend auto: which backend was taken and why (for standard error).
    pub choice: Option<String>,
    cfg: RxConfig,
    frames: FrameCounters,
    sink: Sink,
    progress: Arc<RxProgress>,
    started: Option<Instant>,
    elapsed: Duration,
}

/// AF_XDP's figures in the shape of PACKET_STATISTICS: frames read, and the sockets' drops.
fn xdp_ring_stats(read: u64, c: &super::xsk::XdpRxCounters) -> RingStats {
    RingStats {
        packets: read,
        drops: c.socket.dropped(),
        freezes: 0,
    }
}

/// Frames one [`Receiver::drain`] processes at most before returning to the receive loop's
/// checks (stop, count, duration, the drop counters): about 2 ms of work at 8 Mpps.
const DRAIN_BUDGET: usize = 16_384;

impl Receiver {
    /// Opens the backend on `ifindex` (named `name`); frames are received from here on.
    /// With `auto`, a backend that cannot be opened is named in [`Receiver::choice`] and
    /// the next one tried.
    pub fn open(ifindex: u32, name: &str, cfg: RxConfig) -> io::Result<Receiver> {
        let kinds = candidates(cfg.backend, cfg.ring.all_frames)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        let mut failed: Vec<String> = Vec::new();
        let mut source = None;
        for k in &kinds {
            let r = match k {
                RxKind::AfXdp => {
                    XskReceiver::open(ifindex, name, cfg.xsk_frames, cfg.zerocopy).map(Source::Xdp)
                }
                RxKind::AfPacket => RxRing::open(ifindex, cfg.ring).map(Source::Packet),
            };
            match r {
                Ok(s) => {
                    source = Some(s);
                    break;
                }
                Err(e) if kinds.len() > 1 => failed.push(format!("{}: {e}", k.name())),
                Err(e) => return Err(e),
            }
        }
        let Some(source) = source else {
            return Err(io::Error::other(format!(
                "no receive backend works: {}",
                failed.join("; ")
            )));
        };
        let choice = (cfg.backend == RxBackend::Auto).then(|| {
            let taken = match &source {
                Source::Xdp(_) => "af_xdp",
                Source::Packet(_) if cfg.ring.all_frames => "af_packet (--all-frames is a tap)",
                Source::Packet(_) => "af_packet",
            };
            if failed.is_empty() {
                format!("--rx-backend auto: {taken}")
            } else {
                format!("--rx-backend auto: {taken} ({})", failed.join("; "))
            }
        });
        Ok(Receiver {
            source,
            choice,
            frames: FrameCounters::default(),
            sink: Sink::new(cfg.flow_key, cfg.expect_first),
            cfg,
            progress: Arc::new(RxProgress::default()),
            started: None,
            elapsed: Duration::ZERO,
        })
    }

    /// The backend in use.
    pub fn kind(&self) -> RxKind {
        match self.source {
            Source::Xdp(_) => RxKind::AfXdp,
            Source::Packet(_) => RxKind::AfPacket,
        }
    }

    /// Running totals, updated after each ring block.
    pub fn progress(&self) -> Arc<RxProgress> {
        Arc::clone(&self.progress)
    }

    /// Processes the frames the kernel has handed over, up to [`DRAIN_BUDGET`] of them (so
    /// that traffic arriving faster than it is read cannot keep the caller from its stop
    /// checks); returns the frames processed.
    pub fn drain(&mut self) -> usize {
        let mut total = 0;
        let (frames, sink) = (&mut self.frames, &mut self.sink);
        match &mut self.source {
            Source::Packet(ring) => {
                while total < DRAIN_BUDGET
                    && let Some(n) = ring.next_block(|data, meta| {
                        let mut class = classify(data);
                        if let Class::Pktgen(p) = &mut class {
                            if p.addr.vlan.is_none() {
                                p.addr.vlan = meta.vlan;
                            }
                            sink.record(p, Some(meta.ts_ns));
                        }
                        frames.count(&class, meta.wire_len as usize);
                    })
                {
                    total += n;
                }
            }
            Source::Xdp(x) => loop {
                // No kernel timestamp on AF_XDP: the time the batch is read stands for it.
                let n = x.drain(256, |data, now| {
                    let class = classify(data);
                    if let Class::Pktgen(p) = &class {
                        sink.record(p, Some(now));
                    }
                    frames.count(&class, data.len());
                });
                total += n;
                if n == 0 || total >= DRAIN_BUDGET {
                    break;
                }
            },
        }
        if total > 0 {
            self.progress
                .lost
                .store(self.sink.totals().lost, Ordering::Relaxed);
            self.progress
                .frames
                .store(self.frames.frames, Ordering::Relaxed);
            self.progress
                .bytes
                .store(self.frames.bytes, Ordering::Relaxed);
        }
        total
    }

    fn wait(&self, timeout_ms: i32) -> io::Result<bool> {
        match &self.source {
            Source::Packet(r) => r.wait(timeout_ms),
            Source::Xdp(x) => x.wait(timeout_ms),
        }
    }

    /// Receives until `stop` is set, the count or the duration is reached.
    pub fn run(&mut self, stop: &AtomicBool) -> io::Result<RxStop> {
        let t0 = Instant::now();
        self.started.get_or_insert(t0);
        let deadline = self.cfg.duration.map(|d| t0 + d);
        let mut drops_read = t0;
        let reason = loop {
            if drops_read.elapsed() >= Duration::from_millis(100) {
                drops_read = Instant::now();
                if let Ok(r) = self.ring_stats() {
                    self.progress.drops.store(r.drops, Ordering::Relaxed);
                }
            }
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
            if self.wait(timeout)? {
                self.drain();
            }
        };
        // Count what is already in the ring: a partly filled block is handed over within
        // the retire timeout, so keep draining until none comes within three of them (and
        // for at most 100 ms, so that steady traffic cannot keep the receiver going).
        let settle = (3 * self.cfg.ring.retire_ms + 10) as i32;
        let until = Instant::now() + Duration::from_millis(100);
        self.drain();
        while Instant::now() < until && self.wait(settle)? {
            self.drain();
        }
        if let Ok(r) = self.ring_stats() {
            self.progress.drops.store(r.drops, Ordering::Relaxed);
        }
        self.elapsed += t0.elapsed();
        Ok(reason)
    }

    /// The socket's own counters so far: PACKET_STATISTICS, or for AF_XDP frames read and
    /// the XDP_STATISTICS drops in the same shape.
    pub fn ring_stats(&mut self) -> io::Result<RingStats> {
        match &mut self.source {
            Source::Packet(r) => r.stats(),
            Source::Xdp(x) => Ok(xdp_ring_stats(self.frames.frames, &x.counters()?)),
        }
    }

    /// The report of everything received so far.
    pub fn report(&mut self, device: &str, stop: RxStop) -> io::Result<RxReport> {
        // One reading of the AF_XDP counters serves both the ring figures and the XDP
        // report, so that they describe the same moment and add up.
        let (ring, xdp_counters) = match &mut self.source {
            Source::Packet(r) => (r.stats()?, None),
            Source::Xdp(x) => {
                let c = x.counters()?;
                (xdp_ring_stats(self.frames.frames, &c), Some(c))
            }
        };
        let (mode, ring_bytes, xdp) = match &self.source {
            Source::Packet(r) => (
                if self.cfg.ring.all_frames {
                    "af_packet TPACKET_V3, ETH_P_ALL (a tap: before tc/nftables ingress)"
                } else {
                    "af_packet TPACKET_V3, ETH_P_IP (after tc/nftables ingress)"
                }
                .to_string(),
                r.bytes() as u64,
                None,
            ),
            Source::Xdp(x) => {
                let m = match x.mode {
                    XdpMode::ZeroCopy => "zero-copy",
                    XdpMode::Copy => "copy",
                };
                let a = match x.attach {
                    super::xsk::AttachMode::Native => "native XDP",
                    super::xsk::AttachMode::Generic => "generic XDP",
                };
                (
                    format!(
                        "af_xdp {m} mode, {a}, {} of {} RX queue(s) (IPv4/UDP, before tc/nftables ingress)",
                        x.queues(),
                        x.device_queues.map_or("?".to_string(), |n| n.to_string())
                    ),
                    x.umem_bytes(),
                    Some(XdpReport {
                        zero_copy: x.mode == XdpMode::ZeroCopy,
                        attach: x.attach,
                        queues_watched: x.queues(),
                        device_queues: x.device_queues,
                        counters: xdp_counters.expect("read above for af_xdp"),
                    }),
                )
            }
        };
        Ok(RxReport {
            device: device.to_string(),
            backend: self.kind(),
            mode,
            ring_bytes,
            stopped_by: stop,
            elapsed_ns: self.elapsed.as_nanos() as u64,
            frames: self.frames,
            ring,
            xdp,
            sink: self.sink.report(self.cfg.hist),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backend_selection() {
        use RxBackend::*;
        assert_eq!(
            candidates(Auto, false),
            Ok(vec![RxKind::AfXdp, RxKind::AfPacket])
        );
        assert_eq!(candidates(Auto, true), Ok(vec![RxKind::AfPacket]));
        assert_eq!(candidates(AfXdp, false), Ok(vec![RxKind::AfXdp]));
        assert_eq!(candidates(AfPacket, false), Ok(vec![RxKind::AfPacket]));
        assert_eq!(candidates(AfPacket, true), Ok(vec![RxKind::AfPacket]));
        let e = candidates(AfXdp, true).unwrap_err();
        assert!(e.contains("--all-frames") && e.contains("af_packet"), "{e}");
    }
}
