//! The far end: `upktgen agent` speaks JSON-RPC 2.0 on its standard input and output, and
//! the controller reaches it through whatever carries stdio (`local`, `netns:NAME`,
//! `ssh://[user@]host[:port]`). See docs/agent.md.

pub mod client;
pub(crate) mod clock;
#[doc(hidden)]
pub mod fake;
pub(crate) mod far;
pub mod proto;
pub(crate) mod transport;

/// At most the first 120 characters of `s`, for messages that quote what the other end sent.
pub(crate) fn short(s: &str) -> String {
    const MAX: usize = 120;
    match s.char_indices().nth(MAX) {
        None => s.to_string(),
        Some((i, _)) => format!("{}... ({} bytes)", &s[..i], s.len()),
    }
}
