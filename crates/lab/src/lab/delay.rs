//! The DUT's delay line (`--lab dut --dut-delay D`): a device whose latency is known.
//!
//! The kernel here has no qdisc that delays (sch_netem, and EDT's sch_fq and sch_etf, are
//! not built), so the DUT forwards through this line instead of its own IP forwarding:
//!
//! ```text
//!  dut-in --AF_PACKET tap (timestamped)--> queue, each frame held until rx + D
//!     \--tcx ingress: IPv4/IPv6 dropped        --> routed (MACs, TTL/hop limit, checksum)
//!        (the kernel does not forward them)         --> AF_PACKET send on dut-out
//!                                                       (its tc and nft egress apply)
//! ```
//! A tap sees each frame before tc ingress, so the tcx program that drops IPv4 and IPv6 at
//! dut-in takes nothing from the line; the line writes what the kernel's forwarding would
//! (dut-out's MAC as source, the receiver's as destination, TTL or hop limit less one, the
//! IPv4 header checksum again) and sends in arrival order, each frame at its kernel receive
//! timestamp plus D. The queue is bounded ([`MAX_QUEUED`] frames, [`MAX_QUEUED_BYTES`]
//! bytes): beyond it a frame is dropped and counted, so a search offering far above what
//! the DUT passes costs bounded memory.
//!
//! The line is a thread of the process that made the lab, its sockets and tcx link opened
//! in the DUT namespace: it stops when the lab is removed, and a process killed outright
//! takes its sockets and link with it (a tcx link detaches when its fd closes); the
//! namespace itself is what a later run's stale-lab sweep removes.

use super::dut::{DUT_IN_IF, DUT_OUT_IF, DUT_OUT_MAC};
use super::{LabError, RX_MAC};
use crate::bpf::prog::tc_take_ip;
use crate::sys::{self, bpf, netns, packet::PacketSocket, tap::Tap};
use crate::wire::{MacAddr, ethernet, ipv4, ipv6};
use std::collections::VecDeque;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// The most frames the line holds at once.
pub const MAX_QUEUED: usize = 65_536;
/// The most bytes of frames the line holds at once.
pub const MAX_QUEUED_BYTES: usize = 32 << 20;
/// The longest delay `--dut-delay` takes: the lab's receiver waits at most 3 s for the last
/// frames after the send, so a delay must end well within that.
pub const MAX_DELAY: Duration = Duration::from_secs(1);
/// The largest frame the line reads whole (the lab's MTU of 1500 plus the Ethernet header,
/// with room to spare); a longer one is cut short by the tap and not forwarded.
const FRAME_BUF: usize = 2048;

/// Why a frame was not forwarded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotRouted {
    /// Not IPv4 or IPv6 (untagged): the kernel would not forward it either.
    NotIp,
    /// Shorter than its headers say, or a header the kernel would refuse (a bad version,
    /// IHL or IPv4 checksum).
    Malformed,
    /// TTL or hop limit of 1 or 0: the kernel would answer with ICMP time exceeded.
    TtlExpired,
}

/// Rewrites `frame` in place as the DUT's forwarding would send it out of dut-out: `src` as
/// the Ethernet source, `dst` (the next hop's MAC) as destination, the TTL (IPv4, with its
/// header checksum computed again) or hop limit (IPv6) less one.
pub fn route(frame: &mut [u8], src: MacAddr, dst: MacAddr) -> Result<(), NotRouted> {
    if frame.len() < ethernet::HEADER_LEN {
        return Err(NotRouted::Malformed);
    }
    let et = ethernet::Packet::new_unchecked(&*frame).ethertype();
    let l3 = &mut frame[ethernet::HEADER_LEN..];
    match et {
        ethernet::ethertype::IPV4 => {
            let mut p = ipv4::Packet::new_checked(l3).map_err(|_| NotRouted::Malformed)?;
            if !p.verify_checksum() {
                return Err(NotRouted::Malformed);
            }
            if p.ttl() <= 1 {
                return Err(NotRouted::TtlExpired);
            }
            p.set_ttl(p.ttl() - 1);
            p.fill_checksum();
        }
        ethernet::ethertype::IPV6 => {
            let mut p = ipv6::Packet::new_checked(l3).map_err(|_| NotRouted::Malformed)?;
            if p.hop_limit() <= 1 {
                return Err(NotRouted::TtlExpired);
            }
            p.set_hop_limit(p.hop_limit() - 1);
        }
        _ => return Err(NotRouted::NotIp),
    }
    let mut e = ethernet::Packet::new_unchecked(frame);
    e.set_src_addr(src);
    e.set_dst_addr(dst);
    Ok(())
}

