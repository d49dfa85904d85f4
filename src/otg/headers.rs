//! The headers of a flow's packet (`Flow.Header`): Ethernet, VLAN, MPLS, IPv4, IPv6, UDP,
//! TCP and raw bytes (`custom`). Every field is a [`Pattern`]; an absent field is the
//! model's default. Fields upktgen does not implement are taken only at their default.

use std::net::{Ipv4Addr, Ipv6Addr};

use serde_json::{Value, json};

use super::pattern::{self, Pattern, Spec, int};
use super::refusal::{Path, Refusal};
use super::walk::Obj;
use crate::wire::{self, MacAddr};

/// TCP's header without options, in bytes.
pub const TCP_HLEN: usize = 20;
/// The most headers one flow's packet may have.
pub const MAX_HEADERS: usize = 32;
/// The most bytes of one `custom` header.
pub const MAX_CUSTOM: usize = super::MAX_FRAME_SIZE as usize;

/// Every header the model has (`Flow.Header.choice`), supported or not.
const CHOICES: [&str; 25] = [
    "custom",
    "ethernet",
    "vlan",
    "vxlan",
    "ipv4",
    "ipv6",
    "pfcpause",
    "ethernetpause",
    "tcp",
    "udp",
    "gre",
    "gtpv1",
    "gtpv2",
    "arp",
    "icmp",
    "icmpv6",
    "ppp",
    "igmpv1",
    "mpls",
    "snmpv2c",
    "rsvp",
    "macsec",
    "lacp",
    "ipv6_extension_header",
    "cfm",
];

/// One header of a packet, in wire order.
#[derive(Debug, Clone, PartialEq)]
pub enum Header {
    Ethernet(Ethernet),
    Vlan(Vlan),
    Mpls(Mpls),
    Ipv4(Ipv4),
    Ipv6(Ipv6),
    Udp(Udp),
    Tcp(Tcp),
    /// Raw bytes, as given.
    Custom(Vec<u8>),
}

/// Ethernet II. `dst` auto: the neighbour's MAC when upktgen knows it, else all zeros;
/// `ether_type` auto: the next header's type.
#[derive(Debug, Clone, PartialEq)]
pub struct Ethernet {
    pub dst: Pattern<MacAddr>,
    pub src: Pattern<MacAddr>,
    pub ether_type: Pattern<u32>,
}

/// An 802.1Q tag (priority, CFI, VLAN id) and the EtherType after it (`tpid`; `None`:
/// the next header's type).
#[derive(Debug, Clone, PartialEq)]
pub struct Vlan {
    pub priority: Pattern<u32>,
    pub cfi: Pattern<u32>,
    pub id: Pattern<u32>,
    pub tpid: Option<Pattern<u32>>,
}

/// One MPLS label stack entry. `bottom_of_stack` auto: 1 on the last MPLS header of the
/// packet, 0 on the others; `label` auto: 16.
#[derive(Debug, Clone, PartialEq)]
pub struct Mpls {
    pub label: Pattern<u32>,
    pub traffic_class: Pattern<u32>,
    pub bottom_of_stack: Pattern<u32>,
    pub time_to_live: Pattern<u32>,
}

/// IPv4 without options. Auto: `header_length` 5, `total_length` from the frame size,
/// `protocol` from the next header (61 when there is none). The checksum is computed.
#[derive(Debug, Clone, PartialEq)]
pub struct Ipv4 {
    pub version: Pattern<u32>,
    pub header_length: Pattern<u32>,
    pub priority: Ipv4Priority,
    pub total_length: Pattern<u32>,
    pub identification: Pattern<u32>,
    pub reserved: Pattern<u32>,
    pub dont_fragment: Pattern<u32>,
    pub more_fragments: Pattern<u32>,
    /// The model's field is 5 bits wide (0 to 31).
    pub fragment_offset: Pattern<u32>,
    pub time_to_live: Pattern<u32>,
    pub protocol: Pattern<u32>,
    pub src: Pattern<Ipv4Addr>,
    pub dst: Pattern<Ipv4Addr>,
}

