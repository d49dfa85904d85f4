//! One trial of the suite: a child `upktgen run --json` (its arguments made by the experiment
//! core's [`crate::experiment::Ask::argv`], run by its child runner), its report read as ndr
//! reads it (the loss attributed to the DUT, the receiver or the sender) and its delays, with
//! RFC 8219's PDV and IPDV, from the receiver's sink ([`delay`]).

use crate::experiment::child;
use crate::experiment::figures::Figures;
use crate::experiment::search::{Obs, Request};
use crate::experiment::suite::{Delay, Record, Test};
use crate::experiment::{Coords, Ran, Runner, Trial};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

/// The delays of a run's report (`rx_analysis.receiver.sink`: the lab's receiver or the far
/// end's), in µs; None when the receiver recorded none.
pub fn delay(v: &Value) -> Option<Delay> {
    let sink = v.pointer("/rx_analysis/receiver/sink")?;
    let l = sink.get("latency").filter(|l| !l.is_null())?;
    let us = |x: &Value, k: &str| x.get(k).and_then(Value::as_f64).map(|n| n / 1000.0);
    let ipdv = sink.get("ipdv").filter(|x| !x.is_null());
    let min = us(l, "min_ns")?;
    let p999 = us(l, "p999_ns")?;
    Some(Delay {
        count: l.get("count").and_then(Value::as_u64)?,
        min_us: min,
        mean_us: us(l, "mean_ns")?,
        p50_us: us(l, "p50_ns")?,
        p99_us: us(l, "p99_ns")?,
        p999_us: p999,
        max_us: us(l, "max_ns")?,
        pdv_us: (p999 - min).max(0.0),
        ipdv_p50_us: ipdv.and_then(|x| us(x, "p50_ns")),
        ipdv_p999_us: ipdv.and_then(|x| us(x, "p999_ns")),
        ipdv_max_us: ipdv.and_then(|x| us(x, "max_ns")),
    })
}

/// What a child's end measured as a trial of `q`, with its delays: None when Ctrl-C stopped
/// it; a trial that failed is an `Obs` with its error.
pub fn outcome(
    q: &Request,
    end: std::io::Result<child::ChildEnd>,
) -> Option<(Obs, Figures, Option<Delay>, f64)> {
    crate::experiment::figures::measured(q, end, delay)
}

/// rfc2544's runner: each trial a child of `exe`, with a progress line before and after.
pub struct ChildTrials {
    pub exe: PathBuf,
    /// Trials run so far.
    pub n: usize,
}

