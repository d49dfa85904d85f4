//! The send loop: pace, fill, submit, account.
//!
//! Time accounting follows pktgen's Result line. *elapsed* runs from the start of sending
//! to the end of the final wait for completions. *idle* (`d`) is the time the sender was
//! blocked: sleeping or spinning for the rate limiter (delay/ratep), waiting for room in
//! the queue while it was stopped, and the final wait for completions. *busy* (`c`) is
//! elapsed minus idle: time spent preparing frames and inside the send syscalls.

use crate::backend::{BackendStats, TxBackend};
use crate::clock::{Clock, SystemClock};
use crate::stream::FrameSource;
use crate::stream::Stamp;
use serde::Serialize;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

pub mod result;

pub use result::PktgenResult;

/// What a sender has sent so far, published after each submit for another thread to read
/// (the live lines, where no interface counts the frames: netif_receive's injected ones).
#[derive(Debug, Default)]
pub struct Progress {
    pub frames: AtomicU64,
    /// The frames' bytes, counted as the Result line counts them.
    pub bytes: AtomicU64,
}

/// What stops a run (and where it publishes its progress, if anywhere).
#[derive(Debug, Clone)]
pub struct Limits {
    /// Frames to hand to the kernel (accepted or refused); 0 = no limit.
    pub count: u64,
    /// Stop after this long; None = no limit.
    pub duration: Option<Duration>,
    /// Inter-packet gap in ns on an absolute schedule (pktgen's delay; ratep = 1e9/delay); 0 = as fast as possible;
    /// u64::MAX = never send (pktgen's `delay 2147483647`).
    pub delay_ns: u64,
    /// Frames sent back to back per tick of `burst * delay_ns`: the rate stays 1e9/delay.
    pub burst: u32,
    /// Stamp packets with the wall clock (false with NO_TIMESTAMP).
    pub timestamps: bool,
    /// Published after each submit when set (one relaxed store of each figure per batch).
    pub progress: Option<Arc<Progress>>,
}

/// Why the run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    Count,
    Duration,
    Interrupted,
}

/// How well a paced run kept its schedule.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Pacing {
    /// 1e9 / delay.
    pub requested_pps: f64,
    /// Frames handed over per second between the first and the last handover (the rate
    /// the schedule produced; the wire may still queue them).
    pub achieved_pps: f64,
    /// (achieved - requested) / requested, in percent.
    pub error_pct: f64,
    /// Handovers (syscalls or ring kicks) the schedule made.
    pub departures: u64,
    /// How late each handover was against its first frame's due time, ns: the
    /// inter-departure jitter the receiver sees, before the network adds its own.
    pub late_p50_ns: u64,
    pub late_p99_ns: u64,
    pub late_max_ns: u64,
}

impl Pacing {
    /// Several senders' schedules as one: the rates add up, the lateness is the worst of
    /// each figure; None when none was paced.
    pub fn combine(all: impl Iterator<Item = Pacing>) -> Option<Pacing> {
        all.reduce(|a, b| {
            let requested_pps = a.requested_pps + b.requested_pps;
            let achieved_pps = a.achieved_pps + b.achieved_pps;
            Pacing {
                requested_pps,
                achieved_pps,
                error_pct: (achieved_pps - requested_pps) / requested_pps * 100.0,
                departures: a.departures + b.departures,
                late_p50_ns: a.late_p50_ns.max(b.late_p50_ns),
                late_p99_ns: a.late_p99_ns.max(b.late_p99_ns),
                late_max_ns: a.late_max_ns.max(b.late_max_ns),
            }
        })
    }
}

/// Records handover lateness for [`Pacing`].
struct PacingRecorder {
    hist: hdrhistogram::Histogram<u64>,
    first: Option<(u64, u64)>,
    last: (u64, u64),
}

