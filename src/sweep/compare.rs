//! A/B comparison of two sets of runs: the change in median of every figure with a 95 %
//! bootstrap interval and the Mann-Whitney p-value, then one plain sentence.

use super::metrics::{FIELDS, Field, Metrics};
use crate::stats::{self, Change, TooFew};
use std::fmt::Write as _;

/// Runs of one variant.
#[derive(Debug, Clone)]
pub struct Sample {
    pub name: String,
    pub runs: Vec<Metrics>,
}

/// One figure's change.
#[derive(Debug, Clone)]
pub struct Row {
    pub field: Field,
    pub change: Change,
}

/// B against A.
#[derive(Debug, Clone)]
pub struct Comparison {
    pub a: String,
    pub b: String,
    pub result: Result<Vec<Row>, TooFew>,
}

/// Compares every figure of `b` with `a`.
pub fn compare(a: &Sample, b: &Sample) -> Comparison {
    let rows = FIELDS
        .iter()
        .map(|f| {
            let xa: Vec<f64> = a.runs.iter().map(f.get).collect();
            let xb: Vec<f64> = b.runs.iter().map(f.get).collect();
            stats::compare(&xa, &xb).map(|change| Row { field: *f, change })
        })
        .collect::<Result<Vec<_>, _>>();
    Comparison {
        a: a.name.clone(),
        b: b.name.clone(),
        result: rows,
    }
}

fn is_share(f: &Field) -> bool {
    f.key.starts_with("cpu_") || f.key == "sender_idle_pct"
}

/// Decimals that show a change of this size.
fn dec(v: f64) -> usize {
    if v.abs() < 1.0 { 2 } else { 1 }
}

/// "+2.3 %" or "+1.2 points" / "+0.0040" (absolute when A's median is 0).
fn fmt_change(f: &Field, c: &Change, v: f64) -> String {
    if c.relative {
        format!("{v:+.d$} %", d = dec(v))
    } else if is_share(f) {
        format!("{v:+.d$} points", d = dec(v))
    } else {
        format!("{v:+.4}")
    }
}

/// A median for the table: whole numbers when large, four decimals when not, and
/// scientific notation when smaller than that would show.
fn fmt_val(x: f64) -> String {
    let a = x.abs();
    if x == 0.0 {
        "0".into()
    } else if a >= 100.0 {
        format!("{x:.0}")
    } else if a >= 0.01 {
        format!("{x:.4}")
    } else {
        format!("{x:.3e}")
    }
}

fn fmt_p(p: f64) -> String {
    if p < 0.001 {
        "p < 0.001".into()
    } else {
        format!("p = {p:.3}")
    }
}

fn unit(f: &Field, c: &Change) -> &'static str {
    if c.relative {
        " %"
    } else if is_share(f) {
        " points"
    } else {
        ""
    }
}

