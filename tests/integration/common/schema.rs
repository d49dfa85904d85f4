//! Validating upktgen's JSON documents against docs/schema (JSON Schema draft 2020-12,
//! with the `jsonschema` crate; references between the files are read from the directory,
//! nothing is fetched).
#![allow(dead_code)]

use serde_json::Value;
use std::path::{Path, PathBuf};

/// docs/schema of this checkout.
pub fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/schema")
}

/// The schema file of `kind` ("run" for `upktgen.run/1`).
pub fn file(kind: &str) -> PathBuf {
    dir().join(format!("{kind}.schema.json"))
}

pub fn read(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: not JSON: {e}", path.display()))
}

/// Reads `file://` references from docs/schema only.
struct SchemaDir;

impl jsonschema::Retrieve for SchemaDir {
    fn retrieve(
        &self,
        uri: &jsonschema::Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        let path = uri
            .as_str()
            .strip_prefix("file://")
            .ok_or_else(|| format!("{uri}: only the schema directory's files are read"))?;
        let path = Path::new(path);
        if path.parent() != Some(dir().as_path()) {
            return Err(format!("{uri}: not a file of {}", dir().display()).into());
        }
        Ok(read(path))
    }
}

/// The validator of `kind`'s schema.
pub fn validator(kind: &str) -> jsonschema::Validator {
    let path = file(kind);
    let schema = read(&path);
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .with_base_uri(format!("file://{}", path.display()))
        .with_retriever(SchemaDir)
        .should_validate_formats(true)
        .build(&schema)
        .unwrap_or_else(|e| panic!("{}: not a usable JSON Schema: {e}", path.display()))
}

/// The errors of `doc` against `kind`'s schema, one line each (instance path: message).
pub fn errors(kind: &str, doc: &Value) -> Vec<String> {
    validator(kind)
        .iter_errors(doc)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// `doc` (`what`: where it came from, for the message) is valid against the schema its
/// `schema` field names, which must be `tag`.
pub fn check(tag: &str, doc: &Value, what: &str) {
    assert_eq!(
        doc.get("schema").and_then(Value::as_str),
        Some(tag),
        "{what}: the document's schema field"
    );
    let kind = upktgen::schema::parse(tag).expect("a known tag").0;
    let errs = errors(kind, doc);
    assert!(
        errs.is_empty(),
        "{what} does not match docs/schema/{kind}.schema.json:\n  {}\n{}",
        errs.iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n  "),
        serde_json::to_string_pretty(doc).unwrap()
    );
}

/// Every JSON line of `text` (lines not starting with `{` skipped: standard error's other
/// messages), each checked against `tag`; how many there were.
pub fn check_lines(tag: &str, text: &str, what: &str) -> usize {
    let mut n = 0;
    for (i, l) in text.lines().enumerate() {
        if !l.starts_with('{') {
            continue;
        }
        let v: Value = serde_json::from_str(l)
            .unwrap_or_else(|e| panic!("{what}:{}: not JSON ({e}): {l}", i + 1));
        check(tag, &v, &format!("{what}:{}", i + 1));
        n += 1;
    }
    n
}
