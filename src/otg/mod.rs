//! The Open Traffic Generator (OTG) config: ports and the flows they send, as the
//! open-traffic-generator/models `Config` object describes them (read at models v1.61.0).
//! The same document a snappi script sends with `set_config` is what `run --config` reads.
//!
//! Reading a document ([`parse_json`], [`parse_yaml`], [`read_file`]) gives either a
//! checked [`Config`] or one [`Refusal`] naming the JSON path of what is wrong: a member
//! the model does not have (a typo), one the model has that upktgen does not implement
//! ("not supported"), or a bad value. Nothing is ignored: a member upktgen does not
//! implement is taken only at the model's default (which is what upktgen does anyway).
//! docs/otg.md lists the subset field by field.
//!
//! A `Config` serializes back to the model's JSON with every default filled in, and
//! reading that gives the same `Config` again.
//!
//! Sizes are the model's: they count the 4-byte FCS, which upktgen's frames (and
//! pktgen's `pkt_size`) do not.

pub mod flow;
pub mod headers;
pub mod layer1;
pub mod location;
pub mod pattern;
pub mod refusal;
pub mod streams;
mod walk;
mod yaml;

#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::path::Path as FsPath;

use serde_json::{Value, json};

pub use flow::{Duration, Imix, Metrics, Rate, Size, Span, WeightPairs};
pub use headers::Header;
pub use layer1::Layer1;
pub use location::Location;
pub use pattern::Pattern;
pub use refusal::{Error, ErrorKind, Path, Refusal, Why};

use walk::Obj;

/// The largest document, in bytes.
pub const MAX_DOCUMENT: u64 = 32 << 20;
/// The deepest nesting of objects and arrays in a document.
pub const MAX_DEPTH: usize = 32;
/// The most flows of a config: a stream signature names its stream with 16 bits.
pub const MAX_FLOWS: usize = crate::wire::signature::MAX_STREAMS;
/// The most ports of a config.
pub const MAX_PORTS: usize = 1024;
/// The longest name of a port or a flow, in bytes.
pub const MAX_NAME: usize = 255;
/// The smallest frame, FCS included (Ethernet's minimum).
pub const MIN_FRAME_SIZE: u32 = 64;
/// The largest frame, FCS included: a 9,000-byte MTU's payload, the Ethernet header and
/// the FCS (as `ndr --sizes` takes them).
pub const MAX_FRAME_SIZE: u32 = 9018;
/// The FCS the NIC appends to every frame, counted in the model's sizes.
pub const FCS_LEN: u32 = 4;
/// What every frame of a counted flow carries at its end: upktgen's stream signature.
pub const SIGNATURE_LEN: u32 = crate::wire::signature::LEN as u32;

/// A checked config.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub ports: Vec<Port>,
    /// The ports' speeds and MTUs (`layer1[]`), each port in at most one.
    pub layer1: Vec<Layer1>,
    /// In the document's order; a flow's index is its stream id.
    pub flows: Vec<Flow>,
}

/// A test port: a name the flows use, and where the interface is.
#[derive(Debug, Clone, PartialEq)]
pub struct Port {
    pub name: String,
    pub location: Location,
}

/// One flow (a stream): its ports, headers, sizes, rate, duration and metrics.
#[derive(Debug, Clone, PartialEq)]
pub struct Flow {
    pub name: String,
    /// The port that sends (`tx_rx.port.tx_name`).
    pub tx_port: String,
    /// The ports that receive and count it (`rx_names`, with the older `rx_name`).
    pub rx_ports: Vec<String>,
    /// The headers in wire order, the first an Ethernet header.
    pub packet: Vec<Header>,
    pub size: Size,
    pub rate: Rate,
    pub duration: Duration,
    pub metrics: Metrics,
}

impl Flow {
    /// The bytes of this flow's headers.
    pub fn header_len(&self) -> usize {
        self.packet.iter().map(Header::wire_len).sum()
    }

    /// The smallest frame this flow's headers allow, FCS included.
    pub fn min_size(&self) -> u32 {
        min_size(&self.packet)
    }
}

fn min_size(packet: &[Header]) -> u32 {
    let h: usize = packet.iter().map(Header::wire_len).sum();
    (h as u32 + SIGNATURE_LEN + FCS_LEN).max(MIN_FRAME_SIZE)
}