/// The IPv4 TOS byte, as a whole or in its parts.
#[derive(Debug, Clone, PartialEq)]
pub enum Ipv4Priority {
    Raw(Pattern<u32>),
    Tos {
        precedence: Pattern<u32>,
        delay: Pattern<u32>,
        throughput: Pattern<u32>,
        reliability: Pattern<u32>,
        monetary: Pattern<u32>,
        unused: Pattern<u32>,
    },
    Dscp {
        phb: Pattern<u32>,
        ecn: Pattern<u32>,
    },
}

/// IPv6 without extension headers. Auto: `payload_length` from the frame size,
/// `next_header` from the next header (59 when there is none).
#[derive(Debug, Clone, PartialEq)]
pub struct Ipv6 {
    pub version: Pattern<u32>,
    pub traffic_class: Pattern<u32>,
    pub flow_label: Pattern<u32>,
    pub payload_length: Pattern<u32>,
    pub next_header: Pattern<u32>,
    pub hop_limit: Pattern<u32>,
    pub src: Pattern<Ipv6Addr>,
    pub dst: Pattern<Ipv6Addr>,
}

/// UDP. `length` `None`: from the frame size. The checksum is computed.
#[derive(Debug, Clone, PartialEq)]
pub struct Udp {
    pub src_port: Pattern<u32>,
    pub dst_port: Pattern<u32>,
    pub length: Option<Pattern<u32>>,
}

/// TCP without options. `data_offset` `None`: 5 words. The checksum is computed.
#[derive(Debug, Clone, PartialEq)]
pub struct Tcp {
    pub src_port: Pattern<u32>,
    pub dst_port: Pattern<u32>,
    pub seq_num: Pattern<u32>,
    pub ack_num: Pattern<u32>,
    pub data_offset: Option<Pattern<u32>>,
    pub ecn_ns: Pattern<u32>,
    pub ecn_cwr: Pattern<u32>,
    pub ecn_echo: Pattern<u32>,
    pub ctl_urg: Pattern<u32>,
    pub ctl_ack: Pattern<u32>,
    pub ctl_psh: Pattern<u32>,
    pub ctl_rst: Pattern<u32>,
    pub ctl_syn: Pattern<u32>,
    pub ctl_fin: Pattern<u32>,
    pub window: Pattern<u32>,
}

const MAC: Spec<MacAddr> = Spec {
    bits: 48,
    value: MacAddr([0; 6]),
    auto: false,
    default_auto: false,
    random: false,
};
const V4: Spec<Ipv4Addr> = Spec {
    bits: 32,
    value: Ipv4Addr::UNSPECIFIED,
    auto: true,
    default_auto: false,
    random: true,
};
const V6: Spec<Ipv6Addr> = Spec {
    bits: 128,
    value: Ipv6Addr::UNSPECIFIED,
    auto: true,
    default_auto: false,
    random: false,
};
const BIT: Spec<u32> = int(1, 0);
const PORT: Spec<u32> = int(16, 0).random();