impl Comparison {
    /// The table: one row per figure.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "A: {}\nB: {}", self.a, self.b);
        let rows = match &self.result {
            Ok(r) => r,
            Err(e) => {
                let _ = writeln!(s, "{e}");
                return s;
            }
        };
        let _ = writeln!(
            s,
            "{:<38} {:>12} {:>12} {:>14} {:>26} {:>10}",
            "figure", "median A", "median B", "change", "95 % CI", "rank test"
        );
        for r in rows {
            let c = &r.change;
            let _ = writeln!(
                s,
                "{:<38} {:>12} {:>12} {:>14} {:>26} {:>10}{}",
                r.field.title,
                fmt_val(c.median_a),
                fmt_val(c.median_b),
                fmt_change(&r.field, c, c.change),
                format!(
                    "{} to {}",
                    fmt_change(&r.field, c, c.ci.0),
                    fmt_change(&r.field, c, c.ci.1)
                ),
                fmt_p(c.p),
                if c.significant { "  *" } else { "" }
            );
        }
        let _ = writeln!(
            s,
            "(n = {} and {}; * = significant: the 95 % interval excludes 0 and p < 0.05)",
            rows[0].change.n_a, rows[0].change.n_b
        );
        s
    }

    /// "B is 2.3 % faster than A (95 % CI 1.9–2.7 %, p = 0.008), interrupts per packet
    /// unchanged, idle time down 56 %" or "no significant difference in pps ...".
    pub fn sentence(&self) -> String {
        let rows = match &self.result {
            Ok(r) => r,
            Err(e) => return format!("{} vs {}: {e}", self.b, self.a),
        };
        let get = |k: &str| rows.iter().find(|r| r.field.key == k);
        let mut parts = Vec::new();
        if let Some(r) = get("pps") {
            let c = &r.change;
            let u = unit(&r.field, c);
            if c.significant {
                let (word, v, lo, hi) = if c.change >= 0.0 {
                    ("faster", c.change, c.ci.0, c.ci.1)
                } else {
                    ("slower", -c.change, -c.ci.1, -c.ci.0)
                };
                let d = dec(v);
                parts.push(format!(
                    "{} is {v:.d$}{u} {word} than {} (95 % CI {lo:.d$}–{hi:.d$}{u}, {})",
                    self.b,
                    self.a,
                    fmt_p(c.p)
                ));
            } else {
                let d = dec(c.change);
                parts.push(format!(
                    "no significant difference in pps between {} and {} (median change {:+.d$}{u}, 95 % CI {:.d$}–{:.d$}{u}, {})",
                    self.b,
                    self.a,
                    c.change,
                    c.ci.0,
                    c.ci.1,
                    fmt_p(c.p)
                ));
            }
        }
        for k in ["irq_per_pkt", "wakes_per_pkt", "cpu_id"] {
            let Some(r) = get(k) else { continue };
            let c = &r.change;
            let noun = r.field.noun;
            if !c.significant {
                parts.push(format!("{noun} unchanged"));
            } else {
                let dir = if c.change >= 0.0 { "up" } else { "down" };
                let v = c.change.abs();
                parts.push(format!(
                    "{noun} {dir} {v:.d$}{}",
                    unit(&r.field, c),
                    d = dec(v)
                ));
            }
        }
        let mut s = parts.join(", ");
        if let Some(r) = rows.first()
            && stats::min_p(r.change.n_a, r.change.n_b) >= 0.05
        {
            s += &format!(
                " (with {} and {} runs no difference can reach p < 0.05: repeat at least 4 times)",
                r.change.n_a, r.change.n_b
            );
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::CpuShares;
    use crate::sender::PktgenResult;

    fn run(pps: u64, irq: u64, idle: f64) -> Metrics {
        Metrics {
            result: PktgenResult {
                elapsed_ns: 1_000_000_000,
                idle_ns: 0,
                sent: pps,
                pkt_size: 60,
                frags: 0,
                errors: 0,
                imix_bytes: None,
                size_range: None,
            },
            cpu: CpuShares {
                id: idle,
                sy: 100.0 - idle,
                ..CpuShares::default()
            },
            interrupts: irq,
            wakes: 0,
            stops: 0,
        }
    }

    fn sample(name: &str, pps: &[u64], irq_per_pkt: f64, idle: &[f64]) -> Sample {
        Sample {
            name: name.into(),
            runs: pps
                .iter()
                .zip(idle)
                .map(|(&p, &i)| run(p, (p as f64 * irq_per_pkt) as u64, i))
                .collect(),
        }
    }

    #[test]
    fn a_faster_variant_reads_as_such() {
        let a = sample(
            "A",
            &[100_000, 100_200, 99_900, 100_100, 99_800],
            1.0,
            &[20.0, 21.0, 19.0, 20.5, 19.5],
        );
        let b = sample(
            "B",
            &[102_300, 102_500, 102_100, 102_400, 102_200],
            1.0,
            &[9.0, 8.5, 8.8, 9.2, 8.6],
        );
        let c = compare(&a, &b);
        let s = c.sentence();
        assert!(s.starts_with("B is 2.3 % faster than A (95 % CI "), "{s}");
        assert!(s.contains("interrupts per packet unchanged"), "{s}");
        assert!(s.contains("idle time down 5"), "{s}");
        assert!(c.table().contains("packets per second"));
        let s = compare(&b, &a).sentence();
        assert!(s.starts_with("A is 2.2 % slower than B"), "{s}");
    }

    #[test]
    fn medians_show_their_size() {
        assert_eq!(fmt_val(0.0), "0");
        assert_eq!(fmt_val(148438.4), "148438");
        assert_eq!(fmt_val(0.9996), "0.9996");
        assert_eq!(fmt_val(0.000012), "1.200e-5");
    }

    #[test]
    fn same_runs_make_no_difference_and_few_runs_no_verdict() {
        let a = sample("A", &[100_000, 100_200, 99_900], 1.0, &[1.0, 2.0, 3.0]);
        let s = compare(&a, &a).sentence();
        assert!(
            s.starts_with(
                "no significant difference in pps between A and A (median change +0.00 %"
            ),
            "{s}"
        );
        assert!(
            s.ends_with(
                "(with 3 and 3 runs no difference can reach p < 0.05: repeat at least 4 times)"
            ),
            "{s}"
        );
        let b = sample("B", &[1, 2], 1.0, &[1.0, 2.0]);
        let s = compare(&a, &b).sentence();
        assert_eq!(
            s,
            "B vs A: too few runs to compare (A: 3, B: 2; at least 3 each)"
        );
    }
}
