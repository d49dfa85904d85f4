//! The only place with `unsafe`: thin, checked wrappers over the syscalls upktgen needs.
//!
//! Every wrapper turns a failing call into an [`std::io::Error`] (errno); callers add the
//! context a person can act on. Each `unsafe` block states the invariant it relies on.

/// The longest interface name the kernel takes: IFNAMSIZ less the terminating NUL.
pub const MAX_IFNAME: usize = libc::IFNAMSIZ - 1;

pub mod bpf;
pub mod clock;
pub mod ethtool;
pub mod netns;
pub mod packet;
pub mod proc;
pub mod rx_ring;
pub mod stdio;
pub mod tap;
pub mod xsk;
pub mod xsk_rx;

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

/// Converts a libc return value (-1 = error) into a Result.
fn cvt(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// A socket option's value that the kernel may fill with any bytes: an integer, or a C
/// struct of integers without padding, for which every bit pattern is a valid value.
///
/// # Safety
/// Implement only for such types: [`getsockopt`] lets the kernel write `size_of::<Self>()`
/// arbitrary bytes into a value of it. Being an `unsafe` trait, it can be implemented only
/// where `unsafe` is allowed (this module).
pub unsafe trait PlainOpt: Copy {}

// SAFETY: integers; every bit pattern is a valid value.
unsafe impl PlainOpt for libc::c_int {}
// SAFETY: three u32 counters (tp_packets, tp_drops, tp_freeze_q_cnt), no padding.
unsafe impl PlainOpt for libc::tpacket_stats_v3 {}
// SAFETY: six u64 counters, no padding.
unsafe impl PlainOpt for libc::xdp_statistics {}
// SAFETY: one u32 of flags.
unsafe impl PlainOpt for libc::xdp_options {}

/// `getsockopt` into a `T` that starts as `init` (the kernel may fill fewer bytes).
pub fn getsockopt<T: PlainOpt>(
    fd: BorrowedFd<'_>,
    level: libc::c_int,
    name: libc::c_int,
    init: T,
) -> io::Result<T> {
    let mut v = init;
    let mut len = std::mem::size_of::<T>() as libc::socklen_t;
    // SAFETY: `v` is a valid, initialised out-buffer of `len` bytes, and T is integer-only
    // (the PlainOpt contract), so whatever the kernel writes into it is a valid T.
    cvt(unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (&mut v as *mut T).cast(),
            &mut len,
        )
    })?;
    Ok(v)
}

/// Interface index of `name` in the calling thread's network namespace.
pub fn if_nametoindex(name: &str) -> io::Result<u32> {
    let c = std::ffi::CString::new(name)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "interface name contains NUL"))?;
    // SAFETY: `c` is a valid NUL-terminated string that outlives the call.
    let idx = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if idx == 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(idx)
    }
}

/// What a poll() or ppoll() returned: true when some descriptor is ready, false on a timeout
/// or a signal (EINTR: the caller looks at its flags and polls again), the error otherwise.
fn polled(n: libc::c_int) -> io::Result<bool> {
    if n < 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::Interrupted {
            Ok(false)
        } else {
            Err(e)
        };
    }
    Ok(n > 0)
}

/// Waits up to `timeout_ms` for `events` on `fd`; returns the revents (0 on timeout).
pub fn poll_one(
    fd: BorrowedFd<'_>,
    events: libc::c_short,
    timeout_ms: i32,
) -> io::Result<libc::c_short> {
    let mut p = libc::pollfd {
        fd: fd.as_raw_fd(),
        events,
        revents: 0,
    };
    // SAFETY: `p` is one valid, initialised pollfd on our stack; nfds = 1 matches.
    let n = unsafe { libc::poll(&mut p, 1, timeout_ms) };
    match n {
        n if n < 0 => {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                Ok(0)
            } else {
                Err(e)
            }
        }
        0 => Ok(0),
        _ => Ok(p.revents),
    }
}

