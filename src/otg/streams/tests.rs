//! The example config's flows as streams, their frames read back by an independent parser,
//! and what the conversion refuses.

use super::*;
use crate::otg::parse_json;
use crate::stream::FrameSource;
use crate::stream::multi::MultiStream;
use crate::wire::signature::Signature;
use etherparse::{NetSlice, SlicedPacket, TransportSlice, VlanSlice};

const NEIGHBOUR: MacAddr = MacAddr([2, 0, 0, 0, 0, 0x42]);

fn cx() -> Context {
    Context {
        neighbour: Some(NEIGHBOUR),
        line_bps: None,
        seed: 5,
    }
}

fn example() -> Config {
    parse_json(crate::otg::tests::EXAMPLE_JSON.as_bytes()).unwrap()
}

#[test]
fn the_examples_flows_become_streams_with_sizes_without_the_fcs() {
    let s = streams(&example(), &cx()).unwrap();
    let names: Vec<&str> = s.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["udp64", "tcp_imix", "v6_vlan"]);
    assert_eq!(s[0].size, spec::Size::Fixed(60));
    assert_eq!(
        s[1].size,
        spec::Size::Weighted(vec![(86, 5867), (88, 200), (590, 2366), (1514, 1567)])
    );
    assert_eq!(s[2].size, spec::Size::Fixed(996));
    for (st, pps) in s.iter().zip([10_000.0, 20_000.0, 30_000.0]) {
        assert_eq!(st.rate, spec::Rate::Pps(pps));
        assert_eq!(st.length, Length::Duration { ns: 10_000_000_000 });
        assert_eq!(st.start_delay_ns, 0);
    }
}

/// Frame `k` of every stream, as the sender writes it.
fn frames(cfg: &Config, n: u64) -> Vec<Vec<u8>> {
    let specs = streams(cfg, &cx()).unwrap();
    let mut m = MultiStream::new(&specs, None).unwrap();
    let mut out = Vec::new();
    for k in 0..n {
        m.due_ns(k);
        let len = m.advance();
        let mut buf = vec![0u8; len];
        m.write(&mut buf, crate::stream::Stamp::at(1));
        m.sent();
        out.push(buf);
    }
    out
}

#[test]
fn every_frame_has_exactly_the_headers_the_config_asked_for() {
    let all = frames(&example(), 600);
    let mut seen = [0usize; 3];
    for f in &all {
        let sig = Signature::parse(f).unwrap();
        let p = SlicedPacket::from_ethernet(f).unwrap();
        let dst = &f[..6];
        let k = seen[sig.stream as usize] as u64;
        assert_eq!(u64::from(sig.seq), k, "each stream's own sequence");
        seen[sig.stream as usize] += 1;
        match sig.stream {
            0 => {
                assert_eq!(f.len(), 60);
                assert_eq!(dst, [2, 0, 0, 0, 0, 2]);
                let Some(NetSlice::Ipv4(ip)) = &p.net else {
                    panic!("udp64: not IPv4")
                };
                assert_eq!(ip.header().source(), [198, 18, 0, 1]);
                assert_eq!(ip.header().destination(), [198, 18, 1, 1]);
                let Some(TransportSlice::Udp(u)) = &p.transport else {
                    panic!("udp64: not UDP")
                };
                assert_eq!(u.source_port(), 9);
                assert_eq!(u64::from(u.destination_port()), 1000 + k % 100);
            }
            1 => {
                assert!([86, 88, 590, 1514].contains(&f.len()), "{}", f.len());
                assert_eq!(dst, NEIGHBOUR.0, "auto: the neighbour's MAC");
                let Some(NetSlice::Ipv4(ip)) = &p.net else {
                    panic!("tcp_imix: not IPv4")
                };
                assert_eq!(ip.header().dcp().value(), 46);
                let want_dst = if k.is_multiple_of(2) {
                    [198, 18, 1, 1]
                } else {
                    [198, 18, 1, 2]
                };
                assert_eq!(ip.header().destination(), want_dst);
                let Some(TransportSlice::Tcp(t)) = &p.transport else {
                    panic!("tcp_imix: not TCP")
                };
                assert!(t.syn() && !t.ack() && !t.fin() && !t.rst() && !t.psh());
                assert_eq!((t.source_port(), t.destination_port()), (40000, 80));
                assert_eq!(t.sequence_number(), 1000);
                assert_eq!(u64::from(t.window_size()), 65535 - 16 * (k % 64));
            }
            _ => {
                assert_eq!(f.len(), 996);
                let Some(VlanSlice::SingleVlan(v)) = &p.vlan() else {
                    panic!("v6_vlan: no single VLAN tag")
                };
                assert_eq!(v.vlan_identifier().value(), 100);
                assert_eq!(v.priority_code_point().value(), 3);
                let Some(NetSlice::Ipv6(ip)) = &p.net else {
                    panic!("v6_vlan: not IPv6")
                };
                let fl = ip.header().flow_label().value();
                assert!((1..=4095).contains(&fl), "{fl}");
                let Some(TransportSlice::Udp(u)) = &p.transport else {
                    panic!("v6_vlan: not UDP")
                };
                assert_eq!(u.destination_port(), 4791);
            }
        }
    }
    // 10 : 20 : 30 thousand per second, interleaved from the first frames on.
    assert_eq!(seen, [100, 200, 300]);
}

