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
use super::{BackendInfo, BackendStats, Submitted, TxBackend};
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
        let frames = cfg.ring.size;
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
                r.size,
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
