//! The OTG config: the three-flow example in JSON and YAML, defaults, round trips.

mod bounds;
mod layer1;
mod refusals;

use std::net::{Ipv4Addr, Ipv6Addr};

use serde_json::json;

use super::flow::{Duration, Imix, Rate, Size, Span, WeightPairs};
use super::headers::{Header, Ipv4Priority};
use super::pattern::{Counter, Pattern, Random};
use super::*;
use crate::wire::MacAddr;

/// The example of issue 23: UDP 64 B at 10,000 pps; TCP with tcp_imix sizes at 20,000 pps;
/// VLAN-tagged IPv6 1,000 B at 30,000 pps; each for 10 s. Written as snappi sends it
/// (every choice spelled out).
pub(super) const EXAMPLE_JSON: &str = r#"{
  "ports": [
    {"name": "p1", "location": "veth-tx"},
    {"name": "p2", "location": "netns:upk-rx/veth-rx"}
  ],
  "flows": [
    {
      "name": "udp64",
      "tx_rx": {"choice": "port", "port": {"tx_name": "p1", "rx_names": ["p2"]}},
      "packet": [
        {"choice": "ethernet", "ethernet": {
          "src": {"choice": "value", "value": "02:00:00:00:00:01"},
          "dst": {"choice": "value", "value": "02:00:00:00:00:02"}}},
        {"choice": "ipv4", "ipv4": {
          "src": {"choice": "value", "value": "198.18.0.1"},
          "dst": {"choice": "value", "value": "198.18.1.1"}}},
        {"choice": "udp", "udp": {
          "src_port": {"choice": "value", "value": 9},
          "dst_port": {"choice": "increment", "increment": {"start": 1000, "step": 1, "count": 100}}}}
      ],
      "size": {"choice": "fixed", "fixed": 64},
      "rate": {"choice": "pps", "pps": 10000},
      "duration": {"choice": "fixed_seconds", "fixed_seconds": {"seconds": 10}},
      "metrics": {"enable": true, "loss": true, "timestamps": true,
                  "latency": {"enable": true, "mode": "store_forward"}}
    },
    {
      "name": "tcp_imix",
      "tx_rx": {"choice": "port", "port": {"tx_name": "p1", "rx_names": ["p2"]}},
      "packet": [
        {"choice": "ethernet", "ethernet": {"src": {"choice": "value", "value": "02:00:00:00:00:01"}}},
        {"choice": "ipv4", "ipv4": {
          "src": {"choice": "value", "value": "198.18.0.1"},
          "dst": {"choice": "values", "values": ["198.18.1.1", "198.18.1.2"]},
          "priority": {"choice": "dscp", "dscp": {"phb": {"choice": "value", "value": 46}}}}},
        {"choice": "tcp", "tcp": {
          "src_port": {"choice": "value", "value": 40000},
          "dst_port": {"choice": "value", "value": 80},
          "seq_num": {"choice": "value", "value": 1000},
          "ctl_syn": {"choice": "value", "value": 1},
          "window": {"choice": "decrement", "decrement": {"start": 65535, "step": 16, "count": 64}}}}
      ],
      "size": {"choice": "weight_pairs", "weight_pairs": {"choice": "predefined", "predefined": "tcp_imix"}},
      "rate": {"choice": "pps", "pps": 20000},
      "duration": {"choice": "fixed_seconds", "fixed_seconds": {"seconds": 10, "gap": 12}},
      "metrics": {"enable": true, "loss": true}
    },
    {
      "name": "v6_vlan",
      "tx_rx": {"choice": "port", "port": {"tx_name": "p1", "rx_names": ["p2"]}},
      "packet": [
        {"choice": "ethernet", "ethernet": {}},
        {"choice": "vlan", "vlan": {
          "id": {"choice": "value", "value": 100},
          "priority": {"choice": "value", "value": 3}}},
        {"choice": "ipv6", "ipv6": {
          "src": {"choice": "value", "value": "2001:db8::1"},
          "dst": {"choice": "value", "value": "2001:db8::2"},
          "flow_label": {"choice": "random", "random": {"min": 1, "max": 4095, "seed": 7, "count": 16}}}},
        {"choice": "udp", "udp": {"dst_port": {"choice": "value", "value": 4791}}}
      ],
      "size": {"choice": "fixed", "fixed": 1000},
      "rate": {"choice": "pps", "pps": 30000},
      "duration": {"choice": "fixed_seconds", "fixed_seconds": {"seconds": 10}},
      "metrics": {"enable": true, "latency": {"enable": true}}
    }
  ]
}"#;

