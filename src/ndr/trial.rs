//! One trial: a child `upktgen run --json --rx-analyze --ratep R --duration T --pkt-size S
//! [the user's run options]` (run by the sweep's child runner: SIGTERM on Ctrl-C, SIGKILL
//! after the grace), and its report read into what the search needs, with the loss
//! attributed to the DUT, the receiver or the sender.

use super::search::{Obs, Request};
use crate::sweep::exec::{self, STOP_GRACE};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;
use std::sync::atomic::AtomicBool;

/// RFC 2544 frame sizes count the 4-byte FCS; pktgen's pkt_size does not.
pub const FCS: u32 = 4;
/// Preamble, start delimiter and inter-frame gap: what a frame takes on the wire beyond its bytes.
pub const WIRE_OVERHEAD: u32 = 20;

/// Options of `run` the search sets itself.
pub const OWN_OPTIONS: [&str; 11] = [
    "--ratep",
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
    let mut a: Vec<String> = vec![
        "run".into(),
        "--json".into(),
        "--no-live".into(),
        "--count".into(),
        "0".into(),
        "--duration".into(),
        format!("{}ms", (q.duration_s * 1000.0).round().max(1.0) as u64),
        "--pkt-size".into(),
        (frame - FCS).to_string(),
    ];
    // The lab's own receiver, unless the run options name another: a far end (--peer) or a
    // second local interface (--rx-dev) is the receiver then.
    let named = |o: &str| {
        user.iter()
            .any(|x| x == o || x.starts_with(&format!("{o}=")))
    };
    if !["--rx-analyze", "--peer", "--rx-dev"]
        .iter()
        .any(|o| named(o))
    {
        a.push("--rx-analyze".into());
    }
    if let Some(r) = q.rate {
        a.push("--ratep".into());
        a.push(format!("{}", r.round().max(1.0) as u64));
    }
    a.extend(user.iter().cloned());
    a
}

/// Latency at a trial (µs).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub min_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
}

/// What else a trial's report says: latency, CPU, interrupts, the losses by name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Figures {
    pub latency: Option<Latency>,
    /// top's shares over the trial, all CPUs: us, sy, hi, si, id.
    pub cpu: Option<[f64; 5]>,
    pub interrupts: Option<u64>,
    pub softirq_net_rx: Option<u64>,
    pub softirq_net_tx: Option<u64>,
    pub seq_lost: u64,
    pub tail_lost: u64,
    pub ring_drops: u64,
    pub not_transmitted: u64,
}

fn u(v: &Value, path: &[&str]) -> Option<u64> {
    let mut x = v;
    for k in path {
        x = x.get(k)?;
    }
    x.as_u64().or_else(|| x.as_i64().map(|i| i.max(0) as u64))
}

fn f(v: &Value, path: &[&str]) -> Option<f64> {
    let mut x = v;
    for k in path {
        x = x.get(k)?;
    }
    x.as_f64()
}

/// Why a run's report cannot be read as a trial's figures.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReportError {
    #[error("no outcome.result.sent")]
    NoSent,
    #[error(
        "the run's report has no receiver figures (rx_analysis): ndr needs a receiver that counts sequence numbers (--rx-analyze)"
    )]
    NoReceiver,
}

