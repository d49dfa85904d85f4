//! The `bpf()` syscall: load a hand-assembled XDP program and attach it with a BPF link.
//!
//! No compiler, no libbpf: programs are arrays of 8-byte instructions written in Rust
//! ([`crate::bpf::asm`], [`crate::bpf::prog`]).
//! A BPF link detaches the program when its last fd closes, so an XDP program attached
//! this way cannot outlive the process.

use super::cvt;
use crate::bpf::asm::Insn;
use std::io;
use std::os::fd::{FromRawFd, OwnedFd};

const BPF_PROG_LOAD: libc::c_int = 5;
const BPF_LINK_CREATE: libc::c_int = 28;
const BPF_PROG_TYPE_XDP: u32 = 6;
const BPF_XDP: u32 = 37;
/// Size of the `bpf_attr` prefix we fill; the kernel accepts any size up to its own, and
/// requires the bytes past the fields it knows to be zero.
const ATTR_LEN: usize = 128;
/// The kernel reads programs as arrays of 8-byte `struct bpf_insn`, which [`Insn`] is
/// (`#[repr(C)]`: code, dst/src nibbles, off, imm).
const _: () = assert!(std::mem::size_of::<Insn>() == 8);

fn bpf(cmd: libc::c_int, attr: &mut [u8; ATTR_LEN]) -> io::Result<OwnedFd> {
    let fd = bpf_int(cmd, attr)?;
    // SAFETY: the commands passed here (map create, prog load, link create, raw tracepoint
    // open) return a new fd on success, which nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// bpf() for commands that return a plain status or count, not an fd.
fn bpf_int(cmd: libc::c_int, attr: &mut [u8; ATTR_LEN]) -> io::Result<libc::c_int> {
    // SAFETY: `attr` is a valid, fully initialised buffer of ATTR_LEN bytes laid out as the
    // kernel's bpf_attr for `cmd`; pointers inside it (set by the callers in this file)
    // point to memory that outlives this call and is as large as the kernel will access:
    // the sizes stored next to them (instructions, log, test data and context in/out), or for map
    // element commands the map's key (u32) and value size (ValueMap checks the lengths;
    // XskMap's key and value are both u32s).
    cvt(unsafe { libc::syscall(libc::SYS_bpf, cmd, attr.as_mut_ptr(), ATTR_LEN) } as libc::c_int)
}

fn put_u32(a: &mut [u8; ATTR_LEN], off: usize, v: u32) {
    a[off..off + 4].copy_from_slice(&v.to_ne_bytes());
}

fn put_u64(a: &mut [u8; ATTR_LEN], off: usize, v: u64) {
    a[off..off + 8].copy_from_slice(&v.to_ne_bytes());
}

fn get_u32(a: &[u8; ATTR_LEN], off: usize) -> u32 {
    u32::from_ne_bytes([a[off], a[off + 1], a[off + 2], a[off + 3]])
}

/// Object names are at most 15 bytes plus NUL.
fn put_name(a: &mut [u8; ATTR_LEN], off: usize, name: &str) {
    for (d, s) in a[off..off + 15].iter_mut().zip(name.bytes()) {
        *d = s;
    }
}

/// The program types upktgen loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgType {
    /// XDP (runs on a device's receive path, or from BPF_PROG_RUN).
    Xdp,
    /// A raw tracepoint program: its context is the tracepoint's arguments as u64s.
    RawTracepoint,
    /// A tc classifier (`BPF_PROG_TYPE_SCHED_CLS`): its context is the `__sk_buff`, its
    /// result a tc action; attached with [`attach_tcx_ingress`].
    SchedCls,
}

/// Loads a program; on a verifier rejection the error carries the verifier's log.
///
/// The first attempt asks for no log (a verbose log of a correct program can overflow any
/// fixed buffer and fail the load); only a failed load is repeated with a log.
pub fn load_prog(ty: ProgType, name: &str, insns: &[Insn]) -> io::Result<OwnedFd> {
    match load_prog_logged(ty, name, insns, None) {
        Ok(fd) => Ok(fd),
        Err(e) if matches!(e.raw_os_error(), Some(libc::EACCES) | Some(libc::EINVAL)) => {
            let mut log = vec![0u8; 1 << 20];
            match load_prog_logged(ty, name, insns, Some(&mut log)) {
                Ok(fd) => Ok(fd),
                Err(e2) => {
                    let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
                    let text = String::from_utf8_lossy(&log[..end]);
                    // The verifier's conclusion is at the end of its log.
                    let lines: Vec<&str> = text.trim().lines().collect();
                    let tail = lines[lines.len().saturating_sub(12)..].join(" | ");
                    if tail.is_empty() {
                        Err(e2)
                    } else {
                        Err(io::Error::new(e2.kind(), format!("{e2}; verifier: {tail}")))
                    }
                }
            }
        }
        Err(e) => Err(e),
    }
}

