//! Shapes chart: matvec's GB/s against the aspect ratio cols / rows (log axis), one line per
//! API through the best verified variant at each shape, beside cuBLAS SGEMV and the read kernel
//! at the same element count. In-L2 and beyond-L2 matrices are different experiments (an in-L2
//! matrix is re-read from the cache), so each gets its own lines, split at [`L2_BYTES`].

use plotters::coord::Shift;
use plotters::prelude::*;

use super::layout::{self, Frame, LegendItem, Swatch};
use super::style::{self, HouseMesh, Marker};
use super::{group_in_order, run_subtitle, slug, ChartData, DrawError, Figure};
use crate::rows::{Api, Catalog, MeasurementRow, Metric, Size, Status, L2_BYTES};

/// The vendor line's colour: green, apart from both APIs'.
const VENDOR: RGBColor = RGBColor(40, 140, 70);

/// A row the chart may draw. Sweep rows count too: a variant measured only in a sweep (over
/// work-groups, say) is still a variant at that shape, and "best" must be best over all.
fn usable(r: &MeasurementRow) -> bool {
    r.status == Status::Ok
        && r.verified
        && r.metric_unit == Metric::Bandwidth
        && r.metric.is_finite()
        && r.metric > 0.0
}

#[derive(Debug, Clone, PartialEq)]
struct Point {
    /// log10(cols / rows).
    x: f64,
    gbs: f64,
}

/// A line of points of one source and one side of L2.
#[derive(Debug, Clone, PartialEq)]
struct Series {
    label: String,
    color: RGBColor,
    marker: Marker,
    dashed: bool,
    in_l2: bool,
    points: Vec<Point>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ShapesFigure {
    frame: Frame,
    series: Vec<Series>,
}

/// A matvec shape measured in one group, with the best row of each API.
struct Shape<'a> {
    rows: u64,
    cols: u64,
    size: &'a str,
    best: Vec<&'a MeasurementRow>,
}

impl Shape<'_> {
    fn x(&self) -> f64 {
        (self.cols as f64 / self.rows as f64).log10()
    }

    fn in_l2(&self) -> bool {
        self.rows * self.cols * 4 < L2_BYTES
    }
}

/// The best verified row per API at each shape of `rows`, in the order of the shapes.
fn shapes<'a>(catalog: &Catalog, rows: &[&'a MeasurementRow]) -> Vec<Shape<'a>> {
    let matvec = rows
        .iter()
        .copied()
        .filter(|r| catalog.drawn_in("shapes", r.family));
    group_in_order(matvec, |r| r.size.clone())
        .into_iter()
        .filter_map(|(_, rs)| {
            let first: &'a MeasurementRow = rs[0];
            let Size { rows, cols } = Size::parse(&first.size).ok()?;
            if rows == 0 || cols == 0 {
                return None;
            }
            let mut best: Vec<&'a MeasurementRow> = Vec::new();
            for r in rs {
                match best.iter_mut().find(|b| b.api == r.api) {
                    Some(b) if b.metric >= r.metric => {}
                    Some(b) => *b = r,
                    None => best.push(r),
                }
            }
            Some(Shape {
                rows,
                cols,
                size: &first.size,
                best,
            })
        })
        .collect()
}

pub(crate) fn figures(data: &ChartData) -> Vec<(String, ShapesFigure)> {
    let rows = data.measurements.iter().filter(|r| usable(r));
    let groups = group_in_order(rows, |r| {
        (r.run_id.clone(), r.study.clone(), r.device.clone())
    });
    let devices = group_in_order(groups.iter(), |((_, _, d), _)| d.clone()).len();
    let mut out = Vec::new();
    for ((run_id, study, device), rows) in groups {
        let shapes = shapes(&data.catalog, &rows);
        let mut ratios: Vec<f64> = shapes.iter().map(Shape::x).collect();
        ratios.sort_by(f64::total_cmp);
        ratios.dedup_by(|a, b| (*a - *b).abs() < 1e-9);
        if ratios.len() < 2 {
            continue;
        }
        let name = if devices > 1 {
            slug(&format!("{study}-{device}"))
        } else {
            slug(&study)
        };
        out.push((name, build(data, &run_id, &study, &rows, &shapes)));
    }
    out
}

/// The read kernel's best GB/s over the APIs at `elements`, in this group.
fn roofline(catalog: &Catalog, rows: &[&MeasurementRow], elements: u64) -> Option<f64> {
    rows.iter()
        .filter(|r| {
            catalog
                .memory_references()
                .is_some_and(|(family, m)| r.family == family && r.variant == m.read)
        })
        .filter(|r| r.elements == elements)
        .map(|r| r.metric)
        .max_by(f64::total_cmp)
}

