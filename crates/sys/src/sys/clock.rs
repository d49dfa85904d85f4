//! The kernel's view of the system clock's synchronisation (adjtimex).

use serde::{Deserialize, Serialize};
use std::io;

/// What `adjtimex(2)` says of CLOCK_REALTIME.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockSync {
    /// The kernel's clock state is not TIME_ERROR and STA_UNSYNC is clear: a time daemon
    /// (chrony, ntpd, systemd-timesyncd, ptp4l) is disciplining the clock.
    pub synchronised: bool,
    /// The daemon's maximum error estimate, microseconds.
    pub maxerror_us: i64,
    /// The daemon's estimated error, microseconds.
    pub esterror_us: i64,
}

/// Reads the clock's synchronisation status without changing anything (modes = 0).
pub fn clock_sync() -> io::Result<ClockSync> {
    // SAFETY: timex is plain old data; all-zero is valid and means "modes = 0": the call
    // only reads the kernel's state into the struct.
    let mut t: libc::timex = unsafe { std::mem::zeroed() };
    // SAFETY: `t` is a valid, writable timex; with modes 0 adjtimex needs no privilege and
    // writes only inside it.
    let state = unsafe { libc::adjtimex(&mut t) };
    if state < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(ClockSync {
        synchronised: state != libc::TIME_ERROR && t.status & libc::STA_UNSYNC == 0,
        maxerror_us: t.maxerror,
        esterror_us: t.esterror,
    })
}
