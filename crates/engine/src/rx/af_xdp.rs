//! The AF_XDP receive backend: one socket per RX queue of the device, an XSKMAP, and the
//! redirect program of [`crate::bpf::prog::xsk_redirect`] attached by BPF link (detached
//! when this is dropped, or when the process dies: nothing is left on the device).

use super::backend::{
    AttachMode, FrameSink, RecvBackend, RxKind, RxStats, XdpReport, XdpRxCounters,
};
use crate::bpf::prog::xsk_redirect;
use crate::sys::bpf::{self, PerCpuCounter, XskMap};
use crate::sys::rx_ring::{RingStats, RxMeta};
use crate::sys::xsk::XdpMode;
use crate::sys::xsk_rx::{self, XskRx, XskRxStats};
use std::io;
use std::os::fd::{AsFd, OwnedFd};

/// UMEM frames (and RX/fill ring entries) per queue unless told otherwise.
pub const DEFAULT_FRAMES: u32 = 16384;

/// Frames taken from one queue's RX ring per batch.
const BATCH: u32 = 256;

/// Sockets on every RX queue of one device, and the program that feeds them.
pub struct AfXdpRx {
    // Drop order: the link first (the program stops redirecting), then the rest.
    _link: OwnedFd,
    _prog: OwnedFd,
    _map: XskMap,
    counters: PerCpuCounter,
    socks: Vec<XskRx>,
    frames: u32,
    pub attach: AttachMode,
    pub mode: XdpMode,
    /// RX queues the device has, as the driver reports them (None: it does not say).
    pub device_queues: Option<u32>,
}

/// Frames of 2 KiB: a standard frame fits; jumbo frames count as the socket's rx_dropped.
const FRAME_SIZE: usize = 2048;

impl AfXdpRx {
    /// Opens a socket on each RX queue of `ifindex` (named `name`, in the calling thread's
    /// network namespace), `frames` UMEM frames each, and attaches the program: natively
    /// when the driver can, else in generic mode. `zerocopy` as for [`XskRx::new`].
    pub fn open(
        ifindex: u32,
        name: &str,
        frames: u32,
        zerocopy: Option<bool>,
    ) -> io::Result<AfXdpRx> {
        let device_queues = xsk_rx::rx_queues(name).unwrap_or(None);
        let nq = device_queues.unwrap_or(1).clamp(1, 1024);
        let mut socks = Vec::with_capacity(nq as usize);
        for q in 0..nq {
            let s = XskRx::new(ifindex, q, frames, FRAME_SIZE, zerocopy).map_err(|e| {
                let hint = match (zerocopy, e.raw_os_error()) {
                    (Some(true), Some(libc::EOPNOTSUPP | libc::EINVAL)) => {
                        " (zero-copy asked for: the driver may not have it; --xdp-mode copy or auto)"
                    }
                    (_, Some(libc::EPERM)) => " (needs CAP_NET_RAW and CAP_NET_ADMIN)",
                    _ => "",
                };
                io::Error::new(
                    e.kind(),
                    format!("AF_XDP socket on queue {q} of {nq}: {e}{hint}"),
                )
            })?;
            socks.push(s);
        }
        let map = XskMap::create("upktgen_xsks", nq)?;
        for s in &socks {
            map.set(s.queue(), s.raw_fd())?;
        }
        let counters = PerCpuCounter::create_n("upktgen_xskcnt", xsk_redirect::COUNTERS)?;
        let prog = bpf::load_xdp(
            "upktgen_xskrx",
            &xsk_redirect::program(map.raw_fd(), counters.raw_fd()),
        )?;
        let (link, attach) = match bpf::attach_xdp_link(&prog, ifindex) {
            Ok(l) => (l, AttachMode::Native),
            Err(native) => match bpf::attach_xdp_generic_link(&prog, ifindex) {
                Ok(l) => (l, AttachMode::Generic),
                Err(generic) => {
                    return Err(io::Error::new(
                        generic.kind(),
                        format!(
                            "attaching the XDP redirect program: native mode: {native}; generic mode: {generic}"
                        ),
                    ));
                }
            },
        };
        let mode = if socks.iter().all(|s| s.mode() == XdpMode::ZeroCopy) {
            XdpMode::ZeroCopy
        } else {
            XdpMode::Copy
        };
        Ok(AfXdpRx {
            _link: link,
            _prog: prog,
            _map: map,
            counters,
            socks,
            frames,
            attach,
            mode,
            device_queues,
        })
    }

