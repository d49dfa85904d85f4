//! SVG charts, written by hand: bar charts (grouped or stacked, with min-max bars) and
//! line charts over a numeric axis. Every chart has a title, axis titles with units, tick
//! labels and a legend; the output is standalone SVG 1.1 with no external resources.

use std::fmt::Write as _;

const W: f64 = 820.0;
/// Height of the plot area.
const PLOT_H: f64 = 300.0;
const RIGHT: f64 = 190.0;
const TOP: f64 = 50.0;
/// Approximate width of one character at font-size 12.
const CHAR_W: f64 = 6.6;
const PALETTE: [&str; 8] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#9c755f",
];

/// One series of a bar chart: a value per category, optionally a (min, max) per category.
#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub values: Vec<f64>,
    pub range: Option<Vec<(f64, f64)>>,
}

/// A bar chart over categories.
#[derive(Debug, Clone)]
pub struct BarChart<'a> {
    pub title: &'a str,
    pub x_title: &'a str,
    pub y_title: &'a str,
    pub categories: &'a [String],
    pub series: &'a [Series],
    /// Stack the series (e.g. shares of CPU time) instead of placing them side by side.
    pub stacked: bool,
}

/// A point of a line chart: x, y and an optional (min, max) bar.
pub type XyPoint = (f64, f64, Option<(f64, f64)>);

/// One line of a line chart; points are sorted by x when drawn.
#[derive(Debug, Clone)]
pub struct Line {
    pub name: String,
    pub points: Vec<XyPoint>,
}

/// Escapes text for XML.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            c => o.push(c),
        }
    }
    o
}

/// A "nice" tick step (1, 2 or 5 times a power of ten) for about `n` ticks over `span`.
pub fn nice_step(span: f64, n: usize) -> f64 {
    if span.is_nan() || span <= 0.0 {
        return 1.0;
    }
    let raw = span / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let m = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

/// Tick values from `lo` to at least `hi`.
pub fn ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    let step = nice_step(hi - lo, n);
    let start = (lo / step).floor() * step;
    let mut v = Vec::new();
    let mut k = 0;
    loop {
        let t = start + step * k as f64;
        v.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
        if t >= hi - step * 1e-3 || k > 100 {
            break;
        }
        k += 1;
    }
    v
}

/// A tick label: k / M suffixes for large values, as many decimals as the step needs.
pub fn tick_label(v: f64, step: f64) -> String {
    let a = step.abs();
    if v.abs() >= 1e6 && a >= 1e5 {
        trim(format!("{:.1}", v / 1e6)) + "M"
    } else if v.abs() >= 1e4 && a >= 1e3 {
        trim(format!("{:.1}", v / 1e3)) + "k"
    } else if a >= 1.0 {
        format!("{v:.0}")
    } else {
        let d = (-a.log10().floor()) as usize;
        format!("{v:.d$}", d = d.min(6))
    }
}

