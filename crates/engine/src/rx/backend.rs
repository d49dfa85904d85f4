//! The receive-backend trait (the counterpart of [`crate::backend::TxBackend`]) and what
//! every backend reports.
//!
//! A backend owns its sockets and buffers: it is opened by its own `open` (in its file,
//! beside the batch calls), waits for frames, hands each one to a [`FrameSink`] (the
//! receive loop's classifier and sink, in [`super::recv`]) and reports its own counters
//! ([`RxStats`]) in the shape the report serialises. [`super::recv`] holds the only match
//! on [`RxKind`]: which backends to try, and opening one.

use crate::sys::rx_ring::{RingStats, RxMeta};
use crate::sys::xsk_rx::XskRxStats;
use serde::Serialize;
use std::io;

/// A backend that can actually be opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RxKind {
    AfXdp,
    AfPacket,
}

impl RxKind {
    /// The name as `--rx-backend` spells it.
    pub fn name(self) -> &'static str {
        match self {
            RxKind::AfXdp => "af_xdp",
            RxKind::AfPacket => "af_packet",
        }
    }
}

/// Where a backend hands the frames it receives.
pub trait FrameSink {
    /// One frame: the bytes captured, and its metadata (`ts_ns`: the receive time,
    /// CLOCK_REALTIME; `vlan`: a tag the device stripped into metadata).
    fn frame(&mut self, data: &[u8], meta: RxMeta);
}

/// A receive path. Generic over the sink so that each frame reaches it by a direct
/// (inlinable) call; the receive loop holds a `dyn RecvBackend<ItsSink>`.
pub trait RecvBackend<S: FrameSink> {
    fn kind(&self) -> RxKind;

    /// One line for the report: the mechanism and its settings.
    fn mode(&self) -> String;

    /// Bytes of the frame buffers: the ring's (af_packet) or the UMEM's, all queues (af_xdp).
    fn buffer_bytes(&self) -> u64;

    /// Waits up to `timeout_ms` for frames; returns whether frames are waiting.
    fn wait(&self, timeout_ms: i32) -> io::Result<bool>;

    /// Hands the frames the kernel has passed over to `sink`, stopping once `budget` of
    /// them were handed (finishing the batch it is in); returns the frames handed.
    fn drain(&mut self, budget: usize, sink: &mut S) -> usize;

    /// The backend's counters now, one reading: `read` is the frames drained so far.
    fn stats(&mut self, read: u64) -> io::Result<RxStats>;
}

/// A backend's counters, as the report carries them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct RxStats {
    /// af_packet: PACKET_STATISTICS. af_xdp: the frames read from the RX rings and the
    /// sockets' drops (XDP_STATISTICS) in the same shape.
    pub ring: RingStats,
    /// af_xdp only: its setup and the redirect program's and sockets' counters.
    pub xdp: Option<XdpReport>,
}

/// How the AF_XDP receiver's program is attached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttachMode {
    /// In the driver (XDP_FLAGS_DRV_MODE): needed for zero-copy.
    Native,
    /// Generic (skb) XDP: any device, always copy mode.
    Generic,
}

/// The AF_XDP receiver's own counters: the program's and the sockets' XDP_STATISTICS.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct XdpRxCounters {
    /// IPv4/UDP frames the program redirected to a socket.
    pub redirected: u64,
    /// IPv4/UDP frames passed to the stack: their queue has no socket.
    pub passed_no_socket: u64,
    /// Other frames (not IPv4/UDP), passed to the stack.
    pub passed_not_udp: u64,
    /// The sockets' XDP_STATISTICS, summed over queues.
    pub socket: XskRxStats,
}

/// The AF_XDP receiver's setup and counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct XdpReport {
    pub zero_copy: bool,
    pub attach: AttachMode,
    pub queues_watched: u32,
    /// RX queues the driver reports (None: it does not say; queue 0 alone is watched).
    pub device_queues: Option<u32>,
    /// The redirect program's counters and the sockets' XDP_STATISTICS.
    pub counters: XdpRxCounters,
}