    /// Queues watched (one socket each).
    pub fn queues(&self) -> u32 {
        self.socks.len() as u32
    }

    /// Bytes of UMEM, all queues.
    pub fn umem_bytes(&self) -> u64 {
        self.socks.len() as u64 * u64::from(self.frames) * FRAME_SIZE as u64
    }

    /// Takes the waiting frames of every queue (up to `max` per queue), passing each to
    /// `sink` with the time it stands for: AF_XDP has no receive timestamp, so
    /// CLOCK_REALTIME is read once per queue *after* the frames taken were published (a
    /// frame is never stamped as received before its sender stamped it).
    fn take(&mut self, max: u32, sink: &mut impl FrameSink) -> usize {
        let mut n = 0;
        for s in &mut self.socks {
            let ready = s.rx_ready().min(max);
            if ready > 0 {
                let ts_ns = crate::sys::realtime_ns();
                n += s.recv(ready, |d| {
                    let meta = RxMeta {
                        ts_ns,
                        wire_len: d.len() as u32,
                        vlan: None,
                    };
                    sink.frame(d, meta)
                }) as usize;
            }
            if s.fill_needs_wakeup() {
                s.wakeup();
            }
        }
        n
    }

    /// The program's counters and the sockets' XDP_STATISTICS.
    pub fn counters(&self) -> io::Result<XdpRxCounters> {
        let mut socket = XskRxStats::default();
        for s in &self.socks {
            socket.add(&s.stats()?);
        }
        Ok(XdpRxCounters {
            redirected: self.counters.sum_at(xsk_redirect::REDIRECTED as u32)?,
            passed_no_socket: self.counters.sum_at(xsk_redirect::NO_SOCKET as u32)?,
            passed_not_udp: self.counters.sum_at(xsk_redirect::NOT_UDP as u32)?,
            socket,
        })
    }
}

impl<S: FrameSink> RecvBackend<S> for AfXdpRx {
    fn kind(&self) -> RxKind {
        RxKind::AfXdp
    }

    fn mode(&self) -> String {
        let m = match self.mode {
            XdpMode::ZeroCopy => "zero-copy",
            XdpMode::Copy => "copy",
        };
        let a = match self.attach {
            AttachMode::Native => "native XDP",
            AttachMode::Generic => "generic XDP",
        };
        format!(
            "af_xdp {m} mode, {a}, {} of {} RX queue(s) (IPv4/UDP, before tc/nftables ingress)",
            self.queues(),
            self.device_queues
                .map_or("?".to_string(), |n| n.to_string())
        )
    }

    fn buffer_bytes(&self) -> u64 {
        self.umem_bytes()
    }

    /// Waits for frames on any queue; wakes the driver when it asks for the fill ring to
    /// be looked at.
    fn wait(&self, timeout_ms: i32) -> io::Result<bool> {
        if self.socks.iter().any(|s| s.rx_ready() > 0) {
            return Ok(true);
        }
        for s in &self.socks {
            if s.fill_needs_wakeup() {
                s.wakeup();
            }
        }
        let fds: Vec<_> = self.socks.iter().map(|s| s.as_fd()).collect();
        xsk_rx::poll_any(&fds, timeout_ms)?;
        Ok(self.socks.iter().any(|s| s.rx_ready() > 0))
    }

    fn drain(&mut self, budget: usize, sink: &mut S) -> usize {
        let mut total = 0;
        loop {
            let n = self.take(BATCH, sink);
            total += n;
            if n == 0 || total >= budget {
                return total;
            }
        }
    }

    /// One reading of the counters serves both the ring figures (frames read, and the
    /// sockets' drops in the shape of PACKET_STATISTICS) and the XDP report, so that they
    /// describe the same moment and add up.
    fn stats(&mut self, read: u64) -> io::Result<RxStats> {
        let counters = self.counters()?;
        Ok(RxStats {
            ring: RingStats {
                packets: read,
                drops: counters.socket.dropped(),
                freezes: 0,
            },
            xdp: Some(XdpReport {
                zero_copy: self.mode == XdpMode::ZeroCopy,
                attach: self.attach,
                queues_watched: self.queues(),
                device_queues: self.device_queues,
                counters,
            }),
        })
    }
}