/// The example with one member of one header replaced.
fn with(flow: usize, header: usize, key: &str, field: &str, value: serde_json::Value) -> Config {
    let mut v: serde_json::Value = serde_json::from_str(crate::otg::tests::EXAMPLE_JSON).unwrap();
    v["flows"][flow]["packet"][header][key][field] = value;
    Config::from_value(&v).unwrap()
}

#[test]
fn what_the_engine_sends_one_way_only_is_refused_with_its_path() {
    let e = streams(
        &with(
            0,
            1,
            "ipv4",
            "version",
            serde_json::json!({"choice": "value", "value": 6}),
        ),
        &cx(),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "flows[0].packet[1].ipv4.version: not supported (upktgen sends version 4)"
    );
    let e = streams(
        &with(
            1,
            2,
            "tcp",
            "ctl_syn",
            serde_json::json!({"choice": "values", "values": [0, 1]}),
        ),
        &cx(),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "flows[1].packet[2].tcp.ctl_syn: not supported (upktgen takes one value for it, the same in every frame)"
    );
    // No neighbour known: an Ethernet destination left to auto has no value.
    let e = streams(
        &example(),
        &Context {
            neighbour: None,
            ..cx()
        },
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "flows[1].packet[0].ethernet.dst.auto: not supported (upktgen knows no value for it here: give one)"
    );
}

#[test]
fn what_needs_the_line_rate_is_refused_with_its_path_when_it_is_not_known() {
    let mut v: serde_json::Value = serde_json::from_str(crate::otg::tests::EXAMPLE_JSON).unwrap();
    v["flows"][1]["rate"] = serde_json::json!({"choice": "percentage", "percentage": 50});
    let e = streams(&Config::from_value(&v).unwrap(), &cx()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "flows[1].rate.percentage: not supported (a rate in percent needs the port's line rate, which upktgen does not know here (no layer1 speed for the port, and none read from its interface: the private lab's ends have none): give pps or a bit rate)"
    );
    // A burst's gap left to the model's default, 12 bytes.
    let mut v: serde_json::Value = serde_json::from_str(crate::otg::tests::EXAMPLE_JSON).unwrap();
    v["flows"][2]["duration"] =
        serde_json::json!({"choice": "burst", "burst": {"bursts": 2, "packets": 3}});
    let cfg = Config::from_value(&v).unwrap();
    let e = streams(&cfg, &cx()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "flows[2].duration.burst.inter_burst_gap: not supported (a time in bytes needs the port's line rate, which upktgen does not know here (no layer1 speed for the port, and none read from its interface: the private lab's ends have none): give nanoseconds or microseconds)"
    );
    // Known, the engine resolves both.
    let known = Context {
        line_bps: Some(10_000_000_000),
        ..cx()
    };
    let s = streams(&cfg, &known).unwrap();
    assert!(matches!(
        s[2].length,
        Length::Bursts(Burst {
            gap: Gap::Bytes(12),
            ..
        })
    ));
}