/// cuBLAS SGEMV's GB/s at `size`, measured beside `run_id`.
fn vendor(data: &ChartData, run_id: &str, size: &str) -> Option<f64> {
    data.baselines
        .iter()
        .find(|b| b.run_id == run_id && b.row.baseline == "sgemv" && b.row.size == size)
        .map(|b| b.row.gbs)
        .filter(|g| g.is_finite() && *g > 0.0)
}

/// One series per source and side of L2, points sorted by x; empty series dropped.
fn series_of(
    label: &str,
    color: RGBColor,
    marker: Marker,
    dashed: bool,
    shapes: &[Shape],
    value: impl Fn(&Shape) -> Option<f64>,
) -> Vec<Series> {
    [false, true]
        .into_iter()
        .map(|in_l2| {
            let mut points: Vec<Point> = shapes
                .iter()
                .filter(|s| s.in_l2() == in_l2)
                .filter_map(|s| {
                    Some(Point {
                        x: s.x(),
                        gbs: value(s)?,
                    })
                })
                .collect();
            points.sort_by(|a, b| a.x.total_cmp(&b.x));
            Series {
                label: label.to_string(),
                color,
                marker,
                dashed,
                in_l2,
                points,
            }
        })
        .filter(|s| !s.points.is_empty())
        .collect()
}

fn build(
    data: &ChartData,
    run_id: &str,
    study: &str,
    rows: &[&MeasurementRow],
    shapes: &[Shape],
) -> ShapesFigure {
    let mut series = Vec::new();
    for api in [Api::OpenCl, Api::Cuda] {
        let st = style::api_style(api);
        let best = |s: &Shape| Some(s.best.iter().find(|r| r.api == api)?.metric);
        series.extend(series_of(
            &format!("{api} (best variant)"),
            st.color,
            st.marker,
            st.dashed,
            shapes,
            best,
        ));
    }
    series.extend(series_of(
        "cuBLAS SGEMV",
        VENDOR,
        Marker::Square,
        false,
        shapes,
        |s| vendor(data, run_id, s.size),
    ));
    series.extend(series_of(
        "read kernel, same elements",
        style::REF_LINE,
        Marker::Diamond,
        true,
        shapes,
        |s| roofline(&data.catalog, rows, s.rows * s.cols),
    ));
    let mut legend: Vec<LegendItem> = series.iter().filter(|s| !s.in_l2).map(line_item).collect();
    for s in series.iter().filter(|s| s.in_l2) {
        if !series.iter().any(|o| !o.in_l2 && o.label == s.label) {
            legend.push(line_item(s));
        }
    }
    legend.push(LegendItem::new(
        "thin, hollow centre: inside L2",
        Swatch::line(style::TEXT_MUTED, false, Some(Marker::Circle)),
    ));
    // Which variants won, counted per API: the winners per shape would not fit a line.
    let winners = shapes.iter().flat_map(|s| s.best.iter());
    let mut wins: Vec<(Api, String, usize)> =
        group_in_order(winners, |r| (r.api, r.variant.clone()))
            .into_iter()
            .map(|((a, v), rs)| (a, v, rs.len()))
            .collect();
    wins.sort();
    let best_text: Vec<String> = wins
        .iter()
        .map(|(a, v, n)| format!("{a} {v} x{n}"))
        .collect();
    let mut notes = vec![
        format!(
            "Inside L2: matrix below {} MiB (an H100's L2); thick lines: beyond it. \
             Best verified variant per API at each shape; GB/s as the family counts it.",
            L2_BYTES >> 20
        ),
        format!(
            "Best variant at each of {} shapes: {}.",
            shapes.len(),
            best_text.join(", ")
        ),
    ];
    if !series.iter().any(|s| s.label == "cuBLAS SGEMV") {
        notes
            .push("No cuBLAS SGEMV line: no baselines.csv with these sizes beside the run.".into());
    }
    ShapesFigure {
        frame: Frame {
            title: style::title("Matvec at every shape", &format!("study {study}")),
            subtitle: run_subtitle(rows.iter().copied()),
            legend,
            // The list of best variants runs long: wrapped, not cut off.
            notes: super::layout::wrap_notes(&notes, style::WIDTH - 2 * style::MARGIN),
        },
        series,
    }
}

fn line_item(s: &Series) -> LegendItem {
    LegendItem::new(
        s.label.clone(),
        Swatch::line(s.color, s.dashed, Some(s.marker)),
    )
}

/// Tick label of a log10 position: `1`, `10`, `10^-3`, exact powers only.
fn pow10_label(&x: &f64) -> String {
    if (x - x.round()).abs() > 1e-6 {
        return String::new();
    }
    match x.round() as i32 {
        0 => "1".into(),
        1 => "10".into(),
        k => format!("10^{k}"),
    }
}