/// Sleeps until the CLOCK_MONOTONIC instant `deadline_ns` (absolute), resuming after signals
/// only when `keep_going` says so.
pub fn sleep_until_monotonic_ns(deadline_ns: u64) {
    let ts = libc::timespec {
        tv_sec: (deadline_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (deadline_ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: `ts` is a valid timespec; the remaining-time pointer may be null with
    // TIMER_ABSTIME. An EINTR return simply ends the sleep early; the caller re-checks.
    unsafe {
        libc::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &ts,
            std::ptr::null_mut(),
        );
    }
}

/// Sleeps until the CLOCK_REALTIME instant `deadline_ns` (absolute, ns since the epoch).
/// Returns early on a signal (EINTR) and when the clock is set (the caller re-checks the
/// time, and the stop flag, and calls again).
pub fn sleep_until_realtime_ns(deadline_ns: u64) -> io::Result<()> {
    let ts = libc::timespec {
        tv_sec: (deadline_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (deadline_ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: `ts` is a valid, initialised timespec that outlives the call; with
    // TIMER_ABSTIME the remaining-time pointer is unused and may be null.
    let r = unsafe {
        libc::clock_nanosleep(
            libc::CLOCK_REALTIME,
            libc::TIMER_ABSTIME,
            &ts,
            std::ptr::null_mut(),
        )
    };
    // clock_nanosleep returns the error number itself (it does not set errno).
    match r {
        0 | libc::EINTR => Ok(()),
        e => Err(io::Error::from_raw_os_error(e)),
    }
}

/// CLOCK_MONOTONIC in nanoseconds (the same clock as `std::time::Instant` on Linux).
pub fn monotonic_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// CLOCK_REALTIME in nanoseconds since the epoch (the clock of pktgen's timestamps).
pub fn realtime_ns() -> u64 {
    clock_ns(libc::CLOCK_REALTIME)
}

fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-pointer; both clocks exist on every Linux, so the call
    // cannot fail with valid arguments.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Pins the calling thread to one CPU.
pub fn pin_to_cpu(cpu: usize) -> io::Result<()> {
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "CPU number out of range",
        ));
    }
    // SAFETY: cpu_set_t is plain old data; all-zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `cpu` is below CPU_SETSIZE (checked above), so CPU_SET stays in bounds; pid 0
    // means the calling thread and the size passed is the set's size.
    cvt(unsafe {
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    })
    .map(|_| ())
}

/// The CPUs the calling thread may run on (its affinity mask), in order; never empty.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain old data; all-zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: pid 0 is the calling thread; the size passed is the set's size, so the kernel
    // writes inside `set`.
    let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    let cpus: Vec<usize> = if r == 0 {
        (0..libc::CPU_SETSIZE as usize)
            // SAFETY: i < CPU_SETSIZE keeps CPU_ISSET inside the set.
            .filter(|&i| unsafe { libc::CPU_ISSET(i, &set) })
            .collect()
    } else {
        Vec::new()
    };
    if cpus.is_empty() { vec![0] } else { cpus }
}

/// Sets the calling thread's timer slack (PR_SET_TIMERSLACK): how late the kernel may wake
/// a sleep to batch timers (50 us by default). The pacer asks for 1 ns.
pub fn set_timer_slack_ns(ns: u64) -> io::Result<()> {
    // SAFETY: PR_SET_TIMERSLACK takes one unsigned long by value and touches no memory.
    cvt(unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0) }).map(|_| ())
}

/// Runs the calling thread under SCHED_FIFO at `priority` (1 to 99): it then runs as soon
/// as it is woken, ahead of every ordinary thread (the kernel's RT throttling still keeps
/// 5 % of each CPU for the others). Needs CAP_SYS_NICE.
pub fn set_fifo_priority(priority: i32) -> io::Result<()> {
    let p = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: pid 0 is the calling thread; `p` is a valid sched_param read by the kernel.
    cvt(unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) }).map(|_| ())
}

/// Sets a socket's receive buffer to `bytes` (SO_RCVBUFFORCE: beyond net.core.rmem_max,
/// which needs CAP_NET_ADMIN; the kernel doubles the value for its bookkeeping).
pub fn set_rcvbuf_force(sock: BorrowedFd<'_>, bytes: u32) -> io::Result<()> {
    let v = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
    // SAFETY: `sock` is an open descriptor for the call's duration; the option value is
    // one c_int read by the kernel from `v`, which lives across the call, with its size.
    cvt(unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUFFORCE,
            (&v as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    })
    .map(|_| ())
}

/// The calling thread's id (for /proc/thread-self style paths and diagnostics).
pub fn gettid() -> i32 {
    // SAFETY: gettid has no arguments and cannot fail.
    unsafe { libc::gettid() }
}

/// The size of a memory page in bytes (4096 where the system does not say).
pub fn page_size() -> usize {
    // SAFETY: sysconf takes a constant and only returns a value (-1 when unknown).
    let v = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(v).ok().filter(|&v| v > 0).unwrap_or(4096)
}
