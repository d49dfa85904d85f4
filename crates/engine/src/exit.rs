//! How a command ended, and the flag that Ctrl-C sets: shared by every command, below all
//! of them (it imports nothing of the crate).

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// How a run ended, for the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Done,
    Interrupted,
}

/// The signal handlers could not be installed.
#[derive(Debug, thiserror::Error)]
#[error("installing signal handlers (SIGINT, SIGTERM, SIGHUP): {0}")]
pub struct SignalError(std::io::Error);

/// Flag set by SIGINT/SIGTERM/SIGHUP; installed once per process.
pub fn stop_flag() -> Result<Arc<AtomicBool>, SignalError> {
    let flag = Arc::new(AtomicBool::new(false));
    for sig in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        signal_hook::flag::register(sig, Arc::clone(&flag)).map_err(SignalError)?;
    }
    Ok(flag)
}
