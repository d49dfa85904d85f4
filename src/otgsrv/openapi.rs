//! The server's own OpenAPI 3.0 document (`GET /openapi.json`), made from the code: the
//! request and response bodies from the types that read and write them ([`super::model`],
//! through schemars, as serde sees them), the config from the member lists the config's
//! reader checks ([`crate::otg`]), the operations from [`OPERATIONS`], the table the router
//! is built from. Names follow the OTG model's (`Control.State`, `Flow.Metric`, ...), so a
//! client generated from the model's document finds the same paths and members.

use schemars::JsonSchema;
use schemars::generate::{SchemaGenerator, SchemaSettings};
use serde_json::{Map, Value, json};

use super::model;

/// The version of the OTG model the server follows.
pub const MODEL_VERSION: &str = "1.61.0";

/// A body of an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Body {
    None,
    /// JSON of the named schema.
    Json(&'static str),
    /// A pcap file.
    Pcap,
}

/// One operation the server serves: what the router routes and the document lists.
#[derive(Debug, Clone, Copy)]
pub struct Operation {
    pub method: &'static str,
    pub path: &'static str,
    /// The model's operationId.
    pub id: &'static str,
    pub summary: &'static str,
    pub request: Body,
    pub response: Body,
}

/// The operations served, in the model's order.
pub const OPERATIONS: &[Operation] = &[
    Operation {
        method: "post",
        path: "/config",
        id: "set_config",
        summary: "Takes a config in place of the last one (refused while traffic runs).",
        request: Body::Json("Config"),
        response: Body::Json("Warning"),
    },
    Operation {
        method: "get",
        path: "/config",
        id: "get_config",
        summary: "The config taken last, every default filled in.",
        request: Body::None,
        response: Body::Json("Config"),
    },
    Operation {
        method: "post",
        path: "/control/state",
        id: "set_control_state",
        summary: "Starts, stops, pauses or resumes the flows; starts or stops port captures.",
        request: Body::Json("Control.State"),
        response: Body::Json("Warning"),
    },
    Operation {
        method: "post",
        path: "/monitor/metrics",
        id: "get_metrics",
        summary: "Port or flow metrics.",
        request: Body::Json("Metrics.Request"),
        response: Body::Json("Metrics.Response"),
    },
    Operation {
        method: "post",
        path: "/monitor/capture",
        id: "get_capture",
        summary: "Stops a port's capture and answers it as a pcap file.",
        request: Body::Json("Capture.Request"),
        response: Body::Pcap,
    },
    Operation {
        method: "get",
        path: "/capabilities/version",
        id: "get_version",
        summary: "The model's version the server follows, and upktgen's.",
        request: Body::None,
        response: Body::Json("Version"),
    },
];

/// The model's operations the server does not serve: answered 501 with the model's error.
pub const NOT_SERVED: &[(&str, &str, &str, &str)] = &[
    (
        "patch",
        "/config",
        "update_config",
        "send the whole config with set_config",
    ),
    (
        "patch",
        "/config/append",
        "append_config",
        "send the whole config with set_config",
    ),
    (
        "patch",
        "/config/delete",
        "delete_config",
        "send the whole config with set_config",
    ),
    (
        "post",
        "/control/action",
        "set_control_action",
        "upktgen emulates no devices or protocols",
    ),
    (
        "post",
        "/monitor/states",
        "get_states",
        "upktgen emulates no devices or protocols",
    ),
];

