//! The offset between this host's clock and the far end's, from exchanges over the control
//! channel, as NTP's clock filter does: of several request/response pairs, the one with the
//! smallest round trip bounds the offset best.
//!
//! For one exchange, `t0` is our CLOCK_REALTIME when the request left, `t1` the far end's
//! CLOCK_REALTIME when it answered, `t3` ours when the answer arrived. The far end read its
//! clock somewhere inside [t0, t3] of our time, so `offset = t1 - (t0 + t3) / 2` is wrong by
//! at most half the round trip: `|error| <= (t3 - t0) / 2`. A one-way latency measured across
//! the two clocks (the far end's receive time minus our send stamp) is then corrected by the
//! offset and carries that bound.

use serde::{Deserialize, Serialize};

/// One exchange, all in nanoseconds of CLOCK_REALTIME.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exchange {
    pub t0: u64,
    pub t1: u64,
    pub t3: u64,
}

/// The far end's clock relative to ours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockOffset {
    /// far end − here, ns (positive: the far end's clock is ahead).
    pub offset_ns: i64,
    /// The offset is right within ± this many ns (half the best round trip).
    pub uncertainty_ns: u64,
    /// The best exchange's round trip over the control channel.
    pub rtt_ns: u64,
    /// Exchanges made (the estimate uses the one with the smallest round trip).
    pub exchanges: u32,
    /// True when both ends read the same clock (one host: the lab, `netns:`, `local`): the
    /// offset is then 0 by construction, not by measurement.
    pub same_clock: bool,
}

impl ClockOffset {
    /// The same clock at both ends.
    pub fn same_clock() -> Self {
        ClockOffset {
            offset_ns: 0,
            uncertainty_ns: 0,
            rtt_ns: 0,
            exchanges: 0,
            same_clock: true,
        }
    }
}

/// The minimum-delay estimate of several exchanges; `None` when there is none usable (an
/// exchange whose answer came back before its request left — our clock stepped — is skipped).
pub fn estimate(xs: &[Exchange]) -> Option<ClockOffset> {
    let best = xs
        .iter()
        .filter(|x| x.t3 >= x.t0)
        .min_by_key(|x| x.t3 - x.t0)?;
    let rtt = best.t3 - best.t0;
    let mid = i128::from(best.t0) + i128::from(rtt / 2);
    Some(ClockOffset {
        offset_ns: (i128::from(best.t1) - mid) as i64,
        uncertainty_ns: rtt.div_ceil(2),
        rtt_ns: rtt,
        exchanges: xs.len() as u32,
        same_clock: false,
    })
}

/// One-way latency across two clocks, corrected by the offset, with its bound.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct OneWay {
    /// The receiver's figure minus the offset, ns.
    pub corrected_ns: i64,
    /// ± this many ns.
    pub bound_ns: u64,
    /// The bound is at least the latency itself: the figure says nothing.
    pub meaningless: bool,
}

/// Corrects a latency the receiver measured with its own clock against the sender's stamp.
/// `offset` is receiver − sender.
pub fn one_way(measured_ns: i64, offset: &ClockOffset) -> OneWay {
    let corrected = measured_ns.saturating_sub(offset.offset_ns);
    OneWay {
        corrected_ns: corrected,
        bound_ns: offset.uncertainty_ns,
        meaningless: !offset.same_clock && offset.uncertainty_ns >= corrected.unsigned_abs(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_smallest_round_trip_wins() {
        // The far end is 1,000,000 ns ahead. A slow exchange with an asymmetric delay would
        // say 1,040,000; the fast one is within its 5,000 ns bound.
        let xs = [
            Exchange {
                t0: 0,
                t1: 1_090_000,
                t3: 100_000,
            },
            Exchange {
                t0: 200_000,
                t1: 1_204_000,
                t3: 210_000,
            },
            Exchange {
                t0: 300_000,
                t1: 1_330_000,
                t3: 360_000,
            },
        ];
        let o = estimate(&xs).unwrap();
        assert_eq!(o.rtt_ns, 10_000);
        assert_eq!(o.offset_ns, 1_204_000 - 205_000);
        assert_eq!(o.uncertainty_ns, 5_000);
        assert!((o.offset_ns - 1_000_000).unsigned_abs() <= o.uncertainty_ns);
        assert_eq!(o.exchanges, 3);
    }

    #[test]
    fn a_clock_step_during_an_exchange_is_skipped() {
        let xs = [
            Exchange {
                t0: 500,
                t1: 10,
                t3: 100,
            },
            Exchange {
                t0: 1000,
                t1: 900,
                t3: 1200,
            },
        ];
        let o = estimate(&xs).unwrap();
        assert_eq!(o.rtt_ns, 200);
        assert_eq!(o.offset_ns, 900 - 1100);
        assert!(estimate(&xs[..1]).is_none());
        assert!(estimate(&[]).is_none());
    }

    #[test]
    fn behind_far_ends_give_negative_offsets() {
        let o = estimate(&[Exchange {
            t0: 10_000,
            t1: 4_000,
            t3: 10_002,
        }])
        .unwrap();
        assert_eq!(o.offset_ns, -6_001);
        assert_eq!(o.uncertainty_ns, 1);
    }

    #[test]
    fn one_way_latency_is_corrected_and_flagged_when_the_bound_swallows_it() {
        let o = ClockOffset {
            offset_ns: 1_000,
            uncertainty_ns: 300,
            rtt_ns: 600,
            exchanges: 8,
            same_clock: false,
        };
        let w = one_way(51_000, &o);
        assert_eq!(
            (w.corrected_ns, w.bound_ns, w.meaningless),
            (50_000, 300, false)
        );
        let w = one_way(1_200, &o);
        assert_eq!((w.corrected_ns, w.meaningless), (200, true));
        let same = ClockOffset::same_clock();
        let w = one_way(0, &same);
        assert!(!w.meaningless && w.bound_ns == 0);
    }
}
