//! The server on loopback with the fake engine on a manual clock: each test decides when
//! time passes, so every count is exact. The client is a few lines of HTTP/1.1 over a
//! socket (one request per connection).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::capture::Buffer;
use super::capture::live::{Capturer, Tap};
use super::fake::{FakeEngine, ManualClock};
use super::*;
use crate::otg::Location;

/// A capture that holds three frames as soon as it starts.
struct FakeCapturer;

struct FakeTap;

impl Tap for FakeTap {
    fn stop(self: Box<Self>) {}
}

impl Capturer for FakeCapturer {
    fn start(&self, loc: &Location, buf: Arc<Mutex<Buffer>>) -> anyhow::Result<Box<dyn Tap>> {
        if loc.iface() == "gone" {
            anyhow::bail!("gone: no such interface");
        }
        let mut b = buf.lock().unwrap();
        for i in 0..3u8 {
            b.push(1_000 + u64::from(i), &[i; 60]);
        }
        Ok(Box::new(FakeTap))
    }
}

struct T {
    run: Option<Running>,
    clock: Arc<ManualClock>,
    engine: Arc<FakeEngine>,
}

impl Drop for T {
    fn drop(&mut self) {
        if let Some(r) = self.run.take() {
            r.stop();
        }
    }
}

fn server_with(opts: Options) -> T {
    server_on(opts, None)
}

/// A server whose launches go to the fake engine, or to `engine` when given (the fake then
/// only counts what reaches it).
fn server_on(opts: Options, engine: Option<Arc<dyn super::engine::Engine>>) -> T {
    let clock = Arc::new(ManualClock::default());
    let fake = Arc::new(FakeEngine::new(clock.clone()));
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let run = serve(
        l,
        engine.unwrap_or_else(|| fake.clone()),
        Arc::new(FakeCapturer),
        clock.clone(),
        opts,
        limits(),
    )
    .unwrap();
    T {
        run: Some(run),
        clock,
        engine: fake,
    }
}

fn opts() -> Options {
    Options {
        allow: Allow(vec![
            "netns:lab-*/*".parse().unwrap(),
            "veth*".parse().unwrap(),
        ]),
        tick: Duration::from_millis(2),
        ..Options::default()
    }
}

fn server() -> T {
    server_with(opts())
}

impl T {
    fn addr(&self) -> SocketAddr {
        self.run.as_ref().unwrap().addr()
    }

    fn raw(&self, method: &str, path: &str, body: &[u8]) -> (u16, Vec<u8>) {
        let mut s = TcpStream::connect(self.addr()).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        s.write_all(head.as_bytes()).unwrap();
        let _ = s.write_all(body);
        let mut r = Vec::new();
        let _ = s.read_to_end(&mut r);
        let end = r
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("an answer")
            + 4;
        let status = String::from_utf8_lossy(&r[..end])
            .split(' ')
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
        (status, r[end..].to_vec())
    }

    fn call(&self, method: &str, path: &str, body: Value) -> (u16, Value) {
        let b = if body.is_null() {
            Vec::new()
        } else {
            serde_json::to_vec(&body).unwrap()
        };
        let (st, out) = self.raw(method, path, &b);
        (st, serde_json::from_slice(&out).unwrap_or(Value::Null))
    }

    fn ok(&self, method: &str, path: &str, body: Value) -> Value {
        let (st, v) = self.call(method, path, body);
        assert_eq!(st, 200, "{method} {path}: {v}");
        v
    }

    fn transmit(&self, state: &str) -> (u16, Value) {
        self.call(
            "POST",
            "/control/state",
            json!({"choice": "traffic", "traffic": {"choice": "flow_transmit", "flow_transmit": {"state": state}}}),
        )
    }

    fn flows(&self) -> Vec<Value> {
        let v = self.ok("POST", "/monitor/metrics", json!({"choice": "flow"}));
        assert_eq!(v["choice"], "flow_metrics");
        v["flow_metrics"].as_array().unwrap().clone()
    }

    fn ports(&self) -> Vec<Value> {
        let v = self.ok(
            "POST",
            "/monitor/metrics",
            json!({"choice": "port", "port": {}}),
        );
        v["port_metrics"].as_array().unwrap().clone()
    }

