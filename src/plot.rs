//! Bandwidth plots (SVG, or PNG).
//!
//! The x axis is the swept parameter with the most distinct values; every
//! other parameter that varies, together with the device, picks a line. Each
//! line has its own colour and marker shape, and lines that differ in the
//! other parameters also differ in dash, so a grayscale print still tells
//! them apart. Text is laid out with DejaVu Sans, built into the binary, so
//! a plot never depends on the fonts installed and the same input always
//! gives the same bytes.

use engine::{DeviceSpec, Diag, PointResult, Workload};
use plotters::coord::Shift;
use plotters::element::{ComposedElement, DashedPathElement};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::FontStyle;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::OnceLock;

/// DejaVu Sans (Bitstream Vera license, see `assets/DejaVuSans-LICENSE.txt`).
static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");
/// The family the font is registered under; SVG text names it too.
const FAMILY: &str = "sans-serif";
/// Image size in pixels (PNG) or user units (SVG).
const SIZE: (u32, u32) = (1200, 800);

/// Writes a plot of `results` to `path`; the format follows the extension
/// (`.svg` or `.png`). `x_param` chooses the parameter on the x axis
/// (`None`: the one with the most distinct values).
pub fn plot_x(
    path: &Path,
    wl: &Workload,
    devs: &[DeviceSpec],
    results: &[PointResult],
    x_param: Option<&str>,
) -> Result<(), Diag> {
    let fail = |message: String| Diag {
        file: Some(path.display().to_string()),
        ..Diag::msg(message)
    };
    let format = format_of(path)?;
    let plan = Plan::new(wl, devs, results, x_param).map_err(fail)?;
    register_font().map_err(fail)?;
    match format {
        Format::Svg => {
            let mut svg = String::new();
            {
                let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
                draw(&root, &plan).map_err(&fail)?;
                root.present()
                    .map_err(|e| fail(format!("cannot draw: {e}")))?;
            }
            std::fs::write(path, svg).map_err(|e| fail(format!("cannot write: {e}")))
        }
        Format::Png => {
            // Fail early, with the operating system's words, where the file
            // cannot be created; the encoder would only say so at the end.
            std::fs::File::create(path).map_err(|e| fail(format!("cannot write: {e}")))?;
            let root = BitMapBackend::new(path, SIZE).into_drawing_area();
            draw(&root, &plan).map_err(&fail)?;
            root.present()
                .map_err(|e| fail(format!("cannot write: {e}")))
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Svg,
    Png,
}

/// The format a plot at `path` is written in, from its extension (`.svg`
/// or `.png`, any case); an error naming the file otherwise.
pub fn format_of(path: &Path) -> Result<Format, Diag> {
    let fail = |message: String| Diag {
        file: Some(path.display().to_string()),
        ..Diag::msg(message)
    };
    match path.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("svg") => Ok(Format::Svg),
        Some(e) if e.eq_ignore_ascii_case("png") => Ok(Format::Png),
        Some(e) => Err(fail(format!(
            "cannot plot to a '.{e}' file: the extension must be .svg or .png"
        ))),
        None => Err(fail(
            "cannot tell the plot format: the file name must end in .svg or .png".into(),
        )),
    }
}

fn register_font() -> Result<(), String> {
    static DONE: OnceLock<bool> = OnceLock::new();
    let ok = *DONE
        .get_or_init(|| plotters::style::register_font(FAMILY, FontStyle::Normal, FONT).is_ok());
    if ok {
        Ok(())
    } else {
        Err("the built-in font cannot be read".into())
    }
}

/// What to draw, decided from the results alone.
#[derive(Debug)]
struct Plan {
    title: String,
    x_desc: String,
    x_range: (i64, i64),
    y_max: f64,
    series: Vec<Series>,
}

#[derive(Debug)]
struct Series {
    label: String,
    points: Vec<(i64, f64)>,
    colour: RGBColor,
    marker: Marker,
    dash: Dash,
}

/// Colour-blind-safe colours (Okabe and Ito), then two darker ones.
const COLOURS: [RGBColor; 8] = [
    RGBColor(0x00, 0x72, 0xB2), // blue
    RGBColor(0xD5, 0x5E, 0x00), // vermillion
    RGBColor(0x00, 0x9E, 0x73), // bluish green
    RGBColor(0xCC, 0x79, 0xA7), // reddish purple
    RGBColor(0xE6, 0x9F, 0x00), // orange
    RGBColor(0x56, 0xB4, 0xE9), // sky blue
    RGBColor(0x00, 0x00, 0x00), // black
    RGBColor(0x8C, 0x56, 0x4B), // brown
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Marker {
    Circle,
    Square,
    TriangleUp,
    Diamond,
    OpenCircle,
    OpenSquare,
    OpenTriangleDown,
    Cross,
}

const MARKERS: [Marker; 8] = [
    Marker::Circle,
    Marker::Square,
    Marker::TriangleUp,
    Marker::Diamond,
    Marker::OpenCircle,
    Marker::OpenSquare,
    Marker::OpenTriangleDown,
    Marker::Cross,
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dash {
    Solid,
    /// Dash length and gap, in pixels.
    Dashed(u32, u32),
}

const DASHES: [Dash; 4] = [
    Dash::Solid,
    Dash::Dashed(12, 6),
    Dash::Dashed(3, 5),
    Dash::Dashed(24, 8),
];

impl Plan {
    fn new(
        wl: &Workload,
        devs: &[DeviceSpec],
        results: &[PointResult],
        x_param: Option<&str>,
    ) -> Result<Plan, String> {
        let first = results.first().ok_or("nothing to plot: no results")?;
        // Parameter names in workload order, as the results carry them.
        let names: Vec<&str> = first.point.iter().map(|(n, _)| n.as_str()).collect();
        let doc = |name: &str| -> &str {
            wl.params
                .iter()
                .find(|p| p.name == name)
                .map_or("", |p| p.doc.as_str())
        };
        let values: Vec<BTreeSet<i64>> = names
            .iter()
            .map(|n| results.iter().filter_map(|r| r.param(n)).collect())
            .collect();
        // The x axis: most distinct values; ties go to a parameter the
        // workload sweeps over a range, then to the later one.
        let ranged = |name: &str| {
            wl.params.iter().any(|p| {
                p.name == name && matches!(p.sweep, Some(engine::workload::Sweep::Range { .. }))
            })
        };
        let x = match x_param {
            Some(want) => names.iter().position(|n| *n == want).ok_or_else(|| {
                format!(
                    "cannot put `{want}` on the x axis: the points vary {}",
                    names.join(", ")
                )
            })?,
            None => (0..names.len())
                .max_by_key(|&i| (values[i].len(), ranged(names[i]), i))
                .ok_or("nothing to plot: the workload has no parameters")?,
        };
        let others: Vec<usize> = (0..names.len())
            .filter(|&i| i != x && values[i].len() > 1)
            .collect();

        let rank = |device: &str| {
            devs.iter()
                .position(|d| d.name == device)
                .unwrap_or(devs.len())
        };
        let full_name_of = |device: &str| {
            devs.iter()
                .find(|d| d.name == device)
                .map_or(device.to_string(), |d| d.full_name.clone())
        };
        // Variants of one device ("H100 (l2.slice.size_bytes=327680)", ...):
        // the title names the device and the legend only what differs.
        let used: BTreeSet<&str> = results.iter().map(|r| r.device.as_str()).collect();
        let base_of = |device: &str| {
            let f = full_name_of(device);
            f.strip_suffix(')')
                .and_then(|g| g.split_once(" ("))
                .map(|(b, v)| (b.to_string(), v.to_string()))
        };
        let common_base: Option<String> = {
            let bases: Option<BTreeSet<String>> =
                used.iter().map(|d| base_of(d).map(|(b, _)| b)).collect();
            match bases {
                Some(b) if b.len() == 1 && used.len() > 1 => b.into_iter().next(),
                _ => None,
            }
        };
        let full_name = |device: &str| match (&common_base, base_of(device)) {
            (Some(_), Some((_, v))) => v,
            _ => full_name_of(device),
        };
        let x_name = names[x];
        let mut lines: BTreeMap<(usize, &str, Vec<i64>), BTreeMap<i64, f64>> = BTreeMap::new();
        for r in results {
            let (Some(xv), bw) = (r.param(x_name), r.bandwidth_gbps()) else {
                continue;
            };
            if !bw.is_finite() {
                continue;
            }
            let key: Vec<i64> = others
                .iter()
                .map(|&i| r.param(names[i]).unwrap_or(0))
                .collect();
            lines
                .entry((rank(&r.device), r.device.as_str(), key))
                .or_default()
                .insert(xv, bw);
        }
        if lines.is_empty() {
            return Err("nothing to plot: no result has a finite bandwidth".into());
        }
        let devices: BTreeSet<&str> = lines.keys().map(|(_, d, _)| *d).collect();
        let combos: BTreeSet<&Vec<i64>> = lines.keys().map(|(_, _, k)| k).collect();
        let value_names: Vec<BTreeMap<i64, String>> = others
            .iter()
            .map(|&i| value_names(names[i], doc(names[i]), &values[i]))
            .collect();

        let series: Vec<Series> = lines
            .iter()
            .enumerate()
            .map(|(n, ((_, device, key), points))| {
                let mut parts = Vec::new();
                if devices.len() > 1 {
                    parts.push(full_name(device));
                }
                for ((v, m), &i) in key.iter().zip(&value_names).zip(&others) {
                    let name = || format!("{}={v}", names[i]);
                    parts.push(m.get(v).cloned().unwrap_or_else(name));
                }
                if parts.is_empty() {
                    parts.push(full_name(device));
                }
                let combo = combos.iter().position(|c| *c == key).unwrap_or(0);
                Series {
                    label: parts.join(", "),
                    points: points.iter().map(|(&x, &y)| (x, y)).collect(),
                    colour: COLOURS[n % COLOURS.len()],
                    marker: MARKERS[(n + n / MARKERS.len()) % MARKERS.len()],
                    dash: DASHES[combo % DASHES.len()],
                }
            })
            .collect();

        let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
        let (lo, hi) = (xs.clone().min().unwrap_or(0), xs.max().unwrap_or(0));
        let x_range = if lo == hi {
            (lo.saturating_sub(1), hi.saturating_add(1))
        } else {
            (lo, hi)
        };
        let y_top = series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .fold(0.0, f64::max);
        let y_max = if y_top > 0.0 { y_top * 1.08 } else { 1.0 };

        let title = match (devices.iter().next(), &common_base) {
            (_, Some(base)) => format!("{} on {base}", wl.name),
            (Some(only), _) if devices.len() == 1 => format!("{} on {}", wl.name, full_name(only)),
            _ => wl.name.clone(),
        };
        Ok(Plan {
            title,
            x_desc: axis_desc(x_name, doc(x_name)),
            x_range,
            y_max,
            series,
        })
    }
}

/// "offset (elements)" from a doc like "offset in elements"; the bare name
/// where the doc names no unit.
fn axis_desc(name: &str, doc: &str) -> String {
    let head = doc.split([':', '(']).next().unwrap_or("");
    let unit = head.rsplit_once(" in ").and_then(|(_, rest)| {
        let word: String = rest
            .trim()
            .chars()
            .take_while(|c| c.is_alphanumeric())
            .collect();
        let filler = ["a", "an", "the", "each", "one"];
        (word.len() > 1 && !filler.contains(&word.as_str())).then_some(word)
    });
    match unit {
        Some(u) => format!("{name} ({u})"),
        None => name.to_string(),
    }
}

/// Legend words for a parameter's values: the names the doc gives them
/// ("4 = float, 8 = double"), where it names every one, else "name=value".
fn value_names(name: &str, doc: &str, values: &BTreeSet<i64>) -> BTreeMap<i64, String> {
    let named: BTreeMap<i64, String> = doc
        .split([',', ':', ';'])
        .filter_map(|piece| {
            let (v, word) = piece.split_once('=')?;
            let v: i64 = v.trim().parse().ok()?;
            let word = word.trim();
            let plain = !word.is_empty()
                && word
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '-');
            plain.then(|| (v, word.to_string()))
        })
        .collect();
    let all_named = values.iter().all(|v| named.contains_key(v));
    values
        .iter()
        .map(|&v| {
            let label = if all_named {
                named[&v].clone()
            } else {
                format!("{name}={v}")
            };
            (v, label)
        })
        .collect()
}

fn font(size: f64) -> TextStyle<'static> {
    (FAMILY, size).into_font().color(&BLACK)
}

fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, plan: &Plan) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| format!("cannot draw: {e}");
    root.fill(&WHITE).map_err(e)?;
    let body = root
        .margin(12, 4, 4, 4)
        .titled(&plan.title, font(30.0))
        .map_err(e)?;

    let legend_font = font(18.0);
    let mut label_w = 0;
    for s in &plan.series {
        label_w = label_w.max(
            body.estimate_text_size(&s.label, &legend_font)
                .map_err(e)?
                .0,
        );
    }
    let legend_w = (label_w + 90).min(SIZE.0 / 2);
    let (width, _) = body.dim_in_pixel();
    let (area, legend) = body.split_horizontally(width.saturating_sub(legend_w));

    let (x0, x1) = plan.x_range;
    let mut chart = ChartBuilder::on(&area)
        .margin_top(10)
        .margin_left(10)
        .margin_right(25)
        .margin_bottom(10)
        .x_label_area_size(60)
        .y_label_area_size(80)
        .build_cartesian_2d(x0..x1, 0.0..plan.y_max)
        .map_err(e)?;
    let y_fmt = |v: &f64| format!("{v}");
    chart
        .configure_mesh()
        .x_desc(plan.x_desc.as_str())
        .y_desc("Effective bandwidth (GB/s)")
        .axis_desc_style(font(20.0))
        .label_style(font(16.0))
        .bold_line_style(RGBColor(0xDD, 0xDD, 0xDD))
        .light_line_style(RGBColor(0xF3, 0xF3, 0xF3))
        .max_light_lines(1)
        .y_label_formatter(&y_fmt)
        .draw()
        .map_err(e)?;

    for s in &plan.series {
        let line = ShapeStyle::from(&s.colour).stroke_width(2);
        match s.dash {
            Dash::Solid => chart
                .draw_series(LineSeries::new(s.points.iter().copied(), line))
                .map(|_| ()),
            Dash::Dashed(on, off) => chart
                .draw_series(DashedLineSeries::new(
                    s.points.iter().copied(),
                    on,
                    off,
                    line,
                ))
                .map(|_| ()),
        }
        .map_err(e)?;
        chart
            .draw_series(s.points.iter().map(|&p| marker(p, s.marker, s.colour)))
            .map_err(e)?;
    }

    // The legend, right of the plot, a row per line: a stretch of the
    // line with its marker, then the label.
    let (_, legend_h) = legend.dim_in_pixel();
    let n = plan.series.len().max(1) as u32;
    let row = (legend_h.saturating_sub(40) / n).clamp(8, 30) as i32;
    let text = legend_font.pos(Pos::new(HPos::Left, VPos::Center));
    for (i, s) in plan.series.iter().enumerate() {
        let y = 20 + row / 2 + i as i32 * row;
        let (a, b) = (8, 58);
        let line = ShapeStyle::from(&s.colour).stroke_width(2);
        match s.dash {
            Dash::Solid => legend.draw(&PathElement::new(vec![(a, y), (b, y)], line)),
            Dash::Dashed(on, off) => legend.draw(&DashedPathElement::new(
                vec![(a, y), (b, y)],
                on.min(10),
                off.min(6),
                line,
            )),
        }
        .map_err(e)?;
        legend
            .draw(&marker(((a + b) / 2, y), s.marker, s.colour))
            .map_err(e)?;
        legend.draw_text(&s.label, &text, (b + 10, y)).map_err(e)?;
    }
    Ok(())
}