/// The same config in YAML as a person writes it: choices left to be inferred from the one
/// member given, an anchor for the shared endpoints.
pub(super) const EXAMPLE_YAML: &str = r#"
# Three flows from p1 to p2 for 10 s each.
ports:
  - {name: p1, location: veth-tx}
  - {name: p2, location: "netns:upk-rx/veth-rx"}
flows:
  - name: udp64
    tx_rx: &p1p2 {port: {tx_name: p1, rx_names: [p2]}}
    packet:
      - ethernet: {src: {value: "02:00:00:00:00:01"}, dst: {value: "02:00:00:00:00:02"}}
      - ipv4: {src: {value: 198.18.0.1}, dst: {value: 198.18.1.1}}
      - udp:
          src_port: {value: 9}
          dst_port: {increment: {start: 1000, step: 1, count: 100}}
    size: {fixed: 64}
    rate: {pps: 10000}
    duration: &ten {fixed_seconds: {seconds: 10}}
    metrics: {enable: true, loss: true, timestamps: true, latency: {enable: true, mode: store_forward}}
  - name: tcp_imix
    tx_rx: *p1p2
    packet:
      - ethernet: {src: {value: "02:00:00:00:00:01"}}
      - ipv4:
          src: {value: 198.18.0.1}
          dst: {values: [198.18.1.1, 198.18.1.2]}
          priority: {dscp: {phb: {value: 46}}}
      - tcp:
          src_port: {value: 40000}
          dst_port: {value: 80}
          seq_num: {value: 1000}
          ctl_syn: {value: 1}
          window: {decrement: {start: 65535, step: 16, count: 64}}
    size: {weight_pairs: {predefined: tcp_imix}}
    rate: {pps: 20000}
    duration: *ten
    metrics: {enable: true, loss: true}
  - name: v6_vlan
    tx_rx: *p1p2
    packet:
      - choice: ethernet
      - vlan: {id: {value: 100}, priority: {value: 3}}
      - ipv6:
          src: {value: "2001:db8::1"}
          dst: {value: "2001:db8::2"}
          flow_label: {random: {min: 1, max: 4095, seed: 7, count: 16}}
      - udp: {dst_port: {value: 4791}}
    size: {fixed: 1000}
    rate: {pps: 30000}
    duration: *ten
    metrics: {enable: true, latency: {enable: true}}
"#;

pub(super) fn example() -> Config {
    parse_json(EXAMPLE_JSON.as_bytes()).unwrap_or_else(|r| panic!("{r}"))
}

fn mac(s: &str) -> MacAddr {
    s.parse().unwrap()
}

