//! End-to-end: the documents real commands write (runs in the lab, a receiver, a two-ended
//! run with the agent's every message both ways, merge, ndr, a sweep of real runs, a run of
//! an OTG config's streams and a receiver counting streams) are valid against docs/schema,
//! the readers read the older versions they read (a run or a receiver of version 1) and
//! refuse another version, naming the file.

use crate::common::schema as check;

use crate::common::hosts::{self, TwoHosts};
use crate::common::{json, root_or_skip, stderr, tmp_dir, upktgen};
use serde_json::{Value, json};
use std::process::{Command, Stdio};
use upktgen::schema;

const BIN: &str = env!("CARGO_BIN_EXE_upktgen");

fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

fn ok_json(o: &std::process::Output, what: &str) -> Value {
    assert!(o.status.success(), "{what}: {}", stderr(o));
    json(o)
}

fn runs_in_the_lab_and_their_live_lines_match_the_schema() {
    if !root_or_skip() {
        return;
    }
    let at = "+1s";
    let runs: &[&[&str]] = &[
        &["--count", "2000", "--json"],
        &["run", "--count", "2000", "--rx-analyze", "--json"],
        &[
            "run", "--count", "2000", "--ratep", "20000", "--lab-rx", "stack", "--json",
        ],
        &[
            "run",
            "-t",
            "2",
            "--count",
            "2000",
            "--seed",
            "5",
            "--flag",
            "IPSRC_RND",
            "--start-at",
            at,
            "--json",
        ],
        &[
            "run",
            "--lab",
            "dut",
            "--count",
            "500",
            "--rx-analyze",
            "--json",
        ],
        &["run", "--backend", "tx_ring", "--count", "2000", "--json"],
        &["run", "--backend", "af_xdp", "--count", "2000", "--json"],
        &["run", "--backend", "xdp_live", "--count", "2000", "--json"],
        &[
            "run",
            "--xmit-mode",
            "netif_receive",
            "--count",
            "20000",
            "--json",
        ],
    ];
    for args in runs {
        let what = format!("upktgen {}", args.join(" "));
        check::check(schema::RUN, &ok_json(&upktgen(args), &what), &what);
    }
    // Live lines on standard error, the report on standard output.
    let o = upktgen(&[
        "run",
        "--count",
        "200000",
        "--json",
        "--json-lines",
        "--interval",
        "50ms",
    ]);
    check::check(
        schema::RUN,
        &ok_json(&o, "run --json-lines"),
        "run --json-lines",
    );
    let n = check::check_lines(schema::LIVE, &stderr(&o), "run --json-lines (stderr)");
    assert!(n >= 2, "{}", stderr(&o));
    // A script's run.
    let d = tmp_dir("schema", "script");
    let s = d.join("two.pg");
    std::fs::write(
        &s,
        "pgctrl reset\nkpktgend_0 add_device eth0\nkpktgend_1 add_device eth0@1\neth0 count 100\neth0@1 count 200\npgctrl start\n",
    )
    .unwrap();
    let o = upktgen(&["script", "--lab", "--json", s.to_str().unwrap()]);
    check::check(
        schema::RUN,
        &ok_json(&o, "script --json"),
        "script --lab --json",
    );
}