fn load_prog_logged(
    ty: ProgType,
    name: &str,
    insns: &[Insn],
    log: Option<&mut Vec<u8>>,
) -> io::Result<OwnedFd> {
    const BPF_PROG_TYPE_RAW_TRACEPOINT: u32 = 17;
    const BPF_PROG_TYPE_SCHED_CLS: u32 = 3;
    let license = c"GPL";
    let mut a = [0u8; ATTR_LEN];
    let (prog_type, attach) = match ty {
        ProgType::Xdp => (BPF_PROG_TYPE_XDP, BPF_XDP),
        ProgType::RawTracepoint => (BPF_PROG_TYPE_RAW_TRACEPOINT, 0),
        ProgType::SchedCls => (BPF_PROG_TYPE_SCHED_CLS, 0),
    };
    put_u32(&mut a, 0, prog_type);
    put_u32(&mut a, 4, insns.len() as u32);
    put_u64(&mut a, 8, insns.as_ptr() as u64);
    put_u64(&mut a, 16, license.as_ptr() as u64);
    if let Some(log) = log {
        put_u32(&mut a, 24, 1); // log_level
        put_u32(&mut a, 28, log.len() as u32);
        put_u64(&mut a, 32, log.as_mut_ptr() as u64);
    }
    put_name(&mut a, 48, name);
    put_u32(&mut a, 68, attach); // expected_attach_type
    bpf(BPF_PROG_LOAD, &mut a)
}

/// Loads an XDP program; on a verifier rejection the error carries the verifier's log.
pub fn load_xdp(name: &str, insns: &[Insn]) -> io::Result<OwnedFd> {
    load_prog(ProgType::Xdp, name, insns)
}

/// Attaches `prog` to interface `ifindex` (in the calling thread's network namespace) in
/// native (driver) mode, returning the link: closing it detaches the program.
pub fn attach_xdp_link(prog: &OwnedFd, ifindex: u32) -> io::Result<OwnedFd> {
    use std::os::fd::AsRawFd;
    const XDP_FLAGS_DRV_MODE: u32 = 1 << 2;
    let mut a = [0u8; ATTR_LEN];
    put_u32(&mut a, 0, prog.as_raw_fd() as u32);
    put_u32(&mut a, 4, ifindex);
    put_u32(&mut a, 8, BPF_XDP);
    put_u32(&mut a, 12, XDP_FLAGS_DRV_MODE);
    bpf(BPF_LINK_CREATE, &mut a)
}

/// Attaches `prog` to interface `ifindex` in generic (skb) mode, returning the link:
/// closing it detaches the program. Works on any device, loopback included.
pub fn attach_xdp_generic_link(prog: &OwnedFd, ifindex: u32) -> io::Result<OwnedFd> {
    use std::os::fd::AsRawFd;
    const XDP_FLAGS_SKB_MODE: u32 = 1 << 1;
    let mut a = [0u8; ATTR_LEN];
    put_u32(&mut a, 0, prog.as_raw_fd() as u32);
    put_u32(&mut a, 4, ifindex);
    put_u32(&mut a, 8, BPF_XDP);
    put_u32(&mut a, 12, XDP_FLAGS_SKB_MODE);
    bpf(BPF_LINK_CREATE, &mut a)
}

/// Attaches the tc program `prog` to the ingress of interface `ifindex` (in the calling
/// thread's network namespace) through tcx (Linux 6.6+, no qdisc needed), returning the
/// link: closing it detaches the program, so it cannot outlive the process.
pub fn attach_tcx_ingress(prog: &OwnedFd, ifindex: u32) -> io::Result<OwnedFd> {
    use std::os::fd::AsRawFd;
    const BPF_TCX_INGRESS: u32 = 46;
    let mut a = [0u8; ATTR_LEN];
    put_u32(&mut a, 0, prog.as_raw_fd() as u32);
    put_u32(&mut a, 4, ifindex);
    put_u32(&mut a, 8, BPF_TCX_INGRESS);
    // flags 0, no relative program, any revision: appended to the ingress's list.
    bpf(BPF_LINK_CREATE, &mut a)
}

