//! pktgen's `Result:` line, with the kernel's integer arithmetic.
//!
//! The kernel computes, for a finished run:
//! `pps = sent * 1e9 / elapsed_ns`, `bps = pps * 8 * pkt_size`, `Mb/sec = bps / 1e6`,
//! all in unsigned integer arithmetic (truncating), and prints the elapsed, busy and idle
//! times in microseconds. [`PktgenResult`] holds the raw figures and [`PktgenResult::lines`]
//! renders the two lines exactly as pktgen shows them after `Result: `.

use serde::{Deserialize, Serialize};

/// The raw figures of one finished (or interrupted) run, as pktgen reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PktgenResult {
    /// Wall-clock time from the first packet to the end of the final wait for completions.
    pub elapsed_ns: u64,
    /// Part of `elapsed_ns` during which the sender was blocked (see `--help`).
    pub idle_ns: u64,
    /// Packets the kernel accepted.
    pub sent: u64,
    /// Frame size in bytes without FCS (pktgen's `pkt_size`).
    pub pkt_size: u32,
    /// pktgen's `frags` (always 0 here: frames are linear).
    pub frags: u32,
    /// Packets the kernel refused.
    pub errors: u64,
    /// With IMIX: bytes of all frames, from which bps is computed (as the kernel does; a
    /// min..max size walk keeps `pps * 8 * pkt_size` with the last size, also as the kernel).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub imix_bytes: Option<u64>,
    /// A combined Result of senders whose frame sizes differ: the smallest and the largest
    /// (the line then reads `(MIN..MAXbyte,...)`; `pkt_size` is the mean frame size and
    /// `imix_bytes` the bytes of all frames). Not in the JSON, whose `imix_bytes` says it.
    #[serde(skip)]
    pub size_range: Option<(u32, u32)>,
}

impl PktgenResult {
    /// Several results as one, as a multi-thread run adds up its threads (or a script its
    /// devices): packets and errors add up, idle is the mean (never above the elapsed);
    /// `elapsed_ns` is the caller's (the longest thread's, or from the earliest start to the
    /// latest end). One frame size: that size. Sizes that vary (senders of different sizes,
    /// or IMIX): bps comes from the bytes of all frames (`imix_bytes`, as IMIX's does); when
    /// the senders' sizes differ, `pkt_size` is the mean frame size and the line gives the
    /// range ([`PktgenResult::size_range`]).
    pub fn add_up(all: &[PktgenResult], elapsed_ns: u64) -> PktgenResult {
        let n = (all.len() as u64).max(1);
        let sent: u64 = all.iter().map(|r| r.sent).sum();
        let lo = all
            .iter()
            .map(|r| r.size_range.map_or(r.pkt_size, |(l, _)| l))
            .min();
        let hi = all
            .iter()
            .map(|r| r.size_range.map_or(r.pkt_size, |(_, h)| h))
            .max();
        let size_range = lo.zip(hi).filter(|(l, h)| l != h);
        let varied = size_range.is_some() || all.iter().any(|r| r.imix_bytes.is_some());
        let imix_bytes = varied.then(|| all.iter().map(PktgenResult::bytes).sum::<u64>());
        let pkt_size = match (size_range, imix_bytes) {
            (Some(_), Some(b)) if sent > 0 => u32::try_from(b / sent).unwrap_or(u32::MAX),
            _ => all.first().map_or(0, |r| r.pkt_size),
        };
        PktgenResult {
            elapsed_ns,
            idle_ns: (all.iter().map(|r| r.idle_ns).sum::<u64>() / n).min(elapsed_ns),
            sent,
            pkt_size,
            frags: 0,
            errors: all.iter().map(|r| r.errors).sum(),
            imix_bytes,
            size_range,
        }
    }

    /// Bytes of the frames sent: IMIX's count, else `sent * pkt_size`.
    pub fn bytes(&self) -> u64 {
        self.imix_bytes
            .unwrap_or(self.sent.saturating_mul(u64::from(self.pkt_size)))
    }

    /// Busy time: elapsed minus idle (never negative).
    pub fn busy_ns(&self) -> u64 {
        self.elapsed_ns.saturating_sub(self.idle_ns)
    }

    /// Packets per second, truncated as the kernel does; 0 for a zero elapsed time.
    pub fn pps(&self) -> u64 {
        if self.elapsed_ns == 0 {
            return 0;
        }
        // u128: sent * 1e9 overflows u64 past 1.8e10 packets.
        (u128::from(self.sent) * 1_000_000_000 / u128::from(self.elapsed_ns)) as u64
    }