fn merge_of_real_runs_matches_the_schema_and_refuses_another_version() {
    if !root_or_skip() {
        return;
    }
    let d = tmp_dir("schema", "merge");
    let at = (now_ns() + 4_000_000_000).to_string();
    let spawn = |extra: &[&str]| {
        Command::new(BIN)
            .args(["run", "--start-at", &at, "--json"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let a = spawn(&["--count", "3000", "--rx-analyze"]);
    let b = spawn(&["--count", "5000", "--pkt-size", "100"]);
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    let (ja, jb) = (ok_json(&a, "run a"), ok_json(&b, "run b"));
    let (pa, pb) = (d.join("a.json"), d.join("b.json"));
    std::fs::write(&pa, &a.stdout).unwrap();
    std::fs::write(&pb, &b.stdout).unwrap();
    let (sa, sb) = (pa.to_str().unwrap(), pb.to_str().unwrap());
    let m = ok_json(&upktgen(&["merge", "--json", sa, sb]), "merge");
    check::check(schema::MERGE, &m, "merge --json");
    assert_eq!(m["total"]["sent"], 8000);
    // Version 0 (no `schema`: a document from before it) is merged as before.
    let mut old = jb.clone();
    old.as_object_mut().unwrap().remove("schema");
    let p0 = d.join("old.json");
    std::fs::write(&p0, serde_json::to_string(&old).unwrap()).unwrap();
    let m = ok_json(
        &upktgen(&["merge", "--json", sa, p0.to_str().unwrap()]),
        "merge with a version 0 document",
    );
    assert_eq!(m["total"]["sent"], 8000);
    // Versions 1 (a run from before `streams`) and 2 (before `dut.delay_line`) are merged as
    // before.
    for v in [1, 2] {
        let mut old = jb.clone();
        old["schema"] = json!(format!("upktgen.run/{v}"));
        let p = d.join(format!("v{v}.json"));
        std::fs::write(&p, serde_json::to_string(&old).unwrap()).unwrap();
        let m = ok_json(
            &upktgen(&["merge", "--json", sa, p.to_str().unwrap()]),
            &format!("merge with a version {v} document"),
        );
        assert_eq!(m["total"]["sent"], 8000);
    }
    // Another major version: refused, naming the file, nothing printed.
    let mut newer = ja;
    newer["schema"] = json!("upktgen.run/4");
    let p2 = d.join("newer.json");
    std::fs::write(&p2, serde_json::to_string(&newer).unwrap()).unwrap();
    let s2 = p2.to_str().unwrap();
    let o = upktgen(&["merge", s2, sb]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    assert!(
        stderr(&o).contains(&format!(
            "{s2}: a run document of schema version 4 (\"upktgen.run/4\"), written by a newer upktgen"
        )),
        "{}",
        stderr(&o)
    );
}

fn a_receiver_and_a_two_ended_run_with_every_agent_message_match_the_schema() {
    if !root_or_skip() {
        return;
    }
    let h = TwoHosts::new();
    // `upktgen rx` at b, with its live lines, while a sends.
    let count = "20000";
    let rx = Command::new("ip")
        .args(["netns", "exec", &h.b, BIN, "rx", "--dev", hosts::B_DATA])
        .args([
            "--rx-backend",
            "af_xdp",
            "--count",
            count,
            "--duration",
            "30s",
        ])
        .args(["--json", "--hist", "--json-lines", "--interval", "100ms"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    crate::common::wait_for_xdp(&h.b, hosts::B_DATA);
    let s = h.run_a_to_b(20_000, &["--json"]);
    check::check(schema::RUN, &ok_json(&s, "run a to b"), "run --dev");
    let o = rx.wait_with_output().unwrap();
    let r = ok_json(&o, "rx");
    check::check(schema::RX, &r, "rx --json --hist");
    assert_eq!(r["sink"]["totals"]["received"], 20_000);
    let n = check::check_lines(schema::LIVE, &stderr(&o), "rx --json-lines (stderr)");
    assert!(n >= 2, "{}", stderr(&o));
    // The receiver's document and a sender's: merge takes them, and its document matches.
    let d = &h.dir;
    let (ps, pr) = (d.join("sender.json"), d.join("receiver.json"));
    std::fs::write(&ps, &s.stdout).unwrap();
    std::fs::write(&pr, &o.stdout).unwrap();
    let m = ok_json(
        &upktgen(&[
            "merge",
            "--json",
            ps.to_str().unwrap(),
            pr.to_str().unwrap(),
        ]),
        "merge sender receiver",
    );
    check::check(schema::MERGE, &m, "merge of a sender and a receiver");
    assert_eq!(m["received"]["received"], 20_000);
    // A two-ended run: the agent at b through a program that records the protocol both
    // ways (then runs the real agent).
    let (req, resp) = (d.join("requests.jsonl"), d.join("responses.jsonl"));
    let shim = d.join("agent.sh");
    std::fs::write(
        &shim,
        format!(
            "#!/bin/sh\ntee -a '{}' | '{BIN}' \"$@\" | tee -a '{}'\n",
            req.display(),
            resp.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
    let peer = format!("netns:{}", h.b);
    // 20,000 frames at 50 kpps with live lines every 100 ms: the controller also asks for
    // the far receiver's totals while it runs (rx.stats).
    let o = h.run_a_to_b(
        20_000,
        &[
            "--peer",
            &peer,
            "--peer-dev",
            hosts::B_DATA,
            "--peer-agent",
            shim.to_str().unwrap(),
            "--json",
            "--json-lines",
            "--interval",
            "100ms",
        ],
    );
    let j = ok_json(&o, "run --peer");
    check::check(schema::RUN, &j, "run --peer");
    let n = check::check_lines(
        schema::LIVE,
        &stderr(&o),
        "run --peer --json-lines (stderr)",
    );
    assert!(n >= 2, "{}", stderr(&o));
    assert!(j["peer"].is_object() && j["rx_analysis"]["receiver"].is_object());
    let requests = std::fs::read_to_string(&req).unwrap();
    let responses = std::fs::read_to_string(&resp).unwrap();
    let nq = check::check_lines(schema::AGENT, &requests, "the controller's requests");
    let nr = check::check_lines(schema::AGENT, &responses, "the agent's responses");
    assert_eq!(nq, nr, "one response per request:\n{requests}\n{responses}");
    for m in [
        "hello", "counters", "rx.start", "rx.stats", "rx.stop", "shutdown",
    ] {
        assert!(
            requests.contains(&format!("\"method\":\"{m}\"")),
            "{m} in {requests}"
        );
    }
    // The agent answers a request of another version with an error naming it.
    let o = h.in_b(&["sh", "-c", &format!(
        "printf '%s\\n' '{{\"schema\":\"upktgen.agent/4\",\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"hello\",\"params\":{{\"version\":\"0\",\"protocol\":1}}}}' | '{BIN}' agent"
    )]);
    assert!(o.status.success(), "{}", stderr(&o));
    let n = check::check_lines(
        schema::AGENT,
        &crate::common::stdout(&o),
        "the agent's refusal",
    );
    assert_eq!(n, 1);
    let v: Value = serde_json::from_str(crate::common::stdout(&o).trim()).unwrap();
    assert_eq!(v["error"]["code"], -32600, "{v}");
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("schema version 4 (\"upktgen.agent/4\")"),
        "{msg}"
    );
}

fn ndr_writes_documents_matching_the_schema_and_its_readers_check_versions() {
    if !root_or_skip() {
        return;
    }
    let d = tmp_dir("schema", "ndr");
    let out = d.join("out");
    let o = upktgen(&[
        "ndr",
        "--sizes",
        "64",
        "--trial",
        "200ms",
        "--search-trial",
        "100ms",
        "--precision",
        "20%",
        "--out",
        out.to_str().unwrap(),
        "--json",
        "--",
        "--lab",
        "dut",
    ]);
    check::check(schema::NDR, &ok_json(&o, "ndr --json"), "ndr --json");
    check::check(schema::NDR, &check::read(&out.join("ndr.json")), "ndr.json");
    let trials = out.join("trials.jsonl");
    let text = std::fs::read_to_string(&trials).unwrap();
    let mut lines = text.lines();
    let header: Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    check::check(schema::NDR_RESULTS, &header, "trials.jsonl:1");
    let rest: String = lines.map(|l| format!("{l}\n")).collect();
    assert!(check::check_lines(schema::NDR_TRIAL, &rest, "trials.jsonl (trials)") >= 2);
    let ts = trials.to_str().unwrap();
    let o = upktgen(&["compare", ts, ts]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Version 0: the lines without `schema` (a file from before it) are read as before.
    // (As the older upktgen wrote them: the header starts with its format.)
    let old = text
        .replace("\"schema\":\"upktgen.ndr-results/1\",", "")
        .replace("\"schema\":\"upktgen.ndr-trial/3\",", "");
    assert!(old.starts_with("{\"upktgen_ndr\":1,") && !old.contains("\"schema\""));
    let p0 = d.join("old.jsonl");
    std::fs::write(&p0, old).unwrap();
    let o = upktgen(&["compare", p0.to_str().unwrap(), ts]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Version 1's trials (before a config's flows were counted) and version 2's (before
    // their latency) are read as they were.
    for older in [1, 2] {
        let v = text.replace(
            "\"upktgen.ndr-trial/3\"",
            &format!("\"upktgen.ndr-trial/{older}\""),
        );
        let p1 = d.join(format!("v{older}.jsonl"));
        std::fs::write(&p1, v).unwrap();
        let o = upktgen(&["compare", p1.to_str().unwrap(), ts]);
        assert!(o.status.success(), "{older}: {}", stderr(&o));
    }
    // A trial of another version: refused, naming the file and its line, by compare and
    // by --resume.
    let newer = text.replacen("\"upktgen.ndr-trial/3\"", "\"upktgen.ndr-trial/4\"", 2);
    let p2 = d.join("newer.jsonl");
    std::fs::write(&p2, newer).unwrap();
    let s2 = p2.to_str().unwrap();
    let want = format!(
        "{s2}:2: an ndr-trial document of schema version 4 (\"upktgen.ndr-trial/4\"), written by a newer upktgen"
    );
    let o = upktgen(&["compare", ts, s2]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains(&want), "{}", stderr(&o));
    let o = upktgen(&["ndr", "--resume", s2]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains(&want), "{}", stderr(&o));
    // A header of another version.
    let p3 = d.join("newer-header.jsonl");
    std::fs::write(
        &p3,
        text.replacen("\"upktgen.ndr-results/1\"", "\"upktgen.ndr-results/3\"", 1),
    )
    .unwrap();
    let s3 = p3.to_str().unwrap();
    let o = upktgen(&["compare", s3, ts]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains(&format!(
            "{s3}:1: an ndr-results document of schema version 3"
        )),
        "{}",
        stderr(&o)
    );
}

fn a_sweep_of_real_runs_writes_a_runs_json_matching_the_schema() {
    if !root_or_skip() {
        return;
    }
    let d = tmp_dir("schema", "sweep");
    let f = d.join("s.toml");
    std::fs::write(
        &f,
        "[sweep]\nname = \"schema\"\ncommand = \"run\"\nrepetitions = 1\n\n[base]\ncount = 2000\n\n[[dimension]]\nname = \"pkt_size\"\nvalues = [60, 500]\n",
    )
    .unwrap();
    let out = d.join("out");
    let o = upktgen(&["sweep", f.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = check::read(&out.join("runs.json"));
    check::check(schema::SWEEP, &v, "runs.json of real runs");
    for r in v["runs"].as_array().unwrap() {
        check::check(schema::RUN, &r["json"], "a sweep's run");
    }
}

/// Two flows of 1,000 frames a second for 1 s, from the lab's sending port to its receiving
/// one (docs/otg.md).
fn two_flows() -> Value {
    let v = |x: Value| json!({"choice": "value", "value": x});
    let flow = |name: &str, dst_port: u16| {
        json!({
            "name": name,
            "tx_rx": {"choice": "port", "port": {"tx_name": "p1", "rx_names": ["p2"]}},
            "packet": [
                {"choice": "ethernet", "ethernet": {"src": v(json!("02:00:00:00:00:01"))}},
                {"choice": "ipv4", "ipv4": {"src": v(json!("10.99.0.1")), "dst": v(json!("198.18.1.1"))}},
                {"choice": "udp", "udp": {"src_port": v(json!(9)), "dst_port": v(json!(dst_port))}}
            ],
            "size": {"choice": "fixed", "fixed": 128},
            "rate": {"choice": "pps", "pps": 1000},
            "duration": {"choice": "fixed_seconds", "fixed_seconds": {"seconds": 1.0}},
            "metrics": {"enable": true, "loss": true, "latency": {"enable": true}}
        })
    };
    json!({
        "ports": [{"name": "p1", "location": "lab:tx"}, {"name": "p2", "location": "lab:rx"}],
        "flows": [flow("a", 1000), flow("b", 2000)]
    })
}

fn a_run_of_streams_and_a_stream_receiver_match_the_schema_and_merge_reads_them() {
    if !root_or_skip() {
        return;
    }
    // The config in a directory of its own under the temporary one, removed when dropped.
    let d = tmp_dir("schema", "streams");
    let cfg = d.join("two-flows.json");
    std::fs::write(&cfg, serde_json::to_vec_pretty(&two_flows()).unwrap()).unwrap();
    let o = upktgen(&["run", "--config", cfg.to_str().unwrap(), "--json"]);
    let j = ok_json(&o, "run --config");
    check::check(schema::RUN, &j, "run --config F --json");
    let sent = j["streams"]["streams"]
        .as_array()
        .expect("the run's streams");
    let got = j["rx_analysis"]["receiver"]["streams"]["streams"]
        .as_array()
        .expect("the receiver's streams");
    assert_eq!((sent.len(), got.len()), (2, 2), "{j}");
    for (s, r) in sent.iter().zip(got) {
        assert_eq!(s["tx_frames"], 1000, "{s}");
        assert_eq!(s["rx_frames"], s["tx_frames"], "{s}");
        assert_eq!(r["name"], s["name"], "{r}");
        assert!(r["latency"]["count"].as_u64() > Some(0), "{r}");
    }
    assert_eq!(j["rx_analysis"]["receiver"]["streams"]["expected"], 2);
    // A receiver counting two streams for 1 s in a namespace of its own (nothing sends to
    // it: the streams are there, empty).
    let lab = upktgen::lab::Lab::create(upktgen::lab::RxMode::Stack).unwrap();
    let o = Command::new("ip")
        .args(["netns", "exec", &lab.rx_ns, BIN, "rx"])
        .args(["--dev", upktgen::lab::RX_IF, "--rx-backend", "af_packet"])
        .args([
            "--stream",
            "a",
            "--stream",
            "b",
            "--duration",
            "1s",
            "--json",
        ])
        .output()
        .unwrap();
    drop(lab);
    let r = ok_json(&o, "rx --stream a --stream b");
    check::check(schema::RX, &r, "rx --stream a --stream b --json");
    let st = &r["streams"];
    assert_eq!(st["expected"], 2, "{st}");
    assert_eq!(st["streams"][0]["name"], "a", "{st}");
    assert_eq!(st["streams"][1]["name"], "b", "{st}");
    assert_eq!(r["stopped_by"], "duration");
    // merge reads both (version 2, with their streams).
    let (pr, px) = (d.join("run.json"), d.join("rx.json"));
    std::fs::write(&pr, serde_json::to_vec(&j).unwrap()).unwrap();
    std::fs::write(&px, &o.stdout).unwrap();
    let m = ok_json(
        &upktgen(&[
            "merge",
            "--json",
            pr.to_str().unwrap(),
            px.to_str().unwrap(),
        ]),
        "merge of a run of streams and a stream receiver",
    );
    check::check(schema::MERGE, &m, "merge of version 2 documents");
    assert_eq!(m["total"]["sent"], 2000);
    // And as version 1 documents without their streams.
    let mut old_run = j.clone();
    old_run["schema"] = json!("upktgen.run/1");
    let obj = old_run.as_object_mut().unwrap();
    obj.remove("streams");
    obj["rx_analysis"]["receiver"]
        .as_object_mut()
        .unwrap()
        .remove("streams");
    let mut old_rx = r.clone();
    old_rx["schema"] = json!("upktgen.rx/1");
    old_rx.as_object_mut().unwrap().remove("streams");
    std::fs::write(&pr, serde_json::to_vec(&old_run).unwrap()).unwrap();
    std::fs::write(&px, serde_json::to_vec(&old_rx).unwrap()).unwrap();
    let m = ok_json(
        &upktgen(&[
            "merge",
            "--json",
            pr.to_str().unwrap(),
            px.to_str().unwrap(),
        ]),
        "merge of version 1 documents",
    );
    assert_eq!(m["total"]["sent"], 2000);
}

/// A far end's receiver counting streams (what `run --config` asks of a `netns:` or `ssh://`
/// port): the agent's `rx.stop` result carries them, and every line both ways matches the
/// agent's schema. The requests are the controller's, typed here (`--peer-agent`, the way
/// to record a run's, does not go with `--config`).
fn an_agent_s_receiver_of_streams_answers_in_its_schema() {
    if !root_or_skip() {
        return;
    }
    use std::io::Write;
    let lab = upktgen::lab::Lab::create(upktgen::lab::RxMode::Stack).unwrap();
    let line = |id: u32, method: &str, params: Value| {
        json!({"schema": schema::AGENT, "jsonrpc": "2.0", "id": id, "method": method,
               "params": params})
        .to_string()
    };
    let args = [
        "--dev",
        upktgen::lab::RX_IF,
        "--rx-backend",
        "af_packet",
        "--stream",
        "a",
        "--stream",
        "b",
    ];
    let requests = [
        line(
            1,
            "hello",
            json!({"version": upktgen::agent::proto::VERSION,
                   "protocol": upktgen::agent::proto::PROTOCOL}),
        ),
        line(2, "rx.start", json!({"args": args})),
        line(3, "rx.stats", json!({"id": 1})),
        line(
            4,
            "rx.stop",
            json!({"id": 1, "expected": 0, "settle_ms": 100, "max_wait_ms": 1000}),
        ),
        line(5, "shutdown", Value::Null),
    ]
    .map(|l| l + "\n")
    .concat();
    let mut agent = Command::new("ip")
        .args(["netns", "exec", &lab.rx_ns, BIN, "agent"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    agent
        .stdin
        .take()
        .unwrap()
        .write_all(requests.as_bytes())
        .unwrap();
    let o = agent.wait_with_output().unwrap();
    drop(lab);
    assert!(o.status.success(), "{}", stderr(&o));
    let responses = crate::common::stdout(&o);
    check::check_lines(schema::AGENT, &requests, "requests to the agent");
    let n = check::check_lines(schema::AGENT, &responses, "the agent's responses");
    assert_eq!(n, 5, "{responses}");
    let stop: Value = serde_json::from_str(responses.lines().nth(3).unwrap()).unwrap();
    let st = &stop["result"]["streams"];
    assert_eq!(st["expected"], 2, "{stop}");
    assert_eq!(st["streams"][1]["name"], "b", "{stop}");
}

pub(crate) const TESTS: &[crate::harness::Test] = crate::tests![
    runs_in_the_lab_and_their_live_lines_match_the_schema,
    merge_of_real_runs_matches_the_schema_and_refuses_another_version,
    a_receiver_and_a_two_ended_run_with_every_agent_message_match_the_schema,
    ndr_writes_documents_matching_the_schema_and_its_readers_check_versions,
    a_sweep_of_real_runs_writes_a_runs_json_matching_the_schema,
    a_run_of_streams_and_a_stream_receiver_match_the_schema_and_merge_reads_them,
    an_agent_s_receiver_of_streams_answers_in_its_schema,
];
