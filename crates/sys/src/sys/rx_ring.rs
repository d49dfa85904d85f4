//! An AF_PACKET receive ring, TPACKET_V3 (block-based), mapped into this process.
//!
//! The kernel fills blocks of `block_size` bytes with variable-length frames, each behind
//! a `tpacket3_hdr` (receive time, lengths, offset of the MAC header, VLAN metadata), and
//! hands a block over by setting its status to TP_STATUS_USER — when it is full, or when
//! `retire_ms` have passed since its first frame. We read the block's frames and give it
//! back by setting the status to TP_STATUS_KERNEL. When every block is ours the kernel
//! drops arriving frames and counts them (PACKET_STATISTICS `tp_drops`).
//!
//! The socket binds to one interface with protocol ETH_P_IP by default: such a socket is
//! delivered frames *after* the ingress hooks (tc, nftables netdev ingress), as the IP
//! stack is, so frames those hooks drop are not seen. With ETH_P_ALL (`all_frames`) it is
//! a tap: it sees every frame, before those hooks, but also outgoing ones (we ask the
//! kernel to leave those out with PACKET_IGNORE_OUTGOING, Linux 4.20+).

use super::cvt;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicU32, Ordering};

const TP_STATUS_KERNEL: u32 = 0;
const TP_STATUS_USER: u32 = 1;
const TP_STATUS_VLAN_VALID: u32 = 1 << 4;
/// Offsets inside `struct tpacket_block_desc` (version, offset_to_priv, then
/// `tpacket_hdr_v1`: block_status, num_pkts, offset_to_first_pkt, ...).
const BLK_STATUS: usize = 8;
const BLK_NUM_PKTS: usize = 12;
const BLK_FIRST_PKT: usize = 16;
/// Size of `struct tpacket3_hdr`.
const TP3_HDR_LEN: usize = 48;

/// The ring's geometry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RxRingConfig {
    /// Bytes per block: a power of two, at least one page.
    pub block_size: usize,
    pub blocks: usize,
    /// A partly filled block is handed over after this many milliseconds.
    pub retire_ms: u32,
    /// Bind with ETH_P_ALL (a tap, before the ingress hooks) instead of ETH_P_IP.
    pub all_frames: bool,
}

impl Default for RxRingConfig {
    fn default() -> Self {
        RxRingConfig {
            // 16 MiB in 64 blocks of 256 KiB: a block is handed over when full or after
            // retire_ms, whichever comes first, so at low rates the ring holds blocks × retire_ms
            // of traffic for a reader that is not scheduled (256 ms here; 16 blocks of 1 MiB
            // held 64 ms, and a far receiver starved that long by a loaded machine dropped).
            block_size: 1 << 18,
            blocks: 64,
            retire_ms: 4,
            all_frames: false,
        }
    }
}

/// One received frame's metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RxMeta {
    /// The kernel's receive timestamp, CLOCK_REALTIME in ns.
    pub ts_ns: u64,
    /// Length of the frame on the wire (may exceed the bytes captured).
    pub wire_len: u32,
    /// VLAN id the device stripped into metadata (None when untagged).
    pub vlan: Option<u16>,
}

/// PACKET_STATISTICS, accumulated (the kernel resets them at each read).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RingStats {
    /// Frames the socket accepted into the ring.
    pub packets: u64,
    /// Frames dropped because no block was free (the ring was full).
    pub drops: u64,
    /// Times the ring froze (every block ours).
    pub freezes: u64,
}

/// A mapped TPACKET_V3 receive ring on one interface.
///
/// Invariant: `map` points to `blocks * block_size` bytes mapped MAP_SHARED from `fd`'s
/// ring and stays mapped until drop; block `i` starts at `i * block_size`, page-aligned.
/// A block's contents are read only while its status word says TP_STATUS_USER (the
/// kernel does not touch it then) and the status word itself is only accessed atomically.
pub struct RxRing {
    fd: OwnedFd,
    map: *mut u8,
    block_size: usize,
    blocks: usize,
    next: usize,
    stats: RingStats,
}

// SAFETY: the mapping is owned by this struct alone; moving it to another thread moves the
// only handle to it.
unsafe impl Send for RxRing {}

fn setsockopt<T>(fd: &OwnedFd, level: libc::c_int, name: libc::c_int, v: &T) -> io::Result<()> {
    // SAFETY: `v` points to a valid, initialised T and the length passed is its size.
    cvt(unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (v as *const T).cast(),
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    })
    .map(|_| ())
}

