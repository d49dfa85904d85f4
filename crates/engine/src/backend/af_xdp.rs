//! AF_XDP: our own UMEM, TX ring and completion ring.
//!
//! One UMEM frame per TX descriptor, every frame prefilled with the template once. A free
//! list holds the addresses of the frames we own; reserve pops them, the sender patches the
//! varying bytes in place, submit writes one descriptor per frame, publishes them and kicks
//! the kernel (`sendto`) when the TX ring says it needs a wakeup. Completed addresses come
//! back through the completion ring onto the free list, and the count reclaimed drives the
//! [`crate::txq::TxQueue`] with `--ring`, `--stop-thresh` and `--start-thresh`.
//!
//! Zero-copy where the driver supports it, copy mode otherwise (the report says which). In
//! copy mode the kernel moves at most 32 frames per kick, building an skb for each, and
//! completes them within the kick on veth; with zero-copy the NIC completes them later.

use super::ring::RingQueue;
use super::{
    Backend, BackendInfo, BackendKind, BackendStats, OpenAt, OpenError, Refusal, SenderSlot,
    Submitted, TxBackend, TxOptions,
};
use crate::pg::{DevConfig, Flag};
use crate::sys::xsk::{XdpMode, XskTx};
use crate::txq::RingConfig;
use std::io;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Settings of the af_xdp backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AfXdpConfig {
    /// TX ring entries = completion ring entries = UMEM frames, and the queue thresholds.
    pub ring: RingConfig,
    /// Frames per kick at most.
    pub batch: usize,
    /// Device queue to bind to.
    pub queue: u32,
    /// Some(true): zero-copy or fail; Some(false): copy mode; None: zero-copy if possible.
    pub zerocopy: Option<bool>,
}

/// Descriptors (and UMEM frames) unless --ring.
pub const DEFAULT_RING: u32 = 2048;
/// Frames per kick unless --batch: what the kernel moves per kick in copy mode.
pub const DEFAULT_BATCH: u16 = 32;

/// The TX queue a sender binds before the device's queues are known (the open step takes
/// it modulo them, as the kernel reduces its queue map): the CPU's with QUEUE_MAP_CPU; with
/// several senders, a queue_map range spreads them over it and without one sender i takes
/// queue i (two AF_XDP sockets cannot share a queue without sharing a UMEM); otherwise
/// queue_map_min.
pub fn queue_for(cfg: &DevConfig, slot: SenderSlot) -> usize {
    if cfg.has(Flag::QueueMapCpu) {
        slot.cpu.unwrap_or(0)
    } else if slot.senders > 1 && cfg.queue_map_min < cfg.queue_map_max {
        usize::from(cfg.queue_map_min)
            + slot.index % (usize::from(cfg.queue_map_max - cfg.queue_map_min) + 1)
    } else if slot.senders > 1 && cfg.queue_map_min == 0 && cfg.queue_map_max == 0 {
        slot.index
    } else {
        usize::from(cfg.queue_map_min)
    }
}

impl Backend for AfXdp {
    const KIND: BackendKind = BackendKind::AfXdp;
    type Config = AfXdpConfig;

    fn plan(o: &TxOptions, pg: &DevConfig, slot: SenderSlot) -> Result<AfXdpConfig, Refusal> {
        super::refuse_xdp_live_plain(o)?;
        super::refuse_sndbuf(o, Self::KIND)?;
        super::refuse_qdisc_bypass(o, Self::KIND)?;
        Ok(AfXdpConfig {
            ring: o.ring.resolve(Self::KIND, DEFAULT_RING)?,
            batch: super::batch(o, DEFAULT_BATCH),
            queue: u32::try_from(queue_for(pg, slot)).unwrap_or(u32::MAX),
            zerocopy: None,
        })
    }

    fn open(
        c: &AfXdpConfig,
        at: &OpenAt,
        frames: &crate::stream::Frames,
    ) -> Result<AfXdp, OpenError> {
        let q = c.queue % u32::from(at.tx_queues.max(1));
        let cfg = AfXdpConfig { queue: q, ..*c };
        AfXdp::new(
            at.ifindex,
            &crate::stream::FrameSource::prefill(frames),
            cfg,
        )
        .map_err(|e| {
            let hint = match e.raw_os_error() {
                Some(libc::EAFNOSUPPORT | libc::ENOPROTOOPT) => {
                    "the kernel needs CONFIG_XDP_SOCKETS (5.4+); "
                }
                Some(libc::EINVAL) => "is there such a queue? ",
                Some(libc::EBUSY) => "another AF_XDP socket or program holds it; ",
                _ => "",
            };
            OpenError::AfXdp {
                queue: q,
                err: e,
                hint,
            }
        })
    }
}

pub struct AfXdp {
    io: XdpIo,
    q: RingQueue,
    cfg: AfXdpConfig,
}

