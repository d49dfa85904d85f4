//! get_metrics: the model's port and flow metrics from the server's state. Counts are the
//! launches' (frames and bytes with their FCS); rates are the supervisor's, over the last
//! second of samples; `loss` is the percentage of the frames expected at the receiving
//! ports (sent × `rx_tx_ratio`) that did not arrive; timestamps and latency come with the
//! final figures of a launch.

use serde::Serialize;
use serde_json::Value;

use super::error::ApiError;
use super::model::{
    FlowMetric, FlowMetricsRequest, FlowTransmit, MetricLatency, MetricTimestamp, PortCaptureState,
    PortMetric, PortMetricsRequest, PortTransmit,
};
use super::state::{Counts, FlowState, Phase, Rates, Shared};
use crate::otg::{Duration, Flow};

/// Preamble and least gap per frame on the wire: a layer-1 rate counts them.
const L1_OVERHEAD: f64 = 20.0;

/// Whether flow `f` sent all it will (a count of frames reached), whatever the others do.
fn done(f: &Flow, s: &FlowState) -> bool {
    let sent = s.total().tx_frames;
    match f.duration {
        Duration::FixedPackets { packets, .. } => sent >= u64::from(packets),
        Duration::Burst {
            bursts, packets, ..
        } if bursts > 0 => sent >= u64::from(bursts) * u64::from(packets),
        _ => false,
    }
}

fn flow_transmit(phase: Phase, f: &Flow, s: &FlowState) -> FlowTransmit {
    match phase {
        Phase::Idle => FlowTransmit::Stopped,
        Phase::Paused => FlowTransmit::Paused,
        Phase::Starting | Phase::Running | Phase::Stopping if done(f, s) => FlowTransmit::Stopped,
        Phase::Starting | Phase::Running | Phase::Stopping => FlowTransmit::Started,
    }
}

/// `v` serialized with only the members `keep` names (and `name`).
fn only<T: Serialize>(v: &T, keep: Option<Vec<String>>) -> Value {
    let mut v = serde_json::to_value(v).unwrap_or(Value::Null);
    if let (Some(keep), Some(o)) = (keep, v.as_object_mut()) {
        o.retain(|k, _| k == "name" || keep.iter().any(|c| c == k));
    }
    v
}

fn names<T: Serialize>(cols: &Option<Vec<T>>) -> Option<Vec<String>> {
    let cols = cols.as_ref().filter(|c| !c.is_empty())?;
    Some(
        cols.iter()
            .filter_map(|c| serde_json::to_value(c).ok()?.as_str().map(str::to_string))
            .collect(),
    )
}

/// Checks that every name of `asked` is in `known`.
fn check_names(at: &str, kind: &str, asked: &[String], known: &[&str]) -> Result<(), ApiError> {
    match asked.iter().find(|n| !known.contains(&n.as_str())) {
        Some(n) => Err(ApiError::bad(format!("{at}: no {kind} named {n:?}"))),
        None => Ok(()),
    }
}

impl Shared {
    /// `port_metrics`, one row per port asked (all by default), in the config's order.
    pub fn port_metrics(&self, req: &PortMetricsRequest) -> Result<Vec<Value>, ApiError> {
        let g = self.lock();
        let Some(loaded) = g.loaded.clone() else {
            return Ok(Vec::new());
        };
        let cfg = &loaded.cfg;
        let asked = req.port_names.clone().unwrap_or_default();
        check_names(
            "port.port_names",
            "port",
            &asked,
            &cfg.ports
                .iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>(),
        )?;
        let keep = names(&req.column_names);
        Ok(cfg
            .ports
            .iter()
            .filter(|p| asked.is_empty() || asked.contains(&p.name))
            .map(|p| {
                let (mut c, mut r, mut sending) = (Counts::default(), Rates::default(), false);
                for (f, s) in cfg.flows.iter().zip(&g.flows) {
                    let t = s.total();
                    if f.tx_port == p.name {
                        c.tx_frames += t.tx_frames;
                        c.tx_bytes += t.tx_bytes;
                        r.tx_frames += s.rates.tx_frames;
                        r.tx_bytes += s.rates.tx_bytes;
                        sending |= flow_transmit(g.phase, f, s) == FlowTransmit::Started;
                    }
                    if f.rx_ports.first() == Some(&p.name) {
                        c.rx_frames += t.rx_frames;
                        c.rx_bytes += t.rx_bytes;
                        r.rx_frames += s.rates.rx_frames;
                        r.rx_bytes += s.rates.rx_bytes;
                    }
                }
                let m = PortMetric {
                    name: p.name.clone(),
                    location: Some(p.location.to_string()),
                    capture: self.capturing(&g, &p.name).map(|on| {
                        if on {
                            PortCaptureState::Started
                        } else {
                            PortCaptureState::Stopped
                        }
                    }),
                    frames_tx: Some(c.tx_frames),
                    frames_rx: Some(c.rx_frames),
                    bytes_tx: Some(c.tx_bytes),
                    bytes_rx: Some(c.rx_bytes),
                    frames_tx_rate: Some(r.tx_frames),
                    frames_rx_rate: Some(r.rx_frames),
                    bytes_tx_rate: Some(r.tx_bytes),
                    bytes_rx_rate: Some(r.rx_bytes),
                    transmit: Some(if sending {
                        PortTransmit::Started
                    } else {
                        PortTransmit::Stopped
                    }),
                };
                only(&m, keep.clone())
            })
            .collect())
    }

