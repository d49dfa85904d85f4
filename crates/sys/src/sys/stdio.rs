//! Whether standard output was open when the process started.
//!
//! Rust's runtime opens /dev/null on a closed descriptor 0, 1 or 2 before `main` (so that no
//! file opened later takes their place), and its `Stdout` also ignores EBADF: with `>&-` a
//! report would vanish and the run would exit 0. A constructor in `.init_array` runs
//! before the runtime's check and records whether descriptor 1 was open, so that
//! [`crate::out`] can refuse to report into the void.

use std::sync::atomic::{AtomicBool, Ordering};

static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

extern "C" fn probe_stdout() {
    // SAFETY: fcntl(F_GETFD) only reads the descriptor's flags; it touches no memory of ours
    // and fails with EBADF when descriptor 1 is not open.
    let closed = unsafe { libc::fcntl(1, libc::F_GETFD) } == -1;
    STDOUT_CLOSED.store(closed, Ordering::Relaxed);
}

/// Run by the C runtime (glibc and musl call every `.init_array` entry before `main`).
#[used]
// SAFETY: `.init_array` holds pointers to functions the C runtime calls once before `main`
// with (argc, argv, envp); `probe_stdout` takes no arguments (extra ones are ignored under
// the C calling convention), does not unwind, and uses nothing Rust's runtime sets up.
#[unsafe(link_section = ".init_array")]
static PROBE_STDOUT: extern "C" fn() = probe_stdout;

/// True when descriptor 1 was closed when the process started (`>&-`).
pub fn stdout_closed_at_start() -> bool {
    STDOUT_CLOSED.load(Ordering::Relaxed)
}
