//! YAML in, the same JSON value out, with bounds: serde-saphyr (a pure-Rust YAML parser)
//! with a budget of events, nodes, aliases and depth, and a cap on the events an alias
//! may replay, so a small document of aliases nested in aliases ("billion laughs") is
//! refused after a bounded amount of work and memory.

use serde_json::Value;

use super::refusal::Refusal;

/// The most parser events (nodes, ends of collections, aliases) of a document.
pub const MAX_EVENTS: usize = 4_000_000;
/// The most nodes (scalars, sequences, mappings) of a document.
pub const MAX_NODES: usize = 2_000_000;
/// The most events that aliases may replay in all (an alias to a flow's `tx_rx` in each
/// of 65,536 flows replays some 460,000).
pub const MAX_REPLAYED: usize = 500_000;
/// The most aliases (`*name`) of a document.
pub const MAX_ALIASES: usize = 10_000;

/// `text` as a JSON value.
pub fn to_value(text: &[u8]) -> Result<Value, Refusal> {
    let text = std::str::from_utf8(text).map_err(|_| Refusal::document("not UTF-8 text"))?;
    let mut budget = serde_saphyr::Budget::default();
    budget.max_events = MAX_EVENTS;
    budget.max_nodes = MAX_NODES;
    budget.max_aliases = MAX_ALIASES;
    budget.max_anchors = MAX_ALIASES;
    budget.max_depth = super::MAX_DEPTH;
    budget.max_documents = 1;
    budget.max_total_scalar_bytes = super::MAX_DOCUMENT as usize;
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    options.alias_limits.max_total_replayed_events = MAX_REPLAYED;
    options.alias_limits.max_replay_stack_depth = 16;
    options.alias_limits.max_alias_expansions_per_anchor = MAX_ALIASES;
    options.duplicate_keys = serde_saphyr::options::DuplicateKeyPolicy::Error;
    // YAML 1.2's true and false only: `no` stays a string (the "Norway problem").
    options.strict_booleans = true;
    options.with_snippet = false;
    serde_saphyr::from_str_with_options::<Value>(text, options).map_err(|e| {
        let msg = e.to_string();
        let line = msg.lines().next().unwrap_or("").trim();
        Refusal::document(format!("not YAML upktgen reads: {line}"))
    })
}
