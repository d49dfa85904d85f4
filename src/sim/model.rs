//! The simulated machine's parameters: every constant of the model, validated.
//!
//! Each field names one piece of the machine the seed measured (a 2007 PC with a 100 Mbit/s
//! sis900-like NIC, the kernel's pktgen as the sender). Defaults reproduce the seed's
//! "normal clock, wake at 1 free slot" machine; [`Model::seed`] documents where each value comes
//! from. Durations are given either in CPU cycles (they scale with the clock) or in nanoseconds
//! (bus I/O and DMA, which do not).

use crate::txq::{RingConfig, RingConfigError};
use serde::Serialize;
use std::fmt;

/// Where TX completions are reclaimed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Completion {
    /// In the hard interrupt handler (descriptor reclaim and queue wake in `hi`); the skbs are
    /// freed later by the TX softirq (`dev_kfree_skb_irq`). The interrupt is re-armed when the
    /// handler returns.
    Irq,
    /// In a NAPI-style poll in softirq context: the handler only masks the interrupt and
    /// schedules the poll; the poll reclaims and frees each completed descriptor (in `si`),
    /// wakes the queue, then unmasks. Completions that land before the poll has finished are
    /// merged into the same interrupt.
    Napi,
}

impl fmt::Display for Completion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Completion::Irq => "irq",
            Completion::Napi => "napi",
        })
    }
}

/// Every constant of the model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Model {
    // --- workload (pktgen) ---
    /// Packets to send (pktgen's `count`); must be at least 1.
    pub count: u64,
    /// Frame size without FCS (pktgen's `pkt_size`).
    pub pkt_size: u32,

    // --- link ---
    /// Link rate in Mbit/s.
    pub link_mbps: f64,
    /// Frame check sequence bytes on the wire.
    pub fcs: u32,
    /// Preamble + start-of-frame delimiter bytes.
    pub preamble: u32,
    /// Inter-frame gap bytes.
    pub ifg: u32,

    // --- NIC and driver ---
    /// TX descriptor ring and its stop / start (wake) thresholds.
    pub ring: RingSpec,
    /// Descriptor and frame DMA fetch time (ns).
    pub dma_ns: f64,
    /// TX FIFO size in frames. 0: a descriptor completes when its frame has left the wire (the
    /// DMA fetch overlaps the previous frame). N >= 1: the NIC copies frames into a FIFO of N
    /// frames and completes the descriptor as soon as the copy is done; the wire drains the FIFO.
    pub fifo_frames: u32,
    /// Raise the completion interrupt after this many completions (1 = per descriptor).
    pub coalesce_frames: u32,
    /// ... or this long after the first unsignalled completion (us; 0 = off).
    pub coalesce_usecs: f64,
    /// Where completions are reclaimed.
    pub completion: Completion,

    // --- CPU ---
    /// CPU clock in MHz.
    pub clock_mhz: f64,
    /// pktgen's per-packet work plus the driver's xmit (cycles; `sy`).
    pub xmit_cycles: f64,
    /// Bus I/O in the driver's xmit (doorbell write, status read) (ns; `sy`).
    pub xmit_io_ns: f64,
    /// Hard interrupt entry, handler and exit (cycles; `hi`).
    pub irq_cycles: f64,
    /// Bus I/O in the interrupt (interrupt controller ack, status register read) (ns; `hi`).
    pub irq_io_ns: f64,
    /// Reclaiming one completed descriptor (cycles; `hi` with `irq`, `si` with `napi`).
    pub reclaim_cycles: f64,
    /// Freeing one sent skb (cycles; `si`).
    pub free_cycles: f64,
    /// Entering and leaving the softirq handler once (cycles; `si`).
    pub softirq_cycles: f64,
    /// One queue wake: netif_wake_queue plus the TX softirq's qdisc run (cycles; `si`).
    pub wake_cycles: f64,
    /// One turn of pktgen's loop while the queue is stopped (cycles; `sy`).
    pub spin_cycles: f64,
    /// Part of that turn between pktgen's two idle timestamps (cycles; counted as pktgen idle,
    /// with any interrupt that lands in it).
    pub idle_window_cycles: f64,
    /// Share of the CPU taken by other tasks (top itself, kernel threads), as a fraction (`us`).
    pub bg_share: f64,
    /// How long another task runs each time pktgen yields to it (us).
    pub bg_slice_us: f64,
    /// Relative jitter of every CPU cost: each is multiplied by 1 + jitter * u, u uniform in
    /// [-1, 1] (0 = fully deterministic costs).
    pub jitter: f64,
    /// Seed of the jitter's pseudo-random sequence.
    pub seed: u64,
}

