//! The JSON schemas of docs/schema: one per kind of document, each a valid draft 2020-12
//! schema naming the version the code writes; VERSIONS records each version's shape, so a
//! schema changed without a new version fails here; documents made in-process and by the
//! commands that need no root (sim, a simulated sweep, compare) are valid against them, and
//! the readers read the older versions they read and refuse another. Real runs, receivers,
//! ndr, merge and the agent are in schema.rs.

use crate::common::schema as check;

use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use upktgen::schema;

const BIN: &str = env!("CARGO_BIN_EXE_upktgen");

fn kinds() -> Vec<(&'static str, &'static str)> {
    schema::ALL.iter().map(|t| (schema::kind(t), *t)).collect()
}

/// Every `$ref` into defs.schema.json (`defs.schema.json#/$defs/NAME` outside it,
/// `#/$defs/NAME` inside) anywhere in `v`.
fn def_refs(v: &Value, inside_defs: bool, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            if let Some(Value::String(r)) = m.get("$ref") {
                let prefix = if inside_defs {
                    "#/$defs/"
                } else {
                    "defs.schema.json#/$defs/"
                };
                if let Some(name) = r.strip_prefix(prefix) {
                    out.insert(name.to_string());
                }
            }
            m.values().for_each(|x| def_refs(x, inside_defs, out));
        }
        Value::Array(a) => a.iter().for_each(|x| def_refs(x, inside_defs, out)),
        _ => {}
    }
}

/// FNV-1a, 64 bits: a digest for telling shapes apart (not a defence against anyone).
fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The shape digest of `kind`: its schema file and every shared definition it uses
/// (transitively), each as [`shape`]s it; whitespace, the order of keys and the annotations
/// (descriptions, titles, comments) do not count, a change of any definition it uses does.
fn shape_digest(kind: &str) -> String {
    let own = check::read(&check::file(kind));
    let defs = check::read(&check::dir().join("defs.schema.json"));
    let mut names = BTreeSet::new();
    def_refs(&own, false, &mut names);
    // Referenced definitions, and theirs, until no new name appears.
    loop {
        let mut more = names.clone();
        for n in &names {
            let d = defs["$defs"].get(n).unwrap_or_else(|| {
                panic!("{kind}.schema.json: no definition {n} in defs.schema.json")
            });
            def_refs(d, true, &mut more);
        }
        if more == names {
            break;
        }
        names = more;
    }
    let mut text = serde_json::to_string(&shape(&own)).unwrap();
    for n in &names {
        text.push('\n');
        text.push_str(n);
        text.push_str(&serde_json::to_string(&shape(&defs["$defs"][n])).unwrap());
    }
    format!("{:016x}", fnv1a64(text.as_bytes()))
}

/// Keywords that describe and do not validate: a change of them is not a new shape.
const ANNOTATIONS: &[&str] = &["title", "description", "$comment", "examples"];

/// The schema `v` as its shape: annotations left out, every object's keys in order
/// (whatever serde_json's map keeps). Names of properties and definitions are kept, even
/// `description`.
fn shape(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m
                .keys()
                .filter(|k| !ANNOTATIONS.contains(&k.as_str()))
                .collect();
            keys.sort();
            let mut out = serde_json::Map::new();
            for k in keys {
                let x = &m[k];
                let kept = match (k.as_str(), x) {
                    // Maps from names to schemas: the names stay, each schema is shaped.
                    (
                        "properties" | "$defs" | "patternProperties" | "dependentSchemas",
                        Value::Object(named),
                    ) => {
                        let mut names: Vec<&String> = named.keys().collect();
                        names.sort();
                        let mut o = serde_json::Map::new();
                        for n in names {
                            o.insert(n.clone(), shape(&named[n]));
                        }
                        Value::Object(o)
                    }
                    // Values, not schemas: as they are.
                    ("enum" | "const" | "required", _) => x.clone(),
                    _ => shape(x),
                };
                out.insert(k.clone(), kept);
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(shape).collect()),
        x => x.clone(),
    }
}