/// The members of the model's `Config` (each one is read, or refused unless absent).
pub const CONFIG_FIELDS: [&str; 11] = [
    "ports",
    "lags",
    "layer1",
    "captures",
    "devices",
    "flows",
    "events",
    "options",
    "lldp",
    "stateful_flows",
    "egress_only_tracking",
];

/// Reads a config from JSON text of at most [`MAX_DOCUMENT`] bytes.
pub fn parse_json(text: &[u8]) -> Result<Config, Refusal> {
    check_size(text.len() as u64)?;
    let v: Value =
        serde_json::from_slice(text).map_err(|e| Refusal::document(format!("not JSON: {e}")))?;
    Config::from_value(&v)
}

/// Reads a config from YAML text of at most [`MAX_DOCUMENT`] bytes, with limits on
/// aliases, nesting and nodes (see [`yaml`]).
pub fn parse_yaml(text: &[u8]) -> Result<Config, Refusal> {
    check_size(text.len() as u64)?;
    Config::from_value(&yaml::to_value(text)?)
}

/// Reads a config file (`-`: standard input), JSON or YAML: JSON when its first
/// non-blank byte is `{`, YAML otherwise (JSON is YAML too, but read as JSON its messages
/// are the JSON parser's). A file over [`MAX_DOCUMENT`] is refused before it is read.
pub fn read_file(path: &FsPath) -> Result<Config, Refusal> {
    use std::io::Read;
    let name = path.display();
    let mut text = Vec::new();
    crate::input::open(path, MAX_DOCUMENT, "an OTG config")
        .and_then(|mut r| r.read_to_end(&mut text).map_err(Into::into))
        .map_err(|e| Refusal::document(format!("{name}: {e}")))?;
    let first = text.iter().find(|b| !b.is_ascii_whitespace());
    let r = if first == Some(&b'{') {
        parse_json(&text)
    } else {
        parse_yaml(&text)
    };
    r.map_err(|r| match r.why {
        Why::Document(s) => Refusal::document(format!("{name}: {s}")),
        _ => r,
    })
}

fn check_size(n: u64) -> Result<(), Refusal> {
    if n > MAX_DOCUMENT {
        return Err(Refusal::document(format!(
            "{} bytes: {}",
            n,
            crate::input::TooBig {
                cap: MAX_DOCUMENT,
                what: "an OTG config"
            }
        )));
    }
    Ok(())
}

/// Where a name was first given: for a message about the second.
fn claim(names: &mut HashMap<String, String>, name: &str, at: &Path) -> Result<(), Refusal> {
    if let Some(first) = names.get(name) {
        return Err(Refusal::bad(
            at.clone(),
            format!("{name:?} is already the name of {first}"),
        ));
    }
    names.insert(
        name.to_string(),
        at.to_string().trim_end_matches(".name").to_string(),
    );
    Ok(())
}

/// A name of a port or a flow: 1 to [`MAX_NAME`] bytes, no control characters.
fn name(o: &Obj) -> Result<String, Refusal> {
    let at = o.at("name");
    let n = o
        .string("name")?
        .ok_or_else(|| Refusal::bad(at.clone(), "missing (the model requires a name)"))?;
    if n.is_empty() || n.len() > MAX_NAME {
        return Err(Refusal::bad(at, format!("a name is 1 to {MAX_NAME} bytes")));
    }
    if n.chars().any(char::is_control) {
        return Err(Refusal::bad(at, format!("{n:?} holds a control character")));
    }
    Ok(n.to_string())
}

