//! Capturing on a port's interface: a TPACKET_V3 ring bound with ETH_P_ALL (a tap: every
//! frame the interface receives, before the ingress hooks; the frames it sends are left out,
//! PACKET_IGNORE_OUTGOING), read on a thread of its own into the port's [`Buffer`]. For a
//! `netns:NAME/IFACE` port the thread joins the namespace before it opens the socket. Needs
//! CAP_NET_RAW (and CAP_SYS_ADMIN to join a namespace).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use anyhow::{Context as _, bail};

use super::Buffer;
use crate::otg::Location;
use crate::sys::rx_ring::{RxRing, RxRingConfig};

/// Starts captures.
pub trait Capturer: Send + Sync + 'static {
    /// Starts filling `buf` with the frames the interface at `loc` receives; returns once
    /// the capture is ready (the first frame after this is kept).
    fn start(&self, loc: &Location, buf: Arc<Mutex<Buffer>>) -> anyhow::Result<Box<dyn Tap>>;
}

/// A running capture.
pub trait Tap: Send {
    /// Stops it; returns once no more frame will be added to its buffer.
    fn stop(self: Box<Self>);
}

/// Captures on real interfaces.
#[derive(Debug, Default)]
pub struct RingCapturer;

struct RingTap {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// 4 MiB of ring per capture: 16 blocks of 256 KiB, each handed over within 10 ms.
const RING: RxRingConfig = RxRingConfig {
    block_size: 1 << 18,
    blocks: 16,
    retire_ms: 10,
    all_frames: true,
};

impl Capturer for RingCapturer {
    fn start(&self, loc: &Location, buf: Arc<Mutex<Buffer>>) -> anyhow::Result<Box<dyn Tap>> {
        let netns = match loc {
            Location::Local { .. } => None,
            Location::Netns { .. } => loc.netns_path(),
            Location::Ssh { .. } => {
                bail!("{loc}: capturing on a port reached over ssh is not supported")
            }
            Location::Lab { .. } => {
                bail!("{loc}: capturing on a port of the run's own lab is not supported")
            }
        };
        let iface = loc.iface().to_string();
        let stop = Arc::new(AtomicBool::new(false));
        let (ready_tx, ready) = std::sync::mpsc::channel();
        let flag = Arc::clone(&stop);
        let name = loc.to_string();
        let thread = std::thread::Builder::new()
            .name("upktgen-otg-capture".into())
            .spawn(move || {
                let opened = open(netns.as_deref(), &iface);
                let mut ring = match opened {
                    Ok(r) => {
                        let _ = ready_tx.send(Ok(()));
                        r
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                while !flag.load(Ordering::Relaxed) {
                    if !ring.wait(50).unwrap_or(false) {
                        continue;
                    }
                    let mut b = buf.lock().unwrap_or_else(|e| e.into_inner());
                    while ring
                        .next_block(|data, meta| b.push(meta.ts_ns, data))
                        .is_some()
                    {}
                }
            })
            .context("starting a capture thread")?;
        match ready.recv() {
            Ok(Ok(())) => Ok(Box::new(RingTap {
                stop,
                thread: Some(thread),
            })),
            Ok(Err(e)) => {
                let _ = thread.join();
                Err(e.context(format!("capturing on {name}")))
            }
            Err(_) => bail!("capturing on {name}: the capture thread ended"),
        }
    }
}

/// Joins `netns` (on this thread, which is the capture's own) and opens the ring.
fn open(netns: Option<&std::path::Path>, iface: &str) -> anyhow::Result<RxRing> {
    if let Some(ns) = netns {
        crate::sys::netns::setns_net(ns)
            .with_context(|| format!("cannot enter network namespace {}", ns.display()))?;
    }
    let ifindex =
        crate::sys::if_nametoindex(iface).with_context(|| format!("{iface}: no such interface"))?;
    RxRing::open(ifindex, RING).map_err(|e| match e.raw_os_error() {
        Some(libc::EPERM) => anyhow::anyhow!("needs CAP_NET_RAW: run the server as root"),
        _ => anyhow::Error::from(e).context("opening a packet socket"),
    })
}

impl Tap for RingTap {
    fn stop(mut self: Box<Self>) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for RingTap {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
