//! Transmit backends: the kernel paths frames take to the wire.
//!
//! A backend owns its frame buffers, prefilled once with the stream's template. The
//! sender asks for room ([`TxBackend::reserve`]), writes only the varying bytes of each
//! reserved frame ([`TxBackend::frame`]) and hands them over ([`TxBackend::submit`]).
//! Whenever a backend blocks (waiting for ring or socket space, or for the final
//! completions), it accounts the time as idle; that time is the `d` of pktgen's Result line.
//!
//! Each backend also owns its construction ([`Backend`]): a *plan* step that checks the
//! run's options against what it can honour and resolves its defaults (batch, ring,
//! qdisc bypass), made before anything needs privileges, and an *open* step that builds it
//! on the sending thread. [`BackendPlan`] holds the only `match` on [`BackendKind`]: adding
//! a backend touches this folder only.

pub mod af_packet;
pub mod af_xdp;
pub mod pcap;
pub mod ring;
pub mod tx_ring;
pub mod xdp_live;

use crate::choice::Choice;
use crate::pg::DevConfig;
use crate::stream::Frames;
use crate::sys::packet::PacketSocket;
use crate::txq::QueueStats;
use serde::Serialize;
use std::fmt;
use std::io;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

crate::choice! {
    /// The transmit paths `--backend` offers.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
    #[serde(rename_all = "snake_case")]
    pub enum BackendKind {
        /// AF_PACKET `sendmmsg`: works on any interface.
        AfPacket = "af_packet",
        /// AF_PACKET PACKET_MMAP TX ring (TPACKET_V2) with --ring/--stop-thresh/--start-thresh.
        TxRing = "tx_ring",
        /// AF_XDP socket with its own UMEM, TX and completion rings (zero-copy where the driver
        /// supports it, copy mode otherwise).
        AfXdp = "af_xdp",
        /// BPF_PROG_RUN with live frames (Linux 5.18+): an XDP program redirects copies of one
        /// frame to the device, writing the per-packet fields itself.
        XdpLive = "xdp_live",
        /// The fastest that works: in the lab xdp_live, then af_xdp, tx_ring, af_packet; on a
        /// named device af_xdp, tx_ring, af_packet (live frames vanish unless the receiving end
        /// has NAPI, which only the lab guarantees). Says which it chose and why.
        Auto = "auto",
    }
}

impl BackendKind {
    /// `--backend`'s default: af_packet, or for `xmit_mode netif_receive` xdp_live (the one
    /// path into a device's receive path).
    pub fn default_for(pg: &DevConfig) -> BackendKind {
        if pg.xmit_mode == Some(crate::pg::XmitMode::NetifReceive) {
            BackendKind::XdpLive
        } else {
            BackendKind::AfPacket
        }
    }

    /// The backend that injects into the device's receive path (`xmit_mode netif_receive`)
    /// for `--backend self`: xdp_live, which `auto` then means; any other is refused.
    pub fn injecting(self) -> Result<BackendKind, Refusal> {
        match self {
            BackendKind::XdpLive | BackendKind::Auto => Ok(BackendKind::XdpLive),
            k => Err(Refusal::NotInjecting(k)),
        }
    }

    /// Whether it sends the frames the user side writes, each as its source made it (a
    /// kpktgend thread's devices on one timeline need that): all but xdp_live, whose
    /// program rewrites one frame in the kernel. `auto`: some of its candidates do.
    pub fn writes_each_frame(self) -> bool {
        self != BackendKind::XdpLive
    }

    /// The backends `auto` tries, fastest first: in the lab xdp_live, then af_xdp, tx_ring,
    /// af_packet; on a named device the same without xdp_live (live frames vanish unless
    /// the receiving end has NAPI, which only the lab guarantees). One kind: itself.
    pub fn candidates(self, lab: bool) -> &'static [BackendKind] {
        const LAB: &[BackendKind] = &[
            BackendKind::XdpLive,
            BackendKind::AfXdp,
            BackendKind::TxRing,
            BackendKind::AfPacket,
        ];
        match self {
            BackendKind::Auto if lab => LAB,
            BackendKind::Auto => &LAB[1..],
            BackendKind::AfPacket => &[BackendKind::AfPacket],
            BackendKind::TxRing => &[BackendKind::TxRing],
            BackendKind::AfXdp => &[BackendKind::AfXdp],
            BackendKind::XdpLive => &[BackendKind::XdpLive],
        }
    }
}