/// What the line did, counted from its start.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LineCounts {
    /// Frames the tap read on dut-in (the DUT's own, sent out of it, not counted).
    pub received: u64,
    /// Frames sent out of dut-out (handed to its egress).
    pub forwarded: u64,
    /// Frames not forwarded because they are not IPv4/IPv6, malformed, too long for the
    /// line's buffer, or with a TTL/hop limit that ends here.
    pub not_routed: u64,
    /// Frames dropped because the queue was full.
    pub queue_full: u64,
    /// Frames the kernel dropped before the tap (its receive buffer was full).
    pub tap_dropped: u64,
    /// Frames dut-out's egress refused (ENOBUFS: a tc or nftables egress drop).
    pub egress_dropped: u64,
    /// Frames whose send failed otherwise.
    pub send_failed: u64,
    /// The most frames held at once.
    pub max_queued: u64,
}

impl LineCounts {
    /// What happened between `self` (earlier) and `later`; `max_queued` is `later`'s.
    pub fn delta(&self, later: &LineCounts) -> LineCounts {
        LineCounts {
            received: later.received.saturating_sub(self.received),
            forwarded: later.forwarded.saturating_sub(self.forwarded),
            not_routed: later.not_routed.saturating_sub(self.not_routed),
            queue_full: later.queue_full.saturating_sub(self.queue_full),
            tap_dropped: later.tap_dropped.saturating_sub(self.tap_dropped),
            egress_dropped: later.egress_dropped.saturating_sub(self.egress_dropped),
            send_failed: later.send_failed.saturating_sub(self.send_failed),
            max_queued: later.max_queued,
        }
    }
}

/// How a send went, for the counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sent {
    Ok,
    /// Refused by the egress's policy (ENOBUFS).
    EgressDropped,
    Failed,
}

struct Held {
    due_ns: u64,
    frame: Vec<u8>,
}

/// The queue: frames in arrival order, each released at its receive time plus the delay.
/// Pure: time is passed in, so the tests drive it without a clock.
pub struct Queue {
    delay_ns: u64,
    held: VecDeque<Held>,
    bytes: usize,
    max_frames: usize,
    max_bytes: usize,
    /// Buffers of released frames, used again.
    pool: Vec<Vec<u8>>,
    pub counts: LineCounts,
}

impl Queue {
    pub fn new(delay: Duration) -> Queue {
        Queue::bounded(delay, MAX_QUEUED, MAX_QUEUED_BYTES)
    }

    /// A queue of at most `max_frames` frames and `max_bytes` bytes.
    pub fn bounded(delay: Duration, max_frames: usize, max_bytes: usize) -> Queue {
        Queue {
            delay_ns: u64::try_from(delay.as_nanos()).unwrap_or(u64::MAX),
            held: VecDeque::new(),
            bytes: 0,
            max_frames,
            max_bytes,
            pool: Vec::new(),
            counts: LineCounts::default(),
        }
    }

    /// Holds a copy of `frame`, received at `rx_ns`, until `rx_ns` + the delay; false (and
    /// counted) when the queue is full.
    pub fn push(&mut self, frame: &[u8], rx_ns: u64) -> bool {
        if self.held.len() >= self.max_frames || self.bytes + frame.len() > self.max_bytes {
            self.counts.queue_full += 1;
            return false;
        }
        let mut b = self.pool.pop().unwrap_or_default();
        b.clear();
        b.extend_from_slice(frame);
        self.bytes += b.len();
        self.held.push_back(Held {
            due_ns: rx_ns.saturating_add(self.delay_ns),
            frame: b,
        });
        self.counts.max_queued = self.counts.max_queued.max(self.held.len() as u64);
        true
    }

    /// When the first frame held is due (None: nothing held).
    pub fn next_due(&self) -> Option<u64> {
        self.held.front().map(|h| h.due_ns)
    }

