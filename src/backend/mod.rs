//! Transmit backends: the kernel paths frames take to the wire.
//!
//! A backend owns its frame buffers, prefilled once with the stream's template. The
//! sender asks for room ([`TxBackend::reserve`]), writes only the varying bytes of each
//! reserved frame ([`TxBackend::frame`]) and hands them over ([`TxBackend::submit`]).
//! Whenever a backend blocks (waiting for ring or socket space, or for the final
//! completions), it accounts the time as idle; that time is the `d` of pktgen's Result line.

pub mod af_packet;
pub mod af_xdp;
pub mod ring;
pub mod tx_ring;
pub mod xdp_live;

use crate::txq::QueueStats;
use serde::Serialize;
use std::io;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// The transmit paths `--backend` offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BackendKind {
    /// AF_PACKET `sendmmsg`: works on any interface.
    #[value(name = "af_packet")]
    AfPacket,
    /// AF_PACKET PACKET_MMAP TX ring (TPACKET_V2) with --ring/--stop-thresh/--start-thresh.
    #[value(name = "tx_ring")]
    TxRing,
    /// AF_XDP socket with its own UMEM, TX and completion rings (zero-copy where the driver
    /// supports it, copy mode otherwise).
    #[value(name = "af_xdp")]
    AfXdp,
    /// BPF_PROG_RUN with live frames (Linux 5.18+): an XDP program redirects copies of one
    /// frame to the device, writing the per-packet fields itself.
    #[value(name = "xdp_live")]
    XdpLive,
    /// The fastest that works: in the lab xdp_live, then af_xdp, tx_ring, af_packet; on a
    /// named device af_xdp, tx_ring, af_packet (live frames vanish unless the receiving end
    /// has NAPI, which only the lab guarantees). Says which it chose and why.
    #[value(name = "auto")]
    Auto,
}

impl BackendKind {
    /// The name as `--backend` spells it.
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::AfPacket => "af_packet",
            BackendKind::TxRing => "tx_ring",
            BackendKind::AfXdp => "af_xdp",
            BackendKind::XdpLive => "xdp_live",
            BackendKind::Auto => "auto",
        }
    }
}

/// What a failed kick of a ring means: the frames stay on the ring and go with the next
/// kick (EAGAIN: the kernel moved a batch and more remain; EBUSY/ENOBUFS: no room below the
/// driver right now; EINTR), or the run cannot go on ([`send_error`]).
pub(crate) fn kick_result(r: io::Result<()>) -> io::Result<()> {
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
pub(crate) fn send_error(e: io::Error) -> io::Error {
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

/// Counters every backend keeps.
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
    /// xdp_live: its frames by cause (redirected by the program, accepted or refused by the
    /// driver).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xdp_live: Option<xdp_live::XdpLiveCounters>,
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