/// A parameter the model cannot run with (the message names the flag), or a run that could
/// not go on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelError {
    #[error(
        "--count 0: pktgen's \"run forever\" cannot be simulated; give a packet count of at least 1"
    )]
    CountZero,
    #[error("--pkt-size {0}: must be between 1 and 65535 bytes")]
    PktSize(u32),
    #[error(transparent)]
    Ring(#[from] RingConfigError),
    #[error("--ring {0}: at most 1048576 descriptors")]
    RingTooLarge(u32),
    #[error("--fifo-frames {0}: at most 1048576 frames")]
    FifoTooLarge(u32),
    #[error(
        "--coalesce-frames {0}: needs --coalesce-usecs above 0, or the last completions would never interrupt"
    )]
    CoalesceNoTimer(u32),
    #[error("--coalesce-frames 0: must be at least 1 (1 = interrupt per descriptor)")]
    CoalesceZero,
    /// The flag and its value.
    #[error("{0} {1}: must be a positive number")]
    NotPositive(&'static str, f64),
    #[error("--link-mbps {0}: at most 10000000 (10 Pbit/s)")]
    LinkTooFast(f64),
    #[error("--clock-mhz {0}: must be between 1 and 1000000")]
    Clock(f64),
    #[error("{0} {1}: must be a finite number >= 0")]
    Negative(&'static str, f64),
    #[error("{0} {1}: unreasonably large (at most 1e9)")]
    TooLarge(&'static str, f64),
    #[error("--xmit-cycles / --xmit-io-ns: sending a packet must cost some time (both are 0)")]
    FreeXmit,
    #[error("--spin-cycles 0: one turn of pktgen's loop must take some time")]
    SpinZero,
    #[error("--idle-window-cycles {window}: must not exceed --spin-cycles ({spin})")]
    IdleWindow { window: f64, spin: f64 },
    #[error("--bg-share {0}: must be below 0.5 (a fraction of the CPU, e.g. 0.003 for 0.3 %)")]
    BgShare(f64),
    #[error("--bg-slice-us 0: must be positive when --bg-share is above 0")]
    BgSlice,
    #[error("--jitter {0}: must be between 0 and 0.9")]
    Jitter(f64),
    #[error("--count {0}: the run would last over 1e7 simulated seconds; send fewer packets")]
    TooLong(u64),
    /// At `t` ps, `sent` of `count` packets.
    #[error(
        "internal: the simulation stalled at {t} ps with {sent} of {count} packets sent (please report with the flags used)"
    )]
    Stalled { t: u64, sent: u64, count: u64 },
}

/// The simulated ring's size and thresholds as set (a sweep changes them one by one);
/// [`RingSpec::config`] validates them into the [`RingConfig`] the queue takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RingSpec {
    pub size: u32,
    pub stop_thresh: u32,
    pub start_thresh: u32,
}

impl RingSpec {
    pub fn config(&self) -> Result<RingConfig, RingConfigError> {
        RingConfig::new(self.size, self.stop_thresh, self.start_thresh)
    }
}

/// The seed's three clocks (MHz), as the seed reports them.
pub const SEED_CLOCKS_MHZ: [f64; 3] = [1052.476, 1397.657, 1575.819];

