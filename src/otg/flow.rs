//! A flow's size, rate, duration and metrics (`Flow.Size`, `Flow.Rate`, `Flow.Duration`,
//! `Flow.Metrics`), and the model's choices among them.
//!
//! Frame sizes are the model's: they count the 4-byte FCS, which the NIC appends (a
//! 64-byte OTG frame is 60 bytes as upktgen's senders and pktgen's `pkt_size` count it).

use serde_json::{Value, json};

use super::refusal::{Path, Refusal};
use super::walk::Obj;
use super::{MAX_FRAME_SIZE, MIN_FRAME_SIZE};

/// Bytes each frame takes on the wire beside itself: preamble and start delimiter (8) and
/// the least inter-frame gap (12).
pub const WIRE_OVERHEAD: u32 = 20;
/// The most `custom` weight pairs of one flow.
pub const MAX_WEIGHT_PAIRS: usize = 256;
/// The longest delay or gap, in any of the model's units (so conversions stay finite).
const MAX_SPAN: f64 = 1e15;

/// The frames' sizes in bytes, FCS included.
#[derive(Debug, Clone, PartialEq)]
pub enum Size {
    Fixed(u32),
    /// `start`, `start + step`, ... up to `end` (included when reached), then again.
    Increment {
        start: u32,
        end: u32,
        step: u32,
    },
    /// Uniform from `min` to `max`.
    Random {
        min: u32,
        max: u32,
    },
    /// Sizes drawn with the given weights.
    WeightPairs(WeightPairs),
}

/// `Flow.SizeWeightPairs`: one of the model's named mixes, or pairs of one's own.
#[derive(Debug, Clone, PartialEq)]
pub enum WeightPairs {
    Predefined(Imix),
    /// (size in bytes, weight > 0), at least one pair.
    Custom(Vec<(u32, f64)>),
}

/// The model's predefined size mixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Imix {
    Imix,
    IpsecImix,
    Ipv6Imix,
    StandardImix,
    TcpImix,
}

const IMIX_NAMES: [&str; 5] = [
    "imix",
    "ipsec_imix",
    "ipv6_imix",
    "standard_imix",
    "tcp_imix",
];

impl Imix {
    pub fn name(self) -> &'static str {
        IMIX_NAMES[self as usize]
    }

    /// (size with FCS, weight) pairs, as the model defines the mix.
    pub fn pairs(self) -> &'static [(u32, f64)] {
        match self {
            Imix::Imix => &[(64, 7.0), (570, 4.0), (1518, 1.0)],
            Imix::IpsecImix => &[(90, 58.67), (92, 2.0), (594, 23.66), (1418, 15.67)],
            Imix::Ipv6Imix => &[(60, 58.67), (496, 2.0), (594, 23.66), (1518, 15.67)],
            Imix::StandardImix => &[(58, 58.67), (62, 2.0), (594, 23.66), (1518, 15.67)],
            Imix::TcpImix => &[(90, 58.67), (92, 2.0), (594, 23.66), (1518, 15.67)],
        }
    }

    fn from_name(s: &str) -> Option<Imix> {
        [
            Imix::Imix,
            Imix::IpsecImix,
            Imix::Ipv6Imix,
            Imix::StandardImix,
            Imix::TcpImix,
        ]
        .into_iter()
        .find(|i| i.name() == s)
    }
}

impl WeightPairs {
    /// The pairs, whichever way they were given.
    pub fn pairs(&self) -> &[(u32, f64)] {
        match self {
            WeightPairs::Predefined(i) => i.pairs(),
            WeightPairs::Custom(p) => p,
        }
    }
}

impl Size {
    /// The smallest and the largest frame this size sends.
    pub fn bounds(&self) -> (u32, u32) {
        match self {
            Size::Fixed(n) => (*n, *n),
            Size::Increment { start, end, step } => (
                *start,
                start + end.saturating_sub(*start) / step.max(&1) * step,
            ),
            Size::Random { min, max } => (*min, *max),
            Size::WeightPairs(w) => {
                let sizes = w.pairs().iter().map(|p| p.0);
                (sizes.clone().min().unwrap_or(0), sizes.max().unwrap_or(0))
            }
        }
    }