    pub fn len(&self) -> usize {
        self.held.len()
    }

    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }

    /// Sends, in arrival order, every frame due at `now_ns`: a frame not yet due holds the
    /// ones behind it. Returns how many were sent (whatever the send said).
    pub fn release(&mut self, now_ns: u64, mut send: impl FnMut(&[u8]) -> Sent) -> usize {
        let mut n = 0;
        while self.held.front().is_some_and(|h| h.due_ns <= now_ns) {
            let Some(h) = self.held.pop_front() else {
                break;
            };
            match send(&h.frame) {
                Sent::Ok => self.counts.forwarded += 1,
                Sent::EgressDropped => self.counts.egress_dropped += 1,
                Sent::Failed => self.counts.send_failed += 1,
            }
            self.bytes -= h.frame.len();
            if self.pool.len() < 1024 {
                self.pool.push(h.frame);
            }
            n += 1;
        }
        n
    }

    /// One frame read by the tap at `rx_ns`: counted, routed (in place) and held, or
    /// counted as not routed. `for_us`: whole, and addressed to dut-in's MAC (the tap's
    /// PACKET_HOST), as the kernel forwards only those.
    pub fn take(&mut self, frame: &mut [u8], for_us: bool, rx_ns: u64) {
        self.counts.received += 1;
        if !for_us || route(frame, DUT_OUT_MAC, RX_MAC).is_err() {
            self.counts.not_routed += 1;
            return;
        }
        self.push(frame, rx_ns);
    }
}

/// The counts the thread publishes, and its state, shared with the lab.
#[derive(Debug, Default)]
struct Shared {
    received: AtomicU64,
    forwarded: AtomicU64,
    not_routed: AtomicU64,
    queue_full: AtomicU64,
    tap_dropped: AtomicU64,
    egress_dropped: AtomicU64,
    send_failed: AtomicU64,
    max_queued: AtomicU64,
    queued: AtomicU64,
    /// Why the line stopped on its own (a socket error), if it did.
    failed: Mutex<Option<String>>,
}

impl Shared {
    fn publish(&self, c: &LineCounts, queued: usize) {
        let set = |a: &AtomicU64, v: u64| a.store(v, Ordering::Relaxed);
        set(&self.received, c.received);
        set(&self.forwarded, c.forwarded);
        set(&self.not_routed, c.not_routed);
        set(&self.queue_full, c.queue_full);
        set(&self.tap_dropped, c.tap_dropped);
        set(&self.egress_dropped, c.egress_dropped);
        set(&self.send_failed, c.send_failed);
        set(&self.max_queued, c.max_queued);
        set(&self.queued, queued as u64);
    }

    fn counts(&self) -> LineCounts {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        LineCounts {
            received: get(&self.received),
            forwarded: get(&self.forwarded),
            not_routed: get(&self.not_routed),
            queue_full: get(&self.queue_full),
            tap_dropped: get(&self.tap_dropped),
            egress_dropped: get(&self.egress_dropped),
            send_failed: get(&self.send_failed),
            max_queued: get(&self.max_queued),
        }
    }
}

/// A running delay line; stopped (its thread joined, its tcx link closed) on drop.
#[derive(Debug)]
pub struct DelayLine {
    pub delay: Duration,
    stop: Arc<AtomicBool>,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    /// Keeps the ingress drop attached: closing the link detaches it.
    _tcx: OwnedFd,
}

/// A handle on a line's counts, for an observer that outlives a borrow of the lab.
#[derive(Debug, Clone)]
pub struct LineWatch {
    pub delay: Duration,
    shared: Arc<Shared>,
}

impl LineWatch {
    /// The counts now (an error if the line stopped on its own).
    pub fn counts(&self) -> Result<LineCounts, LabError> {
        if let Ok(f) = self.shared.failed.lock()
            && let Some(why) = f.as_ref()
        {
            return Err(LabError::DelayLineFailed(why.clone()));
        }
        Ok(self.shared.counts())
    }

    /// Waits until the line holds nothing and has read nothing new for a few ms (the frames
    /// of a send that just ended are through it), for at most the delay plus 1 s.
    pub fn wait_idle(&self) {
        let until = std::time::Instant::now() + self.delay + Duration::from_secs(1);
        let mut last = self.shared.received.load(Ordering::Relaxed);
        let mut quiet = 0;
        while std::time::Instant::now() < until && quiet < 5 {
            std::thread::sleep(Duration::from_millis(2));
            let r = self.shared.received.load(Ordering::Relaxed);
            if r == last && self.shared.queued.load(Ordering::Relaxed) == 0 {
                quiet += 1;
            } else {
                quiet = 0;
            }
            last = r;
        }
    }
}

