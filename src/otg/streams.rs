//! An OTG config's flows as the engine's streams ([`crate::stream::spec::StreamSpec`]).
//!
//! The model and the engine differ in a few conventions, each converted here once:
//! - OTG sizes include the 4-byte FCS, the engine's frame lengths do not: 4 is subtracted.
//! - OTG bit rates count a frame's bytes with the FCS (no preamble, no gap): they become
//!   frames per second at the flow's mean size. A percentage is of the line rate with
//!   preamble and gap counted, as the engine counts it.
//! - `auto` fields the engine computes (lengths, the next header's type, checksums, MPLS's
//!   bottom of stack) are left to it; an Ethernet destination `auto` is the neighbour's MAC
//!   the caller knows (the lab's receiver), and refused where it does not know one.
//! - Fields the engine sends only one way (IPv4's version, header length, fragments; TCP's
//!   data offset; fixed TCP flags) are taken at that value, anything else refused with the
//!   field's path.
//!
//! A random pattern repeats after its `count` values, as a counter does; its seed 0 means
//! the run's seed.

use super::flow::{Duration, Rate, Size, Span};
use super::headers::{self as h, Header, Ipv4Priority};
use super::pattern::{FieldValue, Pattern};
use super::refusal::{Path, Refusal};
use super::{Config, Flow};
use crate::stream::spec::{
    self, Burst, EthernetSpec, Gap, Ipv4Spec, Ipv6Spec, Length, MplsSpec, StreamSpec, TcpSpec, Tos,
    UdpSpec, VlanSpec,
};
use crate::wire::{MacAddr, tcp};

/// The FCS the model counts in a frame's size and the engine does not.
pub const FCS: u32 = 4;

/// What the conversion needs to know of the run.
#[derive(Debug, Clone, Copy)]
pub struct Context {
    /// The MAC an Ethernet destination `auto` stands for (the next hop), when known.
    pub neighbour: Option<MacAddr>,
    /// The transmitting port's line rate, when known (a percentage or a gap in bytes needs
    /// it).
    pub line_bps: Option<u64>,
    /// The run's seed, for random patterns whose seed is 0.
    pub seed: u64,
}

/// The config's flows, in order, as streams (stream `i` is flow `i`).
pub fn streams(cfg: &Config, cx: &Context) -> Result<Vec<StreamSpec>, Refusal> {
    streams_of(cfg, cx, 0..cfg.flows.len())
}

/// The config's flows `which` (indices, in the order given) as streams, in the context of
/// the one port that sends them all (its line rate and next hop); refusals name each
/// flow's own path.
pub fn streams_of(
    cfg: &Config,
    cx: &Context,
    which: impl IntoIterator<Item = usize>,
) -> Result<Vec<StreamSpec>, Refusal> {
    let flows = Path::root().key("flows");
    which
        .into_iter()
        .filter_map(|i| cfg.flows.get(i).map(|f| (i, f)))
        .map(|(i, f)| stream(f, &flows.index(i), cx))
        .collect()
}

fn stream(f: &Flow, at: &Path, cx: &Context) -> Result<StreamSpec, Refusal> {
    let packet = at.key("packet");
    let n_mpls = f
        .packet
        .iter()
        .filter(|h| matches!(h, Header::Mpls(_)))
        .count();
    let mut mpls_seen = 0;
    let mut headers = Vec::with_capacity(f.packet.len());
    for (i, hd) in f.packet.iter().enumerate() {
        let p = packet.index(i);
        headers.push(match hd {
            Header::Ethernet(e) => spec::Header::Ethernet(ethernet(e, &p.key("ethernet"), cx)?),
            Header::Vlan(v) => spec::Header::Vlan(vlan(v, &p.key("vlan"), cx)?),
            Header::Mpls(m) => {
                mpls_seen += 1;
                spec::Header::Mpls(mpls(m, &p.key("mpls"), cx, mpls_seen == n_mpls)?)
            }
            Header::Ipv4(v) => spec::Header::Ipv4(ipv4(v, &p.key("ipv4"), cx)?),
            Header::Ipv6(v) => spec::Header::Ipv6(ipv6(v, &p.key("ipv6"), cx)?),
            Header::Udp(u) => spec::Header::Udp(udp(u, &p.key("udp"), cx)?),
            Header::Tcp(t) => spec::Header::Tcp(tcp_spec(t, &p.key("tcp"), cx)?),
            Header::Custom(b) => spec::Header::Raw(b.clone()),
        });
    }
    let (length, start_delay_ns) = length(&f.duration, &at.key("duration"), cx)?;
    Ok(StreamSpec {
        name: f.name.clone(),
        headers,
        size: size(&f.size, cx.seed),
        rate: rate(&f.rate, &f.size, &at.key("rate"), cx)?,
        length,
        start_delay_ns,
        fill: spec::Fill::Zeros,
    })
}

