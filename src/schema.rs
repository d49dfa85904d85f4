//! The `schema` field of every JSON document and JSON line upktgen writes:
//! `upktgen.KIND/VERSION`, one kind per shape of document (docs/schema/README.md), each with a
//! JSON Schema in docs/schema/KIND.schema.json. A change to a document's shape is a new
//! version (docs/schema/VERSIONS records each version's schema file).
//!
//! Readers (`merge`, `compare`, `ndr --resume`, the agent) call [`kind_of`]: a known kind
//! at a version this build does not read ([`reads`]: the one it writes, and the older ones
//! of [`OLDER_READ`]) is refused, naming the file; a document without `schema` (written
//! before the field existed) is version 0, read as before (its shape is version 1's
//! without the field).

use anyhow::{Result, bail};
use serde::Serialize;
use serde_json::Value;

/// `upktgen run --json` (and `upktgen script --json`): one run's report.
/// Version 2: `streams` (`--config`), and the receiver's `streams` and `sink.ipdv` in
/// `rx_analysis`. Version 3: `dut.delay_line` (`--lab dut --dut-delay`).
pub const RUN: &str = "upktgen.run/3";
/// `upktgen run --config FILE --json` when the flows leave from several ports, or from one
/// port to several: the whole run, each leg's run (a sending port to one receiving port) a
/// [`RUN`] document (its `schema` in it) beside every flow
/// between its ports, every port (its `unexpected` frames) and the totals.
pub const RUN_PORTS: &str = "upktgen.run-ports/1";
/// `upktgen rx --json`: one receiver's report. Version 2: `streams` (`--stream`) and
/// `sink.ipdv`.
pub const RX: &str = "upktgen.rx/2";
/// `upktgen sim --json`: one simulated run.
pub const SIM: &str = "upktgen.sim/1";
/// `upktgen sim --sweep ... --json`: the grid's points.
pub const SIM_SWEEP: &str = "upktgen.sim-sweep/1";
/// `upktgen sim --preset seed --json`: the seed's iterations beside the model's.
pub const SIM_SEED: &str = "upktgen.sim-seed/1";
/// A sweep's runs.json.
pub const SWEEP: &str = "upktgen.sweep/1";
/// `upktgen ndr --json` and ndr.json: a whole search. Version 2: a trial's `figures.flows`
/// (`--config`). Version 3: each flow's `latency` there.
pub const NDR: &str = "upktgen.ndr/3";
/// The first line of an ndr results file (JSON lines).
pub const NDR_RESULTS: &str = "upktgen.ndr-results/1";
/// Every other line of an ndr results file: one trial. Version 2: `figures.flows`
/// (`--config`). Version 3: each flow's `latency` there (a config's trial's `latency` is
/// the union of its flows' frames).
pub const NDR_TRIAL: &str = "upktgen.ndr-trial/3";
/// `upktgen rfc2544 --json` and rfc2544.json: the whole suite.
pub const RFC2544: &str = "upktgen.rfc2544/1";
/// The first line of an rfc2544 results file (JSON lines).
pub const RFC2544_RESULTS: &str = "upktgen.rfc2544-results/1";
/// Every other line of an rfc2544 results file: one trial.
pub const RFC2544_TRIAL: &str = "upktgen.rfc2544-trial/1";
/// `upktgen merge --json`.
pub const MERGE: &str = "upktgen.merge/1";
/// Every line of the agent's protocol, both ways (requests and responses). Version 2: the
/// receiver's report in `rx.stop`'s result is rx version 2's (its `streams`). Version 3:
/// `rx.stats` takes `streams_from` and answers with a chunk of the streams' live figures.
pub const AGENT: &str = "upktgen.agent/3";
/// A live statistics line (`--json-lines`).
/// Version 2: `streams`, a config's streams (their aggregate and a bounded few).
pub const LIVE: &str = "upktgen.live/2";