impl Config {
    /// A config from a document already parsed (JSON or YAML alike).
    pub fn from_value(v: &Value) -> Result<Config, Refusal> {
        if walk::depth_over(v, MAX_DEPTH) {
            return Err(Refusal::document(format!(
                "nested deeper than {MAX_DEPTH} levels"
            )));
        }
        let root = Path::root();
        let o = Obj::new(v, &root, &CONFIG_FIELDS)?;
        for k in [
            "lags",
            "captures",
            "devices",
            "events",
            "lldp",
            "stateful_flows",
            "egress_only_tracking",
        ] {
            o.absent(k)?;
        }
        if let Some(v) = o.get("options") {
            options(v, &o.at("options"))?;
        }
        if let Some(Value::Array(f)) = o.get("flows")
            && f.len() > MAX_FLOWS
        {
            return Err(Refusal::bad(
                o.at("flows"),
                format!(
                    "{} flows, more than {MAX_FLOWS}, the most upktgen runs at once (a stream id has 16 bits)",
                    f.len()
                ),
            ));
        }
        let mut names = HashMap::new();
        let mut ports = Vec::new();
        for (v, at) in o.array("ports", MAX_PORTS)? {
            let p = Obj::new(v, &at, &["location", "name"])?;
            let name = name(&p)?;
            claim(&mut names, &name, &p.at("name"))?;
            let loc = p.string("location")?.ok_or_else(|| {
                Refusal::bad(p.at("location"), "missing (upktgen needs to know where the port is: IFACE, netns:NAME/IFACE or ssh://host/IFACE)")
            })?;
            let location: Location = loc.parse().map_err(|e: location::BadLocation| {
                Refusal::bad(p.at("location"), e.to_string())
            })?;
            // Two ports on one interface would each send and count the other's frames.
            if let Some(i) = ports.iter().position(|q: &Port| q.location == location) {
                return Err(Refusal::bad(
                    p.at("location"),
                    format!(
                        "{location} is already the location of ports[{i}] ({:?}): one interface is one port",
                        ports[i].name
                    ),
                ));
            }
            ports.push(Port { name, location });
        }
        let layer1 = layer1::parse(&o, &ports, &mut names)?;
        let mut flows = Vec::new();
        for (v, at) in o.array("flows", MAX_FLOWS)? {
            let f = parse_flow(v, &at, &ports)?;
            claim(&mut names, &f.name, &at.key("name"))?;
            flows.push(f);
        }
        let cfg = Config {
            ports,
            layer1,
            flows,
        };
        layer1::check_mtu(&cfg)?;
        for l in &cfg.layer1 {
            if let Some(bps) = l.line_bps() {
                for p in &l.port_names {
                    cfg.check_line_rate(p, bps)?;
                }
            }
        }
        Ok(cfg)
    }

    /// The model's JSON for this config, every default filled in.
    pub fn to_value(&self) -> Value {
        let mut v = json!({
            "ports": self.ports.iter().map(|p| json!({"name": p.name, "location": p.location.to_string()})).collect::<Vec<_>>(),
            "flows": self.flows.iter().map(Flow::to_value).collect::<Vec<_>>(),
        });
        if !self.layer1.is_empty() {
            v["layer1"] = self.layer1.iter().map(Layer1::to_value).collect();
        }
        v
    }

    /// The `layer1` entry of port `port`, if any.
    pub fn layer1_of(&self, port: &str) -> Option<&Layer1> {
        self.layer1
            .iter()
            .find(|l| l.port_names.iter().any(|p| p == port))
    }

    /// Port `port`'s line rate in bits per second, when its `layer1` names a speed.
    pub fn line_bps(&self, port: &str) -> Option<u64> {
        self.layer1_of(port).and_then(Layer1::line_bps)
    }

    /// The port named `name`.
    pub fn port(&self, name: &str) -> Option<&Port> {
        self.ports.iter().find(|p| p.name == name)
    }

    /// Refuses the flows sent by port `port` when one of them, or all of them together,
    /// need more than `line_bps` on the wire (each frame with its preamble and least gap).
    /// For the caller that has learnt the port's link speed. A percentage is of the line
    /// rate and fits by itself, but counts in the sum.
    pub fn check_line_rate(&self, port: &str, line_bps: u64) -> Result<(), Refusal> {
        let line = line_bps as f64;
        let mut total = 0.0;
        for (i, f) in self
            .flows
            .iter()
            .enumerate()
            .filter(|(_, f)| f.tx_port == port)
        {
            let mean = f.size.mean();
            let pps = f.rate.pps(mean, Some(line_bps)).unwrap_or(0.0);
            let wire = pps * (mean + f64::from(flow::WIRE_OVERHEAD)) * 8.0;
            // A percentage's own rounding may put 100 % a hair above the line.
            if wire > line * (1.0 + 1e-9) {
                return Err(Refusal::bad(
                    Path::root()
                        .key("flows")
                        .index(i)
                        .key("rate")
                        .key(f.rate.name()),
                    format!(
                        "{} of {}-byte frames need {} on the wire, above port {port:?}'s line rate of {}",
                        rate_text(&f.rate),
                        mean_text(mean),
                        above_text(wire, line),
                        bps_text(line)
                    ),
                ));
            }
            total += wire;
        }
        if total > line * (1.0 + 1e-9) {
            let i = self.ports.iter().position(|p| p.name == port).unwrap_or(0);
            return Err(Refusal::bad(
                Path::root().key("ports").index(i),
                format!(
                    "the flows of port {port:?} need {} on the wire together, above its line rate of {}",
                    above_text(total, line),
                    bps_text(line)
                ),
            ));
        }
        Ok(())
    }
}

