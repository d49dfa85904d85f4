//! Reading a JSON value the model's way, with the path of every value at hand.
//!
//! An [`Obj`] is an object whose members have all been checked against the model's list
//! for that object: a member not in the list is refused as unknown before anything else is
//! read. The readers here refuse a value of the wrong type or out of range with its path;
//! a JSON `null` counts as an absent member.

use serde_json::{Map, Value};

use super::refusal::{Path, Refusal};

/// An object of the model, its members known to be the model's.
pub struct Obj<'a> {
    map: &'a Map<String, Value>,
    path: Path,
}

/// A short description of a value, for a message: `"fast"`, `12.5`, `an object`.
pub fn show(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) if s.chars().count() <= 40 => format!("{s:?}"),
        Value::String(_) => "a long string".into(),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

fn expected(path: &Path, what: &str, v: &Value) -> Refusal {
    Refusal::bad(path.clone(), format!("expected {what}, got {}", show(v)))
}

impl<'a> Obj<'a> {
    /// `v` as an object whose members are all among `fields` (the model's names).
    pub fn new(v: &'a Value, path: &Path, fields: &[&str]) -> Result<Obj<'a>, Refusal> {
        let map = v
            .as_object()
            .ok_or_else(|| expected(path, "an object", v))?;
        if let Some(k) = map.keys().find(|k| !fields.contains(&k.as_str())) {
            return Err(Refusal::unknown(path.key(k)));
        }
        Ok(Obj {
            map,
            path: path.clone(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path of member `key`.
    pub fn at(&self, key: &str) -> Path {
        self.path.key(key)
    }

    /// Member `key`, if present and not null.
    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    /// Refuses member `key` as not supported when it is present with anything but
    /// `accepted` (the model's default, which is also what upktgen does).
    pub fn only_default(&self, key: &str, accepted: &Value, detail: &str) -> Result<(), Refusal> {
        match self.get(key) {
            Some(v) if !same(v, accepted) => {
                Err(Refusal::unsupported_because(self.at(key), detail))
            }
            _ => Ok(()),
        }
    }

    /// Refuses member `key` as not supported whenever it is present, except as an empty
    /// array or object (which asks for nothing).
    pub fn absent(&self, key: &str) -> Result<(), Refusal> {
        match self.get(key) {
            None => Ok(()),
            Some(Value::Array(a)) if a.is_empty() => Ok(()),
            Some(Value::Object(o)) if o.is_empty() => Ok(()),
            Some(_) => Err(Refusal::unsupported(self.at(key))),
        }
    }

    /// Which alternative a choice object takes. `alternatives` are all the model's
    /// choices (supported or not). With `choice` given, no other alternative may be
    /// present; without it, the one alternative present is the choice, and with none the
    /// model's `default` is.
    pub fn choice(
        &self,
        alternatives: &[&'static str],
        default: &'static str,
    ) -> Result<&'static str, Refusal> {
        let present = || {
            alternatives
                .iter()
                .copied()
                .filter(|a| self.get(a).is_some())
        };
        match self.get("choice") {
            Some(v) => {
                let s = v
                    .as_str()
                    .ok_or_else(|| expected(&self.at("choice"), "a string", v))?;
                let c = alternatives
                    .iter()
                    .copied()
                    .find(|a| *a == s)
                    .ok_or_else(|| {
                        Refusal::bad(
                            self.at("choice"),
                            format!("{} is not one of {}", show(v), alternatives.join(", ")),
                        )
                    })?;
                if let Some(other) = present().find(|a| *a != c) {
                    return Err(Refusal::bad(
                        self.at(other),
                        format!("given, but choice is {c:?}"),
                    ));
                }
                Ok(c)
            }
            None => {
                let mut p = present();
                match (p.next(), p.next()) {
                    (None, _) => Ok(default),
                    (Some(one), None) => Ok(one),
                    (Some(a), Some(b)) => Err(Refusal::bad(
                        self.path.clone(),
                        format!("both {a} and {b} given, and no choice between them"),
                    )),
                }
            }
        }
    }

    /// An unsigned integer member from `lo` to `hi`, or `default` when absent.
    pub fn uint(&self, key: &str, lo: u64, hi: u64, default: u64) -> Result<u64, Refusal> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => uint(v, &self.at(key), lo, hi),
        }
    }

    /// A finite number member from `lo` to `hi` (both included), or `default` when absent.
    pub fn number(&self, key: &str, lo: f64, hi: f64, default: f64) -> Result<f64, Refusal> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => number(v, &self.at(key), lo, hi),
        }
    }

    pub fn boolean(&self, key: &str, default: bool) -> Result<bool, Refusal> {
        match self.get(key) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(v) => Err(expected(&self.at(key), "true or false", v)),
        }
    }

