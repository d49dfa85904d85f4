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
    stats: BackendStats,
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
        Ok(AfPacket {
            batch: MmsgBatch::new(cfg.batch.max(1), template),
            sock,
            cfg,
            sndbuf,
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
            match self.batch.send(&self.sock, i, n) {
                Ok(k) => {
                    self.stats.kicks += 1;
                    i += k;
                    done.sent += k as u64;
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