/// An option a backend cannot honour, or a value it refuses: the message names the option.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("auto is resolved into its candidates first")]
    Auto,
    #[error("--xdp-live-plain applies to --backend xdp_live")]
    XdpLivePlain,
    #[error(
        "--sndbuf applies to af_packet (whose queue is the socket send buffer), not to {}",
        .0.name()
    )]
    Sndbuf(BackendKind),
    #[error("--qdisc-bypass applies to af_packet and tx_ring, not to {}", .0.name())]
    QdiscBypass(BackendKind),
    #[error("--qdisc-bypass and --xmit-mode both choose whether frames pass the qdisc: give one")]
    QdiscTwice,
    #[error(
        "--ring/--stop-thresh/--start-thresh apply to the ring backends (tx_ring, af_xdp), not to {}",
        .0.name()
    )]
    Ring(BackendKind),
    #[error("--ring {size}: {} needs a power of two from 1 to 65536", .kind.name())]
    RingSize { size: u32, kind: BackendKind },
    #[error(transparent)]
    RingConfig(#[from] crate::txq::RingConfigError),
    #[error(
        "--xmit-mode netif_receive: --backend {} transmits on the device; only xdp_live injects into its receive path (BPF_PROG_RUN live frames passed with XDP_PASS): use --backend xdp_live or auto",
        .0.name()
    )]
    NotInjecting(BackendKind),
    #[error(transparent)]
    XdpLive(#[from] xdp_live::XdpLiveRefusal),
}

/// Why a backend could not be set up here (`auto` then tries the next candidate): the
/// message names the backend and what failed.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("af_packet: setting up the AF_PACKET socket: {0}")]
    AfPacket(io::Error),
    #[error("tx_ring: setting up the PACKET_MMAP TX ring: {0}")]
    TxRing(io::Error),
    #[error(
        "af_xdp: cannot set up an AF_XDP socket on queue {queue} ({err}); {hint}--backend tx_ring or af_packet work everywhere"
    )]
    AfXdp {
        queue: u32,
        err: io::Error,
        /// What to check first, by errno (empty when nothing specific).
        hint: &'static str,
    },
    /// xdp_live's own words (each names xdp_live and what to do).
    #[error("{0}")]
    XdpLive(io::Error),
    #[error("xdp_live cannot --replay: its program rewrites one frame")]
    XdpLiveReplay,
    #[error(
        "xdp_live cannot send several devices of one thread on one timeline: its program rewrites one device's frame (use af_packet, tx_ring or af_xdp)"
    )]
    XdpLiveDevices,
}

/// The run's options that concern the transmit path, as given (None: not given, the
/// backend's default applies).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TxOptions {
    pub batch: Option<u16>,
    pub ring: ring::RingOptions,
    pub sndbuf: Option<u32>,
    pub qdisc_bypass: Option<bool>,
    pub xdp_live_plain: bool,
    /// The frames come from a pcap file (--replay), not from pktgen's walk.
    pub replay: bool,
    /// The frames are a config's streams (`--config`), not pktgen's walk.
    pub streams: bool,
}

/// Where a sender stands among the run's senders, for choices made per sender (af_xdp's
/// queue).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SenderSlot {
    pub index: usize,
    pub senders: usize,
    pub cpu: Option<usize>,
}

/// What opening needs that is known only once the device is probed and the frames built.
pub struct OpenAt {
    pub ifindex: u32,
    /// The device's TX queues.
    pub tx_queues: u16,
    /// SO_PRIORITY of packet sockets (pktgen's skb_priority; 0 = leave it).
    pub priority: u32,
}

impl OpenAt {
    /// A packet socket bound to the interface, with the priority set.
    pub fn packet_socket(&self) -> io::Result<PacketSocket> {
        let s = PacketSocket::open(self.ifindex)?;
        if self.priority != 0 {
            s.set_priority(self.priority)?;
        }
        Ok(s)
    }
}

/// A transmit path's construction, beside its batch calls ([`TxBackend`]).
pub trait Backend: TxBackend + Sized {
    const KIND: BackendKind;
    /// Its settings, every default resolved.
    type Config: Clone + fmt::Debug + Send;

    /// Checks the options against what this backend can honour and resolves its defaults;
    /// no syscall.
    fn plan(o: &TxOptions, pg: &DevConfig, slot: SenderSlot) -> Result<Self::Config, Refusal>;

    /// Builds it, on the thread that will send and in the device's network namespace.
    /// `frames` are the sender's (buffers are prefilled from them).
    fn open(c: &Self::Config, at: &OpenAt, frames: &Frames) -> Result<Self, OpenError>;
}

/// Something to do with an opened backend, whatever its type (so the send loop stays
/// monomorphic: no dynamic dispatch per batch).
pub trait WithBackend {
    type Out;
    fn with<B: TxBackend>(self, b: B, frames: &mut Frames) -> Self::Out;
}