impl Model {
    /// The seed's machine at the normal clock, waking the queue at 1 free slot.
    ///
    /// Sources (docs/sim.md has the full table):
    /// - link: 100 Mbit/s Ethernet framing (IEEE 802.3): FCS 4, preamble+SFD 8, IFG 12 bytes.
    /// - ring: 16 descriptors (sis900's NUM_TX_DESC), stop when none is free, wake at 1 free
    ///   (the seed's "before"; the seed's "after" wakes at 16, i.e. when the ring is empty).
    /// - fifo_frames 32: sis900's 2 KiB TX FIFO holds about 32 minimum frames; descriptors
    ///   complete once the frame is in the FIFO. The seed's interrupt counts need this: fewer
    ///   interrupts than packets only when the CPU, not the wire, is the bottleneck.
    /// - completion: reclaim in the interrupt handler, free in the TX softirq (sis900 style).
    /// - 8 CPU constants fitted on the seed's three runs without hysteresis (examples/sim_fit.rs):
    ///   xmit, irq, irq_io, reclaim, free, wake, idle_window, bg_slice. The others are assumed.
    /// - bg_share: the seed's `us` column (0.3 %).
    pub fn seed() -> Model {
        Model {
            count: 4_000_000,
            pkt_size: 60,
            link_mbps: 100.0,
            fcs: 4,
            preamble: 8,
            ifg: 12,
            ring: RingSpec {
                size: 16,
                stop_thresh: 1,
                start_thresh: 1,
            },
            dma_ns: 1000.0,
            fifo_frames: 32,
            coalesce_frames: 1,
            coalesce_usecs: 0.0,
            completion: Completion::Irq,
            clock_mhz: SEED_CLOCKS_MHZ[1],
            xmit_cycles: 792.0,
            xmit_io_ns: 250.0,
            irq_cycles: 915.0,
            irq_io_ns: 480.0,
            reclaim_cycles: 1262.0,
            free_cycles: 3948.0,
            softirq_cycles: 400.0,
            wake_cycles: 100.0,
            spin_cycles: 600.0,
            idle_window_cycles: 115.0,
            bg_share: 0.003,
            bg_slice_us: 2400.0,
            jitter: 0.05,
            seed: 1,
        }
    }

    /// Bytes one frame occupies on the wire: the frame padded to Ethernet's 60-byte minimum,
    /// plus FCS, preamble and inter-frame gap.
    pub fn wire_bytes(&self) -> u64 {
        u64::from(self.pkt_size.max(60)) + u64::from(self.fcs + self.preamble + self.ifg)
    }

    /// Time one frame occupies the wire, in seconds.
    pub fn wire_time_s(&self) -> f64 {
        self.wire_bytes() as f64 * 8.0 / (self.link_mbps * 1e6)
    }

    /// Line rate in packets per second.
    pub fn line_rate_pps(&self) -> f64 {
        1.0 / self.wire_time_s()
    }

