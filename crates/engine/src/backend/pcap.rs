//! `run --pcap FILE`'s sink: a transmit backend whose wire is a pcap file.
//!
//! The send loop ([`crate::sender::run_on`]) drives it as any backend, on a
//! [`ScheduleClock`]: one frame per batch, each written as a record stamped with the clock's
//! realtime when it is handed over (the time the loop also stamped into the frame), and
//! each moving the clock on by 1 ns. So pacing, timestamps and counts come from the one send
//! loop, and the file holds the frames at the times the run's schedule gives them.

use super::{BackendInfo, BackendStats, Submitted, TxBackend};
use crate::clock::{Clock, ScheduleClock};
use crate::pcap::PcapWriter;
use std::io::{self, Write};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Frames written to a pcap file instead of a device.
pub struct PcapSink<'c, W: Write> {
    out: PcapWriter<W>,
    clock: &'c ScheduleClock,
    /// The one frame's buffer, prefilled with the stream's.
    buf: Vec<u8>,
    len: usize,
    bytes: u64,
}

impl<'c, W: Write> PcapSink<'c, W> {
    /// Writes the file header to `out`; `prefill` is the stream's (its largest frame).
    pub fn new(out: W, prefill: Vec<u8>, clock: &'c ScheduleClock) -> io::Result<Self> {
        Ok(PcapSink {
            out: PcapWriter::new(out)?,
            clock,
            buf: prefill,
            len: 0,
            bytes: 0,
        })
    }

    /// Records written.
    pub fn records(&self) -> u64 {
        self.out.records()
    }

    /// Bytes of the frames written.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Flushes the records and hands back the output.
    pub fn finish(self) -> io::Result<W> {
        self.out.finish()
    }
}

impl<W: Write> TxBackend for PcapSink<'_, W> {
    fn info(&self) -> BackendInfo {
        BackendInfo {
            name: "pcap",
            detail: "pcap file (ns timestamps on the run's schedule)".into(),
            queue: "none".into(),
        }
    }

    fn max_batch(&self) -> usize {
        1
    }

    fn reserve(&mut self, want: usize, _stop: &AtomicBool) -> io::Result<usize> {
        Ok(want.min(1))
    }

    fn frame(&mut self, _i: usize, len: usize) -> &mut [u8] {
        self.len = len;
        &mut self.buf[..len]
    }

    fn submit(&mut self, n: usize, _stop: &AtomicBool) -> io::Result<Submitted> {
        if n == 0 {
            return Ok(Submitted::default());
        }
        self.out
            .write(self.clock.realtime_ns(), &self.buf[..self.len])?;
        self.clock.advance(1);
        self.bytes += self.len as u64;
        Ok(Submitted { sent: 1, errors: 0 })
    }

    fn drain(&mut self, _timeout: Duration) -> io::Result<()> {
        Ok(())
    }

    fn stats(&self) -> BackendStats {
        BackendStats::default()
    }
}