#[test]
fn the_example_reads_to_the_values_it_names() {
    let c = example();
    assert_eq!(
        c.ports,
        vec![
            Port {
                name: "p1".into(),
                location: Location::Local {
                    iface: "veth-tx".into()
                }
            },
            Port {
                name: "p2".into(),
                location: Location::Netns {
                    netns: "upk-rx".into(),
                    iface: "veth-rx".into()
                },
            },
        ]
    );
    let names: Vec<_> = c.flows.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["udp64", "tcp_imix", "v6_vlan"]);
    let ten = Duration::FixedSeconds {
        seconds: 10.0,
        delay: Span::Bytes(0.0),
    };
    for f in &c.flows {
        assert_eq!(
            (f.tx_port.as_str(), f.rx_ports.as_slice()),
            ("p1", &["p2".to_string()][..])
        );
        assert_eq!(f.duration, ten);
        assert_eq!(f.metrics.rx_tx_ratio, 1.0);
    }

    let udp = &c.flows[0];
    assert_eq!(udp.size, Size::Fixed(64));
    assert_eq!(udp.rate, Rate::Pps(10_000));
    assert!(
        udp.metrics.enable && udp.metrics.loss && udp.metrics.timestamps && udp.metrics.latency
    );
    let [Header::Ethernet(e), Header::Ipv4(ip), Header::Udp(u)] = &udp.packet[..] else {
        panic!("{:?}", udp.packet)
    };
    assert_eq!(e.src, Pattern::Value(mac("02:00:00:00:00:01")));
    assert_eq!(e.dst, Pattern::Value(mac("02:00:00:00:00:02")));
    assert_eq!(
        e.ether_type,
        Pattern::Auto,
        "the model's default: from the next header"
    );
    assert_eq!(ip.src, Pattern::Value(Ipv4Addr::new(198, 18, 0, 1)));
    assert_eq!(ip.dst, Pattern::Value(Ipv4Addr::new(198, 18, 1, 1)));
    assert_eq!(ip.time_to_live, Pattern::Value(64));
    assert_eq!(ip.protocol, Pattern::Auto);
    assert_eq!(ip.total_length, Pattern::Auto);
    assert_eq!(
        ip.priority,
        Ipv4Priority::Dscp {
            phb: Pattern::Value(0),
            ecn: Pattern::Value(0)
        }
    );
    assert_eq!(u.src_port, Pattern::Value(9));
    assert_eq!(
        u.dst_port,
        Pattern::Increment(Counter {
            start: 1000,
            step: 1,
            count: 100
        })
    );
    assert_eq!(u.length, None, "computed from the frame");
    assert_eq!(udp.header_len(), 42);
    assert_eq!(
        udp.min_size(),
        64,
        "42 + 16 + 4 = 62, and Ethernet's least is 64"
    );

    let tcp = &c.flows[1];
    assert_eq!(
        tcp.size,
        Size::WeightPairs(WeightPairs::Predefined(Imix::TcpImix))
    );
    assert_eq!(tcp.size.bounds(), (90, 1518));
    assert_eq!(tcp.rate, Rate::Pps(20_000));
    assert!(!tcp.metrics.latency && !tcp.metrics.timestamps);
    let [Header::Ethernet(e), Header::Ipv4(ip), Header::Tcp(t)] = &tcp.packet[..] else {
        panic!("{:?}", tcp.packet)
    };
    assert_eq!(e.dst, Pattern::Auto);
    assert_eq!(
        ip.dst,
        Pattern::Values(vec![
            Ipv4Addr::new(198, 18, 1, 1),
            Ipv4Addr::new(198, 18, 1, 2)
        ])
    );
    assert_eq!(
        ip.priority,
        Ipv4Priority::Dscp {
            phb: Pattern::Value(46),
            ecn: Pattern::Value(0)
        }
    );
    assert_eq!(
        (t.src_port.clone(), t.dst_port.clone()),
        (Pattern::Value(40000), Pattern::Value(80))
    );
    assert_eq!(t.seq_num, Pattern::Value(1000));
    assert_eq!(t.ctl_syn, Pattern::Value(1));
    assert_eq!(t.ctl_ack, Pattern::Value(0));
    assert_eq!(
        t.window,
        Pattern::Decrement(Counter {
            start: 65535,
            step: 16,
            count: 64
        })
    );
    assert_eq!(t.data_offset, None);
    assert_eq!(tcp.min_size(), 74);

    let v6 = &c.flows[2];
    assert_eq!(v6.size, Size::Fixed(1000));
    assert_eq!(v6.rate, Rate::Pps(30_000));
    let [
        Header::Ethernet(_),
        Header::Vlan(v),
        Header::Ipv6(ip),
        Header::Udp(u),
    ] = &v6.packet[..]
    else {
        panic!("{:?}", v6.packet)
    };
    assert_eq!(
        (v.id.clone(), v.priority.clone(), v.cfi.clone()),
        (Pattern::Value(100), Pattern::Value(3), Pattern::Value(0))
    );
    assert_eq!(v.tpid, None, "the next header's EtherType");
    assert_eq!(
        ip.src,
        Pattern::Value("2001:db8::1".parse::<Ipv6Addr>().unwrap())
    );
    assert_eq!(
        ip.flow_label,
        Pattern::Random(Random {
            min: 1,
            max: 4095,
            seed: 7,
            count: 16
        })
    );
    assert_eq!(ip.hop_limit, Pattern::Value(64));
    assert_eq!(
        (ip.next_header.clone(), ip.payload_length.clone()),
        (Pattern::Auto, Pattern::Auto)
    );
    assert_eq!(u.src_port, Pattern::Value(0));
    assert_eq!(v6.header_len(), 14 + 4 + 40 + 8);
}