/// Reads a run's JSON: the achieved rate, and the loss (sequence holes and the tail after the
/// last received) split into the receiver's own drops (its socket or ring), the sender's
/// (counted as sent, never transmitted) and the rest, the path's: the DUT's.
pub fn classify(q: &Request, v: &Value) -> Result<(Obs, Figures), ReportError> {
    let sent = u(v, &["outcome", "result", "sent"]).ok_or(ReportError::NoSent)?;
    let elapsed = u(v, &["outcome", "result", "elapsed_ns"]).unwrap_or(0);
    let achieved = f(v, &["outcome", "pacing", "achieved_pps"]).unwrap_or(if elapsed == 0 {
        0.0
    } else {
        sent as f64 * 1e9 / elapsed as f64
    });
    let path = v
        .get("rx_analysis")
        .and_then(|r| r.get("path"))
        .filter(|p| !p.is_null())
        .ok_or(ReportError::NoReceiver)?;
    let seq_lost = u(path, &["seq_lost"]).unwrap_or(0);
    let tail_lost = u(path, &["tail_lost"]).unwrap_or(0);
    let ring_drops =
        u(path, &["socket_ring_drops"]).unwrap_or(0) + u(path, &["xdp_unaccounted"]).unwrap_or(0);
    let not_transmitted = u(path, &["not_transmitted"]).unwrap_or(0);
    let lost = seq_lost + tail_lost;
    let receiver_lost = ring_drops.min(lost);
    let sender_lost = not_transmitted.min(lost - receiver_lost);
    let obs = Obs {
        requested: q.rate,
        duration_s: q.duration_s,
        achieved,
        sent,
        dut_lost: lost - receiver_lost - sender_lost,
        receiver_lost,
        sender_lost,
        error: None,
    };
    let lat = v
        .pointer("/rx_analysis/receiver/sink/latency")
        .filter(|l| !l.is_null());
    let us = |l: &Value, k: &str| f(l, &[k]).map(|x| x / 1000.0);
    let latency = lat.and_then(|l| {
        Some(Latency {
            min_us: us(l, "min_ns")?,
            p50_us: us(l, "p50_ns")?,
            p99_us: us(l, "p99_ns")?,
            max_us: us(l, "max_ns")?,
        })
    });
    let cpu = v.pointer("/system/cpu_all").and_then(|c| {
        Some([
            f(c, &["us"])?,
            f(c, &["sy"])?,
            f(c, &["hi"])?,
            f(c, &["si"])?,
            f(c, &["id"])?,
        ])
    });
    let fig = Figures {
        latency,
        cpu,
        interrupts: u(v, &["system", "interrupts"]),
        softirq_net_rx: u(v, &["system", "softirq_net_rx"]),
        softirq_net_tx: u(v, &["system", "softirq_net_tx"]),
        seq_lost,
        tail_lost,
        ring_drops,
        not_transmitted,
    };
    Ok((obs, fig))
}

/// Runs one trial as a child of `exe`: what it measured, with the child's wall time (a trial
/// that failed is an `Obs` with its error); None when Ctrl-C stopped it.
pub fn run(
    exe: &Path,
    frame: u32,
    q: &Request,
    user: &[String],
    stop: &AtomicBool,
) -> Option<(Obs, Figures, f64)> {
    let args = child_args(frame, q, user);
    let failed = |e: String, secs: f64| {
        Some((
            Obs {
                requested: q.rate,
                duration_s: q.duration_s,
                error: Some(e),
                ..Obs::default()
            },
            Figures::default(),
            secs,
        ))
    };
    let end = match exec::run_child(exe, &args, stop, STOP_GRACE) {
        Ok(e) => e,
        Err(e) => return failed(format!("could not start upktgen: {e}"), 0.0),
    };
    if end.killed || matches!(end.code, Some(130) | Some(143)) {
        return None;
    }
    if end.code != Some(0) {
        return failed(exec::message_of(&end.stderr, end.code), end.seconds);
    }
    let v: Value = match serde_json::from_slice(&end.stdout) {
        Ok(v) => v,
        Err(e) => return failed(format!("the run's output is not JSON: {e}"), end.seconds),
    };
    match classify(q, &v) {
        Ok((o, fig)) => Some((o, fig, end.seconds)),
        Err(e) => failed(e.to_string(), end.seconds),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ndr::search::Purpose;

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
    fn a_report_without_a_receiver_is_an_error_that_says_why() {
        let mut v = report(10, 0, 0, 0, 0);
        v["rx_analysis"] = Value::Null;
        let e = classify(&q(Some(1.0)), &v).unwrap_err().to_string();
        assert!(e.contains("rx_analysis"), "{e}");
    }
}