/// A single-entry `BPF_MAP_TYPE_ARRAY` map whose value programs reach directly
/// ([`Insn::ld_map_value`]) and userspace reads and writes whole.
#[derive(Debug)]
pub struct ValueMap {
    fd: OwnedFd,
    value_size: usize,
}

impl ValueMap {
    /// Creates the map; its value starts zeroed.
    pub fn create(name: &str, value_size: usize) -> io::Result<ValueMap> {
        const BPF_MAP_CREATE: libc::c_int = 0;
        const BPF_MAP_TYPE_ARRAY: u32 = 2;
        // Up to 1 MiB: xdp_live's flow map holds 8 bytes for each of up to 65536 flows.
        if value_size == 0 || value_size > 1 << 20 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "map value size out of range",
            ));
        }
        let mut a = [0u8; ATTR_LEN];
        put_u32(&mut a, 0, BPF_MAP_TYPE_ARRAY);
        put_u32(&mut a, 4, 4); // key: u32 index
        put_u32(&mut a, 8, value_size as u32);
        put_u32(&mut a, 12, 1); // max_entries
        put_name(&mut a, 28, name);
        let fd = bpf(BPF_MAP_CREATE, &mut a)?;
        Ok(ValueMap { fd, value_size })
    }

    /// The fd to put in an `ld_imm64` (valid while `self` lives).
    pub fn raw_fd(&self) -> i32 {
        use std::os::fd::AsRawFd;
        self.fd.as_raw_fd()
    }

    pub fn value_size(&self) -> usize {
        self.value_size
    }

    /// Copies the value out into `out` (exactly `value_size` bytes).
    pub fn read(&self, out: &mut [u8]) -> io::Result<()> {
        const BPF_MAP_LOOKUP_ELEM: libc::c_int = 1;
        self.check_len(out.len())?;
        let key = 0u32;
        let mut a = [0u8; ATTR_LEN];
        put_u32(&mut a, 0, self.raw_fd() as u32);
        put_u64(&mut a, 8, &key as *const u32 as u64);
        put_u64(&mut a, 16, out.as_mut_ptr() as u64);
        // The kernel writes exactly value_size bytes to `out`, which is that long.
        bpf_int(BPF_MAP_LOOKUP_ELEM, &mut a).map(|_| ())
    }

    /// Replaces the value with `v` (exactly `value_size` bytes).
    pub fn write(&self, v: &[u8]) -> io::Result<()> {
        const BPF_MAP_UPDATE_ELEM: libc::c_int = 2;
        self.check_len(v.len())?;
        let key = 0u32;
        let mut a = [0u8; ATTR_LEN];
        put_u32(&mut a, 0, self.raw_fd() as u32);
        put_u64(&mut a, 8, &key as *const u32 as u64);
        put_u64(&mut a, 16, v.as_ptr() as u64);
        // flags (offset 24) = BPF_ANY
        bpf_int(BPF_MAP_UPDATE_ELEM, &mut a).map(|_| ())
    }

    fn check_len(&self, len: usize) -> io::Result<()> {
        if len == self.value_size {
            Ok(())
        } else {
            Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "map value buffer of {len} bytes, the map's is {}",
                    self.value_size
                ),
            ))
        }
    }
}

/// A `BPF_MAP_TYPE_ARRAY` of `entries` values of `value_size` bytes created with
/// `BPF_F_MMAPABLE` and mapped into this process: userspace writes the values in place
/// (no syscall per value) and programs reach them with `bpf_map_lookup_elem`. The kernel
/// lays the values out one after the other, each rounded up to 8 bytes
/// ([`SlotMap::stride`]).
#[derive(Debug)]
pub struct SlotMap {
    fd: OwnedFd,
    /// Invariant: `len` bytes mapped read-write and shared at `ptr` from the map's fd, for
    /// as long as `self` lives; nothing else in this process maps them.
    ptr: *mut u8,
    len: usize,
    value_size: usize,
    entries: u32,
}

// SAFETY: the mapping is owned by this struct alone; moving it to another thread moves the
// only handle to it.
unsafe impl Send for SlotMap {}

