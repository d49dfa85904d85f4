//! A header field's pattern (the model's `Pattern.Flow.*` objects): one value, a list of
//! values taken in turn, a counter going up or down, a value upktgen computes (`auto`), or
//! random values in a range.

use std::fmt::Debug;
use std::net::{Ipv4Addr, Ipv6Addr};

use serde_json::{Map, Value, json};

use super::refusal::{Path, Refusal};
use super::walk::{self, Obj};
use crate::wire::MacAddr;

/// The most values a `values` list may hold.
pub const MAX_VALUES: usize = 65_536;

/// What a field holds: an integer of some bits, a MAC, an IPv4 or an IPv6 address.
/// Each maps onto a `u128` for ordering and for the counters' defaults.
pub trait FieldValue: Sized + Copy + PartialEq + Debug {
    /// Which kind of field this is.
    const KIND: Kind;
    /// `v` as this field's value; `bits` is the width of an integer field.
    fn read(v: &Value, path: &Path, bits: u32) -> Result<Self, Refusal>;
    fn write(&self) -> Value;
    fn to_u128(&self) -> u128;
    fn from_u128(n: u128) -> Self;
}

/// The kinds of field values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Int,
    Mac,
    Ipv4,
    Ipv6,
}

/// The largest value of an integer field of `bits` bits.
pub fn max_of(bits: u32) -> u64 {
    (1u64 << bits) - 1
}

impl FieldValue for u32 {
    const KIND: Kind = Kind::Int;
    fn read(v: &Value, path: &Path, bits: u32) -> Result<Self, Refusal> {
        walk::uint(v, path, 0, max_of(bits)).map(|n| n as u32)
    }
    fn write(&self) -> Value {
        json!(self)
    }
    fn to_u128(&self) -> u128 {
        u128::from(*self)
    }
    fn from_u128(n: u128) -> Self {
        n as u32
    }
}

impl FieldValue for MacAddr {
    const KIND: Kind = Kind::Mac;
    fn read(v: &Value, path: &Path, _: u32) -> Result<Self, Refusal> {
        let s = walk::string(v, path)?;
        s.parse().map_err(|_| {
            Refusal::bad(
                path.clone(),
                format!("{s:?} is not a MAC address (six hex bytes like 02:00:00:00:00:01)"),
            )
        })
    }
    fn write(&self) -> Value {
        json!(self.to_string())
    }
    fn to_u128(&self) -> u128 {
        self.0.iter().fold(0, |n, b| n << 8 | u128::from(*b))
    }
    fn from_u128(n: u128) -> Self {
        let b = n.to_be_bytes();
        let mut m = [0; 6];
        m.copy_from_slice(&b[10..]);
        MacAddr(m)
    }
}

impl FieldValue for Ipv4Addr {
    const KIND: Kind = Kind::Ipv4;
    fn read(v: &Value, path: &Path, _: u32) -> Result<Self, Refusal> {
        let s = walk::string(v, path)?;
        s.parse()
            .map_err(|_| Refusal::bad(path.clone(), format!("{s:?} is not an IPv4 address")))
    }
    fn write(&self) -> Value {
        json!(self.to_string())
    }
    fn to_u128(&self) -> u128 {
        u128::from(u32::from(*self))
    }
    fn from_u128(n: u128) -> Self {
        Ipv4Addr::from(n as u32)
    }
}

impl FieldValue for Ipv6Addr {
    const KIND: Kind = Kind::Ipv6;
    fn read(v: &Value, path: &Path, _: u32) -> Result<Self, Refusal> {
        let s = walk::string(v, path)?;
        s.parse()
            .map_err(|_| Refusal::bad(path.clone(), format!("{s:?} is not an IPv6 address")))
    }
    fn write(&self) -> Value {
        json!(self.to_string())
    }
    fn to_u128(&self) -> u128 {
        u128::from(*self)
    }
    fn from_u128(n: u128) -> Self {
        Ipv6Addr::from(n)
    }
}

/// A counter: `count` values from `start`, each `step` above (increment) or below
/// (decrement) the one before, wrapping at the field's width; then again from `start`.
#[derive(Debug, Clone, PartialEq)]
pub struct Counter<T> {
    pub start: T,
    pub step: T,
    /// At least 1.
    pub count: u32,
}

