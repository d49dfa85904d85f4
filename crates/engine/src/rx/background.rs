//! A receiver on its own thread: started (optionally inside another network namespace),
//! ready once its socket is bound, stopped when the traffic has settled. The lab's receiver
//! (`run --rx-analyze`) and the agent's `rx.start` are both this.

use super::recv::{Receiver, RxConfig, RxProgress};
use super::report::{RxReport, RxStop};
use crate::sys::{self, netns};
use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// When to stop after the sender is done: once `expected` frames are in, or the count has
/// not moved for `settle`, and after `max_wait` at the latest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settle {
    pub expected: u64,
    pub settle: Duration,
    pub max_wait: Duration,
}

impl Settle {
    /// The lab's: 250 ms without a frame, 3 s at most.
    pub fn expecting(expected: u64) -> Self {
        Settle {
            expected,
            settle: Duration::from_millis(250),
            max_wait: Duration::from_secs(3),
        }
    }
}

/// Why the background receiver did not start, or did not finish: the message names the
/// interface or namespace and what failed.
#[derive(Debug, thiserror::Error)]
pub enum RxThreadError {
    #[error("entering network namespace {}: {err}", .path.display())]
    Netns { path: PathBuf, err: io::Error },
    #[error("{0}: no such interface")]
    NoDevice(String),
    #[error("{dev}: {err}")]
    Device { dev: String, err: io::Error },
    #[error("{dev}: cannot set up the receiver: {err}")]
    Open { dev: String, err: io::Error },
    /// Receiving or building the report failed (the error names what).
    #[error(transparent)]
    Receive(#[from] io::Error),
    #[error("starting the receiver thread: {0}")]
    Spawn(io::Error),
    #[error("the receiver thread ended before it was ready")]
    EndedEarly,
    #[error("receiver already finished")]
    Finished,
    #[error("the receiver thread panicked")]
    Panicked,
}

type Result<T, E = RxThreadError> = std::result::Result<T, E>;

/// What the thread was started on and what it chose.
#[derive(Debug, Clone)]
pub struct Started {
    /// af_xdp or af_packet.
    pub backend: &'static str,
    /// With `auto`: which backend was taken and why.
    pub choice: Option<String>,
}

/// A receiver running on its own thread.
pub struct RxThread {
    stop: Arc<AtomicBool>,
    progress: Arc<RxProgress>,
    done: Arc<AtomicBool>,
    started: Started,
    thread: Option<JoinHandle<Result<RxReport>>>,
}

impl RxThread {
    /// Opens a receiver on `dev`, from a thread that first joins the network namespace at
    /// `netns` if one is given, and returns once the socket is bound (no frame sent after
    /// this returns is missed).
    pub fn start(netns: Option<PathBuf>, dev: &str, cfg: RxConfig) -> Result<RxThread> {
        let stop = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicBool::new(false));
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Result<(Arc<RxProgress>, Started)>>();
        let (stop2, done2, dev2) = (Arc::clone(&stop), Arc::clone(&done), dev.to_string());
        let thread = std::thread::Builder::new()
            .name("upktgen-rx".into())
            .spawn(move || -> Result<RxReport> {
                let opened = (|| -> Result<Receiver> {
                    if let Some(path) = &netns {
                        netns::setns_net(path).map_err(|err| RxThreadError::Netns {
                            path: path.clone(),
                            err,
                        })?;
                    }
                    let idx =
                        sys::if_nametoindex(&dev2).map_err(|err| match err.raw_os_error() {
                            Some(libc::ENODEV) | Some(libc::ENXIO) => {
                                RxThreadError::NoDevice(dev2.clone())
                            }
                            _ => RxThreadError::Device {
                                dev: dev2.clone(),
                                err,
                            },
                        })?;
                    Receiver::open(idx, &dev2, cfg).map_err(|err| RxThreadError::Open {
                        dev: dev2.clone(),
                        err,
                    })
                })();
                let mut rx = match opened {
                    Ok(rx) => rx,
                    Err(e) => {
                        // start() answers with the error; nobody joins this thread then.
                        let _ = ready_tx.send(Err(e));
                        done2.store(true, Ordering::Relaxed);
                        return Err(RxThreadError::EndedEarly);
                    }
                };
                let started = Started {
                    backend: rx.kind().name(),
                    choice: rx.choice.clone(),
                };
                let _ = ready_tx.send(Ok((rx.progress(), started)));
                let r = rx.run(&stop2).map_err(RxThreadError::from).and_then(|why| {
                    let why = if stop2.load(Ordering::Relaxed) {
                        RxStop::SenderDone
                    } else {
                        why
                    };
                    Ok(rx.report(&dev2, why)?)
                });
                done2.store(true, Ordering::Relaxed);
                r
            })
            .map_err(RxThreadError::Spawn)?;
        let (progress, started) = ready_rx.recv().map_err(|_| RxThreadError::EndedEarly)??;
        Ok(RxThread {
            stop,
            progress,
            done,
            started,
            thread: Some(thread),
        })
    }

    pub fn started(&self) -> &Started {
        &self.started
    }

    /// Frames received so far.
    pub fn frames(&self) -> u64 {
        self.progress.frames.load(Ordering::Relaxed)
    }

    /// Running totals (frames, bytes, sequence holes, socket drops).
    pub fn progress(&self) -> Arc<RxProgress> {
        Arc::clone(&self.progress)
    }

    /// False once the receiver has ended by itself (its count or duration, or an error).
    pub fn running(&self) -> bool {
        !self.done.load(Ordering::Relaxed)
    }

    /// Waits for the traffic to settle as `s` says, then stops the receiver, which drains
    /// what is left in its ring, and returns its report.
    pub fn finish(self, s: Settle) -> Result<RxReport> {
        self.finish_unless(s, &AtomicBool::new(false))
    }

    /// [`Self::finish`], the wait cut short when `cut` is set (a signal): the receiver then
    /// stops at once and reports what it has.
    pub fn finish_unless(mut self, s: Settle, cut: &AtomicBool) -> Result<RxReport> {
        let t0 = Instant::now();
        let mut last = (self.frames(), Instant::now());
        while t0.elapsed() < s.max_wait && self.running() && !cut.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(5));
            let n = self.frames();
            if s.expected > 0 && n >= s.expected {
                break;
            }
            if n != last.0 {
                last = (n, Instant::now());
            } else if last.1.elapsed() >= s.settle {
                break;
            }
        }
        self.stop.store(true, Ordering::Relaxed);
        self.thread
            .take()
            .ok_or(RxThreadError::Finished)?
            .join()
            .map_err(|_| RxThreadError::Panicked)?
    }
}

impl Drop for RxThread {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
