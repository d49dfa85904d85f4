//! End-to-end: `upktgen rx --metrics-listen` inside the lab's receiving namespace, scraped
//! with curl on that namespace's loopback during and after a run sent with `upktgen run`,
//! the text checked with `promtool check metrics`.

use crate::common::{root_or_skip, stderr, stdout};
use std::io::Write;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};
use upktgen::lab::{self, Lab, RxMode};

/// The endpoint's port, on the receiving namespace's own loopback (nothing on the host's).
const PORT: &str = "19464";

pub(crate) fn tools_or_skip() -> bool {
    use crate::harness::tool_or_skip;
    tool_or_skip("curl", "apt-get install curl")
        && tool_or_skip("promtool", "apt-get install prometheus")
}

/// `curl` inside `ns`; with `prom_text`, asking for the Prometheus text format.
fn scrape(ns: &str, prom_text: bool) -> Output {
    let mut c = Command::new("ip");
    c.args([
        "netns",
        "exec",
        ns,
        "curl",
        "-sS",
        "--max-time",
        "5",
        "-D",
        "-",
    ]);
    if prom_text {
        c.args(["-H", "Accept: text/plain; version=0.0.4"]);
    }
    c.arg(format!("http://127.0.0.1:{PORT}/metrics"))
        .output()
        .unwrap()
}

/// A scrape's headers and body, when the request succeeded.
fn scrape_ok(ns: &str, prom_text: bool) -> Option<(String, String)> {
    let o = scrape(ns, prom_text);
    if !o.status.success() {
        return None;
    }
    let s = stdout(&o);
    let (head, body) = s.split_once("\r\n\r\n")?;
    Some((head.to_string(), body.to_string()))
}

/// The value of the sample `name` (with labels, as printed).
pub(crate) fn value(body: &str, name: &str) -> Option<f64> {
    body.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
}

fn state(body: &str) -> Option<&'static str> {
    ["starting", "running", "finished"]
        .into_iter()
        .find(|s| value(body, &format!("upktgen_state{{state=\"{s}\"}}")) == Some(1.0))
}

pub(crate) fn promtool_ok(text: &str) {
    let mut p = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    p.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let o = p.wait_with_output().unwrap();
    assert!(
        o.status.success(),
        "promtool check metrics: {}{}\n{text}",
        stdout(&o),
        stderr(&o)
    );
}