fn ref_to(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

/// The schema of a config: the members the config's reader knows, with ports, flows and
/// captures described and the rest (taken only absent or empty) left open.
fn config_schemas(out: &mut Map<String, Value>) {
    let mut props = Map::new();
    for k in crate::otg::CONFIG_FIELDS {
        props.insert(
            k.to_string(),
            json!({"description": "not supported: absent or empty only (docs/otg.md)"}),
        );
    }
    props.insert(
        "ports".into(),
        json!({"type": "array", "items": ref_to("Port")}),
    );
    props.insert(
        "flows".into(),
        json!({"type": "array", "items": ref_to("Flow")}),
    );
    props.insert(
        "captures".into(),
        json!({"type": "array", "items": ref_to("Capture")}),
    );
    props.insert(
        "layer1".into(),
        json!({"type": "array", "items": ref_to("Layer1")}),
    );
    props.insert(
        "options".into(),
        json!({
            "type": "object",
            "description": "port_options and flow_options at what upktgen does (docs/otg.md)",
            "properties": {
                "port_options": {"type": "object"},
                "flow_options": {"type": "object"},
                "protocol_options": {"description": "not supported"},
                "per_port_options": {"description": "not supported"},
            },
            "additionalProperties": false,
        }),
    );
    out.insert(
        "Config".into(),
        json!({
            "type": "object",
            "description": "The OTG config: ports, flows and captures (docs/otg.md lists the subset field by field).",
            "properties": props,
            "additionalProperties": false,
        }),
    );
    out.insert(
        "Port".into(),
        json!({
            "type": "object",
            "required": ["name", "location"],
            "properties": {
                "name": {"type": "string"},
                "location": {"type": "string", "description": "IFACE, netns:NAME/IFACE or ssh://[user@]host[:port]/IFACE"},
            },
            "additionalProperties": false,
        }),
    );
    let mut layer1 = Map::new();
    for k in crate::otg::layer1::FIELDS {
        let s = match k {
            "name" => json!({"type": "string"}),
            "port_names" => json!({"type": "array", "items": {"type": "string"}}),
            "speed" => {
                json!({"type": "string", "enum": crate::otg::layer1::SPEEDS.map(|(n, _)| n)})
            }
            "mtu" => {
                json!({"type": "integer", "minimum": crate::otg::layer1::MTU_MIN, "maximum": crate::otg::layer1::MTU_MAX})
            }
            _ => {
                json!({"description": "not supported: upktgen changes no interface (docs/otg.md)"})
            }
        };
        layer1.insert(k.to_string(), s);
    }
    out.insert(
        "Layer1".into(),
        json!({
            "type": "object",
            "required": ["name", "port_names"],
            "properties": layer1,
            "additionalProperties": false,
        }),
    );
    let mut flow = Map::new();
    for k in crate::otg::FLOW_FIELDS {
        let s = match k {
            "name" => json!({"type": "string"}),
            "packet" => json!({"type": "array", "items": {"type": "object"}}),
            _ => json!({"type": "object"}),
        };
        flow.insert(k.to_string(), s);
    }
    out.insert(
        "Flow".into(),
        json!({
            "type": "object",
            "required": ["name", "tx_rx"],
            "properties": flow,
            "additionalProperties": false,
        }),
    );
}

fn add<T: JsonSchema>(g: &mut SchemaGenerator) {
    g.subschema_for::<T>();
}

/// The definitions of the bodies: requests as serde reads them, responses as it writes them.
fn schemas() -> Map<String, Value> {
    let mut read = SchemaSettings::openapi3()
        .for_deserialize()
        .into_generator();
    add::<model::ControlState>(&mut read);
    add::<model::MetricsRequest>(&mut read);
    add::<model::CaptureRequest>(&mut read);
    add::<model::Capture>(&mut read);
    let mut write = SchemaSettings::openapi3().for_serialize().into_generator();
    add::<model::Warning>(&mut write);
    add::<model::MetricsResponse>(&mut write);
    add::<model::Version>(&mut write);
    add::<crate::otg::Error>(&mut write);
    let mut out = write.take_definitions(true);
    for v in out.values_mut() {
        no_nulls(v);
    }
    // A type both read and written (Capture) keeps the reader's, the looser, schema.
    out.extend(read.take_definitions(true));
    config_schemas(&mut out);
    out
}

/// Drops `null` from a response schema: an absent member is left out, never written null
/// (schemars marks every `Option` nullable).
fn no_nulls(v: &mut Value) {
    match v {
        Value::Object(o) => {
            o.remove("nullable");
            if let Some(Value::Array(e)) = o.get_mut("enum") {
                e.retain(|x| !x.is_null());
            }
            o.values_mut().for_each(no_nulls);
        }
        Value::Array(a) => a.iter_mut().for_each(no_nulls),
        _ => {}
    }
}

fn content(b: Body) -> Option<Value> {
    match b {
        Body::None => None,
        Body::Json(name) => Some(json!({"application/json": {"schema": ref_to(name)}})),
        Body::Pcap => Some(
            json!({"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}),
        ),
    }
}

/// Why a request body does not fit the document: the JSON path and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ShapeError(pub String);

/// The document, made once.
pub fn cached() -> &'static Value {
    static DOC: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    DOC.get_or_init(document)
}

/// Checks that `v` has the types the document's schema `name` gives (objects, arrays,
/// strings, numbers, integers, booleans, enums, `nullable`), as a request must: serde
/// alone would read an array as a struct. Gives the JSON path of the first value that
/// does not fit.
pub fn check_shape(v: &Value, name: &str) -> Result<(), ShapeError> {
    let schemas = &cached()["components"]["schemas"];
    shape(v, &schemas[name], schemas, "", 0)
}

fn shape(v: &Value, s: &Value, defs: &Value, at: &str, depth: usize) -> Result<(), ShapeError> {
    if depth > 64 {
        return Err(ShapeError(format!("{at}: nested too deep")));
    }
    if let Some(r) = s["$ref"].as_str() {
        let name = r.trim_start_matches("#/components/schemas/");
        return shape(v, &defs[name], defs, at, depth + 1);
    }
    let here = || {
        if at.is_empty() {
            "the body".to_string()
        } else {
            at.to_string()
        }
    };
    if v.is_null() && s["nullable"] == true {
        return Ok(());
    }
    if let Some(any) = s["anyOf"].as_array().or(s["oneOf"].as_array()) {
        let mut first = None;
        for p in any {
            match shape(v, p, defs, at, depth + 1) {
                Ok(()) => return Ok(()),
                Err(e) if first.is_none() && p["nullable"] != true => first = Some(e),
                Err(_) => {}
            }
        }
        if let Some(e) = first {
            return Err(e);
        }
    }
    if let Some(all) = s["allOf"].as_array() {
        for p in all {
            shape(v, p, defs, at, depth + 1)?;
        }
    }
    if v.is_null() {
        return if s["nullable"] == true || s.get("type").is_none() {
            Ok(())
        } else {
            Err(ShapeError(format!(
                "{}: null where {} is expected",
                here(),
                s["type"]
            )))
        };
    }
    let fits = match s["type"].as_str() {
        None => true,
        Some("object") => v.is_object(),
        Some("array") => v.is_array(),
        Some("string") => v.is_string(),
        Some("boolean") => v.is_boolean(),
        Some("integer") => {
            v.is_u64() || v.is_i64() || v.as_str().is_some_and(|t| t.parse::<u64>().is_ok())
        }
        Some("number") => v.is_number(),
        Some(_) => true,
    };
    if !fits {
        return Err(ShapeError(format!("{}: expected {}", here(), s["type"])));
    }
    if let Some(e) = s["enum"].as_array()
        && !e.contains(v)
    {
        return Err(ShapeError(format!(
            "{}: {v} is not one of {}",
            here(),
            Value::Array(e.clone())
        )));
    }
    let key = |k: &str| {
        if at.is_empty() {
            k.to_string()
        } else {
            format!("{at}.{k}")
        }
    };
    match v {
        Value::Object(o) => {
            for (k, x) in o {
                if let Some(p) = s["properties"].get(k) {
                    shape(x, p, defs, &key(k), depth + 1)?;
                }
            }
        }
        Value::Array(a) => {
            if let Some(items) = s.get("items") {
                for (i, x) in a.iter().enumerate() {
                    shape(x, items, defs, &format!("{at}[{i}]"), depth + 1)?;
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// The whole document.
pub fn document() -> Value {
    let mut paths = Map::new();
    for op in OPERATIONS {
        let mut o = json!({
            "operationId": op.id,
            "summary": op.summary,
            "responses": {
                "200": {"description": "Success"},
                "default": {"$ref": "#/components/responses/Failure"},
            },
        });
        if let Some(c) = content(op.response) {
            o["responses"]["200"]["content"] = c;
        }
        if let Some(c) = content(op.request) {
            o["requestBody"] = json!({"required": true, "content": c});
        }
        let entry = paths
            .entry(op.path.to_string())
            .or_insert_with(|| json!({}));
        entry[op.method] = o;
    }
    json!({
        "openapi": "3.0.3",
        "info": {
            "title": "upktgen: an Open Traffic Generator server",
            "description": format!("The part of the Open Traffic Generator API (models v{MODEL_VERSION}) that upktgen serves; docs/otg-server.md."),
            "version": env!("CARGO_PKG_VERSION"),
        },
        "paths": paths,
        "components": {
            "responses": {
                "Failure": {
                    "description": "The request did not succeed: the model's Error, its code the HTTP status.",
                    "content": {"application/json": {"schema": ref_to("Error")}},
                },
            },
            "schemas": schemas(),
        },
    })
}