impl Runner<Record> for ChildTrials {
    fn run(&mut self, t: &Trial, stop: &AtomicBool) -> Ran<Record> {
        let Coords::Test {
            test,
            size,
            rep,
            step,
            request: q,
            burst,
        } = t.coords
        else {
            unreachable!("rfc2544 runs a suite's trials")
        };
        let Some(kind) = Test::from_name(test) else {
            unreachable!("the suite's tests")
        };
        self.n += 1;
        crate::errln!(
            "[rfc2544] size {size} {test}: trial {} at {}{} for {} s",
            self.n,
            q.rate
                .map_or("the sender's ceiling (unpaced)".to_string(), |r| format!(
                    "{r:.0} pps"
                )),
            burst.map_or(String::new(), |n| format!(", a burst of {n} frames")),
            q.duration_s
        );
        let Some((o, figures, delay, seconds)) = outcome(&q, child::run_trial(&self.exe, t, stop))
        else {
            return Ran::Interrupted(None);
        };
        match &o.error {
            Some(e) => crate::errln!("[rfc2544]   failed: {}", crate::text::printable(e)),
            None => crate::errln!(
                "[rfc2544]   achieved {:.0} pps, sent {}, lost {} (DUT {}, receiver {}, sender {})",
                o.achieved,
                o.sent,
                o.dut_lost + o.receiver_lost + o.sender_lost,
                o.dut_lost,
                o.receiver_lost,
                o.sender_lost
            ),
        }
        Ran::Done(Record {
            test: kind,
            size,
            rep,
            step,
            request: q,
            burst,
            obs: o,
            figures,
            delay,
            seconds,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_and_their_variation_are_read_from_the_sink() {
        let v = serde_json::json!({"rx_analysis": {"receiver": {"sink": {
            "latency": {"count": 10, "min_ns": 2000, "mean_ns": 5000.0, "p50_ns": 4000,
                        "p90_ns": 6000, "p99_ns": 9000, "p999_ns": 12000, "max_ns": 15000},
            "ipdv": {"count": 9, "mean_ns": 800.0, "p50_ns": 500, "p99_ns": 2000,
                     "p999_ns": 3000, "max_ns": 3500}}}}});
        let d = delay(&v).unwrap();
        assert_eq!(
            (d.min_us, d.p50_us, d.p999_us, d.max_us),
            (2.0, 4.0, 12.0, 15.0)
        );
        assert_eq!(d.pdv_us, 10.0);
        assert_eq!(d.ipdv_p999_us, Some(3.0));
        let mut v = v;
        v["rx_analysis"]["receiver"]["sink"]["ipdv"] = Value::Null;
        assert_eq!(delay(&v).unwrap().ipdv_max_us, None);
        v["rx_analysis"]["receiver"]["sink"]["latency"] = Value::Null;
        assert!(delay(&v).is_none());
    }

    /// RFC 8219 §7.3.1 (after RFC 5481 §4.2) defines PDV as the 99.9th percentile of a
    /// trial's one-way delays less their minimum, and §7.3.2 IPDV as the difference of the
    /// delays of consecutive packets. Frames 1..=1000 delayed 1..=1000 µs: the minimum is
    /// 1 µs; 99.9 % of 1000 delays is 999 of them, so the 99.9th percentile is the 999th
    /// smallest, 999 µs; PDV = 999 − 1 = 998 µs. Every consecutive pair differs by 1 µs: IPDV
    /// is 1 µs at its median, its 99.9th percentile and its maximum. Through the receiver's
    /// real sink (an HDR histogram of 3 significant digits: 999 µs is held to 1 µs) and
    /// this module's reading of its report.
    #[test]
    fn pdv_and_ipdv_are_rfc_8219_s_from_the_delays_by_hand() {
        use crate::rx::frame::{FlowAddr, PktgenFrame};
        use crate::rx::sink::{FlowKeyMode, Sink};
        use std::net::Ipv4Addr;
        let mut s = Sink::new(FlowKeyMode::Addr, Some(1));
        for seq in 1..=1000u32 {
            let f = PktgenFrame {
                addr: FlowAddr {
                    src_ip: Ipv4Addr::new(10, 0, 0, 1),
                    dst_ip: Ipv4Addr::new(10, 0, 0, 2),
                    src_port: 9,
                    dst_port: 9,
                    vlan: None,
                },
                hdr: crate::wire::PktgenHdr {
                    seq,
                    tv_sec: 10,
                    tv_usec: 0,
                },
            };
            // Sent at 10 s, received seq µs later.
            s.record(&f, Some(10_000_000_000 + u64::from(seq) * 1000));
        }
        let v = serde_json::json!({"rx_analysis": {"receiver": {"sink": s.report(false)}}});
        let d = delay(&v).unwrap();
        assert_eq!(d.count, 1000);
        assert_eq!(d.min_us, 1.0);
        assert!((d.p999_us - 999.0).abs() <= 1.0, "{d:?}");
        assert!(
            (d.pdv_us - 998.0).abs() <= 1.0,
            "PDV {} us, not 998: {d:?}",
            d.pdv_us
        );
        for ipdv in [d.ipdv_p50_us, d.ipdv_p999_us, d.ipdv_max_us] {
            assert_eq!(ipdv, Some(1.0), "{d:?}");
        }
    }
}