/// A marker: a filled polygon and its outline, in pixels around a point.
type MarkerElement<C, DB> = ComposedElement<C, DB, Polygon<(i32, i32)>, PathElement<(i32, i32)>>;

/// A marker at `at`: a polygon in pixels around it, filled with the
/// colour or, for the open shapes, with white inside a coloured outline.
fn marker<C, DB: DrawingBackend>(at: C, shape: Marker, colour: RGBColor) -> MarkerElement<C, DB> {
    let r = 6;
    let poly = |pts: &[(f64, f64)]| -> Vec<(i32, i32)> {
        pts.iter()
            .map(|&(x, y)| ((x * r as f64).round() as i32, (y * r as f64).round() as i32))
            .collect()
    };
    let circle = || {
        (0..16)
            .map(|k| {
                let t = k as f64 * std::f64::consts::PI / 8.0;
                (t.cos(), t.sin())
            })
            .collect::<Vec<_>>()
    };
    let (pts, open) = match shape {
        Marker::Circle => (poly(&circle()), false),
        Marker::OpenCircle => (poly(&circle()), true),
        Marker::Square => (
            poly(&[(-0.85, -0.85), (0.85, -0.85), (0.85, 0.85), (-0.85, 0.85)]),
            false,
        ),
        Marker::OpenSquare => (
            poly(&[(-0.85, -0.85), (0.85, -0.85), (0.85, 0.85), (-0.85, 0.85)]),
            true,
        ),
        Marker::TriangleUp => (poly(&[(0.0, -1.15), (1.1, 0.8), (-1.1, 0.8)]), false),
        Marker::OpenTriangleDown => (poly(&[(0.0, 1.15), (1.1, -0.8), (-1.1, -0.8)]), true),
        Marker::Diamond => (
            poly(&[(0.0, -1.2), (1.0, 0.0), (0.0, 1.2), (-1.0, 0.0)]),
            false,
        ),
        Marker::Cross => {
            let (a, b) = (1.0, 0.3);
            (
                poly(&[
                    (-a, -a + b),
                    (-a + b, -a),
                    (0.0, -b),
                    (a - b, -a),
                    (a, -a + b),
                    (b, 0.0),
                    (a, a - b),
                    (a - b, a),
                    (0.0, b),
                    (-a + b, a),
                    (-a, a - b),
                    (-b, 0.0),
                ]),
                false,
            )
        }
    };
    let fill = if open {
        WHITE.filled()
    } else {
        colour.filled()
    };
    let mut outline = pts.clone();
    outline.push(pts[0]);
    EmptyElement::at(at)
        + Polygon::new(pts, fill)
        + PathElement::new(outline, ShapeStyle::from(&colour).stroke_width(2))
}