    /// The mean frame size in bytes over a long run.
    pub fn mean(&self) -> f64 {
        match self {
            Size::Fixed(n) => f64::from(*n),
            Size::Increment { .. } | Size::Random { .. } => {
                let (lo, hi) = self.bounds();
                (f64::from(lo) + f64::from(hi)) / 2.0
            }
            Size::WeightPairs(w) => {
                let total: f64 = w.pairs().iter().map(|p| p.1).sum();
                w.pairs().iter().map(|p| f64::from(p.0) * p.1).sum::<f64>() / total
            }
        }
    }

    /// `Flow.Size`; every size must be from `need` (what the headers, upktgen's signature
    /// and the FCS take) to [`MAX_FRAME_SIZE`].
    pub fn parse(v: Option<&Value>, path: &Path, need: u32) -> Result<Size, Refusal> {
        let empty = json!({});
        let o = Obj::new(
            v.unwrap_or(&empty),
            path,
            &["choice", "fixed", "increment", "random", "weight_pairs"],
        )?;
        let fits = |n: u32, at: Path| check_size(n, at, need);
        let c = o.choice(&["fixed", "increment", "random", "weight_pairs"], "fixed")?;
        let body = o.get(c).unwrap_or(&empty);
        let u32_of = |o: &Obj, k: &str, d: u32| {
            o.uint(k, 0, u64::from(u32::MAX), u64::from(d))
                .map(|n| n as u32)
        };
        Ok(match c {
            "fixed" => {
                let n = u32_of(&o, "fixed", 64)?;
                fits(n, o.at("fixed"))?;
                Size::Fixed(n)
            }
            "increment" => {
                let i = Obj::new(body, &o.at("increment"), &["start", "end", "step"])?;
                let (start, end) = (u32_of(&i, "start", 64)?, u32_of(&i, "end", 1518)?);
                let step = i.uint("step", 1, u64::from(u32::MAX), 1)? as u32;
                fits(start, i.at("start"))?;
                fits(end, i.at("end"))?;
                if start > end {
                    return Err(Refusal::bad(
                        i.at("start"),
                        format!("{start} is above end ({end})"),
                    ));
                }
                Size::Increment { start, end, step }
            }
            "random" => {
                let r = Obj::new(body, &o.at("random"), &["min", "max"])?;
                let (min, max) = (u32_of(&r, "min", 64)?, u32_of(&r, "max", 1518)?);
                fits(min, r.at("min"))?;
                fits(max, r.at("max"))?;
                if min > max {
                    return Err(Refusal::bad(
                        r.at("min"),
                        format!("{min} is above max ({max})"),
                    ));
                }
                Size::Random { min, max }
            }
            _ => Size::WeightPairs(weight_pairs(body, &o.at("weight_pairs"), need)?),
        })
    }

    /// The model's JSON.
    pub fn to_value(&self) -> Value {
        match self {
            Size::Fixed(n) => json!({"choice": "fixed", "fixed": n}),
            Size::Increment { start, end, step } => {
                json!({"choice": "increment", "increment": {"start": start, "end": end, "step": step}})
            }
            Size::Random { min, max } => {
                json!({"choice": "random", "random": {"min": min, "max": max}})
            }
            Size::WeightPairs(WeightPairs::Predefined(i)) => json!({"choice": "weight_pairs",
                "weight_pairs": {"choice": "predefined", "predefined": i.name()}}),
            Size::WeightPairs(WeightPairs::Custom(p)) => json!({"choice": "weight_pairs",
                "weight_pairs": {"choice": "custom", "custom":
                    p.iter().map(|(s, w)| json!({"size": s, "weight": w})).collect::<Vec<_>>()}}),
        }
    }
}