/// Every kind this build writes, at its version (the schema files are `KIND.schema.json`).
pub const ALL: &[&str] = &[
    RUN,
    RUN_PORTS,
    RX,
    SIM,
    SIM_SWEEP,
    SIM_SEED,
    SWEEP,
    NDR,
    NDR_RESULTS,
    NDR_TRIAL,
    RFC2544,
    RFC2544_RESULTS,
    RFC2544_TRIAL,
    MERGE,
    AGENT,
    LIVE,
];

/// Older versions of a kind that this build still reads, beside the one it writes: their
/// shape is the current one's without the fields added since (a run or a receiver of
/// version 1 has no `streams`), so a reader takes them as they are. A kind not named here is
/// read at its current version only (and version 0).
pub const OLDER_READ: &[(&str, &[u32])] = &[("run", &[1, 2]), ("rx", &[1]), ("ndr-trial", &[1, 2])];

/// The versions of `kind` (one of [`ALL`]'s kinds at `current`) this build reads, lowest
/// first: [`OLDER_READ`]'s, then `current`.
pub fn reads(kind: &str, current: u32) -> Vec<u32> {
    let mut v: Vec<u32> = OLDER_READ
        .iter()
        .filter(|(k, _)| *k == kind)
        .flat_map(|(_, vs)| vs.iter().copied())
        .filter(|&x| x < current)
        .collect();
    v.push(current);
    v.sort_unstable();
    v.dedup();
    v
}

/// `upktgen.KIND/VERSION` split into its kind and version; None when `tag` is not of that form.
pub fn parse(tag: &str) -> Option<(&str, u32)> {
    let rest = tag.strip_prefix("upktgen.")?;
    let (kind, version) = rest.split_once('/')?;
    if kind.is_empty()
        || !kind
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b == b'-' || b.is_ascii_digit())
        || version.is_empty()
        || !version.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    Some((kind, version.parse().ok()?))
}

/// A document with its `schema` first, then the document's own fields.
#[derive(Serialize)]
pub struct Tagged<'a, T: ?Sized> {
    schema: &'static str,
    #[serde(flatten)]
    doc: &'a T,
}

/// `doc` serialised with `"schema": schema` before its fields (`doc` must serialise as an
/// object).
pub fn tagged<'a, T: Serialize + ?Sized>(schema: &'static str, doc: &'a T) -> Tagged<'a, T> {
    Tagged { schema, doc }
}

/// `doc` as pretty JSON with `"schema": schema` first (a document: `--json`, a file).
pub fn to_pretty<T: Serialize + ?Sized>(
    schema: &'static str,
    doc: &T,
) -> serde_json::Result<String> {
    serde_json::to_string_pretty(&tagged(schema, doc))
}

/// `doc` as one line of JSON with `"schema": schema` first (a JSON line).
pub fn to_line<T: Serialize + ?Sized>(schema: &'static str, doc: &T) -> serde_json::Result<String> {
    serde_json::to_string(&tagged(schema, doc))
}

/// The kind of the document `v` read from `file` (a path or a name, for the messages), when
/// it names one this build reads at a version it reads ([`reads`]); None when it has no
/// `schema` (version 0). Refused, naming the file: a `schema` that is not upktgen's, an
/// unknown kind, a known kind at another version.
pub fn kind_of(file: &str, v: &Value) -> Result<Option<&'static str>> {
    let Some(s) = v.get("schema") else {
        return Ok(None);
    };
    let Some(tag) = s.as_str() else {
        bail!("{file}: `schema` is {s}, not a string like \"{RUN}\"");
    };
    kind_of_tag(file, tag).map(Some)
}