impl RxRing {
    /// Opens a packet socket in the calling thread's network namespace, maps its ring and
    /// binds it to `ifindex`. Frames arrive only from the bind on.
    pub fn open(ifindex: u32, cfg: RxRingConfig) -> io::Result<RxRing> {
        if !cfg.block_size.is_power_of_two() || cfg.block_size < 4096 || cfg.blocks == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "ring blocks must be a power of two of at least 4096 bytes, and at least one",
            ));
        }
        // Protocol 0 until the ring is ready: the socket receives nothing before bind.
        let fd = super::packet::raw_socket()?;
        let v3 = libc::tpacket_versions::TPACKET_V3 as libc::c_int;
        setsockopt(&fd, libc::SOL_PACKET, libc::PACKET_VERSION, &v3)?;
        let frame_size = 2048usize;
        let req = libc::tpacket_req3 {
            tp_block_size: cfg.block_size as u32,
            tp_block_nr: cfg.blocks as u32,
            tp_frame_size: frame_size as u32,
            tp_frame_nr: (cfg.block_size / frame_size * cfg.blocks) as u32,
            tp_retire_blk_tov: cfg.retire_ms,
            tp_sizeof_priv: 0,
            tp_feature_req_word: 0,
        };
        setsockopt(&fd, libc::SOL_PACKET, libc::PACKET_RX_RING, &req)?;
        let len = cfg.block_size * cfg.blocks;
        // SAFETY: mapping the ring the kernel just allocated for this socket; the result
        // is checked against MAP_FAILED.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd.as_raw_fd(),
                0,
            )
        };
        if map == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ring = RxRing {
            fd,
            map: map.cast(),
            block_size: cfg.block_size,
            blocks: cfg.blocks,
            next: 0,
            stats: RingStats::default(),
        };
        let proto: u16 = if cfg.all_frames {
            // Taps see outgoing frames too; leave them out where the kernel can (4.20+).
            let one: libc::c_int = 1;
            let _ = setsockopt(
                &ring.fd,
                libc::SOL_PACKET,
                libc::PACKET_IGNORE_OUTGOING,
                &one,
            );
            libc::ETH_P_ALL as u16
        } else {
            libc::ETH_P_IP as u16
        };
        super::packet::bind_to(ring.fd.as_fd(), ifindex, proto)?;
        Ok(ring)
    }

    /// Total bytes of the ring.
    pub fn bytes(&self) -> usize {
        self.block_size * self.blocks
    }

    /// Waits up to `timeout_ms` for a block to be handed over. Returns whether one is ready.
    pub fn wait(&self, timeout_ms: i32) -> io::Result<bool> {
        if self.ready() {
            return Ok(true);
        }
        super::poll_one(self.fd.as_fd(), libc::POLLIN | libc::POLLERR, timeout_ms)?;
        Ok(self.ready())
    }

    #[inline]
    fn status_word(&self, block: usize) -> &AtomicU32 {
        debug_assert!(block < self.blocks);
        // SAFETY: block * block_size + BLK_STATUS + 4 lies inside the mapping and is
        // 4-byte aligned (blocks are page-aligned); the word is shared with the kernel and
        // only accessed atomically (struct invariant).
        unsafe { &*(self.map.add(block * self.block_size + BLK_STATUS) as *const AtomicU32) }
    }

    fn ready(&self) -> bool {
        self.status_word(self.next).load(Ordering::Acquire) & TP_STATUS_USER != 0
    }

    /// If the next block is ours, calls `f` for each of its frames, gives the block back
    /// and returns the number of frames; None if the kernel still owns it.
    pub fn next_block(&mut self, mut f: impl FnMut(&[u8], RxMeta)) -> Option<usize> {
        if !self.ready() {
            return None;
        }
        let bs = self.block_size;
        // SAFETY: the block is ours (status USER, acquired above), lies inside the mapping
        // (struct invariant), and the kernel does not write it until we give it back below;
        // `&mut self` keeps other borrows of the ring out meanwhile.
        let block = unsafe { std::slice::from_raw_parts(self.map.add(self.next * bs), bs) };
        let rd32 = |off: usize| -> Option<u32> {
            Some(u32::from_ne_bytes(
                block.get(off..off + 4)?.try_into().ok()?,
            ))
        };
        let n = rd32(BLK_NUM_PKTS).unwrap_or(0) as usize;
        let mut off = rd32(BLK_FIRST_PKT).unwrap_or(0) as usize;
        let mut done = 0;
        // Every offset is checked against the block: a corrupt header ends the walk.
        while done < n && off >= BLK_FIRST_PKT && off + TP3_HDR_LEN <= bs {
            let (Some(next), Some(sec), Some(nsec), Some(snap), Some(len), Some(status)) = (
                rd32(off),
                rd32(off + 4),
                rd32(off + 8),
                rd32(off + 12),
                rd32(off + 16),
                rd32(off + 20),
            ) else {
                break;
            };
            let mac = usize::from(u16::from_ne_bytes([block[off + 24], block[off + 25]]));
            let tci = rd32(off + 32).unwrap_or(0);
            let start = off + mac;
            let Some(data) = block.get(start..start + snap as usize) else {
                break;
            };
            f(
                data,
                RxMeta {
                    ts_ns: u64::from(sec) * 1_000_000_000 + u64::from(nsec),
                    wire_len: len,
                    vlan: (status & TP_STATUS_VLAN_VALID != 0).then_some((tci & 0x0fff) as u16),
                },
            );
            done += 1;
            if next == 0 {
                break;
            }
            off += next as usize;
        }
        self.status_word(self.next)
            .store(TP_STATUS_KERNEL, Ordering::Release);
        self.next = (self.next + 1) % self.blocks;
        Some(done)
    }

    /// PACKET_STATISTICS accumulated since the socket was opened.
    pub fn stats(&mut self) -> io::Result<RingStats> {
        let st = super::packet::packet_statistics(self.fd.as_fd())?;
        // The kernel counts drops inside tp_packets; keep them apart.
        self.stats.packets += u64::from(st.tp_packets.saturating_sub(st.tp_drops));
        self.stats.drops += u64::from(st.tp_drops);
        self.stats.freezes += u64::from(st.tp_freeze_q_cnt);
        Ok(self.stats)
    }
}

impl AsFd for RxRing {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

impl Drop for RxRing {
    fn drop(&mut self) {
        // SAFETY: `map` and the length are exactly what mmap returned; nothing refers to
        // the mapping after drop (block slices never outlive `next_block`).
        unsafe { libc::munmap(self.map.cast(), self.block_size * self.blocks) };
    }
}