impl PacingRecorder {
    fn new() -> Self {
        PacingRecorder {
            // 1 ns .. 1 hour at 3 significant digits; fixed size, no growth per sample.
            hist: hdrhistogram::Histogram::new_with_bounds(1, 3_600_000_000_000, 3)
                .expect("valid histogram bounds"),
            first: None,
            last: (0, 0),
        }
    }

    /// A handover at `now` of frames starting with number `index`, due at `due`.
    fn record(&mut self, now: u64, due: u64, index: u64) {
        let _ = self.hist.record(now.saturating_sub(due).max(1));
        self.first.get_or_insert((now, index));
        self.last = (now, index);
    }

    fn finish(&self, delay_ns: u64) -> Option<Pacing> {
        let (t_first, i_first) = self.first?;
        let (t_last, i_last) = self.last;
        let requested_pps = 1e9 / delay_ns as f64;
        // Between the first and the last handover, (i_last - i_first) frames left; with
        // bursts, whole ticks of `burst` frames.
        let achieved_pps = if t_last > t_first && i_last > i_first {
            (i_last - i_first) as f64 * 1e9 / (t_last - t_first) as f64
        } else {
            requested_pps
        };
        Some(Pacing {
            requested_pps,
            achieved_pps,
            error_pct: (achieved_pps - requested_pps) / requested_pps * 100.0,
            departures: self.hist.len(),
            late_p50_ns: self.hist.value_at_quantile(0.5),
            late_p99_ns: self.hist.value_at_quantile(0.99),
            late_max_ns: self.hist.max(),
        })
    }
}

/// A finished run's figures.
#[derive(Debug, Clone, Serialize)]
pub struct SendOutcome {
    pub result: PktgenResult,
    /// Idle time spent in the rate limiter (part of `result.idle_ns`).
    pub pacing_idle_ns: u64,
    pub backend: BackendStats,
    pub stop_reason: StopReason,
    /// CLOCK_REALTIME at the start, ns since the epoch.
    pub start_realtime_ns: u64,
    /// With a rate (delay/ratep/rate): how well the schedule was kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pacing: Option<Pacing>,
}

impl SendOutcome {
    /// Several senders' outcomes as one: packets, errors and counters add up; elapsed is
    /// the longest sender's, idle the mean of the senders' (so busy + idle = elapsed reads
    /// as one sender's day); the first sender's stop reason, unless any was interrupted.
    pub fn combine<'a>(all: impl Iterator<Item = &'a SendOutcome>) -> SendOutcome {
        let all: Vec<&SendOutcome> = all.collect();
        let Some(first) = all.first() else {
            return SendOutcome {
                result: PktgenResult::default(),
                pacing_idle_ns: 0,
                backend: BackendStats::default(),
                stop_reason: StopReason::Count,
                start_realtime_ns: 0,
                pacing: None,
            };
        };
        if all.len() == 1 {
            return (*first).clone();
        }
        let n = all.len() as u64;
        let sum = |f: &dyn Fn(&SendOutcome) -> u64| all.iter().map(|o| f(o)).sum::<u64>();
        let elapsed_ns = all.iter().map(|o| o.result.elapsed_ns).max().unwrap_or(0);
        let results: Vec<PktgenResult> = all.iter().map(|o| o.result).collect();
        let mut backend = BackendStats::default();
        for o in &all {
            backend += &o.backend;
        }
        backend.idle_ns /= n;
        backend.stopped_ns /= n;
        SendOutcome {
            result: PktgenResult::add_up(&results, elapsed_ns),
            pacing_idle_ns: sum(&|o| o.pacing_idle_ns) / n,
            backend,
            stop_reason: if all.iter().any(|o| o.stop_reason == StopReason::Interrupted) {
                StopReason::Interrupted
            } else {
                first.stop_reason
            },
            start_realtime_ns: all.iter().map(|o| o.start_realtime_ns).min().unwrap_or(0),
            pacing: Pacing::combine(all.iter().filter_map(|o| o.pacing)),
        }
    }
}

