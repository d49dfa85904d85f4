//! The sweep file (TOML): what to run, what to vary, how often, what to compare.
//!
//! Errors carry the file's line: `FILE:LINE: message`. Syntax and type errors come from the
//! TOML parser's spans; semantic errors (an unknown parameter, an empty dimension, a bad
//! value for an option) from the spans kept beside every key and value.

use anyhow::{Result, anyhow};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::ops::Range;
use toml::Spanned;

/// Which upktgen command every point runs (the experiment core's).
pub use crate::experiment::trial::Command;

/// A parameter's value as written in the file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Val {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<Val>),
}

impl Val {
    /// The value as a command-line argument (lists joined by commas; see [`Val::args`]).
    pub fn text(&self) -> String {
        match self {
            Val::Bool(b) => b.to_string(),
            Val::Int(i) => i.to_string(),
            Val::Float(f) => f.to_string(),
            Val::Str(s) => s.clone(),
            Val::List(v) => v.iter().map(Val::text).collect::<Vec<_>>().join(","),
        }
    }

    /// A key equal for values that compare equal (for finding duplicates in one pass).
    fn key(&self) -> String {
        match self {
            Val::Float(f) if *f == 0.0 => "f0".into(),
            Val::Float(f) => format!("f{f:?}"),
            Val::Int(i) => format!("i{i}"),
            Val::Bool(b) => format!("b{b}"),
            Val::Str(s) => format!("s{s}"),
            Val::List(v) => format!(
                "l{}",
                v.iter().map(|x| x.key() + "\u{0}").collect::<String>()
            ),
        }
    }

    /// Whether the value (each item of a list) is one word, as every option value is: a
    /// string with a blank in it would read as several ("10 --dev eth0"), and a control
    /// character as none. `name` is the parameter's, for the message (worded as the pktgen
    /// parser words it).
    pub fn one_word(&self, name: &str) -> std::result::Result<(), ValueError> {
        match self {
            Val::Str(s) if s.chars().any(char::is_whitespace) => Err(ValueError::Words {
                name: name.to_string(),
                value: s.clone(),
            }),
            Val::Str(s) if s.chars().any(char::is_control) => Err(ValueError::Control {
                name: name.to_string(),
                value: s.clone(),
            }),
            Val::List(v) => v.iter().try_for_each(|x| x.one_word(name)),
            _ => Ok(()),
        }
    }

    /// The value as a number, if it is one (a numeric string counts).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Val::Int(i) => Some(*i as f64),
            Val::Float(f) => Some(*f),
            Val::Str(s) => s.trim().parse().ok(),
            _ => None,
        }
    }

    fn from_toml(v: &toml::Value) -> std::result::Result<Val, ValueError> {
        Ok(match v {
            toml::Value::Boolean(b) => Val::Bool(*b),
            toml::Value::Integer(i) => Val::Int(*i),
            toml::Value::Float(f) => Val::Float(*f),
            toml::Value::String(s) => Val::Str(s.clone()),
            toml::Value::Array(a) => Val::List(
                a.iter()
                    .map(|x| match x {
                        toml::Value::Array(_) | toml::Value::Table(_) => Err(ValueError::Nested),
                        x => Val::from_toml(x),
                    })
                    .collect::<std::result::Result<_, _>>()?,
            ),
            toml::Value::Datetime(_) => return Err(ValueError::Date),
            toml::Value::Table(_) => return Err(ValueError::Table),
        })
    }
}

/// A value of a sweep file that is not a parameter value, or a parameter that cannot take
/// it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    #[error(
        "{name}: '{value}' is more than one value; {name} takes one (options go in [base] or in a dimension of their own)"
    )]
    Words { name: String, value: String },
    #[error("{name}: {value:?} holds a control character; a value is one printable word")]
    Control { name: String, value: String },
    #[error("nested lists and tables are not parameter values")]
    Nested,
    #[error("a date is not a parameter value")]
    Date,
    #[error("a table is not a parameter value")]
    Table,
    #[error("{0}: a switch; write {0} = true or false")]
    NotSwitch(String),
    #[error("{0:?}: only for command = \"run\" (the model has its own clock: clock_mhz)")]
    RunOnly(String),
    #[error("{0:?}: set by the sweep itself; remove it")]
    Reserved(String),
    #[error("unknown parameter {name:?} for `upktgen {command}`; known: {}", .known.join(", "))]
    Unknown {
        name: String,
        command: &'static str,
        known: Vec<String>,
    },
    /// `value`: the value as the file writes it.
    #[error("load = {value}: a number of busy threads, 0 to {max}")]
    Load { value: String, max: i64 },
    #[error("cpu_mhz = {0}: a clock in MHz above 0")]
    CpuMhz(String),
}