/// docs/schema/VERSIONS: `KIND VERSION DIGEST` lines (and `#` comments).
fn versions() -> Vec<(String, u32, String)> {
    let p = check::dir().join("VERSIONS");
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(w.len(), 3, "VERSIONS: `{l}` is not `KIND VERSION DIGEST`");
            let v = w[1]
                .parse()
                .unwrap_or_else(|_| panic!("VERSIONS: `{l}`: {} is not a version", w[1]));
            (w[0].to_string(), v, w[2].to_string())
        })
        .collect()
}

/// The line each kind's shape has now: `cargo test --test schema -- --ignored --nocapture
/// shape_digests` (to add a version to docs/schema/VERSIONS).
#[ignore]
fn shape_digests() {
    for (kind, tag) in kinds() {
        println!(
            "{kind} {} {}",
            schema::parse(tag).unwrap().1,
            shape_digest(kind)
        );
    }
}

fn every_kind_has_a_valid_schema_naming_the_version_the_code_writes() {
    for (kind, tag) in kinds() {
        let path = check::file(kind);
        let s = check::read(&path);
        jsonschema::meta::validate(&s)
            .unwrap_or_else(|e| panic!("{}: not a valid JSON Schema: {e}", path.display()));
        assert_eq!(
            s["$schema"],
            "https://json-schema.org/draft/2020-12/schema",
            "{}",
            path.display()
        );
        // The const of its `schema` property is the code's tag, and no other version of
        // the kind is named anywhere in it.
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains(&format!("\"const\": \"{tag}\"")),
            "{}: no `\"const\": \"{tag}\"` for the schema field (src/schema.rs writes {tag})",
            path.display()
        );
        let other = format!("\"upktgen.{kind}/");
        for (i, _) in text.match_indices(&other) {
            assert!(
                text[i + 1..].starts_with(tag),
                "{}: names another version of {kind} than {tag}",
                path.display()
            );
        }
        // It compiles, with its references to defs.schema.json resolved.
        let _ = check::validator(kind);
    }
    // Nothing in the directory that no kind owns.
    let mut files: Vec<String> = std::fs::read_dir(check::dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut want: Vec<String> = kinds()
        .iter()
        .map(|(k, _)| format!("{k}.schema.json"))
        .collect();
    want.extend(["README.md", "VERSIONS", "defs.schema.json"].map(String::from));
    want.sort();
    assert_eq!(
        files, want,
        "docs/schema holds one schema per kind of src/schema.rs"
    );
    let defs = check::read(&check::dir().join("defs.schema.json"));
    jsonschema::meta::validate(&defs).unwrap();
}

fn a_schema_changed_without_a_new_version_fails_here() {
    let recorded = versions();
    for (kind, tag) in kinds() {
        let (_, version) = schema::parse(tag).unwrap();
        let lines: Vec<&(String, u32, String)> =
            recorded.iter().filter(|(k, _, _)| k == kind).collect();
        // Versions 1, 2, ... each once, in order: a version's line is never rewritten,
        // a new shape is a new line.
        let vs: Vec<u32> = lines.iter().map(|l| l.1).collect();
        let want: Vec<u32> = (1..=vs.len() as u32).collect();
        assert_eq!(
            vs, want,
            "VERSIONS: the versions of {kind} must be 1, 2, ... each once"
        );
        let digest = shape_digest(kind);
        let Some(last) = lines.last() else {
            panic!("VERSIONS: no line for {kind}; add `{kind} {version} {digest}`");
        };
        assert_eq!(
            last.1, version,
            "src/schema.rs writes {tag}, but the last version of {kind} in docs/schema/VERSIONS is {}",
            last.1
        );
        assert_eq!(
            last.2,
            digest,
            "docs/schema/{kind}.schema.json (or a definition of defs.schema.json it uses) is not the shape \
             recorded for {tag}: a changed shape is a new version. Make it upktgen.{kind}/{} in src/schema.rs \
             and in the schema's const, and add the line `{kind} {} {digest}` to docs/schema/VERSIONS \
             (readers refuse the other version)",
            version + 1,
            version + 1
        );
    }
    for (k, _, _) in &recorded {
        assert!(
            kinds().iter().any(|(kind, _)| kind == k),
            "VERSIONS names {k}, which src/schema.rs does not write"
        );
    }
}

