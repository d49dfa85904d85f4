//! The bodies of the OTG operations the server serves, as the model names them
//! (open-traffic-generator/models, `components/schemas`): request bodies are read with
//! these types (every member the model has here is known; any other is refused), responses
//! are written with them, and `/openapi.json` is generated from the same types
//! ([`super::openapi`]). Members the model has that upktgen does not serve are left out of
//! the types, so a request naming one is refused as unknown.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `Control.State`: a request for the operational state of ports or flows.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename = "Control.State")]
pub struct ControlState {
    pub choice: ControlChoice,
    #[serde(default)]
    pub port: Option<StatePort>,
    #[serde(default)]
    pub traffic: Option<StateTraffic>,
}

/// `Control.State.choice`; the model's `protocol` is not served (upktgen runs no protocols).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(inline)]
pub enum ControlChoice {
    Port,
    Traffic,
}

/// `State.Port`: the capture state of ports (the model's `link` is not served).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename = "State.Port")]
pub struct StatePort {
    pub choice: StatePortChoice,
    #[serde(default)]
    pub capture: Option<StatePortCapture>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(inline)]
pub enum StatePortChoice {
    Capture,
}

/// `State.Port.Capture`: start or stop capturing on ports.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename = "State.Port.Capture")]
pub struct StatePortCapture {
    /// The ports; empty or absent: every port a capture of the config names.
    #[serde(default)]
    pub port_names: Option<Vec<String>>,
    pub state: CaptureState,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(inline)]
pub enum CaptureState {
    Start,
    Stop,
}

/// `State.Traffic`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename = "State.Traffic")]
pub struct StateTraffic {
    pub choice: StateTrafficChoice,
    #[serde(default)]
    pub flow_transmit: Option<StateTrafficFlowTransmit>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(inline)]
pub enum StateTrafficChoice {
    FlowTransmit,
}

/// `State.Traffic.FlowTransmit`: start, stop, pause or resume the flows.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename = "State.Traffic.FlowTransmit")]
pub struct StateTrafficFlowTransmit {
    /// The flows; empty or absent: all of them. upktgen starts and stops a config's flows
    /// together, so a list must name every flow.
    #[serde(default)]
    pub flow_names: Option<Vec<String>>,
    pub state: TransmitState,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(inline)]
pub enum TransmitState {
    Start,
    Stop,
    Pause,
    Resume,
}

/// `Metrics.Request`: port or flow metrics.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename = "Metrics.Request")]
pub struct MetricsRequest {
    /// Default `port`.
    #[serde(default)]
    pub choice: Option<MetricsChoice>,
    #[serde(default)]
    pub port: Option<PortMetricsRequest>,
    #[serde(default)]
    pub flow: Option<FlowMetricsRequest>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(inline)]
pub enum MetricsChoice {
    Port,
    Flow,
}

/// `Port.Metrics.Request`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename = "Port.Metrics.Request")]
pub struct PortMetricsRequest {
    /// Empty or absent: every port.
    #[serde(default)]
    pub port_names: Option<Vec<String>>,
    /// Empty or absent: every column.
    #[serde(default)]
    pub column_names: Option<Vec<PortColumn>>,
}

/// A column of `Port.Metric`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(inline)]
pub enum PortColumn {
    Transmit,
    Location,
    Link,
    Capture,
    FramesTx,
    FramesRx,
    BytesTx,
    BytesRx,
    FramesTxRate,
    FramesRxRate,
    BytesTxRate,
    BytesRxRate,
    LastChange,
    Speed,
}

/// `Flow.Metrics.Request`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename = "Flow.Metrics.Request")]
pub struct FlowMetricsRequest {
    /// Empty or absent: every flow.
    #[serde(default)]
    pub flow_names: Option<Vec<String>>,
    /// Empty or absent: every metric.
    #[serde(default)]
    pub metric_names: Option<Vec<FlowColumn>>,
    /// Accepted as the model has it; upktgen takes no metric tags, so there are none.
    #[serde(default)]
    pub tagged_metrics: Option<FlowTaggedMetricsFilter>,
}

/// `Flow.TaggedMetrics.Filter`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename = "Flow.TaggedMetrics.Filter")]
pub struct FlowTaggedMetricsFilter {
    #[serde(default)]
    pub include: Option<bool>,
    #[serde(default)]
    pub include_empty_metrics: Option<bool>,
    #[serde(default)]
    pub metric_names: Option<Vec<FlowColumn>>,
    /// Must be empty: no flow carries tags.
    #[serde(default)]
    pub filters: Option<Vec<serde_json::Value>>,
}

/// A metric of `Flow.Metric`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(inline)]
pub enum FlowColumn {
    Transmit,
    FramesTx,
    FramesRx,
    BytesTx,
    BytesRx,
    FramesTxRate,
    FramesRxRate,
    TxL1RateBps,
    RxL1RateBps,
    TxRateBytes,
    RxRateBytes,
    TxRateBps,
    RxRateBps,
    TxRateKbps,
    RxRateKbps,
    TxRateMbps,
    RxRateMbps,
}

