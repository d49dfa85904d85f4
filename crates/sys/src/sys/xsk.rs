//! AF_XDP sockets: a UMEM of our own, and the TX and completion rings shared with the kernel.
//!
//! The rings are single-producer single-consumer arrays in memory mapped from the socket,
//! each with a producer and a consumer index (free-running u32s) and, for TX, a flags word
//! carrying XDP_RING_NEED_WAKEUP. The producer writes entries, then publishes them with a
//! release store of its index; the consumer reads the index with an acquire load before
//! reading entries, and hands them back with a release store of its own index.

use super::cvt;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, Ordering};

/// How the socket ended up bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XdpMode {
    ZeroCopy,
    Copy,
}

/// A memory region mapped for the process (UMEM) or from a socket (rings); unmapped on drop.
pub(super) struct Mapping {
    pub(super) ptr: *mut u8,
    pub(super) len: usize,
}

impl Mapping {
    pub(super) fn new(
        len: usize,
        fd: Option<(BorrowedFd<'_>, libc::off_t)>,
    ) -> io::Result<Mapping> {
        let (flags, raw, off) = match fd {
            Some((f, off)) => (libc::MAP_SHARED | libc::MAP_POPULATE, f.as_raw_fd(), off),
            None => (
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
                0,
            ),
        };
        // SAFETY: a fresh mapping of `len` bytes (anonymous, or of the ring at `off` that
        // the kernel created for this socket); the result is checked against MAP_FAILED.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                flags,
                raw,
                off,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Mapping { ptr: p.cast(), len })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: ptr/len are what mmap returned; no reference into the mapping outlives it
        // (the rings and UMEM slices borrow from their owner, which drops this last).
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// One ring's mapping and index pointers.
///
/// Invariant: `producer`, `consumer` and `flags` point to 4-byte aligned words inside
/// `map`, and `desc` to `size` entries of the ring's entry type inside `map`.
pub(super) struct Ring {
    _map: Mapping,
    producer: *const AtomicU32,
    consumer: *const AtomicU32,
    pub(super) flags: *const AtomicU32,
    pub(super) desc: *mut u8,
    pub(super) mask: u32,
}

impl Ring {
    pub(super) fn map(
        fd: BorrowedFd<'_>,
        off: &libc::xdp_ring_offset,
        pgoff: u64,
        entries: u32,
        entry: usize,
    ) -> io::Result<Ring> {
        let len = off.desc as usize + entries as usize * entry;
        let m = Mapping::new(len, Some((fd, pgoff as libc::off_t)))?;
        // SAFETY: the kernel's offsets lie inside the ring mapping of `len` bytes.
        let at = |o: u64| unsafe { m.ptr.add(o as usize) };
        Ok(Ring {
            producer: at(off.producer).cast(),
            consumer: at(off.consumer).cast(),
            flags: at(off.flags).cast(),
            desc: at(off.desc),
            mask: entries - 1,
            _map: m,
        })
    }

    #[inline]
    pub(super) fn producer(&self) -> &AtomicU32 {
        // SAFETY: see the struct invariant; the word is shared with the kernel, hence atomic.
        unsafe { &*self.producer }
    }

    #[inline]
    pub(super) fn consumer(&self) -> &AtomicU32 {
        // SAFETY: as for `producer`.
        unsafe { &*self.consumer }
    }
}

/// Binds an AF_XDP socket to (ifindex, queue) with need_wakeup, forcing zero-copy or copy
/// mode when asked (None: the kernel tries zero-copy and falls back to copy).
pub(super) fn bind_queue(
    fd: BorrowedFd<'_>,
    ifindex: u32,
    queue: u32,
    zerocopy: Option<bool>,
) -> io::Result<()> {
    let mode_flag = match zerocopy {
        Some(true) => libc::XDP_ZEROCOPY,
        Some(false) => libc::XDP_COPY,
        None => 0,
    };
    let sxdp = libc::sockaddr_xdp {
        sxdp_family: libc::AF_XDP as u16,
        sxdp_flags: mode_flag | libc::XDP_USE_NEED_WAKEUP,
        sxdp_ifindex: ifindex,
        sxdp_queue_id: queue,
        sxdp_shared_umem_fd: 0,
    };
    bind_retry(fd, &sxdp)
}

/// Which data ring an AF_XDP socket has.
pub(super) enum DataRing {
    Rx,
    Tx,
}

/// Registers the UMEM `reg` on `fd`, sizes the socket's data ring (`data` entries), fill ring
/// (`fill`) and completion ring (`comp`), and maps the three.
pub(super) fn setup_rings(
    fd: BorrowedFd<'_>,
    reg: &libc::xdp_umem_reg,
    which: DataRing,
    data: u32,
    fill: u32,
    comp: u32,
) -> io::Result<(Ring, Ring, Ring)> {
    setsockopt(fd, libc::XDP_UMEM_REG, reg)?;
    setsockopt(fd, libc::XDP_UMEM_FILL_RING, &fill)?;
    setsockopt(fd, libc::XDP_UMEM_COMPLETION_RING, &comp)?;
    let (opt, index, pgoff) = match which {
        DataRing::Rx => (libc::XDP_RX_RING, 0, libc::XDP_PGOFF_RX_RING as u32 as u64),
        DataRing::Tx => (libc::XDP_TX_RING, 1, libc::XDP_PGOFF_TX_RING as u32 as u64),
    };
    setsockopt(fd, opt, &data)?;
    let off: MmapOffsets = getsockopt(fd, libc::XDP_MMAP_OFFSETS)?;
    let d = Ring::map(
        fd,
        &off.ring(index),
        pgoff,
        data,
        std::mem::size_of::<libc::xdp_desc>(),
    )?;
    let fq = Ring::map(fd, &off.ring(2), libc::XDP_UMEM_PGOFF_FILL_RING, fill, 8)?;
    let cq = Ring::map(
        fd,
        &off.ring(3),
        libc::XDP_UMEM_PGOFF_COMPLETION_RING,
        comp,
        8,
    )?;
    Ok((d, fq, cq))
}

/// An AF_XDP socket bound to one queue of one interface, for transmitting, with its UMEM.
pub struct XskTx {
    // Field order is drop order: rings and UMEM are unmapped before the socket closes.
    tx: Ring,
    cq: Ring,
    _fq: Ring,
    umem: Mapping,
    frame_size: usize,
    /// Our copies of the indexes (we own tx.producer and cq.consumer).
    tx_prod: u32,
    tx_cons_cached: u32,
    cq_cons: u32,
    mode: XdpMode,
    fd: OwnedFd,
}

// SAFETY: all raw pointers point into mappings owned by this struct; moving it to another
// thread moves the only handle.
unsafe impl Send for XskTx {}

pub(super) fn setsockopt<T>(fd: BorrowedFd<'_>, name: libc::c_int, v: &T) -> io::Result<()> {
    // SAFETY: `v` points to a valid T and the length passed is its size.
    cvt(unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_XDP,
            name,
            (v as *const T).cast(),
            std::mem::size_of::<T>() as u32,
        )
    })
    .map(|_| ())
}

