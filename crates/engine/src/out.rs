//! The one output path. Every report, table and listing goes to standard output through
//! [`print`] / [`println`], which return the write's error instead of panicking as `print!`
//! does; every live line (notes, progress, warnings) goes to standard error through
//! [`errln!`](crate::errln).
//!
//! - A broken pipe (EPIPE: `upktgen sim ... | head -1`) ends the command quietly: the error
//!   travels up as an [`OutputError`] like any other, so every guard drops on the way (the
//!   lab's namespaces are removed), and the process exits with [`EXIT_BROKEN_PIPE`], 141, the
//!   status a shell shows for a program killed by SIGPIPE (`yes | head -1`), so that
//!   `set -o pipefail` sees upktgen as it sees any other tool, and nothing is printed.
//! - Any other write error (ENOSPC from `> /dev/full`, standard output closed with `>&-`) is
//!   one line on standard error and a non-zero exit.
//! - Every call flushes, so no report waits in a buffer whose error would go unseen at exit.
//! - Standard error is best effort: a line that cannot be written (closed pipe, full disk)
//!   is dropped, for there is nowhere left to report it; the exit status still tells.

use std::fmt::{self, Display};
use std::io::{self, Write};
use std::process::ExitCode;

/// Exit status after standard output's reader went away (128 + SIGPIPE).
pub const EXIT_BROKEN_PIPE: u8 = 141;

/// Standard output could not be written.
#[derive(Debug)]
pub struct OutputError(io::Error);

impl OutputError {
    /// The reader went away (EPIPE): the command ends quietly.
    pub fn is_broken_pipe(&self) -> bool {
        self.0.kind() == io::ErrorKind::BrokenPipe
    }
}

impl Display for OutputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.raw_os_error() == Some(libc::EBADF) {
            write!(
                f,
                "standard output is closed, so the output would be lost (redirect it to /dev/null to discard it)"
            )
        } else {
            write!(f, "writing to standard output: {}", self.0)
        }
    }
}

impl std::error::Error for OutputError {}

/// Writes `text` to standard output and flushes it.
pub fn print(text: impl Display) -> Result<(), OutputError> {
    if crate::sys::stdio::stdout_closed_at_start() {
        // The runtime put /dev/null on descriptor 1: writing would succeed and lose it all.
        return Err(OutputError(io::Error::from_raw_os_error(libc::EBADF)));
    }
    let mut out = io::stdout().lock();
    write!(out, "{text}")
        .and_then(|()| out.flush())
        .map_err(OutputError)
}

/// [`print`] and a newline.
pub fn println(text: impl Display) -> Result<(), OutputError> {
    print(format_args!("{text}\n"))
}

/// Writes one line to standard error, best effort (see the module's notes).
pub fn stderr_line(text: fmt::Arguments<'_>) {
    stderr(format_args!("{text}\n"));
}

/// Writes `text` to standard error without a newline, best effort.
pub fn stderr(text: fmt::Arguments<'_>) {
    let mut err = io::stderr().lock();
    let _ = err.write_fmt(text).and_then(|()| err.flush());
}

/// `e` and the errors that caused it, outermost first (an `anyhow::Error` at the edge
/// passes its chain of context as `&*e`).
fn chain<'a>(
    e: &'a (dyn std::error::Error + 'static),
) -> impl Iterator<Item = &'a (dyn std::error::Error + 'static)> {
    std::iter::successors(Some(e), |c| c.source())
}

/// Whether `e` is (or was caused by) a broken pipe on standard output.
pub fn is_broken_pipe(e: &(dyn std::error::Error + 'static)) -> bool {
    chain(e).any(|c| {
        c.downcast_ref::<OutputError>()
            .is_some_and(OutputError::is_broken_pipe)
    })
}

/// `e` in one line: each error of its chain, `: ` between them (as anyhow's `{:#}`).
fn one_line(e: &(dyn std::error::Error + 'static)) -> String {
    chain(e)
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(": ")
}

/// How a command that failed with `e` ends: quietly with [`EXIT_BROKEN_PIPE`] when standard
/// output's reader went away, else one line `upktgen: ...` on standard error and `code`.
pub fn fail(e: &(dyn std::error::Error + 'static), code: u8) -> ExitCode {
    if is_broken_pipe(e) {
        return ExitCode::from(EXIT_BROKEN_PIPE);
    }
    stderr_line(format_args!("upktgen: {}", one_line(e)));
    ExitCode::from(code)
}

/// `eprintln!` that cannot panic: one line on standard error, dropped if it cannot be
/// written.
#[macro_export]
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::out::stderr_line(format_args!($($arg)*))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error with a cause, as context around an error makes one.
    #[derive(Debug, thiserror::Error)]
    #[error("printing the report")]
    struct Printing(#[source] OutputError);

    #[test]
    fn broken_pipe_is_found_under_context() {
        let e = Printing(OutputError(io::Error::from(io::ErrorKind::BrokenPipe)));
        assert!(is_broken_pipe(&e));
        let full = OutputError(io::Error::from_raw_os_error(libc::ENOSPC));
        assert!(!is_broken_pipe(&full));
        assert!(
            full.to_string().contains("No space left on device"),
            "{full}"
        );
        let under = Printing(OutputError(io::Error::from_raw_os_error(libc::ENOSPC)));
        assert!(!is_broken_pipe(&under));
        assert_eq!(
            one_line(&under),
            "printing the report: writing to standard output: No space left on device (os error 28)"
        );
    }

    #[test]
    fn closed_stdout_is_named() {
        let e = OutputError(io::Error::from_raw_os_error(libc::EBADF));
        assert!(
            e.to_string().starts_with("standard output is closed"),
            "{e}"
        );
    }
}
