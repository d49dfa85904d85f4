//! AF_PACKET sockets and `sendmmsg` batches.

use super::cvt;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

/// A raw AF_PACKET socket bound to one interface, non-blocking. Protocol 0: it receives
/// nothing, so it costs the receive path nothing.
#[derive(Debug)]
pub struct PacketSocket {
    fd: OwnedFd,
    ifindex: u32,
}

/// A new raw AF_PACKET socket (non-blocking, close-on-exec) with protocol 0: it receives
/// nothing until bound to a protocol.
pub fn raw_socket() -> io::Result<OwnedFd> {
    // SAFETY: plain syscall with constant arguments; the returned fd is checked.
    let raw = cvt(unsafe {
        libc::socket(
            libc::AF_PACKET,
            libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        )
    })?;
    // SAFETY: `raw` is a freshly created fd that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

/// Binds an AF_PACKET socket to `ifindex` for `protocol` (an ethertype in host order, or
/// ETH_P_ALL; 0: it receives nothing).
pub(super) fn bind_to(fd: BorrowedFd<'_>, ifindex: u32, protocol: u16) -> io::Result<()> {
    // SAFETY: sockaddr_ll is plain old data; all-zero is a valid value.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_protocol = protocol.to_be();
    sll.sll_ifindex = ifindex as i32;
    // SAFETY: `sll` is a valid sockaddr_ll and the length passed is its size.
    cvt(unsafe {
        libc::bind(
            fd.as_raw_fd(),
            (&sll as *const libc::sockaddr_ll).cast(),
            std::mem::size_of::<libc::sockaddr_ll>() as u32,
        )
    })
    .map(|_| ())
}

/// PACKET_STATISTICS of an AF_PACKET socket since the last read (the kernel resets them at
/// each read; `tp_freeze_q_cnt` is a mapped TPACKET_V3 ring's only).
pub(super) fn packet_statistics(fd: BorrowedFd<'_>) -> io::Result<libc::tpacket_stats_v3> {
    let zero = libc::tpacket_stats_v3 {
        tp_packets: 0,
        tp_drops: 0,
        tp_freeze_q_cnt: 0,
    };
    super::getsockopt(fd, libc::SOL_PACKET, libc::PACKET_STATISTICS, zero)
}

impl PacketSocket {
    /// Opens the socket in the calling thread's network namespace and binds it to `ifindex`.
    pub fn open(ifindex: u32) -> io::Result<Self> {
        let fd = raw_socket()?;
        bind_to(fd.as_fd(), ifindex, 0)?;
        Ok(PacketSocket { fd, ifindex })
    }

    pub fn ifindex(&self) -> u32 {
        self.ifindex
    }

    /// Sets SO_SNDBUF (the kernel doubles the value and caps it at wmem_max unless
    /// SO_SNDBUFFORCE is allowed, which root is: we use FORCE and fall back).
    pub fn set_sndbuf(&self, bytes: u32) -> io::Result<()> {
        let v = bytes as libc::c_int;
        if self
            .setsockopt_int(libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, v)
            .is_ok()
        {
            return Ok(());
        }
        self.setsockopt_int(libc::SOL_SOCKET, libc::SO_SNDBUF, v)
    }

    /// SO_PRIORITY: the priority of every skb this socket sends (pktgen's skb_priority).
    pub fn set_priority(&self, prio: u32) -> io::Result<()> {
        self.setsockopt_int(libc::SOL_SOCKET, libc::SO_PRIORITY, prio as libc::c_int)
    }

    /// The effective SO_SNDBUF in bytes (as the kernel accounts it, i.e. doubled).
    pub fn sndbuf(&self) -> io::Result<u32> {
        super::getsockopt(
            self.fd.as_fd(),
            libc::SOL_SOCKET,
            libc::SO_SNDBUF,
            0 as libc::c_int,
        )
        .map(|v| v as u32)
    }

    /// PACKET_QDISC_BYPASS: hand frames straight to the driver, skipping the qdisc.
    pub fn set_qdisc_bypass(&self, on: bool) -> io::Result<()> {
        self.setsockopt_int(
            libc::SOL_PACKET,
            libc::PACKET_QDISC_BYPASS,
            on as libc::c_int,
        )
    }

    fn setsockopt_int(
        &self,
        level: libc::c_int,
        name: libc::c_int,
        v: libc::c_int,
    ) -> io::Result<()> {
        // SAFETY: `v` is a valid c_int and the length passed is its size.
        cvt(unsafe {
            libc::setsockopt(
                self.fd.as_raw_fd(),
                level,
                name,
                (&v as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as u32,
            )
        })
        .map(|_| ())
    }

    /// Bytes of send buffer in use (SIOCOUTQ: sk_wmem_alloc for packet sockets): frames
    /// handed to the kernel whose skbs are not yet freed (queued or in the driver's ring).
    pub fn outq(&self) -> io::Result<u32> {
        let mut v: libc::c_int = 0;
        // SAFETY: SIOCOUTQ writes one c_int through the pointer, which is valid.
        cvt(unsafe { libc::ioctl(self.fd.as_raw_fd(), libc::TIOCOUTQ, &mut v) })?;
        Ok(v as u32)
    }

    /// Interface flags (IFF_UP, IFF_RUNNING, ...) of the bound interface.
    pub fn if_flags(&self, name: &str) -> io::Result<u32> {
        let mut ifr = ifreq(name)?;
        // SAFETY: SIOCGIFFLAGS reads the name and writes ifru_flags in `ifr`, a valid ifreq.
        cvt(unsafe { libc::ioctl(self.fd.as_raw_fd(), libc::SIOCGIFFLAGS, &mut ifr) })?;
        // SAFETY: after SIOCGIFFLAGS the union holds ifru_flags.
        Ok(u32::from(unsafe { ifr.ifr_ifru.ifru_flags } as u16))
    }

    /// MTU of the named interface.
    pub fn if_mtu(&self, name: &str) -> io::Result<u32> {
        let mut ifr = ifreq(name)?;
        // SAFETY: SIOCGIFMTU reads the name and writes ifru_mtu in `ifr`, a valid ifreq.
        cvt(unsafe { libc::ioctl(self.fd.as_raw_fd(), libc::SIOCGIFMTU, &mut ifr) })?;
        // SAFETY: after SIOCGIFMTU the union holds ifru_mtu.
        Ok(unsafe { ifr.ifr_ifru.ifru_mtu } as u32)
    }

    /// First IPv4 address of the named interface (None if it has none).
    pub fn if_addr4(&self, name: &str) -> io::Result<Option<std::net::Ipv4Addr>> {
        let mut ifr = ifreq(name)?;
        // SAFETY: packet sockets pass SIOCGIFADDR on to the IPv4 code, which reads the name
        // and writes a sockaddr_in into the union of `ifr`, a valid ifreq.
        let r = unsafe { libc::ioctl(self.fd.as_raw_fd(), libc::SIOCGIFADDR, &mut ifr) };
        if r < 0 {
            let e = io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::EADDRNOTAVAIL) => Ok(None),
                _ => Err(e),
            };
        }
        // SAFETY: after SIOCGIFADDR the union holds a sockaddr_in (same size as sockaddr).
        let sin: libc::sockaddr_in = unsafe { std::mem::transmute(ifr.ifr_ifru.ifru_addr) };
        Ok(Some(std::net::Ipv4Addr::from(u32::from_be(
            sin.sin_addr.s_addr,
        ))))
    }

    /// Hardware address of the named interface.
    pub fn if_hwaddr(&self, name: &str) -> io::Result<[u8; 6]> {
        let mut ifr = ifreq(name)?;
        // SAFETY: SIOCGIFHWADDR reads the name and writes ifru_hwaddr in `ifr`.
        cvt(unsafe { libc::ioctl(self.fd.as_raw_fd(), libc::SIOCGIFHWADDR, &mut ifr) })?;
        // SAFETY: after SIOCGIFHWADDR the union holds a sockaddr whose sa_data starts with
        // the 6-byte MAC address.
        let sa = unsafe { ifr.ifr_ifru.ifru_hwaddr };
        let mut mac = [0u8; 6];
        for (m, b) in mac.iter_mut().zip(sa.sa_data.iter()) {
            *m = *b as u8;
        }
        Ok(mac)
    }
}