impl Header {
    /// The model's name for this header (`Flow.Header.choice`).
    pub fn name(&self) -> &'static str {
        match self {
            Header::Ethernet(_) => "ethernet",
            Header::Vlan(_) => "vlan",
            Header::Mpls(_) => "mpls",
            Header::Ipv4(_) => "ipv4",
            Header::Ipv6(_) => "ipv6",
            Header::Udp(_) => "udp",
            Header::Tcp(_) => "tcp",
            Header::Custom(_) => "custom",
        }
    }

    /// The header's length on the wire, in bytes.
    pub fn wire_len(&self) -> usize {
        match self {
            Header::Ethernet(_) => wire::ETH_HLEN,
            Header::Vlan(_) => wire::vlan::HEADER_LEN,
            Header::Mpls(_) => wire::mpls::HEADER_LEN,
            Header::Ipv4(_) => wire::IPV4_HLEN,
            Header::Ipv6(_) => wire::IPV6_HLEN,
            Header::Udp(_) => wire::UDP_HLEN,
            Header::Tcp(_) => TCP_HLEN,
            Header::Custom(b) => b.len(),
        }
    }

    /// An Ethernet header with every field at the model's default (what a flow without
    /// `packet` sends).
    pub fn default_ethernet() -> Header {
        Header::Ethernet(Ethernet {
            dst: Pattern::Auto,
            src: Pattern::Value(MacAddr([0; 6])),
            ether_type: Pattern::Auto,
        })
    }

    /// One `Flow.Header` object.
    pub fn parse(v: &Value, path: &Path) -> Result<Header, Refusal> {
        let mut fields = vec!["choice"];
        fields.extend(CHOICES);
        let o = Obj::new(v, path, &fields)?;
        let c = o.choice(&CHOICES, "ethernet")?;
        let empty = json!({});
        let at = o.at(c);
        let body = o.get(c).unwrap_or(&empty);
        let h = |names: &[&str]| Obj::new(body, &at, names);
        Ok(match c {
            "ethernet" => {
                Header::Ethernet(ethernet(&h(&["dst", "src", "ether_type", "pfc_queue"])?)?)
            }
            "vlan" => Header::Vlan(vlan(&h(&["priority", "cfi", "id", "tpid"])?)?),
            "mpls" => Header::Mpls(mpls(&h(&[
                "label",
                "traffic_class",
                "bottom_of_stack",
                "time_to_live",
            ])?)?),
            "ipv4" => Header::Ipv4(ipv4(&h(&IPV4_FIELDS)?)?),
            "ipv6" => Header::Ipv6(ipv6(&h(&IPV6_FIELDS)?)?),
            "udp" => Header::Udp(udp(&h(&["src_port", "dst_port", "length", "checksum"])?)?),
            "tcp" => Header::Tcp(tcp(&h(&TCP_FIELDS)?)?),
            "custom" => Header::Custom(custom(&h(&["bytes", "metric_tags"])?)?),
            _ => return Err(Refusal::unsupported(at)),
        })
    }

    /// The model's JSON for this header.
    pub fn to_value(&self) -> Value {
        let body = match self {
            Header::Ethernet(e) => json!({
                "dst": e.dst.to_value(), "src": e.src.to_value(),
                "ether_type": e.ether_type.to_value(), "pfc_queue": int(3, 0).default_pattern().to_value()}),
            Header::Vlan(v) => {
                let mut j = json!({"priority": v.priority.to_value(), "cfi": v.cfi.to_value(), "id": v.id.to_value()});
                if let Some(t) = &v.tpid {
                    j["tpid"] = t.to_value();
                }
                j
            }
            Header::Mpls(m) => json!({
                "label": m.label.to_value(), "traffic_class": m.traffic_class.to_value(),
                "bottom_of_stack": m.bottom_of_stack.to_value(), "time_to_live": m.time_to_live.to_value()}),
            Header::Ipv4(i) => json!({
                "version": i.version.to_value(), "header_length": i.header_length.to_value(),
                "priority": i.priority.to_value(), "total_length": i.total_length.to_value(),
                "identification": i.identification.to_value(), "reserved": i.reserved.to_value(),
                "dont_fragment": i.dont_fragment.to_value(), "more_fragments": i.more_fragments.to_value(),
                "fragment_offset": i.fragment_offset.to_value(), "time_to_live": i.time_to_live.to_value(),
                "protocol": i.protocol.to_value(), "header_checksum": GOOD.clone(),
                "src": i.src.to_value(), "dst": i.dst.to_value()}),
            Header::Ipv6(i) => json!({
                "version": i.version.to_value(), "traffic_class": i.traffic_class.to_value(),
                "flow_label": i.flow_label.to_value(), "payload_length": i.payload_length.to_value(),
                "next_header": i.next_header.to_value(), "hop_limit": i.hop_limit.to_value(),
                "src": i.src.to_value(), "dst": i.dst.to_value()}),
            Header::Udp(u) => {
                let mut j = json!({"src_port": u.src_port.to_value(), "dst_port": u.dst_port.to_value(),
                    "checksum": GOOD.clone()});
                if let Some(l) = &u.length {
                    j["length"] = l.to_value();
                }
                j
            }
            Header::Tcp(t) => {
                let mut j = json!({
                    "src_port": t.src_port.to_value(), "dst_port": t.dst_port.to_value(),
                    "seq_num": t.seq_num.to_value(), "ack_num": t.ack_num.to_value(),
                    "ecn_ns": t.ecn_ns.to_value(), "ecn_cwr": t.ecn_cwr.to_value(), "ecn_echo": t.ecn_echo.to_value(),
                    "ctl_urg": t.ctl_urg.to_value(), "ctl_ack": t.ctl_ack.to_value(), "ctl_psh": t.ctl_psh.to_value(),
                    "ctl_rst": t.ctl_rst.to_value(), "ctl_syn": t.ctl_syn.to_value(), "ctl_fin": t.ctl_fin.to_value(),
                    "window": t.window.to_value(), "checksum": GOOD.clone()});
                if let Some(d) = &t.data_offset {
                    j["data_offset"] = d.to_value();
                }
                j
            }
            Header::Custom(b) => json!({"bytes": hex(b)}),
        };
        json!({"choice": self.name(), self.name(): body})
    }
}

