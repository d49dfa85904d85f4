//! AF_PACKET with `sendmmsg`: the portable path, works on any interface.
//!
//! The queue here is the socket's send buffer: every frame handed over holds an skb
//! charged to the socket until the driver frees it (on a NIC, at TX completion). The kernel
//! makes the threshold decisions itself: a send fails with EAGAIN when the next skb would
//! not fit in SO_SNDBUF (the *stop*), and `poll` reports the socket writable again only when
//! at least half of SO_SNDBUF is free (`sock_writeable`: the *start* threshold is half the
//! buffer — hysteresis of half a ring). upktgen counts each EAGAIN as a stop and each
//! return from the wait as a wake. On veth the skb is orphaned as it crosses to the peer,
//! so the buffer never fills and stops stay at zero: veth has no TX ring.
//!
//! A refused frame is an error, counted once, and the run goes on with the next frame, as
//! pktgen does. `sendmmsg` stops at the first frame that fails and, when some went before
//! it, returns their count and drops the failed frame's error, so a short count alone does
//! not say whether that frame was refused (a qdisc or nftables drop: ENOBUFS) or found the
//! buffer full (EAGAIN: a stop; the frame is sent again after the wait). upktgen therefore
//! hands over in one call only as many frames as the buffer can take without filling
//! ([`SendRoom`]): then a short count can only be a refusal. When the buffer may be full,
//! one frame goes alone and its error comes back with it.

use super::{
    Backend, BackendInfo, BackendKind, BackendStats, OpenAt, OpenError, Refusal, SenderSlot,
    Submitted, TxBackend, TxOptions,
};
use crate::sys::packet::{MmsgBatch, PacketSocket};
use std::io;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Settings of the AF_PACKET backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AfPacketConfig {
    /// Frames per sendmmsg.
    pub batch: usize,
    /// SO_SNDBUF to request (None: the system default).
    pub sndbuf: Option<u32>,
    /// PACKET_QDISC_BYPASS.
    pub qdisc_bypass: bool,
}

/// Frames per sendmmsg unless --batch.
pub const DEFAULT_BATCH: u16 = 64;

impl Backend for AfPacket {
    const KIND: BackendKind = BackendKind::AfPacket;
    type Config = AfPacketConfig;

    fn plan(
        o: &TxOptions,
        pg: &crate::pg::DevConfig,
        _: SenderSlot,
    ) -> Result<AfPacketConfig, Refusal> {
        super::refuse_xdp_live_plain(o)?;
        let qdisc_bypass = super::qdisc_bypass(o, pg, false)?;
        o.ring.refuse(Self::KIND)?;
        Ok(AfPacketConfig {
            batch: super::batch(o, DEFAULT_BATCH),
            sndbuf: o.sndbuf,
            qdisc_bypass,
        })
    }

    fn open(
        c: &AfPacketConfig,
        at: &OpenAt,
        frames: &crate::stream::Frames,
    ) -> Result<AfPacket, OpenError> {
        at.packet_socket()
            .and_then(|s| AfPacket::new(s, &crate::stream::FrameSource::prefill(frames), *c))
            .map_err(OpenError::AfPacket)
    }
}

pub struct AfPacket {
    sock: PacketSocket,
    batch: MmsgBatch,
    cfg: AfPacketConfig,
    sndbuf: u32,
    room: SendRoom,
    stats: BackendStats,
}

/// An upper bound on the memory one frame of `len` bytes charges to a packet socket's send
/// buffer (its skb's truesize): the kernel allocates the frame with the device's headroom
/// and the skb's shared info (together under 1 KiB) in one block rounded up to a power of
/// two, or, for a frame near a page or longer, a small head and whole pages; plus the
/// `struct sk_buff` (under 512 bytes).
pub fn truesize_bound(len: usize, page: usize) -> u64 {
    let linear = (len + 1024).next_power_of_two();
    let bound = if len + 1024 < page {
        linear
    } else {
        linear.max(2048 + len.div_ceil(page) * page)
    };
    bound as u64 + 512
}

