//! The receiver: a receive backend ([`super::backend::RecvBackend`]: AF_PACKET TPACKET_V3
//! ring, or AF_XDP sockets fed by an XDP redirect program) drained into the shared frame
//! counters, sink and report. The selection of the backend ([`candidates`], [`select`],
//! `open_kind`) is the only place that names them all.

use super::af_packet::AfPacketRx;
use super::af_xdp::AfXdpRx;
pub use super::backend::RxKind;
use super::backend::{FrameSink, RecvBackend};
use super::frame::{Class, FrameCounters, classify};
use super::report::{RxReport, RxStop};
use super::sink::{FlowKeyMode, FlowReport, Sink};
use super::streams::{RxStreams, StreamTable, StreamsReport};
use crate::sys::rx_ring::{RingStats, RxMeta, RxRingConfig};
use serde::Serialize;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, TryLockError};
use std::time::{Duration, Instant};

crate::choice! {
    /// The receive backend asked for.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum RxBackend {
        /// AF_XDP where it works (the socket binds and the program attaches), else af_packet.
        Auto = "auto",
        /// AF_XDP sockets, one per RX queue, fed by an XDP redirect program (before tc and
        /// nftables ingress); zero-copy where the driver has it, else copy mode.
        AfXdp = "af_xdp",
        /// AF_PACKET TPACKET_V3 ring (after tc and nftables ingress; --all-frames: a tap).
        AfPacket = "af_packet",
    }
}

/// A receive backend that cannot do what was asked of it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unfit {
    #[error(
        "--all-frames: a tap of every protocol is an af_packet feature; the af_xdp receiver sees IPv4/UDP before tc and nftables ingress"
    )]
    AllFramesOnXdp,
}

/// The backends to try, in order, for `req` (pure: the selection rule). `all_frames` (a tap
/// of every protocol) is an AF_PACKET feature.
pub fn candidates(req: RxBackend, all_frames: bool) -> Result<Vec<RxKind>, Unfit> {
    match (req, all_frames) {
        (RxBackend::AfPacket, _) | (RxBackend::Auto, true) => Ok(vec![RxKind::AfPacket]),
        (RxBackend::AfXdp, true) => Err(Unfit::AllFramesOnXdp),
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
    /// Count each frame in its stream by the signature at its end (None: off).
    pub streams: Option<RxStreams>,
}

/// Running totals of a receiver, readable from other threads while it runs (the totals
/// updated after each ring block, the flows at most every [`FLOW_PUBLISH_INTERVAL`]).
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
    /// Every flow's sequence counters, published by the receive loop.
    pub flows: FlowBoard,
    /// With streams: each stream's figures as they arrive (frames, bytes, open holes,
    /// latency buckets), and the streams' names.
    pub streams: std::sync::OnceLock<Arc<super::streams::LiveTable>>,
}

/// How often, at most, the receive loop publishes its flows' counters ([`RxProgress::flows`]).
pub const FLOW_PUBLISH_INTERVAL: Duration = Duration::from_millis(250);

/// The receiver's per-flow counters as last published, for other threads (the metrics
/// endpoint). The receive loop copies its sink's flows in at most every
/// [`FLOW_PUBLISH_INTERVAL`] and never waits for the board: while a reader holds it, the
/// loop goes on and tries again at its next turn. Nothing is done per frame.
#[derive(Debug, Default)]
pub struct FlowBoard {
    slot: Mutex<Vec<FlowReport>>,
}

impl FlowBoard {
    /// From the receive loop: replaces the published flows with `sink`'s, unless a reader
    /// holds the board (false then, and nothing waited).
    pub fn try_publish(&self, sink: &Sink) -> bool {
        let mut slot = match self.slot.try_lock() {
            Ok(g) => g,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return false,
        };
        sink.flows_into(&mut slot);
        true
    }

    /// Replaces the published flows with `sink`'s, waiting for a reader to let go (when the
    /// receive loop ends: the last figures).
    pub fn publish(&self, sink: &Sink) {
        sink.flows_into(&mut self.slot.lock().unwrap_or_else(|e| e.into_inner()));
    }