impl SendOutcome {
    /// One device's outcome of a sender whose timeline it shared (`stream::devices`): its
    /// frames, with its own size figures (as its own Result would count them), over the
    /// sender's run; the socket's counters and the stop are the sender's. The kernel's
    /// refusals (errors) stay the sender's: a device counts the frames handed over for it.
    pub fn of_part(&self, part: &crate::stream::devices::PartFigures) -> SendOutcome {
        SendOutcome {
            result: PktgenResult {
                sent: part.frames,
                pkt_size: part.pkt_size,
                errors: 0,
                imix_bytes: part.imix_bytes,
                size_range: part.size_range,
                ..self.result
            },
            pacing: None,
            ..self.clone()
        }
    }
}

/// Bytes of the frames made so far when their sizes vary (None: every frame has the frame
/// source's size): the backend's own count where it makes the frames (xdp_live's program),
/// else the frame source's.
fn varied_bytes<B: TxBackend, F: FrameSource + ?Sized>(
    fills: bool,
    backend: &B,
    frames: &F,
) -> Option<u64> {
    if fills {
        frames.imix_bytes()
    } else {
        backend.bytes_sent().or_else(|| frames.imix_bytes())
    }
}

/// Sends until a limit is reached or `stop` is set, on the machine's clocks.
pub fn run<B: TxBackend, F: FrameSource + ?Sized>(
    backend: &mut B,
    frames: &mut F,
    limits: &Limits,
    stop: &AtomicBool,
) -> io::Result<SendOutcome> {
    run_on(backend, frames, limits, stop, &SystemClock)
}