impl AsFd for PacketSocket {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

fn ifreq(name: &str) -> io::Result<libc::ifreq> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "interface names are 1 to 15 bytes",
        ));
    }
    // SAFETY: ifreq is plain old data; all-zero is a valid value.
    let mut ifr: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in ifr.ifr_name.iter_mut().zip(name.bytes()) {
        *d = s as libc::c_char;
    }
    Ok(ifr)
}

/// A batch of frame buffers with the `mmsghdr`/`iovec` arrays that describe them, built
/// once. The headers point into `buf`, which is heap memory owned by this struct and never
/// reallocated, so the pointers stay valid for the struct's life (moving the struct moves
/// only the boxes' pointers, not the memory they own).
pub struct MmsgBatch {
    buf: Box<[u8]>,
    iov: Box<[libc::iovec]>,
    hdr: Box<[libc::mmsghdr]>,
    frame_len: usize,
    stride: usize,
}

// SAFETY: the raw pointers inside `iov`/`hdr` point only into `buf`, owned by the same
// struct; sending the whole struct to another thread keeps them consistent.
unsafe impl Send for MmsgBatch {}

impl MmsgBatch {
    /// `slots` buffers of `frame_len` bytes, each initialised with `prefill`.
    pub fn new(slots: usize, prefill: &[u8]) -> Self {
        let frame_len = prefill.len();
        // Cache-line aligned strides keep two frames from sharing a line.
        let stride = frame_len.div_ceil(64) * 64;
        let mut buf = vec![0u8; stride * slots].into_boxed_slice();
        for s in 0..slots {
            buf[s * stride..s * stride + frame_len].copy_from_slice(prefill);
        }
        let base = buf.as_mut_ptr();
        let iov: Box<[libc::iovec]> = (0..slots)
            .map(|s| libc::iovec {
                // SAFETY (pointer arithmetic): s * stride + frame_len <= buf.len().
                iov_base: unsafe { base.add(s * stride) }.cast(),
                iov_len: frame_len,
            })
            .collect();
        let hdr: Box<[libc::mmsghdr]> = iov
            .iter()
            .map(|v| {
                // SAFETY: msghdr is plain old data; all-zero is valid (no name, no control).
                let mut m: libc::msghdr = unsafe { std::mem::zeroed() };
                m.msg_iov = (v as *const libc::iovec).cast_mut();
                m.msg_iovlen = 1;
                libc::mmsghdr {
                    msg_hdr: m,
                    msg_len: 0,
                }
            })
            .collect();
        MmsgBatch {
            buf,
            iov,
            hdr,
            frame_len,
            stride,
        }
    }