fn the_digest_sees_a_definitions_change_but_not_the_layout() {
    let a = json!({"type": "object", "properties": {"a": {"type": "integer"}}});
    let b: Value = serde_json::from_str(
        "{\"properties\":{\"a\":{\"type\":\"integer\"}},\n \"type\":\"object\"}",
    )
    .unwrap();
    let d = |v: &Value| fnv1a64(serde_json::to_string(&shape(v)).unwrap().as_bytes());
    assert_eq!(d(&a), d(&b));
    let c = json!({"type": "object", "properties": {"a": {"type": "number"}}});
    assert_ne!(d(&a), d(&c));
    // A description is not a shape; a property named `description` is.
    let described = json!({"type": "object", "description": "x",
                           "properties": {"a": {"type": "integer", "description": "y"}}});
    assert_eq!(d(&a), d(&described));
    let named = json!({"type": "object", "properties": {"a": {"type": "integer"},
                                                          "description": {"type": "string"}}});
    assert_ne!(d(&a), d(&named));
    // rx uses rx_report, which uses flow_addr (through the flows): both count.
    let mut names = BTreeSet::new();
    def_refs(&check::read(&check::file("rx")), false, &mut names);
    assert!(names.contains("rx_report"), "{names:?}");
}

/// tests/data/run.json: a run document as the lab wrote it at version 1 (before `streams`).
fn run_of_version_1() -> Value {
    let v = check::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/run.json"));
    assert_eq!(v["schema"], "upktgen.run/1", "tests/data/run.json");
    v
}

/// A run document as the lab writes it, to mutate (validated first): version 1's, whose
/// shape is version 2's without the fields it added, retagged (the receiver's `ipdv`, which
/// version 2 always writes, null: the run had no two consecutive delays to tell).
fn a_real_looking_run() -> Value {
    let mut v = run_of_version_1();
    v["schema"] = json!(schema::RUN);
    if v["rx_analysis"]["receiver"]["sink"].is_object() {
        v["rx_analysis"]["receiver"]["sink"]["ipdv"] = Value::Null;
    }
    check::check(schema::RUN, &v, "tests/data/run.json");
    v
}

fn strict_schemas_refuse_a_new_field_a_missing_one_and_another_version() {
    let good = a_real_looking_run();
    let mut extra = good.clone();
    extra["outcome"]["result"]["new_counter"] = json!(1);
    let e = check::errors("run", &extra);
    assert!(
        e.iter()
            .any(|l| l.starts_with("/outcome/result") && l.contains("new_counter")),
        "{e:?}"
    );
    let mut extra = good.clone();
    extra["surprise"] = json!(true);
    assert!(!check::errors("run", &extra).is_empty());
    let mut missing = good.clone();
    missing.as_object_mut().unwrap().remove("reconciliation");
    let e = check::errors("run", &missing);
    assert!(e.iter().any(|l| l.contains("reconciliation")), "{e:?}");
    let mut other = good.clone();
    other["schema"] = json!("upktgen.run/2");
    assert!(!check::errors("run", &other).is_empty());
    // The schema file is the current version's: an older tag is not its document.
    assert!(!check::errors("run", &run_of_version_1()).is_empty());
    let mut untagged = good.clone();
    untagged.as_object_mut().unwrap().remove("schema");
    assert!(!check::errors("run", &untagged).is_empty());
    // Inside a shared definition too (the receiver's report nested in the run's).
    let mut nested = good;
    if nested["rx_analysis"].is_object() {
        nested["rx_analysis"]["receiver"]["sink"]["totals"]["extra"] = json!(0);
        assert!(!check::errors("run", &nested).is_empty());
    }
}

