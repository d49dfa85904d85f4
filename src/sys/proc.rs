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