    pub fn slots(&self) -> usize {
        self.iov.len()
    }

    /// Frame `i` for writing, to be sent with `len` bytes (at most the prefill's length).
    #[inline]
    pub fn frame_mut(&mut self, i: usize, len: usize) -> &mut [u8] {
        assert!(len <= self.frame_len);
        self.iov[i].iov_len = len;
        let off = i * self.stride;
        &mut self.buf[off..off + len]
    }

    /// The length of the longest frame a slot holds (the prefill's).
    pub fn frame_len(&self) -> usize {
        self.frame_len
    }

    /// Sends frames `from..to` with one `sendmmsg`. Returns how many the kernel took
    /// (it stops at the first failure; if the very first fails, the error is returned).
    /// A count below `to - from` means frame `from + count` failed and its error is lost:
    /// the kernel's sendmmsg reports an error only when no frame went.
    pub fn send(&mut self, sock: &PacketSocket, from: usize, to: usize) -> io::Result<usize> {
        debug_assert!(from <= to && to <= self.hdr.len());
        let n = (to - from) as libc::c_uint;
        // SAFETY: hdr[from..to] are valid mmsghdrs whose iovecs point into `buf`
        // (see the struct's invariant); the kernel reads them and writes msg_len only.
        let r = unsafe {
            libc::sendmmsg(
                sock.fd.as_raw_fd(),
                self.hdr.as_mut_ptr().add(from),
                n,
                libc::MSG_DONTWAIT,
            )
        };
        cvt(r).map(|r| r as usize)
    }
}