/// Refuses a frame size under `need` or [`MIN_FRAME_SIZE`], or over [`MAX_FRAME_SIZE`].
fn check_size(n: u32, at: Path, need: u32) -> Result<(), Refusal> {
    if n < MIN_FRAME_SIZE {
        return Err(Refusal::bad(
            at,
            format!(
                "{n} bytes is below {MIN_FRAME_SIZE}, the least Ethernet frame (sizes count the 4-byte FCS)"
            ),
        ));
    }
    if n < need {
        return Err(Refusal::bad(
            at,
            format!(
                "{n} bytes is too small: the headers, upktgen's 16-byte signature and the 4-byte FCS take {need}"
            ),
        ));
    }
    if n > MAX_FRAME_SIZE {
        return Err(Refusal::bad(
            at,
            format!(
                "{n} bytes is above {MAX_FRAME_SIZE}, the largest frame upktgen sends (sizes count the 4-byte FCS)"
            ),
        ));
    }
    Ok(())
}

fn weight_pairs(v: &Value, path: &Path, need: u32) -> Result<WeightPairs, Refusal> {
    let o = Obj::new(v, path, &["choice", "predefined", "custom"])?;
    if o.choice(&["predefined", "custom"], "predefined")? == "predefined" {
        let name = o.name_of("predefined", &IMIX_NAMES, "imix")?;
        let imix = Imix::from_name(name).expect("a name of IMIX_NAMES");
        for (size, _) in imix.pairs() {
            check_size(*size, o.at("predefined"), need).map_err(|r| {
                Refusal::bad(
                    r.path,
                    format!("{name} has {size}-byte frames: {}", text_of(&r.why)),
                )
            })?;
        }
        return Ok(WeightPairs::Predefined(imix));
    }
    let list = o.array("custom", MAX_WEIGHT_PAIRS)?;
    if list.is_empty() {
        return Err(Refusal::bad(
            o.at("custom"),
            "no pairs (give at least one size and weight)",
        ));
    }
    let mut pairs = Vec::with_capacity(list.len());
    for (v, p) in list {
        let c = Obj::new(v, &p, &["size", "weight"])?;
        let size = c.uint("size", 12, 65535, 64)? as u32;
        check_size(size, c.at("size"), need)?;
        let weight = c.number("weight", 0.0, f64::from(f32::MAX), 1.0)?;
        if weight == 0.0 {
            return Err(Refusal::bad(c.at("weight"), "0 (a weight must be above 0)"));
        }
        pairs.push((size, weight));
    }
    Ok(WeightPairs::Custom(pairs))
}

fn text_of(w: &super::refusal::Why) -> String {
    use super::refusal::Why;
    match w {
        Why::Bad(s) | Why::Document(s) | Why::NotSupported(s) => s.clone(),
        Why::Unknown => String::new(),
    }
}

/// How fast a flow sends. Bit rates count the frames' bits, FCS included (not the
/// preamble or the gap); a percentage is of the port's line rate, with preamble and gap.
#[derive(Debug, Clone, PartialEq)]
pub enum Rate {
    Pps(u64),
    Bps(u64),
    Kbps(u64),
    Mbps(u64),
    Gbps(u32),
    /// Above 0, at most 100.
    Percentage(f64),
}

impl Rate {
    pub fn parse(v: Option<&Value>, path: &Path) -> Result<Rate, Refusal> {
        let empty = json!({});
        let names = ["pps", "bps", "kbps", "mbps", "gbps", "percentage"];
        let mut fields = vec!["choice"];
        fields.extend(names);
        let o = Obj::new(v.unwrap_or(&empty), path, &fields)?;
        let max = u64::MAX;
        Ok(match o.choice(&names, "pps")? {
            "pps" => Rate::Pps(o.uint("pps", 1, max, 1000)?),
            "bps" => Rate::Bps(o.uint("bps", 672, max, 1_000_000_000)?),
            "kbps" => Rate::Kbps(o.uint("kbps", 1, max, 1_000_000)?),
            "mbps" => Rate::Mbps(o.uint("mbps", 1, max, 1000)?),
            "gbps" => Rate::Gbps(o.uint("gbps", 1, u64::from(u32::MAX), 1)? as u32),
            _ => {
                let p = o.number("percentage", f64::MIN, f64::MAX, 100.0)?;
                if p <= 0.0 || p > 100.0 {
                    return Err(Refusal::bad(
                        o.at("percentage"),
                        format!(
                            "{} is out of range (above 0, at most 100)",
                            super::walk::shown(p)
                        ),
                    ));
                }
                Rate::Percentage(p)
            }
        })
    }