/// The model's default checksum: computed, correct.
static GOOD: std::sync::LazyLock<Value> =
    std::sync::LazyLock::new(|| json!({"choice": "generated", "generated": "good"}));

/// Refuses a field upktgen does not implement unless it holds the model's default.
fn default_only<T: pattern::FieldValue>(
    o: &Obj,
    key: &str,
    spec: &Spec<T>,
    detail: &str,
) -> Result<(), Refusal> {
    if pattern::field(o, key, spec)? != spec.default_pattern() {
        return Err(Refusal::unsupported_because(o.at(key), detail));
    }
    Ok(())
}

/// A checksum (`Pattern.Flow.*.Checksum`): only the model's default, computed and good.
fn checksum(o: &Obj, key: &str) -> Result<(), Refusal> {
    let Some(v) = o.get(key) else {
        return Ok(());
    };
    let c = Obj::new(v, &o.at(key), &["choice", "generated", "custom"])?;
    match c.choice(&["generated", "custom"], "generated")? {
        "generated" => match c.name_of("generated", &["good", "bad"], "good")? {
            "good" => Ok(()),
            _ => Err(Refusal::unsupported_because(
                c.at("generated"),
                "upktgen writes correct checksums only",
            )),
        },
        _ => Err(Refusal::unsupported_because(
            c.at("custom"),
            "upktgen writes correct checksums only",
        )),
    }
}

fn ethernet(o: &Obj) -> Result<Ethernet, Refusal> {
    default_only(
        o,
        "pfc_queue",
        &int(3, 0),
        "upktgen sends no PFC pause frames",
    )?;
    Ok(Ethernet {
        dst: pattern::field(
            o,
            "dst",
            &Spec {
                auto: true,
                default_auto: true,
                ..MAC
            },
        )?,
        src: pattern::field(o, "src", &MAC)?,
        ether_type: pattern::field(o, "ether_type", &int(16, 65535).auto())?,
    })
}

fn vlan(o: &Obj) -> Result<Vlan, Refusal> {
    Ok(Vlan {
        priority: pattern::field(o, "priority", &int(3, 0))?,
        cfi: pattern::field(o, "cfi", &BIT)?,
        id: pattern::field(o, "id", &int(12, 0))?,
        tpid: optional(o, "tpid", &int(16, 65535))?,
    })
}

/// A field whose absence means "computed by upktgen", though the model has no `auto` for it.
fn optional(o: &Obj, key: &str, spec: &Spec<u32>) -> Result<Option<Pattern<u32>>, Refusal> {
    o.get(key)
        .map(|v| pattern::parse(v, &o.at(key), spec))
        .transpose()
}

fn mpls(o: &Obj) -> Result<Mpls, Refusal> {
    Ok(Mpls {
        label: pattern::field(o, "label", &int(20, 16).auto())?,
        traffic_class: pattern::field(o, "traffic_class", &int(3, 0))?,
        bottom_of_stack: pattern::field(o, "bottom_of_stack", &int(1, 1).auto())?,
        time_to_live: pattern::field(o, "time_to_live", &int(8, 64))?,
    })
}

