//! The model's `layer1` settings (`Config.layer1[]`): which ports share a speed and an MTU.
//!
//! upktgen changes no interface: it cannot set a link's speed or MTU, so it takes both as
//! what the config says the ports are. `speed` is the port's line rate: a rate in percent
//! and a gap in bytes are reckoned against it, and flows that need more than the line on the
//! wire are refused. `mtu` is checked against the flows a port sends (a frame whose payload
//! after its Ethernet and VLAN headers exceeds it is refused); the interface's own MTU is
//! checked when the run opens it. The members that would change the interface (`media`,
//! auto-negotiation, flow control) are refused when given, and `promiscuous` is taken at
//! the model's default only (true: a veth hands every frame to a packet socket; on a NIC,
//! send to the receiving interface's own MAC, as upktgen does not switch the mode on).

use std::collections::HashMap;

use serde_json::{Value, json};

use super::walk::Obj;
use super::{Config, FCS_LEN, Header, Path, Port, Refusal};

/// The members of the model's `Layer1`.
pub const FIELDS: [&str; 10] = [
    "port_names",
    "speed",
    "media",
    "promiscuous",
    "mtu",
    "ieee_media_defaults",
    "auto_negotiate",
    "auto_negotiation",
    "flow_control",
    "name",
];

/// The model's speeds and their line rates in bits per second.
pub const SPEEDS: [(&str, u64); 13] = [
    ("speed_10_fd_mbps", 10_000_000),
    ("speed_10_hd_mbps", 10_000_000),
    ("speed_100_fd_mbps", 100_000_000),
    ("speed_100_hd_mbps", 100_000_000),
    ("speed_1_gbps", 1_000_000_000),
    ("speed_10_gbps", 10_000_000_000),
    ("speed_25_gbps", 25_000_000_000),
    ("speed_40_gbps", 40_000_000_000),
    ("speed_50_gbps", 50_000_000_000),
    ("speed_100_gbps", 100_000_000_000),
    ("speed_200_gbps", 200_000_000_000),
    ("speed_400_gbps", 400_000_000_000),
    ("speed_800_gbps", 800_000_000_000),
];

/// The model's bounds and default of `mtu`.
pub const MTU_MIN: u64 = 64;
pub const MTU_MAX: u64 = 14_000;
pub const MTU_DEFAULT: u32 = 1500;

/// One `layer1` entry, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layer1 {
    pub name: String,
    pub port_names: Vec<String>,
    /// The model's speed name, when given (absent: the interface's own, unknown here).
    pub speed: Option<&'static str>,
    /// The MTU (the model's default, 1,500, when absent).
    pub mtu: u32,
}

impl Layer1 {
    /// The line rate its speed names, in bits per second.
    pub fn line_bps(&self) -> Option<u64> {
        let s = self.speed?;
        SPEEDS.iter().find(|(n, _)| *n == s).map(|(_, b)| *b)
    }

    /// The model's JSON, every default filled in.
    pub fn to_value(&self) -> Value {
        let mut v = json!({"name": self.name, "port_names": self.port_names, "mtu": self.mtu});
        if let Some(s) = self.speed {
            v["speed"] = json!(s);
        }
        v
    }
}

/// Reads `layer1[]` of a config whose ports are `ports`; `names` holds every name given so
/// far (a layer1's name is unique among them too, as the model's names are).
pub(super) fn parse(
    o: &Obj,
    ports: &[Port],
    names: &mut HashMap<String, String>,
) -> Result<Vec<Layer1>, Refusal> {
    let mut out: Vec<Layer1> = Vec::new();
    let mut claimed: HashMap<String, Path> = HashMap::new();
    for (v, at) in o.array("layer1", super::MAX_PORTS)? {
        let l = Obj::new(v, &at, &FIELDS)?;
        let name = super::name(&l)?;
        super::claim(names, &name, &l.at("name"))?;
        let not_changed =
            "upktgen does not change an interface's settings: give the interface as it is";
        l.only_default(
            "promiscuous",
            &Value::Bool(true),
            "upktgen does not change an interface's promiscuous mode: its receivers count what the interface hands to a packet socket",
        )?;
        for k in [
            "media",
            "ieee_media_defaults",
            "auto_negotiate",
            "auto_negotiation",
            "flow_control",
        ] {
            if l.get(k).is_some() {
                return Err(Refusal::unsupported_because(l.at(k), not_changed));
            }
        }
        let list = l.array("port_names", super::MAX_PORTS)?;
        if list.is_empty() {
            return Err(Refusal::bad(
                l.at("port_names"),
                "missing or empty (the model requires the ports it applies to)",
            ));
        }
        let mut port_names = Vec::new();
        for (v, p) in list {
            let n = super::walk::string(v, &p)?;
            if !ports.iter().any(|q| q.name == n) {
                return Err(Refusal::bad(p, format!("{n:?} is not the name of a port")));
            }
            if let Some(first) = claimed.get(n) {
                return Err(Refusal::bad(
                    p,
                    format!("port {n:?} already has its layer1 settings at {first}"),
                ));
            }
            claimed.insert(n.to_string(), p);
            port_names.push(n.to_string());
        }
        let speed = match l.string("speed")? {
            None => None,
            Some(_) => Some(l.name_of("speed", &SPEEDS.map(|(n, _)| n), "")?),
        };
        let mtu = l.uint("mtu", MTU_MIN, MTU_MAX, u64::from(MTU_DEFAULT))? as u32;
        out.push(Layer1 {
            name,
            port_names,
            speed,
            mtu,
        });
    }
    Ok(out)
}

/// Refuses a flow whose largest frame carries more than its port's MTU after its Ethernet
/// and VLAN headers (the FCS not counted).
pub(super) fn check_mtu(cfg: &Config) -> Result<(), Refusal> {
    for (i, f) in cfg.flows.iter().enumerate() {
        let Some(l) = cfg.layer1_of(&f.tx_port) else {
            continue;
        };
        let l2: usize = f
            .packet
            .iter()
            .take_while(|h| matches!(h, Header::Ethernet(_) | Header::Vlan(_)))
            .map(Header::wire_len)
            .sum();
        let (_, max) = f.size.bounds();
        let payload = max.saturating_sub(FCS_LEN + l2 as u32);
        if payload > l.mtu {
            return Err(Refusal::bad(
                Path::root().key("flows").index(i).key("size"),
                format!(
                    "frames of up to {max} bytes carry {payload} bytes after {l2} bytes of Ethernet and VLAN headers, above port {:?}'s MTU of {} (layer1 {:?})",
                    f.tx_port, l.mtu, l.name
                ),
            ));
        }
    }
    Ok(())
}