fn rate_text(r: &Rate) -> String {
    match r {
        Rate::Pps(n) => format!("{n} pps"),
        Rate::Bps(n) => format!("{n} bps"),
        Rate::Kbps(n) => format!("{n} kbps"),
        Rate::Mbps(n) => format!("{n} Mbps"),
        Rate::Gbps(n) => format!("{n} Gbps"),
        Rate::Percentage(p) => format!("{p} %"),
    }
}

fn mean_text(m: f64) -> String {
    if m.fract() == 0.0 {
        format!("{m}")
    } else {
        format!("{m:.1}")
    }
}

/// `13_440_000_000.0` -> "13.44 Gbit/s".
fn bps_text(b: f64) -> String {
    bps_digits(b, 2)
}

/// `need` (above `line`) with as many digits as show it above: "10.0000001 Gbit/s", not
/// "10 Gbit/s" beside a line of 10 Gbit/s.
fn above_text(need: f64, line: f64) -> String {
    (2..=9)
        .map(|d| bps_digits(need, d))
        .find(|t| *t != bps_text(line))
        .unwrap_or_else(|| bps_digits(need, 9))
}

fn bps_digits(b: f64, digits: usize) -> String {
    let (v, unit) = if b >= 1e9 {
        (b / 1e9, "Gbit/s")
    } else if b >= 1e6 {
        (b / 1e6, "Mbit/s")
    } else if b >= 1e3 {
        (b / 1e3, "kbit/s")
    } else {
        (b, "bit/s")
    };
    let s = format!("{v:.digits$}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s} {unit}")
}

/// `Config.options`: what upktgen does anyway is taken, nothing else. Port preemption
/// either way, as upktgen holds no port against another user; no data integrity check,
/// no frame ordering across ports, no loss duration.
fn options(v: &Value, path: &Path) -> Result<(), Refusal> {
    let o = Obj::new(
        v,
        path,
        &[
            "port_options",
            "protocol_options",
            "per_port_options",
            "flow_options",
        ],
    )?;
    o.absent("protocol_options")?;
    o.absent("per_port_options")?;
    if let Some(p) = o.get("port_options") {
        let p = Obj::new(
            p,
            &o.at("port_options"),
            &[
                "location_preemption",
                "data_integrity",
                "frame_ordering_mode",
            ],
        )?;
        p.boolean("location_preemption", false)?;
        p.only_default(
            "data_integrity",
            &json!(false),
            "upktgen checks no payloads",
        )?;
        if let Some(m) = p.get("frame_ordering_mode") {
            let m = Obj::new(m, &p.at("frame_ordering_mode"), &["choice"])?;
            if m.choice(&["no_ordering", "rfc2889"], "no_ordering")? != "no_ordering" {
                return Err(Refusal::unsupported(m.at("choice")));
            }
        }
    }
    if let Some(f) = o.get("flow_options") {
        let f = Obj::new(f, &o.at("flow_options"), &["packet_loss_duration"])?;
        f.only_default(
            "packet_loss_duration",
            &json!(false),
            "upktgen reports no loss duration",
        )?;
    }
    Ok(())
}

/// The members of the model's `Flow`.
pub const FLOW_FIELDS: [&str; 9] = [
    "tx_rx",
    "packet",
    "egress_packet",
    "size",
    "rate",
    "duration",
    "metrics",
    "name",
    "payload",
];

