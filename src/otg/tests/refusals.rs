//! Each kind of refusal, with its exact message.

use serde_json::{Value, json};

use super::super::*;
use super::EXAMPLE_JSON;

/// An edit of the example, and the refusal it brings.
type Case = (fn(&mut Value), &'static str);

/// The example with `edit` applied to its JSON, read back: the refusal's message.
fn refused(edit: impl FnOnce(&mut Value)) -> String {
    let mut v: Value = serde_json::from_str(EXAMPLE_JSON).unwrap();
    edit(&mut v);
    match Config::from_value(&v) {
        Ok(_) => panic!("accepted: {v}"),
        Err(r) => r.to_string(),
    }
}

fn why(edit: impl FnOnce(&mut Value)) -> Why {
    let mut v: Value = serde_json::from_str(EXAMPLE_JSON).unwrap();
    edit(&mut v);
    Config::from_value(&v).unwrap_err().why
}

#[test]
fn a_member_the_model_lacks_is_unknown() {
    assert_eq!(
        refused(|v| v["flows"][0]["packet"][2]["udp"]["srcport"] = json!({"value": 1})),
        "flows[0].packet[2].udp.srcport: unknown field (the OTG model has no such field here)"
    );
    assert_eq!(
        why(|v| v["flows"][1]["rate"]["ppps"] = json!(1)),
        Why::Unknown
    );
    assert_eq!(
        refused(|v| v["flow"] = json!([])),
        "flow: unknown field (the OTG model has no such field here)"
    );
    // random is a choice of UDP ports, not of the VLAN id.
    assert_eq!(
        refused(|v| v["flows"][2]["packet"][1]["vlan"]["id"] =
            json!({"choice": "random", "random": {}})),
        "flows[2].packet[1].vlan.id.random: unknown field (the OTG model has no such field here)"
    );
}

#[test]
fn what_the_model_has_and_upktgen_does_not_is_not_supported() {
    let cases: [Case; 12] = [
        (
            |v| v["flows"][1]["packet"][2] = json!({"choice": "gre", "gre": {}}),
            "flows[1].packet[2].gre: not supported",
        ),
        (
            |v| v["flows"][0]["packet"][1]["ipv4"]["options"] = json!([{"choice": "router_alert"}]),
            "flows[0].packet[1].ipv4.options: not supported",
        ),
        (
            |v| v["flows"][1]["packet"][2]["tcp"]["window"]["metric_tags"] = json!([{"name": "w"}]),
            "flows[1].packet[2].tcp.window.metric_tags: not supported",
        ),
        (
            |v| {
                v["flows"][0]["tx_rx"] =
                    json!({"choice": "device", "device": {"tx_names": ["d"], "rx_names": ["e"]}})
            },
            "flows[0].tx_rx.device: not supported (upktgen emulates no devices; use tx_rx.port)",
        ),
        (
            |v| v["devices"] = json!([{"name": "d1"}]),
            "devices: not supported",
        ),
        (
            |v| {
                v["options"] =
                    json!({"port_options": {"frame_ordering_mode": {"choice": "rfc2889"}}})
            },
            "options.port_options.frame_ordering_mode.choice: not supported",
        ),
        (
            |v| v["flows"][0]["duration"]["fixed_seconds"]["gap"] = json!(20),
            "flows[0].duration.fixed_seconds.gap: not supported (upktgen keeps the least gap, 12 bytes; the rate spaces the frames)",
        ),
        (
            |v| {
                v["flows"][0]["packet"][2]["udp"]["checksum"] =
                    json!({"choice": "custom", "custom": 1})
            },
            "flows[0].packet[2].udp.checksum.custom: not supported (upktgen writes correct checksums only)",
        ),
        (
            |v| v["flows"][0]["metrics"]["latency"]["mode"] = json!("cut_through"),
            "flows[0].metrics.latency.mode: not supported (upktgen measures store_forward latency)",
        ),
        (
            |v| v["flows"][0]["payload"] = json!({"choice": "increment_byte"}),
            "flows[0].payload.choice: not supported (the payload is zeros around upktgen's signature; put bytes of your own in a custom header)",
        ),
        (
            |v| {
                v["flows"][0]["packet"][1]["ipv4"]["src"] =
                    json!({"choice": "auto", "auto": {"choice": "dhcp"}})
            },
            "flows[0].packet[1].ipv4.src.auto: not supported (upktgen computes an auto field itself)",
        ),
        (
            |v| v["flows"][0]["packet"][0] = json!({"choice": "vlan", "vlan": {}}),
            "flows[0].packet[0].vlan: not supported (upktgen sends Ethernet frames: the first header must be ethernet)",
        ),
    ];
    for (edit, want) in cases {
        assert_eq!(refused(edit), want);
    }
    // The model's default of a member upktgen does not implement is what upktgen does.
    let mut v: Value = serde_json::from_str(EXAMPLE_JSON).unwrap();
    v["flows"][0]["duration"]["fixed_seconds"]["gap"] = json!(12);
    v["flows"][0]["payload"] =
        json!({"choice": "fixed", "fixed": {"pattern": "00", "repeat": true}});
    v["flows"][0]["packet"][0]["ethernet"]["pfc_queue"] = json!({"choice": "value", "value": 0});
    v["flows"][0]["packet"][2]["udp"]["checksum"] =
        json!({"choice": "generated", "generated": "good"});
    v["lags"] = json!([]);
    v["options"] = json!({"port_options": {"location_preemption": true, "data_integrity": false,
        "frame_ordering_mode": {"choice": "no_ordering"}}, "flow_options": {"packet_loss_duration": false}});
    Config::from_value(&v).unwrap_or_else(|r| panic!("{r}"));
}

#[test]
fn a_bad_value_names_its_path_and_what_is_wrong() {
    let cases: [Case; 17] = [
        (
            |v| v["flows"][0]["rate"]["pps"] = json!(0),
            "flows[0].rate.pps: 0 is out of range (1 to 18446744073709551615)",
        ),
        (
            |v| v["flows"][0]["rate"]["pps"] = json!("fast"),
            "flows[0].rate.pps: expected an unsigned integer, got \"fast\"",
        ),
        (
            |v| v["flows"][0]["rate"]["pps"] = json!(-5),
            "flows[0].rate.pps: expected an unsigned integer, got -5",
        ),
        (
            |v| v["flows"][0]["rate"]["mbps"] = json!(5),
            "flows[0].rate.mbps: given, but choice is \"pps\"",
        ),
        (
            |v| v["flows"][0]["rate"] = json!({"pps": 5, "mbps": 5}),
            "flows[0].rate: both pps and mbps given, and no choice between them",
        ),
        (
            |v| v["flows"][0]["rate"]["choice"] = json!("ppm"),
            "flows[0].rate.choice: \"ppm\" is not one of pps, bps, kbps, mbps, gbps, percentage",
        ),
        (
            |v| v["flows"][0]["packet"][2]["udp"]["src_port"]["value"] = json!(70000),
            "flows[0].packet[2].udp.src_port.value: 70000 is out of range (0 to 65535)",
        ),
        (
            |v| {
                v["flows"][2]["packet"][1]["vlan"]["id"] =
                    json!({"increment": {"start": 1, "count": 5000}})
            },
            "flows[2].packet[1].vlan.id.increment.count: 5000 is out of range (1 to 4096)",
        ),
        (
            |v| v["flows"][0]["packet"][0]["ethernet"]["src"]["value"] = json!("02:00:00:00:01"),
            "flows[0].packet[0].ethernet.src.value: \"02:00:00:00:01\" is not a MAC address (six hex bytes like 02:00:00:00:00:01)",
        ),
        (
            |v| v["flows"][0]["packet"][1]["ipv4"]["dst"]["value"] = json!("198.18.1.256"),
            "flows[0].packet[1].ipv4.dst.value: \"198.18.1.256\" is not an IPv4 address",
        ),
        (
            |v| v["flows"][0]["tx_rx"]["port"]["tx_name"] = json!("p9"),
            "flows[0].tx_rx.port.tx_name: no port named \"p9\"",
        ),
        (
            |v| v["flows"][2]["tx_rx"]["port"]["rx_names"] = json!(["p2", "p3"]),
            "flows[2].tx_rx.port.rx_names[1]: no port named \"p3\"",
        ),
        (
            |v| v["flows"][1]["name"] = json!("udp64"),
            "flows[1].name: \"udp64\" is already the name of flows[0]",
        ),
        (
            |v| v["flows"][0]["name"] = json!("p2"),
            "flows[0].name: \"p2\" is already the name of ports[1]",
        ),
        (
            |v| v["ports"][1]["location"] = json!("eth0/x"),
            "ports[1].location: \"eth0/x\": the interface name \"eth0/x\" holds '/' (expected IFACE, netns:NAME/IFACE, ssh://[user@]host[:port]/IFACE, lab:tx or lab:rx)",
        ),
        (
            |v| v["flows"][0]["duration"]["fixed_seconds"]["seconds"] = json!(0),
            "flows[0].duration.fixed_seconds.seconds: 0 is out of range (above 0: 0 seconds sends nothing)",
        ),
        (
            |v| v["flows"][0]["duration"]["fixed_seconds"]["seconds"] = json!(1e300),
            "flows[0].duration.fixed_seconds.seconds: 1e300 is out of range (0 to 1000000000000000)",
        ),
    ];
    for (edit, want) in cases {
        assert_eq!(refused(edit), want);
    }
    assert!(matches!(
        why(|v| v["flows"][0]["rate"]["pps"] = json!(0)),
        Why::Bad(_)
    ));
    assert_eq!(
        refused(|v| v["ports"][0]
            .as_object_mut()
            .unwrap()
            .remove("location")
            .map(drop)
            .unwrap()),
        "ports[0].location: missing (upktgen needs to know where the port is: IFACE, netns:NAME/IFACE or ssh://host/IFACE)"
    );
    assert_eq!(
        refused(|v| v["flows"][0]
            .as_object_mut()
            .unwrap()
            .remove("tx_rx")
            .map(drop)
            .unwrap()),
        "flows[0].tx_rx: missing (the model requires it)"
    );
}

#[test]
fn sizes_hold_the_headers_the_signature_and_the_fcs() {
    assert_eq!(
        refused(|v| v["flows"][1]["size"] = json!({"fixed": 73})),
        "flows[1].size.fixed: 73 bytes is too small: the headers, upktgen's 16-byte signature and the 4-byte FCS take 74"
    );
    assert_eq!(
        refused(|v| v["flows"][0]["size"] = json!({"fixed": 60})),
        "flows[0].size.fixed: 60 bytes is below 64, the least Ethernet frame (sizes count the 4-byte FCS)"
    );
    assert_eq!(
        refused(|v| v["flows"][0]["size"] = json!({"fixed": 9019})),
        "flows[0].size.fixed: 9019 bytes is above 9018, the largest frame upktgen sends (sizes count the 4-byte FCS)"
    );
    assert_eq!(
        refused(|v| v["flows"][1]["size"] = json!({"weight_pairs": {"predefined": "imix"}})),
        "flows[1].size.weight_pairs.predefined: imix has 64-byte frames: 64 bytes is too small: the headers, upktgen's 16-byte signature and the 4-byte FCS take 74"
    );
    assert_eq!(
        refused(|v| v["flows"][1]["size"] = json!({"increment": {"start": 100, "end": 9100}})),
        "flows[1].size.increment.end: 9100 bytes is above 9018, the largest frame upktgen sends (sizes count the 4-byte FCS)"
    );
    assert_eq!(
        refused(|v| v["flows"][1]["size"] = json!({"random": {"min": 900, "max": 800}})),
        "flows[1].size.random.min: 900 is above max (800)"
    );
    assert_eq!(
        refused(|v| v["flows"][1]["size"] =
            json!({"weight_pairs": {"custom": [{"size": 100, "weight": 1}, {"size": 70}]}})),
        "flows[1].size.weight_pairs.custom[1].size: 70 bytes is too small: the headers, upktgen's 16-byte signature and the 4-byte FCS take 74"
    );
    // A custom header counts its bytes.
    assert_eq!(
        refused(|v| {
            v["flows"][0]["packet"]
                .as_array_mut()
                .unwrap()
                .push(json!({"custom": {"bytes": "0x0102 03:04"}}));
        }),
        "flows[0].size.fixed: 64 bytes is too small: the headers, upktgen's 16-byte signature and the 4-byte FCS take 66"
    );
    assert_eq!(
        refused(|v| v["flows"][0]["packet"][2] = json!({"custom": {"bytes": "abc"}})),
        "flows[0].packet[2].custom.bytes: an odd number of hex digits (two make a byte)"
    );
}

#[test]
fn a_percentage_is_above_0_and_at_most_100() {
    for (p, shown) in [
        (json!(0), "0"),
        (json!(150), "150"),
        (json!(-1), "-1"),
        (json!(1e300), "1e300"),
    ] {
        assert_eq!(
            refused(|v| v["flows"][0]["rate"] = json!({"percentage": p})),
            format!("flows[0].rate.percentage: {shown} is out of range (above 0, at most 100)")
        );
    }
    let mut v: Value = serde_json::from_str(EXAMPLE_JSON).unwrap();
    v["flows"][0]["rate"] = json!({"choice": "percentage", "percentage": 100});
    assert_eq!(
        Config::from_value(&v).unwrap().flows[0].rate,
        Rate::Percentage(100.0)
    );
}

#[test]
fn a_rate_above_the_line_rate_is_refused_once_the_speed_is_known() {
    let gig = 1_000_000_000;
    let mut c = super::example();
    c.check_line_rate("p1", gig).unwrap();
    c.check_line_rate("p2", 1).expect("p2 sends nothing");
    c.flows[0].rate = Rate::Pps(2_000_000);
    assert_eq!(
        c.check_line_rate("p1", gig).unwrap_err().to_string(),
        "flows[0].rate.pps: 2000000 pps of 64-byte frames need 1.34 Gbit/s on the wire, above port \"p1\"'s line rate of 1 Gbit/s"
    );
    c.flows[0].rate = Rate::Percentage(90.0);
    c.check_line_rate("p1", 100 * gig).unwrap();
    assert_eq!(
        c.check_line_rate("p1", gig).unwrap_err().to_string(),
        "ports[0]: the flows of port \"p1\" need 1.22 Gbit/s on the wire together, above its line rate of 1 Gbit/s"
    );
    c.flows[0].rate = Rate::Gbps(2);
    assert_eq!(
        c.check_line_rate("p1", gig).unwrap_err().to_string(),
        "flows[0].rate.gbps: 2 Gbps of 64-byte frames need 2.62 Gbit/s on the wire, above port \"p1\"'s line rate of 1 Gbit/s"
    );
}

#[test]
fn two_ports_on_one_interface_are_refused() {
    assert_eq!(
        refused(|v| v["ports"][1]["location"] = v["ports"][0]["location"].clone()),
        "ports[1].location: veth-tx is already the location of ports[0] (\"p1\"): one interface is one port"
    );
}