impl PacketSocket {
    /// Selects TPACKET_V2 for the mapped rings.
    pub fn set_tpacket_v2(&self) -> io::Result<()> {
        self.setsockopt_int(
            libc::SOL_PACKET,
            libc::PACKET_VERSION,
            libc::tpacket_versions::TPACKET_V2 as libc::c_int,
        )
    }

    /// PACKET_LOSS: skip malformed frames in the TX ring (marked TP_STATUS_WRONG_FORMAT)
    /// instead of stopping at them.
    pub fn set_packet_loss(&self, on: bool) -> io::Result<()> {
        self.setsockopt_int(libc::SOL_PACKET, libc::PACKET_LOSS, on as libc::c_int)
    }

    /// Asks the kernel to transmit every frame marked TP_STATUS_SEND_REQUEST, without
    /// waiting for completions. Returns the bytes it queued.
    pub fn kick(&self) -> io::Result<usize> {
        // SAFETY: a zero-length send with no buffer is the documented TX-ring kick; the
        // kernel reads frames only from the ring this socket mapped.
        let r = unsafe { libc::send(self.fd.as_raw_fd(), std::ptr::null(), 0, libc::MSG_DONTWAIT) };
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(r as usize)
        }
    }
}

/// TPACKET_V2 status words.
pub const TP_STATUS_AVAILABLE: u32 = 0;
pub const TP_STATUS_SEND_REQUEST: u32 = 1;
pub const TP_STATUS_SENDING: u32 = 2;
pub const TP_STATUS_WRONG_FORMAT: u32 = 4;
/// Where a TX frame's data starts: TPACKET_ALIGN(sizeof(struct tpacket2_hdr)).
const TP2_DATA_OFF: usize = 32;
const PAGE: usize = 4096;

/// A PACKET_TX_RING (TPACKET_V2) mapped into this process.
///
/// Invariant: `map` points to `len` bytes mapped MAP_SHARED from the socket and stays
/// mapped until drop; frame `i < frames` starts at `frame_off(i)` and spans `frame_size`
/// bytes inside the mapping, 16-byte aligned (so its u32 status word may be accessed as an
/// AtomicU32). The kernel and this process hand each frame back and forth through that
/// status word only: data and length are written by us only while the status is
/// TP_STATUS_AVAILABLE.
pub struct TxRingMap {
    map: *mut u8,
    len: usize,
    frames: usize,
    frame_size: usize,
    frames_per_block: usize,
    block_size: usize,
    // Keeps the socket (and so the mapping's owner) alive as long as the map.
    sock: PacketSocket,
}

// SAFETY: the mapping is owned by this struct alone; moving it to another thread moves the
// only handle to it.
unsafe impl Send for TxRingMap {}