#[test]
fn yaml_reads_to_the_same_config_as_json() {
    let y = parse_yaml(EXAMPLE_YAML.as_bytes()).unwrap_or_else(|r| panic!("{r}"));
    assert_eq!(y, example());
}

#[test]
fn a_config_serializes_back_and_reads_the_same() {
    let c = example();
    let text = serde_json::to_string(&c).unwrap();
    assert_eq!(parse_json(text.as_bytes()).unwrap(), c);
    let back: Config = serde_json::from_str(&text).unwrap();
    assert_eq!(back, c);
    // Every kind of pattern, size, rate and duration survives the trip too.
    let mut more = c.clone();
    more.flows[0].size = Size::Increment {
        start: 64,
        end: 1500,
        step: 4,
    };
    more.flows[0].rate = Rate::Percentage(12.5);
    more.flows[0].duration = Duration::Burst {
        bursts: 3,
        packets: 10,
        gap: Span::Nanoseconds(500.0),
    };
    more.flows[1].size = Size::WeightPairs(WeightPairs::Custom(vec![(128, 2.0), (1024, 0.5)]));
    more.flows[1].rate = Rate::Mbps(250);
    more.flows[1].duration = Duration::FixedPackets {
        packets: 1_000_000,
        delay: Span::Microseconds(1.5),
    };
    more.flows[2].size = Size::Random {
        min: 100,
        max: 1200,
    };
    more.flows[2].rate = Rate::Gbps(1);
    more.flows[2].duration = Duration::Continuous {
        delay: Span::Nanoseconds(10.0),
    };
    more.flows[2]
        .packet
        .push(Header::Custom(vec![0xde, 0xad, 0xbe, 0xef]));
    if let Header::Ipv4(ip) = &mut more.flows[1].packet[1] {
        ip.priority = Ipv4Priority::Raw(Pattern::Values(vec![0, 0xb8]));
    }
    let text = serde_json::to_string(&more).unwrap();
    assert_eq!(
        parse_json(text.as_bytes()).unwrap_or_else(|r| panic!("{r}")),
        more
    );
}

#[test]
fn what_is_left_out_is_the_model_default_and_get_config_says_so() {
    let c = parse_json(
        br#"{"ports": [{"name": "p1", "location": "eth1"}],
        "flows": [{"name": "f", "tx_rx": {"port": {"tx_name": "p1"}}}]}"#,
    )
    .unwrap();
    let f = &c.flows[0];
    assert_eq!(f.packet, vec![Header::default_ethernet()]);
    assert_eq!(f.size, Size::Fixed(64));
    assert_eq!(f.rate, Rate::Pps(1000));
    assert_eq!(
        f.duration,
        Duration::Continuous {
            delay: Span::Bytes(0.0)
        }
    );
    assert_eq!(f.metrics, Metrics::default());
    assert!(f.rx_ports.is_empty());
    let v = c.to_value();
    assert_eq!(
        v["flows"][0]["size"],
        json!({"choice": "fixed", "fixed": 64})
    );
    assert_eq!(v["flows"][0]["rate"], json!({"choice": "pps", "pps": 1000}));
    assert_eq!(
        v["flows"][0]["duration"],
        json!({"choice": "continuous", "continuous": {"gap": 12, "delay": {"choice": "bytes", "bytes": 0.0}}})
    );
    assert_eq!(
        v["flows"][0]["packet"][0],
        json!({"choice": "ethernet", "ethernet": {
            "dst": {"choice": "auto"}, "src": {"choice": "value", "value": "00:00:00:00:00:00"},
            "ether_type": {"choice": "auto"}, "pfc_queue": {"choice": "value", "value": 0}}})
    );
    assert_eq!(v["ports"], json!([{"name": "p1", "location": "eth1"}]));
}