fn live_lines_and_agent_messages_made_in_process_are_valid() {
    let s = upktgen::live::LiveSample::default();
    let line = serde_json::to_value(schema::tagged(schema::LIVE, &s)).unwrap();
    check::check(schema::LIVE, &line, "a live line");
    use upktgen::agent::proto::{Request, Response, code};
    for r in [
        Response::ok(json!(1), Value::Null),
        Response::ok(json!(2), json!({"realtime_ns": 1, "monotonic_ns": 2})),
        Response::err(
            json!(3),
            code::FAILED,
            "rx.start: --dev nosuch0: no such interface",
        ),
        Response::err(Value::Null, code::PARSE_ERROR, "not a JSON-RPC request"),
    ] {
        let v = serde_json::to_value(&r).unwrap();
        check::check(schema::AGENT, &v, "a response");
    }
    let req = Request {
        schema: Some(schema::AGENT.into()),
        jsonrpc: "2.0".into(),
        id: json!(7),
        method: "rx.stop".into(),
        params: json!({"id": 1, "expected": 10, "settle_ms": 250, "max_wait_ms": 3000}),
    };
    check::check(
        schema::AGENT,
        &serde_json::to_value(&req).unwrap(),
        "a request",
    );
    // A request's params are checked per method.
    let mut bad = serde_json::to_value(&req).unwrap();
    bad["params"] = json!({"id": "one"});
    assert!(!check::errors("agent", &bad).is_empty());
    // A response with both a result and an error is not one.
    let mut both = serde_json::to_value(Response::ok(json!(1), Value::Null)).unwrap();
    both["error"] = json!({"code": 1, "message": "x"});
    assert!(!check::errors("agent", &both).is_empty());
}