/// One family of points on a [`scatter`] plot.
pub struct ScatterSeries {
    /// Legend label.
    pub label: String,
    /// (measured, simulated) pairs, both positive.
    pub points: Vec<(f64, f64)>,
}

/// A log-log plot of simulated against measured values, a colour and marker
/// per series, with the line y = x and dashed lines at +/- `band` (a
/// fraction). The format follows the extension (`.svg` or `.png`).
pub fn scatter(
    path: &Path,
    title: &str,
    axis: &str,
    band: f64,
    series: &[ScatterSeries],
) -> Result<(), Diag> {
    let fail = |message: String| Diag {
        file: Some(path.display().to_string()),
        ..Diag::msg(message)
    };
    let svg = format_of(path)? == Format::Svg;
    let all = series.iter().flat_map(|s| s.points.iter());
    let (lo, hi) = all.fold((f64::MAX, 0.0f64), |(lo, hi), &(x, y)| {
        (lo.min(x).min(y), hi.max(x).max(y))
    });
    if hi <= 0.0 {
        return Err(fail("nothing to plot: no measured times".into()));
    }
    let range = (lo / 1.5, hi * 1.5);
    register_font().map_err(fail)?;
    if svg {
        let mut text = String::new();
        {
            let root = SVGBackend::with_string(&mut text, SIZE).into_drawing_area();
            draw_scatter(&root, title, axis, band, range, series).map_err(&fail)?;
            root.present()
                .map_err(|e| fail(format!("cannot draw: {e}")))?;
        }
        std::fs::write(path, text).map_err(|e| fail(format!("cannot write: {e}")))
    } else {
        std::fs::File::create(path).map_err(|e| fail(format!("cannot write: {e}")))?;
        let root = BitMapBackend::new(path, SIZE).into_drawing_area();
        draw_scatter(&root, title, axis, band, range, series).map_err(&fail)?;
        root.present()
            .map_err(|e| fail(format!("cannot write: {e}")))
    }
}