#[test]
fn the_deprecated_rx_name_joins_rx_names() {
    let c = parse_json(
        br#"{"ports": [{"name": "a", "location": "eth1"}, {"name": "b", "location": "eth2"}],
        "flows": [{"name": "f", "tx_rx": {"port": {"tx_name": "a", "rx_name": "b"}}}]}"#,
    )
    .unwrap();
    assert_eq!(c.flows[0].rx_ports, ["b"]);
}

#[test]
fn rates_become_frames_per_second() {
    let at = |r: Rate, size: f64, line: Option<u64>| r.pps(size, line);
    assert_eq!(at(Rate::Pps(5), 64.0, None), Some(5.0));
    assert_eq!(
        at(Rate::Mbps(512), 64.0, None),
        Some(1e6),
        "bits of the frame, FCS included"
    );
    assert_eq!(at(Rate::Bps(672), 84.0, None), Some(1.0));
    assert_eq!(
        at(Rate::Percentage(50.0), 64.0, None),
        None,
        "needs the line rate"
    );
    let half = at(Rate::Percentage(50.0), 64.0, Some(10_000_000_000)).unwrap();
    assert!(
        (half - 7_440_476.19).abs() < 0.01,
        "{half}: half of 14.88 Mpps"
    );
    assert_eq!(Span::Bytes(125.0).ns(Some(1_000_000_000)), Some(1000.0));
    assert_eq!(Span::Bytes(125.0).ns(None), None);
    assert_eq!(Span::Microseconds(2.0).ns(None), Some(2000.0));
    assert_eq!(
        Size::Increment {
            start: 64,
            end: 100,
            step: 10
        }
        .bounds(),
        (64, 94)
    );
    assert_eq!(
        Size::WeightPairs(WeightPairs::Predefined(Imix::Imix)).mean(),
        (64.0 * 7.0 + 570.0 * 4.0 + 1518.0) / 12.0
    );
}

#[test]
fn the_model_error_object_carries_the_refusal() {
    let r = parse_json(br#"{"flows": 1}"#).unwrap_err();
    let e = r.to_error();
    assert_eq!(
        serde_json::to_value(&e).unwrap(),
        json!({"code": 400, "kind": "validation", "errors": ["flows: expected an array, got 1"]})
    );
}

#[test]
fn the_example_in_the_docs_reads() {
    let doc = include_str!("../../../docs/otg.md");
    let yaml = doc
        .split("```yaml\n")
        .nth(1)
        .and_then(|s| s.split("```").next())
        .expect("docs/otg.md has a YAML example");
    let c = parse_yaml(yaml.as_bytes()).unwrap_or_else(|r| panic!("{r}"));
    let rates: Vec<_> = c.flows.iter().map(|f| f.rate.clone()).collect();
    assert_eq!(
        rates,
        [Rate::Pps(10_000), Rate::Pps(20_000), Rate::Pps(30_000)]
    );
    assert_eq!(c.flows[2].size, Size::Fixed(1000));
    assert!(c.flows.iter().all(|f| f.duration
        == Duration::FixedSeconds {
            seconds: 10.0,
            delay: Span::Bytes(0.0)
        }));
}

#[test]
fn a_rate_above_the_line_shows_the_digits_that_put_it_above() {
    assert_eq!(super::above_text(1.22e9, 1e9), "1.22 Gbit/s");
    assert_eq!(
        super::above_text(10_000_000_688.0, 1e10),
        "10.000001 Gbit/s"
    );
    assert_eq!(super::bps_text(1e10), "10 Gbit/s");
}