/// One backend with its validated settings.
#[derive(Debug, Clone)]
pub enum BackendPlan {
    AfPacket(af_packet::AfPacketConfig),
    TxRing(tx_ring::TxRingConfig),
    AfXdp(af_xdp::AfXdpConfig),
    XdpLive(xdp_live::XdpLiveConfig),
}

impl BackendPlan {
    /// `kind`'s plan step (`auto` is resolved into its candidates before).
    pub fn new(
        kind: BackendKind,
        o: &TxOptions,
        pg: &DevConfig,
        slot: SenderSlot,
    ) -> Result<BackendPlan, Refusal> {
        Ok(match kind {
            BackendKind::AfPacket => BackendPlan::AfPacket(af_packet::AfPacket::plan(o, pg, slot)?),
            BackendKind::TxRing => BackendPlan::TxRing(tx_ring::TxRing::plan(o, pg, slot)?),
            BackendKind::AfXdp => BackendPlan::AfXdp(af_xdp::AfXdp::plan(o, pg, slot)?),
            BackendKind::XdpLive => BackendPlan::XdpLive(xdp_live::XdpLive::plan(o, pg, slot)?),
            BackendKind::Auto => {
                return Err(Refusal::Auto);
            }
        })
    }

    pub fn kind(&self) -> BackendKind {
        match self {
            BackendPlan::AfPacket(_) => BackendKind::AfPacket,
            BackendPlan::TxRing(_) => BackendKind::TxRing,
            BackendPlan::AfXdp(_) => BackendKind::AfXdp,
            BackendPlan::XdpLive(_) => BackendKind::XdpLive,
        }
    }

    /// Whether its frames vanish unless the receiving veth end has NAPI (xdp_live, unless
    /// it passes them to a receive path).
    pub fn needs_peer_napi(&self) -> bool {
        matches!(self, BackendPlan::XdpLive(c) if !c.receive)
    }

    /// Whether it injects into the device's receive path (`xmit_mode netif_receive`).
    pub fn injects(&self) -> bool {
        matches!(self, BackendPlan::XdpLive(c) if c.receive)
    }

    /// Whether it binds one TX queue of the device (af_xdp), so that pktgen's queue_map
    /// options apply.
    pub fn binds_a_queue(&self) -> bool {
        matches!(self, BackendPlan::AfXdp(_))
    }

    /// Opens the backend and hands it to `u`; Err when it cannot be set up here (`auto`
    /// then tries the next candidate).
    pub fn open<U: WithBackend>(
        &self,
        at: &OpenAt,
        frames: &mut Frames,
        u: U,
    ) -> Result<U::Out, OpenError> {
        Ok(match self {
            BackendPlan::AfPacket(c) => {
                let b = af_packet::AfPacket::open(c, at, frames)?;
                u.with(b, frames)
            }
            BackendPlan::TxRing(c) => {
                let b = tx_ring::TxRing::open(c, at, frames)?;
                u.with(b, frames)
            }
            BackendPlan::AfXdp(c) => {
                let b = af_xdp::AfXdp::open(c, at, frames)?;
                u.with(b, frames)
            }
            BackendPlan::XdpLive(c) => {
                let b = xdp_live::XdpLive::open(c, at, frames)?;
                u.with(b, frames)
            }
        })
    }
}

/// Refuses `--xdp-live-plain` for a backend other than xdp_live.
pub fn refuse_xdp_live_plain(o: &TxOptions) -> Result<(), Refusal> {
    if o.xdp_live_plain {
        return Err(Refusal::XdpLivePlain);
    }
    Ok(())
}

/// Refuses `--sndbuf` for a backend whose queue is not the socket send buffer.
pub fn refuse_sndbuf(o: &TxOptions, kind: BackendKind) -> Result<(), Refusal> {
    if o.sndbuf.is_some() {
        return Err(Refusal::Sndbuf(kind));
    }
    Ok(())
}

/// Refuses `--qdisc-bypass` for a backend without a qdisc on its path.
pub fn refuse_qdisc_bypass(o: &TxOptions, kind: BackendKind) -> Result<(), Refusal> {
    if o.qdisc_bypass.is_some() {
        return Err(Refusal::QdiscBypass(kind));
    }
    Ok(())
}

