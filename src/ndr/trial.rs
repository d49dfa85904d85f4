//! One trial: a child `upktgen run --json --rx-analyze --ratep R --duration T --pkt-size S
//! [the user's run options]` (its arguments made by the experiment core's
//! [`crate::experiment::Ask::argv`], run by its child runner: SIGTERM on Ctrl-C, SIGKILL
//! after the grace), and its report read into what the search needs, with the loss
//! attributed to the DUT, the receiver or the sender ([`classify`]).

use super::search::{Obs, Request};
pub use crate::experiment::figures::{Figures, Latency, ReportError, classify};
use crate::experiment::searching::TrialRecord;
use crate::experiment::trial::{Ask, Frames};
pub use crate::experiment::trial::{FCS, WIRE_OVERHEAD};
use crate::experiment::{Coords, Ran, Runner, Trial, child};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

/// Options of `run` the search sets itself.
pub const OWN_OPTIONS: [&str; 12] = [
    "--ratep",
    "--config-rate",
    "--rate",
    "--delay",
    "--duration",
    "--count",
    "--pkt-size",
    "--min-pkt-size",
    "--max-pkt-size",
    "--json",
    "--json-lines",
    "--pcap",
];

/// The child's arguments for a trial of frames of `frame` bytes (with FCS).
pub fn child_args(frame: u32, q: &Request, user: &[String]) -> Vec<String> {
    Ask::frames(
        Frames {
            frame,
            rate: q.rate,
            duration_s: q.duration_s,
            count: None,
        },
        user.to_vec(),
    )
    .argv()
}

/// What a child's end measured as a trial of `q`, with the child's wall time (a trial that
/// failed is an `Obs` with its error); None when Ctrl-C stopped it.
pub fn outcome(q: &Request, end: std::io::Result<child::ChildEnd>) -> Option<(Obs, Figures, f64)> {
    crate::experiment::figures::measured(q, end, |_| ()).map(|(o, f, (), s)| (o, f, s))
}

/// ndr's runner: each trial a child of `exe`, with a progress line before and after.
pub struct ChildTrials {
    pub exe: PathBuf,
    /// Trials run so far.
    pub n: usize,
}

