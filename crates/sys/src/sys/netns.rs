//! Entering network namespaces.
//!
//! A network namespace is a property of each thread. [`in_netns`] runs a closure on a new
//! thread that has joined the namespace, so the caller's own namespace never changes;
//! sockets and files opened there stay bound to that namespace after the thread ends.

use super::cvt;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;

/// Joins the network namespace at `path` (e.g. `/run/netns/NAME`) on the calling thread.
pub fn setns_net(path: &Path) -> io::Result<()> {
    let f = File::open(path)?;
    // SAFETY: `f` is an open namespace file; setns only changes the calling thread's
    // namespace membership and leaves memory untouched.
    cvt(unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) }).map(|_| ())
}

/// Runs `f` on a fresh thread inside the network namespace at `path`, and returns its
/// result. The caller's thread is not affected.
pub fn in_netns<T, F>(path: &Path, f: F) -> io::Result<T>
where
    T: Send + 'static,
    F: FnOnce() -> io::Result<T> + Send + 'static,
{
    let path = path.to_path_buf();
    std::thread::Builder::new()
        .name("upktgen-netns".into())
        .spawn(move || {
            setns_net(&path).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("cannot enter network namespace {}: {e}", path.display()),
                )
            })?;
            f()
        })?
        .join()
        .map_err(|_| io::Error::other("a thread inside a network namespace panicked"))?
}

/// Runs `f` on a fresh thread inside a new, empty network namespace (only a loopback
/// device, down), and returns its result with a handle that keeps the namespace alive:
/// closing the handle (and whatever `f` opened there) removes the namespace.
pub fn in_new_netns<T, F>(f: F) -> io::Result<(File, T)>
where
    T: Send + 'static,
    F: FnOnce() -> io::Result<T> + Send + 'static,
{
    std::thread::Builder::new()
        .name("upktgen-netns".into())
        .spawn(move || {
            // SAFETY: unshare only changes the calling thread's namespace membership (this
            // thread is ours and ends right after `f`); no memory is touched.
            cvt(unsafe { libc::unshare(libc::CLONE_NEWNET) })?;
            let ns = File::open("/proc/thread-self/ns/net")?;
            Ok((ns, f()?))
        })?
        .join()
        .map_err(|_| io::Error::other("a thread inside a new network namespace panicked"))?
}
