//! AF_XDP sockets for receiving: a UMEM of our own, the fill ring (kept full) and the RX ring.
//!
//! Every UMEM frame is always in exactly one place: on the fill ring (the kernel's to fill),
//! on the RX ring (filled, ours to read), or in our hands between reading a descriptor and
//! handing its frame back on the fill ring. The fill ring has as many entries as there are
//! frames, so handing a frame back never finds it full. The ring protocol is the one
//! described in `super::xsk`.

use super::cvt;
use super::xsk::{
    DataRing, Mapping, Ring, XdpMode, bind_queue, getsockopt_opts, setup_rings, zeroed_stats,
};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::sync::atomic::Ordering;

/// XDP_STATISTICS of a receiving socket (Linux 5.9+ for the last two).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct XskRxStats {
    /// Frames the socket dropped: too big for a UMEM frame, or no free frame on the fill
    /// ring (copy mode).
    pub rx_dropped: u64,
    /// Invalid descriptors on the RX ring.
    pub rx_invalid_descs: u64,
    /// Frames dropped because the RX ring was full.
    pub rx_ring_full: u64,
    /// Times the kernel found the fill ring empty (a cause behind `rx_dropped` in copy
    /// mode; in zero-copy mode the driver's own drops).
    pub rx_fill_ring_empty_descs: u64,
}

impl XskRxStats {
    /// Frames the socket dropped, all causes (the fill-ring count is a cause, not more drops).
    pub fn dropped(&self) -> u64 {
        self.rx_dropped + self.rx_ring_full + self.rx_invalid_descs
    }

    pub fn add(&mut self, o: &XskRxStats) {
        self.rx_dropped += o.rx_dropped;
        self.rx_invalid_descs += o.rx_invalid_descs;
        self.rx_ring_full += o.rx_ring_full;
        self.rx_fill_ring_empty_descs += o.rx_fill_ring_empty_descs;
    }
}

/// An AF_XDP socket bound to one RX queue of one interface, with its UMEM.
pub struct XskRx {
    // Field order is drop order: rings and UMEM are unmapped before the socket closes.
    rx: Ring,
    fq: Ring,
    _cq: Ring,
    umem: Mapping,
    frame_size: usize,
    rx_cons: u32,
    fq_prod: u32,
    queue: u32,
    mode: XdpMode,
    fd: OwnedFd,
}

// SAFETY: all raw pointers point into mappings owned by this struct; moving it to another
// thread moves the only handle.
unsafe impl Send for XskRx {}

