//! Signals to processes upktgen started itself.

use std::io;

/// Sends `sig` (e.g. `libc::SIGTERM`) to the process `pid`. Only for children this
/// process spawned and has not yet reaped (so the pid cannot have been reused).
pub fn send_signal(pid: u32, sig: libc::c_int) -> io::Result<()> {
    let pid = libc::pid_t::try_from(pid)
        .ok()
        .filter(|&p| p > 0)
        .ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: kill(2) takes plain integers and touches no memory of ours; pid > 0 addresses
    // exactly one process (never a group or every process).
    super::cvt(unsafe { libc::kill(pid, sig) })?;
    Ok(())
}

/// True when our child `pid` has exited, without reaping it: the zombie keeps its pid and
/// its process group's id taken, so that [`signal_group`] can still reach what it left
/// behind in its group, and nothing else. `Child::wait` reaps it afterwards.
pub fn exited_unreaped(pid: u32) -> io::Result<bool> {
    let pid = libc::id_t::try_from(pid)
        .ok()
        .filter(|&p| p > 0)
        .ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: `info` is a zeroed siginfo_t owned by this frame, which waitid(2) fills;
    // WNOWAIT leaves the child waitable, so std's Child still reaps it (exactly once).
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    super::cvt(unsafe {
        libc::waitid(
            libc::P_PID,
            pid,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    })?;
    // SAFETY: si_pid is valid in what waitid filled (0 when no child has changed state).
    Ok(unsafe { info.si_pid() } != 0)
}

/// Sends `sig` to every process of the process group `pgid`. Only for a group a child of
/// ours leads (spawned with `process_group(0)`) while that child is not yet reaped (alive,
/// or a zombie: see [`exited_unreaped`]), so that the id cannot be another group's.
pub fn signal_group(pgid: u32, sig: libc::c_int) -> io::Result<()> {
    let pgid = libc::pid_t::try_from(pgid)
        .ok()
        .filter(|&p| p > 1)
        .ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: kill(2) takes plain integers and touches no memory of ours; -pgid (pgid > 1)
    // addresses exactly that group (never every process, never our own group by accident:
    // the caller's child leads it).
    match super::cvt(unsafe { libc::kill(-pgid, sig) }) {
        // Nobody is left in the group: nothing to do.
        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => Ok(()),
        r => r.map(|_| ()),
    }
}

/// A process held by a pidfd: a signal sent through it reaches that process or none,
/// never one that reused its pid.
pub struct Pidfd(std::os::fd::OwnedFd);

impl Pidfd {
    /// pidfd_open(2) (Linux 5.3+).
    pub fn open(pid: u32) -> io::Result<Pidfd> {
        let pid = libc::pid_t::try_from(pid)
            .ok()
            .filter(|&p| p > 0)
            .ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
        // SAFETY: pidfd_open takes a pid and flags (0) and returns a new descriptor or -1;
        // it touches no memory of ours.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let fd =
            libc::c_int::try_from(fd).map_err(|_| io::Error::from(io::ErrorKind::InvalidData))?;
        use std::os::fd::FromRawFd;
        // SAFETY: `fd` was just returned by the kernel, is open, and nothing else owns it.
        Ok(Pidfd(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) }))
    }

    /// pidfd_send_signal(2).
    pub fn send_signal(&self, sig: libc::c_int) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        // SAFETY: the descriptor is ours and open; a null siginfo and flags 0 are valid
        // arguments (the kernel fills in the siginfo itself); no memory of ours is written.
        let r = unsafe {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                self.0.as_raw_fd(),
                sig,
                std::ptr::null::<libc::siginfo_t>(),
                0,
            )
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

/// Makes the process `cmd` starts receive `sig` when this process's thread that spawns it
/// ends (PR_SET_PDEATHSIG): a child upktgen runs never outlives it, even killed with
/// SIGKILL. The child checks its parent after setting it, so a parent that died during the
/// fork is seen too (the child then does not start). Spawn from a thread that lives as
/// long as the child should (the signal follows the spawning thread, not the process).
pub fn die_with_parent(cmd: &mut std::process::Command, sig: libc::c_int) {
    use std::os::unix::process::CommandExt;
    let parent = std::process::id();
    let hook = move || -> io::Result<()> {
        // SAFETY: prctl(PR_SET_PDEATHSIG, sig) and getppid are plain syscalls, safe to call
        // between fork and exec (async-signal-safe: no allocation, no lock); they touch no
        // memory of ours.
        super::cvt(unsafe {
            libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::c_ulong::try_from(sig).unwrap_or(0),
            )
        })?;
        // SAFETY: as above.
        let ppid = unsafe { libc::getppid() };
        if u32::try_from(ppid).ok() != Some(parent) {
            return Err(io::Error::from_raw_os_error(libc::ESRCH));
        }
        Ok(())
    };
    // SAFETY: the hook runs in the forked child before exec and only makes the two
    // async-signal-safe syscalls above (no allocation: io::Error from a raw errno and
    // `cvt`'s last_os_error allocate nothing).
    unsafe {
        cmd.pre_exec(hook);
    }
}
