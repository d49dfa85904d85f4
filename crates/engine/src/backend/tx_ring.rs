//! AF_PACKET with PACKET_MMAP: a TX ring of TPACKET_V2 frames shared with the kernel.
//!
//! Every frame of the mapped ring is prefilled with the template once. Per packet, only the
//! varying bytes are written into the frame and its status word is set to SEND_REQUEST;
//! one `send()` per batch (a *kick*) makes the kernel transmit every requested frame. A
//! frame's status returns to AVAILABLE only when the driver frees its skb — on a NIC, at TX
//! completion — so the status words are the completion ring, and reclaimed frames feed the
//! [`crate::txq::TxQueue`] with the user's `--ring`, `--stop-thresh` and `--start-thresh`.
//!
//! While stopped, the sender waits in `poll(POLLOUT)`, which the kernel satisfies as soon as
//! the next frame is free (its own threshold is one slot); when the start threshold asks
//! for more, the sender re-checks the status words every 10 us. On veth the skb is orphaned
//! as it crosses to the peer, so frames come back within the kick and the ring never fills
//! unless something holds the skbs (a qdisc, with `--qdisc-bypass false`).
//!
//! A frame the kernel refuses (a qdisc or an nftables egress rule drops it: the kick fails
//! with ENOBUFS) is not lost and not an error: the kernel marks it SEND_REQUEST again and
//! stops there, so it goes again with the next kick, and no frame behind it moves before it
//! does. upktgen keeps kicking while the oldest frame in flight is still requested (before,
//! a run stopped on such a frame waited for it forever); the Result's errors stay 0 and the
//! receiver sees no hole: the frame went out on a later try (pktgen instead counts an error
//! and moves on; the ring gives no way to skip a frame).

use super::ring::RingQueue;
use super::{
    Backend, BackendInfo, BackendKind, BackendStats, OpenAt, OpenError, Refusal, SenderSlot,
    Submitted, TxBackend, TxOptions,
};
use crate::sys::packet::{
    PacketSocket, TP_STATUS_AVAILABLE, TP_STATUS_SEND_REQUEST, TP_STATUS_WRONG_FORMAT, TxRingMap,
};
use crate::txq::RingConfig;
use std::io;
use std::os::fd::AsFd;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Settings of the tx_ring backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxRingConfig {
    pub ring: RingConfig,
    /// Frames per kick at most.
    pub batch: usize,
    pub qdisc_bypass: bool,
}

/// Descriptors in the ring unless --ring.
pub const DEFAULT_RING: u32 = 1024;
/// Frames per kick unless --batch.
pub const DEFAULT_BATCH: u16 = 64;

impl Backend for TxRing {
    const KIND: BackendKind = BackendKind::TxRing;
    type Config = TxRingConfig;

    fn plan(
        o: &TxOptions,
        pg: &crate::pg::DevConfig,
        _: SenderSlot,
    ) -> Result<TxRingConfig, Refusal> {
        super::refuse_xdp_live_plain(o)?;
        super::refuse_sndbuf(o, Self::KIND)?;
        let qdisc_bypass = super::qdisc_bypass(o, pg, true)?;
        Ok(TxRingConfig {
            ring: o.ring.resolve(Self::KIND, DEFAULT_RING)?,
            batch: super::batch(o, DEFAULT_BATCH),
            qdisc_bypass,
        })
    }

    fn open(
        c: &TxRingConfig,
        at: &OpenAt,
        frames: &crate::stream::Frames,
    ) -> Result<TxRing, OpenError> {
        at.packet_socket()
            .and_then(|s| TxRing::new(s, &crate::stream::FrameSource::prefill(frames), *c))
            .map_err(OpenError::TxRing)
    }
}

pub struct TxRing {
    io: RingIo,
    q: RingQueue,
    cfg: TxRingConfig,
}

/// The mapped ring and the two indexes into it.
struct RingIo {
    map: TxRingMap,
    frame_len: usize,
    mask: usize,
    /// Next frame to fill.
    head: usize,
    /// Oldest frame in flight.
    tail: usize,
    /// Frames the kernel marked malformed (found when reclaimed).
    wrong_format: u64,
    kicks: u64,
}

