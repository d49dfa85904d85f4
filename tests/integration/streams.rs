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

/// Ethernet (to `dst`, from `src` when given), IPv4 and UDP headers, the rest defaults.
fn udp_to(src: Option<&str>, dst: &str) -> Value {
    let mut eth = json!({"dst": value(dst)});
    if let Some(src) = src {
        eth["src"] = value(src);
    }
    json!([
        {"choice": "ethernet", "ethernet": eth},
        {"choice": "ipv4", "ipv4": {}},
        {"choice": "udp", "udp": {}}
    ])
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

/// `n` flows through the DUT lab, `f0` to `fN`, each of 128-byte UDP frames to its own port
/// (20,000 + i) at `pps` for `seconds`; and the DUT's set-up: an nftables forward chain
/// whose one rule matches `udp dport RULE`.
fn dut_flows(n: u32, pps: u64, seconds: f64, rule: &str) -> (ConfigFile, String) {
    let flows: Vec<Value> = (0..n)
        .map(|i| {
            flow(
                &format!("f{i}"),
                json!([
                    {"choice": "ethernet", "ethernet": {}},
                    {"choice": "ipv4", "ipv4": {"src": value("10.99.0.1"), "dst": value("10.99.1.2")}},
                    {"choice": "udp", "udp": {"src_port": value(7), "dst_port": value(20_000 + i)}}
                ]),
                json!({"choice": "fixed", "fixed": 128}),
                pps,
                seconds,
            )
        })
        .collect();
    let setup = format!(
        "nft add table inet t && nft add chain inet t f '{{ type filter hook forward priority 0; }}' && \
         nft add rule inet t f udp dport {rule}"
    );
    (ConfigFile::new(&config(flows)), setup)
}

fn one_flow_of_1024_dropped_by_a_rule_loses_what_the_rule_counted() {
    if !root_or_skip() || !nft::nft_or_skip() {
        return;
    }
    // 1,024 flows, one UDP port each, 100 pps each for 2 s; the DUT drops flow 700's port.
    let (f, setup) = dut_flows(1024, 100, 2.0, "20700 counter drop");
    let j = run_json(&["--config", f.arg(), "--lab", "dut", "--dut-setup", &setup]);
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

/// `doc`'s ports from host a's data interface to host b's, b a `netns:` far end.
fn to_far_end(doc: &mut Value, h: &crate::common::hosts::TwoHosts) {
    use crate::common::hosts;
    doc["ports"] = json!([
        {"name": "p1", "location": hosts::A_DATA},
        {"name": "p2", "location": format!("netns:{}/{}", h.b, hosts::B_DATA)}
    ]);
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
    to_far_end(&mut doc, &h);
    for f in doc["flows"].as_array_mut().unwrap() {
        f["packet"][0]["ethernet"]["dst"] = value(hosts::B_MAC);
        let pps = f["rate"]["pps"].as_u64().unwrap();
        f["rate"]["pps"] = json!(pps / 10);
    }
    let f = ConfigFile::new(&doc);
    let cap = h.file("streams.pcap");
    let o = crate::common::capture_while(&h.b, hosts::B_DATA, &cap, &[], || {
        h.in_a(&[
            env!("CARGO_BIN_EXE_upktgen"),
            "run",
            "--json",
            "--config",
            f.arg(),
        ])
    });
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
    // Per port: p1 sent them, p2 received them.
    let ports = l.ports();
    assert_eq!(
        ports
            .iter()
            .map(|p| (p.name.as_str(), p.tx_frames, p.rx_frames))
            .collect::<Vec<_>>(),
        [("p1", 2_000, 0), ("p2", 0, 2_000)]
    );
    let out = l.wait().unwrap();
    assert_eq!(
        (out.ports[0].tx_frames, out.ports[1].rx_frames),
        (2_000, 2_000)
    );
    let f = &out.flows[0];
    assert_eq!((f.tx_frames, f.rx_frames, f.lost), (2_000, 2_000, 0));
    let lat = f.latency_ns.as_ref().unwrap();
    assert!(lat.min <= lat.p50 && lat.p50 <= lat.max, "{lat:?}");
    assert!(out.text.contains("Streams:"), "{}", out.text);
}

/// `upktgen run --config` of `doc`, which must succeed: its text report.
/// `upktgen ARGS --metrics-listen 127.0.0.1:PORT` (a port of this test's own, from `base`
/// and the test's pid), its output piped; killed if dropped before it is waited for (an
/// assertion failed).
struct Served {
    child: Option<std::process::Child>,
    url: String,
}

impl Served {
    fn spawn(args: &[&str], base: u32) -> Served {
        let listen = format!("127.0.0.1:{}", base + std::process::id() % 10_000);
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_upktgen"))
            .args(args)
            .args(["--metrics-listen", &listen])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        Served {
            child: Some(child),
            url: format!("http://{listen}/metrics"),
        }
    }

    /// One scrape with the `Accept` header `accept`.
    fn scrape_as(&self, accept: &str) -> String {
        let o = std::process::Command::new("curl")
            .args(["-sS", "--max-time", "5", "-H", accept, &self.url])
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// Asserts it still runs (its metrics were not final when it ended).
    fn still_running(&mut self) {
        let c = self.child.as_mut().unwrap();
        assert!(
            c.try_wait().unwrap().is_none(),
            "ended before its metrics were final"
        );
    }

    /// Waits for it to end: its output.
    fn wait(mut self) -> std::process::Output {
        self.child.take().unwrap().wait_with_output().unwrap()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(c) = &mut self.child {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn run_text(doc: &Value) -> String {
    let f = ConfigFile::new(doc);
    let o = upktgen(&["run", "--config", f.arg()]);
    assert!(o.status.success(), "{}", stderr(&o));
    crate::common::stdout(&o)
}

/// The columns of the row of `run --config`'s flows table (its rows end with their ports)
/// that starts with `start` (`"0 ab "`: id and name), or with a port table's row when
/// `start` is a port (`"p1 (netns:...)"`).
fn table_row(text: &str, start: &str) -> Vec<String> {
    let port = start.starts_with('p');
    text.lines()
        .find(|l| l.trim_start().starts_with(start) && (port || l.contains(" -> ")))
        .unwrap_or_else(|| panic!("no row {start:?} in {text}"))
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// Flows both ways over a veth pair in a namespace the test made (`netns:` ports): each
/// port sends its flows from inside the namespace and a far end there counts the other's:
/// every flow received as sent, each port's frames sent and received. (The OTG server's
/// way in, `run::streams::launch`, is driven by snappi in otg_server.rs: in this process
/// the far end's agent would be the test binary.)
fn flows_both_ways_between_two_ports_each_arrive_as_sent() {
    use crate::common::VethNs;
    if !root_or_skip() {
        return;
    }
    let ns = VethNs::new("both");
    let udp = |dst: &str| udp_to(None, dst);
    let mut flows = vec![
        flow(
            "ab",
            udp("02:00:00:00:00:02"),
            json!({"choice": "fixed", "fixed": 128}),
            2_000,
            1.0,
        ),
        flow(
            "ba",
            udp("02:00:00:00:00:01"),
            json!({"choice": "fixed", "fixed": 256}),
            1_000,
            1.0,
        ),
        flow(
            "ab2",
            udp("02:00:00:00:00:02"),
            json!({"choice": "fixed", "fixed": 64}),
            500,
            1.0,
        ),
    ];
    flows[1]["tx_rx"]["port"] = json!({"tx_name": "p2", "rx_names": ["p1"]});
    let mut doc = config(flows);
    doc["ports"] = json!([
        {"name": "p1", "location": ns.port("va")},
        {"name": "p2", "location": ns.port("vb")}
    ]);
    // Each port's report, then every flow and port.
    let text = run_text(&doc);
    let row = |start: &str| table_row(&text, start);
    // The flows table's rows (they end with their ports): id, name, sent, received, lost.
    assert_eq!(row("0 ab ")[..5], ["0", "ab", "2000", "2000", "0"]);
    assert_eq!(row("1 ba ")[..5], ["1", "ba", "1000", "1000", "0"]);
    assert_eq!(row("2 ab2 ")[..5], ["2", "ab2", "500", "500", "0"]);
    // Port, sent, received (of its flows), unexpected.
    let p1 = row(&format!("p1 ({})", ns.port("va")));
    assert_eq!(p1[2..], ["2500", "1000", "0"]);
    let p2 = row(&format!("p2 ({})", ns.port("vb")));
    assert_eq!(p2[2..], ["1000", "2500", "0"]);
}

/// Flows both ways over a veth pair in a namespace the test made, with `--json` and
/// `--metrics-listen`: one endpoint serves both ports' runs, each run's series labelled by
/// its port (scraped while they run: both ports' streams counting, promtool-checked; and
/// once final: each flow's frames as its port's receiver counted them, each port's receiving
/// interface labelled with its own name and namespace); one document
/// (`upktgen.run-ports/1`, valid against its schema) holds both runs (each a run document
/// with its receiving port's `unexpected`), every flow between its ports received as sent,
/// every port and the totals.
fn flows_both_ways_make_one_json_document_and_one_metrics_endpoint() {
    use crate::common::VethNs;
    use crate::common::schema as check;
    use crate::metrics::{promtool_ok, tools_or_skip, value as sample};
    if !root_or_skip() || !tools_or_skip() {
        return;
    }
    let ns = VethNs::new("bjson");
    let udp = |dst: &str| udp_to(None, dst);
    let mut flows = vec![
        flow(
            "ab",
            udp("02:00:00:00:00:02"),
            json!({"choice": "fixed", "fixed": 128}),
            1_000,
            3.0,
        ),
        flow(
            "ba",
            udp("02:00:00:00:00:01"),
            json!({"choice": "fixed", "fixed": 256}),
            500,
            3.0,
        ),
    ];
    flows[1]["tx_rx"]["port"] = json!({"tx_name": "p2", "rx_names": ["p1"]});
    let mut doc = config(flows);
    let (va, vb) = (ns.port("va"), ns.port("vb"));
    doc["ports"] = json!([
        {"name": "p1", "location": va},
        {"name": "p2", "location": vb}
    ]);
    let f = ConfigFile::new(&doc);
    let mut child = Served::spawn(
        &[
            "run",
            "--json",
            "--config",
            f.arg(),
            "--metrics-linger",
            "5s",
        ],
        30_000,
    );
    let open_metrics = "Accept: application/openmetrics-text; version=1.0.0";
    let prom_text = "Accept: text/plain; version=0.0.4";
    let ab = "upktgen_stream_rx_frames_total{port=\"p1\",rx_port=\"p2\",stream=\"ab\",id=\"0\"}";
    let ba = "upktgen_stream_rx_frames_total{port=\"p2\",rx_port=\"p1\",stream=\"ba\",id=\"1\"}";
    let running = "upktgen_state{state=\"running\"}";
    let finished = "upktgen_state{state=\"finished\"}";
    let t0 = std::time::Instant::now();
    let mut during = None;
    let last = loop {
        let b = child.scrape_as(open_metrics);
        if sample(&b, finished) == Some(1.0) {
            break b;
        }
        if during.is_none()
            && sample(&b, running) == Some(1.0)
            && sample(&b, ab) > Some(0.0)
            && sample(&b, ba) > Some(0.0)
        {
            // Both ports' streams counting, in the format promtool reads.
            let text = child.scrape_as(prom_text);
            promtool_ok(&text);
            during = Some(text);
        }
        child.still_running();
        assert!(t0.elapsed().as_secs() < 60, "never finished");
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let during = during.expect("no scrape while both ports' streams were counting");
    // The same families for both ports: their sending interfaces, their receivers.
    for port in ["port=\"p1\",rx_port=\"p2\"", "port=\"p2\",rx_port=\"p1\""] {
        assert!(
            during.contains(&format!("upktgen_rx_frames_total{{{port}}}")),
            "{port}: {during}"
        );
        assert!(
            during.contains(&format!("upktgen_iface_packets_total{{{port},")),
            "{port}: {during}"
        );
    }
    promtool_ok(&child.scrape_as(prom_text));
    // Each port's sending interface is one series, read in its namespace, live and at the
    // end alike.
    for (port, iface) in [
        ("port=\"p1\",rx_port=\"p2\"", "va"),
        ("port=\"p2\",rx_port=\"p1\"", "vb"),
    ] {
        let tx: Vec<&str> = last
            .lines()
            .filter(|l| {
                l.starts_with(&format!("upktgen_iface_packets_total{{{port},"))
                    && l.contains("direction=\"tx\"")
            })
            .collect();
        let want = format!("iface=\"{iface}\",netns=\"{}\",", ns.0);
        assert!(tx.len() == 1 && tx[0].contains(&want), "{port}: {tx:?}");
    }
    // Each port's receiving interface, a far end's, at the end: its own name and namespace.
    for (port, iface) in [
        ("port=\"p1\",rx_port=\"p2\"", "vb"),
        ("port=\"p2\",rx_port=\"p1\"", "va"),
    ] {
        let rx: Vec<&str> = last
            .lines()
            .filter(|l| {
                l.starts_with(&format!("upktgen_iface_packets_total{{{port},"))
                    && l.contains("direction=\"rx\"")
            })
            .collect();
        let want = format!("iface=\"{iface}\",netns=\"{}\",", ns.0);
        assert!(rx.len() == 1 && rx[0].contains(&want), "{port}: {rx:?}");
    }
    let o = child.wait();
    assert!(o.status.success(), "{}", stderr(&o));
    let j = json(&o);
    check::check(
        upktgen::schema::RUN_PORTS,
        &j,
        "run --config --json, two ports",
    );
    let (p1, p2) = (format!("p1 ({va})"), format!("p2 ({vb})"));
    assert_eq!(j["flows"].as_array().map(Vec::len), Some(2), "{j}");
    for (i, name, tx, rx) in [(0, "ab", &p1, &p2), (1, "ba", &p2, &p1)] {
        let fl = &j["flows"][i];
        assert_eq!(
            (&fl["id"], &fl["name"], &fl["tx_port"], &fl["rx_port"]),
            (&json!(i), &json!(name), &json!(tx), &json!(rx)),
            "{fl}"
        );
        let sent = fl["tx_frames"].as_u64().unwrap();
        assert!(sent > 0, "{fl}");
        assert_eq!(fl["rx_frames"], sent, "{fl}");
        assert_eq!(fl["lost"], 0, "{fl}");
        // Each run is a run document, its flow's figures the same, its receiving port's
        // unexpected beside it.
        let run = &j["runs"][i];
        assert_eq!((&run["tx_port"], &run["rx_port"]), (&json!(tx), &json!(rx)));
        assert_eq!(run["unexpected"], 0, "{run}");
        let report = &run["report"];
        assert_eq!(report["schema"], upktgen::schema::RUN);
        assert_eq!(report["streams"]["streams"][0]["tx_frames"], sent);
        assert_eq!(report["outcome"]["result"]["sent"], sent, "{report}");
        // The final series: what its port's receiver counted.
        let series = if i == 0 { ab } else { ba };
        assert_eq!(sample(&last, series), Some(sent as f64), "{series}");
    }
    let sent = |i: usize| j["flows"][i]["tx_frames"].as_u64().unwrap();
    let port = |i: usize| &j["ports"][i];
    assert_eq!(
        (
            &port(0)["port"],
            &port(0)["tx_frames"],
            &port(0)["rx_frames"]
        ),
        (&json!(p1), &json!(sent(0)), &json!(sent(1)))
    );
    assert_eq!(
        (
            &port(1)["port"],
            &port(1)["tx_frames"],
            &port(1)["rx_frames"]
        ),
        (&json!(p2), &json!(sent(1)), &json!(sent(0)))
    );
    assert_eq!(
        (&port(0)["unexpected"], &port(1)["unexpected"]),
        (&json!(0), &json!(0))
    );
    let t = &j["totals"];
    assert_eq!(
        (&t["flows"], &t["ports"], &t["lost"], &t["unexpected"]),
        (&json!(2), &json!(2), &json!(0), &json!(0)),
        "{t}"
    );
    assert_eq!(t["tx_frames"], sent(0) + sent(1));
    assert_eq!(t["rx_frames"], sent(0) + sent(1));
    assert_eq!(t["tx_bytes"], sent(0) * 124 + sent(1) * 252, "{t}");
}

/// Flows both ways between the private lab's ends: the run makes the lab once, each end
/// sends and receives, every flow arrives as sent, and the lab is gone afterwards.
fn flows_both_ways_in_the_lab_each_arrive_as_sent() {
    use crate::common::namespaces_with_prefix;
    if !root_or_skip() {
        return;
    }
    let eth = json!([{"choice": "ethernet", "ethernet": {}}, {"choice": "ipv4", "ipv4": {}}, {"choice": "udp", "udp": {}}]);
    let mut flows = vec![
        flow(
            "ab",
            eth.clone(),
            json!({"choice": "fixed", "fixed": 128}),
            2_000,
            1.0,
        ),
        flow(
            "ba",
            eth,
            json!({"choice": "fixed", "fixed": 256}),
            1_000,
            1.0,
        ),
    ];
    flows[1]["tx_rx"]["port"] = json!({"tx_name": "p2", "rx_names": ["p1"]});
    let f = ConfigFile::new(&config(flows));
    let (pid, o) = crate::common::upktgen_with_pid(&["run", "--config", f.arg()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = crate::common::stdout(&o);
    let row = |start: &str| table_row(&text, start);
    assert_eq!(row("0 ab ")[..5], ["0", "ab", "2000", "2000", "0"]);
    assert_eq!(row("1 ba ")[..5], ["1", "ba", "1000", "1000", "0"]);
    // The lab (its maker's pid in its names) is removed.
    assert!(namespaces_with_prefix(&format!("upktgen-{pid}-")).is_empty());
    assert!(!text.contains("unexpected at"), "{text}");
}

/// Two ports into one, and one back, through a bridge in a namespace the test made (three
/// veth pairs on it): each flow received as sent, the port that hears two counts both,
/// and the frames the bridge floods to a port no flow sends them to are unexpected there.
fn two_ports_into_one_each_flow_counted_and_floods_unexpected() {
    use crate::common::VethNs;
    if !root_or_skip() {
        return;
    }
    let ns = VethNs::empty("m2o");
    let n = ns.0.as_str();
    ns.ip(&["-n", n, "link", "add", "br0", "type", "bridge"]);
    for x in ["a", "b", "c"] {
        ns.veth(&format!("{x}1"), &format!("{x}2"));
        ns.ip(&["-n", n, "link", "set", &format!("{x}2"), "master", "br0"]);
    }
    ns.ip(&["-n", n, "link", "set", "br0", "up"]);
    // The destinations are MACs no port has: the bridge floods every frame to every other
    // port (a zero source it would drop).
    let udp = |src: &str, dst: &str| {
        json!([
            {"choice": "ethernet", "ethernet": {"src": value(src), "dst": value(dst)}},
            {"choice": "ipv4", "ipv4": {}},
            {"choice": "udp", "udp": {}}
        ])
    };
    let fixed = json!({"choice": "fixed", "fixed": 128});
    let mut flows = vec![
        flow(
            "f13",
            udp("02:00:00:00:00:01", "02:00:00:00:00:33"),
            fixed.clone(),
            1_000,
            1.0,
        ),
        flow(
            "f23",
            udp("02:00:00:00:00:02", "02:00:00:00:00:33"),
            fixed.clone(),
            500,
            1.0,
        ),
        flow(
            "f31",
            udp("02:00:00:00:00:03", "02:00:00:00:00:11"),
            fixed,
            200,
            1.0,
        ),
    ];
    for (f, (tx, rx)) in flows
        .iter_mut()
        .zip([("p1", "p3"), ("p2", "p3"), ("p3", "p1")])
    {
        f["tx_rx"]["port"] = json!({"tx_name": tx, "rx_names": [rx]});
    }
    let mut doc = config(flows);
    doc["ports"] = json!([
        {"name": "p1", "location": ns.port("a1")},
        {"name": "p2", "location": ns.port("b1")},
        {"name": "p3", "location": ns.port("c1")}
    ]);
    let text = run_text(&doc);
    let flow_row = |start: &str| table_row(&text, start);
    assert_eq!(flow_row("0 f13")[..5], ["0", "f13", "1000", "1000", "0"]);
    assert_eq!(flow_row("1 f23")[..5], ["1", "f23", "500", "500", "0"]);
    assert_eq!(flow_row("2 f31")[..5], ["2", "f31", "200", "200", "0"]);
    let port_row = |p: &str, iface: &str| table_row(&text, &format!("{p} ({})", ns.port(iface)));
    // Port, sent, received of its flows, unexpected.
    assert_eq!(port_row("p3", "c1")[2..], ["200", "1500", "0"]);
    let p1 = port_row("p1", "a1");
    assert_eq!(p1[2..4], ["1000", "200"]);
    // f23's frames flooded to p1 while its receiver ran.
    let unexpected: u64 = p1[4].parse().unwrap();
    assert!(unexpected > 0 && unexpected <= 500, "{text}");
    assert_eq!(port_row("p2", "b1")[2..], ["500", "-", "-"]);
    // The same with --json: one document, each receiving port's unexpected in it.
    let f = ConfigFile::new(&doc);
    let j = run_json(&["--config", f.arg()]);
    crate::common::schema::check(upktgen::schema::RUN_PORTS, &j, "two ports into one, --json");
    let flows: Vec<(u64, u64)> = j["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["tx_frames"].as_u64().unwrap(),
                f["rx_frames"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(flows, [(1000, 1000), (500, 500), (200, 200)], "{j}");
    let port = |p: &str, iface: &str| {
        let name = format!("{p} ({})", ns.port(iface));
        j["ports"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["port"] == name.as_str())
            .unwrap_or_else(|| panic!("no port {name} in {j}"))
            .clone()
    };
    let p1 = port("p1", "a1");
    let unexpected = p1["unexpected"].as_u64().unwrap();
    assert!(unexpected > 0 && unexpected <= 500, "{p1}");
    assert_eq!(port("p3", "c1")["unexpected"], 0);
    assert_eq!(
        port("p2", "b1")["unexpected"],
        Value::Null,
        "no receiver at p2"
    );
    // p3's run sends to p1: its unexpected is p1's.
    let to_p1 = j["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["tx_port"] == format!("p3 ({})", ns.port("c1")).as_str())
        .unwrap();
    assert_eq!(to_p1["unexpected"], unexpected);
    assert_eq!(j["totals"]["unexpected"], unexpected);
    assert_eq!(j["runs"].as_array().map(Vec::len), Some(3));
}

/// A bridge in a namespace the test made with three ports, `a1`..`c1` (each the end of a
/// veth pair whose other end is on the bridge; `a1` has four queues each way), each with its
/// own MAC (`02:00:00:00:0X:01`), which the bridge is told statically where it is: a frame
/// to a port's MAC goes there only, from the first (no flooding while it learns).
fn fan_out_bridge(tag: &str) -> crate::common::VethNs {
    use crate::common::VethNs;
    let ns = VethNs::empty(tag);
    let n = ns.0.as_str();
    ns.ip(&["-n", n, "link", "add", "br0", "type", "bridge"]);
    for (x, q) in [("a", "4"), ("b", "1"), ("c", "1")] {
        let (end, port, mac) = (format!("{x}1"), format!("{x}2"), fan_out_mac(x));
        ns.ip(&[
            "-n",
            n,
            "link",
            "add",
            &end,
            "address",
            &mac,
            "numtxqueues",
            q,
            "numrxqueues",
            q,
            "type",
            "veth",
            "peer",
            "name",
            &port,
            "numtxqueues",
            q,
            "numrxqueues",
            q,
        ]);
        for i in [&end, &port] {
            ns.ip(&["-n", n, "link", "set", i, "up"]);
        }
        ns.ip(&["-n", n, "link", "set", &port, "master", "br0"]);
        let o = std::process::Command::new("bridge")
            .args([
                "-n", n, "fdb", "add", &mac, "dev", &port, "master", "static",
            ])
            .output()
            .unwrap();
        assert!(o.status.success(), "bridge fdb add: {}", stderr(&o));
    }
    ns.ip(&["-n", n, "link", "set", "br0", "up"]);
    ns
}

/// The MAC of [`fan_out_bridge`]'s port `x1`.
fn fan_out_mac(x: &str) -> String {
    format!("02:00:00:00:0{x}:01")
}

/// One port sending to two through a bridge (a namespace the test made, each frame to its
/// receiver's MAC, which the bridge knows): p1 sends flow A to p2 and flow B to p3, two
/// legs on p1's interface, each its own sender and its own receiver at its port. With
/// af_packet (text, `--json` and `--metrics-listen`) and af_xdp (p1's interface has four
/// queues: each leg's socket binds one of its own): each flow received as sent at its port
/// and nowhere else, each between its ports in the text, the document and the metrics, p1's
/// sent the sum of its legs'. From a port of one queue, af_xdp for two legs is refused in
/// one line before anything is sent.
fn one_port_sending_to_two_each_flow_received_at_its_port() {
    use crate::metrics::{promtool_ok, tools_or_skip, value as sample};
    if !root_or_skip() || !tools_or_skip() {
        return;
    }
    let ns = fan_out_bridge("o2m");
    let udp = |dst: &str| udp_to(Some(&fan_out_mac("a")), dst);
    let mut flows = vec![
        flow(
            "A",
            udp(&fan_out_mac("b")),
            json!({"choice": "fixed", "fixed": 128}),
            1_000,
            1.0,
        ),
        flow(
            "B",
            udp(&fan_out_mac("c")),
            json!({"choice": "fixed", "fixed": 256}),
            500,
            1.0,
        ),
    ];
    flows[1]["tx_rx"]["port"] = json!({"tx_name": "p1", "rx_names": ["p3"]});
    let mut doc = config(flows);
    doc["ports"] = json!([
        {"name": "p1", "location": ns.port("a1")},
        {"name": "p2", "location": ns.port("b1")},
        {"name": "p3", "location": ns.port("c1")}
    ]);
    let (p1, p2, p3) = (
        format!("p1 ({})", ns.port("a1")),
        format!("p2 ({})", ns.port("b1")),
        format!("p3 ({})", ns.port("c1")),
    );
    // The text: each flow between its ports, each port's figures.
    let text = run_text(&doc);
    let row = |start: &str| table_row(&text, start);
    assert!(
        text.contains("Flows:       2 from 1 port to 2 ports\n"),
        "{text}"
    );
    assert_eq!(row("0 A ")[..5], ["0", "A", "1000", "1000", "0"]);
    assert!(text.contains(&format!("{p1} -> {p2}\n")), "{text}");
    assert!(text.contains(&format!("{p1} -> {p3}\n")), "{text}");
    assert_eq!(row("1 B ")[..5], ["1", "B", "500", "500", "0"]);
    assert_eq!(row(&p1)[2..], ["1500", "-", "-"]);
    assert_eq!(row(&p2)[2..], ["0", "1000", "0"]);
    assert_eq!(row(&p3)[2..], ["0", "500", "0"]);
    // Each leg's own report: its streams from p1 to its port.
    assert!(
        text.contains(&format!("Streams:     1 from {p1} to {p2} (")),
        "{text}"
    );
    assert!(
        text.contains(&format!("Streams:     1 from {p1} to {p3} (")),
        "{text}"
    );
    // Each says its interface's counters are its port's, every leg's.
    let shared = format!("\n  shared: {p1} sends to 2 ports, a leg each (this run one of them)");
    assert_eq!(text.matches(&shared).count(), 2, "{text}");

    // --json and --metrics-listen: one document, one endpoint, each leg labelled by its ports.
    let f = ConfigFile::new(&doc);
    let mut child = Served::spawn(
        &[
            "run",
            "--json",
            "--config",
            f.arg(),
            "--metrics-linger",
            "5s",
        ],
        40_000,
    );
    let t0 = std::time::Instant::now();
    let last = loop {
        let b = child.scrape_as("Accept: text/plain; version=0.0.4");
        if sample(&b, "upktgen_state{state=\"finished\"}") == Some(1.0) {
            break b;
        }
        child.still_running();
        assert!(t0.elapsed().as_secs() < 60, "never finished");
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    promtool_ok(&last);
    let a = "upktgen_stream_rx_frames_total{port=\"p1\",rx_port=\"p2\",stream=\"A\",id=\"0\"}";
    let b = "upktgen_stream_rx_frames_total{port=\"p1\",rx_port=\"p3\",stream=\"B\",id=\"1\"}";
    assert_eq!(
        (sample(&last, a), sample(&last, b)),
        (Some(1000.0), Some(500.0)),
        "{last}"
    );
    // Each leg's receiving interface is its own port's.
    for (legs, iface) in [("rx_port=\"p2\"", "b1"), ("rx_port=\"p3\"", "c1")] {
        let rx: Vec<&str> = last
            .lines()
            .filter(|l| {
                l.starts_with(&format!("upktgen_iface_packets_total{{port=\"p1\",{legs},"))
                    && l.contains("direction=\"rx\"")
            })
            .collect();
        let want = format!("iface=\"{iface}\",netns=\"{}\",", ns.0);
        assert!(rx.len() == 1 && rx[0].contains(&want), "{legs}: {rx:?}");
    }
    let o = child.wait();
    assert!(o.status.success(), "{}", stderr(&o));
    let j = json(&o);
    crate::common::schema::check(upktgen::schema::RUN_PORTS, &j, "one port to two, --json");
    for (i, name, rx, sent) in [(0, "A", &p2, 1000), (1, "B", &p3, 500)] {
        let fl = &j["flows"][i];
        assert_eq!(
            (&fl["name"], &fl["tx_port"], &fl["rx_port"]),
            (&json!(name), &json!(p1), &json!(rx)),
            "{fl}"
        );
        assert_eq!(
            (&fl["tx_frames"], &fl["rx_frames"], &fl["lost"]),
            (&json!(sent), &json!(sent), &json!(0)),
            "{fl}"
        );
        let run = &j["runs"][i];
        assert_eq!(
            (&run["tx_port"], &run["rx_port"]),
            (&json!(p1), &json!(rx)),
            "{run}"
        );
        assert_eq!(run["unexpected"], 0, "{run}");
        assert_eq!(run["report"]["outcome"]["result"]["sent"], sent, "{run}");
    }
    // A port's sent is the sum over its legs.
    let legs_sent: u64 = j["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["report"]["outcome"]["result"]["sent"].as_u64().unwrap())
        .sum();
    let port = |name: &str| {
        j["ports"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["port"] == name)
            .unwrap_or_else(|| panic!("no port {name} in {j}"))
            .clone()
    };
    assert_eq!(port(&p1)["tx_frames"], legs_sent);
    assert_eq!(legs_sent, 1500);
    for (p, got) in [(&p2, 1000), (&p3, 500)] {
        let r = port(p);
        assert_eq!(
            (&r["tx_frames"], &r["rx_frames"], &r["unexpected"]),
            (&json!(0), &json!(got), &json!(0)),
            "{r}"
        );
    }
    assert_eq!(
        (
            &j["totals"]["tx_frames"],
            &j["totals"]["rx_frames"],
            &j["totals"]["unexpected"]
        ),
        (&json!(1500), &json!(1500), &json!(0))
    );

    // af_xdp: a1 has queues enough, one for each leg's socket.
    let j = run_json(&["--config", f.arg(), "--backend", "af_xdp"]);
    for (i, sent) in [(0, 1000), (1, 500)] {
        let fl = &j["flows"][i];
        assert_eq!(
            (&fl["tx_frames"], &fl["rx_frames"]),
            (&json!(sent), &json!(sent)),
            "{fl}"
        );
        let report = &j["runs"][i]["report"];
        assert_eq!(report["backend"]["name"], "af_xdp", "{report}");
        let detail = report["backend"]["detail"].as_str().unwrap_or_default();
        assert!(detail.contains(&format!("queue {i},")), "leg {i}: {detail}");
        assert_eq!(j["runs"][i]["unexpected"], 0);
    }
    assert_eq!(port(&p1)["tx_frames"], 1500);

    // From b1 (one queue) to the two others: refused before anything is sent.
    let mut back = doc.clone();
    back["flows"][0]["tx_rx"]["port"] = json!({"tx_name": "p2", "rx_names": ["p1"]});
    back["flows"][1]["tx_rx"]["port"] = json!({"tx_name": "p2", "rx_names": ["p3"]});
    let g = ConfigFile::new(&back);
    let o = upktgen(&["run", "--config", g.arg(), "--backend", "af_xdp"]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(
        e.contains(&format!(
            "--backend af_xdp: port \"p2\" sends to 2 ports from {}",
            ns.port("b1")
        )) && e.contains("and the interface has 1: "),
        "{e}"
    );
    assert!(o.stdout.is_empty());
}

/// [`one_port_sending_to_two_each_flow_received_at_its_port`]'s bridge, four flows (two to
/// p2, two to p3), sent with `-t 2` from af_xdp (each leg two senders, four in all on p1's
/// four queues: leg 0's bound to queues 0 and 1, leg 1's to 2 and 3) and from xdp_live
/// (the bridge's end of p1's pair given NAPI by GRO, as xdp_live needs on a veth): each flow
/// received as sent at its port, nothing unexpected, p1's sent the sum of its legs'.
fn one_port_sending_to_two_on_queues_of_its_own_and_from_xdp_live() {
    if !live_frames_or_skip() || !crate::harness::tool_or_skip("ethtool", "apt-get install ethtool")
    {
        return;
    }
    let ns = fan_out_bridge("o2mq");
    let udp = |dst: &str| udp_to(Some(&fan_out_mac("a")), dst);
    // (name, receiving port, its MAC, pps)
    let four = [
        ("A0", "p2", "b", 1_000),
        ("B0", "p3", "c", 500),
        ("A1", "p2", "b", 800),
        ("B1", "p3", "c", 300),
    ];
    let flows: Vec<Value> = four
        .iter()
        .map(|&(name, rx, mac, pps)| {
            let mut f = flow(
                name,
                udp(&fan_out_mac(mac)),
                json!({"choice": "fixed", "fixed": 128}),
                pps,
                1.0,
            );
            f["tx_rx"]["port"] = json!({"tx_name": "p1", "rx_names": [rx]});
            f
        })
        .collect();
    let mut doc = config(flows);
    doc["ports"] = json!([
        {"name": "p1", "location": ns.port("a1")},
        {"name": "p2", "location": ns.port("b1")},
        {"name": "p3", "location": ns.port("c1")}
    ]);
    let f = ConfigFile::new(&doc);
    let p1 = format!("p1 ({})", ns.port("a1"));
    let each_as_sent = |j: &Value, what: &str| {
        for (i, &(_, _, _, pps)) in four.iter().enumerate() {
            let fl = &j["flows"][i];
            assert_eq!(
                (&fl["tx_frames"], &fl["rx_frames"], &fl["lost"]),
                (&json!(pps), &json!(pps), &json!(0)),
                "{what}: {fl}"
            );
        }
        for r in j["runs"].as_array().unwrap() {
            assert_eq!(r["unexpected"], 0, "{what}: {}", r["rx_port"]);
        }
        let p = j["ports"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["port"] == p1.as_str())
            .unwrap();
        assert_eq!(p["tx_frames"], 2_600, "{what}: {p}");
    };
    let j = run_json(&[
        "--config",
        f.arg(),
        "--backend",
        "af_xdp",
        "-t",
        "2",
        "--allow-oversubscribe",
    ]);
    each_as_sent(&j, "af_xdp -t 2");
    for (leg, run) in j["runs"].as_array().unwrap().iter().enumerate() {
        let t = run["report"]["threads"].as_array().unwrap();
        assert_eq!(t.len(), 2, "leg {leg}: {t:?}");
        for (k, th) in t.iter().enumerate() {
            let d = th["detail"].as_str().unwrap();
            assert!(
                d.contains(&format!("queue {},", 2 * leg + k)),
                "leg {leg} sender {k}: {d}"
            );
        }
    }
    // xdp_live on a veth needs NAPI at its peer: GRO on p1's pair's bridge end.
    let o = std::process::Command::new("ip")
        .args(["netns", "exec", &ns.0, "ethtool", "-K", "a2", "gro", "on"])
        .output()
        .unwrap();
    assert!(o.status.success(), "ethtool -K a2 gro on: {}", stderr(&o));
    let j = run_json(&["--config", f.arg(), "--backend", "xdp_live"]);
    each_as_sent(&j, "xdp_live");
    for run in j["runs"].as_array().unwrap() {
        assert_eq!(run["report"]["backend"]["name"], "xdp_live");
    }
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
    to_far_end(&mut doc, &h);
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

/// 16 flows through a DUT whose nftables rule drops every fourth frame of flow f5 (its UDP
/// port): the live lines (`--json-lines`) show f5 first among the bounded few, with its
/// holes, while it runs and at the end, every other flow with none; the metrics endpoint
/// (promtool-checked) labels each flow, f5's holes equal to the rule's drops, the receiver's
/// report the same.
fn live_lines_and_metrics_show_the_stream_that_loses() {
    use crate::common::live_lines;
    use crate::metrics::{promtool_ok, tools_or_skip, value as sample};
    if !root_or_skip() || !nft::nft_or_skip() || !tools_or_skip() {
        return;
    }
    let (f, setup) = dut_flows(16, 500, 3.0, "20005 numgen inc mod 4 0 counter drop");
    // On the host's loopback: a port of this test's own (the run's lab is its own).
    let mut child = Served::spawn(
        &[
            "run",
            "--json",
            "--config",
            f.arg(),
            "--lab",
            "dut",
            "--dut-setup",
            &setup,
            "--json-lines",
            "--interval",
            "500ms",
            "--metrics-linger",
            "5s",
        ],
        20_000,
    );
    let t0 = std::time::Instant::now();
    let body = loop {
        let b = child.scrape_as("Accept: application/openmetrics-text; version=1.0.0");
        if sample(&b, "upktgen_state{state=\"finished\"}") == Some(1.0) {
            break b;
        }
        child.still_running();
        assert!(t0.elapsed().as_secs() < 60, "never finished");
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    // promtool reads the Prometheus text format (the same series).
    promtool_ok(&child.scrape_as("Accept: text/plain; version=0.0.4"));
    let o = child.wait();
    assert!(o.status.success(), "{}", stderr(&o));
    let j = json(&o);
    let lost5 = rx_stream(&j, 5)["lost"].as_u64().unwrap();
    // The rule drops frames 0, 4, 8, ... of f5's 1,500: 375 holes, the last frame received.
    assert_eq!(lost5, 375, "{}", rx_stream(&j, 5));
    assert_eq!(j["streams"]["streams"][5]["lost"], 375);
    let series =
        |fam: &str, i: usize| sample(&body, &format!("{fam}{{stream=\"f{i}\",id=\"{i}\"}}"));
    assert_eq!(
        series("upktgen_stream_lost_packets", 5),
        Some(375.0),
        "{body}"
    );
    for i in 0..16 {
        let rx = rx_stream(&j, i)["frames"].as_f64();
        assert_eq!(series("upktgen_stream_rx_frames_total", i), rx, "f{i}");
        if i != 5 {
            assert_eq!(series("upktgen_stream_lost_packets", i), Some(0.0), "f{i}");
        }
    }
    let count = sample(
        &body,
        "upktgen_stream_latency_seconds_count{stream=\"f0\",id=\"0\"}",
    );
    assert_eq!(count, Some(1500.0), "every frame of f0 timed");
    // The live lines: 8 of the 16 shown, f5 first once it lost; the final line's f5 is the
    // report's.
    let (last, lines) = live_lines(&o);
    let during: Vec<&Value> = lines
        .iter()
        .filter(|l| l["streams"]["all"]["rx_frames"].as_u64() > Some(100))
        .collect();
    assert!(
        !during.is_empty(),
        "no live line while the flows ran:\n{}",
        stderr(&o)
    );
    for l in during.iter().copied().chain([&last]) {
        let st = &l["streams"];
        assert_eq!(
            (st["count"].as_u64(), st["shown"].as_array().map(Vec::len)),
            (Some(16), Some(8)),
            "{l}"
        );
        assert_eq!(st["shown"][0]["name"], "f5", "{l}");
        assert!(st["shown"][0]["lost"].as_u64() > Some(0), "{l}");
        for s in &st["shown"].as_array().unwrap()[1..] {
            assert_eq!(s["lost"], 0, "{l}");
        }
    }
    assert_eq!(last["streams"]["shown"][0]["lost"], 375, "{last}");
    assert_eq!(
        last["streams"]["all"]["rx_frames"],
        16 * 1500 - 375,
        "{last}"
    );
    assert!(
        last["streams"]["all"]["latency_p99_ns"].as_u64() > Some(0),
        "{last}"
    );
}

/// 5,000 flows to a `netns:` far end, which counts them: the live lines show the far
/// receiver's streams while they run, read over the agent session in chunks (4,096 streams
/// an answer: two a reading). Every flow sends 8 frames in 2 s but f0, which sends 2 a
/// second for 5 s: once the others have ended, a line's streams have summed what the far
/// receiver read but for a few frames, the streams beyond the first chunk included (without
/// them 7,232 frames would be missing; while all flows run, a reading's first chunk may be
/// a whole round of frames behind its last: the flows send in step). The last line's
/// counts are the far end's report.
fn a_far_ends_streams_are_live_in_chunks() {
    use crate::common::hosts::{self, TwoHosts};
    use crate::common::live_lines;
    if !root_or_skip() {
        return;
    }
    let h = TwoHosts::new();
    let n = 5_000u32;
    let flows: Vec<Value> = (0..n)
        .map(|i| {
            flow(
                &format!("f{i}"),
                json!([
                    {"choice": "ethernet", "ethernet": {"dst": value(hosts::B_MAC)}},
                    {"choice": "ipv4", "ipv4": {"dst": value(&h.b_ip)}},
                    {"choice": "udp", "udp": {"dst_port": value(9)}}
                ]),
                json!({"choice": "fixed", "fixed": 64}),
                if i == 0 { 2 } else { 4 },
                if i == 0 { 5.0 } else { 2.0 },
            )
        })
        .collect();
    let mut doc = config(flows);
    to_far_end(&mut doc, &h);
    let f = ConfigFile::new(&doc);
    let o = h.in_a(&[
        env!("CARGO_BIN_EXE_upktgen"),
        "run",
        "--json",
        "--config",
        f.arg(),
        "--json-lines",
        "--interval",
        "500ms",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j = json(&o);
    // The far end's report came in two answers (rx.stop's 4,096 streams, rx.streams' 904).
    let summaries = j["rx_analysis"]["receiver"]["streams"]["streams"]
        .as_array()
        .unwrap();
    let ids: Vec<u64> = summaries
        .iter()
        .map(|s| s["id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids, (0..u64::from(n)).collect::<Vec<_>>());
    assert_eq!(
        j["streams"]["streams"][4999]["rx_frames"], 8,
        "{}",
        j["streams"]["streams"][4999]
    );
    let agg = &j["rx_analysis"]["receiver"]["streams"]["aggregate"];
    assert!(agg["frames"].as_u64() > Some(0), "{agg}");
    let (last, lines) = live_lines(&o);
    let (mut streams_rx, mut far_rx) = (0u64, 0u64);
    for l in &lines {
        if let Some(st) = l["streams"].as_object() {
            assert_eq!(st["count"], n, "{l}");
            assert_eq!(st["shown"].as_array().map(Vec::len), Some(8), "{l}");
            streams_rx += st["all"]["rx_frames"].as_u64().unwrap();
            far_rx += l["rx_packets"].as_u64().unwrap();
        }
    }
    assert!(
        far_rx > 0,
        "no far figures while the flows ran:\n{}",
        stderr(&o)
    );
    // The same readings, from the first line to the last but one (f0 alone then): equal
    // but for f0's frames between a reading's chunks and frames of no stream (none here).
    assert!(
        streams_rx.abs_diff(far_rx) <= 20,
        "the streams summed {streams_rx} of the {far_rx} frames the far end read"
    );
    let st = &last["streams"];
    assert_eq!(st["all"]["rx_frames"], agg["frames"], "{last}");
    assert_eq!(st["all"]["lost"], agg["lost"], "{last}");
    assert_eq!(st["count"], n);
}

/// Two flows from one sending port to a `netns:` far end (a veth pair in a namespace the
/// test made), with `--json-lines` and `--metrics-listen`: the far receiver's per-stream
/// latency reaches the controller with its live rows (`rx.stats`' buckets), as the lab's
/// receiver's does: every live line's stream with frames in its interval has a p50 and a
/// p99 above 0; a scrape while the flows run (promtool-checked) has each stream's latency
/// histogram counting; at the end the far interface's counters are labelled with its own
/// name and namespace (not the lab's `veth-rx`), and each histogram counts every frame of
/// its stream the far end timed.
fn a_far_ends_live_streams_have_their_latency_and_its_interface_its_name() {
    use crate::common::{VethNs, live_lines};
    use crate::metrics::{promtool_ok, tools_or_skip, value as sample};
    if !root_or_skip() || !tools_or_skip() {
        return;
    }
    let ns = VethNs::new("farlat");
    let udp = udp_to(None, "02:00:00:00:00:02");
    let mut doc = config(vec![
        flow(
            "fa",
            udp.clone(),
            json!({"choice": "fixed", "fixed": 128}),
            1_000,
            3.0,
        ),
        flow("fb", udp, json!({"choice": "fixed", "fixed": 64}), 500, 3.0),
    ]);
    doc["ports"] = json!([
        {"name": "p1", "location": ns.port("va")},
        {"name": "p2", "location": ns.port("vb")}
    ]);
    let f = ConfigFile::new(&doc);
    let mut child = Served::spawn(
        &[
            "run",
            "--json",
            "--config",
            f.arg(),
            "--json-lines",
            "--interval",
            "500ms",
            "--metrics-linger",
            "5s",
        ],
        40_000,
    );
    let open_metrics = "Accept: application/openmetrics-text; version=1.0.0";
    let prom_text = "Accept: text/plain; version=0.0.4";
    let count = |i: usize, name: &str| {
        format!("upktgen_stream_latency_seconds_count{{stream=\"{name}\",id=\"{i}\"}}")
    };
    let t0 = std::time::Instant::now();
    let mut during = None;
    let last = loop {
        let b = child.scrape_as(open_metrics);
        if sample(&b, "upktgen_state{state=\"finished\"}") == Some(1.0) {
            break b;
        }
        if during.is_none()
            && sample(&b, "upktgen_state{state=\"running\"}") == Some(1.0)
            && sample(&b, &count(0, "fa")) > Some(0.0)
            && sample(&b, &count(1, "fb")) > Some(0.0)
        {
            let text = child.scrape_as(prom_text);
            promtool_ok(&text);
            during = Some(text);
        }
        child.still_running();
        assert!(t0.elapsed().as_secs() < 60, "never finished");
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let during = during.expect("no scrape while the far end's streams' latency counted");
    // While it ran: each stream's histogram had buckets and a sum, as the lab's has.
    for (i, name) in [(0, "fa"), (1, "fb")] {
        let n = sample(&during, &count(i, name)).unwrap();
        let le = format!(
            "upktgen_stream_latency_seconds_bucket{{stream=\"{name}\",id=\"{i}\",le=\"+Inf\"}}"
        );
        assert_eq!(sample(&during, &le), Some(n), "{during}");
        let sum = format!("upktgen_stream_latency_seconds_sum{{stream=\"{name}\",id=\"{i}\"}}");
        assert!(sample(&during, &sum) > Some(0.0), "{during}");
    }
    promtool_ok(&child.scrape_as(prom_text));
    // The far interface's counters at the end: its own name and namespace.
    let rx: Vec<&str> = last
        .lines()
        .filter(|l| l.starts_with("upktgen_iface_packets_total{") && l.contains("direction=\"rx\""))
        .collect();
    let want = format!("{{iface=\"vb\",netns=\"{}\",direction=\"rx\"}}", ns.0);
    assert!(rx.len() == 1 && rx[0].contains(&want), "{rx:?}");
    assert!(!last.contains("veth-rx"), "{last}");
    let o = child.wait();
    assert!(o.status.success(), "{}", stderr(&o));
    let j = json(&o);
    assert_eq!(j["peer"]["dev"], "vb", "{}", j["peer"]);
    assert_eq!(
        sample(&last, &format!("upktgen_iface_packets_total{want}")),
        j["rx_iface"]["rx_packets"].as_f64()
    );
    for (i, name) in [(0, "fa"), (1, "fb")] {
        let timed = rx_stream(&j, i)["latency"]["count"].as_f64();
        assert!(timed > Some(0.0), "{}", rx_stream(&j, i));
        // The last reading's buckets: every frame the far end timed but those after it.
        let n = sample(&last, &count(i, name)).unwrap();
        assert!(Some(n) <= timed && n > 0.0, "{name}: {n} of {timed:?}");
    }
    // The live lines: every stream with frames in an interval has its latency.
    let (_, lines) = live_lines(&o);
    let mut timed = 0;
    for l in &lines {
        for s in l["streams"]["shown"].as_array().into_iter().flatten() {
            if s["rx_frames"].as_u64() > Some(0) {
                assert!(s["latency_p50_ns"].as_u64() > Some(0), "{l}");
                assert!(
                    s["latency_p99_ns"].as_u64() >= s["latency_p50_ns"].as_u64(),
                    "{l}"
                );
                timed += 1;
            }
        }
    }
    assert!(
        timed >= 2,
        "no live line with a far stream's frames:\n{}",
        stderr(&o)
    );
}

/// The conformance suite's way: a `layer1` speed, and a flow's rate in percent of it.
fn a_percentage_of_the_layer1_speed_is_sent_at_that_rate() {
    if !root_or_skip() {
        return;
    }
    let mut f = flow(
        "pct",
        json!([{"choice": "ethernet", "ethernet": {}}, {"choice": "ipv4", "ipv4": {}}, {"choice": "udp", "udp": {}}]),
        json!({"choice": "fixed", "fixed": 64}),
        0,
        3.0,
    );
    f["rate"] = json!({"choice": "percentage", "percentage": 0.2});
    let mut c = config(vec![f]);
    c["layer1"] = json!([{"name": "ly", "port_names": ["p1", "p2"], "speed": "speed_1_gbps", "mtu": 1500, "promiscuous": true}]);
    let file = ConfigFile::new(&c);
    let j = run_json(&["--config", file.arg()]);
    // 0.2 % of 10^9 bit/s in 64-byte frames, 84 bytes each on the wire with preamble and
    // gap: 2,976.19 frames a second, for 3 s.
    let pps: f64 = 2e6 / (84.0 * 8.0);
    let s = &j["streams"]["streams"][0];
    let tx = s["tx_frames"].as_u64().unwrap();
    assert_eq!(tx, (3.0 * pps).ceil() as u64, "{s}");
    assert_eq!(s["rx_frames"], tx, "{s}");
    let r = rx_stream(&j, 0);
    let span_s =
        (r["last_rx_ns"].as_u64().unwrap() - r["first_rx_ns"].as_u64().unwrap()) as f64 / 1e9;
    let rate = (r["frames"].as_u64().unwrap() - 1) as f64 / span_s;
    assert!(
        (rate / pps - 1.0).abs() < 0.01,
        "{rate:.1} pps received, {pps:.1} asked"
    );
}

/// With no `layer1` speed, a percentage is of the speed the sending interface's driver
/// reports (a veth says 10 Gb/s; asked inside the namespace of a `netns:` port), and the run
/// says so.
fn a_percentage_of_the_interfaces_speed_is_sent_at_that_rate() {
    use crate::common::VethNs;
    if !root_or_skip() {
        return;
    }
    let ns = VethNs::new("pctif");
    let packet = udp_to(None, "02:00:00:00:00:02");
    let mut f = flow(
        "pct",
        packet,
        json!({"choice": "fixed", "fixed": 64}),
        0,
        2.0,
    );
    f["rate"] = json!({"choice": "percentage", "percentage": 0.02});
    let mut doc = config(vec![f]);
    doc["ports"] = json!([
        {"name": "p1", "location": ns.port("va")},
        {"name": "p2", "location": ns.port("vb")}
    ]);
    let file = ConfigFile::new(&doc);
    let o = upktgen(&["run", "--config", file.arg(), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains(
            "port \"p1\": percentages are of 10000 Mb/s, the speed its driver reports (the config has no layer1 speed for it)"
        ),
        "{e}"
    );
    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
    // 0.02 % of 10^10 bit/s in 64-byte frames (84 bytes on the wire): 2,976.19 a second.
    let pps: f64 = 2e6 / (84.0 * 8.0);
    let s = &j["streams"]["streams"][0];
    let tx = s["tx_frames"].as_u64().unwrap();
    assert_eq!(tx, (2.0 * pps).ceil() as u64, "{s}");
    assert_eq!(s["rx_frames"], tx, "{s}");
}

/// `-t 2 --backend af_xdp` on an interface of one TX queue: refused in one line that says
/// why (each AF_XDP socket binds a queue of its own) before anything is set up, where the
/// second socket failed with EBUSY before; af_packet shares the queue and sends.
fn af_xdp_threads_beyond_the_interfaces_queues_are_refused_saying_why() {
    use crate::common::VethNs;
    if !root_or_skip() {
        return;
    }
    let ns = VethNs::new("xq");
    let packet = udp_to(None, "02:00:00:00:00:02");
    let flows = (0..3)
        .map(|i| {
            let mut f = flow(
                &format!("f{i}"),
                packet.clone(),
                json!({"choice": "fixed", "fixed": 64}),
                1_000,
                1.0,
            );
            f["duration"] = json!({"choice": "fixed_packets", "fixed_packets": {"packets": 100}});
            f
        })
        .collect();
    let mut doc = config(flows);
    doc["ports"] = json!([
        {"name": "p1", "location": ns.port("va")},
        {"name": "p2", "location": ns.port("vb")}
    ]);
    let file = ConfigFile::new(&doc);
    let o = upktgen(&[
        "run",
        "--config",
        file.arg(),
        "-t",
        "2",
        "--backend",
        "af_xdp",
        "--no-live",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("--backend af_xdp: 2 senders on va, which has 1 TX queue: an AF_XDP socket binds a queue of its own"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "one line: {e}");
    let o = upktgen(&[
        "run",
        "--config",
        file.arg(),
        "-t",
        "2",
        "--backend",
        "af_packet",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
    for i in 0..3 {
        assert_eq!(
            j["streams"]["streams"][i]["rx_frames"], 100,
            "{}",
            j["streams"]
        );
    }
}

/// Eight flows of unlike rates (and sizes) for the queues' tests: flow `i` at `PPS8[i]`.
const PPS8: [u64; 8] = [500, 1500, 2500, 4000, 6000, 9000, 3000, 7000];

/// How `-t 2` splits [`PPS8`] (largest first onto the least-loaded queue): 9000 → q0,
/// 7000 → q1, 6000 → q1, 4000 → q0, 3000 → q0 (13,000 each: the lowest), 2500 → q1, 1500
/// → q1, 500 → q0.
const QUEUES8: [&[usize]; 2] = [&[0, 3, 5, 6], &[1, 2, 4, 7]];

fn eight_flows(seconds: f64) -> Value {
    config(
        PPS8.iter()
            .enumerate()
            .map(|(i, &pps)| {
                flow(
                    &format!("f{i}_{pps}"),
                    json!([
                        {"choice": "ethernet", "ethernet": {}},
                        {"choice": "ipv4", "ipv4": {"dst": value("198.18.1.1")}},
                        {"choice": "udp", "udp": {"src_port": value(2000 + i)}}
                    ]),
                    json!({"choice": "fixed", "fixed": 64 + 32 * i}),
                    pps,
                    seconds,
                )
            })
            .collect(),
    )
}

/// `run --config -t 2`: the port's flows on two transmit queues, each a sender thread with
/// its own socket and timeline, on af_packet and af_xdp (each thread bound to its queue):
/// every flow received as sent, none reordered, each at its rate within 1 %; both
/// senders sent, each exactly its queue's flows (the split above), on a CPU of its own;
/// the text report lists the queues.
fn flows_on_two_queues_each_arrive_as_sent_at_its_rate() {
    if !root_or_skip() {
        return;
    }
    if upktgen::sys::allowed_cpus().len() < 2 {
        crate::harness::skip("needs 2 CPUs for -t 2 (one per sender)");
        return;
    }
    let f = ConfigFile::new(&eight_flows(QUEUES_SECONDS as f64));
    for backend in ["af_packet", "af_xdp"] {
        eight_flows_on_two_queues(&f, backend);
    }
    // The text report lists the queues: each one's sender, streams, rate, frames and ids.
    let short = ConfigFile::new(&eight_flows(1.0));
    let o = upktgen(&["run", "--config", short.arg(), "-t", "2", "--no-live"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(text.contains("\nQueues:      2 ("), "{text}");
    for (k, q) in QUEUES8.iter().enumerate() {
        let pps: u64 = q.iter().map(|&i| PPS8[i]).sum();
        let ids: Vec<String> = q.iter().map(|i| i.to_string()).collect();
        let table = &text[text.find("\nQueues:").unwrap()..];
        let row: Vec<String> = table
            .lines()
            .find(|l| l.starts_with(&format!("  veth-tx@{k} ")))
            .unwrap_or_else(|| panic!("no queue {k} in {table}"))
            .split_whitespace()
            .map(str::to_string)
            .collect();
        assert_eq!(
            row,
            [
                format!("veth-tx@{k}"),
                "4".to_string(),
                format!("{pps}.0"),
                pps.to_string(),
            ]
            .into_iter()
            .chain(ids)
            .collect::<Vec<_>>(),
            "{text}"
        );
    }
}

/// How long the queues' tests send.
const QUEUES_SECONDS: u64 = 3;

/// [`eight_flows`] in `f` sent with `-t 2` from `backend`: each flow received as sent at
/// its rate, each sender its queue's flows.
fn eight_flows_on_two_queues(f: &ConfigFile, backend: &str) {
    const SECONDS: u64 = QUEUES_SECONDS;
    let j = run_json(&["--config", f.arg(), "-t", "2", "--backend", backend]);
    let st = &j["streams"]["streams"];
    for (i, &pps) in PPS8.iter().enumerate() {
        let s = &st[i];
        assert_eq!(s["tx_frames"], pps * SECONDS, "{backend}: {s}");
        assert_eq!(s["rx_frames"], s["tx_frames"], "{backend}: {s}");
        assert_eq!(s["lost"], 0, "{backend}: {s}");
        let r = rx_stream(&j, i);
        assert_eq!(r["duplicates"], 0, "{backend}: {r}");
        assert_eq!(r["reordered"], 0, "{backend}: {r}");
        let span_s =
            (r["last_rx_ns"].as_u64().unwrap() - r["first_rx_ns"].as_u64().unwrap()) as f64 / 1e9;
        let rate = (r["frames"].as_u64().unwrap() - 1) as f64 / span_s;
        assert!(
            (rate / pps as f64 - 1.0).abs() < 0.01,
            "{backend}: flow {i}: {rate:.1} pps received, {pps} asked"
        );
    }
    // Two senders, each its queue's flows: its frames are theirs, its bytes theirs.
    let t = j["threads"].as_array().unwrap();
    assert_eq!(t.len(), 2, "{backend}: {t:?}");
    for (k, q) in QUEUES8.iter().enumerate() {
        assert_eq!(t[k]["device"], format!("veth-tx@{k}"), "{backend}");
        assert_eq!(t[k]["backend"], backend, "{backend}");
        let r = &t[k]["outcome"]["result"];
        let frames: u64 = q.iter().map(|&i| PPS8[i] * SECONDS).sum();
        let bytes: u64 = q.iter().map(|&i| st[i]["tx_bytes"].as_u64().unwrap()).sum();
        assert_eq!(r["sent"], frames, "{backend}: sender {k}: {r}");
        assert_eq!(r["imix_bytes"], bytes, "{backend}: sender {k}: {r}");
        // pktgen's per-thread accounting: each on its own CPU, its own time and idle.
        assert_eq!(t[k]["cpu"], upktgen::sys::allowed_cpus()[k], "{backend}");
        let (elapsed, idle) = (r["elapsed_ns"].as_u64(), r["idle_ns"].as_u64());
        assert!(elapsed > Some(0) && idle <= elapsed, "{backend}: {r}");
    }
    if backend == "af_xdp" {
        for (k, th) in t.iter().enumerate() {
            let d = th["detail"].as_str().unwrap();
            assert!(d.contains(&format!("queue {k},")), "{d}");
        }
    }
    // The run's Result adds up both senders' frames, all of them delivered.
    let sent: u64 = PPS8.iter().map(|p| p * SECONDS).sum();
    assert_eq!(j["outcome"]["result"]["sent"], sent, "{backend}");
    assert_eq!(j["reconciliation"]["rx_packets"], sent, "{backend}");
}

/// [`flows_on_two_queues_each_arrive_as_sent_at_its_rate`] from xdp_live: each sender's
/// own program run, its own slots.
fn flows_on_two_queues_through_xdp_live_arrive_as_sent() {
    if !live_frames_or_skip() {
        return;
    }
    if upktgen::sys::allowed_cpus().len() < 2 {
        crate::harness::skip("needs 2 CPUs for -t 2 (one per sender)");
        return;
    }
    let f = ConfigFile::new(&eight_flows(QUEUES_SECONDS as f64));
    eight_flows_on_two_queues(&f, "xdp_live");
}

/// Flows both ways between the lab's ends with `-t 2` on af_xdp (four threads: with
/// --allow-oversubscribe on two CPUs): each end's flows on two queues, each sender bound to a queue of its own (the lab made with two each way, each
/// end's queues asked of its driver inside its namespace): every flow received as sent,
/// each port's text listing its two queues.
fn flows_both_ways_in_the_lab_on_two_queues_each_arrive_as_sent() {
    use crate::common::namespaces_with_prefix;
    if !root_or_skip() {
        return;
    }
    if upktgen::sys::allowed_cpus().len() < 2 {
        crate::harness::skip("needs 2 CPUs for -t 2 (one per sender)");
        return;
    }
    let eth = json!([{"choice": "ethernet", "ethernet": {}}, {"choice": "ipv4", "ipv4": {}}, {"choice": "udp", "udp": {}}]);
    let size = json!({"choice": "fixed", "fixed": 128});
    let mut flows: Vec<Value> = [("ab0", 3_000), ("ab1", 1_000), ("ba0", 2_000), ("ba1", 500)]
        .iter()
        .map(|&(name, pps)| flow(name, eth.clone(), size.clone(), pps, 1.0))
        .collect();
    for f in &mut flows[2..] {
        f["tx_rx"]["port"] = json!({"tx_name": "p2", "rx_names": ["p1"]});
    }
    let f = ConfigFile::new(&config(flows));
    let (pid, o) = crate::common::upktgen_with_pid(&[
        "run",
        "--config",
        f.arg(),
        "-t",
        "2",
        "--backend",
        "af_xdp",
        "--no-live",
        // Two ports of two threads on this VM's two CPUs.
        "--allow-oversubscribe",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = crate::common::stdout(&o);
    let row = |start: &str| table_row(&text, start);
    assert_eq!(row("0 ab0 ")[..5], ["0", "ab0", "3000", "3000", "0"]);
    assert_eq!(row("1 ab1 ")[..5], ["1", "ab1", "1000", "1000", "0"]);
    assert_eq!(row("2 ba0 ")[..5], ["2", "ba0", "2000", "2000", "0"]);
    assert_eq!(row("3 ba1 ")[..5], ["3", "ba1", "500", "500", "0"]);
    assert_eq!(text.matches("\nQueues:      2 (").count(), 2, "{text}");
    for (dev, q) in [
        ("veth-tx", [("0", "3000", "0"), ("1", "1000", "1")]),
        ("veth-rx", [("0", "2000", "2"), ("1", "500", "3")]),
    ] {
        for (k, sent, id) in q {
            let line = format!("  {dev}@{k} ");
            let r: Vec<&str> = text
                .lines()
                .find(|l| l.starts_with(&line) && !l.contains("Result"))
                .unwrap_or_else(|| panic!("no queue {line:?} in {text}"))
                .split_whitespace()
                .collect();
            assert_eq!(r[1..], ["1", &format!("{sent}.0"), sent, id], "{text}");
        }
        // Each sender bound its own queue.
        for k in ["0", "1"] {
            assert!(
                text.lines()
                    .any(|l| l.starts_with(&format!("  {dev}@{k} on CPU "))
                        && l.contains(": Result: OK")),
                "{text}"
            );
        }
    }
    assert!(namespaces_with_prefix(&format!("upktgen-{pid}-")).is_empty());
}

/// The OTG server's way in with `upktgen otg -t 2` (`run::streams::launch_on`): three flows
/// on two queues, each flow's progress and final figures its own, the text listing the
/// queues.
fn a_launched_config_on_two_queues_shows_each_flows_figures() {
    if !root_or_skip() {
        return;
    }
    if upktgen::sys::allowed_cpus().len() < 2 {
        crate::harness::skip("needs 2 CPUs for -t 2 (one per sender)");
        return;
    }
    let eth = json!([{"choice": "ethernet", "ethernet": {}}, {"choice": "ipv4", "ipv4": {}}, {"choice": "udp", "udp": {}}]);
    let size = json!({"choice": "fixed", "fixed": 128});
    let doc = config(
        [("a", 3_000), ("b", 1_000), ("c", 2_000)]
            .iter()
            .map(|&(n, pps)| flow(n, eth.clone(), size.clone(), pps, 1.0))
            .collect(),
    );
    let cfg = upktgen::otg::Config::from_value(&doc).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let queues = upktgen::run::streams::Queues {
        threads: 2,
        oversubscribe: false,
    };
    let l = upktgen::run::streams::launch_on(&cfg, stop, queues).unwrap();
    while !l.finished() {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let got: Vec<(String, u64, u64)> = l
        .progress()
        .into_iter()
        .map(|p| (p.name, p.tx_frames, p.rx_frames))
        .collect();
    assert_eq!(
        got,
        [
            ("a".to_string(), 3_000, 3_000),
            ("b".to_string(), 1_000, 1_000),
            ("c".to_string(), 2_000, 2_000)
        ]
    );
    let out = l.wait().unwrap();
    for (f, n) in out.flows.iter().zip([3_000, 1_000, 2_000]) {
        assert_eq!((f.tx_frames, f.rx_frames, f.lost), (n, n, 0), "{f:?}");
        assert_eq!(f.tx_bytes, n * 124, "{f:?}");
    }
    assert_eq!(out.ports[0].tx_frames, 6_000);
    // a alone on one queue, b and c on the other.
    assert!(out.text.contains("\nQueues:      2 ("), "{}", out.text);
    assert!(
        out.text
            .contains("  veth-tx@0              1       3000.0         3000  0\n")
            && out
                .text
                .contains("  veth-tx@1              2       3000.0         3000  1 2\n"),
        "{}",
        out.text
    );
}

pub(crate) const TESTS: &[crate::harness::Test] = crate::tests_alone![
    flows_on_two_queues_each_arrive_as_sent_at_its_rate,
    flows_on_two_queues_through_xdp_live_arrive_as_sent,
    a_percentage_of_the_layer1_speed_is_sent_at_that_rate,
    a_percentage_of_the_interfaces_speed_is_sent_at_that_rate,
    af_xdp_threads_beyond_the_interfaces_queues_are_refused_saying_why,
    three_flows_in_the_lab_arrive_as_sent_each_at_its_rate,
    three_flows_through_xdp_live_arrive_as_sent_each_at_its_rate,
    the_same_flows_cross_a_device_under_test,
    one_flow_of_1024_dropped_by_a_rule_loses_what_the_rule_counted,
    a_config_is_refused_before_anything_is_sent,
    three_flows_to_a_netns_peer_decode_with_their_headers,
    a_launched_config_shows_its_progress_then_its_figures,
    a_launched_config_on_two_queues_shows_each_flows_figures,
    flows_both_ways_between_two_ports_each_arrive_as_sent,
    flows_both_ways_make_one_json_document_and_one_metrics_endpoint,
    flows_both_ways_in_the_lab_each_arrive_as_sent,
    flows_both_ways_in_the_lab_on_two_queues_each_arrive_as_sent,
    two_ports_into_one_each_flow_counted_and_floods_unexpected,
    one_port_sending_to_two_each_flow_received_at_its_port,
    one_port_sending_to_two_on_queues_of_its_own_and_from_xdp_live,
    stream_names_too_long_for_the_far_end_are_refused_before_anything_is_sent,
    live_lines_and_metrics_show_the_stream_that_loses,
    a_far_ends_streams_are_live_in_chunks,
    a_far_ends_live_streams_have_their_latency_and_its_interface_its_name,
];