impl SlotMap {
    /// Creates the map (its values zeroed) and maps it.
    pub fn create(name: &str, value_size: usize, entries: u32) -> io::Result<SlotMap> {
        const BPF_MAP_CREATE: libc::c_int = 0;
        const BPF_MAP_TYPE_ARRAY: u32 = 2;
        const BPF_F_MMAPABLE: u32 = 1 << 10;
        let len = (value_size.next_multiple_of(8))
            .checked_mul(entries as usize)
            .filter(|&l| value_size > 0 && entries > 0 && l <= 1 << 26)
            .ok_or_else(|| {
                io::Error::new(io::ErrorKind::InvalidInput, "slot map size out of range")
            })?;
        let mut a = [0u8; ATTR_LEN];
        put_u32(&mut a, 0, BPF_MAP_TYPE_ARRAY);
        put_u32(&mut a, 4, 4); // key: u32 index
        put_u32(&mut a, 8, value_size as u32);
        put_u32(&mut a, 12, entries);
        put_u32(&mut a, 16, BPF_F_MMAPABLE);
        put_name(&mut a, 28, name);
        let fd = bpf(BPF_MAP_CREATE, &mut a)?;
        let len = len.next_multiple_of(super::page_size());
        use std::os::fd::AsRawFd;
        // SAFETY: a fresh shared mapping of the map's values (`len` is their size rounded
        // up to pages, which the kernel allows for a BPF_F_MMAPABLE array); the result is
        // checked against MAP_FAILED before use.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(SlotMap {
            fd,
            ptr: p.cast(),
            len,
            value_size,
            entries,
        })
    }

    /// The fd to put in an `ld_imm64` with BPF_PSEUDO_MAP_FD (valid while `self` lives).
    pub fn raw_fd(&self) -> i32 {
        use std::os::fd::AsRawFd;
        self.fd.as_raw_fd()
    }

    pub fn entries(&self) -> u32 {
        self.entries
    }

    /// Bytes from one value to the next in the mapping.
    pub fn stride(&self) -> usize {
        self.value_size.next_multiple_of(8)
    }

    /// Value `i` (below [`SlotMap::entries`]), to read or write in place.
    ///
    /// # Panics
    /// If `i` is not below the map's entries.
    pub fn value_mut(&mut self, i: u32) -> &mut [u8] {
        assert!(i < self.entries, "slot {i} of {}", self.entries);
        let at = i as usize * self.stride();
        debug_assert!(at + self.value_size <= self.len);
        // SAFETY: [at, at + value_size) lies inside the mapping (i < entries and the
        // mapping holds entries * stride bytes), which lives as long as `self`; the
        // borrow of `self` is exclusive, so no other slice into it exists in this process.
        // A program reads the slot, and writes its send time and checksum back into it,
        // only during a BPF_PROG_RUN: this thread makes that syscall, and it cannot overlap
        // this borrow (the returned slice lives no longer than `&mut self`).
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(at), self.value_size) }
    }
}