    /// Checks every parameter; the error names the flag to fix.
    pub fn validate(&self) -> Result<(), ModelError> {
        let err = Err;
        if self.count == 0 {
            return err(ModelError::CountZero);
        }
        if self.pkt_size == 0 || self.pkt_size > 65_535 {
            return err(ModelError::PktSize(self.pkt_size));
        }
        // Ring thresholds: the same rule as the real backends (1 <= stop <= start <= size).
        self.ring.config()?;
        if self.ring.size > 1 << 20 {
            return err(ModelError::RingTooLarge(self.ring.size));
        }
        if self.fifo_frames > 1 << 20 {
            return err(ModelError::FifoTooLarge(self.fifo_frames));
        }
        if self.coalesce_frames > 1 && self.coalesce_usecs <= 0.0 {
            return err(ModelError::CoalesceNoTimer(self.coalesce_frames));
        }
        if self.coalesce_frames == 0 {
            return err(ModelError::CoalesceZero);
        }
        let positive: [(&str, f64); 2] = [
            ("--link-mbps", self.link_mbps),
            ("--clock-mhz", self.clock_mhz),
        ];
        for (name, v) in positive {
            if !v.is_finite() || v <= 0.0 {
                return err(ModelError::NotPositive(name, v));
            }
        }
        if self.link_mbps > 10_000_000.0 {
            return err(ModelError::LinkTooFast(self.link_mbps));
        }
        if self.clock_mhz < 1.0 || self.clock_mhz > 1_000_000.0 {
            return err(ModelError::Clock(self.clock_mhz));
        }
        let non_negative: [(&str, f64); 14] = [
            ("--dma-ns", self.dma_ns),
            ("--coalesce-usecs", self.coalesce_usecs),
            ("--xmit-cycles", self.xmit_cycles),
            ("--xmit-io-ns", self.xmit_io_ns),
            ("--irq-cycles", self.irq_cycles),
            ("--irq-io-ns", self.irq_io_ns),
            ("--reclaim-cycles", self.reclaim_cycles),
            ("--free-cycles", self.free_cycles),
            ("--softirq-cycles", self.softirq_cycles),
            ("--wake-cycles", self.wake_cycles),
            ("--spin-cycles", self.spin_cycles),
            ("--idle-window-cycles", self.idle_window_cycles),
            ("--bg-share", self.bg_share),
            ("--bg-slice-us", self.bg_slice_us),
        ];
        for (name, v) in non_negative {
            if !v.is_finite() || v < 0.0 {
                return err(ModelError::Negative(name, v));
            }
            // Each cost must fit the simulator's picosecond clock many times over.
            if v > 1e9 {
                return err(ModelError::TooLarge(name, v));
            }
        }
        if self.xmit_cycles + self.xmit_io_ns <= 0.0 {
            return err(ModelError::FreeXmit);
        }
        if self.spin_cycles <= 0.0 {
            return err(ModelError::SpinZero);
        }
        if self.idle_window_cycles > self.spin_cycles {
            return err(ModelError::IdleWindow {
                window: self.idle_window_cycles,
                spin: self.spin_cycles,
            });
        }
        if self.bg_share >= 0.5 {
            return err(ModelError::BgShare(self.bg_share));
        }
        if self.bg_share > 0.0 && self.bg_slice_us <= 0.0 {
            return err(ModelError::BgSlice);
        }
        if !self.jitter.is_finite() || !(0.0..=0.9).contains(&self.jitter) {
            return err(ModelError::Jitter(self.jitter));
        }
        // The simulated run must fit the picosecond clock (u64: about 213 days).
        let min_run_s = self.count as f64 * self.wire_time_s();
        if min_run_s > 1.0e7 {
            return err(ModelError::TooLong(self.count));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_defaults_are_valid() {
        let m = Model::seed();
        m.validate().unwrap();
        assert_eq!(m.wire_bytes(), 84);
        assert!((m.wire_time_s() - 6.72e-6).abs() < 1e-15);
        assert_eq!(m.line_rate_pps().floor() as u64, 148_809);
    }

    #[test]
    fn small_frames_are_padded_on_the_wire() {
        let m = Model {
            pkt_size: 42,
            ..Model::seed()
        };
        assert_eq!(m.wire_bytes(), 84);
        let m = Model {
            pkt_size: 1514,
            ..Model::seed()
        };
        assert_eq!(m.wire_bytes(), 1538);
    }

    fn rejects(m: Model, flag: &str) {
        let e = m.validate().unwrap_err();
        assert!(e.to_string().contains(flag), "{e} should name {flag}");
    }

    #[test]
    fn bad_parameters_name_their_flag() {
        let s = Model::seed;
        rejects(
            Model {
                clock_mhz: 0.0,
                ..s()
            },
            "--clock-mhz",
        );
        rejects(
            Model {
                clock_mhz: f64::NAN,
                ..s()
            },
            "--clock-mhz",
        );
        rejects(
            Model {
                link_mbps: 0.0,
                ..s()
            },
            "--link-mbps",
        );
        rejects(
            Model {
                link_mbps: -1.0,
                ..s()
            },
            "--link-mbps",
        );
        rejects(Model { count: 0, ..s() }, "--count");
        rejects(Model { pkt_size: 0, ..s() }, "--pkt-size");
        rejects(
            Model {
                free_cycles: -1.0,
                ..s()
            },
            "--free-cycles",
        );
        rejects(
            Model {
                wake_cycles: f64::NAN,
                ..s()
            },
            "--wake-cycles",
        );
        rejects(
            Model {
                irq_io_ns: f64::INFINITY,
                ..s()
            },
            "--irq-io-ns",
        );
        rejects(
            Model {
                coalesce_frames: 0,
                ..s()
            },
            "--coalesce-frames",
        );
        rejects(Model { jitter: 1.0, ..s() }, "--jitter");
        rejects(
            Model {
                bg_share: 0.7,
                ..s()
            },
            "--bg-share",
        );
        rejects(
            Model {
                idle_window_cycles: 700.0,
                ..s()
            },
            "--idle-window-cycles",
        );
        let ring = |size, stop, start| RingSpec {
            size,
            stop_thresh: stop,
            start_thresh: start,
        };
        rejects(
            Model {
                ring: ring(16, 1, 17),
                ..s()
            },
            "--start-thresh",
        );
        rejects(
            Model {
                ring: ring(16, 17, 17),
                ..s()
            },
            "--stop-thresh",
        );
        rejects(
            Model {
                ring: ring(0, 1, 1),
                ..s()
            },
            "--ring",
        );
        rejects(
            Model {
                ring: ring(16, 4, 2),
                ..s()
            },
            "--start-thresh",
        );
    }
}