/// One varied parameter.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Dimension {
    /// The parameter's name with `_` for `-` (e.g. `start_thresh`), or a built-in (`load`,
    /// `cpu_mhz`).
    pub name: String,
    pub values: Vec<Val>,
    /// One label per value (the file's `labels`, else `name=value`).
    pub labels: Vec<String>,
}

/// `[compare]`: A/B between the values of one dimension.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CompareSpec {
    pub dimension: String,
    /// The "A" value; every other value of the dimension (or only `variant`) is a "B".
    pub baseline: Val,
    pub variant: Option<Val>,
}

/// Where things are in the file, for error messages (1-based lines).
#[derive(Debug, Clone, Default)]
pub struct Lines {
    pub file: String,
    pub sweep: usize,
    /// Per base parameter: the line of its key and of its value.
    pub base: Vec<(usize, usize)>,
    /// Per dimension: the line of its name and of each value.
    pub dims: Vec<(usize, Vec<usize>)>,
    pub compare: usize,
}

impl Lines {
    /// `FILE:LINE: msg`.
    pub fn at(&self, line: usize, msg: impl std::fmt::Display) -> anyhow::Error {
        anyhow!("{}:{}: {}", self.file, line, msg)
    }
}

/// A parsed sweep file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Spec {
    pub name: String,
    pub command: Command,
    pub repetitions: u32,
    /// Parameters every point gets, in file order, names with `_` for `-`.
    pub base: Vec<(String, Val)>,
    pub dimensions: Vec<Dimension>,
    pub compare: Option<CompareSpec>,
    #[serde(skip)]
    pub lines: Lines,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    sweep: Spanned<RawSweep>,
    #[serde(default)]
    base: BTreeMap<Spanned<String>, Spanned<toml::Value>>,
    #[serde(default)]
    dimension: Vec<Spanned<RawDim>>,
    compare: Option<Spanned<RawCompare>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSweep {
    name: Option<String>,
    #[serde(default = "default_command")]
    command: Command,
    repetitions: Option<Spanned<i64>>,
}