impl Drop for SlotMap {
    fn drop(&mut self) {
        // SAFETY: ptr/len are what mmap returned; the slices handed out borrow `self`,
        // so none outlives the mapping.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

const BPF_PROG_TEST_RUN: libc::c_int = 10;
/// `BPF_F_TEST_XDP_LIVE_FRAMES` (Linux 5.18): redirected frames really leave.
const BPF_F_TEST_XDP_LIVE_FRAMES: u32 = 1 << 1;
/// The kernel's largest live-frames batch (`TEST_XDP_MAX_BATCH`).
pub const LIVE_FRAMES_MAX_BATCH: u32 = 256;

/// Runs XDP program `prog` `repeat` times on copies of `frame` with live frames: what the
/// program redirects is transmitted by the target device. `batch_size` frames (1 to
/// [`LIVE_FRAMES_MAX_BATCH`]) are processed between flushes to the driver. Must be called
/// from a thread in the network namespace of the target device.
///
/// EINTR means a signal arrived after an unknown number of frames.
pub fn prog_run_xdp_live(
    prog: &OwnedFd,
    frame: &[u8],
    repeat: u32,
    batch_size: u32,
) -> io::Result<()> {
    prog_run_xdp_live_on(prog, frame, repeat, batch_size, 0)
}

/// [`prog_run_xdp_live`] with the frames arriving on device `ingress_ifindex` (its RX
/// queue 0; 0: the namespace's loopback, the kernel's default): frames the program passes
/// (XDP_PASS) are built into skbs and handed to that device's receive path
/// (`netif_receive_skb_list`), as if it had received them. The device must be in the
/// calling thread's network namespace (ENODEV otherwise).
pub fn prog_run_xdp_live_on(
    prog: &OwnedFd,
    frame: &[u8],
    repeat: u32,
    batch_size: u32,
    ingress_ifindex: u32,
) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    // struct xdp_md: data, data_end, data_meta, ingress_ifindex, rx_queue_index,
    // egress_ifindex (u32 each). The kernel wants data 0 and data_end the frame's length.
    let mut ctx = [0u8; 24];
    ctx[4..8].copy_from_slice(&(frame.len() as u32).to_ne_bytes());
    ctx[12..16].copy_from_slice(&ingress_ifindex.to_ne_bytes());
    let mut a = [0u8; ATTR_LEN];
    put_u32(&mut a, 0, prog.as_raw_fd() as u32);
    put_u32(&mut a, 8, frame.len() as u32); // data_size_in
    put_u64(&mut a, 16, frame.as_ptr() as u64); // data_in (read only)
    put_u32(&mut a, 32, repeat);
    if ingress_ifindex != 0 {
        put_u32(&mut a, 40, ctx.len() as u32); // ctx_size_in
        put_u64(&mut a, 48, ctx.as_ptr() as u64); // ctx_in (read only)
    }
    put_u32(&mut a, 64, BPF_F_TEST_XDP_LIVE_FRAMES);
    put_u32(&mut a, 72, batch_size);
    bpf_int(BPF_PROG_TEST_RUN, &mut a).map(|_| ())
}

/// Runs XDP program `prog` once on a copy of `frame` without sending anything, and
/// copies the resulting frame into `out`. Returns (the program's return code, the
/// resulting frame's length).
pub fn prog_run_xdp_once(prog: &OwnedFd, frame: &[u8], out: &mut [u8]) -> io::Result<(u32, usize)> {
    use std::os::fd::AsRawFd;
    let mut a = [0u8; ATTR_LEN];
    put_u32(&mut a, 0, prog.as_raw_fd() as u32);
    put_u32(&mut a, 8, frame.len() as u32);
    put_u32(&mut a, 12, out.len() as u32); // data_size_out: the kernel copies at most this
    put_u64(&mut a, 16, frame.as_ptr() as u64);
    put_u64(&mut a, 24, out.as_mut_ptr() as u64);
    put_u32(&mut a, 32, 1);
    bpf_int(BPF_PROG_TEST_RUN, &mut a)?;
    Ok((get_u32(&a, 4), get_u32(&a, 12) as usize))
}

/// Attaches a raw tracepoint program to the tracepoint `name` (e.g. `xdp_devmap_xmit`);
/// closing the returned fd detaches it.
pub fn raw_tracepoint_open(name: &std::ffi::CStr, prog: &OwnedFd) -> io::Result<OwnedFd> {
    use std::os::fd::AsRawFd;
    const BPF_RAW_TRACEPOINT_OPEN: libc::c_int = 17;
    let mut a = [0u8; ATTR_LEN];
    put_u64(&mut a, 0, name.as_ptr() as u64);
    put_u32(&mut a, 8, prog.as_raw_fd() as u32);
    bpf(BPF_RAW_TRACEPOINT_OPEN, &mut a)
}

/// A one-entry `BPF_MAP_TYPE_PERCPU_ARRAY` of one u64 per CPU: a counter programs bump
/// without atomics (each CPU has its own slot) and userspace sums.
#[derive(Debug)]
pub struct PerCpuCounter {
    fd: OwnedFd,
    /// Possible CPUs: the kernel copies one 8-byte slot for each on a lookup.
    cpus: usize,
}

impl PerCpuCounter {
    pub fn create(name: &str) -> io::Result<PerCpuCounter> {
        PerCpuCounter::create_n(name, 1)
    }

    /// `entries` counters (keys 0..entries) in one map.
    pub fn create_n(name: &str, entries: u32) -> io::Result<PerCpuCounter> {
        const BPF_MAP_CREATE: libc::c_int = 0;
        const BPF_MAP_TYPE_PERCPU_ARRAY: u32 = 6;
        let cpus = possible_cpus()?;
        let mut a = [0u8; ATTR_LEN];
        put_u32(&mut a, 0, BPF_MAP_TYPE_PERCPU_ARRAY);
        put_u32(&mut a, 4, 4); // key: u32 index
        put_u32(&mut a, 8, 8); // value: u64
        put_u32(&mut a, 12, entries.max(1)); // max_entries
        put_name(&mut a, 28, name);
        let fd = bpf(BPF_MAP_CREATE, &mut a)?;
        Ok(PerCpuCounter { fd, cpus })
    }