/// `count` random values from `min` to `max` (both included), from a generator seeded
/// with `seed` (0: a different sequence every run).
#[derive(Debug, Clone, PartialEq)]
pub struct Random<T> {
    pub min: T,
    pub max: T,
    pub seed: u32,
    /// At least 1.
    pub count: u32,
}

/// A field's values, packet after packet.
#[derive(Debug, Clone, PartialEq)]
pub enum Pattern<T> {
    /// The same value in every packet.
    Value(T),
    /// The values in turn, from the first again after the last (at least one).
    Values(Vec<T>),
    Increment(Counter<T>),
    Decrement(Counter<T>),
    /// Computed by upktgen from the rest of the packet (a length, the next header's type,
    /// a MAC from the neighbour table); see docs/otg.md for each field.
    Auto,
    Random(Random<T>),
}

/// What the model says of one field: its width, its default, and which choices it has.
#[derive(Debug, Clone, Copy)]
pub struct Spec<T> {
    /// An integer field's width in bits (ignored for addresses).
    pub bits: u32,
    /// The model's default value (also the counters' default start).
    pub value: T,
    /// The model has the `auto` choice for this field.
    pub auto: bool,
    /// `auto` is the model's default choice (else `value` is).
    pub default_auto: bool,
    /// The model has the `random` choice for this field.
    pub random: bool,
}

/// An integer field of `bits` bits whose default is `value`.
pub const fn int(bits: u32, value: u32) -> Spec<u32> {
    Spec {
        bits,
        value,
        auto: false,
        default_auto: false,
        random: false,
    }
}

impl<T: Copy> Spec<T> {
    /// With the `auto` choice, the model's default.
    pub const fn auto(self) -> Self {
        Spec {
            auto: true,
            default_auto: true,
            ..self
        }
    }

    /// With the `random` choice.
    pub const fn random(self) -> Self {
        Spec {
            random: true,
            ..self
        }
    }

    /// An address field: the model has `auto` (DHCP), not its default.
    pub const fn auto_not_default(self) -> Self {
        Spec { auto: true, ..self }
    }
}

impl<T: FieldValue> Spec<T> {
    /// What an absent field means.
    pub fn default_pattern(&self) -> Pattern<T> {
        if self.default_auto {
            Pattern::Auto
        } else {
            Pattern::Value(self.value)
        }
    }

    /// The field's largest value.
    fn max(&self) -> u128 {
        match T::KIND {
            Kind::Int => u128::from(max_of(self.bits)),
            Kind::Mac => (1 << 48) - 1,
            Kind::Ipv4 => u128::from(u32::MAX),
            Kind::Ipv6 => u128::MAX,
        }
    }
}

const COMMON: [&str; 6] = [
    "choice",
    "value",
    "values",
    "increment",
    "decrement",
    "metric_tags",
];

/// The pattern of member `key` of header object `o`, the model's default when absent.
pub fn field<T: FieldValue>(o: &Obj, key: &str, spec: &Spec<T>) -> Result<Pattern<T>, Refusal> {
    match o.get(key) {
        None => Ok(spec.default_pattern()),
        Some(v) => parse(v, &o.at(key), spec),
    }
}

