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