    /// The fd to put in an `ld_imm64` with BPF_PSEUDO_MAP_FD (valid while `self` lives).
    pub fn raw_fd(&self) -> i32 {
        use std::os::fd::AsRawFd;
        self.fd.as_raw_fd()
    }

    /// The sum over all CPUs.
    pub fn sum(&self) -> io::Result<u64> {
        self.sum_at(0)
    }

    /// The sum over all CPUs of counter `key` (an index below the map's entries).
    pub fn sum_at(&self, key: u32) -> io::Result<u64> {
        const BPF_MAP_LOOKUP_ELEM: libc::c_int = 1;
        let mut out = vec![0u64; self.cpus];
        let mut a = [0u8; ATTR_LEN];
        put_u32(&mut a, 0, self.raw_fd() as u32);
        put_u64(&mut a, 8, &key as *const u32 as u64);
        put_u64(&mut a, 16, out.as_mut_ptr() as u64);
        // The kernel writes one 8-byte value per possible CPU: `out` holds exactly that.
        bpf_int(BPF_MAP_LOOKUP_ELEM, &mut a)?;
        Ok(out.iter().sum())
    }
}

/// A `BPF_MAP_TYPE_XSKMAP`: index -> AF_XDP socket, the target of `bpf_redirect_map`.
/// Closing the map (dropping this) releases the sockets' references.
#[derive(Debug)]
pub struct XskMap {
    fd: OwnedFd,
    entries: u32,
}

impl XskMap {
    /// Creates a map of `entries` slots (u32 keys), all empty.
    pub fn create(name: &str, entries: u32) -> io::Result<XskMap> {
        const BPF_MAP_CREATE: libc::c_int = 0;
        const BPF_MAP_TYPE_XSKMAP: u32 = 17;
        let mut a = [0u8; ATTR_LEN];
        put_u32(&mut a, 0, BPF_MAP_TYPE_XSKMAP);
        put_u32(&mut a, 4, 4); // key: u32 queue index
        put_u32(&mut a, 8, 4); // value: u32 socket fd
        put_u32(&mut a, 12, entries);
        put_name(&mut a, 28, name);
        let fd = bpf(BPF_MAP_CREATE, &mut a)?;
        Ok(XskMap { fd, entries })
    }

    /// The fd to put in an `ld_imm64` with BPF_PSEUDO_MAP_FD (valid while `self` lives).
    pub fn raw_fd(&self) -> i32 {
        use std::os::fd::AsRawFd;
        self.fd.as_raw_fd()
    }

    pub fn entries(&self) -> u32 {
        self.entries
    }

    /// Puts the AF_XDP socket `sock_fd` at `index`.
    pub fn set(&self, index: u32, sock_fd: i32) -> io::Result<()> {
        const BPF_MAP_UPDATE_ELEM: libc::c_int = 2;
        let (key, value) = (index, sock_fd as u32);
        let mut a = [0u8; ATTR_LEN];
        put_u32(&mut a, 0, self.raw_fd() as u32);
        put_u64(&mut a, 8, &key as *const u32 as u64);
        put_u64(&mut a, 16, &value as *const u32 as u64);
        // The kernel reads a u32 key and a u32 value: both live on this frame.
        bpf_int(BPF_MAP_UPDATE_ELEM, &mut a).map(|_| ())
    }
}

/// Number of possible CPUs (the highest index in /sys/devices/system/cpu/possible, plus 1).
fn possible_cpus() -> io::Result<usize> {
    let s = std::fs::read_to_string("/sys/devices/system/cpu/possible")?;
    parse_cpu_list_max(&s)
        .map(|m| m + 1)
        .ok_or_else(|| io::Error::other(format!("cannot parse possible CPUs '{}'", s.trim())))
}

/// Highest CPU number in a list like `0-3,8-11`.
fn parse_cpu_list_max(s: &str) -> Option<usize> {
    s.trim()
        .split(',')
        .filter_map(|r| r.rsplit('-').next()?.trim().parse::<usize>().ok())
        .max()
}

#[cfg(test)]
mod percpu_tests {
    use super::parse_cpu_list_max;

    #[test]
    fn possible_cpu_lists() {
        assert_eq!(parse_cpu_list_max("0-1\n"), Some(1));
        assert_eq!(parse_cpu_list_max("0"), Some(0));
        assert_eq!(parse_cpu_list_max("0-3,8-11"), Some(11));
        assert_eq!(parse_cpu_list_max(""), None);
    }
}