    /// The model's name for this kind of rate, which is also its member's.
    pub fn name(&self) -> &'static str {
        match self {
            Rate::Pps(_) => "pps",
            Rate::Bps(_) => "bps",
            Rate::Kbps(_) => "kbps",
            Rate::Mbps(_) => "mbps",
            Rate::Gbps(_) => "gbps",
            Rate::Percentage(_) => "percentage",
        }
    }

    pub fn to_value(&self) -> Value {
        let n = match self {
            Rate::Pps(n) | Rate::Bps(n) | Rate::Kbps(n) | Rate::Mbps(n) => json!(n),
            Rate::Gbps(n) => json!(n),
            Rate::Percentage(p) => json!(p),
        };
        json!({"choice": self.name(), self.name(): n})
    }

    /// Frames per second for frames of `mean_size` bytes (FCS included), on a port of
    /// `line_bps` when known; `None` for a percentage without a line rate.
    pub fn pps(&self, mean_size: f64, line_bps: Option<u64>) -> Option<f64> {
        let bits = |bps: f64| bps / (mean_size * 8.0);
        Some(match self {
            Rate::Pps(n) => *n as f64,
            Rate::Bps(n) => bits(*n as f64),
            Rate::Kbps(n) => bits(*n as f64 * 1e3),
            Rate::Mbps(n) => bits(*n as f64 * 1e6),
            Rate::Gbps(n) => bits(f64::from(*n) * 1e9),
            Rate::Percentage(p) => {
                line_bps? as f64 * p / 100.0 / ((mean_size + f64::from(WIRE_OVERHEAD)) * 8.0)
            }
        })
    }
}

/// A stretch of time in one of the model's units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Span {
    /// The time the port takes to send this many bytes at its line rate.
    Bytes(f64),
    Nanoseconds(f64),
    Microseconds(f64),
}

impl Span {
    /// In nanoseconds, on a port of `line_bps` (needed for [`Span::Bytes`] only).
    pub fn ns(&self, line_bps: Option<u64>) -> Option<f64> {
        match self {
            Span::Bytes(b) => line_bps
                .filter(|l| *l > 0)
                .map(|l| b * 8.0 * 1e9 / l as f64),
            Span::Nanoseconds(n) => Some(*n),
            Span::Microseconds(u) => Some(u * 1e3),
        }
    }

    /// A `Flow.Delay` or `Flow.Duration.InterBurstGap`; `defaults` are the model's for
    /// bytes, nanoseconds and microseconds, bytes being the default unit.
    fn parse(v: Option<&Value>, path: &Path, defaults: [f64; 3]) -> Result<Span, Refusal> {
        let Some(v) = v else {
            return Ok(Span::Bytes(defaults[0]));
        };
        let units = ["bytes", "nanoseconds", "microseconds"];
        let o = Obj::new(v, path, &["choice", "bytes", "nanoseconds", "microseconds"])?;
        let c = o.choice(&units, "bytes")?;
        let i = units
            .iter()
            .position(|u| *u == c)
            .expect("one of the units");
        let n = o.number(c, 0.0, MAX_SPAN, defaults[i])?;
        Ok(match i {
            0 => Span::Bytes(n),
            1 => Span::Nanoseconds(n),
            _ => Span::Microseconds(n),
        })
    }

    fn to_value(self) -> Value {
        match self {
            Span::Bytes(b) => json!({"choice": "bytes", "bytes": b}),
            Span::Nanoseconds(n) => json!({"choice": "nanoseconds", "nanoseconds": n}),
            Span::Microseconds(u) => json!({"choice": "microseconds", "microseconds": u}),
        }
    }
}