impl XskRx {
    /// Creates the socket and a UMEM of `frames` frames of `frame_size` bytes (both powers
    /// of two, frame_size 2048 or 4096), an RX and a fill ring of `frames` entries (the fill
    /// ring starts full), and binds to `ifindex`/`queue` with XDP_USE_NEED_WAKEUP.
    /// `zerocopy`: Some(true) requires zero-copy, Some(false) forces copy mode, None lets
    /// the kernel try zero-copy and fall back to copy mode; [`XskRx::mode`] says which.
    pub fn new(
        ifindex: u32,
        queue: u32,
        frames: u32,
        frame_size: usize,
        zerocopy: Option<bool>,
    ) -> io::Result<XskRx> {
        if !frames.is_power_of_two() || !frame_size.is_power_of_two() || frame_size < 2048 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "AF_XDP: frames and frame size must be powers of two, frames of at least 2048 bytes",
            ));
        }
        // SAFETY: plain syscall; the fd is checked and owned right away.
        let raw =
            cvt(unsafe { libc::socket(libc::AF_XDP, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) })?;
        // SAFETY: `raw` is a new fd nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let umem = Mapping::new(frames as usize * frame_size, None)?;
        let reg = libc::xdp_umem_reg {
            addr: umem.ptr as u64,
            len: umem.len as u64,
            chunk_size: frame_size as u32,
            headroom: 0,
            flags: 0,
            tx_metadata_len: 0,
        };
        // Nothing is sent, but a UMEM needs a completion ring to bind.
        let (rx, fq, cq) = setup_rings(fd.as_fd(), &reg, DataRing::Rx, frames, frames, 64)?;
        let mut s = XskRx {
            rx,
            fq,
            _cq: cq,
            umem,
            frame_size,
            rx_cons: 0,
            fq_prod: 0,
            queue,
            mode: XdpMode::Copy,
            fd,
        };
        // Every frame onto the fill ring before binding: the kernel can fill from the start.
        for i in 0..frames {
            s.fill_write(i, u64::from(i) * frame_size as u64);
        }
        s.fill_publish(frames);
        bind_queue(s.fd.as_fd(), ifindex, queue, zerocopy)?;
        let opts = getsockopt_opts(s.fd.as_fd())?;
        s.mode = if opts.flags & libc::XDP_OPTIONS_ZEROCOPY != 0 {
            XdpMode::ZeroCopy
        } else {
            XdpMode::Copy
        };
        Ok(s)
    }

    pub fn mode(&self) -> XdpMode {
        self.mode
    }

    pub fn queue(&self) -> u32 {
        self.queue
    }

    /// The socket's fd, for the XSKMAP (valid while `self` lives).
    pub fn raw_fd(&self) -> i32 {
        self.fd.as_raw_fd()
    }

    #[inline]
    fn fill_write(&mut self, i: u32, addr: u64) {
        let slot = (self.fq_prod.wrapping_add(i) & self.fq.mask) as usize;
        // SAFETY: slot <= mask, so the u64 entry lies inside the fill ring's desc area
        // (Ring invariant); entries past our producer index are ours until published.
        unsafe { std::ptr::write(self.fq.desc.add(slot * 8) as *mut u64, addr) };
    }

    #[inline]
    fn fill_publish(&mut self, n: u32) {
        self.fq_prod = self.fq_prod.wrapping_add(n);
        self.fq.producer().store(self.fq_prod, Ordering::Release);
    }

    /// Frames waiting on the RX ring.
    #[inline]
    pub fn rx_ready(&self) -> u32 {
        self.rx
            .producer()
            .load(Ordering::Acquire)
            .wrapping_sub(self.rx_cons)
    }

    /// Takes up to `max` received frames, passing each one's bytes to `f`, then hands their
    /// frames back on the fill ring. Returns how many.
    pub fn recv(&mut self, max: u32, mut f: impl FnMut(&[u8])) -> u32 {
        let n = self.rx_ready().min(max);
        for i in 0..n {
            let slot = (self.rx_cons.wrapping_add(i) & self.rx.mask) as usize;
            // SAFETY: slot <= mask: the descriptor lies inside the RX ring's desc area;
            // entries between our consumer index and the producer's are published to us.
            let d = unsafe {
                std::ptr::read(
                    self.rx
                        .desc
                        .add(slot * std::mem::size_of::<libc::xdp_desc>())
                        as *const libc::xdp_desc,
                )
            };
            let (off, len) = (d.addr as usize, d.len as usize);
            // A descriptor pointing outside the UMEM would be a kernel bug: skip its bytes.
            if off.checked_add(len).is_some_and(|e| e <= self.umem.len) {
                // SAFETY: [off, off+len) is inside the UMEM (checked); the frame is ours
                // until it goes back on the fill ring below, after `f` returns.
                f(unsafe { std::slice::from_raw_parts(self.umem.ptr.add(off), len) });
            }
            // The frame's base address (the kernel may add headroom to the data's).
            let base = d.addr & !(self.frame_size as u64 - 1);
            self.fill_write(i, base);
        }
        if n > 0 {
            self.rx_cons = self.rx_cons.wrapping_add(n);
            self.rx.consumer().store(self.rx_cons, Ordering::Release);
            self.fill_publish(n);
        }
        n
    }

    /// Whether the kernel asks for a syscall to refill from the fill ring.
    pub fn fill_needs_wakeup(&self) -> bool {
        // SAFETY: Ring invariant: `flags` points to an aligned word in the ring's mapping.
        unsafe { &*self.fq.flags }.load(Ordering::Relaxed) & libc::XDP_RING_NEED_WAKEUP != 0
    }

    /// The wakeup for the fill ring: a non-blocking recvfrom of nothing.
    pub fn wakeup(&self) {
        // SAFETY: zero-length recvfrom with a null buffer and address: reads nothing into
        // our memory; it only makes the driver look at the fill ring.
        unsafe {
            libc::recvfrom(
                self.fd.as_raw_fd(),
                std::ptr::null_mut(),
                0,
                libc::MSG_DONTWAIT,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
    }

    /// XDP_STATISTICS since the socket was created (the kernel does not reset them).
    pub fn stats(&self) -> io::Result<XskRxStats> {
        let v = super::getsockopt(
            self.fd.as_fd(),
            libc::SOL_XDP,
            libc::XDP_STATISTICS,
            zeroed_stats(),
        )?;
        Ok(XskRxStats {
            rx_dropped: v.rx_dropped,
            rx_invalid_descs: v.rx_invalid_descs,
            rx_ring_full: v.rx_ring_full,
            rx_fill_ring_empty_descs: v.rx_fill_ring_empty_descs,
        })
    }
}

impl AsFd for XskRx {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

/// Waits up to `timeout_ms` for any of `fds` to be readable. Returns whether one is.
pub fn poll_any(fds: &[BorrowedFd<'_>], timeout_ms: i32) -> io::Result<bool> {
    let mut p: Vec<libc::pollfd> = fds
        .iter()
        .map(|f| libc::pollfd {
            fd: f.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    // SAFETY: `p` holds p.len() valid, initialised pollfds; nfds matches.
    let n = unsafe { libc::poll(p.as_mut_ptr(), p.len() as libc::nfds_t, timeout_ms) };
    super::polled(n)
}

pub use super::ethtool::{rx_queues, tx_queues};