impl TxRingMap {
    /// Sets up a TX ring of `frames` frames (a power of two) able to hold `max_frame`
    /// bytes each, and maps it.
    pub fn new(sock: PacketSocket, frames: usize, max_frame: usize) -> io::Result<Self> {
        if !frames.is_power_of_two() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "ring size must be a power of two",
            ));
        }
        // Power-of-two frames; a block holds a whole number of them (at least one page).
        let mut frame_size = (TP2_DATA_OFF + max_frame).next_power_of_two().max(64);
        if frames < PAGE / frame_size {
            frame_size = PAGE / frames; // fewer frames than one page holds: spread them
        }
        let block_size = frame_size.max(PAGE);
        let frames_per_block = block_size / frame_size;
        let blocks = frames / frames_per_block;
        let req = libc::tpacket_req {
            tp_block_size: block_size as u32,
            tp_block_nr: blocks as u32,
            tp_frame_size: frame_size as u32,
            tp_frame_nr: frames as u32,
        };
        // SAFETY: `req` is a valid tpacket_req and the length passed is its size.
        super::cvt(unsafe {
            libc::setsockopt(
                sock.fd.as_raw_fd(),
                libc::SOL_PACKET,
                libc::PACKET_TX_RING,
                (&req as *const libc::tpacket_req).cast(),
                std::mem::size_of::<libc::tpacket_req>() as u32,
            )
        })?;
        let len = block_size * blocks;
        // SAFETY: mapping the ring the kernel just allocated for this socket; the result
        // is checked against MAP_FAILED.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                sock.fd.as_raw_fd(),
                0,
            )
        };
        if map == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(TxRingMap {
            map: map.cast(),
            len,
            frames,
            frame_size,
            frames_per_block,
            block_size,
            sock,
        })
    }

    pub fn socket(&self) -> &PacketSocket {
        &self.sock
    }

    pub fn frames(&self) -> usize {
        self.frames
    }

    /// Bytes of data one frame can carry.
    pub fn capacity(&self) -> usize {
        self.frame_size - TP2_DATA_OFF
    }

    #[inline]
    fn frame_off(&self, i: usize) -> usize {
        (i / self.frames_per_block) * self.block_size
            + (i % self.frames_per_block) * self.frame_size
    }

    #[inline]
    fn status_word(&self, i: usize) -> &std::sync::atomic::AtomicU32 {
        debug_assert!(i < self.frames);
        // SAFETY: frame_off(i) + 4 <= len and 16-byte aligned (struct invariant); the
        // word is shared with the kernel, so it is only accessed atomically.
        unsafe { &*(self.map.add(self.frame_off(i)) as *const std::sync::atomic::AtomicU32) }
    }

    /// The status word of frame `i` (acquire: data the kernel wrote before is visible).
    #[inline]
    pub fn status(&self, i: usize) -> u32 {
        self.status_word(i)
            .load(std::sync::atomic::Ordering::Acquire)
    }

    /// Sets frame `i`'s status (release: our data and length are visible to the kernel first).
    #[inline]
    pub fn set_status(&self, i: usize, v: u32) {
        self.status_word(i)
            .store(v, std::sync::atomic::Ordering::Release)
    }

    /// Sets the frame's length (tp_len) and returns its data area, `len` bytes.
    /// Only valid while the frame is TP_STATUS_AVAILABLE (ours).
    #[inline]
    pub fn data_mut(&mut self, i: usize, len: usize) -> &mut [u8] {
        assert!(i < self.frames && len <= self.capacity());
        let off = self.frame_off(i);
        // SAFETY: tp_len is the u32 at offset 4 of the frame header, inside the frame; the
        // data area [off + 32, off + 32 + len) lies inside the frame (len <= capacity). The
        // frame is ours (status AVAILABLE), so the kernel does not touch it meanwhile, and
        // `&mut self` keeps other references out.
        unsafe {
            std::ptr::write_volatile(self.map.add(off + 4) as *mut u32, len as u32);
            std::slice::from_raw_parts_mut(self.map.add(off + TP2_DATA_OFF), len)
        }
    }
}

impl Drop for TxRingMap {
    fn drop(&mut self) {
        // SAFETY: `map`/`len` are exactly what mmap returned; nothing refers to the mapping
        // after drop.
        unsafe { libc::munmap(self.map.cast(), self.len) };
    }
}