impl Runner<TrialRecord> for ChildTrials {
    fn run(&mut self, t: &Trial, stop: &AtomicBool) -> Ran<TrialRecord> {
        let Coords::Search {
            size,
            round,
            request: q,
            ..
        } = t.coords
        else {
            unreachable!("ndr runs a search's trials")
        };
        self.n += 1;
        crate::errln!(
            "[ndr] size {size}: trial {} ({:?}) at {} for {} s",
            self.n,
            q.purpose,
            q.rate
                .map_or("the sender's ceiling (unpaced)".to_string(), |r| format!(
                    "{r:.0} pps"
                )),
            q.duration_s
        );
        let Some((o, f, s)) = outcome(&q, child::run_trial(&self.exe, t, stop)) else {
            return Ran::Interrupted(None);
        };
        if let Some(e) = &o.error {
            crate::errln!("[ndr]   failed: {}", crate::text::printable(e));
        } else {
            crate::errln!(
                "[ndr]   achieved {:.0} pps, sent {}, lost {} (DUT {}, receiver {}, sender {})",
                o.achieved,
                o.sent,
                o.dut_lost + o.receiver_lost + o.sender_lost,
                o.dut_lost,
                o.receiver_lost,
                o.sender_lost
            );
            let us = |l: Option<&Latency>| {
                l.map_or(String::new(), |l| {
                    format!(", latency p50 {:.0} us, p99 {:.0} us", l.p50_us, l.p99_us)
                })
            };
            for fl in &f.flows {
                crate::errln!(
                    "[ndr]     flow {}: sent {}, received {}{}",
                    crate::text::printable(&fl.name),
                    fl.sent,
                    fl.received,
                    us(fl.latency.as_ref())
                );
            }
            if !f.flows.is_empty() && f.latency.is_some() {
                crate::errln!("[ndr]     all flows together{}", us(f.latency.as_ref()));
            }
        }
        Ran::Done(TrialRecord {
            size,
            round,
            request: q,
            obs: o,
            figures: f,
            seconds: s,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ndr::search::Purpose;
    use serde_json::Value;

    fn q(rate: Option<f64>) -> Request {
        Request {
            rate,
            duration_s: 0.5,
            purpose: Purpose::Search,
        }
    }

    #[test]
    fn the_child_gets_the_trial_and_the_users_options_untouched() {
        let user = vec!["--backend".to_string(), "tx_ring".into()];
        let a = child_args(64, &q(Some(12345.4)), &user);
        let s = a.join(" ");
        assert!(s.starts_with("run --json --no-live --count 0 --duration 500ms --pkt-size 60 --rx-analyze --ratep 12345"), "{s}");
        assert!(s.ends_with("--backend tx_ring"));
        let a = child_args(1518, &q(None), &["--rx-analyze".to_string()]);
        assert!(!a.contains(&"--ratep".to_string()));
        assert_eq!(a.iter().filter(|x| *x == "--rx-analyze").count(), 1);
        // A far end is the receiver: no lab receiver is asked for beside it.
        for far in [
            vec![
                "--peer".to_string(),
                "netns:x".into(),
                "--peer-dev".into(),
                "e".into(),
            ],
            vec!["--rx-dev=eth2".to_string()],
        ] {
            let a = child_args(64, &q(None), &far);
            assert!(!a.iter().any(|x| x == "--rx-analyze"), "{a:?}");
        }
        assert!(a.contains(&"1514".to_string()));
    }

    fn report(sent: u64, seq_lost: u64, tail: i64, ring: u64, not_tx: i64) -> Value {
        serde_json::json!({
            "outcome": {"result": {"sent": sent, "elapsed_ns": 1_000_000_000u64},
                        "pacing": {"requested_pps": 1000.0, "achieved_pps": 990.0}},
            "system": {"cpu_all": {"us": 1.0, "sy": 2.0, "hi": 0.0, "si": 3.0, "id": 94.0},
                       "interrupts": 77, "softirq_net_rx": 5, "softirq_net_tx": 6},
            "rx_analysis": {"path": {"seq_lost": seq_lost, "tail_lost": tail,
                                     "socket_ring_drops": ring, "not_transmitted": not_tx},
                            "receiver": {"sink": {"latency": {"min_ns": 1000, "p50_ns": 2000,
                                        "p99_ns": 9000, "max_ns": 20000}}}}
        })
    }

    #[test]
    fn loss_is_attributed() {
        let (o, fig) = classify(&q(Some(1000.0)), &report(1000, 30, 5, 10, 0)).unwrap();
        assert_eq!((o.dut_lost, o.receiver_lost, o.sender_lost), (25, 10, 0));
        assert_eq!(o.achieved, 990.0);
        assert_eq!(fig.latency.unwrap().p99_us, 9.0);
        assert_eq!(fig.interrupts, Some(77));
        assert_eq!(fig.cpu.unwrap()[3], 3.0);
        // Frames never transmitted are the sender's; a negative tail is no loss.
        let (o, _) = classify(&q(Some(1000.0)), &report(1000, 4, -2, 0, 3)).unwrap();
        assert_eq!((o.dut_lost, o.receiver_lost, o.sender_lost), (1, 0, 3));
        // Unpaced: the achieved rate from the Result.
        let mut v = report(500, 0, 0, 0, 0);
        v["outcome"].as_object_mut().unwrap().remove("pacing");
        let (o, _) = classify(&q(None), &v).unwrap();
        assert_eq!(o.achieved, 500.0);
    }

    #[test]
    fn a_configs_loss_is_the_sum_of_its_flows() {
        let mut v = report(600, 0, 0, 4, 1);
        v["streams"] = serde_json::json!({"streams": [
            {"name": "a", "tx_frames": 100, "rx_frames": 100},
            {"name": "b", "tx_frames": 200, "rx_frames": 190},
            {"name": "c", "tx_frames": 300, "rx_frames": 270}]});
        let (o, fig) = classify(&q(Some(1000.0)), &v).unwrap();
        // 40 lost in all: 4 the receiver's, 1 the sender's, 35 the DUT's.
        assert_eq!((o.dut_lost, o.receiver_lost, o.sender_lost), (35, 4, 1));
        assert_eq!((fig.seq_lost, fig.tail_lost), (40, 0));
        let got: Vec<(&str, u64, u64)> = fig
            .flows
            .iter()
            .map(|f| (f.name.as_str(), f.sent, f.received))
            .collect();
        assert_eq!(got, [("a", 100, 100), ("b", 200, 190), ("c", 300, 270)]);
        // A flow no receiver counted: no trial figures.
        v["streams"]["streams"][1]["rx_frames"] = Value::Null;
        assert!(classify(&q(Some(1000.0)), &v).is_err());
    }

    /// A receiver's summary of latency, in ns.
    fn lat(min: u64, p50: u64, p99: u64, max: u64) -> Value {
        serde_json::json!({"count": 10, "min_ns": min, "mean_ns": p50 as f64, "p50_ns": p50,
                           "p90_ns": p99, "p99_ns": p99, "p999_ns": max, "max_ns": max})
    }

    #[test]
    fn a_configs_latency_is_the_union_of_its_flows_and_each_flows_own() {
        let mut v = report(600, 0, 0, 0, 0);
        v["rx_analysis"]["receiver"]["sink"]["latency"] = Value::Null;
        v["streams"] = serde_json::json!({"streams": [
            {"id": 0, "name": "fast", "tx_frames": 500, "rx_frames": 500},
            {"id": 1, "name": "slow", "tx_frames": 100, "rx_frames": 100},
            {"id": 2, "name": "none", "tx_frames": 0, "rx_frames": 0}]});
        // The receiver's table, in another order: each flow's latency is its stream id's;
        // the aggregate is the table's merged histograms (the union of the frames).
        v["rx_analysis"]["receiver"]["streams"] = serde_json::json!({
            "aggregate": {"streams": 3, "latency": lat(9_000, 10_000, 990_000, 1_000_000)},
            "streams": [
                {"id": 1, "latency": lat(900_000, 1_000_000, 1_000_000, 1_000_000)},
                {"id": 2, "latency": null},
                {"id": 0, "latency": lat(9_000, 10_000, 12_000, 13_000)}]});
        let (_, fig) = classify(&q(Some(1000.0)), &v).unwrap();
        let l = fig.latency.unwrap();
        // The union's p50 is the many fast frames' (10 µs), not a mean of the flows' p50s
        // (505 µs); its p99 the slow flow's.
        assert_eq!(
            (l.min_us, l.p50_us, l.p99_us, l.max_us),
            (9.0, 10.0, 990.0, 1000.0)
        );
        let per: Vec<Option<f64>> = fig
            .flows
            .iter()
            .map(|f| f.latency.map(|l| l.p50_us))
            .collect();
        assert_eq!(per, [Some(10.0), Some(1000.0), None]);
        assert_eq!(fig.flows[0].latency.unwrap().p99_us, 12.0);
        // A table that is not the trial's flows (another count of streams): no aggregate
        // latency rather than a wrong one; the flows keep their own.
        v["rx_analysis"]["receiver"]["streams"]["aggregate"]["streams"] = 4.into();
        let (_, fig) = classify(&q(Some(1000.0)), &v).unwrap();
        assert_eq!(fig.latency, None);
        assert!(fig.flows[1].latency.is_some());
        // Written and read back (a results file's line): the flows' latency is kept; a row
        // without one (ndr-trial/2) reads as none.
        let back: Figures = serde_json::from_value(serde_json::to_value(&fig).unwrap()).unwrap();
        assert_eq!(back, fig);
        let old: Figures = serde_json::from_value(serde_json::json!({
            "latency": null, "cpu": null, "interrupts": null, "softirq_net_rx": null,
            "softirq_net_tx": null, "seq_lost": 0, "tail_lost": 0, "ring_drops": 0,
            "not_transmitted": 0, "flows": [{"name": "a", "sent": 1, "received": 1}]}))
        .unwrap();
        assert_eq!(old.flows[0].latency, None);
    }

    #[test]
    fn a_report_without_a_receiver_is_an_error_that_says_why() {
        let mut v = report(10, 0, 0, 0, 0);
        v["rx_analysis"] = Value::Null;
        let e = classify(&q(Some(1.0)), &v).unwrap_err().to_string();
        assert!(e.contains("rx_analysis"), "{e}");
    }
}