    /// The flows as last published, in the order the receiver first saw them (empty before
    /// the first publication).
    pub fn snapshot(&self) -> Vec<FlowReport> {
        self.slot.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// When the receive loop publishes its flows next: as soon as frames have come in, then
/// every [`FLOW_PUBLISH_INTERVAL`] at most, and only when more frames came in since.
#[derive(Debug, Default)]
struct FlowPublisher {
    /// When it last published, and the frame count then.
    last: Option<(Instant, u64)>,
}

impl FlowPublisher {
    fn due(&self, now: Instant, frames: u64) -> bool {
        match self.last {
            None => frames > 0,
            Some((at, n)) => frames != n && now.duration_since(at) >= FLOW_PUBLISH_INTERVAL,
        }
    }

    fn published(&mut self, now: Instant, frames: u64) {
        self.last = Some((now, frames));
    }
}

/// Where the backends hand their frames: classification, the frame counters, the
/// sequence/latency sink and, when asked for, the stream table.
struct Intake {
    frames: FrameCounters,
    sink: Sink,
    /// The stream table, and what it was told (names, clock offset, streams shown).
    streams: Option<(StreamTable, RxStreams)>,
}

impl Intake {
    /// Empty counters for `cfg`; a stream table of the size it asks (refused when that is 0
    /// or above 65,536).
    fn new(cfg: &RxConfig) -> io::Result<Intake> {
        let streams = match &cfg.streams {
            Some(s) => Some((
                StreamTable::named(s.names.clone(), s.from_start)
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?,
                s.clone(),
            )),
            None => None,
        };
        Ok(Intake {
            frames: FrameCounters::default(),
            sink: Sink::new(cfg.flow_key, cfg.expect_first),
            streams,
        })
    }

    /// The streams' part of the report (None when not counting streams).
    fn streams_report(&self) -> Option<StreamsReport> {
        let (table, cfg) = self.streams.as_ref()?;
        let mut r = table.report(&cfg.names, cfg.shown);
        r.clock_offset_ns = cfg.clock_offset_ns;
        Some(r)
    }
}

impl FrameSink for Intake {
    #[inline]
    fn frame(&mut self, data: &[u8], meta: RxMeta) {
        let mut class = classify(data);
        if let Class::Pktgen(p) = &mut class {
            if p.addr.vlan.is_none() {
                p.addr.vlan = meta.vlan;
            }
            self.sink.record(p, Some(meta.ts_ns));
        }
        self.frames.count(&class, meta.wire_len as usize);
        // Whatever the headers are: the signature is the frame's last 16 bytes.
        if let Some((t, cfg)) = &mut self.streams {
            t.record_frame(data, meta.wire_len, meta.ts_ns, cfg.clock_offset_ns);
        }
    }
}

/// An open backend, whichever it is.
type Backend = Box<dyn RecvBackend<Intake>>;

/// Opens a backend of `kind` on `ifindex` (named `name`).
fn open_kind(kind: RxKind, ifindex: u32, name: &str, cfg: &RxConfig) -> io::Result<Backend> {
    Ok(match kind {
        RxKind::AfXdp => Box::new(AfXdpRx::open(ifindex, name, cfg.xsk_frames, cfg.zerocopy)?),
        RxKind::AfPacket => Box::new(AfPacketRx::open(ifindex, cfg.ring)?),
    })
}

/// Opens the first of [`candidates`] that `open` can open. With `auto`, a backend that
/// fails is named with its error and the next one tried, and the third value says which
/// was taken and why (for standard error); an explicit choice fails with its own error.
pub fn select<B>(
    req: RxBackend,
    all_frames: bool,
    mut open: impl FnMut(RxKind) -> io::Result<B>,
) -> io::Result<(B, RxKind, Option<String>)> {
    let kinds =
        candidates(req, all_frames).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    let mut failed: Vec<String> = Vec::new();
    let mut opened = None;
    for &k in &kinds {
        match open(k) {
            Ok(b) => {
                opened = Some((b, k));
                break;
            }
            Err(e) if kinds.len() > 1 => failed.push(format!("{}: {e}", k.name())),
            Err(e) => return Err(e),
        }
    }
    let Some((b, kind)) = opened else {
        return Err(io::Error::other(format!(
            "no receive backend works: {}",
            failed.join("; ")
        )));
    };
    let choice = (req == RxBackend::Auto).then(|| {
        let taken = match kind {
            RxKind::AfPacket if all_frames => "af_packet (--all-frames is a tap)",
            k => k.name(),
        };
        if failed.is_empty() {
            format!("--rx-backend auto: {taken}")
        } else {
            format!("--rx-backend auto: {taken} ({})", failed.join("; "))
        }
    });
    Ok((b, kind, choice))
}

/// A receiver on one interface of the calling thread's network namespace.
pub struct Receiver {
    backend: Backend,
    /// With --rx-backend auto: which backend was taken and why (for standard error).
    pub choice: Option<String>,
    cfg: RxConfig,
    intake: Intake,
    progress: Arc<RxProgress>,
    started: Option<Instant>,
    elapsed: Duration,
}

/// Frames one [`Receiver::drain`] processes at most before returning to the receive loop's
/// checks (stop, count, duration, the drop counters): about 2 ms of work at 8 Mpps.
const DRAIN_BUDGET: usize = 16_384;

impl Receiver {
    /// Opens the backend on `ifindex` (named `name`); frames are received from here on.
    /// With `auto`, a backend that cannot be opened is named in [`Receiver::choice`] and
    /// the next one tried.
    pub fn open(ifindex: u32, name: &str, cfg: RxConfig) -> io::Result<Receiver> {
        let intake = Intake::new(&cfg)?;
        let progress = RxProgress::default();
        if let Some((t, _)) = &intake.streams {
            let _ = progress.streams.set(t.live());
        }
        let progress = Arc::new(progress);
        let (backend, _, choice) = select(cfg.backend, cfg.ring.all_frames, |k| {
            open_kind(k, ifindex, name, &cfg)
        })?;
        Ok(Receiver {
            backend,
            choice,
            intake,
            cfg,
            progress,
            started: None,
            elapsed: Duration::ZERO,
        })
    }

    /// The backend in use.
    pub fn kind(&self) -> RxKind {
        self.backend.kind()
    }

    /// Running totals, updated after each ring block.
    pub fn progress(&self) -> Arc<RxProgress> {
        Arc::clone(&self.progress)
    }

    /// Processes the frames the kernel has handed over, up to [`DRAIN_BUDGET`] of them (so
    /// that traffic arriving faster than it is read cannot keep the caller from its stop
    /// checks); returns the frames processed.
    pub fn drain(&mut self) -> usize {
        let total = self.backend.drain(DRAIN_BUDGET, &mut self.intake);
        if total > 0 {
            let i = &self.intake;
            self.progress
                .lost
                .store(i.sink.totals().lost, Ordering::Relaxed);
            self.progress
                .frames
                .store(i.frames.frames, Ordering::Relaxed);
            self.progress.bytes.store(i.frames.bytes, Ordering::Relaxed);
        }
        total
    }

    fn wait(&self, timeout_ms: i32) -> io::Result<bool> {
        self.backend.wait(timeout_ms)
    }

    /// Receives until `stop` is set, the count or the duration is reached.
    pub fn run(&mut self, stop: &AtomicBool) -> io::Result<RxStop> {
        let t0 = Instant::now();
        self.started.get_or_insert(t0);
        let deadline = self.cfg.duration.map(|d| t0 + d);
        let mut drops_read = t0;
        let mut flows = FlowPublisher::default();
        let reason = loop {
            let now = Instant::now();
            if now.duration_since(drops_read) >= Duration::from_millis(100) {
                drops_read = now;
                if let Ok(r) = self.ring_stats() {
                    self.progress.drops.store(r.drops, Ordering::Relaxed);
                }
            }
            let frames = self.intake.frames.frames;
            if flows.due(now, frames) && self.progress.flows.try_publish(&self.intake.sink) {
                flows.published(now, frames);
            }
            if stop.load(Ordering::Relaxed) {
                break RxStop::Interrupted;
            }
            if self.cfg.count > 0 && self.intake.frames.frames >= self.cfg.count {
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
        self.progress.flows.publish(&self.intake.sink);
        self.elapsed += t0.elapsed();
        Ok(reason)
    }

    /// The socket's own counters so far: PACKET_STATISTICS, or for AF_XDP frames read and
    /// the XDP_STATISTICS drops in the same shape.
    pub fn ring_stats(&mut self) -> io::Result<RingStats> {
        Ok(self.backend.stats(self.intake.frames.frames)?.ring)
    }

    /// The report of everything received so far.
    pub fn report(&mut self, device: &str, stop: RxStop) -> io::Result<RxReport> {
        let stats = self.backend.stats(self.intake.frames.frames)?;
        Ok(RxReport {
            host: crate::host::hostname(),
            version: crate::host::VERSION.into(),
            device: device.to_string(),
            backend: self.backend.kind(),
            mode: self.backend.mode(),
            ring_bytes: self.backend.buffer_bytes(),
            stopped_by: stop,
            elapsed_ns: self.elapsed.as_nanos() as u64,
            frames: self.intake.frames,
            ring: stats.ring,
            xdp: stats.xdp,
            sink: self.intake.sink.report(self.cfg.hist),
            streams: self.intake.streams_report(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rx::sink::tests::pf;

    #[test]
    fn flow_board_publishes_a_copy_and_never_waits_for_a_reader() {
        let b = FlowBoard::default();
        assert!(b.snapshot().is_empty());
        let mut sink = Sink::new(FlowKeyMode::Addr, Some(1));
        for seq in [1, 2, 4] {
            sink.record(&pf([10, 0, 0, 1], 9, seq, (0, 0)), None);
        }
        sink.record(&pf([10, 0, 0, 3], 9, 1, (0, 0)), None);
        assert!(b.try_publish(&sink));
        let first = b.snapshot();
        assert_eq!(first, sink.report(false).flows);
        assert_eq!((first[0].seq.received, first[0].seq.lost), (3, 1));
        assert_eq!(first[1].flow.src_ip, std::net::Ipv4Addr::new(10, 0, 0, 3));
        // The late 3 closes the hole; a new flow appears.
        sink.record(&pf([10, 0, 0, 1], 9, 3, (0, 0)), None);
        sink.record(&pf([10, 0, 0, 5], 9, 1, (0, 0)), None);
        {
            // A reader holds the board: the receive loop is not held up, nothing changes.
            let _reader = b.slot.lock().unwrap();
            assert!(!b.try_publish(&sink));
        }
        assert_eq!(b.snapshot(), first);
        assert!(b.try_publish(&sink));
        let now = b.snapshot();
        assert_eq!(now, sink.report(false).flows);
        assert_eq!(now.len(), 3);
        assert_eq!((now[0].seq.lost, now[0].seq.reordered), (0, 1));
        // The end of the loop waits for the board and leaves the last figures.
        sink.record(&pf([10, 0, 0, 1], 9, 3, (0, 0)), None);
        b.publish(&sink);
        assert_eq!(b.snapshot()[0].seq.duplicates, 1);
    }

    /// A receiver's configuration as the lab's is (af_packet, sequences from 1).
    fn intake_config() -> RxConfig {
        RxConfig {
            backend: RxBackend::AfPacket,
            xsk_frames: crate::rx::DEFAULT_XSK_FRAMES,
            zerocopy: None,
            ring: Default::default(),
            flow_key: FlowKeyMode::Addr,
            expect_first: Some(1),
            count: 0,
            duration: None,
            hist: false,
            streams: None,
        }
    }

    /// The receive path's own intake (what a backend hands each frame to), fed byte frames:
    /// upktgen's pktgen frames with a signature at their end, one rewritten into another
    /// protocol, one of a stream not expected, one without a signature.
    #[test]
    fn the_intake_counts_each_stream_beside_the_pktgen_flows() {
        use crate::rx::streams::RxStreams;
        use crate::wire::signature::Signature;
        use crate::wire::{FrameSpec, MacAddr, PacketFields, Udp4Template};
        let mut cfg = intake_config();
        cfg.streams = Some(RxStreams {
            clock_offset_ns: -1000,
            ..RxStreams::new(vec!["udp-a".into(), "udp-b".into()])
        });
        let mut intake = Intake::new(&cfg).unwrap();
        let t = Udp4Template::new(&FrameSpec {
            dst_mac: MacAddr([2, 0, 0, 0, 0, 2]),
            src_mac: MacAddr([2, 0, 0, 0, 0, 1]),
            src_ip: std::net::Ipv4Addr::new(10, 0, 0, 1),
            dst_ip: std::net::Ipv4Addr::new(10, 0, 0, 2),
            tos: 0,
            pkt_size: 100,
            udp_csum: false,
        })
        .unwrap();
        let t0 = 1_700_000_000_000_000_000u64;
        let meta = |ts_ns: u64, len: usize| RxMeta {
            ts_ns,
            wire_len: len as u32,
            vlan: None,
        };
        let fields = |k: u32| PacketFields {
            ip_id: k as u16,
            udp_src: 9,
            udp_dst: 9,
            seq: k + 1,
            tv_sec: 1_700_000_000,
            tv_usec: 0,
        };
        let mut f = t.frame().to_vec();
        for k in 0..20u32 {
            t.write(&mut f, &fields(k));
            if k == 7 {
                continue; // lost: the flow's 8, stream 1's 3
            }
            let tx_ns = t0 + u64::from(k) * 1000;
            Signature {
                stream: (k % 2) as u16,
                seq: k / 2,
                tx_ns,
            }
            .emit(&mut f);
            intake.frame(&f, meta(tx_ns + 6000, f.len()));
        }
        // Rewritten by the DUT into an IPv6 frame: still stream 0's number 10.
        let mut v6 = vec![0u8; 80];
        v6[12..14].copy_from_slice(&[0x86, 0xdd]);
        let tx_ns = t0 + 20_000;
        Signature {
            stream: 0,
            seq: 10,
            tx_ns,
        }
        .emit(&mut v6);
        intake.frame(&v6, meta(tx_ns + 6000, v6.len()));
        // Stream 2 is not expected; a pktgen frame without a signature.
        Signature {
            stream: 2,
            seq: 0,
            tx_ns,
        }
        .emit(&mut f);
        intake.frame(&f, meta(tx_ns + 6000, f.len()));
        let mut plain = t.frame().to_vec();
        t.write(&mut plain, &fields(21));
        intake.frame(&plain, meta(tx_ns + 6000, plain.len()));

        assert_eq!(intake.frames.frames, 22);
        assert_eq!((intake.frames.pktgen, intake.frames.other), (21, 1));
        let r = intake.streams_report().unwrap();
        assert_eq!((r.foreign, r.unsigned, r.clock_offset_ns), (1, 1, -1000));
        let (a, b) = (&r.streams[0], &r.streams[1]);
        assert_eq!(
            (a.name.as_str(), a.frames, a.bytes),
            ("udp-a", 11, 10 * 100 + 80)
        );
        assert_eq!((a.seq.received, a.seq.lost, a.last_seq), (11, 0, Some(10)));
        assert_eq!((b.frames, b.seq.lost, b.last_seq), (9, 1, Some(9)));
        let l = r.aggregate.latency.unwrap();
        assert_eq!((l.min_ns, l.max_ns, l.count), (5000, 5000, 20));
        assert_eq!(r.aggregate.jitter_max_ns, Some(0.0));
        assert_eq!((r.aggregate.frames, r.aggregate.seq.lost), (20, 1));
        assert!(r.text().contains("udp-b"), "{}", r.text());
        // Without streams in the configuration, nothing of this is kept.
        let plain = Intake::new(&intake_config()).unwrap();
        assert!(plain.streams_report().is_none());
    }

    #[test]
    fn a_stream_table_of_no_stream_is_refused_before_any_socket() {
        let mut cfg = intake_config();
        cfg.streams = Some(RxStreams::new(Vec::new()));
        let e = Intake::new(&cfg).err().unwrap();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        assert_eq!(
            e.to_string(),
            "streams: none to count (expected at least 1)"
        );
    }

    #[test]
    fn flows_are_published_at_the_first_frames_then_at_most_every_interval() {
        let t0 = Instant::now();
        let mut p = FlowPublisher::default();
        assert!(!p.due(t0, 0), "nothing received, nothing to publish");
        assert!(p.due(t0, 5), "the first frames are published at once");
        p.published(t0, 5);
        assert!(!p.due(t0 + FLOW_PUBLISH_INTERVAL / 2, 10));
        assert!(p.due(t0 + FLOW_PUBLISH_INTERVAL, 10));
        p.published(t0 + FLOW_PUBLISH_INTERVAL, 10);
        // No frame since: nothing to publish, however long it has been.
        assert!(!p.due(t0 + 100 * FLOW_PUBLISH_INTERVAL, 10));
    }

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
        let e = candidates(AfXdp, true).unwrap_err().to_string();
        assert!(e.contains("--all-frames") && e.contains("af_packet"), "{e}");
    }

    /// An opener that fails for the kinds in `fail`, with an error naming the kind.
    fn opener(fail: &[RxKind]) -> impl FnMut(RxKind) -> io::Result<RxKind> + '_ {
        move |k| {
            if fail.contains(&k) {
                Err(io::Error::other(format!("no {} here", k.name())))
            } else {
                Ok(k)
            }
        }
    }

    #[test]
    fn auto_takes_af_xdp_when_it_opens() {
        let (b, k, why) = select(RxBackend::Auto, false, opener(&[])).unwrap();
        assert_eq!((b, k), (RxKind::AfXdp, RxKind::AfXdp));
        assert_eq!(why.as_deref(), Some("--rx-backend auto: af_xdp"));
    }

    #[test]
    fn auto_falls_back_to_af_packet_and_says_why() {
        let (b, k, why) = select(RxBackend::Auto, false, opener(&[RxKind::AfXdp])).unwrap();
        assert_eq!((b, k), (RxKind::AfPacket, RxKind::AfPacket));
        assert_eq!(
            why.as_deref(),
            Some("--rx-backend auto: af_packet (af_xdp: no af_xdp here)")
        );
    }

    #[test]
    fn auto_with_all_frames_is_the_af_packet_tap() {
        let mut tried = Vec::new();
        let (_, k, why) = select(RxBackend::Auto, true, |k| {
            tried.push(k);
            Ok::<_, io::Error>(())
        })
        .unwrap();
        assert_eq!((k, tried), (RxKind::AfPacket, vec![RxKind::AfPacket]));
        assert_eq!(
            why.as_deref(),
            Some("--rx-backend auto: af_packet (--all-frames is a tap)")
        );
    }

    #[test]
    fn auto_names_every_failure_when_none_opens() {
        let e = select(
            RxBackend::Auto,
            false,
            opener(&[RxKind::AfXdp, RxKind::AfPacket]),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "no receive backend works: af_xdp: no af_xdp here; af_packet: no af_packet here"
        );
    }

    #[test]
    fn an_explicit_backend_is_not_replaced_and_keeps_its_error() {
        let (_, k, why) = select(RxBackend::AfPacket, false, opener(&[])).unwrap();
        assert_eq!((k, why), (RxKind::AfPacket, None));
        let e = select(RxBackend::AfXdp, false, opener(&[RxKind::AfXdp])).unwrap_err();
        assert_eq!(e.to_string(), "no af_xdp here");
        let e = select(RxBackend::AfXdp, true, opener(&[])).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        assert!(e.to_string().contains("--all-frames"), "{e}");
    }
}