fn upktgen(args: &[&str]) -> std::process::Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn stdout_json(o: &std::process::Output, what: &str) -> Value {
    assert!(
        o.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{what}: not JSON: {e}"))
}

fn tmp(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("upktgen-schema-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

const SIM_SWEEP: &str = r#"
[sweep]
name = "schema"
command = "sim"
repetitions = 3

[base]
count = 20000

[[dimension]]
name = "start_thresh"
values = [1, 16]
labels = ["wake at 1", "wake at 16"]

[compare]
dimension = "start_thresh"
baseline = 1
"#;

/// runs.json of a simulated sweep (no root), validated.
fn sim_sweep(d: &Path) -> std::path::PathBuf {
    let f = d.join("s.toml");
    std::fs::write(&f, SIM_SWEEP).unwrap();
    let out = d.join("out");
    let o = upktgen(&["sweep", f.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rj = out.join("runs.json");
    let v = check::read(&rj);
    check::check(schema::SWEEP, &v, "a simulated sweep's runs.json");
    for r in v["runs"].as_array().unwrap() {
        check::check(schema::SIM, &r["json"], "a sweep's run");
    }
    rj
}

/// `upktgen ARGS` succeeds and prints a document valid against `tag`'s schema.
fn prints_valid(tag: &str, args: &[&str]) -> Value {
    let what = format!("upktgen {}", args.join(" "));
    let v = stdout_json(&upktgen(args), &what);
    check::check(tag, &v, &what);
    v
}

fn sim_and_a_simulated_sweep_write_valid_documents() {
    prints_valid(schema::SIM, &["sim", "--json", "--count", "20000"]);
    prints_valid(
        schema::SIM,
        &[
            "sim",
            "--json",
            "--count",
            "20000",
            "--start-thresh",
            "16",
            "--jitter",
            "0.1",
        ],
    );
    // A grid, with a point that cannot run (a start threshold above the ring).
    let v = prints_valid(
        schema::SIM_SWEEP,
        &[
            "sim",
            "--json",
            "--count",
            "20000",
            "--sweep",
            "ring=16,64",
            "--sweep",
            "start-thresh=1,32",
        ],
    );
    assert!(
        v["points"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["outcome"].is_null())
    );
    prints_valid(
        schema::SIM_SEED,
        &["sim", "--preset", "seed", "--json", "--count", "20000"],
    );
    let d = tmp("sweep");
    sim_sweep(&d);
    let _ = std::fs::remove_dir_all(&d);
}

/// `upktgen compare ARGS`: exit 1 and its message.
fn refused(args: &[&str]) -> String {
    let o = upktgen(args);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{args:?}: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn compare_and_redraw_refuse_another_version_naming_the_file_and_read_version_0() {
    let d = tmp("compare");
    let rj = sim_sweep(&d);
    let rjs = rj.to_str().unwrap();
    let v = check::read(&rj);
    // Version 1, as written.
    let o = upktgen(&["compare", rjs]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Version 0: the same without `schema` (a runs.json from before it) is read as before.
    let mut old = v.clone();
    old.as_object_mut().unwrap().remove("schema");
    let p0 = d.join("old.json");
    std::fs::write(&p0, serde_json::to_string(&old).unwrap()).unwrap();
    let o = upktgen(&["compare", p0.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Another major version: refused, naming the file.
    let mut newer = v.clone();
    newer["schema"] = json!("upktgen.sweep/2");
    let p2 = d.join("newer.json");
    std::fs::write(&p2, serde_json::to_string(&newer).unwrap()).unwrap();
    let p2s = p2.to_str().unwrap();
    let e = refused(&["compare", p2s]);
    assert!(
        e.contains(&format!("{p2s}: a sweep document of schema version 2 (\"upktgen.sweep/2\"), written by a newer upktgen")),
        "{e}"
    );
    let e = refused(&["compare", rjs, p2s]);
    assert!(
        e.contains(&format!("{p2s}: a sweep document of schema version 2")),
        "{e}"
    );
    // --redraw reads runs.json through the same check.
    std::fs::copy(&p2, d.join("out/runs.json")).unwrap();
    let e = refused(&["sweep", "--redraw", d.join("out").to_str().unwrap()]);
    assert!(
        e.contains("runs.json: a sweep document of schema version 2"),
        "{e}"
    );
    // A run of another version inside an array, and a document compare does not take.
    let run = &v["runs"][0]["json"];
    let mut newer_run = run.clone();
    newer_run["schema"] = json!("upktgen.sim/9");
    let pa = d.join("array.json");
    std::fs::write(
        &pa,
        serde_json::to_string(&json!([run, newer_run])).unwrap(),
    )
    .unwrap();
    let pas = pa.to_str().unwrap();
    let e = refused(&["compare", pas, rjs]);
    assert!(
        e.contains(&format!(
            "{pas} (element 1): a sim document of schema version 9"
        )),
        "{e}"
    );
    let pm = d.join("merged.json");
    std::fs::write(&pm, r#"{"schema": "upktgen.merge/1", "senders": []}"#).unwrap();
    let pms = pm.to_str().unwrap();
    let e = refused(&["compare", pms, rjs]);
    assert!(
        e.contains(&format!(
            "{pms}: a merge document (\"upktgen.merge/1\"): compare takes"
        )),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// The streams' parts of a run and of its receiver, made in-process as `run --config` makes
/// them: stream 0 all received, stream 1 its first 40 of 50.
fn streams_made_in_process() -> (Value, Value) {
    use upktgen::rx::streams::StreamTable;
    use upktgen::wire::signature::Signature;
    let mut table = StreamTable::new(2, true).unwrap();
    for (stream, n) in [(0u16, 100u32), (1, 40)] {
        for seq in 0..n {
            let sig = Signature {
                stream,
                seq,
                tx_ns: 1_000,
            };
            table.record(&sig, 60, 2_000 + u64::from(seq), 0);
        }
    }
    let names = ["a".to_string(), "b".to_string()];
    // One shown, the other summed in `rest`.
    let rx = table.report(&names, 1);
    let run = upktgen::report::streams::StreamsRun::new(
        "f.json".into(),
        ("p1 (lab:tx)".into(), "p2 (lab:rx)".into()),
        (&[0, 1], &names),
        &upktgen::stream::multi::Tally::of(&[(100, 6000), (50, 3000)]),
        Some(&rx),
    );
    (
        serde_json::to_value(&run).unwrap(),
        serde_json::to_value(&rx).unwrap(),
    )
}

fn a_run_and_a_receiver_with_streams_made_in_process_are_valid_and_strict() {
    let (run_streams, rx_streams) = streams_made_in_process();
    assert!(rx_streams["rest"].is_object() && rx_streams["streams"][0]["latency"].is_object());
    let mut run = a_real_looking_run();
    run["streams"] = run_streams;
    run["rx_analysis"]["receiver"]["streams"] = rx_streams.clone();
    check::check(schema::RUN, &run, "a run with streams");
    let mut rx = run["rx_analysis"]["receiver"].clone();
    rx["schema"] = json!(schema::RX);
    check::check(schema::RX, &rx, "a receiver with streams");
    // Strict inside them too.
    let mut extra = run.clone();
    extra["streams"]["streams"][1]["surprise"] = json!(1);
    assert!(!check::errors("run", &extra).is_empty());
    let mut extra = rx.clone();
    extra["streams"]["aggregate"]["surprise"] = json!(1);
    assert!(!check::errors("rx", &extra).is_empty());
    let mut missing = rx.clone();
    missing["streams"]["streams"][0]
        .as_object_mut()
        .unwrap()
        .remove("lost");
    assert!(!check::errors("rx", &missing).is_empty());
    // A run of several ports, made of the code's own types: each of its runs a run
    // document; strict at every level.
    let ports = run_ports_made_in_process(&run);
    check::check(schema::RUN_PORTS, &ports, "a run of two ports");
    let mut extra = ports.clone();
    extra["flows"][1]["surprise"] = json!(1);
    assert!(!check::errors("run-ports", &extra).is_empty());
    let mut extra = ports.clone();
    extra["totals"]["surprise"] = json!(1);
    assert!(!check::errors("run-ports", &extra).is_empty());
    let mut not_a_run = ports.clone();
    not_a_run["runs"][0]["report"]
        .as_object_mut()
        .unwrap()
        .remove("reconciliation");
    assert!(!check::errors("run-ports", &not_a_run).is_empty());
    let mut untagged = ports.clone();
    untagged["runs"][1]["report"]
        .as_object_mut()
        .unwrap()
        .remove("schema");
    assert!(!check::errors("run-ports", &untagged).is_empty());
    // compare and merge refuse it in one line, naming the file; merge takes the run inside.
    let d = tmp("ports");
    let p = d.join("ports.json");
    std::fs::write(&p, serde_json::to_vec(&ports).unwrap()).unwrap();
    let ps = p.to_str().unwrap();
    for args in [vec!["compare", ps, ps], vec!["merge", ps]] {
        let o = upktgen(&args);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {e}");
        assert!(
            e.contains(&format!(
                "{ps}: a run-ports document (\"upktgen.run-ports/1\")"
            )) && e.lines().count() == 1,
            "{args:?}: {e}"
        );
    }
    let inner = d.join("inner.json");
    std::fs::write(
        &inner,
        serde_json::to_vec(&ports["runs"][0]["report"]).unwrap(),
    )
    .unwrap();
    let m = prints_valid(schema::MERGE, &["merge", "--json", inner.to_str().unwrap()]);
    assert_eq!(m["total"]["sent"], run["outcome"]["result"]["sent"]);
    let _ = std::fs::remove_dir_all(&d);
}

/// A run-ports document of two runs, each `run` (a run document with streams) as a port's.
fn run_ports_made_in_process(run: &Value) -> Value {
    use upktgen::report::streams::{FlowRun, PortRun, PortRunDoc, PortsDoc, PortsTotals};
    let flow = |id: u16, tx: &str, rx: &str| FlowRun {
        id,
        name: format!("f{id}"),
        tx_port: tx.into(),
        rx_port: rx.into(),
        tx_frames: 10,
        tx_bytes: 600,
        rx_frames: Some(10),
        lost: Some(0),
        loss_pct: Some(0.0),
    };
    let port = |name: &str| PortRun {
        port: name.into(),
        tx_frames: 10,
        rx_frames: Some(10),
        unexpected: Some(0),
    };
    let (a, b) = ("p1 (netns:x/va)", "p2 (netns:x/vb)");
    let doc = PortsDoc {
        host: "vm".into(),
        version: "0.1.0".into(),
        config: "both.yaml".into(),
        runs: [(a, b), (b, a)]
            .into_iter()
            .map(|(tx, rx)| PortRunDoc {
                tx_port: tx.into(),
                rx_port: rx.into(),
                unexpected: Some(0),
                report: run.clone(),
            })
            .collect(),
        flows: vec![flow(0, a, b), flow(1, b, a)],
        ports: vec![port(a), port(b)],
        totals: PortsTotals {
            flows: 2,
            ports: 2,
            tx_frames: 20,
            tx_bytes: 1200,
            rx_frames: Some(20),
            lost: Some(0),
            unexpected: None,
        },
    };
    serde_json::to_value(upktgen::schema::tagged(schema::RUN_PORTS, &doc)).unwrap()
}

fn version_1_runs_and_receivers_are_still_read_by_merge_and_compare() {
    let d = tmp("v1");
    let run = run_of_version_1();
    let pr = d.join("run-v1.json");
    std::fs::write(&pr, serde_json::to_vec(&run).unwrap()).unwrap();
    // Its receiver as `rx --json` of version 1 wrote it.
    let mut rx = run["rx_analysis"]["receiver"].clone();
    assert!(rx.get("streams").is_none());
    rx["schema"] = json!("upktgen.rx/1");
    let px = d.join("rx-v1.json");
    std::fs::write(&px, serde_json::to_vec(&rx).unwrap()).unwrap();
    let (prs, pxs) = (pr.to_str().unwrap(), px.to_str().unwrap());
    let m = prints_valid(schema::MERGE, &["merge", "--json", prs, pxs]);
    assert_eq!(m["total"]["sent"], run["outcome"]["result"]["sent"]);
    // The run's own receiver and the rx document.
    assert_eq!(m["receivers"].as_array().map(Vec::len), Some(2));
    // compare wants three runs a side: arrays of them.
    let pa = d.join("runs-v1.json");
    std::fs::write(&pa, serde_json::to_vec(&json!([run, run, run])).unwrap()).unwrap();
    let pas = pa.to_str().unwrap();
    let o = upktgen(&["compare", pas, pas]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Beside one of version 2 with its streams.
    let mut v2 = a_real_looking_run();
    // Another host's run (merge takes each run once).
    v2["host"] = json!("vm2");
    let (run_streams, rx_streams) = streams_made_in_process();
    v2["streams"] = run_streams;
    v2["rx_analysis"]["receiver"]["streams"] = rx_streams;
    let p2 = d.join("run-v2.json");
    std::fs::write(&p2, serde_json::to_vec(&v2).unwrap()).unwrap();
    let p2s = p2.to_str().unwrap();
    let pb = d.join("runs-v2.json");
    std::fs::write(&pb, serde_json::to_vec(&json!([v2, v2, v2])).unwrap()).unwrap();
    let o = upktgen(&["compare", pas, pb.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let m = prints_valid(schema::MERGE, &["merge", "--json", prs, p2s, pxs]);
    assert_eq!(m["senders"].as_array().map(Vec::len), Some(2));
    // A version neither writes nor reads: refused by both, naming the file.
    let mut v3 = run.clone();
    v3["schema"] = json!("upktgen.run/4");
    let p3 = d.join("run-v4.json");
    std::fs::write(&p3, serde_json::to_vec(&v3).unwrap()).unwrap();
    let p3s = p3.to_str().unwrap();
    let want = format!(
        "{p3s}: a run document of schema version 4 (\"upktgen.run/4\"), written by a newer upktgen; this upktgen"
    );
    for args in [["merge", prs, p3s], ["compare", prs, p3s]] {
        let e = refused(&args);
        assert!(e.contains(&want), "{args:?}: {e}");
        assert!(
            e.contains(
                r#"reads version 1, 2 or 3 ("upktgen.run/1", "upktgen.run/2", "upktgen.run/3")"#
            ),
            "{e}"
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}

pub(crate) const TESTS: &[crate::harness::Test] = crate::tests![
    shape_digests,
    every_kind_has_a_valid_schema_naming_the_version_the_code_writes,
    a_schema_changed_without_a_new_version_fails_here,
    the_digest_sees_a_definitions_change_but_not_the_layout,
    strict_schemas_refuse_a_new_field_a_missing_one_and_another_version,
    live_lines_and_agent_messages_made_in_process_are_valid,
    sim_and_a_simulated_sweep_write_valid_documents,
    compare_and_redraw_refuse_another_version_naming_the_file_and_read_version_0,
    a_run_and_a_receiver_with_streams_made_in_process_are_valid_and_strict,
    version_1_runs_and_receivers_are_still_read_by_merge_and_compare,
];