pub(super) fn getsockopt<T: Default + super::PlainOpt>(
    fd: BorrowedFd<'_>,
    name: libc::c_int,
) -> io::Result<T> {
    super::getsockopt(fd, libc::SOL_XDP, name, T::default())
}

#[derive(Default, Clone, Copy)]
#[repr(C)]
pub(super) struct MmapOffsets([u64; 16]);

// SAFETY: sixteen u64 words, no padding; every bit pattern is valid.
unsafe impl super::PlainOpt for MmapOffsets {}

impl MmapOffsets {
    pub(super) fn ring(&self, i: usize) -> libc::xdp_ring_offset {
        let w = &self.0[i * 4..i * 4 + 4];
        libc::xdp_ring_offset {
            producer: w[0],
            consumer: w[1],
            desc: w[2],
            flags: w[3],
        }
    }
}

impl XskTx {
    /// Creates the socket and a UMEM of `frames` frames of `frame_size` bytes (both powers of
    /// two), each prefilled with `template`; sets up TX and completion rings of `frames`
    /// entries and binds to `ifindex`/`queue`. `zerocopy`: Some(true) requires zero-copy,
    /// Some(false) forces copy mode, None tries zero-copy and falls back to copy. A bind
    /// that finds the queue busy (a socket just closed releases it asynchronously) is
    /// retried for up to a second.
    pub fn new(
        ifindex: u32,
        queue: u32,
        frames: u32,
        frame_size: usize,
        template: &[u8],
        zerocopy: Option<bool>,
    ) -> io::Result<XskTx> {
        // SAFETY: plain syscall; the fd is checked and owned right away.
        let raw =
            cvt(unsafe { libc::socket(libc::AF_XDP, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) })?;
        // SAFETY: `raw` is a new fd nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let umem = Mapping::new(frames as usize * frame_size, None)?;
        for i in 0..frames as usize {
            // SAFETY: frame i spans [i*frame_size, i*frame_size+template.len()) inside the
            // UMEM (template.len() <= frame_size is checked by the caller's sizing; asserted).
            assert!(template.len() <= frame_size);
            unsafe {
                std::ptr::copy_nonoverlapping(
                    template.as_ptr(),
                    umem.ptr.add(i * frame_size),
                    template.len(),
                )
            };
        }
        let reg = libc::xdp_umem_reg {
            addr: umem.ptr as u64,
            len: umem.len as u64,
            chunk_size: frame_size as u32,
            headroom: 0,
            flags: 0,
            tx_metadata_len: 0,
        };
        // The fill ring is never used (nothing is received), but binding needs one.
        let (tx, fq, cq) = setup_rings(fd.as_fd(), &reg, DataRing::Tx, frames, 64, frames)?;
        bind_queue(fd.as_fd(), ifindex, queue, zerocopy)?;
        let opts: libc::xdp_options = getsockopt_opts(fd.as_fd())?;
        let mode = if opts.flags & libc::XDP_OPTIONS_ZEROCOPY != 0 {
            XdpMode::ZeroCopy
        } else {
            XdpMode::Copy
        };
        Ok(XskTx {
            tx,
            cq,
            _fq: fq,
            umem,
            frame_size,
            tx_prod: 0,
            tx_cons_cached: 0,
            cq_cons: 0,
            mode,
            fd,
        })
    }