/// How long a flow sends. `delay`: how long after the start its first frame goes.
#[derive(Debug, Clone, PartialEq)]
pub enum Duration {
    /// `packets` frames (at least 1), then stop.
    FixedPackets { packets: u32, delay: Span },
    /// For `seconds` (above 0), then stop.
    FixedSeconds { seconds: f64, delay: Span },
    /// Bursts of `packets` frames (at least 1) at the flow's rate, `gap` between one
    /// burst's last frame and the next one's first; `bursts` of them (0: no end).
    Burst {
        bursts: u32,
        packets: u32,
        gap: Span,
    },
    /// Until stopped.
    Continuous { delay: Span },
}

/// The model's defaults for a start delay, in bytes, nanoseconds and microseconds.
const DELAY: [f64; 3] = [0.0, 0.0, 0.0];
/// The model's defaults for a gap between bursts: 12 bytes, 96 ns or 0.096 µs.
const BURST_GAP: [f64; 3] = [12.0, 96.0, 0.096];

impl Duration {
    pub fn parse(v: Option<&Value>, path: &Path) -> Result<Duration, Refusal> {
        let empty = json!({});
        let names = ["fixed_packets", "fixed_seconds", "burst", "continuous"];
        let mut fields = vec!["choice"];
        fields.extend(names);
        let o = Obj::new(v.unwrap_or(&empty), path, &fields)?;
        let c = o.choice(&names, "continuous")?;
        let at = o.at(c);
        let body = o.get(c).unwrap_or(&empty);
        let gap_12 = |b: &Obj| {
            b.only_default(
                "gap",
                &json!(12),
                "upktgen keeps the least gap, 12 bytes; the rate spaces the frames",
            )
        };
        let delay = |b: &Obj| Span::parse(b.get("delay"), &b.at("delay"), DELAY);
        Ok(match c {
            "fixed_packets" => {
                let b = Obj::new(body, &at, &["packets", "gap", "delay"])?;
                gap_12(&b)?;
                Duration::FixedPackets {
                    packets: b.uint("packets", 1, u64::from(u32::MAX), 1)? as u32,
                    delay: delay(&b)?,
                }
            }
            "fixed_seconds" => {
                let b = Obj::new(body, &at, &["seconds", "gap", "delay"])?;
                gap_12(&b)?;
                let seconds = b.number("seconds", 0.0, MAX_SPAN, 1.0)?;
                if seconds == 0.0 {
                    return Err(Refusal::bad(
                        b.at("seconds"),
                        "0 is out of range (above 0: 0 seconds sends nothing)",
                    ));
                }
                Duration::FixedSeconds {
                    seconds,
                    delay: delay(&b)?,
                }
            }
            "burst" => {
                let b = Obj::new(body, &at, &["bursts", "packets", "gap", "inter_burst_gap"])?;
                gap_12(&b)?;
                Duration::Burst {
                    bursts: b.uint("bursts", 0, u64::from(u32::MAX), 0)? as u32,
                    packets: b.uint("packets", 1, u64::from(u32::MAX), 1)? as u32,
                    gap: Span::parse(
                        b.get("inter_burst_gap"),
                        &b.at("inter_burst_gap"),
                        BURST_GAP,
                    )?,
                }
            }
            _ => {
                let b = Obj::new(body, &at, &["gap", "delay"])?;
                gap_12(&b)?;
                Duration::Continuous { delay: delay(&b)? }
            }
        })
    }

    pub fn to_value(&self) -> Value {
        match self {
            Duration::FixedPackets { packets, delay } => json!({"choice": "fixed_packets",
                "fixed_packets": {"packets": packets, "gap": 12, "delay": delay.to_value()}}),
            Duration::FixedSeconds { seconds, delay } => json!({"choice": "fixed_seconds",
                "fixed_seconds": {"seconds": seconds, "gap": 12, "delay": delay.to_value()}}),
            Duration::Burst {
                bursts,
                packets,
                gap,
            } => json!({"choice": "burst", "burst": {
                "bursts": bursts, "packets": packets, "gap": 12, "inter_burst_gap": gap.to_value()}}),
            Duration::Continuous { delay } => {
                json!({"choice": "continuous", "continuous": {"gap": 12, "delay": delay.to_value()}})
            }
        }
    }
}