/// The kind `tag` names, when this build reads it at that version; refused as [`kind_of`]
/// says.
pub fn kind_of_tag(file: &str, tag: &str) -> Result<&'static str> {
    let Some((kind, version)) = parse(tag) else {
        bail!("{file}: schema \"{tag}\" is not an upktgen document's (upktgen.KIND/VERSION)");
    };
    let Some(ours) = ALL
        .iter()
        .find(|t| parse(t).is_some_and(|(k, _)| k == kind))
    else {
        bail!(
            "{file}: schema \"{tag}\": this upktgen ({}) knows no document kind '{kind}'",
            crate::host::VERSION
        );
    };
    let (_, mine) = parse(ours).expect("ALL holds well-formed tags");
    let read = reads(kind, mine);
    if !read.contains(&version) {
        let who = if version > mine {
            "a newer"
        } else {
            "an older"
        };
        bail!(
            "{file}: {} document of schema version {version} (\"{tag}\"), written by {who} upktgen; this upktgen ({}) reads {}",
            a_kind(kind),
            crate::host::VERSION,
            versions_read(kind, &read)
        );
    }
    Ok(self::kind(ours))
}

/// "version 2 (\"upktgen.run/2\")", "version 1 or 2 (\"upktgen.run/1\", \"upktgen.run/2\")".
fn versions_read(kind: &str, read: &[u32]) -> String {
    let nums: Vec<String> = read.iter().map(u32::to_string).collect();
    let tags: Vec<String> = read
        .iter()
        .map(|v| format!("\"upktgen.{kind}/{v}\""))
        .collect();
    let nums = match nums.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    };
    format!("version {nums} ({})", tags.join(", "))
}

/// Refuses `v` (from `file`) unless it is of `want`'s kind at a version this build reads,
/// or has no `schema` (version 0); `what` names the document expected ("a sweep's runs.json").
pub fn expect(file: &str, v: &Value, want: &'static str, what: &str) -> Result<()> {
    match kind_of(file, v)? {
        Some(k) if k != kind(want) => {
            bail!(
                "{file}: {} document (\"{}\"), not {what}",
                a_kind(k),
                tag_of(v)
            )
        }
        _ => Ok(()),
    }
}

/// "a run", "an rx", "an ndr": the kind with its article.
pub fn a_kind(kind: &str) -> String {
    let vowel_sound =
        kind.starts_with(['a', 'e', 'i', 'o', 'u']) || kind == "rx" || kind.starts_with("ndr");
    format!("{} {kind}", if vowel_sound { "an" } else { "a" })
}

/// The `schema` string of `v` ("" without one).
pub fn tag_of(v: &Value) -> &str {
    v.get("schema").and_then(Value::as_str).unwrap_or("")
}