fn draw_scatter<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    axis: &str,
    band: f64,
    (lo, hi): (f64, f64),
    series: &[ScatterSeries],
) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| format!("cannot draw: {e}");
    root.fill(&WHITE).map_err(e)?;
    let body = root
        .margin(12, 4, 4, 4)
        .titled(title, font(30.0))
        .map_err(e)?;
    let legend_font = font(16.0);
    let mut label_w = 0;
    for s in series {
        label_w = label_w.max(
            body.estimate_text_size(&s.label, &legend_font)
                .map_err(e)?
                .0,
        );
    }
    let legend_w = (label_w + 50).min(SIZE.0 / 2);
    let (width, _) = body.dim_in_pixel();
    let (area, legend) = body.split_horizontally(width.saturating_sub(legend_w));
    let mut chart = ChartBuilder::on(&area)
        .margin(10)
        .margin_right(25)
        .x_label_area_size(60)
        .y_label_area_size(90)
        .build_cartesian_2d((lo..hi).log_scale(), (lo..hi).log_scale())
        .map_err(e)?;
    let fmt = |v: &f64| {
        if *v >= 1000.0 {
            format!("{:.0}", v)
        } else {
            format!("{v:.3}")
                .trim_end_matches('0')
                .trim_end_matches('.')
                .to_string()
        }
    };
    chart
        .configure_mesh()
        .x_desc(format!("measured {axis}"))
        .y_desc(format!("simulated {axis}"))
        .axis_desc_style(font(20.0))
        .label_style(font(16.0))
        .bold_line_style(RGBColor(0xDD, 0xDD, 0xDD))
        .light_line_style(RGBColor(0xF3, 0xF3, 0xF3))
        .x_label_formatter(&fmt)
        .y_label_formatter(&fmt)
        .draw()
        .map_err(e)?;
    let grey = ShapeStyle::from(&RGBColor(0x60, 0x60, 0x60)).stroke_width(1);
    chart
        .draw_series(LineSeries::new([(lo, lo), (hi, hi)], grey))
        .map_err(e)?;
    for f in [1.0 - band, 1.0 + band] {
        chart
            .draw_series(DashedLineSeries::new(
                [(lo, lo * f), (hi, hi * f)],
                8,
                6,
                grey,
            ))
            .map_err(e)?;
    }
    for (i, s) in series.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let shape = MARKERS[(i / COLOURS.len() + i) % MARKERS.len()];
        chart
            .draw_series(s.points.iter().map(|&p| marker(p, shape, colour)))
            .map_err(e)?;
    }
    let (_, legend_h) = legend.dim_in_pixel();
    let n = series.len().max(1) as u32;
    let row = (legend_h.saturating_sub(40) / n).clamp(8, 26) as i32;
    let text = legend_font.pos(Pos::new(HPos::Left, VPos::Center));
    for (i, s) in series.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let shape = MARKERS[(i / COLOURS.len() + i) % MARKERS.len()];
        let y = 20 + row / 2 + i as i32 * row;
        legend.draw(&marker((18, y), shape, colour)).map_err(e)?;
        legend.draw_text(&s.label, &text, (34, y)).map_err(e)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_come_from_the_doc() {
        assert_eq!(
            axis_desc("offset", "offset in elements"),
            "offset (elements)"
        );
        assert_eq!(
            axis_desc("elem", "element size in bytes: 4 = float, 8 = double"),
            "elem (bytes)"
        );
        assert_eq!(
            axis_desc("nMB", "array size in MiB (the seed uses 4)"),
            "nMB (MiB)"
        );
        assert_eq!(axis_desc("block", "threads per block"), "block");
        assert_eq!(axis_desc("x", ""), "x");
    }

    #[test]
    fn values_are_named_where_the_doc_names_them_all() {
        let doc = "element size in bytes: 4 = float, 8 = double";
        let m = value_names("elem", doc, &[4, 8].into());
        assert_eq!((m[&4].as_str(), m[&8].as_str()), ("float", "double"));
        let m = value_names("elem", doc, &[4, 16].into());
        assert_eq!(m[&16], "elem=16");
        let m = value_names("aligned", "1 = __align__(4) struct", &[0, 1].into());
        assert_eq!((m[&0].as_str(), m[&1].as_str()), ("aligned=0", "aligned=1"));
    }
}