/// How many frames the socket's send buffer can take in one `sendmmsg` with none of them
/// finding it full. The kernel refuses a frame with EAGAIN only when the bytes already
/// charged to the socket reach SO_SNDBUF; only this sender charges it, and completions
/// only lower the charge, so from an upper bound on the charge the count is certain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SendRoom {
    sndbuf: u64,
    per_frame: u64,
    /// An upper bound on the bytes charged (SIOCOUTQ) now.
    charged: u64,
}

impl SendRoom {
    pub fn new(sndbuf: u32, per_frame: u64) -> SendRoom {
        SendRoom {
            sndbuf: u64::from(sndbuf),
            per_frame: per_frame.max(1),
            charged: 0,
        }
    }

    /// Frames that can go in one call: frame j is allocated with at most
    /// `charged + j * per_frame` bytes charged, which must stay below SO_SNDBUF.
    pub fn frames(&self) -> u64 {
        self.sndbuf
            .checked_sub(self.charged)
            .map_or(0, |free| free.div_ceil(self.per_frame))
    }

    /// `n` more frames handed over.
    pub fn charge(&mut self, n: u64) {
        self.charged = self
            .charged
            .saturating_add(n.saturating_mul(self.per_frame));
    }

    /// The charge as the kernel reports it now (SIOCOUTQ).
    pub fn measured(&mut self, outq: u32) {
        self.charged = u64::from(outq);
    }
}

impl AfPacket {
    /// Wraps an open socket; every buffer is prefilled with `template`.
    pub fn new(sock: PacketSocket, template: &[u8], cfg: AfPacketConfig) -> io::Result<Self> {
        if let Some(b) = cfg.sndbuf {
            sock.set_sndbuf(b)?;
        }
        if cfg.qdisc_bypass {
            sock.set_qdisc_bypass(true)?;
        }
        let sndbuf = sock.sndbuf()?;
        let mut room = SendRoom::new(
            sndbuf,
            truesize_bound(template.len(), crate::sys::page_size()),
        );
        room.measured(sock.outq()?);
        Ok(AfPacket {
            batch: MmsgBatch::new(cfg.batch.max(1), template),
            sock,
            cfg,
            sndbuf,
            room,
            stats: BackendStats::default(),
        })
    }

    /// Blocks until the socket is writable again (or `stop`), accounting the time.
    fn wait_writable(&mut self, stop: &AtomicBool) -> io::Result<bool> {
        let t0 = crate::sys::monotonic_ns();
        let mut woke = false;
        while !stop.load(Ordering::Relaxed) {
            // Short timeouts so a stop request is seen promptly.
            let rev = crate::sys::poll_one(self.sock.as_fd(), libc::POLLOUT, 50)?;
            if rev & (libc::POLLERR | libc::POLLHUP | libc::POLLNVAL) != 0 {
                return Err(io::Error::other(
                    "the socket reported an error while waiting for room",
                ));
            }
            if rev & libc::POLLOUT != 0 {
                woke = true;
                break;
            }
        }
        let dt = crate::sys::monotonic_ns() - t0;
        self.stats.idle_ns += dt;
        self.stats.stopped_ns += dt;
        if woke {
            self.stats.queue.wakes += 1;
        }
        Ok(woke)
    }
}

impl TxBackend for AfPacket {
    fn info(&self) -> BackendInfo {
        BackendInfo {
            name: "af_packet",
            detail: format!(
                "AF_PACKET sendmmsg, batch {}, qdisc bypass {}",
                self.cfg.batch,
                if self.cfg.qdisc_bypass { "on" } else { "off" }
            ),
            queue: format!(
                "socket send buffer SO_SNDBUF={} bytes; kernel stops at full, wakes at half free",
                self.sndbuf
            ),
        }
    }

    fn max_batch(&self) -> usize {
        self.batch.slots()
    }

    fn reserve(&mut self, want: usize, _stop: &AtomicBool) -> io::Result<usize> {
        // The kernel copies each frame at send time, so every buffer is free again as
        // soon as sendmmsg returns; room in the socket is found out at submit.
        Ok(want.min(self.batch.slots()))
    }