fn default_command() -> Command {
    Command::Run
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDim {
    name: Spanned<String>,
    values: Spanned<Vec<Spanned<toml::Value>>>,
    labels: Option<Spanned<Vec<String>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCompare {
    dimension: Spanned<String>,
    baseline: Spanned<toml::Value>,
    variant: Option<Spanned<toml::Value>>,
}

/// Repetitions when the file does not say.
pub const DEFAULT_REPETITIONS: u32 = 3;

/// 1-based line of byte `offset` in `src`.
#[cfg(test)]
pub fn line_of(src: &str, offset: usize) -> usize {
    src.as_bytes()[..offset.min(src.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// The 1-based line of any byte offset, found by a binary search over where the lines
/// start (counting from the start of the file for every value made the check of a long
/// dimension quadratic).
struct LineIndex(Vec<usize>);

impl LineIndex {
    fn new(src: &str) -> Self {
        LineIndex(
            src.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i)
                .collect(),
        )
    }

    fn line(&self, span: Range<usize>) -> usize {
        self.0.partition_point(|&nl| nl < span.start) + 1
    }
}

/// `start-thresh`, `Start_Thresh` -> `start_thresh`.
pub fn normalize(name: &str) -> String {
    name.trim().replace('-', "_")
}

/// Parses the text of a sweep file named `file` (for messages). Checks the file's own
/// structure; the parameters are checked against the command by [`super::points`].
pub fn parse(file: &str, src: &str) -> Result<Spec> {
    let index = LineIndex::new(src);
    let span_line = |_: &str, span: Range<usize>| index.line(span);
    let raw: RawFile = toml::from_str(src).map_err(|e| {
        let line = e.span().map(|s| span_line(src, s)).unwrap_or(1);
        anyhow!("{file}:{line}: {}", e.message().trim())
    })?;
    // The size from the sizes alone, before any value is looked at.
    let reps = match raw
        .sweep
        .get_ref()
        .repetitions
        .as_ref()
        .map(|r| *r.get_ref())
    {
        None => DEFAULT_REPETITIONS,
        Some(r) => u32::try_from(r).unwrap_or(1).max(1),
    };
    let sizes: Vec<usize> = raw
        .dimension
        .iter()
        .map(|d| d.get_ref().values.get_ref().len())
        .collect();
    super::points::size_of(file, &sizes, reps)?;
    let mut lines = Lines {
        file: file.to_string(),
        sweep: span_line(src, raw.sweep.span()),
        ..Lines::default()
    };
    let sweep = raw.sweep.into_inner();
    let repetitions = match sweep.repetitions {
        None => DEFAULT_REPETITIONS,
        Some(r) => {
            let line = span_line(src, r.span());
            let v = *r.get_ref();
            if v <= 0 {
                return Err(lines.at(line, format!("repetitions = {v}: at least 1")));
            }
            u32::try_from(v).map_err(|_| lines.at(line, format!("repetitions = {v}: too many")))?
        }
    };

    // Base parameters in file order.
    let mut base_raw: Vec<_> = raw.base.into_iter().collect();
    base_raw.sort_by_key(|(k, _)| k.span().start);
    let mut base = Vec::new();
    for (k, v) in base_raw {
        let kl = span_line(src, k.span());
        let vl = span_line(src, v.span());
        let name = normalize(k.get_ref());
        if base.iter().any(|(n, _)| *n == name) {
            return Err(lines.at(kl, format!("parameter {name:?} given twice")));
        }
        let val = Val::from_toml(v.get_ref()).map_err(|e| lines.at(vl, format!("{name}: {e}")))?;
        val.one_word(&name).map_err(|e| lines.at(vl, e))?;
        lines.base.push((kl, vl));
        base.push((name, val));
    }

    let mut dimensions: Vec<Dimension> = Vec::new();
    for d in raw.dimension {
        let d = d.into_inner();
        let nl = span_line(src, d.name.span());
        let name = normalize(d.name.get_ref());
        if name.is_empty() {
            return Err(lines.at(nl, "dimension without a name"));
        }
        if dimensions.iter().any(|x| x.name == name) {
            return Err(lines.at(nl, format!("dimension {name:?} given twice")));
        }
        if let Some(i) = base.iter().position(|(n, _)| *n == name) {
            return Err(lines.at(
                nl,
                format!(
                    "{name:?} is both a dimension and in [base] (line {}); keep one",
                    lines.base[i].0
                ),
            ));
        }
        let vspan_line = span_line(src, d.values.span());
        let raw_values = d.values.into_inner();
        if raw_values.is_empty() {
            return Err(lines.at(
                vspan_line,
                format!("dimension {name:?} has no values (values = [])"),
            ));
        }
        let mut values = Vec::new();
        let mut vlines = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for v in raw_values {
            let l = span_line(src, v.span());
            let val = match v.get_ref() {
                toml::Value::Array(_) => {
                    return Err(lines.at(
                        l,
                        format!("{name}: a value of a dimension is one value, not a list"),
                    ));
                }
                x => Val::from_toml(x).map_err(|e| lines.at(l, format!("{name}: {e}")))?,
            };
            if !seen.insert(val.key()) {
                return Err(lines.at(l, format!("{name}: value {} given twice", val.text())));
            }
            val.one_word(&name).map_err(|e| lines.at(l, e))?;
            values.push(val);
            vlines.push(l);
        }
        let labels = match d.labels {
            None => values
                .iter()
                .map(|v| format!("{name}={}", v.text()))
                .collect(),
            Some(l) => {
                let ll = span_line(src, l.span());
                let l = l.into_inner();
                if l.len() != values.len() {
                    return Err(lines.at(
                        ll,
                        format!(
                            "dimension {name:?}: {} labels for {} values",
                            l.len(),
                            values.len()
                        ),
                    ));
                }
                l
            }
        };
        lines.dims.push((nl, vlines));
        dimensions.push(Dimension {
            name,
            values,
            labels,
        });
    }

    let compare = match raw.compare {
        None => None,
        Some(c) => {
            lines.compare = span_line(src, c.span());
            let c = c.into_inner();
            let cl = span_line(src, c.dimension.span());
            let dim = normalize(c.dimension.get_ref());
            let Some(d) = dimensions.iter().find(|d| d.name == dim) else {
                return Err(lines.at(
                    cl,
                    format!("[compare] dimension {dim:?} is not a dimension of this sweep"),
                ));
            };
            let find = |v: &Spanned<toml::Value>, what: &str| -> Result<Val> {
                let l = span_line(src, v.span());
                let val = Val::from_toml(v.get_ref()).map_err(|e| lines.at(l, e))?;
                // A label names a value too.
                if let Some(i) = d
                    .values
                    .iter()
                    .position(|x| *x == val || x.text() == val.text())
                {
                    return Ok(d.values[i].clone());
                }
                if let Some(i) = d.labels.iter().position(|x| *x == val.text()) {
                    return Ok(d.values[i].clone());
                }
                Err(lines.at(
                    l,
                    format!(
                        "[compare] {what} {} is not one of {dim}'s values ({})",
                        val.text(),
                        d.values
                            .iter()
                            .map(Val::text)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ))
            };
            let baseline = find(&c.baseline, "baseline")?;
            let variant = c.variant.as_ref().map(|v| find(v, "variant")).transpose()?;
            if d.values.len() < 2 {
                return Err(lines.at(
                    cl,
                    format!("[compare] {dim} has a single value: nothing to compare"),
                ));
            }
            if variant.as_ref() == Some(&baseline) {
                return Err(lines.at(cl, "[compare] variant and baseline are the same value"));
            }
            Some(CompareSpec {
                dimension: dim,
                baseline,
                variant,
            })
        }
    };

    Ok(Spec {
        name: sweep.name.unwrap_or_else(|| file.to_string()),
        command: sweep.command,
        repetitions,
        base,
        dimensions,
        compare,
        lines,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
[sweep]
name = "t"
command = "sim"
repetitions = 2

[base]
count = 1000
link-mbps = 1000.0

[[dimension]]
name = "start-thresh"
values = [1, 16]
labels = ["no hysteresis", "hysteresis"]

[[dimension]]
name = "ring"
values = [16, 64]

[compare]
dimension = "start_thresh"
baseline = "no hysteresis"
"#;

    fn err(src: &str) -> String {
        format!("{:#}", parse("f.toml", src).unwrap_err())
    }

    #[test]
    fn a_good_file() {
        let s = parse("f.toml", GOOD).unwrap();
        assert_eq!(s.command, Command::Sim);
        assert_eq!(s.repetitions, 2);
        assert_eq!(
            s.base,
            vec![
                ("count".to_string(), Val::Int(1000)),
                ("link_mbps".to_string(), Val::Float(1000.0))
            ]
        );
        assert_eq!(s.dimensions[0].name, "start_thresh");
        assert_eq!(s.dimensions[0].labels[1], "hysteresis");
        assert_eq!(s.dimensions[1].labels, vec!["ring=16", "ring=64"]);
        assert_eq!(s.lines.base, vec![(8, 8), (9, 9)]);
        assert_eq!(s.lines.dims[1].0, 17);
        let c = s.compare.unwrap();
        assert_eq!(
            (c.dimension.as_str(), c.baseline),
            ("start_thresh", Val::Int(1))
        );
    }

    #[test]
    fn syntax_and_unknown_keys_name_the_line() {
        assert!(
            err("[sweep]\nname = \n").starts_with("f.toml:2: "),
            "{}",
            err("[sweep]\nname = \n")
        );
        let e = err("[sweep]\nname = \"x\"\nrepeats = 3\n");
        assert!(e.starts_with("f.toml:3: ") && e.contains("repeats"), "{e}");
        let e = err("[sweep]\ncommand = \"walk\"\n");
        assert!(e.starts_with("f.toml:2: "), "{e}");
        let e = err("[base]\ncount = 1\n");
        assert!(e.contains("sweep"), "{e}");
    }

    #[test]
    fn empty_dimension_zero_repetitions_and_mismatched_labels() {
        let e = err("[sweep]\n[[dimension]]\nname = \"ring\"\nvalues = []\n");
        assert_eq!(
            e,
            "f.toml:4: dimension \"ring\" has no values (values = [])"
        );
        let e = err("[sweep]\nrepetitions = 0\n");
        assert_eq!(e, "f.toml:2: repetitions = 0: at least 1");
        let e = err("[sweep]\n[[dimension]]\nname = \"ring\"\nvalues = [1, 2]\nlabels = [\"a\"]\n");
        assert!(
            e.starts_with("f.toml:5: ") && e.contains("1 labels for 2 values"),
            "{e}"
        );
        let e = err("[sweep]\n[[dimension]]\nname = \"ring\"\nvalues = [1, 1]\n");
        assert!(e.starts_with("f.toml:4: ") && e.contains("twice"), "{e}");
    }

    #[test]
    fn base_and_dimension_may_not_both_set_a_parameter() {
        let e = err("[sweep]\n[base]\nring = 16\n[[dimension]]\nname = \"ring\"\nvalues = [1]\n");
        assert!(e.starts_with("f.toml:5: ") && e.contains("line 3"), "{e}");
    }

    #[test]
    fn compare_must_name_a_dimension_and_its_values() {
        let src = GOOD.replace("baseline = \"no hysteresis\"", "baseline = 4");
        let e = err(&src);
        assert!(e.starts_with("f.toml:22: ") && e.contains("1, 16"), "{e}");
        let src = GOOD.replace("dimension = \"start_thresh\"", "dimension = \"pkt_size\"");
        let e = err(&src);
        assert!(e.starts_with("f.toml:21: "), "{e}");
    }

    #[test]
    fn values_render_as_arguments() {
        assert_eq!(Val::Float(2.5).text(), "2.5");
        assert_eq!(Val::Float(1000.0).text(), "1000");
        assert_eq!(
            Val::List(vec![Val::Int(1), Val::Str("a".into())]).text(),
            "1,a"
        );
        assert_eq!(Val::Str(" 7 ".into()).as_f64(), Some(7.0));
        assert_eq!(line_of("a\nb\nc", 4), 3);
    }
}
