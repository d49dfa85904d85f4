//! `run --config`: an Open Traffic Generator config's flows as streams, real frames in the
//! lab, each counted and timed at the receiving port by its signature.

use crate::common::{json, live_frames_or_skip, nft, root_or_skip, stderr, upktgen};
use serde_json::{Value, json};

/// A config file, removed when dropped (outside the test's directory, which must stay
/// empty).
struct ConfigFile(std::path::PathBuf);

impl ConfigFile {
    fn new(doc: &Value) -> ConfigFile {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let p = std::env::temp_dir().join(format!(
            "upktgen-e2e-config-{}-{}.json",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::write(&p, serde_json::to_vec_pretty(doc).unwrap()).unwrap();
        ConfigFile(p)
    }

    fn arg(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for ConfigFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn value<T: serde::Serialize>(v: T) -> Value {
    json!({"choice": "value", "value": v})
}

fn flow(name: &str, packet: Value, size: Value, pps: u64, seconds: f64) -> Value {
    json!({
        "name": name,
        "tx_rx": {"choice": "port", "port": {"tx_name": "p1", "rx_names": ["p2"]}},
        "packet": packet,
        "size": size,
        "rate": {"choice": "pps", "pps": pps},
        "duration": {"choice": "fixed_seconds", "fixed_seconds": {"seconds": seconds}},
        "metrics": {"enable": true, "loss": true, "latency": {"enable": true}}
    })
}

fn config(flows: Vec<Value>) -> Value {
    json!({
        "ports": [{"name": "p1", "location": "lab:tx"}, {"name": "p2", "location": "lab:rx"}],
        "flows": flows
    })
}

/// The issue's three flows (UDP 64 B at 10,000 pps; TCP IMIX at 20,000 pps; IPv6 1,000 B
/// at 30,000 pps, VLAN-tagged with `vlan`), each for `seconds`, to the addresses `v4` and
/// `v6`.
fn three_flows(seconds: f64, v4: &str, v6: &str, vlan: bool) -> Value {
    let mut v6_packet = vec![
        json!({"choice": "ethernet", "ethernet": {"src": value("02:00:00:00:00:01")}}),
        json!({"choice": "ipv6", "ipv6": {"src": value("fd00:99::1"), "dst": value(v6)}}),
        json!({"choice": "udp", "udp": {"dst_port": value(4791)}}),
    ];
    if vlan {
        v6_packet.insert(
            1,
            json!({"choice": "vlan", "vlan": {"id": value(100), "priority": value(3)}}),
        );
    }
    config(vec![
        flow(
            "udp64",
            json!([
                {"choice": "ethernet", "ethernet": {"src": value("02:00:00:00:00:01")}},
                {"choice": "ipv4", "ipv4": {"src": value("10.99.0.1"), "dst": value(v4)}},
                {"choice": "udp", "udp": {"src_port": value(9),
                    "dst_port": {"choice": "increment", "increment": {"start": 1000, "step": 1, "count": 100}}}}
            ]),
            json!({"choice": "fixed", "fixed": 64}),
            10_000,
            seconds,
        ),
        flow(
            "tcp_imix",
            json!([
                {"choice": "ethernet", "ethernet": {"src": value("02:00:00:00:00:01")}},
                {"choice": "ipv4", "ipv4": {"src": value("10.99.0.1"), "dst": value(v4)}},
                {"choice": "tcp", "tcp": {"src_port": value(40000), "dst_port": value(80), "ctl_syn": value(1)}}
            ]),
            json!({"choice": "weight_pairs", "weight_pairs": {"choice": "predefined", "predefined": "tcp_imix"}}),
            20_000,
            seconds,
        ),
        flow(
            "v6_vlan",
            Value::Array(v6_packet),
            json!({"choice": "fixed", "fixed": 1000}),
            30_000,
            seconds,
        ),
    ])
}

fn run_json(extra: &[&str]) -> Value {
    let mut a = vec!["run", "--json"];
    a.extend_from_slice(extra);
    let o = upktgen(&a);
    assert!(o.status.success(), "{}", stderr(&o));
    json(&o)
}

/// The receiver's summary of stream `i`.
fn rx_stream(j: &Value, i: usize) -> &Value {
    &j["rx_analysis"]["receiver"]["streams"]["streams"][i]
}

fn three_flows_in_the_lab_arrive_as_sent_each_at_its_rate() {
    if !root_or_skip() {
        return;
    }
    let f = ConfigFile::new(&three_flows(10.0, "198.18.1.1", "2001:db8::2", true));
    let j = run_json(&["--config", f.arg()]);
    each_flow_as_sent_at_its_rate(&j, 10);
    // The IMIX stream's sizes are the model's (FCS included) less 4.
    let st = &j["streams"]["streams"];
    let bytes = st[1]["tx_bytes"].as_u64().unwrap() as f64 / 200_000.0;
    let want = (86.0 * 58.67 + 88.0 * 2.0 + 590.0 * 23.66 + 1514.0 * 15.67) / 100.0;
    assert!(
        (bytes / want - 1.0).abs() < 0.01,
        "{bytes} bytes on average, {want} asked"
    );
}

/// The three flows of [`three_flows`], sent for `seconds`: each received as sent (exactly
/// rate x duration frames), none duplicated or reordered, each at its rate within 1 % at
/// the receiver, each with a latency histogram.
fn each_flow_as_sent_at_its_rate(j: &Value, seconds: u64) {
    let st = &j["streams"]["streams"];
    for (i, (name, pps)) in [
        ("udp64", 10_000u64),
        ("tcp_imix", 20_000),
        ("v6_vlan", 30_000),
    ]
    .into_iter()
    .enumerate()
    {
        let s = &st[i];
        assert_eq!(s["name"], name, "{s}");
        // The timeline sends exactly rate x duration frames of each stream.
        assert_eq!(s["tx_frames"], pps * seconds, "{s}");
        assert_eq!(s["rx_frames"], s["tx_frames"], "{s}");
        assert_eq!(s["lost"], 0, "{s}");
        let r = rx_stream(j, i);
        assert_eq!(r["name"], name, "{r}");
        assert_eq!(r["duplicates"], 0, "{r}");
        assert_eq!(r["reordered"], 0, "{r}");
        // The rate at the receiver, from the first to the last arrival: within 1 %.
        let span_s =
            (r["last_rx_ns"].as_u64().unwrap() - r["first_rx_ns"].as_u64().unwrap()) as f64 / 1e9;
        let rate = (r["frames"].as_u64().unwrap() - 1) as f64 / span_s;
        assert!(
            (rate / pps as f64 - 1.0).abs() < 0.01,
            "{name}: {rate:.0} pps received, {pps} asked"
        );
        // A latency histogram per flow: its percentiles in order.
        let l = &r["latency"];
        let at = |k: &str| {
            l[k].as_u64()
                .unwrap_or_else(|| panic!("{name}: no {k} in {l}"))
        };
        assert!(
            at("min_ns") <= at("p50_ns")
                && at("p50_ns") <= at("p99_ns")
                && at("p99_ns") <= at("max_ns"),
            "{l}"
        );
        assert!(at("count") > 0, "{l}");
    }
}

/// The same flows from xdp_live's program, which copies each frame from the slot the
/// sender wrote it in: the same frames, the same timeline, the same counts; and `auto`
/// takes xdp_live for a config in the lab, as it does for one stream.
fn three_flows_through_xdp_live_arrive_as_sent_each_at_its_rate() {
    if !live_frames_or_skip() {
        return;
    }
    let f = ConfigFile::new(&three_flows(4.0, "198.18.1.1", "2001:db8::2", true));
    let j = run_json(&["--config", f.arg(), "--backend", "xdp_live"]);
    assert_eq!(j["backend"]["name"], "xdp_live", "{}", j["backend"]);
    each_flow_as_sent_at_its_rate(&j, 4);
    // sent is what the driver accepted: every frame (60,000 pps for 4 s), none refused.
    let own = &j["outcome"]["backend"]["xdp_live"];
    assert_eq!(own["driver_sent"], 240_000, "{own}");
    assert_eq!(j["outcome"]["result"]["errors"], 0, "{}", j["outcome"]);

    let short = ConfigFile::new(&three_flows(0.5, "198.18.1.1", "2001:db8::2", true));
    let o = upktgen(&["run", "--config", short.arg(), "--backend", "auto"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--backend auto chose xdp_live"),
        "{}",
        stderr(&o)
    );
}

fn the_same_flows_cross_a_device_under_test() {
    if !root_or_skip() {
        return;
    }
    // The DUT routes 10.99.1.2 and fd00:99:1::2 (the lab's receiver). It is a router made of
    // this kernel's parts, which has no 802.1Q (CONFIG_VLAN_8021Q is not set here, nor tc's
    // flower or matchall to pop a tag): the IPv6 flow crosses it untagged; the pair lab's
    // test sends it tagged.
    let f = ConfigFile::new(&three_flows(2.0, "10.99.1.2", "fd00:99:1::2", false));
    let j = run_json(&["--config", f.arg(), "--lab", "dut"]);
    for (i, pps) in [10_000u64, 20_000, 30_000].into_iter().enumerate() {
        let s = &j["streams"]["streams"][i];
        assert_eq!(s["tx_frames"], pps * 2, "{s}");
        assert_eq!(s["rx_frames"], s["tx_frames"], "{s}");
    }
    assert_eq!(j["dut"]["dropped_in_dut"], 0, "{}", j["dut"]);
}

fn one_flow_of_1024_dropped_by_a_rule_loses_what_the_rule_counted() {
    if !root_or_skip() || !nft::nft_or_skip() {
        return;
    }
    // 1,024 flows, one UDP port each, 100 pps each for 2 s; the DUT drops flow 700's port.
    let flows: Vec<Value> = (0..1024u32)
        .map(|i| {
            flow(
                &format!("f{i}"),
                json!([
                    {"choice": "ethernet", "ethernet": {}},
                    {"choice": "ipv4", "ipv4": {"src": value("10.99.0.1"), "dst": value("10.99.1.2")}},
                    {"choice": "udp", "udp": {"src_port": value(7), "dst_port": value(20_000 + i)}}
                ]),
                json!({"choice": "fixed", "fixed": 128}),
                100,
                2.0,
            )
        })
        .collect();
    let f = ConfigFile::new(&config(flows));
    let setup = "nft add table inet t && nft add chain inet t f '{ type filter hook forward priority 0; }' && \
                 nft add rule inet t f udp dport 20700 counter drop";
    let j = run_json(&["--config", f.arg(), "--lab", "dut", "--dut-setup", setup]);
    let st = j["streams"]["streams"].as_array().unwrap();
    assert_eq!(st.len(), 1024);
    let dropped = &st[700];
    assert_eq!(dropped["tx_frames"], 200, "{dropped}");
    // The rule's drops are the DUT's drops after the forwarding decision (only the run's
    // frames cross it), and exactly that flow's loss.
    assert_eq!(
        dropped["lost"], j["dut"]["after_forwarding"],
        "{}",
        j["dut"]
    );
    assert_eq!(dropped["lost"], 200, "{dropped}");
    for s in st.iter().filter(|s| s["name"] != "f700") {
        assert_eq!(s["lost"], 0, "{s}");
        assert_eq!(s["tx_frames"], 200, "{s}");
    }
}

fn a_config_is_refused_before_anything_is_sent() {
    if !root_or_skip() {
        return;
    }
    let mut doc = three_flows(1.0, "198.18.1.1", "2001:db8::2", true);
    doc["flows"][2]["packet"][3]["udp"]["length"] = value(9);
    let f = ConfigFile::new(&doc);
    let o = upktgen(&["run", "--config", f.arg()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains(
            "flows[2].packet[3].udp.length: not supported (upktgen computes it from the frame size)"
        ),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "one line: {e}");
}

/// The three flows from host a to a far end in host b (`netns:`), at a tenth of the rates,
/// captured at b by dumpcap: every frame decodes (tshark) with exactly its flow's headers,
/// and the far receiver counted each flow as sent.
fn three_flows_to_a_netns_peer_decode_with_their_headers() {
    use crate::common::hosts::{self, TwoHosts};
    use crate::harness::tool_or_skip;
    if !root_or_skip()
        || !tool_or_skip("tshark", "apt-get install tshark")
        || !tool_or_skip("dumpcap", "apt-get install tshark")
    {
        return;
    }
    let h = TwoHosts::new();
    let mut doc = three_flows(2.0, &h.b_ip, "fd00:98::2", true);
    doc["ports"] = json!([
        {"name": "p1", "location": hosts::A_DATA},
        {"name": "p2", "location": format!("netns:{}/{}", h.b, hosts::B_DATA)}
    ]);
    for f in doc["flows"].as_array_mut().unwrap() {
        f["packet"][0]["ethernet"]["dst"] = value(hosts::B_MAC);
        let pps = f["rate"]["pps"].as_u64().unwrap();
        f["rate"]["pps"] = json!(pps / 10);
    }
    let f = ConfigFile::new(&doc);
    let cap = h.file("streams.pcap");
    let mut dumpcap = std::process::Command::new("ip")
        .args([
            "netns",
            "exec",
            &h.b,
            "dumpcap",
            "-q",
            "-i",
            hosts::B_DATA,
            "-w",
        ])
        .arg(&cap)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // dumpcap writes the file's header once it captures.
    let t0 = std::time::Instant::now();
    while std::fs::metadata(&cap).map_or(0, |m| m.len()) == 0 {
        assert!(t0.elapsed().as_secs() < 20, "dumpcap did not start");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let o = h.in_a(&[
        env!("CARGO_BIN_EXE_upktgen"),
        "run",
        "--json",
        "--config",
        f.arg(),
    ]);
    // dumpcap may still be reading the last frames from its socket: SIGINT once the file
    // has stopped growing (a signal before that lost the last 14 ms of each flow on a
    // loaded machine), then dumpcap finishes the file and exits.
    let (mut len, mut still) = (0, std::time::Instant::now());
    let t0 = std::time::Instant::now();
    while still.elapsed().as_millis() < 500 && t0.elapsed().as_secs() < 20 {
        std::thread::sleep(std::time::Duration::from_millis(50));
        let now = std::fs::metadata(&cap).map_or(0, |m| m.len());
        if now != len {
            (len, still) = (now, std::time::Instant::now());
        }
    }
    let _ = std::process::Command::new("kill")
        .args(["-INT", &dumpcap.id().to_string()])
        .status();
    let _ = dumpcap.wait();
    assert!(o.status.success(), "{}", stderr(&o));
    let j = json(&o);
    let st = &j["streams"]["streams"];
    for (i, pps) in [1_000u64, 2_000, 3_000].into_iter().enumerate() {
        assert_eq!(st[i]["tx_frames"], pps * 2, "{}", st[i]);
        assert_eq!(st[i]["rx_frames"], st[i]["tx_frames"], "{}", st[i]);
    }
    let d = std::process::Command::new("tshark")
        .args(["-r"])
        .arg(&cap)
        .args([
            "-T",
            "fields",
            "-E",
            "separator=|",
            "-e",
            "frame.protocols",
            "-e",
            "frame.len",
            "-e",
            "udp.dstport",
            "-e",
            "tcp.flags",
            "-e",
            "vlan.id",
            "-e",
            "vlan.priority",
            "-e",
            "_ws.malformed",
        ])
        .output()
        .unwrap();
    assert!(d.status.success(), "{}", stderr(&d));
    let mut per_flow = [0u64; 3];
    for line in String::from_utf8_lossy(&d.stdout).lines() {
        let f: Vec<&str> = line.split('|').collect();
        let (proto, len) = (f[0], f[1].parse::<u64>().unwrap());
        assert!(f[6].is_empty(), "a malformed frame: {line}");
        if proto.starts_with("eth:ethertype:ip:udp") && len == 60 {
            assert!(
                (1000..1100).contains(&f[2].parse::<u32>().unwrap()),
                "{line}"
            );
            per_flow[0] += 1;
        } else if proto.starts_with("eth:ethertype:ip:tcp") {
            assert!([86, 88, 590, 1514].contains(&len), "{line}");
            assert_eq!(f[3], "0x0002", "SYN only: {line}");
            per_flow[1] += 1;
        } else if proto.starts_with("eth:ethertype:vlan:ethertype:ipv6:udp") {
            assert_eq!((len, f[2], f[4], f[5]), (996, "4791", "100", "3"), "{line}");
            per_flow[2] += 1;
        } else if proto.starts_with("eth:ethertype:ipv6:icmpv6") || proto.contains("arp") {
            // The namespaces' own neighbour traffic.
        } else {
            panic!("a frame of no flow: {line}");
        }
    }
    assert_eq!(per_flow, [2_000, 4_000, 6_000]);
}

/// The OTG server's way in: a config launched in process, watched while it runs, then its
/// final figures.
fn a_launched_config_shows_its_progress_then_its_figures() {
    if !root_or_skip() {
        return;
    }
    let doc = config(vec![flow(
        "a",
        json!([{"choice": "ethernet", "ethernet": {}}, {"choice": "ipv4", "ipv4": {}}, {"choice": "udp", "udp": {}}]),
        json!({"choice": "fixed", "fixed": 128}),
        2_000,
        1.0,
    )]);
    let cfg = upktgen::otg::Config::from_value(&doc).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let l = upktgen::run::streams::launch(&cfg, stop).unwrap();
    let mut polls = Vec::new();
    while !l.finished() {
        polls.push(l.progress()[0].tx_frames);
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(polls.windows(2).all(|w| w[0] <= w[1]), "{polls:?}");
    assert!(
        polls.iter().any(|&n| n > 0 && n < 2_000),
        "seen while sending: {polls:?}"
    );
    let p = &l.progress()[0];
    assert_eq!(
        (p.name.as_str(), p.tx_frames, p.rx_frames),
        ("a", 2_000, 2_000)
    );
    assert_eq!((p.tx_bytes, p.rx_bytes), (2_000 * 124, 2_000 * 124));
    let out = l.wait().unwrap();
    let f = &out.flows[0];
    assert_eq!((f.tx_frames, f.rx_frames, f.lost), (2_000, 2_000, 0));
    let lat = f.latency_ns.as_ref().unwrap();
    assert!(lat.min <= lat.p50 && lat.p50 <= lat.max, "{lat:?}");
    assert!(out.text.contains("Streams:"), "{}", out.text);
}

/// 4,500 flows with 240-byte names to a far end: the receiver's request (a `--stream NAME`
/// per flow) is more than the agent reads. Refused in one line before anything is sent (it
/// was "the channel is closed", the agent gone without a word the controller read).
fn stream_names_too_long_for_the_far_end_are_refused_before_anything_is_sent() {
    use crate::common::hosts::{self, TwoHosts};
    use crate::common::rx_packets_in;
    if !root_or_skip() {
        return;
    }
    let h = TwoHosts::new();
    let flows = (0..4500)
        .map(|i| {
            let mut f = flow(
                &format!("{i:05}{}", "x".repeat(235)),
                json!([
                    {"choice": "ethernet", "ethernet": {"dst": value(hosts::B_MAC)}},
                    {"choice": "ipv4", "ipv4": {"dst": value(&h.b_ip)}},
                    {"choice": "udp", "udp": {}}
                ]),
                json!({"choice": "fixed", "fixed": 64}),
                10,
                1.0,
            );
            f["duration"] = json!({"choice": "fixed_packets", "fixed_packets": {"packets": 1}});
            f
        })
        .collect();
    let mut doc = config(flows);
    doc["ports"] = json!([
        {"name": "p1", "location": hosts::A_DATA},
        {"name": "p2", "location": format!("netns:{}/{}", h.b, hosts::B_DATA)}
    ]);
    let f = ConfigFile::new(&doc);
    let before = rx_packets_in(&h.b, hosts::B_DATA).unwrap();
    let o = h.in_a(&[env!("CARGO_BIN_EXE_upktgen"), "run", "--config", f.arg()]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains(": rx.start: a request of ")
            && e.contains("more than the agent reads (1048576 bytes)"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "one line: {e}");
    assert_eq!(
        rx_packets_in(&h.b, hosts::B_DATA),
        Some(before),
        "nothing sent"
    );
}

pub(crate) const TESTS: &[crate::harness::Test] = crate::tests_alone![
    three_flows_in_the_lab_arrive_as_sent_each_at_its_rate,
    three_flows_through_xdp_live_arrive_as_sent_each_at_its_rate,
    the_same_flows_cross_a_device_under_test,
    one_flow_of_1024_dropped_by_a_rule_loses_what_the_rule_counted,
    a_config_is_refused_before_anything_is_sent,
    three_flows_to_a_netns_peer_decode_with_their_headers,
    a_launched_config_shows_its_progress_then_its_figures,
    stream_names_too_long_for_the_far_end_are_refused_before_anything_is_sent,
];