fn parse_flow(v: &Value, at: &Path, ports: &[Port]) -> Result<Flow, Refusal> {
    let o = Obj::new(v, at, &FLOW_FIELDS)?;
    let name = name(&o)?;
    o.absent("egress_packet")?;
    flow::payload(o.get("payload"), &o.at("payload"))?;
    let (tx_port, rx_ports) = tx_rx(&o, ports)?;
    let packet = match o.get("packet") {
        None => vec![Header::default_ethernet()],
        Some(p) => {
            let list = walk::array(p, &o.at("packet"), headers::MAX_HEADERS)?;
            if list.is_empty() {
                return Err(Refusal::bad(
                    o.at("packet"),
                    "no headers (the model asks for at least one)",
                ));
            }
            let hs = list
                .iter()
                .map(|(v, p)| Header::parse(v, p))
                .collect::<Result<Vec<_>, _>>()?;
            if !matches!(hs[0], Header::Ethernet(_)) {
                return Err(Refusal::unsupported_because(
                    o.at("packet").index(0).key(hs[0].name()),
                    "upktgen sends Ethernet frames: the first header must be ethernet",
                ));
            }
            hs
        }
    };
    Ok(Flow {
        size: Size::parse(o.get("size"), &o.at("size"), min_size(&packet))?,
        rate: Rate::parse(o.get("rate"), &o.at("rate"))?,
        duration: Duration::parse(o.get("duration"), &o.at("duration"))?,
        metrics: Metrics::parse(o.get("metrics"), &o.at("metrics"))?,
        name,
        tx_port,
        rx_ports,
        packet,
    })
}

fn tx_rx(o: &Obj, ports: &[Port]) -> Result<(String, Vec<String>), Refusal> {
    let at = o.at("tx_rx");
    let v = o
        .get("tx_rx")
        .ok_or_else(|| Refusal::bad(at.clone(), "missing (the model requires it)"))?;
    let t = Obj::new(v, &at, &["choice", "port", "device"])?;
    if t.choice(&["port", "device"], "port")? == "device" {
        return Err(Refusal::unsupported_because(
            t.at("device"),
            "upktgen emulates no devices; use tx_rx.port",
        ));
    }
    let empty = json!({});
    let p = Obj::new(
        t.get("port").unwrap_or(&empty),
        &t.at("port"),
        &["tx_name", "rx_name", "rx_names"],
    )?;
    let known = |n: &str, at: Path| {
        if ports.iter().any(|p| p.name == n) {
            Ok(n.to_string())
        } else {
            Err(Refusal::bad(at, format!("no port named {n:?}")))
        }
    };
    let tx = p
        .string("tx_name")?
        .ok_or_else(|| Refusal::bad(p.at("tx_name"), "missing (the model requires it)"))?;
    let tx = known(tx, p.at("tx_name"))?;
    let mut rx = Vec::new();
    for (v, at) in p.array("rx_names", MAX_PORTS)? {
        let n = known(walk::string(v, &at)?, at.clone())?;
        if rx.contains(&n) {
            return Err(Refusal::bad(at, format!("{n:?} is named twice")));
        }
        rx.push(n);
    }
    if let Some(n) = p.string("rx_name")? {
        let n = known(n, p.at("rx_name"))?;
        if !rx.contains(&n) {
            rx.push(n);
        }
    }
    Ok((tx, rx))
}

impl Flow {
    /// The model's JSON for this flow, every default filled in.
    pub fn to_value(&self) -> Value {
        json!({
            "name": self.name,
            "tx_rx": {"choice": "port", "port": {"tx_name": self.tx_port, "rx_names": self.rx_ports}},
            "packet": self.packet.iter().map(Header::to_value).collect::<Vec<_>>(),
            "size": self.size.to_value(),
            "rate": self.rate.to_value(),
            "duration": self.duration.to_value(),
            "metrics": self.metrics.to_value(),
        })
    }
}

impl serde::Serialize for Config {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(s)
    }
}

impl<'de> serde::Deserialize<'de> for Config {
    /// Through [`Config::from_value`]: the same checks, a refusal as the error's message.
    /// No size bound here: bound the input first, or use [`parse_json`].
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        Config::from_value(&v).map_err(serde::de::Error::custom)
    }
}