fn trim(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A chart being drawn; margins and height depend on the longest category label, which is
/// rotated 30 degrees below the x axis.
struct Frame {
    svg: String,
    y0: f64,
    y1: f64,
    left: f64,
    bottom: f64,
    h: f64,
}

impl Frame {
    fn new(title: &str, left: f64, bottom: f64) -> Self {
        let h = TOP + PLOT_H + bottom;
        let mut svg = String::new();
        let _ = writeln!(
            svg,
            r#"<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{W}" height="{h}" viewBox="0 0 {W} {h}" font-family="sans-serif" font-size="12">
<rect x="0" y="0" width="{W}" height="{h}" fill="white"/>
<text class="title" x="{:.1}" y="28" text-anchor="middle" font-size="16" font-weight="bold">{}</text>"#,
            W / 2.0,
            esc(title)
        );
        Frame {
            svg,
            y0: 0.0,
            y1: 1.0,
            left,
            bottom,
            h,
        }
    }

    fn py(&self, v: f64) -> f64 {
        let h = PLOT_H;
        self.h - self.bottom - (v - self.y0) / (self.y1 - self.y0) * h
    }

    /// Y axis from 0 (or the data's minimum when negative) to a nice maximum.
    fn y_axis(&mut self, lo: f64, hi: f64, title: &str) {
        let left = self.left;
        let lo = if lo.is_finite() { lo.min(0.0) } else { 0.0 };
        let hi = if hi.is_finite() && hi > lo {
            hi
        } else {
            lo + 1.0
        };
        let t = ticks(lo, hi, 6);
        self.y0 = t[0];
        self.y1 = *t.last().unwrap_or(&hi);
        if self.y1 <= self.y0 {
            self.y1 = self.y0 + 1.0;
        }
        let step = if t.len() > 1 { t[1] - t[0] } else { 1.0 };
        let _ = writeln!(self.svg, r#"<g class="y-axis">"#);
        for v in &t {
            let y = self.py(*v);
            let _ = writeln!(
                self.svg,
                r##"<line x1="{left}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/><text class="tick" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
                W - RIGHT,
                self.left - 6.0,
                y + 4.0,
                tick_label(*v, step)
            );
        }
        let cy = TOP + (self.h - TOP - self.bottom) / 2.0;
        let _ = writeln!(
            self.svg,
            r##"<line x1="{left}" y1="{TOP}" x2="{left}" y2="{:.1}" stroke="#000"/><text class="axis-title" x="20" y="{cy:.1}" text-anchor="middle" transform="rotate(-90 20 {cy:.1})">{}</text></g>"##,
            self.h - self.bottom,
            esc(title)
        );
    }

    fn x_title(&mut self, title: &str) {
        let left = self.left;
        let _ = writeln!(
            self.svg,
            r##"<line x1="{left}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#000"/><text class="axis-title x-title" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
            self.h - self.bottom,
            W - RIGHT,
            self.h - self.bottom,
            self.left + (W - self.left - RIGHT) / 2.0,
            self.h - 10.0,
            esc(title)
        );
    }

    fn legend(&mut self, names: &[&str]) {
        let _ = writeln!(self.svg, r#"<g class="legend">"#);
        for (i, n) in names.iter().enumerate() {
            let y = TOP + 10.0 + 20.0 * i as f64;
            let x = W - RIGHT + 15.0;
            let _ = writeln!(
                self.svg,
                r#"<rect x="{x:.1}" y="{:.1}" width="12" height="12" fill="{}"/><text x="{:.1}" y="{y:.1}">{}</text>"#,
                y - 10.0,
                PALETTE[i % PALETTE.len()],
                x + 18.0,
                esc(n)
            );
        }
        let _ = writeln!(self.svg, "</g>");
    }

    fn finish(mut self) -> String {
        self.svg.push_str("</svg>\n");
        self.svg
    }
}

fn finite_max(it: impl Iterator<Item = f64>) -> f64 {
    it.filter(|x| x.is_finite())
        .fold(f64::NEG_INFINITY, f64::max)
}

fn finite_min(it: impl Iterator<Item = f64>) -> f64 {
    it.filter(|x| x.is_finite()).fold(f64::INFINITY, f64::min)
}

/// Renders a bar chart. NaN values draw no bar.
pub fn bar_chart(c: &BarChart) -> String {
    // Room for the longest category label, rotated 30 degrees, and the x axis title.
    let longest = c
        .categories
        .iter()
        .map(|x| x.chars().count())
        .max()
        .unwrap_or(0) as f64;
    let gw0 = (W - 90.0 - RIGHT) / c.categories.len().max(1) as f64;
    let left = (longest * CHAR_W * 0.87 - gw0 / 2.0 + 10.0).max(90.0);
    let bottom = longest * CHAR_W * 0.5 + 50.0;
    let mut f = Frame::new(c.title, left, bottom);
    let ncat = c.categories.len().max(1);
    let (lo, hi) = if c.stacked {
        let tops = (0..ncat).map(|k| {
            c.series
                .iter()
                .map(|s| {
                    s.values
                        .get(k)
                        .copied()
                        .filter(|v| v.is_finite())
                        .unwrap_or(0.0)
                })
                .sum::<f64>()
        });
        (0.0, finite_max(tops))
    } else {
        let vals = c.series.iter().flat_map(|s| {
            s.values
                .iter()
                .copied()
                .chain(s.range.iter().flatten().flat_map(|&(a, b)| [a, b]))
        });
        let v: Vec<f64> = vals.collect();
        (finite_min(v.iter().copied()), finite_max(v.iter().copied()))
    };
    f.y_axis(lo, hi, c.y_title);
    let pw = W - f.left - RIGHT;
    let gw = pw / ncat as f64;
    let ns = c.series.len().max(1);
    let bw = if c.stacked {
        gw * 0.6
    } else {
        gw * 0.7 / ns as f64
    };
    let _ = writeln!(f.svg, r#"<g class="bars">"#);
    for k in 0..c.categories.len() {
        let gx = f.left + gw * k as f64;
        let mut base = 0.0;
        for (si, s) in c.series.iter().enumerate() {
            let Some(&v) = s.values.get(k) else { continue };
            if !v.is_finite() {
                continue;
            }
            let x = if c.stacked {
                gx + (gw - bw) / 2.0
            } else {
                gx + gw * 0.15 + bw * si as f64
            };
            let (v0, v1) = if c.stacked {
                (base, base + v)
            } else {
                (0.0, v)
            };
            base += if c.stacked { v } else { 0.0 };
            let (ya, yb) = (f.py(v0.min(v1)), f.py(v0.max(v1)));
            let _ = writeln!(
                f.svg,
                r#"<rect x="{x:.1}" y="{yb:.1}" width="{bw:.1}" height="{:.1}" fill="{}"><title>{}: {}</title></rect>"#,
                (ya - yb).max(0.0),
                PALETTE[si % PALETTE.len()],
                esc(&c.categories[k]),
                esc(&format!("{} {}", s.name, trim(format!("{v:.3}"))))
            );
            if let Some((a, b)) = s.range.as_ref().and_then(|r| r.get(k))
                && a.is_finite()
                && b.is_finite()
                && !c.stacked
            {
                let cx = x + bw / 2.0;
                let (ya, yb) = (f.py(*a), f.py(*b));
                let _ = writeln!(
                    f.svg,
                    r##"<path class="range" d="M{cx:.1} {ya:.1}V{yb:.1}M{:.1} {ya:.1}f.h{:.1}M{:.1} {yb:.1}f.h{:.1}" stroke="#000" fill="none"/>"##,
                    cx - bw / 4.0,
                    cx + bw / 4.0,
                    cx - bw / 4.0,
                    cx + bw / 4.0
                );
            }
        }
        let cx = gx + gw / 2.0;
        let y = f.h - f.bottom + 14.0;
        let _ = writeln!(
            f.svg,
            r#"<text class="category" x="{cx:.1}" y="{y:.1}" text-anchor="end" transform="rotate(-30 {cx:.1} {y:.1})">{}</text>"#,
            esc(&c.categories[k])
        );
    }
    let _ = writeln!(f.svg, "</g>");
    f.x_title(c.x_title);
    let names: Vec<&str> = c.series.iter().map(|s| s.name.as_str()).collect();
    f.legend(&names);
    f.finish()
}

/// Renders a line chart over a numeric x axis.
pub fn line_chart(title: &str, x_title: &str, y_title: &str, lines: &[Line]) -> String {
    let mut f = Frame::new(title, 90.0, 55.0);
    let ys = lines.iter().flat_map(|l| {
        l.points
            .iter()
            .flat_map(|&(_, y, r)| [Some(y), r.map(|r| r.0), r.map(|r| r.1)])
            .flatten()
    });
    let ys: Vec<f64> = ys.collect();
    f.y_axis(
        finite_min(ys.iter().copied()),
        finite_max(ys.iter().copied()),
        y_title,
    );
    let xs: Vec<f64> = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.0))
        .filter(|x| x.is_finite())
        .collect();
    let (xmin, xmax) = (
        finite_min(xs.iter().copied()),
        finite_max(xs.iter().copied()),
    );
    let (xmin, xmax) = if xmin.is_finite() && xmax > xmin {
        (xmin, xmax)
    } else if xmin.is_finite() {
        (xmin - 1.0, xmin + 1.0)
    } else {
        (0.0, 1.0)
    };
    let xt = ticks(xmin, xmax, 6);
    let (x0, x1) = (
        xt[0].min(xmin),
        xt.last().copied().unwrap_or(xmax).max(xmax),
    );
    let pw = W - f.left - RIGHT;
    let px = |x: f64| f.left + (x - x0) / (x1 - x0) * pw;
    let step = if xt.len() > 1 { xt[1] - xt[0] } else { 1.0 };
    let _ = writeln!(f.svg, r#"<g class="x-axis">"#);
    for t in &xt {
        let x = px(*t);
        let _ = writeln!(
            f.svg,
            r##"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="#000"/><text class="tick" x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
            f.h - f.bottom,
            f.h - f.bottom + 5.0,
            f.h - f.bottom + 18.0,
            tick_label(*t, step)
        );
    }
    let _ = writeln!(f.svg, "</g>");
    let _ = writeln!(f.svg, r#"<g class="lines">"#);
    for (i, l) in lines.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let mut pts: Vec<_> = l
            .points
            .iter()
            .filter(|p| p.0.is_finite() && p.1.is_finite())
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let d: Vec<String> = pts
            .iter()
            .enumerate()
            .map(|(k, p)| {
                format!(
                    "{}{:.1} {:.1}",
                    if k == 0 { "M" } else { "L" },
                    px(p.0),
                    f.py(p.1)
                )
            })
            .collect();
        if !d.is_empty() {
            let _ = writeln!(
                f.svg,
                r#"<path d="{}" stroke="{color}" stroke-width="2" fill="none"/>"#,
                d.join("")
            );
        }
        // Min-max bars of the lines side by side, so they do not hide each other.
        let dx = (i as f64 - (lines.len() as f64 - 1.0) / 2.0) * 4.0;
        for p in pts {
            let (x, y) = (px(p.0), f.py(p.1));
            if let Some((a, b)) = p.2.filter(|r| r.0.is_finite() && r.1.is_finite()) {
                let xb = x + dx;
                let _ = writeln!(
                    f.svg,
                    r#"<path class="range" d="M{xb:.1} {:.1}V{:.1}" stroke="{color}"/>"#,
                    f.py(a),
                    f.py(b)
                );
            }
            let _ = writeln!(
                f.svg,
                r#"<circle cx="{x:.1}" cy="{y:.1}" r="4" fill="{color}"><title>{}: {} at {}</title></circle>"#,
                esc(&l.name),
                trim(format!("{:.3}", p.1)),
                trim(format!("{:.3}", p.0))
            );
        }
    }
    let _ = writeln!(f.svg, "</g>");
    f.x_title(x_title);
    let names: Vec<&str> = lines.iter().map(|l| l.name.as_str()).collect();
    f.legend(&names);
    f.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(svg: &str) -> Vec<String> {
        let doc = roxmltree::Document::parse(svg).expect("valid XML");
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        doc.descendants()
            .filter(|n| n.has_tag_name("text"))
            .map(|n| n.text().unwrap_or("").to_string())
            .collect()
    }

    #[test]
    fn nice_ticks() {
        assert_eq!(nice_step(100.0, 5), 20.0);
        assert_eq!(nice_step(7.0, 6), 2.0);
        assert_eq!(ticks(0.0, 148_000.0, 6), vec![0.0, 50e3, 100e3, 150e3]);
        assert_eq!(tick_label(150_000.0, 50_000.0), "150k");
        assert_eq!(tick_label(1_500_000.0, 500_000.0), "1.5M");
        assert_eq!(tick_label(0.25, 0.05), "0.25");
        assert_eq!(tick_label(40.0, 20.0), "40");
    }

    #[test]
    fn bar_chart_is_valid_svg_with_axes_units_and_legend() {
        let cats = vec!["a <1>".to_string(), "b & c".to_string()];
        let series = vec![Series {
            name: "median".into(),
            values: vec![100_000.0, 148_000.0],
            range: Some(vec![(90_000.0, 110_000.0), (140_000.0, 150_000.0)]),
        }];
        let svg = bar_chart(&BarChart {
            title: "pps per point",
            x_title: "point",
            y_title: "packets per second",
            categories: &cats,
            series: &series,
            stacked: false,
        });
        let t = texts(&svg);
        for want in [
            "pps per point",
            "point",
            "packets per second",
            "median",
            "a <1>",
            "b & c",
            "150k",
            "0",
        ] {
            assert!(t.iter().any(|x| x == want), "no text {want:?} in {t:?}");
        }
        assert_eq!(svg.matches("class=\"range\"").count(), 2);
    }

    #[test]
    fn stacked_bars_stack() {
        let cats = vec!["p".to_string()];
        let series: Vec<Series> = [("sy", 30.0), ("hi", 30.0), ("id", 40.0)]
            .iter()
            .map(|(n, v)| Series {
                name: n.to_string(),
                values: vec![*v],
                range: None,
            })
            .collect();
        let svg = bar_chart(&BarChart {
            title: "CPU",
            x_title: "point",
            y_title: "% of CPU time",
            categories: &cats,
            series: &series,
            stacked: true,
        });
        let t = texts(&svg);
        assert!(t.iter().any(|x| x == "% of CPU time") && t.iter().any(|x| x == "100"));
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let ys: Vec<f64> = doc
            .descendants()
            .filter(|n| n.has_tag_name("rect") && n.has_children())
            .map(|n| n.attribute("y").unwrap().parse().unwrap())
            .collect();
        assert_eq!(ys.len(), 3);
        assert!(ys[0] > ys[1] && ys[1] > ys[2], "{ys:?}");
    }

    #[test]
    fn line_chart_and_empty_data() {
        let svg = line_chart(
            "pps against ring",
            "ring (descriptors)",
            "packets per second",
            &[Line {
                name: "start_thresh=1".into(),
                points: vec![
                    (64.0, 2.0, Some((1.0, 3.0))),
                    (16.0, 1.0, None),
                    (256.0, f64::NAN, None),
                ],
            }],
        );
        let t = texts(&svg);
        for want in [
            "ring (descriptors)",
            "packets per second",
            "start_thresh=1",
            "250",
        ] {
            assert!(t.iter().any(|x| x == want), "no {want:?} in {t:?}");
        }
        let svg = line_chart("empty", "x", "y", &[]);
        texts(&svg);
        let svg = bar_chart(&BarChart {
            title: "none",
            x_title: "x",
            y_title: "y",
            categories: &[],
            series: &[],
            stacked: false,
        });
        texts(&svg);
    }
}