/// `Metrics.Response`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename = "Metrics.Response")]
pub struct MetricsResponse {
    pub choice: MetricsResponseChoice,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port_metrics: Option<Vec<PortMetric>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flow_metrics: Option<Vec<FlowMetric>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(inline)]
pub enum MetricsResponseChoice {
    PortMetrics,
    FlowMetrics,
}

/// `Port.Metric`: a port's counters (frames and bytes with their FCS), rates per second
/// over the last second.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
#[serde(rename = "Port.Metric")]
pub struct PortMetric {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capture: Option<PortCaptureState>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frames_tx: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frames_rx: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes_tx: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes_rx: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frames_tx_rate: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frames_rx_rate: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes_tx_rate: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes_rx_rate: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transmit: Option<PortTransmit>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(inline)]
pub enum PortCaptureState {
    Started,
    Stopped,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(inline)]
pub enum PortTransmit {
    Started,
    Stopped,
}

/// `Flow.Metric`: a flow's counters at its transmit port and its (first) receive port.
/// `loss` is the percentage of frames sent and not received; `timestamps` and `latency`
/// come with the final figures, once the flow's senders stopped, when the flow's
/// `metrics.timestamps` and `metrics.latency.enable` ask for them.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
#[serde(rename = "Flow.Metric")]
pub struct FlowMetric {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port_tx: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port_rx: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transmit: Option<FlowTransmit>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frames_tx: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frames_rx: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes_tx: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes_rx: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frames_tx_rate: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frames_rx_rate: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loss: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamps: Option<MetricTimestamp>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency: Option<MetricLatency>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tx_l1_rate_bps: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rx_l1_rate_bps: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tx_rate_bytes: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rx_rate_bytes: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tx_rate_bps: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rx_rate_bps: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tx_rate_kbps: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rx_rate_kbps: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tx_rate_mbps: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rx_rate_mbps: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(inline)]
pub enum FlowTransmit {
    Started,
    Stopped,
    Paused,
}

/// `Metric.Timestamp`: the first and last arrival, ns since the epoch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, JsonSchema)]
#[serde(rename = "Metric.Timestamp")]
pub struct MetricTimestamp {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_timestamp_ns: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_timestamp_ns: Option<f64>,
}

/// `Metric.Latency`: store-and-forward latency, ns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, JsonSchema)]
#[serde(rename = "Metric.Latency")]
pub struct MetricLatency {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub minimum_ns: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub maximum_ns: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub average_ns: Option<f64>,
}

/// `Capture.Request`: the capture of one port (stopped first if it runs).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename = "Capture.Request")]
pub struct CaptureRequest {
    pub port_name: String,
    #[serde(default)]
    pub packets: Option<CaptureRequestPackets>,
}

/// `CaptureRequest.Packets`: all the frames (the default) or a slice of them.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename = "CaptureRequest.Packets")]
pub struct CaptureRequestPackets {
    #[serde(default)]
    pub choice: Option<PacketsChoice>,
    #[serde(default)]
    pub slice: Option<CaptureSlice>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(inline)]
pub enum PacketsChoice {
    All,
    Slice,
}

/// `CaptureRequest.CaptureSlice`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename = "CaptureRequest.CaptureSlice")]
pub struct CaptureSlice {
    #[serde(default)]
    pub choice: Option<SliceChoice>,
    #[serde(default)]
    pub initial: Option<CaptureSliceInitial>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(inline)]
pub enum SliceChoice {
    Initial,
}

/// `CaptureRequest.CaptureSliceInitial`: `count` frames from the `start`-th (1-based).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename = "CaptureRequest.CaptureSliceInitial")]
pub struct CaptureSliceInitial {
    /// Default 1.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub start: Option<u64>,
    /// Default 100.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub count: Option<u64>,
}

/// `Version`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename = "Version")]
pub struct Version {
    /// The model's version the server follows.
    pub api_spec_version: String,
    /// Empty: the server is no SDK.
    pub sdk_version: String,
    /// upktgen's version.
    pub app_version: String,
}

/// `Warning`: the answer of a request that succeeded.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
#[serde(rename = "Warning")]
pub struct Warning {
    pub warnings: Vec<String>,
}

/// A capture of the config (`Config.captures[]`, the model's `Capture`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename = "Capture")]
pub struct Capture {
    pub name: String,
    /// The ports it captures on.
    pub port_names: Vec<String>,
    /// Must be empty: upktgen keeps every frame.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filters: Vec<serde_json::Value>,
    /// When the capture's buffer is full: drop the oldest frames (true, the default) or
    /// keep the first ones and drop what follows (false).
    #[serde(default = "yes")]
    pub overwrite: bool,
    /// Bytes kept of each frame (the default: all of it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 65535))]
    pub packet_size: Option<u32>,
    /// Only `pcap`.
    #[serde(default)]
    pub format: CaptureFormat,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(inline)]
pub enum CaptureFormat {
    #[default]
    Pcap,
    Pcapng,
}