    pub fn mode(&self) -> XdpMode {
        self.mode
    }

    /// UMEM address of frame `i`.
    #[inline]
    pub fn frame_addr(&self, i: u32) -> u64 {
        u64::from(i) * self.frame_size as u64
    }

    /// The first `len` bytes of the UMEM frame at `addr` (an address this process owns:
    /// not on the TX ring, or already returned through the completion ring).
    #[inline]
    pub fn frame_mut(&mut self, addr: u64, len: usize) -> &mut [u8] {
        let off = addr as usize;
        assert!(off + len <= self.umem.len && len <= self.frame_size);
        // SAFETY: [off, off+len) is inside the UMEM (checked); the frame is ours, not the
        // kernel's (caller's contract), and `&mut self` excludes other borrows.
        unsafe { std::slice::from_raw_parts_mut(self.umem.ptr.add(off), len) }
    }

    /// TX ring entries free for us to fill.
    #[inline]
    pub fn tx_free(&mut self) -> u32 {
        let size = self.tx.mask + 1;
        let mut free = size - self.tx_prod.wrapping_sub(self.tx_cons_cached);
        if free == 0 {
            self.tx_cons_cached = self.tx.consumer().load(Ordering::Acquire);
            free = size - self.tx_prod.wrapping_sub(self.tx_cons_cached);
        }
        free
    }

    /// Writes TX descriptor number `i` past the producer index (not yet published).
    #[inline]
    pub fn tx_write(&mut self, i: u32, addr: u64, len: u32) {
        let slot = (self.tx_prod.wrapping_add(i) & self.tx.mask) as usize;
        // SAFETY: slot <= mask, so the 16-byte descriptor lies inside the ring's desc area
        // (struct invariant); entries past the producer index belong to us until published.
        unsafe {
            let d = self
                .tx
                .desc
                .add(slot * std::mem::size_of::<libc::xdp_desc>())
                as *mut libc::xdp_desc;
            std::ptr::write(
                d,
                libc::xdp_desc {
                    addr,
                    len,
                    options: 0,
                },
            );
        }
    }

