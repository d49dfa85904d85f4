//! What a search's trial measured, read from the run's JSON report: the achieved rate and
//! the loss attributed to the DUT, the receiver or the sender ([`classify`]), with the
//! latency, CPU and interrupt figures beside it.

use super::search::{Obs, Request};
use serde::{Deserialize, Serialize};
use serde_json::Value;

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
    /// A config's trial (`run --config`): each flow's frames sent and received at its
    /// receiving port; the trial's loss is their sum.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flows: Vec<FlowCount>,
}

/// One flow of a config's trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlowCount {
    pub name: String,
    pub sent: u64,
    pub received: u64,
    /// The one-way latency of its received frames (the receiver's table for its stream
    /// id), when any was timed; absent in trials of ndr-trial/2 and before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<Latency>,
}

/// A latency summary of the receiver's report (`min_ns`, `p50_ns`, `p99_ns`, `max_ns`) in µs;
/// None when absent or null.
fn latency_of(l: Option<&Value>) -> Option<Latency> {
    let l = l.filter(|l| !l.is_null())?;
    let us = |k: &str| f(l, &[k]).map(|x| x / 1000.0);
    Some(Latency {
        min_us: us("min_ns")?,
        p50_us: us("p50_ns")?,
        p99_us: us("p99_ns")?,
        max_us: us("max_ns")?,
    })
}

/// A config's flows in a run's report (`streams.streams`, the sender's, each with its
/// receiving port's count), each with its latency from the receiver's table of streams
/// (`rx_analysis.receiver.streams.streams`, by stream id): None without a config; an error
/// when a flow has no receiver's count.
fn flows_of(v: &Value) -> Option<Result<Vec<FlowCount>, ReportError>> {
    let st = v.pointer("/streams/streams")?.as_array()?;
    let rx = v
        .pointer("/rx_analysis/receiver/streams/streams")
        .and_then(Value::as_array);
    let rx_latency = |id: Option<u64>| {
        let id = id?;
        let s = rx?.iter().find(|s| u(s, &["id"]) == Some(id))?;
        latency_of(s.get("latency"))
    };
    Some(
        st.iter()
            .map(|s| {
                Ok(FlowCount {
                    name: s["name"].as_str().unwrap_or_default().to_string(),
                    sent: u(s, &["tx_frames"]).unwrap_or(0),
                    received: u(s, &["rx_frames"]).ok_or(ReportError::NoReceiver)?,
                    latency: rx_latency(u(s, &["id"])),
                })
            })
            .collect(),
    )
}

/// A config's trial's latency: over every frame its flows' receiving port timed, the
/// percentiles of their union. The receiver keeps a histogram per stream and merges them
/// into its table's aggregate (`rx_analysis.receiver.streams.aggregate`); percentiles of the
/// flows' percentiles (a mean of p99s, say) would be no percentile of the trial's frames, so
/// only the merged figure is taken, and only when the table is the trial's flows (as many
/// streams as flows): otherwise none.
fn union_latency(v: &Value, flows: usize) -> Option<Latency> {
    let t = v.pointer("/rx_analysis/receiver/streams")?;
    let a = t.get("aggregate")?;
    (u(a, &["streams"]) == Some(flows as u64))
        .then(|| latency_of(a.get("latency")))
        .flatten()
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
    let flows = flows_of(v).transpose()?.unwrap_or_default();
    // A config's flows: what each sent and its receiving port did not count (its tail
    // included), summed; else the one stream's sequence holes and tail.
    let (seq_lost, tail_lost) = if flows.is_empty() {
        (
            u(path, &["seq_lost"]).unwrap_or(0),
            u(path, &["tail_lost"]).unwrap_or(0),
        )
    } else {
        let lost = flows.iter().map(|f| f.sent.saturating_sub(f.received));
        (lost.sum(), 0)
    };
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
    // One stream: the sink's figures; a config's flows: the union of theirs.
    let latency = if flows.is_empty() {
        latency_of(v.pointer("/rx_analysis/receiver/sink/latency"))
    } else {
        union_latency(v, flows.len())
    };
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
        flows,
    };
    Ok((obs, fig))
}

/// What a child's end measured as a trial of `q`, with what `extra` reads of its report
/// (the default when the trial failed) and the child's wall time; a trial that failed is an
/// `Obs` with its error; None when Ctrl-C stopped it. ndr's and rfc2544's trials read their
/// children through it.
pub fn measured<T: Default>(
    q: &Request,
    end: std::io::Result<super::child::ChildEnd>,
    extra: impl FnOnce(&Value) -> T,
) -> Option<(Obs, Figures, T, f64)> {
    let failed = |e: String, secs: f64| {
        Some((
            Obs {
                requested: q.rate,
                duration_s: q.duration_s,
                error: Some(e),
                ..Obs::default()
            },
            Figures::default(),
            T::default(),
            secs,
        ))
    };
    let (v, secs) = match super::child::report_of(end)? {
        Ok(r) => r,
        Err((e, secs)) => return failed(e, secs),
    };
    match classify(q, &v) {
        Ok((o, fig)) => Some((o, fig, extra(&v), secs)),
        Err(e) => failed(e.to_string(), secs),
    }
}