/// [`run`] paced and stamped by `clock` (a sink that is not a wire, such as `--pcap`'s,
/// runs on a [`crate::clock::ScheduleClock`]).
pub fn run_on<B: TxBackend, F: FrameSource + ?Sized, C: Clock>(
    backend: &mut B,
    frames: &mut F,
    limits: &Limits,
    stop: &AtomicBool,
    clock: &C,
) -> io::Result<SendOutcome> {
    let max_batch = backend.max_batch() as u64;
    let fills = backend.fills_frames();
    let start_realtime_ns = clock.realtime_ns();
    let t0 = clock.monotonic_ns();
    let end_by = limits
        .duration
        .map(|d| t0.saturating_add(d.as_nanos() as u64));
    let mut attempted: u64 = 0;
    let mut sent: u64 = 0;
    let mut errors: u64 = 0;
    let mut pacing_idle_ns: u64 = 0;
    let paced = limits.delay_ns != 0 && limits.delay_ns != u64::MAX;
    let mut pacing = paced.then(PacingRecorder::new);
    // A source with its own timing (a pcap file's gaps, streams) is paced too.
    if paced || frames.due_ns(0).is_some() {
        clock.prepare_pacing();
    }
    let burst = u64::from(limits.burst.max(1));

    let stop_reason = loop {
        if stop.load(Ordering::Relaxed) {
            break StopReason::Interrupted;
        }
        let mut want = max_batch;
        if limits.count != 0 {
            let left = limits.count - attempted;
            if left == 0 {
                break StopReason::Count;
            }
            want = want.min(left);
        }
        let now = clock.monotonic_ns();
        if let Some(end) = end_by
            && now >= end
        {
            break StopReason::Duration;
        }
        if limits.delay_ns == u64::MAX {
            // Never send: wait for the duration or Ctrl-C, as pktgen does.
            pacing_idle_ns += clock.wait_until(end_by.unwrap_or(u64::MAX), stop);
            continue;
        }
        // Absolute schedule: tick j (of `burst` packets) is due at t0 + j * burst * delay.
        // A late sender sends everything due at once (up to a batch), so the average rate
        // does not drift. A source with its own timing (a pcap file's gaps) gives each
        // frame's due time instead, on the same terms.
        if let Some(due) = frames.due_ns(attempted) {
            if due == u64::MAX {
                // The source has no frame left (every stream has ended).
                break StopReason::Count;
            }
            let next_due = t0.saturating_add(due);
            if next_due > now {
                pacing_idle_ns +=
                    clock.wait_until(end_by.map_or(next_due, |e| e.min(next_due)), stop);
                continue;
            }
            let mut k = 1;
            while k < want
                && frames
                    .due_ns(attempted + k)
                    .is_some_and(|d| t0.saturating_add(d) <= now)
            {
                k += 1;
            }
            want = k;
        } else if let Some(ticks_before) =
            (now - t0).checked_div(limits.delay_ns.saturating_mul(burst))
        {
            let due_total = (ticks_before + 1) * burst;
            if due_total <= attempted {
                let next_due =
                    t0.saturating_add((attempted / burst * burst).saturating_mul(limits.delay_ns));
                let wake = end_by.map_or(next_due, |e| e.min(next_due));
                pacing_idle_ns += clock.wait_until(wake, stop);
                continue;
            }
            want = want.min(due_total - attempted);
        }
        let n = backend.reserve(want as usize, stop)?;
        if n == 0 {
            continue;
        }
        if fills {
            let stamp = if limits.timestamps {
                Stamp::at(clock.realtime_ns())
            } else {
                Stamp::default()
            };
            for i in 0..n {
                let len = frames.advance();
                frames.write(backend.frame(i, len), stamp);
                frames.sent();
            }
        }
        if let Some(p) = &mut pacing {
            let due =
                t0.saturating_add((attempted / burst * burst).saturating_mul(limits.delay_ns));
            p.record(clock.monotonic_ns(), due, attempted);
        }
        let s = backend.submit(n, stop)?;
        sent += s.sent;
        errors += s.errors;
        attempted += s.sent + s.errors;
        if let Some(p) = &limits.progress {
            let bytes =
                varied_bytes(fills, backend, frames).unwrap_or(sent * u64::from(frames.pkt_size()));
            p.frames.store(sent, Ordering::Relaxed);
            p.bytes.store(bytes, Ordering::Relaxed);
        }
    };

    backend.drain(Duration::from_secs(2))?;
    let elapsed_ns = clock.monotonic_ns() - t0;
    let bstats = backend.stats();
    let idle_ns = (bstats.idle_ns + pacing_idle_ns).min(elapsed_ns);
    let late = bstats.late_errors.min(sent);
    sent -= late;
    errors += late;
    Ok(SendOutcome {
        result: PktgenResult {
            elapsed_ns,
            idle_ns,
            sent,
            pkt_size: frames.pkt_size(),
            frags: 0,
            errors,
            imix_bytes: varied_bytes(fills, backend, frames),
            size_range: frames.size_range(),
        },
        pacing_idle_ns,
        backend: bstats,
        stop_reason,
        start_realtime_ns,
        pacing: pacing.and_then(|p| p.finish(limits.delay_ns)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::devices::PartFigures;

    #[test]
    fn a_devices_part_keeps_the_senders_time_and_counts_its_own_frames() {
        let thread = SendOutcome {
            result: PktgenResult {
                elapsed_ns: 2_000_000_000,
                idle_ns: 500_000_000,
                sent: 8_000,
                pkt_size: 65,
                frags: 0,
                errors: 3,
                imix_bytes: Some(3_120_000),
                size_range: Some((60, 500)),
            },
            pacing_idle_ns: 400_000_000,
            backend: BackendStats::default(),
            stop_reason: StopReason::Count,
            start_realtime_ns: 7,
            pacing: None,
        };
        let part = PartFigures {
            frames: 6_000,
            bytes: 3_000_000,
            pkt_size: 500,
            imix_bytes: None,
            size_range: None,
            walk: None,
        };
        let d = thread.of_part(&part);
        assert_eq!(
            d.result.lines(),
            "OK: 2000000(c1500000+d500000) usec, 6000 (500byte,0frags)\n  3000pps 12Mb/sec (12000000bps) errors: 0"
        );
        assert_eq!((d.pacing_idle_ns, d.start_realtime_ns), (400_000_000, 7));
        assert_eq!(d.stop_reason, StopReason::Count);
    }
}