/// What the far end reports of a flow (`Flow.Metrics`). upktgen counts every flow at its
/// receiving ports whatever `enable` says; the flags say what a report shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Metrics {
    pub enable: bool,
    pub loss: bool,
    pub timestamps: bool,
    /// Latency, store-and-forward (from the frame's send time to its arrival).
    pub latency: bool,
    /// Receptions expected per transmitted frame, over all receiving ports (above 0).
    pub rx_tx_ratio: f64,
}

impl Default for Metrics {
    /// The model's defaults: nothing enabled, a ratio of 1.
    fn default() -> Self {
        Metrics {
            enable: false,
            loss: false,
            timestamps: false,
            latency: false,
            rx_tx_ratio: 1.0,
        }
    }
}

impl Metrics {
    pub fn parse(v: Option<&Value>, path: &Path) -> Result<Metrics, Refusal> {
        let Some(v) = v else {
            return Ok(Metrics::default());
        };
        let o = Obj::new(
            v,
            path,
            &[
                "enable",
                "loss",
                "rx_tx_ratio",
                "timestamps",
                "latency",
                "predefined_metric_tags",
            ],
        )?;
        let latency = match o.get("latency") {
            None => false,
            Some(l) => {
                let l = Obj::new(l, &o.at("latency"), &["enable", "mode"])?;
                let mode = l.name_of("mode", &["store_forward", "cut_through"], "store_forward")?;
                if mode == "cut_through" {
                    return Err(Refusal::unsupported_because(
                        l.at("mode"),
                        "upktgen measures store_forward latency",
                    ));
                }
                l.boolean("enable", false)?
            }
        };
        if let Some(t) = o.get("predefined_metric_tags") {
            let t = Obj::new(t, &o.at("predefined_metric_tags"), &["rx_name"])?;
            t.only_default(
                "rx_name",
                &json!(false),
                "upktgen reports a flow per receiving port already",
            )?;
        }
        let rx_tx_ratio = match o.get("rx_tx_ratio") {
            None => 1.0,
            Some(r) => {
                let r = Obj::new(r, &o.at("rx_tx_ratio"), &["choice", "rx_count", "value"])?;
                if r.choice(&["rx_count", "value"], "value")? == "rx_count" {
                    return Err(Refusal::unsupported(r.at("rx_count")));
                }
                let v = r.number("value", 0.0, 1e9, 1.0)?;
                if v == 0.0 {
                    return Err(Refusal::bad(r.at("value"), "0 is out of range (above 0)"));
                }
                v
            }
        };
        Ok(Metrics {
            enable: o.boolean("enable", false)?,
            loss: o.boolean("loss", false)?,
            timestamps: o.boolean("timestamps", false)?,
            latency,
            rx_tx_ratio,
        })
    }

    pub fn to_value(&self) -> Value {
        json!({
            "enable": self.enable, "loss": self.loss, "timestamps": self.timestamps,
            "latency": {"enable": self.latency, "mode": "store_forward"},
            "rx_tx_ratio": {"choice": "value", "value": self.rx_tx_ratio},
        })
    }
}

/// `Flow.Payload`: only the model's default (zeros) is taken; upktgen's payload holds
/// pktgen's header and its signature, and zeros between. Raw bytes of one's own go in a
/// `custom` header.
pub fn payload(v: Option<&Value>, path: &Path) -> Result<(), Refusal> {
    let Some(v) = v else {
        return Ok(());
    };
    let why =
        "the payload is zeros around upktgen's signature; put bytes of your own in a custom header";
    let o = Obj::new(v, path, &["choice", "fixed"])?;
    let c = o.choice(
        &[
            "fixed",
            "increment_byte",
            "decrement_byte",
            "increment_word",
            "decrement_word",
        ],
        "fixed",
    )?;
    if c != "fixed" {
        return Err(Refusal::unsupported_because(o.at("choice"), why));
    }
    if let Some(f) = o.get("fixed") {
        let f = Obj::new(f, &o.at("fixed"), &["pattern", "repeat"])?;
        f.only_default("pattern", &json!("00"), why)?;
        f.only_default("repeat", &json!(true), why)?;
    }
    Ok(())
}