    /// A string member, `None` when absent.
    pub fn string(&self, key: &str) -> Result<Option<&'a str>, Refusal> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(expected(&self.at(key), "a string", v)),
        }
    }

    /// One of `names` as a string member, `default` when absent.
    pub fn name_of(
        &self,
        key: &str,
        names: &[&'static str],
        default: &'static str,
    ) -> Result<&'static str, Refusal> {
        let Some(s) = self.string(key)? else {
            return Ok(default);
        };
        names.iter().copied().find(|n| *n == s).ok_or_else(|| {
            Refusal::bad(
                self.at(key),
                format!("{s:?} is not one of {}", names.join(", ")),
            )
        })
    }

    /// An array member (empty when absent), each element with its path, at most `max`.
    pub fn array(&self, key: &str, max: usize) -> Result<Vec<(&'a Value, Path)>, Refusal> {
        match self.get(key) {
            None => Ok(Vec::new()),
            Some(v) => array(v, &self.at(key), max),
        }
    }
}

/// Equal as the model means it: numbers by value (`12` and `12.0` alike).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

/// `v` as an unsigned integer from `lo` to `hi`. A string of decimal digits is one too:
/// the model's 64-bit integers travel as strings in protobuf's JSON mapping, which snappi
/// writes (`"pps": "1000"`).
pub fn uint(v: &Value, path: &Path, lo: u64, hi: u64) -> Result<u64, Refusal> {
    let n = match v {
        Value::String(s)
            if !s.is_empty() && s.len() <= 20 && s.bytes().all(|b| b.is_ascii_digit()) =>
        {
            s.parse().ok()
        }
        Value::Number(n) => n.as_u64().or_else(|| {
            // 64.0 is an integer written as a float; -1 and 1.5 are not unsigned integers.
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < 1.8e19)
                .map(|f| f as u64)
        }),
        _ => None,
    }
    .ok_or_else(|| expected(path, "an unsigned integer", v))?;
    if n < lo || n > hi {
        return Err(Refusal::bad(
            path.clone(),
            format!("{n} is out of range ({lo} to {hi})"),
        ));
    }
    Ok(n)
}

/// `v` as a finite number from `lo` to `hi`.
pub fn number(v: &Value, path: &Path, lo: f64, hi: f64) -> Result<f64, Refusal> {
    let f = v
        .as_f64()
        .filter(|f| f.is_finite())
        .ok_or_else(|| expected(path, "a number", v))?;
    if f < lo || f > hi {
        return Err(Refusal::bad(
            path.clone(),
            format!("{} is out of range ({lo} to {hi})", shown(f)),
        ));
    }
    Ok(f)
}

/// A number for a message: as it is up to 16 digits (`150`, `1.5`), in exponent form above
/// (`1e300`, not its 301 digits).
pub fn shown(f: f64) -> String {
    if f.abs() < 1e16 {
        f.to_string()
    } else {
        format!("{f:e}")
    }
}

/// `v` as a string.
pub fn string<'a>(v: &'a Value, path: &Path) -> Result<&'a str, Refusal> {
    v.as_str().ok_or_else(|| expected(path, "a string", v))
}

/// `v` as an array of at most `max` elements, each with its path.
pub fn array<'a>(v: &'a Value, path: &Path, max: usize) -> Result<Vec<(&'a Value, Path)>, Refusal> {
    let a = v.as_array().ok_or_else(|| expected(path, "an array", v))?;
    if a.len() > max {
        return Err(Refusal::bad(
            path.clone(),
            format!(
                "{} elements, more than {max}, the most upktgen takes here",
                a.len()
            ),
        ));
    }
    Ok(a.iter()
        .enumerate()
        .map(|(i, e)| (e, path.index(i)))
        .collect())
}

/// The deepest nesting of arrays and objects in `v` (a scalar is 0), stopping once past
/// `limit`. Iterative, so a deep value cannot exhaust the stack here.
pub fn depth_over(v: &Value, limit: usize) -> bool {
    let mut stack = vec![(v, 0usize)];
    while let Some((v, d)) = stack.pop() {
        let kids: Box<dyn Iterator<Item = &Value>> = match v {
            Value::Array(a) => Box::new(a.iter()),
            Value::Object(o) => Box::new(o.values()),
            _ => continue,
        };
        if d + 1 > limit {
            return true;
        }
        stack.extend(kids.map(|k| (k, d + 1)));
    }
    false
}