/// A field's pattern; `auto` is `auto` when the field has a value for it here.
fn pat<T: FieldValue>(
    p: &Pattern<T>,
    at: &Path,
    auto: Option<u128>,
    cx: &Context,
) -> Result<spec::Pattern, Refusal> {
    Ok(match p {
        Pattern::Value(v) => spec::Pattern::Value(v.to_u128()),
        Pattern::Values(vs) => spec::Pattern::List(vs.iter().map(FieldValue::to_u128).collect()),
        Pattern::Increment(c) => spec::Pattern::Increment {
            start: c.start.to_u128(),
            step: c.step.to_u128(),
            count: u64::from(c.count),
        },
        Pattern::Decrement(c) => spec::Pattern::Decrement {
            start: c.start.to_u128(),
            step: c.step.to_u128(),
            count: u64::from(c.count),
        },
        Pattern::Auto => match auto {
            Some(v) => spec::Pattern::Value(v),
            None => {
                return Err(Refusal::unsupported_because(
                    at.key("auto"),
                    "upktgen knows no value for it here: give one",
                ));
            }
        },
        Pattern::Random(r) => {
            let seed = if r.seed == 0 {
                cx.seed
            } else {
                u64::from(r.seed)
            };
            let draw = spec::Pattern::Random {
                min: r.min.to_u128(),
                max: r.max.to_u128(),
                seed,
            };
            // `count` values, then the same again: drawn once (at most 65,536).
            if r.count as usize > spec::MAX_LIST {
                return Err(Refusal::bad(
                    at.key("random").key("count"),
                    format!("at most {} values", spec::MAX_LIST),
                ));
            }
            spec::Pattern::List((0..u64::from(r.count)).map(|k| draw.at(k, 128)).collect())
        }
    })
}

/// A field the engine sends one way only: `auto`, or that value.
fn only<T: FieldValue>(p: &Pattern<T>, at: &Path, v: u128, why: &str) -> Result<(), Refusal> {
    match p {
        Pattern::Auto => Ok(()),
        Pattern::Value(x) if x.to_u128() == v => Ok(()),
        _ => Err(Refusal::unsupported_because(at.clone(), why)),
    }
}

/// A field that must be the same in every frame (the engine keeps it once per stream).
fn constant<T: FieldValue>(p: &Pattern<T>, at: &Path) -> Result<u128, Refusal> {
    match p {
        Pattern::Value(v) => Ok(v.to_u128()),
        Pattern::Values(vs) if vs.len() == 1 => Ok(vs[0].to_u128()),
        _ => Err(Refusal::unsupported_because(
            at.clone(),
            "upktgen takes one value for it, the same in every frame",
        )),
    }
}

fn mac(m: MacAddr) -> u128 {
    m.0.iter().fold(0u128, |a, b| a << 8 | u128::from(*b))
}

fn ethernet(e: &h::Ethernet, at: &Path, cx: &Context) -> Result<EthernetSpec, Refusal> {
    Ok(EthernetSpec {
        dst: pat(&e.dst, &at.key("dst"), cx.neighbour.map(mac), cx)?,
        src: pat(&e.src, &at.key("src"), None, cx)?,
        ethertype: match &e.ether_type {
            Pattern::Auto => None,
            p => Some(pat(p, &at.key("ether_type"), None, cx)?),
        },
    })
}

fn vlan(v: &h::Vlan, at: &Path, cx: &Context) -> Result<VlanSpec, Refusal> {
    let d = VlanSpec::default();
    Ok(VlanSpec {
        tpid: match &v.tpid {
            None | Some(Pattern::Auto) => d.tpid,
            Some(p) => constant(p, &at.key("tpid"))? as u16,
        },
        pcp: pat(&v.priority, &at.key("priority"), None, cx)?,
        dei: pat(&v.cfi, &at.key("cfi"), None, cx)?,
        vid: pat(&v.id, &at.key("id"), None, cx)?,
    })
}

fn mpls(m: &h::Mpls, at: &Path, cx: &Context, last: bool) -> Result<MplsSpec, Refusal> {
    Ok(MplsSpec {
        label: pat(&m.label, &at.key("label"), Some(16), cx)?,
        traffic_class: pat(&m.traffic_class, &at.key("traffic_class"), None, cx)?,
        bottom_of_stack: Some(pat(
            &m.bottom_of_stack,
            &at.key("bottom_of_stack"),
            Some(u128::from(last)),
            cx,
        )?),
        ttl: pat(&m.time_to_live, &at.key("time_to_live"), None, cx)?,
    })
}

