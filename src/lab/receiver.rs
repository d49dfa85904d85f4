//! The receiver inside the lab's receiving namespace, for `upktgen run --rx-analyze`.
//!
//! [`LabReceiver::start`] opens the ring on veth-rx from a thread that joined the receiving
//! namespace and returns once the socket is bound (so no frame of the run is missed); the
//! thread then receives until [`LabReceiver::finish`] (after the sender is done) sees the
//! frame count settle, or until the handle is dropped (error paths).

use super::RX_IF;
use crate::rx::{
    DEFAULT_XSK_FRAMES, FlowKeyMode, Receiver, RxBackend, RxConfig, RxProgress, RxReport, RxStop,
};
use crate::sys::{self, netns, rx_ring::RxRingConfig};
use anyhow::{Context, Result, anyhow};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The receiver's settings in the lab: upktgen's sender starts at sequence number 1. The
/// backend is af_packet here; `upktgen run --rx-analyze` sets the one --rx-backend asks for.
pub fn config(hist: bool) -> RxConfig {
    RxConfig {
        backend: RxBackend::AfPacket,
        xsk_frames: DEFAULT_XSK_FRAMES,
        zerocopy: None,
        ring: RxRingConfig::default(),
        flow_key: FlowKeyMode::Addr,
        expect_first: Some(1),
        count: 0,
        duration: None,
        hist,
    }
}

/// A receiver running on veth-rx.
pub struct LabReceiver {
    stop: Arc<AtomicBool>,
    progress: Arc<RxProgress>,
    thread: Option<JoinHandle<Result<RxReport>>>,
}

impl LabReceiver {
    /// Starts receiving on veth-rx in the namespace at `rx_ns`.
    pub fn start(rx_ns: &Path, cfg: RxConfig) -> Result<LabReceiver> {
        let stop = Arc::new(AtomicBool::new(false));
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Result<Arc<RxProgress>>>();
        let path = rx_ns.to_path_buf();
        let stop2 = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("upktgen-rx".into())
            .spawn(move || -> Result<RxReport> {
                let opened = netns::setns_net(&path)
                    .with_context(|| format!("entering network namespace {}", path.display()))
                    .and_then(|_| {
                        let idx = sys::if_nametoindex(RX_IF)?;
                        Receiver::open(idx, RX_IF, cfg).map_err(anyhow::Error::from)
                    })
                    .context("setting up the receiver on veth-rx");
                let mut rx = match opened {
                    Ok(rx) => {
                        if let Some(c) = &rx.choice {
                            crate::errln!("upktgen: {c}");
                        }
                        let _ = ready_tx.send(Ok(rx.progress()));
                        rx
                    }
                    Err(e) => {
                        let msg = format!("{e:#}");
                        let _ = ready_tx.send(Err(e));
                        return Err(anyhow!(msg));
                    }
                };
                rx.run(&stop2)?;
                Ok(rx.report(RX_IF, RxStop::SenderDone)?)
            })
            .context("starting the receiver thread")?;
        let progress = ready_rx
            .recv()
            .map_err(|_| anyhow!("the receiver thread ended before it was ready"))??;
        Ok(LabReceiver {
            stop,
            progress,
            thread: Some(thread),
        })
    }

    /// Frames received so far.
    pub fn frames(&self) -> u64 {
        self.progress.frames.load(Ordering::Relaxed)
    }

    /// Running totals (frames, sequence holes) for live statistics.
    pub fn progress(&self) -> Arc<RxProgress> {
        Arc::clone(&self.progress)
    }

    /// After the sender is done: waits until `expected` frames are in or the count has not
    /// moved for 250 ms (at most 3 s), then stops the receiver, which drains what is left in
    /// its ring, and returns its report.
    pub fn finish(mut self, expected: u64) -> Result<RxReport> {
        let t0 = Instant::now();
        let mut last = (self.frames(), Instant::now());
        while t0.elapsed() < Duration::from_secs(3) {
            std::thread::sleep(Duration::from_millis(5));
            let n = self.frames();
            if n >= expected {
                break;
            }
            if n != last.0 {
                last = (n, Instant::now());
            } else if last.1.elapsed() >= Duration::from_millis(250) {
                break;
            }
        }
        self.stop.store(true, Ordering::Relaxed);
        self.thread
            .take()
            .context("receiver already finished")?
            .join()
            .map_err(|_| anyhow!("the receiver thread panicked"))?
    }
}

impl Drop for LabReceiver {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