    /// `flow_metrics`, one row per flow asked (all by default), in the config's order.
    pub fn flow_metrics(&self, req: &FlowMetricsRequest) -> Result<Vec<Value>, ApiError> {
        if let Some(t) = &req.tagged_metrics
            && t.filters.as_ref().is_some_and(|f| !f.is_empty())
        {
            return Err(ApiError::bad(
                "flow.tagged_metrics.filters: not supported (upktgen takes no metric tags, so no flow has tagged metrics)",
            ));
        }
        let g = self.lock();
        let Some(loaded) = g.loaded.clone() else {
            return Ok(Vec::new());
        };
        let cfg = &loaded.cfg;
        let asked = req.flow_names.clone().unwrap_or_default();
        check_names(
            "flow.flow_names",
            "flow",
            &asked,
            &cfg.flows
                .iter()
                .map(|f| f.name.as_str())
                .collect::<Vec<_>>(),
        )?;
        // Timestamps and latency are not columns the request can name: always kept.
        let keep = names(&req.metric_names).map(|mut k| {
            k.extend(["port_tx", "port_rx", "loss", "timestamps", "latency"].map(String::from));
            k
        });
        Ok(cfg
            .flows
            .iter()
            .zip(&g.flows)
            .filter(|(f, _)| asked.is_empty() || asked.contains(&f.name))
            .map(|(f, s)| only(&flow_metric(g.phase, f, s), keep.clone()))
            .collect())
    }
}

/// One flow's row.
pub fn flow_metric(phase: Phase, f: &Flow, s: &FlowState) -> FlowMetric {
    let c = s.total();
    let r = s.rates;
    let expected = c.tx_frames as f64 * f.metrics.rx_tx_ratio;
    let loss = if expected > 0.0 {
        ((expected - c.rx_frames as f64) / expected * 100.0).max(0.0)
    } else {
        0.0
    };
    let bits = |bytes: f64| bytes * 8.0;
    FlowMetric {
        name: f.name.clone(),
        port_tx: Some(f.tx_port.clone()),
        port_rx: f.rx_ports.first().cloned(),
        transmit: Some(flow_transmit(phase, f, s)),
        frames_tx: Some(c.tx_frames),
        frames_rx: Some(c.rx_frames),
        bytes_tx: Some(c.tx_bytes),
        bytes_rx: Some(c.rx_bytes),
        frames_tx_rate: Some(r.tx_frames),
        frames_rx_rate: Some(r.rx_frames),
        loss: Some(loss),
        timestamps: f.metrics.timestamps.then(|| MetricTimestamp {
            first_timestamp_ns: s.first_rx_ns.map(|t| t as f64),
            last_timestamp_ns: s.last_rx_ns.map(|t| t as f64),
        }),
        latency: f.metrics.latency.then(|| MetricLatency {
            minimum_ns: s.latency.map(|l| l.min),
            maximum_ns: s.latency.map(|l| l.max),
            average_ns: s.latency.map(|l| l.mean),
        }),
        tx_l1_rate_bps: Some(bits(r.tx_bytes + r.tx_frames * L1_OVERHEAD)),
        rx_l1_rate_bps: Some(bits(r.rx_bytes + r.rx_frames * L1_OVERHEAD)),
        tx_rate_bytes: Some(r.tx_bytes),
        rx_rate_bytes: Some(r.rx_bytes),
        tx_rate_bps: Some(bits(r.tx_bytes)),
        rx_rate_bps: Some(bits(r.rx_bytes)),
        tx_rate_kbps: Some(bits(r.tx_bytes) / 1e3),
        rx_rate_kbps: Some(bits(r.rx_bytes) / 1e3),
        tx_rate_mbps: Some(bits(r.tx_bytes) / 1e6),
        rx_rate_mbps: Some(bits(r.rx_bytes) / 1e6),
    }
}