fn ipv4(v: &h::Ipv4, at: &Path, cx: &Context) -> Result<Ipv4Spec, Refusal> {
    only(&v.version, &at.key("version"), 4, "upktgen sends version 4")?;
    only(
        &v.header_length,
        &at.key("header_length"),
        5,
        "upktgen sends no IPv4 options (header length 5)",
    )?;
    only(
        &v.total_length,
        &at.key("total_length"),
        u128::MAX,
        "upktgen computes it from the frame size",
    )?;
    for (p, name) in [
        (&v.reserved, "reserved"),
        (&v.more_fragments, "more_fragments"),
        (&v.fragment_offset, "fragment_offset"),
    ] {
        only(
            p,
            &at.key(name),
            0,
            "upktgen sends unfragmented packets (0)",
        )?;
    }
    let pr = at.key("priority");
    let tos = match &v.priority {
        Ipv4Priority::Raw(p) => Tos::Byte(pat(p, &pr.key("raw"), None, cx)?),
        Ipv4Priority::Dscp { phb, ecn } => Tos::DscpEcn {
            dscp: pat(phb, &pr.key("dscp").key("phb"), None, cx)?,
            ecn: pat(ecn, &pr.key("dscp").key("ecn"), None, cx)?,
        },
        Ipv4Priority::Tos {
            precedence,
            delay,
            throughput,
            reliability,
            monetary,
            unused,
        } => {
            let t = pr.key("tos");
            let mut byte = constant(precedence, &t.key("precedence"))? << 5;
            for (p, name, bit) in [
                (delay, "delay", 4),
                (throughput, "throughput", 3),
                (reliability, "reliability", 2),
                (monetary, "monetary", 1),
                (unused, "unused", 0),
            ] {
                byte |= (constant(p, &t.key(name))? & 1) << bit;
            }
            Tos::Byte(spec::Pattern::Value(byte))
        }
    };
    Ok(Ipv4Spec {
        src: pat(&v.src, &at.key("src"), None, cx)?,
        dst: pat(&v.dst, &at.key("dst"), None, cx)?,
        tos,
        ttl: pat(&v.time_to_live, &at.key("time_to_live"), None, cx)?,
        ident: pat(&v.identification, &at.key("identification"), None, cx)?,
        protocol: match &v.protocol {
            Pattern::Auto => None,
            p => Some(pat(p, &at.key("protocol"), None, cx)?),
        },
        dont_fragment: constant(&v.dont_fragment, &at.key("dont_fragment"))? != 0,
    })
}

fn ipv6(v: &h::Ipv6, at: &Path, cx: &Context) -> Result<Ipv6Spec, Refusal> {
    only(&v.version, &at.key("version"), 6, "upktgen sends version 6")?;
    only(
        &v.payload_length,
        &at.key("payload_length"),
        u128::MAX,
        "upktgen computes it from the frame size",
    )?;
    Ok(Ipv6Spec {
        src: pat(&v.src, &at.key("src"), None, cx)?,
        dst: pat(&v.dst, &at.key("dst"), None, cx)?,
        traffic_class: pat(&v.traffic_class, &at.key("traffic_class"), None, cx)?,
        flow_label: pat(&v.flow_label, &at.key("flow_label"), None, cx)?,
        hop_limit: pat(&v.hop_limit, &at.key("hop_limit"), None, cx)?,
        next_header: match &v.next_header {
            Pattern::Auto => None,
            p => Some(pat(p, &at.key("next_header"), None, cx)?),
        },
    })
}

fn udp(u: &h::Udp, at: &Path, cx: &Context) -> Result<UdpSpec, Refusal> {
    if let Some(p) = &u.length {
        only(
            p,
            &at.key("length"),
            u128::MAX,
            "upktgen computes it from the frame size",
        )?;
    }
    Ok(UdpSpec {
        src_port: pat(&u.src_port, &at.key("src_port"), None, cx)?,
        dst_port: pat(&u.dst_port, &at.key("dst_port"), None, cx)?,
        checksum: true,
    })
}