/// The kind of one of [`ALL`]'s tags (`"run"` for [`RUN`]).
pub fn kind(tag: &'static str) -> &'static str {
    let rest = tag.strip_prefix("upktgen.").unwrap_or(tag);
    &rest[..rest.find('/').unwrap_or(rest.len())]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tags_are_well_formed_and_distinct() {
        let mut kinds: Vec<&str> = ALL.iter().map(|t| parse(t).unwrap().0).collect();
        kinds.sort_unstable();
        let n = kinds.len();
        kinds.dedup();
        assert_eq!(kinds.len(), n, "one tag per kind");
        assert_eq!(kind(RUN), "run");
        assert_eq!(kind(NDR_RESULTS), "ndr-results");
        assert_eq!(parse("upktgen.run/12"), Some(("run", 12)));
        for bad in [
            "run/1",
            "upktgen.run",
            "upktgen.run/",
            "upktgen./1",
            "upktgen.Run/1",
            "upktgen.run/2a",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn tagged_puts_the_schema_first() {
        #[derive(Serialize)]
        struct D {
            a: u32,
            b: Option<u32>,
        }
        let s = serde_json::to_string(&tagged(RUN, &D { a: 1, b: None })).unwrap();
        assert_eq!(s, r#"{"schema":"upktgen.run/3","a":1,"b":null}"#);
    }

    #[test]
    fn readers_take_their_version_and_version_0_and_refuse_others() {
        assert_eq!(
            kind_of("a.json", &json!({"schema": RUN})).unwrap(),
            Some("run")
        );
        assert_eq!(kind_of("a.json", &json!({"outcome": {}})).unwrap(), None);
        let e = kind_of("a.json", &json!({"schema": "upktgen.run/4"}))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("a.json: a run document of schema version 4"),
            "{e}"
        );
        assert!(e.contains("newer upktgen"), "{e}");
        assert!(
            e.ends_with(
                r#"reads version 1, 2 or 3 ("upktgen.run/1", "upktgen.run/2", "upktgen.run/3")"#
            ),
            "{e}"
        );
        let e = kind_of("b.json", &json!({"schema": "upktgen.run/0"}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("an older upktgen"), "{e}");
        let e = kind_of("c.json", &json!({"schema": "upktgen.frob/1"}))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("c.json: ") && e.contains("no document kind 'frob'"),
            "{e}"
        );
        let e = kind_of("d.json", &json!({"schema": "other/1"}))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("d.json: ") && e.contains("not an upktgen document"),
            "{e}"
        );
        let e = kind_of("e.json", &json!({"schema": 1}))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("e.json: `schema` is 1"), "{e}");
        expect(
            "f.json",
            &json!({"schema": SWEEP}),
            SWEEP,
            "a sweep's runs.json",
        )
        .unwrap();
        expect(
            "f.json",
            &json!({"format": 1}),
            SWEEP,
            "a sweep's runs.json",
        )
        .unwrap();
        let e = expect(
            "g.json",
            &json!({"schema": RX}),
            SWEEP,
            "a sweep's runs.json",
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "g.json: an rx document (\"upktgen.rx/2\"), not a sweep's runs.json"
        );
    }

    #[test]
    fn run_and_rx_of_version_1_are_read_beside_version_2_and_no_other_kind_s_older_version() {
        assert_eq!(
            (RUN, RX, AGENT),
            ("upktgen.run/3", "upktgen.rx/2", "upktgen.agent/3")
        );
        for (tag, kind) in [
            ("upktgen.run/1", "run"),
            ("upktgen.run/2", "run"),
            ("upktgen.run/3", "run"),
            ("upktgen.rx/1", "rx"),
            ("upktgen.rx/2", "rx"),
        ] {
            assert_eq!(
                kind_of("a.json", &json!({"schema": tag})).unwrap(),
                Some(kind)
            );
        }
        expect(
            "r.json",
            &json!({"schema": "upktgen.rx/1"}),
            RX,
            "a receiver",
        )
        .unwrap();
        assert_eq!(reads("run", 3), [1, 2, 3]);
        assert_eq!(reads("sweep", 1), [1]);
        // The agent reads its own version only: an older controller's request is refused.
        let e = kind_of_tag("the request", "upktgen.agent/1")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("schema version 1 (\"upktgen.agent/1\"), written by an older upktgen")
                && e.ends_with(r#"reads version 3 ("upktgen.agent/3")"#),
            "{e}"
        );
        let e = kind_of_tag("b.json", "upktgen.rx/3")
            .unwrap_err()
            .to_string();
        assert!(e.contains("a newer upktgen"), "{e}");
        let e = kind_of_tag("c.json", "upktgen.sim/2")
            .unwrap_err()
            .to_string();
        assert!(e.ends_with(r#"reads version 1 ("upktgen.sim/1")"#), "{e}");
        // Every kind OLDER_READ names is one this build writes, at a version below it.
        for (k, vs) in OLDER_READ {
            let (_, cur) = ALL
                .iter()
                .filter_map(|t| parse(t))
                .find(|(kind, _)| kind == k)
                .unwrap_or_else(|| panic!("OLDER_READ names {k}, which ALL has not"));
            assert!(
                vs.iter().all(|&v| v >= 1 && v < cur),
                "{k}: {vs:?} below {cur}"
            );
        }
    }
}