    #[inline]
    fn frame(&mut self, i: usize, len: usize) -> &mut [u8] {
        self.batch.frame_mut(i, len)
    }

    fn submit(&mut self, n: usize, stop: &AtomicBool) -> io::Result<Submitted> {
        let mut done = Submitted::default();
        let mut i = 0;
        while i < n {
            let left = (n - i) as u64;
            if self.room.frames() < left {
                self.room.measured(self.sock.outq()?);
            }
            // At least one frame: alone, its own error comes back.
            let chunk = self.room.frames().clamp(1, left) as usize;
            match self.batch.send(&self.sock, i, i + chunk) {
                Ok(k) => {
                    self.stats.kicks += 1;
                    self.room.charge(k as u64);
                    i += k;
                    done.sent += k as u64;
                    if k < chunk {
                        // Frame i failed with its error lost, and not for a full buffer
                        // (the chunk fits): the kernel refused it. An error, as pktgen
                        // counts it; the next frame goes next.
                        done.errors += 1;
                        i += 1;
                    }
                }
                Err(e) => match e.raw_os_error() {
                    Some(libc::EAGAIN) => {
                        self.stats.kicks += 1;
                        self.stats.queue.stops += 1;
                        if !self.wait_writable(stop)? {
                            break; // stopping: the rest stays unsent
                        }
                    }
                    Some(libc::EINTR) => {}
                    // The qdisc or driver dropped the frame: pktgen counts that as an error.
                    Some(libc::ENOBUFS) => {
                        self.stats.kicks += 1;
                        done.errors += 1;
                        i += 1;
                    }
                    _ => return Err(super::send_error(e)),
                },
            }
        }
        self.stats.queue.posted += done.sent;
        Ok(done)
    }

    fn drain(&mut self, timeout: Duration) -> io::Result<()> {
        let t0 = crate::sys::monotonic_ns();
        let limit = t0 + timeout.as_nanos() as u64;
        loop {
            let q = self.sock.outq()?;
            let now = crate::sys::monotonic_ns();
            if q == 0 || now >= limit {
                self.stats.undrained = u64::from(q);
                break;
            }
            std::thread::sleep(Duration::from_micros(50));
        }
        self.stats.idle_ns += crate::sys::monotonic_ns() - t0;
        self.stats.queue.completed = self.stats.queue.posted;
        Ok(())
    }

    fn stats(&self) -> BackendStats {
        self.stats.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_s_bound_covers_what_the_kernel_charges() {
        // A 60-byte frame on veth is charged 768 bytes (a 512-byte block and the skb).
        assert_eq!(truesize_bound(60, 4096), 2048 + 512);
        assert!(truesize_bound(1514, 4096) >= 2048 + 256);
        // A jumbo frame: a head and three pages, or one 16 KiB block.
        assert_eq!(truesize_bound(9000, 4096), 16384 + 512);
        assert_eq!(truesize_bound(13_000, 4096), 2048 + 4 * 4096 + 512);
        // Under a 64 KiB page it is linear.
        assert_eq!(truesize_bound(9000, 65536), 16384 + 512);
    }

    #[test]
    fn the_room_lets_no_frame_of_a_call_find_the_buffer_full() {
        let mut r = SendRoom::new(10_000, 1_000);
        assert_eq!(r.frames(), 10);
        r.charge(9);
        // 9,000 charged: one more frame is allocated below SO_SNDBUF, a second would not be.
        assert_eq!(r.frames(), 1);
        r.charge(1);
        assert_eq!(r.frames(), 0);
        r.charge(5);
        assert_eq!(r.frames(), 0, "over the buffer: none");
        // The kernel freed all but 4,500 bytes: frames at 4,500 .. 9,500 charged still go.
        r.measured(4_500);
        assert_eq!(r.frames(), 6);
        r.measured(0);
        assert_eq!(r.frames(), 10);
    }
}