fn tcp_spec(t: &h::Tcp, at: &Path, cx: &Context) -> Result<TcpSpec, Refusal> {
    if let Some(p) = &t.data_offset {
        only(
            p,
            &at.key("data_offset"),
            5,
            "upktgen sends no TCP options (data offset 5)",
        )?;
    }
    let mut flags = 0u128;
    for (p, name, bit) in [
        (&t.ecn_cwr, "ecn_cwr", tcp::flags::CWR),
        (&t.ecn_echo, "ecn_echo", tcp::flags::ECE),
        (&t.ctl_urg, "ctl_urg", tcp::flags::URG),
        (&t.ctl_ack, "ctl_ack", tcp::flags::ACK),
        (&t.ctl_psh, "ctl_psh", tcp::flags::PSH),
        (&t.ctl_rst, "ctl_rst", tcp::flags::RST),
        (&t.ctl_syn, "ctl_syn", tcp::flags::SYN),
        (&t.ctl_fin, "ctl_fin", tcp::flags::FIN),
    ] {
        if constant(p, &at.key(name))? != 0 {
            flags |= u128::from(bit);
        }
    }
    only(
        &t.ecn_ns,
        &at.key("ecn_ns"),
        0,
        "upktgen sends the NS bit clear",
    )?;
    Ok(TcpSpec {
        src_port: pat(&t.src_port, &at.key("src_port"), None, cx)?,
        dst_port: pat(&t.dst_port, &at.key("dst_port"), None, cx)?,
        seq: pat(&t.seq_num, &at.key("seq_num"), None, cx)?,
        ack: pat(&t.ack_num, &at.key("ack_num"), None, cx)?,
        flags: spec::Pattern::Value(flags),
        window: pat(&t.window, &at.key("window"), None, cx)?,
    })
}

/// The model's sizes (FCS included) as the engine's frame lengths (without).
fn size(s: &Size, seed: u64) -> spec::Size {
    let l = |n: u32| n.saturating_sub(FCS) as usize;
    match s {
        Size::Fixed(n) => spec::Size::Fixed(l(*n)),
        Size::Increment { start, end, step } => spec::Size::Increment {
            start: l(*start),
            end: l(*end),
            step: *step as usize,
        },
        Size::Random { min, max } => spec::Size::Random {
            min: l(*min),
            max: l(*max),
            seed,
        },
        // Weights in hundredths (the model's mixes have two decimals).
        Size::WeightPairs(w) => spec::Size::Weighted(
            w.pairs()
                .iter()
                .map(|(n, wt)| (l(*n), (wt * 100.0).round().max(1.0) as u32))
                .collect(),
        ),
    }
}

fn rate(r: &Rate, s: &Size, at: &Path, cx: &Context) -> Result<spec::Rate, Refusal> {
    Ok(match r {
        Rate::Percentage(_) if cx.line_bps.is_none() => {
            return Err(Refusal::unsupported_because(
                at.key("percentage"),
                "a rate in percent needs the port's line rate, which upktgen does not know here (no layer1 speed for the port, and none read from its interface: the private lab's ends have none): give pps or a bit rate",
            ));
        }
        Rate::Percentage(p) => spec::Rate::Percent(*p),
        // Frames per second at the flow's mean size with the FCS: only a percentage needs
        // the line rate, so this is always a number.
        r => spec::Rate::Pps(r.pps(s.mean(), None).unwrap_or(0.0)),
    })
}

fn span_ns(s: &Span, at: &Path, cx: &Context) -> Result<u64, Refusal> {
    if *s == Span::Bytes(0.0) {
        // The model's default delay: none, whatever the line rate.
        return Ok(0);
    }
    s.ns(cx.line_bps).map(|n| n.round() as u64).ok_or_else(|| {
        Refusal::unsupported_because(
            at.clone(),
            "a time in bytes needs the port's line rate, which upktgen does not know here (no layer1 speed for the port, and none read from its interface: the private lab's ends have none): give nanoseconds or microseconds",
        )
    })
}

fn length(d: &Duration, at: &Path, cx: &Context) -> Result<(Length, u64), Refusal> {
    Ok(match d {
        Duration::FixedPackets { packets, delay } => (
            Length::Packets(u64::from(*packets)),
            span_ns(delay, &at.key("fixed_packets").key("delay"), cx)?,
        ),
        Duration::FixedSeconds { seconds, delay } => (
            Length::Duration {
                ns: (seconds * 1e9).round() as u64,
            },
            span_ns(delay, &at.key("fixed_seconds").key("delay"), cx)?,
        ),
        Duration::Burst {
            bursts,
            packets,
            gap,
        } => (
            Length::Bursts(Burst {
                packets: u64::from(*packets),
                // Bytes at the line rate: the engine resolves them once it knows it.
                gap: match gap {
                    Span::Bytes(b) if cx.line_bps.is_some() => Gap::Bytes(b.round() as u64),
                    s => Gap::Ns(span_ns(s, &at.key("burst").key("inter_burst_gap"), cx)?),
                },
                count: (*bursts != 0).then_some(u64::from(*bursts)),
            }),
            0,
        ),
        Duration::Continuous { delay } => (
            Length::Continuous,
            span_ns(delay, &at.key("continuous").key("delay"), cx)?,
        ),
    })
}

#[cfg(test)]
mod tests;
