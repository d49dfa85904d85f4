//! End-to-end: `upktgen otg` on loopback, driven by third-party clients: snappi (the OTG
//! model's Python client, as a user's script drives it: tests/integration/otg_server/
//! snappi_test.py), schemathesis against the server's own /openapi.json, and hostile
//! clients beside a running test. The flows come from the fake engine (`--fake-engine`,
//! counters that follow each flow's rate and duration): the stream engine of issue 23 has
//! no adapter here yet. The capture is real: frames on a veth pair in a namespace the test
//! makes.

use crate::common::{self, root_or_skip};
use crate::harness::{skip, tool_or_skip};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/integration/otg_server/snappi_test.py"
);

/// A server on a free loopback port; killed on every path out of the test.
struct Server {
    child: Child,
    addr: SocketAddr,
}

impl Server {
    fn start(allow: &[&str]) -> Server {
        Server::start_with(allow, true)
    }

    /// With the fake engine, or the run engine's streams.
    fn start_with(allow: &[&str], fake: bool) -> Server {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_upktgen"));
        cmd.args(["otg", "--listen", "127.0.0.1:0"]);
        if fake {
            cmd.arg("--fake-engine");
        }
        for a in allow {
            cmd.args(["--allow", a]);
        }
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line
            .split("http://")
            .nth(1)
            .and_then(|s| s.split_whitespace().next())
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .parse()
            .unwrap();
        Server { child, addr }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// One request on its own connection: the status and the body.
    fn call(&self, method: &str, path: &str, body: &str) -> (u16, String) {
        let mut s = TcpStream::connect_timeout(&self.addr, Duration::from_secs(5)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(
            s,
            "{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        read_answer(&mut s)
    }

    fn hwm_kb(&self) -> u64 {
        let s = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        s.lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn read_answer(s: &mut TcpStream) -> (u16, String) {
    let mut r = Vec::new();
    let _ = s.read_to_end(&mut r);
    let r = String::from_utf8_lossy(&r).into_owned();
    let status = r
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = r.split_once("\r\n\r\n").map_or("", |(_, b)| b).to_string();
    (status, body)
}

/// Whether python3 can import `module`; else skips, saying how to get it.
fn python_module_or_skip(module: &str) -> bool {
    if !tool_or_skip("python3", "apt-get install python3") {
        return false;
    }
    let ok = Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        skip(format!(
            "needs the Python module {module}: `cargo xtask deps` installs it from PyPI"
        ));
    }
    ok
}

fn snappi(server: &Server, envs: &[(&str, &str)]) -> serde_json::Value {
    let o = Command::new("python3")
        .arg(SCRIPT)
        .env("OTG_API", server.url())
        .envs(envs.iter().copied())
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "the snappi script failed: {}\n{}",
        common::stdout(&o),
        common::stderr(&o)
    );
    serde_json::from_str(common::stdout(&o).lines().last().unwrap()).unwrap()
}

pub(crate) const TESTS: &[crate::harness::Test] = crate::tests![
    snappi_runs_a_test_through_its_own_client,
    snappi_runs_real_traffic_in_the_engines_own_lab,
    snappi_runs_real_traffic_both_ways_between_two_ports,
    snappi_reads_a_capture_of_a_port_in_a_namespace,
    schemathesis_finds_no_server_error_and_every_answer_fits_the_document,
    hostile_clients_leave_a_running_test_alone,
];

fn snappi_runs_a_test_through_its_own_client() {
    if !python_module_or_skip("snappi") {
        return;
    }
    let server = Server::start(&["veth*"]);
    let out = snappi(&server, &[("OTG_P1", "veth-a"), ("OTG_P2", "veth-b")]);
    let f = &out["flows"];
    assert_eq!(f[0]["name"], "f1");
    assert_eq!(
        (f[0]["port_tx"].as_str(), f[0]["port_rx"].as_str()),
        (Some("p1"), Some("p2"))
    );
    assert_eq!(
        (f[0]["frames_tx"].as_u64(), f[0]["frames_rx"].as_u64()),
        (Some(1000), Some(1000))
    );
    assert_eq!(f[0]["bytes_rx"], 128_000);
    assert_eq!(
        (f[1]["frames_tx"].as_u64(), f[1]["bytes_tx"].as_u64()),
        (Some(500), Some(128_000))
    );
    for m in f.as_array().unwrap() {
        assert_eq!(m["loss"].as_f64(), Some(0.0), "{m}");
        assert!(m["latency_ns"].as_f64() > Some(0.0), "{m}");
        assert!(m["first_ns"].as_f64() < m["last_ns"].as_f64(), "{m}");
    }
    let p = &out["ports"];
    assert_eq!(
        (p[0]["frames_tx"].as_u64(), p[0]["frames_rx"].as_u64()),
        (Some(1000), Some(500))
    );
    assert_eq!(
        (p[1]["frames_tx"].as_u64(), p[1]["frames_rx"].as_u64()),
        (Some(500), Some(1000))
    );
    assert_eq!(p[0]["transmit"], "stopped");
    assert!(
        out["polls"].as_u64() > Some(1),
        "metrics were polled while the flows ran"
    );
    assert_eq!(out["version"], "1.61.0");
}

fn snappi_runs_real_traffic_in_the_engines_own_lab() {
    if !root_or_skip() || !python_module_or_skip("snappi") {
        return;
    }
    let server = Server::start_with(&["lab:*"], false);
    // Both ways: the lab's two ends each send and receive.
    let out = snappi(&server, &[("OTG_P1", "lab:tx"), ("OTG_P2", "lab:rx")]);
    let back = &out["flows"][1];
    assert_eq!(
        (back["frames_tx"].as_u64(), back["frames_rx"].as_u64()),
        (Some(500), Some(500)),
        "{back}"
    );
    let f = &out["flows"][0];
    assert_eq!(
        (f["frames_tx"].as_u64(), f["frames_rx"].as_u64()),
        (Some(1000), Some(1000)),
        "{f}"
    );
    assert_eq!(f["bytes_tx"], 128_000, "OTG bytes count the FCS: {f}");
    assert_eq!(f["bytes_rx"], 128_000, "{f}");
    assert_eq!(f["loss"].as_f64(), Some(0.0));
    assert!(f["latency_ns"].as_f64() > Some(0.0), "{f}");
    assert!(f["first_ns"].as_f64() < f["last_ns"].as_f64(), "{f}");
    let p = &out["ports"];
    assert_eq!(
        (p[0]["frames_tx"].as_u64(), p[1]["frames_rx"].as_u64()),
        (Some(1000), Some(1000))
    );
    assert_eq!(
        (p[1]["frames_tx"].as_u64(), p[0]["frames_rx"].as_u64()),
        (Some(500), Some(500))
    );
}

/// Both flows of the script, p1 -> p2 and p2 -> p1, as real frames over a veth pair in a
/// namespace the test made: each port a sender and a receiver, every frame counted.
fn snappi_runs_real_traffic_both_ways_between_two_ports() {
    if !root_or_skip()
        || !tool_or_skip("ip", "apt-get install iproute2")
        || !python_module_or_skip("snappi")
    {
        return;
    }
    let ns = common::VethNs::new("otg2w");
    let server = Server::start_with(&["netns:upk-otg2w-*/*"], false);
    let (p1, p2) = (ns.port("va"), ns.port("vb"));
    let out = snappi(&server, &[("OTG_P1", &p1), ("OTG_P2", &p2)]);
    let f = &out["flows"];
    for (i, (tx, rx, frames, size)) in [("p1", "p2", 1000, 128), ("p2", "p1", 500, 256)]
        .into_iter()
        .enumerate()
    {
        let f = &f[i];
        assert_eq!(
            (f["port_tx"].as_str(), f["port_rx"].as_str()),
            (Some(tx), Some(rx)),
            "{f}"
        );
        assert_eq!(
            (f["frames_tx"].as_u64(), f["frames_rx"].as_u64()),
            (Some(frames), Some(frames)),
            "{f}"
        );
        assert_eq!(f["bytes_rx"].as_u64(), Some(frames * size), "{f}");
        assert_eq!(f["loss"].as_f64(), Some(0.0), "{f}");
        assert!(f["latency_ns"].as_f64() > Some(0.0), "{f}");
    }
    // Each port sent its flow and received the other's.
    let p = &out["ports"];
    assert_eq!(
        (p[0]["frames_tx"].as_u64(), p[0]["frames_rx"].as_u64()),
        (Some(1000), Some(500)),
        "{p}"
    );
    assert_eq!(
        (p[1]["frames_tx"].as_u64(), p[1]["frames_rx"].as_u64()),
        (Some(500), Some(1000)),
        "{p}"
    );
}

fn snappi_reads_a_capture_of_a_port_in_a_namespace() {
    if !root_or_skip()
        || !tool_or_skip("ip", "apt-get install iproute2")
        || !python_module_or_skip("snappi")
    {
        return;
    }
    let ns = common::VethNs::new("otg");
    let n = ns.0.as_str();
    ns.ip(&["-n", n, "addr", "add", "198.51.100.1/24", "dev", "va"]);
    let server = Server::start(&["netns:upk-otg-*/*"]);
    let tmp = common::tmp_dir("otg_server", "capture");
    let pcap = tmp.join("p2.pcap");
    // Three frames out of va (EtherType 0x88b5, for local experiments): vb receives them.
    let inject = format!(
        "ip netns exec {n} python3 -c \"import socket; s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW); s.bind(('va', 0)); [s.send(bytes.fromhex('ffffffffffff020000000001') + b'\\x88\\xb5' + b'upktgen-otg-capture'.ljust(46, b'.')) for _ in range(3)]\""
    );
    let (p1, p2) = (ns.port("va"), ns.port("vb"));
    let pcap_s = pcap.to_string_lossy().into_owned();
    let out = snappi(
        &server,
        &[
            ("OTG_P1", &p1),
            ("OTG_P2", &p2),
            ("OTG_PCAP", &pcap_s),
            ("OTG_INJECT", &inject),
        ],
    );
    assert_eq!(out["flows"][0]["frames_rx"], 1000);
    let cap = upktgen::pcap::read_file(&pcap).unwrap();
    // Each 60-byte frame as the wire carries it, in the model's size: with its FCS, which
    // the file's header announces.
    assert_eq!(cap.fcs_len, 4);
    let ours: Vec<_> = cap
        .records
        .iter()
        .filter(|r| r.data.len() == 64 && r.data[12..14] == [0x88, 0xb5])
        .collect();
    assert_eq!(ours.len(), 3, "{} frames captured", cap.records.len());
    assert_eq!(&ours[0].data[14..33], b"upktgen-otg-capture");
    assert_eq!(
        ours[0].data[60..],
        upktgen::wire::fcs::crc32(&ours[0].data[..60]).to_le_bytes()
    );
}

fn schemathesis_finds_no_server_error_and_every_answer_fits_the_document() {
    if !tool_or_skip("st", "pip install schemathesis (or `cargo xtask deps`)") {
        return;
    }
    let server = Server::start(&["veth*", "netns:upk-*/*"]);
    let tmp = common::tmp_dir("otg_server", "schemathesis");
    let o = Command::new("st")
        .args(["run", &format!("{}/openapi.json", server.url())])
        .args([
            "--checks",
            "not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance,negative_data_rejection,unsupported_method",
            "--max-examples",
            "25",
            "--seed",
            "1",
            "--workers",
            "1",
            "--request-timeout",
            "10",
            "--generation-database",
            "none",
            "--no-color",
        ])
        .current_dir(&*tmp)
        .output()
        .unwrap();
    let text = common::stdout(&o);
    assert!(
        o.status.success(),
        "schemathesis found failures:\n{text}\n{}",
        common::stderr(&o)
    );
    assert!(text.contains("6 selected / 6 total"), "{text}");
    let (st, _) = server.call("GET", "/capabilities/version", "");
    assert_eq!(st, 200, "the server outlived the fuzzing");
}

fn hostile_clients_leave_a_running_test_alone() {
    let server = Server::start(&["veth*"]);
    let cfg = r#"{"ports": [{"name": "p1", "location": "veth-a"}, {"name": "p2", "location": "veth-b"}],
        "flows": [{"name": "f", "tx_rx": {"port": {"tx_name": "p1", "rx_names": ["p2"]}},
                   "rate": {"pps": 1000}, "duration": {"continuous": {}}}]}"#;
    assert_eq!(server.call("POST", "/config", cfg).0, 200);
    let start = r#"{"choice": "traffic", "traffic": {"choice": "flow_transmit", "flow_transmit": {"state": "start"}}}"#;
    assert_eq!(server.call("POST", "/control/state", start).0, 200);
    let metrics = r#"{"choice": "flow"}"#;
    let sent = |s: &Server| -> (u64, String) {
        let (st, b) = s.call("POST", "/monitor/metrics", metrics);
        assert_eq!(st, 200, "{b}");
        let v: serde_json::Value = serde_json::from_str(&b).unwrap();
        let m = &v["flow_metrics"][0];
        (
            m["frames_tx"].as_u64().unwrap(),
            m["transmit"].as_str().unwrap().to_string(),
        )
    };
    let (before, _) = sent(&server);
    let t0 = Instant::now();

    // 1,000 connections held open in silence (as many as this process may open).
    let room = std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|l| {
            l.lines()
                .find(|l| l.starts_with("Max open files"))?
                .split_whitespace()
                .nth(3)?
                .parse::<u64>()
                .ok()
        })
        .unwrap_or(1024);
    let idle: Vec<TcpStream> = (0..1000.min(room.saturating_sub(100)))
        .filter_map(|_| TcpStream::connect_timeout(&server.addr, Duration::from_secs(2)).ok())
        .collect();
    // One that sends its body a byte a second.
    let slow_addr = server.addr;
    let slow = std::thread::spawn(move || {
        let mut s = TcpStream::connect(slow_addr).unwrap();
        let _ = s.write_all(b"POST /config HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n");
        for _ in 0..3 {
            let _ = s.write_all(b"{");
            std::thread::sleep(Duration::from_secs(1));
        }
    });
    // A 100 MB body declared, then one sent chunked: both cut off.
    let mut s = TcpStream::connect(server.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(b"POST /config HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n{")
        .unwrap();
    assert_eq!(read_answer(&mut s).0, 413);
    let mut s = TcpStream::connect(server.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(b"POST /config HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        .unwrap();
    let chunk = [b' '; 1 << 20];
    let mut head = format!("{:x}\r\n", chunk.len()).into_bytes();
    head.extend_from_slice(&chunk);
    head.extend_from_slice(b"\r\n");
    for _ in 0..100 {
        if s.write_all(&head).is_err() {
            break;
        }
    }
    assert_eq!(read_answer(&mut s).0, 413);
    // Malformed, deeply nested, outside --allow, and a config while traffic runs.
    assert_eq!(server.call("POST", "/config", "{\"ports\": [").0, 400);
    let deep = format!("{}{}", "[".repeat(1 << 20), "]".repeat(1 << 20));
    assert_eq!(server.call("POST", "/config", &deep).0, 400);
    let (st, b) = server.call("POST", "/config", &cfg.replace("veth-b", "eth0"));
    assert_eq!(st, 403, "{b}");
    assert!(b.contains("outside what this server may touch"), "{b}");
    let (st, b) = server.call("POST", "/config", cfg);
    assert_eq!(st, 409, "{b}");
    assert!(b.contains("traffic is running"), "{b}");

    // The test went on: the flow sends at its rate, and the client is answered.
    let (after, transmit) = sent(&server);
    let secs = t0.elapsed().as_secs_f64();
    assert_eq!(transmit, "started");
    assert!(
        (after - before) as f64 >= 1000.0 * secs * 0.8,
        "{} frames in {secs:.1} s",
        after - before
    );
    drop(idle);
    let _ = slow.join();
    let hwm = server.hwm_kb();
    assert!(hwm < 192 * 1024, "the server's peak RSS reached {hwm} kB");
    let stop = start.replace("start", "stop");
    assert_eq!(server.call("POST", "/control/state", &stop).0, 200);
    assert_eq!(sent(&server).1, "stopped");
}
