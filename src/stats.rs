//! Small statistics for comparing repeated measurements: medians, a bootstrap confidence
//! interval of the change in median, and the Mann-Whitney rank test. Deterministic: the
//! bootstrap draws from a fixed-seed xorshift generator.

use crate::rng::Rng;

/// Sorted copy without NaNs.
pub fn sorted(xs: &[f64]) -> Vec<f64> {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| !x.is_nan()).collect();
    v.sort_by(f64::total_cmp);
    v
}

/// Quantile `q` in 0..=1 of sorted data, interpolating linearly; NaN when empty.
pub fn quantile_sorted(s: &[f64], q: f64) -> f64 {
    if s.is_empty() {
        return f64::NAN;
    }
    let pos = q.clamp(0.0, 1.0) * (s.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    s[lo] + (s[hi] - s[lo]) * (pos - lo as f64)
}

/// Median; NaN when empty.
pub fn median(xs: &[f64]) -> f64 {
    quantile_sorted(&sorted(xs), 0.5)
}

/// Median, minimum and maximum (NaN when empty).
pub fn median_min_max(xs: &[f64]) -> (f64, f64, f64) {
    let s = sorted(xs);
    if s.is_empty() {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    (quantile_sorted(&s, 0.5), s[0], s[s.len() - 1])
}

/// Most observations (both samples together) for which [`mann_whitney_p`] counts the exact
/// distribution (docs/sweep.md says so).
pub const MANN_WHITNEY_EXACT_MAX: usize = 60;

/// Two-sided p-value of the Mann-Whitney U test that `a` and `b` come from the same
/// distribution. Exact (all rank arrangements counted) when there are no ties and
/// `a.len() + b.len() <= MANN_WHITNEY_EXACT_MAX`, else the normal approximation with tie and
/// continuity corrections.
pub fn mann_whitney_p(a: &[f64], b: &[f64]) -> f64 {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 {
        return 1.0;
    }
    // U of a: pairs where a wins, ties count a half.
    let mut u: f64 = 0.0;
    let mut ties = false;
    for &x in a {
        for &y in b {
            if x > y {
                u += 1.0;
            } else if x == y {
                u += 0.5;
                ties = true;
            }
        }
    }
    let all: Vec<f64> = a.iter().chain(b).copied().collect();
    let any_tie = ties || {
        let s = sorted(&all);
        s.windows(2).any(|w| w[0] == w[1])
    };
    let mn = (n1 * n2) as f64;
    if !any_tie && n1 + n2 <= MANN_WHITNEY_EXACT_MAX {
        // counts[u] = arrangements with that U, built up one observation at a time:
        // f(i, j, u) = f(i-1, j, u-j) + f(i, j-1, u).
        let m = n1 * n2;
        let mut f = vec![vec![vec![0.0f64; m + 1]; n2 + 1]; n1 + 1];
        for row in f.iter_mut() {
            row[0][0] = 1.0;
        }
        for cell in f[0].iter_mut() {
            cell[0] = 1.0;
        }
        for i in 1..=n1 {
            for j in 1..=n2 {
                for k in 0..=i * j {
                    let mut c = 0.0;
                    if k >= j {
                        c += f[i - 1][j][k - j];
                    }
                    if k <= i * (j - 1) {
                        c += f[i][j - 1][k];
                    }
                    f[i][j][k] = c;
                }
            }
        }
        let counts = &f[n1][n2];
        let total: f64 = counts.iter().sum();
        let uu = u.round() as usize;
        let le: f64 = counts[..=uu].iter().sum::<f64>() / total;
        let ge: f64 = counts[uu..].iter().sum::<f64>() / total;
        return (2.0_f64 * le.min(ge)).min(1.0);
    }
    // Normal approximation.
    let n = (n1 + n2) as f64;
    let s = sorted(&all);
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < s.len() {
        let mut j = i;
        while j + 1 < s.len() && s[j + 1] == s[i] {
            j += 1;
        }
        let t = (j - i + 1) as f64;
        tie_term += t * t * t - t;
        i = j + 1;
    }
    let var = mn / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
    if var <= 0.0 {
        return 1.0;
    }
    let z = ((u - mn / 2.0).abs() - 0.5).max(0.0) / var.sqrt();
    // The approximation is optimistic for small samples with ties: never report less than
    // the smallest p-value any arrangement of these sample sizes can reach.
    (2.0 * normal_sf(z)).max(min_p(n1, n2)).min(1.0)
}

/// Smallest two-sided p-value of a rank test with samples of `n1` and `n2`: 2 / C(n1+n2, n1).
pub fn min_p(n1: usize, n2: usize) -> f64 {
    let mut c = 1.0f64;
    for i in 0..n1.min(n2) {
        c = c * (n1 + n2 - i) as f64 / (i + 1) as f64;
    }
    (2.0 / c).min(1.0)
}

/// Upper tail of the standard normal distribution (Abramowitz-Stegun 7.1.26 erfc, error
/// below 1.5e-7).
fn normal_sf(z: f64) -> f64 {
    let x = z / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    0.5 * poly * (-x * x).exp()
}

/// Fewer runs than this per side and [`compare`] declines to conclude.
pub const MIN_RUNS: usize = 3;
/// Bootstrap resamples.
pub const BOOTSTRAP: usize = 4000;

/// The change from sample A to sample B.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Change {
    pub n_a: usize,
    pub n_b: usize,
    pub median_a: f64,
    pub median_b: f64,
    /// True: `change` and `ci` are percent of A's median; false (A's median is 0): they are
    /// differences in the data's own unit.
    pub relative: bool,
    pub change: f64,
    /// 95 % bootstrap percentile interval of the change.
    pub ci: (f64, f64),
    /// Mann-Whitney two-sided p-value.
    pub p: f64,
    /// The interval excludes 0 and p < 0.05.
    pub significant: bool,
}

/// Why two samples cannot be compared.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TooFew {
    pub n_a: usize,
    pub n_b: usize,
}

