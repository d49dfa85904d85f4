//! `upktgen rx`: its options checked into the receiver's configuration, then receive on the
//! named interface and report what arrived.

use crate::caps::{self, Cap};
use crate::cli::rx::RxArgs;
use crate::exit::Exit;
use crate::rx::recv::{Receiver, RxConfig};
use crate::rx::streams::RxStreams;
use crate::sys::{self, rx_ring::RxRingConfig};
use anyhow::{Result, anyhow, bail};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// Checks --xsk-frames.
pub fn check_xsk_frames(n: u32) -> Result<u32> {
    if !n.is_power_of_two() || !(64..=1 << 20).contains(&n) {
        bail!("--xsk-frames {n}: needs a power of two from 64 to 1048576");
    }
    Ok(n)
}

/// The receiver's configuration the options describe, checked.
pub fn config(a: &RxArgs) -> Result<RxConfig> {
    {
        check_xsk_frames(a.xsk_frames)?;
        if a.live.interval.is_zero() {
            bail!("--interval: must be above 0");
        }
        crate::rx::recv::candidates(a.rx_backend, a.all_frames)?;
        if !a.block_size.is_power_of_two() || a.block_size < 4096 {
            bail!(
                "--block-size {}: needs a power of two of at least 4096",
                a.block_size
            );
        }
        if a.ring_blocks == 0 || a.ring_blocks > 4096 {
            bail!("--ring-blocks {}: needs 1 to 4096", a.ring_blocks);
        }
        Ok(RxConfig {
            backend: a.rx_backend,
            xsk_frames: a.xsk_frames,
            zerocopy: a.xdp_mode.zerocopy(),
            ring: RxRingConfig {
                block_size: a.block_size,
                blocks: a.ring_blocks,
                all_frames: a.all_frames,
                ..RxRingConfig::default()
            },
            flow_key: a.flow_key,
            expect_first: a.expect_first,
            count: a.count,
            duration: a.duration,
            hist: a.hist,
            streams: (!a.streams.is_empty()).then(|| RxStreams {
                from_start: true,
                clock_offset_ns: a.clock_offset_ns,
                shown: a.streams.len(),
                ..RxStreams::new(a.streams.clone())
            }),
        })
    }
}

/// Runs `upktgen rx`.
pub fn run(a: &RxArgs, stop: &Arc<AtomicBool>) -> Result<Exit> {
    let cfg = config(a)?;
    caps::require(&[Cap::NetRaw], &format!("receiving on {}", a.dev))?;
    let ifindex = sys::if_nametoindex(&a.dev).map_err(|e| match e.raw_os_error() {
        Some(libc::ENODEV) | Some(libc::ENXIO) => anyhow!("--dev {}: no such interface", a.dev),
        _ => anyhow!("--dev {}: {e}", a.dev),
    })?;
    let metrics = a.metrics.start()?;
    let mut rx = Receiver::open(ifindex, &a.dev, cfg)
        .map_err(|e| anyhow!("--dev {}: cannot set up the receiver: {e}", a.dev))?;
    if let Some(c) = &rx.choice {
        crate::errln!("upktgen: {c}");
    }
    if let Some(m) = &metrics {
        crate::metrics::watch_rx(m, &a.dev, rx.progress())?;
    }
    let live =
        crate::live::start_for_rx(&super::plan::live_options(&a.live), a.count, rx.progress())?;
    let why = rx.run(stop)?;
    let report = rx.report(&a.dev, why)?;
    if let Some(m) = live {
        m.finish();
    }
    if let Some(m) = &metrics {
        m.finish_rx(&report);
    }
    if a.json {
        crate::out::println(crate::schema::to_pretty(crate::schema::RX, &report)?)?;
    } else {
        crate::out::print(report.text(a.hist))?;
    }
    if let Some(m) = &metrics {
        m.linger(stop);
    }
    // Ctrl-C is the normal end of `rx`: exit status 0, with the full report.
    Ok(Exit::Done)
}