/// PACKET_QDISC_BYPASS for a packet socket: --qdisc-bypass, else the device's xmit_mode
/// (start_xmit bypasses), else `default`; both given is refused.
pub fn qdisc_bypass(o: &TxOptions, pg: &DevConfig, default: bool) -> Result<bool, Refusal> {
    if o.qdisc_bypass.is_some() && pg.xmit_mode.is_some() {
        return Err(Refusal::QdiscTwice);
    }
    Ok(o.qdisc_bypass
        .or(pg.xmit_mode.map(|m| m == crate::pg::XmitMode::StartXmit))
        .unwrap_or(default))
}

/// --batch, or the backend's default.
pub fn batch(o: &TxOptions, default: u16) -> usize {
    usize::from(o.batch.unwrap_or(default))
}

/// What a failed kick of a ring means: the frames stay on the ring and go with the next
/// kick (EAGAIN: the kernel moved a batch and more remain; EBUSY/ENOBUFS: no room below the
/// driver right now; EINTR), or the run cannot go on ([`send_error`]).
pub fn kick_result(r: io::Result<()>) -> io::Result<()> {
    match r {
        Err(e)
            if !matches!(
                e.raw_os_error(),
                Some(libc::EAGAIN | libc::EBUSY | libc::ENOBUFS | libc::EINTR)
            ) =>
        {
            Err(send_error(e))
        }
        _ => Ok(()),
    }
}

/// A send error that ends the run, with the interface named when it went away or down.
pub fn send_error(e: io::Error) -> io::Error {
    match e.raw_os_error() {
        Some(libc::ENETDOWN | libc::ENXIO | libc::ENODEV) => {
            io::Error::new(e.kind(), format!("the interface went away or down: {e}"))
        }
        _ => e,
    }
}

/// What a submit did with the frames it was given.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Submitted {
    /// Frames the kernel accepted.
    pub sent: u64,
    /// Frames the kernel refused (counted as pktgen counts errors).
    pub errors: u64,
}

/// Counters every backend keeps; they add up over senders (`+=`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct BackendStats {
    /// Stops and wakes of the transmit queue (see [`crate::txq`]).
    pub queue: QueueStats,
    /// Time spent blocked, in ns: waiting for room while stopped plus the final drain.
    pub idle_ns: u64,
    /// Of `idle_ns`, the time the queue was stopped (waiting for a wake).
    pub stopped_ns: u64,
    /// Syscalls that handed frames to the kernel.
    pub kicks: u64,
    /// Frames counted as sent at submit that the kernel later reported malformed (the
    /// sender moves them from sent to errors).
    pub late_errors: u64,
    /// Bytes (af_packet) or frames (ring backends) still not completed when the final
    /// drain gave up; 0 normally.
    pub undrained: u64,
    /// Counters a backend keeps beyond these (xdp_live: its frames by cause), each set in
    /// the JSON under its backend's name.
    #[serde(flatten)]
    pub own: OwnCounters,
}

impl std::ops::AddAssign<&BackendStats> for BackendStats {
    fn add_assign(&mut self, b: &BackendStats) {
        self.queue += b.queue;
        self.idle_ns += b.idle_ns;
        self.stopped_ns += b.stopped_ns;
        self.kicks += b.kicks;
        self.late_errors += b.late_errors;
        self.undrained += b.undrained;
        self.own += &b.own;
    }
}

/// How one of a backend's own counters adds up over senders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Merge {
    Sum,
    /// The latest non-zero value (an error code).
    LastNonZero,
}

/// One of a backend's own counters: its name in reports, its value, how it adds up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counter {
    pub name: &'static str,
    pub value: i64,
    pub merge: Merge,
}

impl Counter {
    /// A count, summed over senders.
    pub fn sum(name: &'static str, value: u64) -> Counter {
        Counter {
            name,
            value: i64::try_from(value).unwrap_or(i64::MAX),
            merge: Merge::Sum,
        }
    }

    /// A code (an errno), the latest non-zero one kept.
    pub fn last_non_zero(name: &'static str, value: i64) -> Counter {
        Counter {
            name,
            value,
            merge: Merge::LastNonZero,
        }
    }

    fn add(&mut self, o: &Counter) {
        match self.merge {
            Merge::Sum => self.value = self.value.saturating_add(o.value),
            Merge::LastNonZero if o.value != 0 => self.value = o.value,
            Merge::LastNonZero => {}
        }
    }
}

/// The counters backends keep beyond [`BackendStats`]' shared ones, as (backend name, its
/// counters in order); they add up by name (`+=`) and serialise as one JSON object per
/// backend (`"xdp_live": {"redirected": 3, ...}`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OwnCounters(pub Vec<(&'static str, Vec<Counter>)>);

impl OwnCounters {
    /// One backend's counters.
    pub fn of(backend: &'static str, counters: Vec<Counter>) -> OwnCounters {
        OwnCounters(vec![(backend, counters)])
    }