    /// Bits per second of frame payload (`pps * 8 * pkt_size`): not link utilisation.
    pub fn bps(&self) -> u64 {
        if let Some(bytes) = self.imix_bytes {
            if self.elapsed_ns == 0 {
                return 0;
            }
            return (u128::from(bytes) * 8 * 1_000_000_000 / u128::from(self.elapsed_ns)) as u64;
        }
        self.pps() * 8 * u64::from(self.pkt_size)
    }

    /// `bps / 1e6`, truncated.
    pub fn mbps(&self) -> u64 {
        self.bps() / 1_000_000
    }

    /// The two lines pktgen prints after `Result: ` (second line indented by two spaces).
    pub fn lines(&self) -> String {
        // Microseconds are derived from the ns figures; busy is computed in us so that
        // c + d always equals the elapsed figure printed, as in the kernel's output.
        let elapsed_us = self.elapsed_ns / 1000;
        let idle_us = self.idle_ns / 1000;
        let busy_us = elapsed_us.saturating_sub(idle_us);
        let size = match self.size_range {
            Some((lo, hi)) => format!("{lo}..{hi}"),
            None => self.pkt_size.to_string(),
        };
        format!(
            "OK: {elapsed_us}(c{busy_us}+d{idle_us}) usec, {} ({size}byte,{}frags)\n  {}pps {}Mb/sec ({}bps) errors: {}",
            self.sent,
            self.frags,
            self.pps(),
            self.mbps(),
            self.bps(),
            self.errors
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seed(elapsed_us: u64, idle_us: u64) -> PktgenResult {
        PktgenResult {
            elapsed_ns: elapsed_us * 1000,
            idle_ns: idle_us * 1000,
            sent: 4_000_000,
            pkt_size: 60,
            frags: 0,
            errors: 0,
            imix_bytes: None,
            size_range: None,
        }
    }

    /// The six iterations of the seed, raw values in, the seed's two lines out, byte for byte.
    #[test]
    fn seed_result_lines_byte_for_byte() {
        let cases = [
            (
                28910148,
                118564,
                "OK: 28910148(c28791584+d118564) usec, 4000000 (60byte,0frags)\n  138359pps 66Mb/sec (66412320bps) errors: 0",
            ),
            (
                26947273,
                4309931,
                "OK: 26947273(c22637342+d4309931) usec, 4000000 (60byte,0frags)\n  148438pps 71Mb/sec (71250240bps) errors: 0",
            ),
            (
                26937148,
                5281143,
                "OK: 26937148(c21656005+d5281143) usec, 4000000 (60byte,0frags)\n  148493pps 71Mb/sec (71276640bps) errors: 0",
            ),
            (
                28246751,
                77315,
                "OK: 28246751(c28169436+d77315) usec, 4000000 (60byte,0frags)\n  141609pps 67Mb/sec (67972320bps) errors: 0",
            ),
            (
                26935554,
                1876682,
                "OK: 26935554(c25058872+d1876682) usec, 4000000 (60byte,0frags)\n  148502pps 71Mb/sec (71280960bps) errors: 0",
            ),
            (
                26933751,
                3785597,
                "OK: 26933751(c23148154+d3785597) usec, 4000000 (60byte,0frags)\n  148512pps 71Mb/sec (71285760bps) errors: 0",
            ),
        ];
        for (elapsed, idle, want) in cases {
            assert_eq!(seed(elapsed, idle).lines(), want);
        }
    }

    #[test]
    fn arithmetic_truncates_like_the_kernel() {
        let r = PktgenResult {
            elapsed_ns: 3,
            idle_ns: 0,
            sent: 2,
            pkt_size: 1,
            frags: 0,
            errors: 0,
            imix_bytes: None,
            size_range: None,
        };
        // 2e9 / 3 = 666666666.67 -> 666666666
        assert_eq!(r.pps(), 666_666_666);
        assert_eq!(r.bps(), 5_333_333_328);
        assert_eq!(r.mbps(), 5_333);
    }

    /// IMIX: bps from the bytes of all frames, as the kernel; pps unchanged.
    #[test]
    fn imix_bps_from_bytes() {
        let r = PktgenResult {
            elapsed_ns: 1_000_000_000,
            idle_ns: 0,
            sent: 3,
            pkt_size: 1500,
            frags: 0,
            errors: 0,
            imix_bytes: Some(64 + 576 + 1500),
            size_range: None,
        };
        assert_eq!(r.pps(), 3);
        assert_eq!(r.bps(), 2140 * 8);
        assert!(r.lines().contains("3pps 0Mb/sec (17120bps)"));
    }

    #[test]
    fn zero_elapsed_and_idle_above_elapsed_do_not_panic() {
        let r = PktgenResult {
            elapsed_ns: 0,
            idle_ns: 10,
            sent: 5,
            pkt_size: 60,
            frags: 0,
            errors: 1,
            imix_bytes: None,
            size_range: None,
        };
        assert_eq!(r.pps(), 0);
        assert_eq!(r.busy_ns(), 0);
        assert!(
            r.lines()
                .starts_with("OK: 0(c0+d0) usec, 5 (60byte,0frags)")
        );
        assert!(r.lines().ends_with("errors: 1"));
    }

    #[test]
    fn adding_up_sums_packets_and_averages_idle() {
        let a = PktgenResult {
            idle_ns: 10,
            sent: 7,
            errors: 1,
            ..seed(100, 0)
        };
        let b = PktgenResult {
            idle_ns: 31,
            sent: 5,
            ..seed(100, 0)
        };
        let t = PktgenResult::add_up(&[a, b], 2_000);
        assert_eq!(
            (t.sent, t.errors, t.idle_ns, t.elapsed_ns),
            (12, 1, 20, 2_000)
        );
        assert_eq!((t.pkt_size, t.imix_bytes), (60, None));
        // Idle never above the elapsed; IMIX bytes only when every part has them.
        assert_eq!(PktgenResult::add_up(&[a, b], 5).idle_ns, 5);
        let i = PktgenResult {
            imix_bytes: Some(100),
            ..a
        };
        assert_eq!(PktgenResult::add_up(&[i, i], 1).imix_bytes, Some(200));
        // An IMIX part beside one of a single size: the bytes of both.
        assert_eq!(
            PktgenResult::add_up(&[i, b], 1).imix_bytes,
            Some(100 + 5 * 60)
        );
    }

    /// Two devices on one thread, 1,000 frames of 60 bytes and 500 of 1,000 bytes in
    /// 4,915 us: 560,000 bytes, 911 Mb/s (not 1,500 x 60 bytes, 146 Mb/s), and the line
    /// says the sizes vary.
    #[test]
    fn senders_of_different_sizes_add_up_their_bytes() {
        let part = |sent, pkt_size| PktgenResult {
            elapsed_ns: 4_915_000,
            idle_ns: 0,
            sent,
            pkt_size,
            frags: 0,
            errors: 0,
            imix_bytes: None,
            size_range: None,
        };
        let t = PktgenResult::add_up(&[part(1000, 60), part(500, 1000)], 4_915_000);
        assert_eq!(t.sent, 1500);
        assert_eq!(t.imix_bytes, Some(560_000));
        assert_eq!(t.size_range, Some((60, 1000)));
        assert_eq!(t.pkt_size, 373, "the mean frame size");
        assert_eq!(t.pps(), 305_188);
        assert_eq!(t.bps(), 911_495_422);
        assert_eq!(
            t.lines(),
            "OK: 4915(c4915+d0) usec, 1500 (60..1000byte,0frags)\n  305188pps 911Mb/sec (911495422bps) errors: 0"
        );
        // What the line said before: 1,500 frames of the first's 60 bytes.
        let old = PktgenResult {
            imix_bytes: None,
            size_range: None,
            pkt_size: 60,
            ..t
        };
        assert_eq!(old.mbps(), 146);
        // Adding up again (merge over hosts) keeps the range and the bytes.
        let again = PktgenResult::add_up(&[t, part(10, 9000)], 4_915_000);
        assert_eq!(again.size_range, Some((60, 9000)));
        assert_eq!(again.imix_bytes, Some(560_000 + 90_000));
        // The same size everywhere: the line and the arithmetic are pktgen's.
        let same = PktgenResult::add_up(&[part(1000, 60), part(500, 60)], 4_915_000);
        assert_eq!(
            (same.size_range, same.imix_bytes, same.pkt_size),
            (None, None, 60)
        );
        assert!(same.lines().contains(", 1500 (60byte,0frags)"));
    }

    #[test]
    fn huge_counts_do_not_overflow() {
        let r = PktgenResult {
            elapsed_ns: 1_000_000_000,
            idle_ns: 0,
            sent: 100_000_000_000,
            pkt_size: 60,
            frags: 0,
            errors: 0,
            imix_bytes: None,
            size_range: None,
        };
        assert_eq!(r.pps(), 100_000_000_000);
    }
}