struct XdpIo {
    xsk: XskTx,
    /// Addresses of UMEM frames we own.
    free: Vec<u64>,
    /// Addresses handed out by the last reserve.
    reserved: Vec<u64>,
    /// Length of each reserved frame, set by `frame`.
    lens: Vec<u32>,
    frame_len: usize,
    kicks: u64,
}

impl AfXdp {
    pub fn new(ifindex: u32, template: &[u8], cfg: AfXdpConfig) -> io::Result<Self> {
        let frames = cfg.ring.size();
        let frame_size = if template.len() <= 2048 { 2048 } else { 4096 };
        if template.len() > frame_size {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("af_xdp sends frames up to {frame_size} bytes"),
            ));
        }
        let xsk = XskTx::new(
            ifindex,
            cfg.queue,
            frames,
            frame_size,
            template,
            cfg.zerocopy,
        )?;
        let free = (0..frames).rev().map(|i| xsk.frame_addr(i)).collect();
        Ok(AfXdp {
            io: XdpIo {
                xsk,
                free,
                reserved: Vec::with_capacity(cfg.batch),
                lens: vec![0; cfg.batch],
                frame_len: template.len(),
                kicks: 0,
            },
            q: RingQueue::new(cfg.ring),
            cfg,
        })
    }
}

impl XdpIo {
    /// Moves completed frames back to the free list; returns how many.
    #[inline]
    fn reap(&mut self) -> u32 {
        let free = &mut self.free;
        self.xsk.complete(u32::MAX, |a| free.push(a))
    }

    fn kick(&mut self) -> io::Result<()> {
        self.kicks += 1;
        super::kick_result(self.xsk.kick())
    }

    /// One step of a wait: reclaim; if nothing came back, kick the kernel when frames are
    /// still on the TX ring (or it asks for a wakeup), else give the NIC 10 us.
    fn wait_step(&mut self) -> io::Result<u32> {
        let n = self.reap();
        if n > 0 {
            return Ok(n);
        }
        if self.xsk.tx_pending() > 0 || self.xsk.tx_needs_wakeup() {
            self.kick()?;
        } else {
            std::thread::sleep(Duration::from_micros(10));
        }
        Ok(self.reap())
    }
}

impl TxBackend for AfXdp {
    fn info(&self) -> BackendInfo {
        let r = self.cfg.ring;
        let mode = match self.io.xsk.mode() {
            XdpMode::ZeroCopy => "zero-copy",
            XdpMode::Copy => "copy mode (the driver has no zero-copy support)",
        };
        BackendInfo {
            name: "af_xdp",
            detail: format!(
                "AF_XDP {mode}, queue {}, need_wakeup, up to {} frames per kick",
                self.cfg.queue, self.cfg.batch
            ),
            queue: format!(
                "TX ring of {} descriptors (UMEM frames); {}",
                r.size(),
                r.thresholds()
            ),
        }
    }

    fn max_batch(&self) -> usize {
        self.cfg.batch
    }

    fn reserve(&mut self, want: usize, stop: &AtomicBool) -> io::Result<usize> {
        let n = self.io.reap();
        self.q.reclaimed(n);
        if self.q.txq.is_stopped() {
            let io = &mut self.io;
            if !self.q.wait_wake(stop, || io.wait_step())? {
                return Ok(0);
            }
        }
        let n = want
            .min(self.q.txq.postable() as usize)
            .min(self.cfg.batch)
            .min(self.io.xsk.tx_free() as usize)
            .min(self.io.free.len());
        self.io.reserved.clear();
        let at = self.io.free.len() - n;
        self.io.reserved.extend(self.io.free.drain(at..));
        Ok(n)
    }

    #[inline]
    fn frame(&mut self, i: usize, len: usize) -> &mut [u8] {
        assert!(len <= self.io.frame_len);
        let addr = self.io.reserved[i];
        self.io.lens[i] = len as u32;
        self.io.xsk.frame_mut(addr, len)
    }

    fn submit(&mut self, n: usize, _stop: &AtomicBool) -> io::Result<Submitted> {
        for i in 0..n {
            let addr = self.io.reserved[i];
            self.io.xsk.tx_write(i as u32, addr, self.io.lens[i]);
        }
        // Frames reserved but not submitted go back to the free list.
        let io = &mut self.io;
        io.free.extend(io.reserved.drain(n..));
        self.io.xsk.tx_publish(n as u32);
        self.q.txq.post(n as u32);
        if self.io.xsk.tx_needs_wakeup() {
            self.io.kick()?;
        }
        Ok(Submitted {
            sent: n as u64,
            errors: 0,
        })
    }

    fn drain(&mut self, timeout: Duration) -> io::Result<()> {
        let io = &mut self.io;
        self.q.drain(timeout, || io.wait_step())
    }

    fn stats(&self) -> BackendStats {
        BackendStats {
            kicks: self.io.kicks,
            late_errors: self.io.xsk.tx_invalid_descs().unwrap_or(0),
            ..self.q.snapshot()
        }
    }
}