    /// The value of `backend`'s counter `name`, if it keeps one.
    pub fn get(&self, backend: &str, name: &str) -> Option<i64> {
        let (_, cs) = self.0.iter().find(|(b, _)| *b == backend)?;
        cs.iter().find(|c| c.name == name).map(|c| c.value)
    }
}

impl std::ops::AddAssign<&OwnCounters> for OwnCounters {
    fn add_assign(&mut self, o: &OwnCounters) {
        for (backend, counters) in &o.0 {
            let Some((_, mine)) = self.0.iter_mut().find(|(b, _)| b == backend) else {
                self.0.push((backend, counters.clone()));
                continue;
            };
            for c in counters {
                match mine.iter_mut().find(|m| m.name == c.name) {
                    Some(m) => m.add(c),
                    None => mine.push(*c),
                }
            }
        }
    }
}

impl Serialize for OwnCounters {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        struct Set<'a>(&'a [Counter]);
        impl Serialize for Set<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut m = s.serialize_map(Some(self.0.len()))?;
                for c in self.0 {
                    m.serialize_entry(c.name, &c.value)?;
                }
                m.end()
            }
        }
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (backend, counters) in &self.0 {
            m.serialize_entry(backend, &Set(counters))?;
        }
        m.end()
    }
}

/// How a backend describes itself in reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BackendInfo {
    /// `af_packet`, ...
    pub name: &'static str,
    /// One line: the mechanism and its settings.
    pub detail: String,
    /// One line: what "the queue" is for this backend and its stop/start thresholds.
    pub queue: String,
}

/// A transmit path.
pub trait TxBackend {
    fn info(&self) -> BackendInfo;

    /// The largest batch `reserve` can return.
    fn max_batch(&self) -> usize;

    /// Room for up to `want` frames. Blocks (idle) while the queue is stopped, until it is
    /// woken; returns 0 only when `stop` was set while waiting.
    fn reserve(&mut self, want: usize, stop: &AtomicBool) -> io::Result<usize>;

    /// Whether the sender writes each frame's varying bytes (sequence number, timestamp,
    /// ports, checksums). A backend whose frames are replicated and patched inside the
    /// kernel (by an XDP program) says false, and the sender only counts.
    fn fills_frames(&self) -> bool {
        true
    }

    /// Bytes of the frames sent, for a backend that makes frames of varying sizes itself
    /// (xdp_live's program): the Result line's bps then counts them. None: the frame
    /// source's sizes apply.
    fn bytes_sent(&self) -> Option<u64> {
        None
    }

    /// Reserved frame `i` (0-based, below the last `reserve`'s count), to be sent with `len`
    /// bytes (at most the prefill's length): its first `len` bytes, to patch in place.
    fn frame(&mut self, i: usize, len: usize) -> &mut [u8];

    /// Hands the first `n` reserved frames to the kernel. Frames the kernel has no room
    /// for are retried after waiting (idle) unless `stop` is set, in which case they are
    /// dropped unsent and not counted.
    fn submit(&mut self, n: usize, stop: &AtomicBool) -> io::Result<Submitted>;

    /// Waits up to `timeout` for every frame handed over to complete (idle).
    fn drain(&mut self, timeout: Duration) -> io::Result<()>;

    fn stats(&self) -> BackendStats;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn xdp(redirected: u64, last_err: i64) -> BackendStats {
        BackendStats {
            kicks: 1,
            own: OwnCounters::of(
                "xdp_live",
                vec![
                    Counter::sum("redirected", redirected),
                    Counter::last_non_zero("last_err", last_err),
                ],
            ),
            ..BackendStats::default()
        }
    }

    #[test]
    fn own_counters_add_by_name_and_serialise_under_the_backend() {
        let mut s = BackendStats::default();
        s += &xdp(3, -6);
        s += &xdp(4, 0);
        assert_eq!(s.kicks, 2);
        assert_eq!(s.own.get("xdp_live", "redirected"), Some(7));
        // The latest non-zero error is kept.
        assert_eq!(s.own.get("xdp_live", "last_err"), Some(-6));
        // After the shared counters, in the order the backend gives them.
        let text = serde_json::to_string(&s).unwrap();
        assert!(
            text.ends_with(r#","kicks":2,"late_errors":0,"undrained":0,"xdp_live":{"redirected":7,"last_err":-6}}"#),
            "{text}"
        );
        // A backend without counters of its own adds no key.
        let plain = serde_json::to_string(&BackendStats::default()).unwrap();
        assert!(plain.ends_with(r#","undrained":0}"#), "{plain}");
    }
}