const IPV4_FIELDS: [&str; 15] = [
    "version",
    "header_length",
    "priority",
    "total_length",
    "identification",
    "reserved",
    "dont_fragment",
    "more_fragments",
    "fragment_offset",
    "time_to_live",
    "protocol",
    "header_checksum",
    "src",
    "dst",
    "options",
];

fn ipv4(o: &Obj) -> Result<Ipv4, Refusal> {
    o.absent("options")?;
    checksum(o, "header_checksum")?;
    Ok(Ipv4 {
        version: pattern::field(o, "version", &int(4, 4))?,
        header_length: pattern::field(o, "header_length", &int(4, 5).auto())?,
        priority: match o.get("priority") {
            None => Ipv4Priority::default(),
            Some(v) => Ipv4Priority::parse(v, &o.at("priority"))?,
        },
        total_length: pattern::field(o, "total_length", &int(16, 46).auto())?,
        identification: pattern::field(o, "identification", &int(16, 0))?,
        reserved: pattern::field(o, "reserved", &BIT)?,
        dont_fragment: pattern::field(o, "dont_fragment", &BIT)?,
        more_fragments: pattern::field(o, "more_fragments", &BIT)?,
        fragment_offset: pattern::field(o, "fragment_offset", &int(5, 0))?,
        time_to_live: pattern::field(o, "time_to_live", &int(8, 64))?,
        protocol: pattern::field(o, "protocol", &int(8, 61).auto())?,
        src: pattern::field(o, "src", &V4)?,
        dst: pattern::field(o, "dst", &V4)?,
    })
}

impl Default for Ipv4Priority {
    /// The model's default: DSCP 0, ECN 0.
    fn default() -> Self {
        Ipv4Priority::Dscp {
            phb: Pattern::Value(0),
            ecn: Pattern::Value(0),
        }
    }
}

impl Ipv4Priority {
    fn parse(v: &Value, path: &Path) -> Result<Self, Refusal> {
        let o = Obj::new(v, path, &["choice", "raw", "tos", "dscp"])?;
        let empty = json!({});
        let c = o.choice(&["raw", "tos", "dscp"], "dscp")?;
        let body = o.get(c).unwrap_or(&empty);
        Ok(match c {
            "raw" => Ipv4Priority::Raw(pattern::parse(body, &o.at("raw"), &int(8, 0))?),
            "tos" => {
                let t = Obj::new(
                    body,
                    &o.at("tos"),
                    &[
                        "precedence",
                        "delay",
                        "throughput",
                        "reliability",
                        "monetary",
                        "unused",
                    ],
                )?;
                Ipv4Priority::Tos {
                    precedence: pattern::field(&t, "precedence", &int(3, 0))?,
                    delay: pattern::field(&t, "delay", &BIT)?,
                    throughput: pattern::field(&t, "throughput", &BIT)?,
                    reliability: pattern::field(&t, "reliability", &BIT)?,
                    monetary: pattern::field(&t, "monetary", &BIT)?,
                    unused: pattern::field(&t, "unused", &BIT)?,
                }
            }
            _ => {
                let d = Obj::new(body, &o.at("dscp"), &["phb", "ecn"])?;
                Ipv4Priority::Dscp {
                    phb: pattern::field(&d, "phb", &int(6, 0))?,
                    ecn: pattern::field(&d, "ecn", &int(2, 0))?,
                }
            }
        })
    }

    fn to_value(&self) -> Value {
        match self {
            Ipv4Priority::Raw(r) => json!({"choice": "raw", "raw": r.to_value()}),
            Ipv4Priority::Tos {
                precedence,
                delay,
                throughput,
                reliability,
                monetary,
                unused,
            } => json!({
                "choice": "tos", "tos": {
                    "precedence": precedence.to_value(), "delay": delay.to_value(),
                    "throughput": throughput.to_value(), "reliability": reliability.to_value(),
                    "monetary": monetary.to_value(), "unused": unused.to_value()}}),
            Ipv4Priority::Dscp { phb, ecn } => {
                json!({"choice": "dscp", "dscp": {"phb": phb.to_value(), "ecn": ecn.to_value()}})
            }
        }
    }
}

const IPV6_FIELDS: [&str; 9] = [
    "version",
    "traffic_class",
    "flow_label",
    "payload_length",
    "next_header",
    "hop_limit",
    "src",
    "dst",
    "dst_usids",
];