impl TxRing {
    pub fn new(sock: PacketSocket, template: &[u8], cfg: TxRingConfig) -> io::Result<Self> {
        let frames = cfg.ring.size() as usize;
        sock.set_tpacket_v2()?;
        sock.set_packet_loss(true)?;
        if cfg.qdisc_bypass {
            sock.set_qdisc_bypass(true)?;
        }
        // Each frame in flight holds an skb charged to the socket's send buffer; make the
        // buffer big enough that the ring, not SO_SNDBUF, is the limit.
        sock.set_sndbuf((frames * (template.len() + 1024)).min(i32::MAX as usize / 2) as u32)?;
        let mut map = TxRingMap::new(sock, frames, template.len())?;
        for i in 0..frames {
            map.data_mut(i, template.len()).copy_from_slice(template);
        }
        Ok(TxRing {
            io: RingIo {
                map,
                frame_len: template.len(),
                mask: frames - 1,
                head: 0,
                tail: 0,
                wrong_format: 0,
                kicks: 0,
            },
            q: RingQueue::new(cfg.ring),
            cfg,
        })
    }
}

impl RingIo {
    fn in_flight(&self) -> usize {
        self.head.wrapping_sub(self.tail)
    }

    /// Walks the status words from the oldest frame in flight; returns frames reclaimed.
    fn reap(&mut self) -> u32 {
        let mut n = 0;
        while self.in_flight() > 0 {
            let idx = self.tail & self.mask;
            match self.map.status(idx) {
                TP_STATUS_AVAILABLE => {}
                TP_STATUS_WRONG_FORMAT => {
                    self.wrong_format += 1;
                    self.map.set_status(idx, TP_STATUS_AVAILABLE);
                }
                _ => break,
            }
            self.tail = self.tail.wrapping_add(1);
            n += 1;
        }
        n
    }

    /// One step of a wait: block in poll until the next frame is free (or 10 us pass when
    /// some already are), then reclaim.
    fn wait_step(&mut self) -> io::Result<u32> {
        let n = self.reap();
        if n > 0 {
            return Ok(n);
        }
        // The oldest frame still requested: the last kick stopped at it (a refusal, or the
        // kernel moved a batch and more remain), and only another kick moves it.
        if self.in_flight() > 0 && self.map.status(self.tail & self.mask) == TP_STATUS_SEND_REQUEST
        {
            self.kick()?;
            let n = self.reap();
            if n > 0 {
                return Ok(n);
            }
        }
        if self.in_flight() == self.mask + 1 {
            crate::sys::poll_one(self.map.socket().as_fd(), libc::POLLOUT, 10)?;
        } else {
            std::thread::sleep(Duration::from_micros(10));
        }
        Ok(self.reap())
    }

    fn kick(&mut self) -> io::Result<()> {
        self.kicks += 1;
        super::kick_result(self.map.socket().kick().map(|_| ()))
    }
}

impl TxBackend for TxRing {
    fn info(&self) -> BackendInfo {
        let r = self.cfg.ring;
        BackendInfo {
            name: "tx_ring",
            detail: format!(
                "PACKET_MMAP TX ring TPACKET_V2, up to {} frames per kick, qdisc bypass {}",
                self.cfg.batch,
                if self.cfg.qdisc_bypass { "on" } else { "off" }
            ),
            queue: format!("ring of {} frames; {}", r.size(), r.thresholds()),
        }
    }

    fn max_batch(&self) -> usize {
        self.cfg.batch
    }

    fn reserve(&mut self, want: usize, stop: &AtomicBool) -> io::Result<usize> {
        let n = self.io.reap();
        self.q.reclaimed(n);
        if self.q.txq.is_stopped() {
            // Frames still requested (not taken by an earlier kick) need a kick to move.
            self.io.kick()?;
            let io = &mut self.io;
            if !self.q.wait_wake(stop, || io.wait_step())? {
                return Ok(0);
            }
        }
        Ok(want.min(self.q.txq.postable() as usize).min(self.cfg.batch))
    }

    #[inline]
    fn frame(&mut self, i: usize, len: usize) -> &mut [u8] {
        debug_assert!(len <= self.io.frame_len);
        let idx = (self.io.head + i) & self.io.mask;
        self.io.map.data_mut(idx, len)
    }

    fn submit(&mut self, n: usize, _stop: &AtomicBool) -> io::Result<Submitted> {
        for i in 0..n {
            self.io
                .map
                .set_status((self.io.head + i) & self.io.mask, TP_STATUS_SEND_REQUEST);
        }
        self.io.head = self.io.head.wrapping_add(n);
        self.q.txq.post(n as u32);
        self.io.kick()?;
        Ok(Submitted {
            sent: n as u64,
            errors: 0,
        })
    }

    fn drain(&mut self, timeout: Duration) -> io::Result<()> {
        self.io.kick()?;
        let io = &mut self.io;
        self.q.drain(timeout, || io.wait_step())
    }

    fn stats(&self) -> BackendStats {
        BackendStats {
            kicks: self.io.kicks,
            late_errors: self.io.wrong_format,
            ..self.q.snapshot()
        }
    }
}