impl DelayLine {
    /// Starts the line in the DUT namespace at `ns`: the tap on dut-in, the sending socket
    /// on dut-out, the tcx drop on dut-in, then the thread.
    pub fn start(ns: &Path, delay: Duration) -> Result<DelayLine, LabError> {
        let opened = netns::in_netns(ns, || {
            let tap = Tap::open(sys::if_nametoindex(DUT_IN_IF)?)?;
            // Room for bursts while the thread is not scheduled (the kernel doubles it).
            let _ = sys::set_rcvbuf_force(std::os::fd::AsFd::as_fd(&tap), 8 << 20);
            let out = PacketSocket::open(sys::if_nametoindex(DUT_OUT_IF)?)?;
            let _ = out.set_sndbuf(8 << 20);
            let prog = bpf::load_prog(
                bpf::ProgType::SchedCls,
                "upktgen_take_ip",
                &tc_take_ip::program(),
            )?;
            let link = bpf::attach_tcx_ingress(&prog, sys::if_nametoindex(DUT_IN_IF)?)?;
            Ok((tap, out, link))
        })
        .map_err(LabError::DelayLine)?;
        let (tap, out, tcx) = opened;
        let stop = Arc::new(AtomicBool::new(false));
        let shared = Arc::new(Shared::default());
        let thread = std::thread::Builder::new()
            .name("upktgen-delay".into())
            .spawn({
                let (stop, shared) = (Arc::clone(&stop), Arc::clone(&shared));
                move || {
                    if let Err(e) = run(tap, &out, delay, &stop, &shared)
                        && let Ok(mut f) = shared.failed.lock()
                    {
                        *f = Some(e.to_string());
                    }
                }
            })
            .map_err(LabError::DelayLine)?;
        Ok(DelayLine {
            delay,
            stop,
            shared,
            thread: Some(thread),
            _tcx: tcx,
        })
    }

    pub fn watch(&self) -> LineWatch {
        LineWatch {
            delay: self.delay,
            shared: Arc::clone(&self.shared),
        }
    }
}

impl Drop for DelayLine {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The longest the thread waits before it looks at the stop flag again.
const IDLE_WAIT_NS: u64 = 20_000_000;
/// How often the tap's drop counter is read.
const STATS_NS: u64 = 10_000_000;
/// Frames read in a row before the due ones are sent again.
const READ_BATCH: usize = 256;

/// The line's loop: send what is due, wait for a frame or the next due time, read.
fn run(
    mut tap: Tap,
    out: &PacketSocket,
    delay: Duration,
    stop: &AtomicBool,
    shared: &Shared,
) -> std::io::Result<()> {
    // Wake at the due time, not up to 50 us after it, and run then even when the host is
    // busy (other processes' builds): the line is a device whose delay must be its own.
    // Best effort: without CAP_SYS_NICE it runs as an ordinary thread.
    let _ = sys::set_timer_slack_ns(1);
    let _ = sys::set_fifo_priority(10);
    let mut q = Queue::new(delay);
    let mut buf = vec![0u8; FRAME_BUF];
    let send = |f: &[u8]| match out.send_frame(f) {
        Ok(()) => Sent::Ok,
        Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => Sent::EgressDropped,
        Err(_) => Sent::Failed,
    };
    let mut stats_at = 0;
    while !stop.load(Ordering::Relaxed) {
        let now = sys::realtime_ns();
        q.release(now, send);
        let wait = q
            .next_due()
            .map_or(IDLE_WAIT_NS, |d| d.saturating_sub(now).min(IDLE_WAIT_NS));
        if wait == 0 || tap.wait_ns(wait)? {
            for _ in 0..READ_BATCH {
                let Some(f) = tap.recv(&mut buf)? else {
                    break;
                };
                if f.pkttype == sys::tap::PACKET_OUTGOING {
                    continue;
                }
                // A frame without a timestamp is held from now.
                let rx = if f.rx_ns == 0 {
                    sys::realtime_ns()
                } else {
                    f.rx_ns
                };
                let for_us = !f.truncated && f.pkttype == sys::tap::PACKET_HOST;
                q.take(&mut buf[..f.len], for_us, rx);
            }
        }
        if now.saturating_sub(stats_at) >= STATS_NS {
            q.counts.tap_dropped = tap.drops()?;
            stats_at = now;
        }
        shared.publish(&q.counts, q.len());
    }
    q.counts.tap_dropped = tap.drops()?;
    shared.publish(&q.counts, q.len());
    Ok(())
}

#[cfg(test)]
mod tests;