    /// Publishes `n` written descriptors to the kernel.
    #[inline]
    pub fn tx_publish(&mut self, n: u32) {
        self.tx_prod = self.tx_prod.wrapping_add(n);
        self.tx.producer().store(self.tx_prod, Ordering::Release);
    }

    /// Whether the kernel asks for a syscall to process the TX ring.
    #[inline]
    pub fn tx_needs_wakeup(&self) -> bool {
        // SAFETY: struct invariant of `Ring`: `flags` points to an aligned word in the map.
        unsafe { &*self.tx.flags }.load(Ordering::Relaxed) & libc::XDP_RING_NEED_WAKEUP != 0
    }

    /// Descriptors published but not yet taken by the kernel.
    pub fn tx_pending(&self) -> u32 {
        self.tx_prod
            .wrapping_sub(self.tx.consumer().load(Ordering::Acquire))
    }

    /// The kick: `sendto` with no data, which makes the kernel process the TX ring.
    pub fn kick(&self) -> io::Result<()> {
        // SAFETY: a zero-length sendto with null buffer and address is the documented
        // AF_XDP TX wakeup; it reads nothing from our memory.
        let r = unsafe {
            libc::sendto(
                self.fd.as_raw_fd(),
                std::ptr::null(),
                0,
                libc::MSG_DONTWAIT,
                std::ptr::null(),
                0,
            )
        };
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }

    /// Takes up to `max` completed frame addresses, passing each to `f`; returns how many.
    #[inline]
    pub fn complete(&mut self, max: u32, mut f: impl FnMut(u64)) -> u32 {
        let prod = self.cq.producer().load(Ordering::Acquire);
        let n = prod.wrapping_sub(self.cq_cons).min(max);
        for i in 0..n {
            let slot = (self.cq_cons.wrapping_add(i) & self.cq.mask) as usize;
            // SAFETY: slot <= mask: the u64 entry lies inside the ring's desc area; entries
            // between our consumer index and the producer's are published to us.
            f(unsafe { std::ptr::read(self.cq.desc.add(slot * 8) as *const u64) });
        }
        if n > 0 {
            self.cq_cons = self.cq_cons.wrapping_add(n);
            self.cq.consumer().store(self.cq_cons, Ordering::Release);
        }
        n
    }
}

impl AsFd for XskTx {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

pub(super) fn getsockopt_opts(fd: BorrowedFd<'_>) -> io::Result<libc::xdp_options> {
    super::getsockopt(
        fd,
        libc::SOL_XDP,
        libc::XDP_OPTIONS,
        libc::xdp_options { flags: 0 },
    )
}

impl XskTx {
    /// XDP_STATISTICS' tx_invalid_descs: descriptors the kernel refused.
    pub fn tx_invalid_descs(&self) -> io::Result<u64> {
        let v = super::getsockopt(
            self.fd.as_fd(),
            libc::SOL_XDP,
            libc::XDP_STATISTICS,
            zeroed_stats(),
        )?;
        Ok(v.tx_invalid_descs)
    }
}

pub(super) fn zeroed_stats() -> libc::xdp_statistics {
    libc::xdp_statistics {
        rx_dropped: 0,
        rx_invalid_descs: 0,
        tx_invalid_descs: 0,
        rx_ring_full: 0,
        rx_fill_ring_empty_descs: 0,
        tx_ring_empty_descs: 0,
    }
}

/// Binds an AF_XDP socket; a bind that finds the queue busy (a socket just closed releases
/// it asynchronously) is retried for up to a second.
pub(super) fn bind_retry(fd: BorrowedFd<'_>, sxdp: &libc::sockaddr_xdp) -> io::Result<()> {
    let mut tries = 0;
    loop {
        // SAFETY: `sxdp` is a valid sockaddr_xdp and the length passed is its size.
        let r = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (sxdp as *const libc::sockaddr_xdp).cast(),
                std::mem::size_of::<libc::sockaddr_xdp>() as u32,
            )
        };
        if r == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EBUSY) && tries < 200 {
            tries += 1;
            std::thread::sleep(std::time::Duration::from_millis(5));
            continue;
        }
        return Err(e);
    }
}
