//! Why a document is refused, and where: a [`Refusal`] names the JSON path of the value it
//! is about (`flows[2].packet[3].tcp.window.increment`), and says which of four things is
//! wrong (see [`Why`]). [`Error`] is the model's own error object, for an API answer.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A JSON path inside the document, as the model's users write it: keys joined by `.`,
/// array indices in brackets (`flows[0].tx_rx.port.tx_name`). The document itself is the
/// empty path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Path(String);

impl Path {
    /// The document itself.
    pub fn root() -> Path {
        Path(String::new())
    }

    /// The member `key` of the object at this path.
    pub fn key(&self, key: &str) -> Path {
        if self.0.is_empty() {
            Path(key.to_string())
        } else {
            Path(format!("{}.{key}", self.0))
        }
    }

    /// The element `i` of the array at this path.
    pub fn index(&self, i: usize) -> Path {
        Path(format!("{}[{i}]", self.0))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What is wrong at a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// A member the model does not have there (most often a typo).
    Unknown,
    /// A member or a choice the model has, that upktgen does not implement; the text, when
    /// there is one, says what upktgen does instead or which values it takes.
    NotSupported(String),
    /// A value of the wrong type, out of range, or inconsistent with another value.
    Bad(String),
    /// The document as a whole: too big, not JSON or YAML, nested too deep.
    Document(String),
}

/// A refused document: one line, `PATH: WHAT`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub path: Path,
    pub why: Why,
}

impl Refusal {
    pub fn unknown(path: Path) -> Refusal {
        Refusal {
            path,
            why: Why::Unknown,
        }
    }

    /// Not supported, with nothing more to say.
    pub fn unsupported(path: Path) -> Refusal {
        Refusal {
            path,
            why: Why::NotSupported(String::new()),
        }
    }

    /// Not supported, with what upktgen takes instead.
    pub fn unsupported_because(path: Path, detail: impl Into<String>) -> Refusal {
        Refusal {
            path,
            why: Why::NotSupported(detail.into()),
        }
    }

    pub fn bad(path: Path, what: impl Into<String>) -> Refusal {
        Refusal {
            path,
            why: Why::Bad(what.into()),
        }
    }

    pub fn document(what: impl Into<String>) -> Refusal {
        Refusal {
            path: Path::root(),
            why: Why::Document(what.into()),
        }
    }

    /// The model's error object for this refusal: HTTP 400, kind `validation`.
    pub fn to_error(&self) -> Error {
        Error {
            code: 400,
            kind: Some(ErrorKind::Validation),
            errors: vec![self.to_string()],
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.path.0.is_empty() {
            write!(f, "{}: ", self.path)?;
        }
        match &self.why {
            Why::Unknown => f.write_str("unknown field (the OTG model has no such field here)"),
            Why::NotSupported(d) if d.is_empty() => f.write_str("not supported"),
            Why::NotSupported(d) => write!(f, "not supported ({d})"),
            Why::Bad(s) | Why::Document(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for Refusal {}

/// The model's `Error` object: what an OTG server answers when a request fails.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Error {
    /// The transport's status code (HTTP: 400 for a refused config, 500 for a fault).
    pub code: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<ErrorKind>,
    /// One line per error.
    pub errors: Vec<String>,
}

/// `Error.kind`: whether the request was refused (`validation`) or the server failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(inline)]
pub enum ErrorKind {
    Validation,
    Internal,
}