impl std::fmt::Display for TooFew {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "too few runs to compare (A: {}, B: {}; at least {MIN_RUNS} each)",
            self.n_a, self.n_b
        )
    }
}

fn change_of(ma: f64, mb: f64, relative: bool) -> f64 {
    if relative {
        (mb / ma - 1.0) * 100.0
    } else {
        mb - ma
    }
}

/// Compares medians of `a` and `b`: the change in percent (or in units when A's median is
/// 0) with a 95 % bootstrap interval, and the rank test. NaNs are ignored.
pub fn compare(a: &[f64], b: &[f64]) -> Result<Change, TooFew> {
    let a = sorted(a);
    let b = sorted(b);
    if a.len() < MIN_RUNS || b.len() < MIN_RUNS {
        return Err(TooFew {
            n_a: a.len(),
            n_b: b.len(),
        });
    }
    let ma = quantile_sorted(&a, 0.5);
    let mb = quantile_sorted(&b, 0.5);
    let relative = ma != 0.0;
    let change = change_of(ma, mb, relative);
    let mut rng = Rng::from_state(0x5EED_0F5E_ED00);
    let mut draws = Vec::with_capacity(BOOTSTRAP);
    let mut ra = vec![0.0; a.len()];
    let mut rb = vec![0.0; b.len()];
    for _ in 0..BOOTSTRAP {
        for x in ra.iter_mut() {
            *x = a[rng.index(a.len())];
        }
        for x in rb.iter_mut() {
            *x = b[rng.index(b.len())];
        }
        let c = change_of(median(&ra), median(&rb), relative);
        if c.is_finite() {
            draws.push(c);
        }
    }
    let d = sorted(&draws);
    let ci = (quantile_sorted(&d, 0.025), quantile_sorted(&d, 0.975));
    let p = mann_whitney_p(&a, &b);
    let significant = p < 0.05 && (ci.0 > 0.0 || ci.1 < 0.0);
    Ok(Change {
        n_a: a.len(),
        n_b: b.len(),
        median_a: ma,
        median_b: mb,
        relative,
        change,
        ci,
        p,
        significant,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noisy(n: usize, centre: f64, spread: f64, seed: u64) -> Vec<f64> {
        let mut r = Rng::from_state(seed);
        (0..n)
            .map(|_| centre + spread * ((r.next_u64() % 10_001) as f64 / 5000.0 - 1.0))
            .collect()
    }

    #[test]
    fn the_doc_states_when_the_rank_test_is_exact() {
        // Complete separation of 3 against 3: exactly 2/20 = 0.1 (counted, not approximated).
        assert!((mann_whitney_p(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]) - 0.1).abs() < 1e-12);
        let doc = include_str!("../docs/sweep.md");
        let doc = doc.split_whitespace().collect::<Vec<_>>().join(" ");
        let want = format!(
            "exact when there are no ties and A and B together hold at most \
             {MANN_WHITNEY_EXACT_MAX} runs"
        );
        assert!(doc.contains(&want), "docs/sweep.md must say: {want}");
    }

    #[test]
    fn medians_and_quantiles() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
        assert_eq!(median_min_max(&[5.0, f64::NAN, 1.0, 9.0]), (5.0, 1.0, 9.0));
    }

    #[test]
    fn a_known_shift_is_found_and_covered() {
        let a = noisy(10, 100_000.0, 500.0, 7);
        let b: Vec<f64> = noisy(10, 100_000.0, 500.0, 11)
            .iter()
            .map(|x| x * 1.05)
            .collect();
        let c = compare(&a, &b).unwrap();
        assert!(c.significant, "{c:?}");
        assert!(c.relative);
        assert!(c.ci.0 < 5.0 && 5.0 < c.ci.1, "CI {:?} must cover 5 %", c.ci);
        assert!(c.ci.0 > 3.0 && c.ci.1 < 7.0, "CI {:?} too wide", c.ci);
        assert!(c.p < 0.001, "p = {}", c.p);
        // The other way round: a drop of the same size.
        let c = compare(&b, &a).unwrap();
        assert!(c.significant && c.change < -4.0 && c.change > -6.0, "{c:?}");
    }

    #[test]
    fn identical_samples_are_not_different() {
        let a = noisy(8, 50.0, 5.0, 3);
        let c = compare(&a, &a).unwrap();
        assert!(!c.significant);
        assert_eq!(c.change, 0.0);
        assert!(c.ci.0 <= 0.0 && c.ci.1 >= 0.0);
        assert!(c.p > 0.9, "p = {}", c.p);
        // Two samples of one distribution.
        let c = compare(&noisy(8, 50.0, 5.0, 3), &noisy(8, 50.0, 5.0, 4)).unwrap();
        assert!(!c.significant, "{c:?}");
    }

    #[test]
    fn tiny_samples_are_refused() {
        assert_eq!(
            compare(&[1.0, 2.0], &[1.0, 2.0, 3.0]),
            Err(TooFew { n_a: 2, n_b: 3 })
        );
        assert!(compare(&[1.0, 2.0, f64::NAN], &[1.0, 2.0, 3.0]).is_err());
        // Three against three cannot reach p < 0.05 with a rank test: never "significant".
        let c = compare(&[1.0, 2.0, 3.0], &[10.0, 11.0, 12.0]).unwrap();
        assert!((c.p - 0.1).abs() < 1e-9, "p = {}", c.p);
        assert!(!c.significant);
    }

    #[test]
    fn exact_rank_test_matches_tables() {
        // n1 = n2 = 5, complete separation: 2 / C(10, 5) = 2 / 252.
        let p = mann_whitney_p(&[1.0, 2.0, 3.0, 4.0, 5.0], &[6.0, 7.0, 8.0, 9.0, 10.0]);
        assert!((p - 2.0 / 252.0).abs() < 1e-12, "{p}");
        // U = 12.5 of 25 is the middle: p = 1.
        assert_eq!(
            mann_whitney_p(&[1.0, 4.0, 5.0, 8.0, 9.0], &[2.0, 3.0, 6.0, 7.0, 10.0]),
            1.0
        );
    }

    #[test]
    fn ties_use_the_normal_approximation() {
        let a = [1.0; 6];
        assert_eq!(mann_whitney_p(&a, &a), 1.0);
        let p = mann_whitney_p(
            &[1.0, 1.0, 2.0, 2.0, 2.0, 3.0],
            &[5.0, 5.0, 6.0, 6.0, 7.0, 7.0],
        );
        assert!(p < 0.01 && p > 0.001, "{p}");
        // Three tied runs against three: no better than the best exact arrangement (0.1).
        let p = mann_whitney_p(&[1.0, 1.0, 1.0], &[2.0, 2.0, 2.0]);
        assert!((p - 0.1).abs() < 1e-12, "{p}");
        assert!((min_p(5, 5) - 2.0 / 252.0).abs() < 1e-12);
    }

    #[test]
    fn zero_baseline_is_an_absolute_change() {
        let c = compare(&[0.0, 0.0, 0.0, 0.0], &[2.0, 2.0, 2.0, 2.0]).unwrap();
        assert!(!c.relative);
        assert_eq!(c.change, 2.0);
    }

    #[test]
    fn normal_tail() {
        assert!((normal_sf(1.959_964) - 0.025).abs() < 1e-6);
        assert!((normal_sf(0.0) - 0.5).abs() < 1e-6);
    }
}