/// A pattern object.
pub fn parse<T: FieldValue>(v: &Value, path: &Path, spec: &Spec<T>) -> Result<Pattern<T>, Refusal> {
    let mut fields: Vec<&str> = COMMON.to_vec();
    let mut alternatives = vec!["value", "values", "increment", "decrement"];
    if spec.auto {
        fields.push("auto");
        alternatives.push("auto");
    }
    if spec.random {
        fields.push("random");
        alternatives.push("random");
    }
    let o = Obj::new(v, path, &fields)?;
    o.absent("metric_tags")?;
    let default = if spec.default_auto { "auto" } else { "value" };
    let read = |v: &Value, p: &Path| T::read(v, p, spec.bits);
    Ok(match o.choice(&alternatives, default)? {
        "value" => Pattern::Value(match o.get("value") {
            None => spec.value,
            Some(v) => read(v, &o.at("value"))?,
        }),
        "values" => {
            let list = o.array("values", MAX_VALUES)?;
            if list.is_empty() {
                return Err(Refusal::bad(
                    o.at("values"),
                    "an empty list (give at least one value)",
                ));
            }
            Pattern::Values(
                list.iter()
                    .map(|(v, p)| read(v, p))
                    .collect::<Result<_, _>>()?,
            )
        }
        "increment" => Pattern::Increment(counter(o.get("increment"), &o.at("increment"), spec)?),
        "decrement" => Pattern::Decrement(counter(o.get("decrement"), &o.at("decrement"), spec)?),
        "auto" => {
            if let Some(a) = o.get("auto") {
                // The model's `auto` member is the value an implementation computed (or,
                // for addresses, how: DHCP). Only the model's own default is taken here.
                if a.is_object() || read(a, &o.at("auto"))? != spec.value {
                    return Err(Refusal::unsupported_because(
                        o.at("auto"),
                        "upktgen computes an auto field itself",
                    ));
                }
            }
            if matches!(T::KIND, Kind::Ipv4 | Kind::Ipv6) {
                // IPv4 and IPv6 addresses: auto means DHCP, from an emulated device.
                return Err(Refusal::unsupported_because(
                    o.at("choice"),
                    "auto addresses come from emulated devices (DHCP), which upktgen has not",
                ));
            }
            Pattern::Auto
        }
        "random" => Pattern::Random(random(o.get("random"), &o.at("random"), spec)?),
        _ => unreachable!("choice() returns one of the alternatives"),
    })
}

fn counter<T: FieldValue>(
    v: Option<&Value>,
    path: &Path,
    spec: &Spec<T>,
) -> Result<Counter<T>, Refusal> {
    let empty = Value::Object(Map::new());
    let o = Obj::new(v.unwrap_or(&empty), path, &["start", "step", "count"])?;
    let read = |k: &str, d: T| match o.get(k) {
        None => Ok(d),
        Some(v) => T::read(v, &o.at(k), spec.bits),
    };
    // The model caps an integer counter's count at the number of values the field has.
    let most = match T::KIND {
        Kind::Int => (spec.max() + 1).min(u128::from(u32::MAX)) as u64,
        _ => u64::from(u32::MAX),
    };
    Ok(Counter {
        start: read("start", spec.value)?,
        step: read("step", T::from_u128(1))?,
        count: o.uint("count", 1, most, 1)? as u32,
    })
}

fn random<T: FieldValue>(
    v: Option<&Value>,
    path: &Path,
    spec: &Spec<T>,
) -> Result<Random<T>, Refusal> {
    let empty = Value::Object(Map::new());
    let o = Obj::new(v.unwrap_or(&empty), path, &["min", "max", "seed", "count"])?;
    let read = |k: &str, d: T| match o.get(k) {
        None => Ok(d),
        Some(v) => T::read(v, &o.at(k), spec.bits),
    };
    let r = Random {
        min: read("min", T::from_u128(0))?,
        max: read("max", T::from_u128(spec.max()))?,
        seed: o.uint("seed", 0, u64::from(u32::MAX), 1)? as u32,
        count: o.uint("count", 1, u64::from(u32::MAX), 1)? as u32,
    };
    if r.min.to_u128() > r.max.to_u128() {
        return Err(Refusal::bad(o.at("min"), "above max"));
    }
    Ok(r)
}

impl<T: FieldValue> Pattern<T> {
    /// The model's JSON for this pattern, every member the choice needs filled.
    pub fn to_value(&self) -> Value {
        let counter = |c: &Counter<T>| json!({"start": c.start.write(), "step": c.step.write(), "count": c.count});
        match self {
            Pattern::Value(v) => json!({"choice": "value", "value": v.write()}),
            Pattern::Values(vs) => {
                json!({"choice": "values", "values": vs.iter().map(T::write).collect::<Vec<_>>()})
            }
            Pattern::Increment(c) => json!({"choice": "increment", "increment": counter(c)}),
            Pattern::Decrement(c) => json!({"choice": "decrement", "decrement": counter(c)}),
            Pattern::Auto => json!({"choice": "auto"}),
            Pattern::Random(r) => json!({"choice": "random", "random": {
                "min": r.min.write(), "max": r.max.write(), "seed": r.seed, "count": r.count}}),
        }
    }
}
