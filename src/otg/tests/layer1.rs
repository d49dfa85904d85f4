//! `layer1[]`: a port's speed (its line rate) and MTU, checked; what would change an
//! interface, refused.

use serde_json::{Value, json};

use super::super::*;
use super::EXAMPLE_JSON;

fn example_with(layer1: Value) -> Value {
    let mut v: Value = serde_json::from_str(EXAMPLE_JSON).unwrap();
    v["layer1"] = layer1;
    v
}

fn refused(layer1: Value) -> String {
    match Config::from_value(&example_with(layer1)) {
        Ok(_) => panic!("accepted"),
        Err(r) => r.to_string(),
    }
}

#[test]
fn a_speed_is_the_ports_line_rate_and_round_trips() {
    // As snappi sends it, with the model's defaults filled in.
    let v = example_with(json!([
        {"name": "ly", "port_names": ["p1", "p2"], "speed": "speed_10_gbps", "mtu": 1500, "promiscuous": true}
    ]));
    let c = Config::from_value(&v).unwrap();
    assert_eq!(c.line_bps("p1"), Some(10_000_000_000));
    assert_eq!(c.line_bps("p2"), Some(10_000_000_000));
    assert_eq!(c.layer1[0].mtu, 1500, "the model's default");
    let back = c.to_value();
    assert_eq!(back["layer1"][0]["speed"], "speed_10_gbps");
    assert_eq!(back["layer1"][0]["mtu"], 1500);
    assert_eq!(Config::from_value(&back).unwrap(), c);
    // Without layer1 nothing is known, and nothing is written.
    let plain = Config::from_value(&serde_json::from_str(EXAMPLE_JSON).unwrap()).unwrap();
    assert_eq!(plain.line_bps("p1"), None);
    assert!(plain.to_value().get("layer1").is_none());
    // Every speed of the model has its rate.
    for (name, bps) in layer1::SPEEDS {
        let c = Config::from_value(&example_with(
            json!([{"name": "l", "port_names": ["p2"], "speed": name}]),
        ))
        .unwrap();
        assert_eq!(c.line_bps("p2"), Some(bps), "{name}");
        assert_eq!(c.line_bps("p1"), None);
    }
}

#[test]
fn a_percentage_of_a_known_speed_is_a_rate() {
    let mut v =
        example_with(json!([{"name": "ly", "port_names": ["p1"], "speed": "speed_1_gbps"}]));
    v["flows"][0]["rate"] = json!({"choice": "percentage", "percentage": 10});
    let c = Config::from_value(&v).unwrap();
    // 10 % of 1 Gbit/s in 64-byte frames (84 bytes on the wire with preamble and gap).
    let pps = c.flows[0].rate.pps(64.0, c.line_bps("p1")).unwrap();
    assert!((pps - 1e8 / (84.0 * 8.0)).abs() < 1e-6, "{pps}");
}

#[test]
fn flows_above_the_speed_are_refused_when_read() {
    let mut v =
        example_with(json!([{"name": "ly", "port_names": ["p1"], "speed": "speed_10_fd_mbps"}]));
    v["flows"][0]["rate"] = json!({"choice": "pps", "pps": 100000});
    assert_eq!(
        Config::from_value(&v).unwrap_err().to_string(),
        "flows[0].rate.pps: 100000 pps of 64-byte frames need 67.2 Mbit/s on the wire, above port \"p1\"'s line rate of 10 Mbit/s"
    );
}

#[test]
fn a_frame_above_the_mtu_is_refused() {
    // Flow 1's tcp_imix sizes reach 1,518 bytes: 1518 - 4 - 14 = 1,500 after the Ethernet
    // header. Flow 2 sends 1,000-byte frames with a VLAN tag: 1000 - 4 - 14 - 4 = 978.
    let ok = example_with(json!([{"name": "ly", "port_names": ["p1"], "mtu": 1500}]));
    Config::from_value(&ok).unwrap();
    assert_eq!(
        refused(json!([{"name": "ly", "port_names": ["p1"], "mtu": 1499}])),
        "flows[1].size: frames of up to 1518 bytes carry 1500 bytes after 14 bytes of Ethernet and VLAN headers, above port \"p1\"'s MTU of 1499 (layer1 \"ly\")"
    );
    let mut v = example_with(json!([{"name": "ly", "port_names": ["p1"], "mtu": 977}]));
    v["flows"][1]["size"] = json!({"choice": "fixed", "fixed": 128});
    assert_eq!(
        Config::from_value(&v).unwrap_err().to_string(),
        "flows[2].size: frames of up to 1000 bytes carry 978 bytes after 18 bytes of Ethernet and VLAN headers, above port \"p1\"'s MTU of 977 (layer1 \"ly\")"
    );
    // A port that sends nothing has no frames to check.
    Config::from_value(&example_with(
        json!([{"name": "ly", "port_names": ["p2"], "mtu": 64}]),
    ))
    .unwrap();
}

#[test]
fn bad_layer1_entries_are_refused_at_their_path() {
    let cases = [
        (
            json!([{"name": "ly", "port_names": ["p9"]}]),
            "layer1[0].port_names[0]: \"p9\" is not the name of a port",
        ),
        (
            json!([{"name": "a", "port_names": ["p1"]}, {"name": "b", "port_names": ["p2", "p1"]}]),
            "layer1[1].port_names[1]: port \"p1\" already has its layer1 settings at layer1[0].port_names[0]",
        ),
        (
            json!([{"name": "ly", "port_names": []}]),
            "layer1[0].port_names: missing or empty (the model requires the ports it applies to)",
        ),
        (
            json!([{"name": "ly", "port_names": ["p1"], "speed": "speed_3_gbps"}]),
            "layer1[0].speed: \"speed_3_gbps\" is not one of speed_10_fd_mbps, speed_10_hd_mbps, speed_100_fd_mbps, speed_100_hd_mbps, speed_1_gbps, speed_10_gbps, speed_25_gbps, speed_40_gbps, speed_50_gbps, speed_100_gbps, speed_200_gbps, speed_400_gbps, speed_800_gbps",
        ),
        (
            json!([{"name": "ly", "port_names": ["p1"], "mtu": 63}]),
            "layer1[0].mtu: 63 is out of range (64 to 14000)",
        ),
        (
            json!([{"name": "p1", "port_names": ["p1"]}]),
            "layer1[0].name: \"p1\" is already the name of ports[0]",
        ),
        (
            json!([{"name": "ly", "port_names": ["p1"], "promiscuous": false}]),
            "layer1[0].promiscuous: not supported (upktgen does not change an interface's promiscuous mode: its receivers count what the interface hands to a packet socket)",
        ),
        (
            json!([{"name": "ly", "port_names": ["p1"], "flow_control": {}}]),
            "layer1[0].flow_control: not supported (upktgen does not change an interface's settings: give the interface as it is)",
        ),
        (
            json!([{"name": "ly", "port_names": ["p1"], "speeed": "speed_1_gbps"}]),
            "layer1[0].speeed: unknown field (the OTG model has no such field here)",
        ),
    ];
    for (l, want) in cases {
        assert_eq!(refused(l), want);
    }
}
