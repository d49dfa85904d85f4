//! `run --pcap FILE`: the one sender's frames, built for the device's addresses (read
//! without privileges), sent by the send loop into a pcap file ([`PcapSink`]) on a
//! [`ScheduleClock`]: the file holds `count` frames stamped on the run's schedule from the
//! wall clock at the start, written at once. Needs no privilege.

use super::device::{Device, check_frame_fits};
use super::plan::{PcapPlan, RunPlan};
use crate::backend::pcap::PcapSink;
use crate::clock::ScheduleClock;
use crate::exit::Exit;
use crate::pg::Flag;
use crate::sender::{self, Limits, StopReason};
use crate::stream::{self, FrameSource};
use anyhow::{Context, Result, anyhow};
use std::io::BufWriter;
use std::sync::atomic::AtomicBool;

/// Writes the plan's `--pcap` file and prints one line on standard error.
pub fn write(plan: &RunPlan, p: &PcapPlan, stop: &AtomicBool) -> Result<Exit> {
    let s = &plan.senders[0].spec;
    let cfg = &s.cfg;
    let (info, mtu, dev) = Device::unprivileged(p.dev.as_deref(), cfg);
    check_frame_fits(cfg, mtu, &dev)?;
    let mut frames = stream::for_config(cfg, &info, plan.seed, s.cpu.unwrap_or(0) as u16)?;
    let path = &p.path;
    for note in &cfg.notes {
        crate::errln!("upktgen: note: {note}");
    }
    // A regular file is written beside its name and renamed over it when whole
    // (crate::outfile): a link at the name is replaced, never followed.
    let file = crate::outfile::OutFile::create(path)
        .with_context(|| format!("--pcap {}: cannot create the file", path.display()))?;
    let limits = Limits {
        count: p.count,
        duration: None,
        delay_ns: cfg.delay,
        burst: cfg.burst,
        timestamps: !cfg.has(Flag::NoTimestamp),
        progress: None,
    };
    let write_all = || -> std::io::Result<(u64, u64, bool)> {
        let clock = ScheduleClock::new(crate::sys::realtime_ns());
        let out = BufWriter::with_capacity(1 << 20, file);
        let mut sink = PcapSink::new(out, frames.prefill(), &clock)?;
        let o = sender::run_on(&mut sink, &mut frames, &limits, stop, &clock)?;
        let (written, bytes) = (sink.records(), sink.bytes());
        sink.finish()?
            .into_inner()
            .map_err(|e| e.into_error())?
            .commit()?;
        Ok((written, bytes, o.stop_reason == StopReason::Interrupted))
    };
    // A file cut short by an error never replaces the name (its temporary file is removed);
    // one cut short by Ctrl-C is whole up to there and kept.
    let (written, bytes, interrupted) = write_all().map_err(|e| {
        if crate::outfile::is_stream(path) {
            anyhow!("writing {}: {e}", path.display())
        } else {
            anyhow!(
                "writing {}: {e} (the file is not written; what was at that name is kept)",
                path.display()
            )
        }
    })?;
    let spacing = if cfg.delay == 0 {
        "1 ns apart at delay 0".to_string()
    } else {
        format!(
            "on the schedule of delay {} ns, burst {}",
            cfg.delay,
            cfg.burst.max(1)
        )
    };
    crate::errln!(
        "upktgen: wrote {written} frames ({bytes} bytes) to {} (pcap, ns timestamps {spacing}){}",
        path.display(),
        if interrupted { "; interrupted" } else { "" }
    );
    Ok(if interrupted {
        Exit::Interrupted
    } else {
        Exit::Done
    })
}

#[cfg(test)]
mod tests {
    use crate::backend::pcap::PcapSink;
    use crate::clock::ScheduleClock;
    use crate::pcap::{self, Record};
    use crate::sender::{self, Limits, StopReason};
    use crate::stream::{FrameSource, ReplayFrames};
    use std::sync::atomic::AtomicBool;

    /// The record times of `n` frames written on the schedule of `delay_ns`/`burst`, from
    /// the clock's start; and the outcome's stop reason.
    fn times(n: u64, delay_ns: u64, burst: u32, stop: bool) -> (Vec<u64>, StopReason) {
        let rec = |b: u8| Record {
            ts_ns: 0,
            orig_len: 60,
            data: vec![b; 60],
        };
        let mut frames = ReplayFrames::new(&[rec(1), rec(2)]).unwrap();
        let clock = ScheduleClock::new(5_000_000_000);
        let mut sink = PcapSink::new(Vec::new(), frames.prefill(), &clock).unwrap();
        let limits = Limits {
            count: n,
            duration: None,
            delay_ns,
            burst,
            timestamps: true,
            progress: None,
        };
        let o = sender::run_on(
            &mut sink,
            &mut frames,
            &limits,
            &AtomicBool::new(stop),
            &clock,
        )
        .unwrap();
        assert_eq!(
            (o.result.sent, sink.records()),
            (sink.records(), sink.records())
        );
        let file = pcap::parse(&sink.finish().unwrap()).unwrap();
        let t: Vec<u64> = file
            .records
            .iter()
            .map(|r| r.ts_ns - 5_000_000_000)
            .collect();
        (t, o.stop_reason)
    }

    /// The frames' times are the run's schedule (tick `k / burst` at `tick * burst * delay`,
    /// frames of one tick 1 ns apart; 1 ns apart at delay 0), as the send loop paces them.
    #[test]
    fn schedule() {
        assert_eq!(times(4, 0, 1, false).0, [0, 1, 2, 3]);
        assert_eq!(times(4, 1000, 1, false).0, [0, 1000, 2000, 3000]);
        // Burst 2 at delay 1000: a tick of two frames every 2000 ns, the rate unchanged.
        assert_eq!(times(5, 1000, 2, false).0, [0, 1, 2000, 2001, 4000]);
        assert_eq!(times(4, 1, 2, false).0, [0, 1, 2, 3], "delay 1, burst 2");
        assert_eq!(
            times(3, 0, 1, true),
            (vec![], StopReason::Interrupted),
            "a stop before the start writes nothing"
        );
    }
}