impl Figure for ShapesFigure {
    fn size(&self) -> (u32, u32) {
        self.frame.size_with_plot(520, style::HEIGHT)
    }

    fn paint<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), DrawError> {
        let plot_area = self.frame.draw(root, style::MARGIN / 2)?;
        let points = || self.series.iter().flat_map(|s| s.points.iter());
        let x_lo = points().map(|p| p.x).fold(f64::INFINITY, f64::min);
        let x_hi = points().map(|p| p.x).fold(f64::NEG_INFINITY, f64::max);
        let (x_lo, x_hi) = if x_lo.is_finite() && x_hi.is_finite() {
            (x_lo.floor() - 0.3, x_hi.ceil() + 0.3)
        } else {
            (-1.0, 1.0)
        };
        // Points are positive and finite (`usable`): all lie on the axes, whose top stays finite.
        let y_hi = super::axis_top(points().map(|p| p.gbs).fold(0.0, f64::max), 1.08);
        let mut chart = layout::line_chart(&plot_area, (x_lo, x_hi), y_hi)?;
        chart
            .configure_mesh()
            .house_style()
            .x_desc("aspect ratio cols / rows (log scale)")
            .y_desc("Bandwidth (GB/s)")
            .max_light_lines(style::MAX_LIGHT_LINES)
            .x_labels(((x_hi - x_lo).ceil() as usize + 1).min(16))
            .x_label_formatter(&pow10_label)
            .y_label_formatter(&super::fmt_tick)
            .y_labels(8)
            .draw()?;
        for s in &self.series {
            let pts = s.points.iter().map(|p| (p.x, p.gbs));
            let line = s.color.stroke_width(if s.in_l2 { 1 } else { 2 });
            layout::draw_line(&mut chart, pts, line, s.dashed)?;
        }
        for s in &self.series {
            for p in &s.points {
                let px = chart.backend_coord(&(p.x, p.gbs));
                layout::draw_marker(root, px, s.marker, s.color)?;
                if s.in_l2 {
                    root.draw(&Circle::new(px, 2, WHITE.filled()))?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::tests::m;
    use crate::plot::vendor::RunBaseline;
    use crate::rows::BaselineRow;

    fn row(api: &str, variant: &str, size: &str, gbs: f64) -> MeasurementRow {
        let mut r = m(api, "H100", "shapes", "matvec", variant, gbs);
        r.size = size.into();
        r.comparison = format!("matvec/{variant}/{size}");
        r
    }

    fn read(api: &str, elements: u64, gbs: f64) -> MeasurementRow {
        let mut r = m(api, "H100", "shapes", "bandwidth", "read", gbs);
        r.size = elements.to_string();
        r.elements = elements;
        r
    }

    fn data() -> ChartData {
        let mut measurements = Vec::new();
        for (size, elements) in [
            ("1048576x64", 1u64 << 26),
            ("8192x8192", 1 << 26),
            ("256x262144", 1 << 26),
            ("2048x2048", 1 << 22),
        ] {
            for api in ["OpenCL", "CUDA"] {
                measurements.push(row(api, "row-warp", size, 2000.0));
                measurements.push(row(api, "split-k", size, 2500.0));
            }
            measurements.push(read("CUDA", elements, 3000.0));
        }
        let mut failed = row("CUDA", "row-item", "8192x8192", 9000.0);
        failed.status = Status::VerifyFailed;
        measurements.push(failed);
        let baselines = vec![RunBaseline {
            run_id: measurements[0].run_id.clone(),
            row: BaselineRow {
                baseline: "sgemv".into(),
                library: "cuBLAS SGEMV via torch.mv".into(),
                size: "8192x8192".into(),
                bytes: 1 << 28,
                median_ms: 0.1,
                min_ms: 0.1,
                reps: 50,
                gbs: 2700.0,
                gflops: None,
            },
        }];
        ChartData {
            measurements,
            baselines,
            ..crate::plot::tests::registered()
        }
    }

    /// Bandwidths near f64::MAX (a hand-edited CSV): 8 % headroom above them made the y axis
    /// end at infinity, where plotters' tick search never ends.
    #[test]
    fn huge_bandwidths_draw_in_bounded_time() {
        let mut d = data();
        for r in &mut d.measurements {
            r.metric = f64::MAX;
        }
        let (_, fig) = figures(&d).remove(0);
        let svg = crate::plot::tests::within_a_minute(move || crate::plot::render_svg(&fig));
        assert!(svg.is_ok());
    }

    #[test]
    fn draws_best_variant_vendor_and_roofline_split_at_l2() {
        let figs = figures(&data());
        assert_eq!(figs.len(), 1);
        let (name, fig) = &figs[0];
        assert_eq!(name, "shapes");
        let opencl: Vec<&Series> = fig
            .series
            .iter()
            .filter(|s| s.label.starts_with("OpenCL"))
            .collect();
        // Beyond L2 (three 256 MB shapes) and inside it (2048^2, 16 MB).
        assert_eq!(opencl.len(), 2);
        assert_eq!(opencl[0].points.len(), 3);
        assert!(opencl[1].in_l2 && opencl[1].points.len() == 1);
        // The best verified variant: split-k, not the failed row-item.
        let cuda = fig
            .series
            .iter()
            .find(|s| s.label.starts_with("CUDA"))
            .unwrap();
        assert!(cuda.points.iter().all(|p| p.gbs == 2500.0));
        // Log x: tall 1048576x64 at log10(1/16384), square at 0, wide at log10(1024).
        let xs: Vec<f64> = opencl[0].points.iter().map(|p| p.x).collect();
        assert!((xs[0] - (64.0f64 / 1048576.0).log10()).abs() < 1e-12);
        assert!(xs[1].abs() < 1e-12 && (xs[2] - 1024f64.log10()).abs() < 1e-12);
        let vendor = fig
            .series
            .iter()
            .find(|s| s.label == "cuBLAS SGEMV")
            .unwrap();
        assert_eq!(
            vendor.points,
            vec![Point {
                x: 0.0,
                gbs: 2700.0
            }]
        );
        let roof = fig
            .series
            .iter()
            .filter(|s| s.label.starts_with("read"))
            .count();
        assert_eq!(roof, 2);
        crate::plot::tests::keep_figure(fig, "shapes-example");
        let buf = crate::plot::render_rgb(fig).expect("render");
        assert!(buf.iter().any(|&b| b != 255));
    }

    /// A variant measured only in a sweep (split-flat over its work-group count) that beats
    /// every plain row is the best variant at that shape, on the line and in the note.
    #[test]
    fn best_counts_sweep_rows_too() {
        let mut d = data();
        for groups in [512u32, 1024] {
            let mut r = row(
                "OpenCL",
                "split-flat",
                "8192x8192",
                2400.0 + f64::from(groups),
            );
            r.sweep_param = "groups".into();
            r.sweep_value = groups.to_string();
            r.groups = groups;
            d.measurements.push(r);
        }
        let figs = figures(&d);
        let (_, fig) = &figs[0];
        let opencl = fig
            .series
            .iter()
            .find(|s| s.label.starts_with("OpenCL") && !s.in_l2)
            .unwrap();
        assert!(opencl
            .points
            .iter()
            .any(|p| p.x.abs() < 1e-12 && p.gbs == 3424.0));
        assert!(
            fig.frame
                .notes
                .iter()
                .any(|n| n.contains("OpenCL split-flat x1")),
            "{:?}",
            fig.frame.notes
        );
    }

    #[test]
    fn not_drawn_without_two_aspect_ratios() {
        let mut d = data();
        d.measurements
            .retain(|r| r.size == "8192x8192" || r.size == "2048x2048");
        // Two sizes but one aspect ratio (square): nothing to draw against.
        assert!(figures(&d).is_empty());
        assert!(figures(&crate::plot::tests::registered()).is_empty());
        use crate::rows::FamilyId;
        d.measurements.retain(|r| r.family != FamilyId::Matvec);
        assert!(figures(&d).is_empty());
    }

    /// The committed H100 shapes run: every caption line fits the canvas, and the list of
    /// best variants ends with its last shape rather than an ellipsis.
    #[test]
    fn captions_of_a_real_run_fit() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/results/h100/shapes");
        let d = crate::plot::input::load(
            &[std::path::PathBuf::from(dir)],
            crate::plot::tests::registered().catalog,
        )
        .unwrap();
        let figs = figures(&d);
        assert!(!figs.is_empty(), "the run draws a shapes chart");
        let usable = style::WIDTH - 2 * style::MARGIN;
        for (_, fig) in &figs {
            let notes = &fig.frame.notes;
            assert!(notes.len() > 2, "the long caption wraps: {notes:?}");
            for n in notes {
                assert!(style::estimate_text_w(n, style::NOTE_PX) <= usable, "{n}");
            }
            let all = notes.join(" ");
            assert!(all.contains("Best variant at each of"), "{all}");
            assert!(!all.contains('…'), "{all}");
        }
    }

    #[test]
    fn no_vendor_line_says_so() {
        let mut d = data();
        d.baselines.clear();
        let figs = figures(&d);
        assert!(figs[0]
            .1
            .frame
            .notes
            .iter()
            .any(|n| n.contains("No cuBLAS")));
        assert!(!figs[0].1.series.iter().any(|s| s.label == "cuBLAS SGEMV"));
    }
}