/// `upktgen ARGS` inside `ns`, its output piped.
fn spawn_in(ns: &str, args: &[&str]) -> Child {
    Command::new("ip")
        .args(["netns", "exec", ns, env!("CARGO_BIN_EXE_upktgen")])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// `upktgen rx ARGS` on veth-rx (af_packet) in the lab's receiving namespace.
fn rx(lab: &Lab, args: &[&str]) -> Child {
    let mut a = vec!["rx", "--dev", lab::RX_IF, "--rx-backend", "af_packet"];
    a.extend_from_slice(args);
    spawn_in(&lab.rx_ns, &a)
}

/// `upktgen rx --count COUNT --json EXTRA` serving its metrics on [`PORT`] (4 s of linger),
/// returned once its state says running (set after the receiver is open).
fn rx_serving(lab: &Lab, count: u64, extra: &[&str]) -> Child {
    let (n, listen) = (count.to_string(), format!("127.0.0.1:{PORT}"));
    let mut a = vec![
        "--count",
        &n,
        "--duration",
        "60s",
        "--json",
        "--metrics-listen",
        &listen,
        "--metrics-linger",
        "4s",
    ];
    a.extend_from_slice(extra);
    let mut child = rx(lab, &a);
    wait_for_state(&lab.rx_ns, "running", &mut child);
    child
}

/// `upktgen run --dev veth-tx ARGS`, at veth-rx, in the lab's sending namespace.
fn run(lab: &Lab, args: &[&str]) -> Child {
    let mac = lab::RX_MAC.to_string();
    let mut a = vec![
        "run",
        "--dev",
        lab::TX_IF,
        "--dst",
        "10.99.0.2",
        "--dst-mac",
        &mac,
    ];
    a.extend_from_slice(args);
    spawn_in(&lab.tx_ns, &a)
}

/// Scrapes the endpoint in `ns` every 100 ms while `child` runs, handing each answered
/// scrape's headers and body to `f`; then `child`'s output.
fn scrape_while(ns: &str, mut child: Child, mut f: impl FnMut(&str, &str)) -> Output {
    while child.try_wait().unwrap().is_none() {
        if let Some((head, body)) = scrape_ok(ns, false) {
            f(&head, &body);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    child.wait_with_output().unwrap()
}

/// Scrapes the endpoint in `ns` until `upktgen_state` says `want`, while `child` runs; the
/// body of that scrape.
fn wait_for_state(ns: &str, want: &str, child: &mut Child) -> String {
    let t0 = Instant::now();
    loop {
        if let Some((_, body)) = scrape_ok(ns, false)
            && state(&body) == Some(want)
        {
            return body;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "upktgen ended before its state was {want}"
        );
        assert!(t0.elapsed() < Duration::from_secs(30), "never {want}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn rx_metrics_are_scraped_during_and_after_the_run() {
    if !root_or_skip() || !tools_or_skip() {
        return;
    }
    let lab = Lab::create(RxMode::Stack).unwrap();
    let count = 20_000u64;
    let n = count.to_string();
    let listen = format!("127.0.0.1:{PORT}");
    let mut receiver = rx_serving(&lab, count, &[]);
    // Nothing listens on the host's own loopback.
    let host = Command::new("curl")
        .args(["-s", "--max-time", "2", &format!("http://{listen}/metrics")])
        .output()
        .unwrap();
    assert!(!host.status.success(), "the endpoint is on the host");

    // 20,000 frames at 5,000 pps: about four seconds to scrape in.
    let sender = run(&lab, &["--count", &n, "--ratep", "5000", "--no-live"]);
    let mut during: Vec<f64> = Vec::new();
    let mut checked_during = false;
    let s = scrape_while(&lab.rx_ns, sender, |head, body| {
        assert!(
            head.contains(
                "Content-Type: application/openmetrics-text; version=1.0.0; charset=utf-8"
            ),
            "{head}"
        );
        assert!(body.ends_with("# EOF\n"), "{body}");
        if let Some(v) = value(body, "upktgen_rx_frames_total") {
            during.push(v);
        }
        if !checked_during && state(body) == Some("running") {
            let (_, text) = scrape_ok(&lab.rx_ns, true).unwrap();
            promtool_ok(&text);
            checked_during = true;
        }
    });
    assert!(s.status.success(), "{}", stderr(&s));
    assert!(checked_during, "no scrape while the run was sending");
    assert!(
        during.windows(2).all(|w| w[0] <= w[1]),
        "frames went backwards: {during:?}"
    );
    assert!(
        during.iter().any(|&v| v > 0.0 && v < count as f64),
        "no scrape saw the count growing: {during:?}"
    );

    // After the report: the final figures, while --metrics-linger keeps the endpoint up.
    let body = wait_for_state(&lab.rx_ns, "finished", &mut receiver);
    assert_eq!(value(&body, "upktgen_rx_frames_total"), Some(count as f64));
    assert_eq!(value(&body, "upktgen_rx_lost_packets"), Some(0.0));
    assert_eq!(
        value(
            &body,
            "upktgen_rx_flow_received_packets_total{flow=\"10.99.0.1:0 -> 10.99.0.2:0\"}"
        ),
        Some(count as f64),
        "{body}"
    );
    let iface = format!(
        "upktgen_iface_packets_total{{iface=\"{}\",netns=\"{}\",direction=\"rx\"}}",
        lab::RX_IF,
        lab.rx_ns
    );
    assert!(
        value(&body, &iface).is_some_and(|v| v >= count as f64),
        "{iface} in\n{body}"
    );
    let (_, text) = scrape_ok(&lab.rx_ns, true).unwrap();
    promtool_ok(&text);

    // A second endpoint on the same port: one clear line, non-zero, nothing received.
    let busy = rx(&lab, &["--count", "1", "--metrics-listen", &listen])
        .wait_with_output()
        .unwrap();
    assert!(!busy.status.success());
    let e = stderr(&busy);
    assert_eq!(
        e.trim_end().lines().last().unwrap(),
        format!(
            "upktgen: --metrics-listen {listen}: cannot listen: Address already in use (os error 98) (another process listens there; pick another port)"
        ),
        "{e}"
    );
    assert!(stdout(&busy).is_empty());
    // An address that is not this namespace's.
    let away = rx(
        &lab,
        &["--count", "1", "--metrics-listen", "192.0.2.1:9100"],
    )
    .wait_with_output()
    .unwrap();
    assert!(!away.status.success());
    assert!(
        stderr(&away).contains("--metrics-listen 192.0.2.1:9100: cannot listen"),
        "{}",
        stderr(&away)
    );

    let o = receiver.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let j = crate::common::json(&o);
    assert_eq!(j["frames"]["pktgen"], count);
    // The endpoint closed with the process.
    assert!(scrape_ok(&lab.rx_ns, false).is_none());
}

/// The per-flow families while a paced run is received through a drop of every 50th frame:
/// received and lost per flow grow before the end (the receiver publishes them at most every
/// 250 ms), and the final scrape holds exactly the report's per-flow counters.
fn rx_flow_metrics_are_live_and_end_equal_to_the_report() {
    if !root_or_skip() || !tools_or_skip() || !crate::common::nft::nft_or_skip() {
        return;
    }
    let lab = Lab::create(RxMode::Stack).unwrap();
    crate::common::nft::drop_every_nth(&lab.rx_ns, "ingress", lab::RX_IF, 50);
    let sent = 20_000u64;
    let arriving = sent - sent / 50;
    let mut receiver = rx_serving(&lab, arriving, &["--expect-first", "1"]);
    let flow = "{flow=\"10.99.0.1:0 -> 10.99.0.2:0\"}";
    let received_key = format!("upktgen_rx_flow_received_packets_total{flow}");
    let lost_key = format!("upktgen_rx_flow_lost_packets{flow}");

    // 20,000 frames at 5,000 pps: about four seconds to scrape in.
    let sender = run(
        &lab,
        &["--count", &sent.to_string(), "--ratep", "5000", "--no-live"],
    );
    let mut during: Vec<(f64, f64)> = Vec::new();
    let mut checked = false;
    let s = scrape_while(&lab.rx_ns, sender, |_, body| {
        if state(body) == Some("running")
            && let (Some(r), Some(l)) = (value(body, &received_key), value(body, &lost_key))
        {
            during.push((r, l));
            if !checked && r > 0.0 {
                // The live per-flow series are valid exposition too.
                let (_, text) = scrape_ok(&lab.rx_ns, true).unwrap();
                promtool_ok(&text);
                checked = true;
            }
        }
    });
    assert!(s.status.success(), "{}", stderr(&s));
    assert!(
        during.windows(2).all(|w| w[0].0 <= w[1].0),
        "received went backwards: {during:?}"
    );
    assert!(
        during.iter().any(|&(r, _)| r > 0.0 && r < arriving as f64),
        "no scrape during the run saw the flow's received count growing: {during:?}"
    );
    assert!(
        during.iter().any(|&(_, l)| l > 0.0),
        "no scrape during the run saw the flow's losses: {during:?}"
    );
    assert!(checked);

    let body = wait_for_state(&lab.rx_ns, "finished", &mut receiver);
    let o = receiver.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let report: upktgen::rx::RxReport = serde_json::from_value(crate::common::json(&o)).unwrap();
    assert_eq!(report.sink.flows.len(), 1, "{:?}", report.sink.flows);
    for f in &report.sink.flows {
        let name = upktgen::metrics::flow_name(f);
        for (family, want) in [
            ("upktgen_rx_flow_received_packets_total", f.seq.received),
            ("upktgen_rx_flow_lost_packets", f.seq.lost),
            ("upktgen_rx_flow_duplicate_packets_total", f.seq.duplicates),
            ("upktgen_rx_flow_reordered_packets_total", f.seq.reordered),
        ] {
            let key = format!("{family}{{flow=\"{name}\"}}");
            assert_eq!(value(&body, &key), Some(want as f64), "{key} in\n{body}");
        }
    }
    assert_eq!(report.sink.totals.received, arriving);
    // Every 50th dropped but the last (after the last frame received, invisible to it).
    assert_eq!(report.sink.totals.lost, sent / 50 - 1);
    assert_eq!(
        value(&body, "upktgen_rx_lost_packets"),
        Some(report.sink.totals.lost as f64)
    );
}

fn run_metrics_final_scrape_sees_every_frame_sent() {
    if !root_or_skip() || !tools_or_skip() {
        return;
    }
    let lab = Lab::create(RxMode::Drop).unwrap();
    let count = 5_000u64;
    let n = count.to_string();
    let listen = format!("127.0.0.1:{PORT}");
    let mut sender = run(
        &lab,
        &[
            "--count",
            &n,
            "--no-live",
            "--metrics-listen",
            &listen,
            "--metrics-linger",
            "5s",
        ],
    );
    let body = wait_for_state(&lab.tx_ns, "finished", &mut sender);
    assert_eq!(
        value(
            &body,
            "upktgen_thread_sent_packets_total{thread=\"veth-tx\"}"
        ),
        Some(count as f64),
        "{body}"
    );
    let iface = format!(
        "upktgen_iface_packets_total{{iface=\"{}\",netns=\"{}\",direction=\"tx\"}}",
        lab::TX_IF,
        lab.tx_ns
    );
    assert!(
        value(&body, &iface).is_some_and(|v| v >= count as f64),
        "{iface} in\n{body}"
    );
    // No receiver in this run: no receiver figures.
    assert!(!body.contains("upktgen_rx_frames_total"), "{body}");
    let (_, text) = scrape_ok(&lab.tx_ns, true).unwrap();
    promtool_ok(&text);
    let o = sender.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("Result: OK:"), "{}", stdout(&o));
}

/// A run with a far end serves the far receiver's totals on the sender's endpoint while it
/// runs (read over the agent session each interval), and its report's per-flow figures at
/// the end.
fn run_metrics_follow_the_far_receiver() {
    if !root_or_skip() || !tools_or_skip() {
        return;
    }
    let h = crate::common::hosts::TwoHosts::new();
    let peer = format!("netns:{}", h.b);
    let listen = format!("127.0.0.1:{PORT}");
    let sent = 150_000u64;
    let n = sent.to_string();
    // 150,000 frames at 50,000 pps: three seconds to scrape in.
    let mut sender = spawn_in(
        &h.a,
        &[
            "run",
            "--dev",
            crate::common::hosts::A_DATA,
            "--dst",
            &h.b_ip,
            "--src",
            &h.a_ip,
            "--dst-mac",
            crate::common::hosts::B_MAC,
            "--count",
            &n,
            "--ratep",
            "50000",
            "--peer",
            &peer,
            "--peer-dev",
            crate::common::hosts::B_DATA,
            "--rx-backend",
            "af_packet",
            "--no-live",
            "--interval",
            "250ms",
            "--json",
            "--metrics-listen",
            &listen,
            "--metrics-linger",
            "4s",
        ],
    );
    let mut during: Vec<f64> = Vec::new();
    let body = loop {
        if let Some((_, body)) = scrape_ok(&h.a, false) {
            match state(&body) {
                Some("finished") => break body,
                Some("running") => during.extend(value(&body, "upktgen_rx_frames_total")),
                _ => {}
            }
        }
        assert!(
            sender.try_wait().unwrap().is_none(),
            "upktgen ended before its state was finished"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        during.iter().any(|&v| v > 0.0 && v < sent as f64),
        "no scrape during the run saw the far end receiving: {during:?}"
    );
    let (_, text) = scrape_ok(&h.a, true).unwrap();
    promtool_ok(&text);
    let o = sender.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let j = crate::common::json(&o);
    let r: upktgen::rx::RxReport =
        serde_json::from_value(j["rx_analysis"]["receiver"].clone()).unwrap();
    assert_eq!(r.device, crate::common::hosts::B_DATA);
    assert_eq!(
        value(&body, "upktgen_rx_frames_total"),
        Some(r.frames.frames as f64)
    );
    assert_eq!(r.sink.flows.len(), 1);
    let key = format!(
        "upktgen_rx_flow_received_packets_total{{flow=\"{}\"}}",
        upktgen::metrics::flow_name(&r.sink.flows[0])
    );
    assert_eq!(
        value(&body, &key),
        Some(r.sink.flows[0].seq.received as f64),
        "{key} in\n{body}"
    );
    // The far interface's counters at the end: its own name and namespace, not the lab's.
    let far_if = format!(
        "upktgen_iface_packets_total{{iface=\"{}\",netns=\"{}\",direction=\"rx\"}}",
        crate::common::hosts::B_DATA,
        h.b
    );
    assert_eq!(
        value(&body, &far_if),
        j["rx_iface"]["rx_packets"].as_f64(),
        "{far_if} in\n{body}"
    );
    assert!(!body.contains(upktgen::lab::RX_IF), "{body}");
}

/// One JSON-RPC call on an agent's pipes: the result (panics on an error reply).
fn call(
    stdin: &mut impl Write,
    out: &mut impl std::io::BufRead,
    id: u64,
    method: &str,
    params: serde_json::Value,
) -> serde_json::Value {
    let req = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    writeln!(stdin, "{req}").unwrap();
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let v: serde_json::Value =
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
    v.get("result")
        .cloned()
        .unwrap_or_else(|| panic!("{method}: {v}"))
}

/// `upktgen agent` inside `ns`.
fn agent_in(ns: &str) -> Command {
    let mut c = Command::new("ip");
    c.args(["netns", "exec", ns, env!("CARGO_BIN_EXE_upktgen"), "agent"]);
    c
}

fn agent_metrics_follow_its_receiver_to_the_final_report() {
    if !root_or_skip() || !tools_or_skip() {
        return;
    }
    let lab = Lab::create(RxMode::Stack).unwrap();
    let listen = format!("127.0.0.1:{PORT}");
    let mut agent = agent_in(&lab.rx_ns)
        .args(["--metrics-listen", &listen, "--metrics-linger", "3s"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = agent.stdin.take().unwrap();
    let mut out = std::io::BufReader::new(agent.stdout.take().unwrap());
    let hello = serde_json::json!({"version": env!("CARGO_PKG_VERSION"),
        "protocol": upktgen::agent::proto::PROTOCOL});
    call(&mut stdin, &mut out, 1, "hello", hello);
    let args = serde_json::json!({"args": ["--dev", lab::RX_IF, "--rx-backend", "af_packet"]});
    let started = call(&mut stdin, &mut out, 2, "rx.start", args);
    let id = started["id"].as_u64().unwrap();
    wait_for_state(&lab.rx_ns, "running", &mut agent);

    let count = 5000u64;
    let s = run(&lab, &["--count", &count.to_string(), "--no-live"])
        .wait_with_output()
        .unwrap();
    assert!(s.status.success(), "{}", stderr(&s));
    let stop = serde_json::json!({"id": id, "expected": count});
    let report = call(&mut stdin, &mut out, 3, "rx.stop", stop);
    assert_eq!(report["frames"]["pktgen"], count);
    assert_eq!(report["version"], env!("CARGO_PKG_VERSION"));

    let body = wait_for_state(&lab.rx_ns, "finished", &mut agent);
    assert_eq!(
        value(&body, "upktgen_rx_frames_total"),
        Some(count as f64),
        "{body}"
    );
    assert_eq!(value(&body, "upktgen_rx_lost_packets"), Some(0.0), "{body}");
    let (_, text) = scrape_ok(&lab.rx_ns, true).unwrap();
    promtool_ok(&text);

    // The session ends with its input; the endpoint lingers, then the agent exits cleanly.
    drop(stdin);
    // The agent sees the end of its input within 100 ms; without the linger it would be gone.
    std::thread::sleep(Duration::from_millis(1000));
    assert!(
        agent.try_wait().unwrap().is_none(),
        "no linger after the session"
    );
    let body = scrape_ok(&lab.rx_ns, false)
        .expect("the endpoint lingers")
        .1;
    assert_eq!(value(&body, "upktgen_rx_frames_total"), Some(count as f64));
    // A second agent on the same port: one clear line, non-zero.
    let busy = agent_in(&lab.rx_ns)
        .args(["--metrics-listen", &listen])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!busy.status.success());
    assert!(
        stderr(&busy).contains(&format!("--metrics-listen {listen}: cannot listen")),
        "{}",
        stderr(&busy)
    );
    let o = agent.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(scrape_ok(&lab.rx_ns, false).is_none());
}

pub(crate) const TESTS: &[crate::harness::Test] = crate::tests![
    rx_metrics_are_scraped_during_and_after_the_run,
    rx_flow_metrics_are_live_and_end_equal_to_the_report,
    run_metrics_final_scrape_sees_every_frame_sent,
    run_metrics_follow_the_far_receiver,
    agent_metrics_follow_its_receiver_to_the_final_report,
];