fn ipv6(o: &Obj) -> Result<Ipv6, Refusal> {
    o.absent("dst_usids")?;
    Ok(Ipv6 {
        version: pattern::field(o, "version", &int(4, 6))?,
        traffic_class: pattern::field(o, "traffic_class", &int(8, 0))?,
        flow_label: pattern::field(o, "flow_label", &int(20, 0).random())?,
        payload_length: pattern::field(o, "payload_length", &int(16, 0).auto())?,
        next_header: pattern::field(o, "next_header", &int(8, 59).auto())?,
        hop_limit: pattern::field(o, "hop_limit", &int(8, 64))?,
        src: pattern::field(o, "src", &V6)?,
        dst: pattern::field(o, "dst", &V6)?,
    })
}

fn udp(o: &Obj) -> Result<Udp, Refusal> {
    checksum(o, "checksum")?;
    Ok(Udp {
        src_port: pattern::field(o, "src_port", &PORT)?,
        dst_port: pattern::field(o, "dst_port", &PORT)?,
        length: optional(o, "length", &int(16, 0))?,
    })
}

const TCP_FIELDS: [&str; 16] = [
    "src_port",
    "dst_port",
    "seq_num",
    "ack_num",
    "data_offset",
    "ecn_ns",
    "ecn_cwr",
    "ecn_echo",
    "ctl_urg",
    "ctl_ack",
    "ctl_psh",
    "ctl_rst",
    "ctl_syn",
    "ctl_fin",
    "window",
    "checksum",
];

fn tcp(o: &Obj) -> Result<Tcp, Refusal> {
    checksum(o, "checksum")?;
    let bit = |k: &str| pattern::field(o, k, &BIT);
    Ok(Tcp {
        src_port: pattern::field(o, "src_port", &PORT)?,
        dst_port: pattern::field(o, "dst_port", &PORT)?,
        seq_num: pattern::field(o, "seq_num", &int(32, 0))?,
        ack_num: pattern::field(o, "ack_num", &int(32, 0))?,
        data_offset: optional(o, "data_offset", &int(4, 0))?,
        ecn_ns: bit("ecn_ns")?,
        ecn_cwr: bit("ecn_cwr")?,
        ecn_echo: bit("ecn_echo")?,
        ctl_urg: bit("ctl_urg")?,
        ctl_ack: bit("ctl_ack")?,
        ctl_psh: bit("ctl_psh")?,
        ctl_rst: bit("ctl_rst")?,
        ctl_syn: bit("ctl_syn")?,
        ctl_fin: bit("ctl_fin")?,
        window: pattern::field(o, "window", &int(16, 0))?,
    })
}

/// `custom.bytes`: hex digits, with an optional `0x` in front; spaces and colons between
/// them are dropped, as the model says.
fn custom(o: &Obj) -> Result<Vec<u8>, Refusal> {
    o.absent("metric_tags")?;
    let path = o.at("bytes");
    let s = o
        .string("bytes")?
        .ok_or_else(|| Refusal::bad(path.clone(), "missing (the model requires it)"))?;
    let digits: Vec<u8> = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s)
        .bytes()
        .filter(|b| *b != b' ' && *b != b':')
        .collect();
    let bad = |why: &str| Refusal::bad(path.clone(), why.to_string());
    if digits.is_empty() {
        return Err(bad("no bytes (expected hex digits)"));
    }
    if digits.len() % 2 == 1 {
        return Err(bad("an odd number of hex digits (two make a byte)"));
    }
    if digits.len() / 2 > MAX_CUSTOM {
        return Err(bad(&format!(
            "{} bytes, more than a frame of {MAX_CUSTOM} holds",
            digits.len() / 2
        )));
    }
    digits
        .chunks(2)
        .map(|p| {
            let d = |c: u8| (c as char).to_digit(16);
            match (d(p[0]), d(p[1])) {
                (Some(h), Some(l)) => Ok((h * 16 + l) as u8),
                _ => Err(bad("not hex digits (expected 0-9, a-f, spaces or colons)")),
            }
        })
        .collect()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
