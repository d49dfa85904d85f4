//! An AF_PACKET tap: every frame an interface receives, one `recvmsg` each, with the
//! kernel's receive timestamp (SO_TIMESTAMPNS, CLOCK_REALTIME), its packet type and
//! whether it was cut short. The lab's delay line reads its ingress through it.
//!
//! A tap sees a frame before tc ingress does (the kernel hands taps a clone first), so a tc
//! program that drops the frame afterwards does not take it from the tap.

use super::cvt;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};

/// One frame read from a [`Tap`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TapFrame {
    /// Bytes written into the buffer (at most its length).
    pub len: usize,
    /// The frame was longer than the buffer (MSG_TRUNC): `len` bytes of it were kept.
    pub truncated: bool,
    /// `sll_pkttype`: PACKET_HOST (0), BROADCAST, MULTICAST, OTHERHOST, OUTGOING (4).
    pub pkttype: u8,
    /// The kernel's receive timestamp, ns since the epoch (0 if the kernel gave none).
    pub rx_ns: u64,
}

/// `sll_pkttype` of a frame addressed to the interface's own MAC.
pub const PACKET_HOST: u8 = libc::PACKET_HOST;
/// `sll_pkttype` of a frame this host sent out of the interface.
pub const PACKET_OUTGOING: u8 = libc::PACKET_OUTGOING;

/// A non-blocking AF_PACKET socket bound to one interface for every protocol (ETH_P_ALL),
/// with receive timestamps on.
#[derive(Debug)]
pub struct Tap {
    fd: OwnedFd,
    /// PACKET_STATISTICS' drops so far (the kernel resets its counter at each read).
    drops: u64,
}

impl Tap {
    /// Opens the tap in the calling thread's network namespace on `ifindex`.
    pub fn open(ifindex: u32) -> io::Result<Tap> {
        // Protocol 0 until bound: it receives nothing before.
        let fd = super::packet::raw_socket()?;
        let on: libc::c_int = 1;
        for opt in [
            (libc::SOL_SOCKET, libc::SO_TIMESTAMPNS),
            // The frames this host sends out of the interface, left out (Linux 4.20+;
            // the reader skips them too).
            (libc::SOL_PACKET, libc::PACKET_IGNORE_OUTGOING),
        ] {
            // SAFETY: `on` is a valid c_int and the length passed is its size.
            let r = cvt(unsafe {
                libc::setsockopt(
                    fd.as_raw_fd(),
                    opt.0,
                    opt.1,
                    (&on as *const libc::c_int).cast(),
                    std::mem::size_of::<libc::c_int>() as libc::socklen_t,
                )
            });
            if opt.1 == libc::SO_TIMESTAMPNS {
                r?;
            }
        }
        super::packet::bind_to(fd.as_fd(), ifindex, libc::ETH_P_ALL as u16)?;
        Ok(Tap { fd, drops: 0 })
    }

    /// Waits up to `timeout_ns` for a frame (ppoll, so below a millisecond too); true when
    /// one is ready. A signal ends the wait early (false).
    pub fn wait_ns(&self, timeout_ns: u64) -> io::Result<bool> {
        let ts = libc::timespec {
            tv_sec: (timeout_ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (timeout_ns % 1_000_000_000) as libc::c_long,
        };
        let mut p = libc::pollfd {
            fd: self.fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: `p` is one valid pollfd (nfds = 1) and `ts` a valid timespec, both on our
        // stack for the call; a null signal mask leaves the thread's mask as it is.
        let n = unsafe { libc::ppoll(&mut p, 1, &ts, std::ptr::null()) };
        Ok(super::polled(n)? && p.revents & libc::POLLIN != 0)
    }

    /// Reads the next frame into `buf`; None when none is waiting. The interface's going
    /// down (ENETDOWN, reported once to the socket, as for a tap bound while it was down)
    /// is not an error: nothing arrives while it is down, and the tap reads again once up.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Option<TapFrame>> {
        // SAFETY: sockaddr_ll is plain old data; all-zero is a valid value.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        // Room for one SCM_TIMESTAMPNS (a timespec) with its header, 8-byte aligned.
        let mut control = [0u64; 8];
        let mut iov = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        };
        // SAFETY: msghdr is plain old data; all-zero is valid (no name, no control).
        let mut m: libc::msghdr = unsafe { std::mem::zeroed() };
        m.msg_name = (&mut sll as *mut libc::sockaddr_ll).cast();
        m.msg_namelen = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
        m.msg_iov = &mut iov;
        m.msg_iovlen = 1;
        m.msg_control = control.as_mut_ptr().cast();
        m.msg_controllen = std::mem::size_of_val(&control);
        // SAFETY: every pointer in `m` points to memory on our stack or into `buf`, valid
        // for the lengths given beside them, for the duration of the call; the kernel
        // writes at most those lengths.
        let n = unsafe { libc::recvmsg(self.fd.as_raw_fd(), &mut m, libc::MSG_TRUNC) };
        if n < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
                _ if e.raw_os_error() == Some(libc::ENETDOWN) => Ok(None),
                _ => Err(e),
            };
        }
        let n = n as usize;
        let mut rx_ns = 0;
        // SAFETY: the CMSG_* macros walk the control buffer the kernel filled, within
        // msg_controllen; a SCM_TIMESTAMPNS message's data is one timespec, read unaligned.
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(&m);
            while !c.is_null() {
                if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                    let ts: libc::timespec =
                        std::ptr::read_unaligned(libc::CMSG_DATA(c).cast::<libc::timespec>());
                    rx_ns = ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
                }
                c = libc::CMSG_NXTHDR(&m, c);
            }
        }
        Ok(Some(TapFrame {
            len: n.min(buf.len()),
            truncated: n > buf.len() || m.msg_flags & libc::MSG_TRUNC != 0,
            pkttype: sll.sll_pkttype,
            rx_ns,
        }))
    }

    /// Frames the kernel dropped because the socket's receive buffer was full, since open.
    pub fn drops(&mut self) -> io::Result<u64> {
        let st = super::packet::packet_statistics(self.fd.as_fd())?;
        self.drops += u64::from(st.tp_drops);
        Ok(self.drops)
    }
}

impl AsFd for Tap {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

impl super::packet::PacketSocket {
    /// Sends one frame through the interface's queueing (tc and netfilter egress apply);
    /// an error is the kernel's for this frame (ENOBUFS: dropped by egress policy).
    pub fn send_frame(&self, frame: &[u8]) -> io::Result<()> {
        // SAFETY: `frame` is valid for reads of its length for the call's duration.
        let r = unsafe {
            libc::send(
                self.as_fd().as_raw_fd(),
                frame.as_ptr().cast(),
                frame.len(),
                libc::MSG_DONTWAIT,
            )
        };
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }
}