    /// Polls flow metrics until `pred` holds (the supervisor samples every 2 ms).
    fn until(&self, what: &str, pred: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let t0 = Instant::now();
        loop {
            let f = self.flows();
            if pred(&f) {
                return f;
            }
            assert!(t0.elapsed() < Duration::from_secs(10), "{what}: {f:?}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn advance_s(&self, s: f64) {
        self.clock.advance((s * 1e9) as u64);
    }
}

/// Two flows from p1 to p2: 1,000 frames at 1,000 pps of 128 bytes, and continuous 500 pps
/// of 256 bytes unless `endless` is false (then 500 frames).
fn config(endless: bool) -> Value {
    let second = if endless {
        json!({"choice": "continuous", "continuous": {}})
    } else {
        json!({"choice": "fixed_packets", "fixed_packets": {"packets": 500}})
    };
    json!({
        "ports": [
            {"name": "p1", "location": "veth-tx"},
            {"name": "p2", "location": "netns:lab-rx/veth-rx"},
        ],
        "flows": [
            {
                "name": "f1",
                "tx_rx": {"choice": "port", "port": {"tx_name": "p1", "rx_names": ["p2"]}},
                "packet": [{"choice": "ethernet", "ethernet": {}}, {"choice": "ipv4", "ipv4": {}}, {"choice": "udp", "udp": {}}],
                "size": {"choice": "fixed", "fixed": 128},
                "rate": {"choice": "pps", "pps": 1000},
                "duration": {"choice": "fixed_packets", "fixed_packets": {"packets": 1000}},
                "metrics": {"enable": true, "loss": true, "timestamps": true, "latency": {"enable": true}},
            },
            {
                "name": "f2",
                "tx_rx": {"choice": "port", "port": {"tx_name": "p1", "rx_names": ["p2"]}},
                "size": {"choice": "fixed", "fixed": 256},
                "rate": {"choice": "pps", "pps": 500},
                "duration": second,
            },
        ],
        "captures": [{"name": "c2", "port_names": ["p2"]}],
    })
}

fn without_captures(mut v: Value) -> Value {
    v.as_object_mut().unwrap().remove("captures");
    v
}

fn n(v: &Value, k: &str) -> u64 {
    v[k].as_u64().unwrap_or_else(|| panic!("{k} in {v}"))
}

#[test]
fn version_and_document() {
    let t = server();
    let v = t.ok("GET", "/capabilities/version", Value::Null);
    assert_eq!(v["api_spec_version"], openapi::MODEL_VERSION);
    assert_eq!(v["app_version"], env!("CARGO_PKG_VERSION"));
    let d = t.ok("GET", "/openapi.json", Value::Null);
    assert_eq!(d["openapi"], "3.0.3");
    for op in openapi::OPERATIONS {
        assert_eq!(d["paths"][op.path][op.method]["operationId"], op.id);
    }
    // Every reference names a schema of the document.
    let text = d.to_string();
    for r in text.split("\"$ref\":\"").skip(1) {
        let r = r.split('"').next().unwrap();
        if let Some(name) = r.strip_prefix("#/components/schemas/") {
            assert!(d["components"]["schemas"][name].is_object(), "{name}");
        } else {
            assert_eq!(r, "#/components/responses/Failure");
        }
    }
    for name in [
        "Config",
        "Control.State",
        "Metrics.Request",
        "Metrics.Response",
        "Flow.Metric",
        "Port.Metric",
        "Capture.Request",
        "Version",
        "Warning",
        "Error",
    ] {
        assert!(d["components"]["schemas"][name].is_object(), "{name}");
    }
    let fm = &d["components"]["schemas"]["Flow.Metric"]["properties"];
    assert_eq!(fm["frames_tx"]["type"], "integer");
    assert_eq!(fm["loss"]["type"], "number");
    assert_eq!(
        fm["transmit"]["enum"],
        json!(["started", "stopped", "paused"])
    );
}

#[test]
fn a_whole_test_counts_every_frame_with_rates_latency_and_timestamps() {
    let t = server();
    t.ok("POST", "/config", config(true));
    let got = t.ok("GET", "/config", Value::Null);
    let mut want = crate::otg::Config::from_value(&without_captures(config(true)))
        .unwrap()
        .to_value();
    want["captures"] =
        json!([{"name": "c2", "port_names": ["p2"], "overwrite": true, "format": "pcap"}]);
    assert_eq!(got, want);
    assert_eq!(t.transmit("start").0, 200);
    t.advance_s(0.5);
    let f = t.until("half way", |f| n(&f[0], "frames_tx") == 500);
    assert_eq!(f[0]["transmit"], "started");
    t.advance_s(0.5);
    let f = t.until("rates over the last second", |f| {
        n(&f[1], "frames_tx") == 500 && f[1]["frames_tx_rate"].as_f64() == Some(500.0)
    });
    assert_eq!(n(&f[0], "frames_tx"), 1000);
    assert_eq!(f[0]["transmit"], "stopped", "its 1,000 frames are out");
    assert_eq!(f[1]["transmit"], "started", "f2 has no end");
    assert_eq!(f[0]["frames_tx_rate"].as_f64(), Some(1000.0));
    assert_eq!(f[0]["tx_rate_bps"].as_f64(), Some(1000.0 * 128.0 * 8.0));
    assert_eq!(f[0]["tx_l1_rate_bps"].as_f64(), Some(1000.0 * 148.0 * 8.0));
    assert_eq!(f[1]["rx_rate_bytes"].as_f64(), Some(500.0 * 256.0));
    assert!(
        f[0]["latency"]["average_ns"].is_null(),
        "latency comes with the final figures"
    );
    assert_eq!(t.ports()[0]["transmit"], "started");
    assert_eq!(t.transmit("stop").0, 200);
    let f = t.flows();
    assert_eq!(n(&f[0], "frames_rx"), 1000);
    assert_eq!(n(&f[0], "bytes_rx"), 128_000);
    assert_eq!(f[0]["loss"].as_f64(), Some(0.0));
    assert_eq!(f[0]["port_tx"], "p1");
    assert_eq!(f[0]["port_rx"], "p2");
    assert_eq!(
        f[0]["frames_tx_rate"].as_f64(),
        Some(0.0),
        "nothing is sent any more"
    );
    assert_eq!(
        f[0]["latency"]["minimum_ns"].as_f64(),
        Some(fake::FAKE_LATENCY_NS as f64)
    );
    assert!(
        f[0]["timestamps"]["first_timestamp_ns"].as_f64()
            < f[0]["timestamps"]["last_timestamp_ns"].as_f64()
    );
    assert!(f[1].get("latency").is_none(), "f2 asked for no latency");
    let p = t.ports();
    assert_eq!(p[0]["name"], "p1");
    assert_eq!(n(&p[0], "frames_tx"), 1500);
    assert_eq!(n(&p[0], "bytes_tx"), 1000 * 128 + 500 * 256);
    assert_eq!(n(&p[0], "frames_rx"), 0);
    assert_eq!(n(&p[1], "frames_rx"), 1500);
    assert_eq!(p[1]["location"], "netns:lab-rx/veth-rx");
    assert_eq!(p[1]["capture"], "stopped");
    assert_eq!(p[0]["transmit"], "stopped");
    // Columns and names asked for.
    let v = t.ok(
        "POST",
        "/monitor/metrics",
        json!({"choice": "port", "port": {"port_names": ["p2"], "column_names": ["frames_rx"]}}),
    );
    assert_eq!(
        v["port_metrics"],
        json!([{"name": "p2", "frames_rx": 1500}])
    );
    let v = t.ok(
        "POST",
        "/monitor/metrics",
        json!({"choice": "flow", "flow": {"flow_names": ["f2"], "metric_names": ["frames_tx"], "tagged_metrics": {"include": true, "include_empty_metrics": false}}}),
    );
    let row = v["flow_metrics"][0].as_object().unwrap();
    assert_eq!(row["frames_tx"], 500);
    assert!(!row.contains_key("bytes_tx"));
    // A new start counts from zero.
    assert_eq!(t.transmit("start").0, 200);
    t.until("counters cleared", |f| n(&f[0], "frames_tx") == 0);
    assert_eq!(t.engine.launches.load(Ordering::SeqCst), 2);
}

#[test]
fn set_config_during_traffic_is_refused_and_the_test_goes_on() {
    let t = server();
    t.ok("POST", "/config", config(true));
    assert_eq!(t.transmit("start").0, 200);
    let (st, e) = t.call("POST", "/config", json!({}));
    assert_eq!(st, 409);
    assert_eq!(e["code"], 409);
    assert_eq!(e["kind"], "validation");
    assert!(
        e["errors"][0]
            .as_str()
            .unwrap()
            .contains("traffic is running"),
        "{e}"
    );
    let (st, _) = t.transmit("start");
    assert_eq!(st, 409, "a second start");
    assert_eq!(
        t.ok("GET", "/config", Value::Null)["flows"][1]["name"],
        "f2"
    );
    t.advance_s(2.0);
    t.until("f2 sends on", |f| n(&f[1], "frames_tx") == 1000);
    assert_eq!(t.transmit("stop").0, 200);
    let f = t.flows();
    assert_eq!(f[1]["transmit"], "stopped");
    t.advance_s(5.0);
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(n(&t.flows()[1], "frames_tx"), 1000, "stopped means stopped");
    t.ok("POST", "/config", json!({}));
    assert_eq!(
        t.ok("GET", "/config", Value::Null),
        json!({"ports": [], "flows": []})
    );
}

#[test]
fn pause_and_resume_send_what_was_left() {
    let t = server();
    t.ok("POST", "/config", config(false));
    assert_eq!(t.transmit("start").0, 200);
    t.advance_s(0.3);
    t.until("300 out", |f| n(&f[0], "frames_tx") == 300);
    assert_eq!(t.transmit("pause").0, 200);
    let f = t.flows();
    assert_eq!(f[0]["transmit"], "paused");
    t.advance_s(10.0);
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(n(&t.flows()[0], "frames_tx"), 300);
    let (st, e) = t.call("POST", "/config", config(false));
    assert_eq!(st, 200, "a paused test has no senders: {e}");
    // A config taken while paused is a new test.
    assert_eq!(n(&t.flows()[0], "frames_tx"), 0);
    assert_eq!(t.transmit("start").0, 200);
    t.advance_s(0.4);
    t.until("400 out", |f| n(&f[0], "frames_tx") == 400);
    assert_eq!(t.transmit("pause").0, 200);
    assert_eq!(t.transmit("resume").0, 200);
    t.advance_s(0.6);
    let f = t.until("all out", |f| {
        n(&f[0], "frames_tx") == 1000 && f[0]["transmit"] == "stopped"
    });
    assert_eq!(n(&f[1], "frames_tx"), 500);
    t.until("final", |f| {
        n(&f[0], "frames_rx") == 1000 && f[0]["latency"]["average_ns"].is_number()
    });
    assert_eq!(t.engine.launches.load(Ordering::SeqCst), 3);
    assert_eq!(t.transmit("resume").0, 409, "nothing is paused");
}

#[test]
fn what_is_left_of_a_flow_after_a_pause() {
    let cfg = crate::otg::Config::from_value(&without_captures(config(false))).unwrap();
    let mut flows = vec![state::FlowState::default(); 2];
    flows[0].base.tx_frames = 1000;
    flows[1].base.tx_frames = 200;
    let (rest, idx) = state::remainder(&cfg, &flows);
    assert_eq!(idx, [1]);
    assert!(matches!(
        rest.flows[0].duration,
        crate::otg::Duration::FixedPackets { packets: 300, .. }
    ));
    let mut secs = config(false);
    secs["flows"][1]["duration"] =
        json!({"fixed_seconds": {"seconds": 2, "delay": {"nanoseconds": 5}}});
    let cfg = crate::otg::Config::from_value(&without_captures(secs)).unwrap();
    let (rest, _) = state::remainder(&cfg, &flows);
    match &rest.flows[0].duration {
        crate::otg::Duration::FixedSeconds { seconds, delay } => {
            assert!((seconds - 1.6).abs() < 1e-9, "{seconds}");
            assert_eq!(*delay, crate::otg::Span::Nanoseconds(0.0));
        }
        d => panic!("{d:?}"),
    }
}

#[test]
fn a_client_gone_leaves_no_endless_traffic_behind() {
    let t = server_with(Options {
        watchdog: Some(Duration::from_millis(50)),
        ..opts()
    });
    t.ok("POST", "/config", config(true));
    assert_eq!(t.transmit("start").0, 200);
    // No request for longer than the watchdog: the supervisor stops the flows.
    std::thread::sleep(Duration::from_millis(400));
    let f = t.flows();
    assert_eq!(f[1]["transmit"], "stopped", "{f:?}");
}

#[test]
fn captures_answer_pcap_files() {
    let t = server();
    let (st, e) = t.call("POST", "/monitor/capture", json!({"port_name": "p2"}));
    assert_eq!(
        (st, e["errors"][0].as_str().unwrap()),
        (400, "no config: set_config first")
    );
    t.ok("POST", "/config", config(false));
    let cap = |state: &str, ports: Value| {
        t.call(
            "POST",
            "/control/state",
            json!({"choice": "port", "port": {"choice": "capture", "capture": {"port_names": ports, "state": state}}}),
        )
    };
    let (st, e) = cap("start", json!(["p1"]));
    assert_eq!(st, 400);
    assert!(
        e["errors"][0]
            .as_str()
            .unwrap()
            .contains("in no capture of the config"),
        "{e}"
    );
    assert_eq!(cap("start", json!([])).0, 200);
    assert_eq!(t.ports()[1]["capture"], "started");
    let (st, pcap) = t.raw("POST", "/monitor/capture", br#"{"port_name": "p2"}"#);
    assert_eq!(st, 200);
    let p = crate::pcap::parse(&pcap).unwrap();
    assert_eq!(p.records.len(), 3);
    // As the wire carries it: the frame and its FCS, which the header announces.
    assert_eq!(p.fcs_len, 4);
    assert_eq!(p.records[1].data, crate::wire::fcs::on_the_wire(&[1u8; 60]));
    assert_eq!(
        t.ports()[1]["capture"],
        "stopped",
        "get_capture stops the capture"
    );
    let (st, pcap) = t.raw(
        "POST",
        "/monitor/capture",
        br#"{"port_name": "p2", "packets": {"choice": "slice", "slice": {"initial": {"start": 2, "count": 5}}}}"#,
    );
    assert_eq!(st, 200);
    assert_eq!(crate::pcap::parse(&pcap).unwrap().records.len(), 2);
    let (st, e) = t.call("POST", "/monitor/capture", json!({"port_name": "p1"}));
    assert_eq!(st, 400);
    assert!(
        e["errors"][0]
            .as_str()
            .unwrap()
            .contains("captured nothing"),
        "{e}"
    );
    let mut bad = config(false);
    bad["captures"] = json!([{"name": "c", "port_names": ["p2"], "format": "pcapng"}]);
    let (st, e) = t.call("POST", "/config", bad);
    assert_eq!(
        (st, e["errors"][0].as_str().unwrap()),
        (
            400,
            "captures[0].format: not supported (upktgen writes pcap)"
        )
    );
}

#[test]
fn refusals_are_the_models_errors() {
    let t = server();
    let mut c = config(false);
    c["ports"][0]["location"] = json!("eth0");
    let (st, e) = t.call("POST", "/config", c);
    assert_eq!(st, 403);
    assert_eq!(e["code"], 403);
    assert_eq!(
        e["errors"][0],
        "ports[0].location: eth0 is outside what this server may touch (--allow: netns:lab-*/*, veth*)"
    );
    let mut c = config(false);
    c["flows"][0]["packet"][2] = json!({"choice": "gre", "gre": {}});
    let (st, e) = t.call("POST", "/config", c);
    assert_eq!((st, e["kind"].as_str()), (400, Some("validation")));
    assert_eq!(e["errors"][0], "flows[0].packet[2].gre: not supported");
    let (st, e) = t.transmit("start");
    assert_eq!(
        (st, e["errors"][0].as_str().unwrap()),
        (400, "no config: set_config first")
    );
    t.ok("POST", "/config", config(false));
    let (st, e) = t.call(
        "POST",
        "/control/state",
        json!({"choice": "traffic", "traffic": {"choice": "flow_transmit", "flow_transmit": {"state": "start", "flow_names": ["f1"]}}}),
    );
    assert_eq!(st, 400);
    assert!(
        e["errors"][0]
            .as_str()
            .unwrap()
            .contains("name them all, or none"),
        "{e}"
    );
    let (st, e) = t.call(
        "POST",
        "/control/state",
        json!({"choice": "protocol", "protocol": {}}),
    );
    assert_eq!(
        (st, e["errors"][0].as_str().unwrap()),
        (
            400,
            "choice: \"protocol\" not supported (upktgen runs no protocols)"
        )
    );
    let (st, e) = t.call("POST", "/monitor/metrics", json!({"choice": "bgpv4"}));
    assert_eq!(
        (st, e["errors"][0].as_str().unwrap()),
        (
            400,
            "choice: \"bgpv4\" not supported (upktgen has port and flow metrics)"
        )
    );
    let (st, e) = t.call(
        "POST",
        "/monitor/metrics",
        json!({"choice": "flow", "flow": {"flow_names": ["nope"]}}),
    );
    assert_eq!(
        (st, e["errors"][0].as_str().unwrap()),
        (400, "flow.flow_names: no flow named \"nope\"")
    );
    let (st, e) = t.call("PATCH", "/config", json!({}));
    assert_eq!(st, 405);
    assert!(
        e["errors"][0]
            .as_str()
            .unwrap()
            .starts_with("update_config (PATCH /config): not supported"),
        "{e}"
    );
    let (st, e) = t.call("POST", "/control/action", json!({}));
    assert_eq!(st, 404);
    assert!(
        e["errors"][0]
            .as_str()
            .unwrap()
            .contains("not supported by upktgen"),
        "{e}"
    );
    assert_eq!(t.call("POST", "/monitor/metrics", json!([null])).0, 400);
    assert_eq!(t.call("GET", "/nowhere", Value::Null).0, 404);
    assert_eq!(t.call("DELETE", "/config", Value::Null).0, 405);
    // Malformed, deep, and too large.
    let (st, e) = t.raw("POST", "/control/state", b"{\"choice\": ");
    assert_eq!(st, 400);
    assert!(String::from_utf8_lossy(&e).contains("not JSON"));
    let (st, e) = t.call(
        "POST",
        "/config",
        json!({"ports": [], "flows": [{"name": "f", "pps": "x"}]}),
    );
    assert_eq!(st, 400, "{e}");
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let (st, e) = t.raw("POST", "/config", deep.as_bytes());
    assert_eq!(st, 400, "{}", String::from_utf8_lossy(&e));
    let (st, _) = t.raw(
        "POST",
        "/monitor/metrics",
        &vec![b' '; api::MAX_SMALL_BODY + 1],
    );
    assert_eq!(st, 413);
    let (st, e) = t.call("POST", "/control/state", json!({"choice": "traffic", "traffic": {"choice": "flow_transmit", "flow_transmit": {"state": "go"}}}));
    assert_eq!(st, 400);
    assert!(
        e["errors"][0]
            .as_str()
            .unwrap()
            .starts_with("Control.State: traffic.flow_transmit.state: \"go\" is not one of"),
        "{e}"
    );
}

#[test]
fn snappis_string_integers_are_read() {
    let t = server();
    let mut c = config(false);
    c["flows"][0]["rate"] = json!({"choice": "pps", "pps": "1000"});
    c["flows"][0]["duration"]["fixed_packets"]["packets"] = json!("1000");
    t.ok("POST", "/config", c);
    let got = t.ok("GET", "/config", Value::Null);
    assert_eq!(got["flows"][0]["rate"]["pps"], 1000);
    let mut c = config(false);
    c["flows"][0]["rate"] = json!({"choice": "pps", "pps": "-1"});
    assert_eq!(t.call("POST", "/config", c).0, 400);
}

/// set_config plans the config as the start will (the run engine's plan, nothing sent):
/// what it cannot send is a 400 with the config's path, and nothing is taken.
#[test]
fn what_the_engine_cannot_send_is_refused_at_set_config() {
    let t = server_on(
        Options {
            allow: Allow(vec![
                "lab:*".parse().unwrap(),
                "netns:lab-*/*".parse().unwrap(),
            ]),
            ..opts()
        },
        Some(Arc::new(super::streams::StreamsEngine::default())),
    );
    let flow = |name: &str, tx: &str, rx: &str, size: u64| {
        json!({
            "name": name,
            "tx_rx": {"choice": "port", "port": {"tx_name": tx, "rx_names": [rx]}},
            "packet": [{"choice": "ethernet", "ethernet": {}}, {"choice": "ipv4", "ipv4": {}}, {"choice": "udp", "udp": {}}],
            "size": {"choice": "fixed", "fixed": size},
            "rate": {"choice": "pps", "pps": 1000},
            "duration": {"choice": "fixed_packets", "fixed_packets": {"packets": 10}}
        })
    };
    let cfg = |ports: [&str; 2], flows: Vec<Value>| {
        json!({
            "ports": [{"name": "p1", "location": ports[0]}, {"name": "p2", "location": ports[1]}],
            "flows": flows
        })
    };
    let lab = ["lab:tx", "lab:rx"];
    for (c, want) in [
        // A flow counted at two ports.
        (
            cfg(
                lab,
                vec![{
                    let mut f = flow("f1", "p1", "p2", 128);
                    f["tx_rx"]["port"]["rx_names"] = json!(["p2", "p1"]);
                    f
                }],
            ),
            "flows[0].tx_rx.port.rx_names: not supported (a flow is received at one port",
        ),
        // An Ethernet destination left to `auto` where upktgen knows no neighbour.
        (
            cfg(
                ["netns:lab-x/va", "netns:lab-x/vb"],
                vec![flow("f1", "p1", "p2", 128)],
            ),
            "flows[0].packet[0].ethernet.dst.auto: not supported",
        ),
        // A port sending to itself (beside a flow to another: a leg each).
        (
            cfg(
                ["netns:lab-x/va", "netns:lab-x/vb"],
                vec![flow("f1", "p1", "p1", 128), flow("f2", "p1", "p2", 128)],
            ),
            "--config: the flows are sent from port \"p1\" and received at port \"p1\"",
        ),
    ] {
        let (st, e) = t.call("POST", "/config", c);
        assert_eq!(
            (st, &e["code"], &e["kind"]),
            (400, &json!(400), &json!("validation")),
            "{e}"
        );
        let msg = e["errors"][0].as_str().unwrap();
        assert!(msg.starts_with(want), "{msg}");
    }
    // Nothing was taken: the last config stands (none).
    let got = t.ok("GET", "/config", Value::Null);
    assert!(got["flows"].as_array().is_none_or(Vec::is_empty), "{got}");
    // What the engine can send is taken: flows both ways in the lab are planned at its
    // ends (the lab itself is made at the start).
    t.ok(
        "POST",
        "/config",
        cfg(lab, vec![flow("f1", "p1", "p2", 128)]),
    );
    t.ok(
        "POST",
        "/config",
        cfg(
            lab,
            vec![flow("f1", "p1", "p2", 128), flow("f2", "p2", "p1", 128)],
        ),
    );
    assert_eq!(t.engine.launches.load(Ordering::SeqCst), 0);
}

/// A start that fails for what only the start can see (an interface gone after
/// set_config) is a 409, the model's Error; nothing runs and a later start may try again.
#[test]
fn a_port_gone_by_the_start_is_a_conflict_not_a_server_error() {
    let t = server();
    let mut c = without_captures(config(false));
    c["ports"][0]["location"] = json!("netns:lab-x/gone");
    t.ok("POST", "/config", c);
    for _ in 0..2 {
        let (st, e) = t.transmit("start");
        assert_eq!(
            (st, &e["code"], &e["kind"]),
            (409, &json!(409), &json!("validation")),
            "{e}"
        );
        assert_eq!(
            e["errors"][0], "starting the flows: --dev gone: no such interface",
            "{e}"
        );
    }
    assert!(
        t.flows().iter().all(|f| f["transmit"] == "stopped"),
        "{:?}",
        t.flows()
    );
    // Another config is taken: nothing is running.
    t.ok("POST", "/config", without_captures(config(false)));
}
