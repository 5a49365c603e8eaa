//! Drawing pieces shared by several charts: title block, legend strip, footnotes, hatching and
//! markers. Legends sit in their own strip and notes below the plots, so they never cover data.

use plotters::coord::types::{RangedCoordf64, RangedCoordi64};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::style::{self, HouseMesh, Marker};
use super::DrawError;

/// The frame every chart shares: title, subtitle, legend strip below them, footnotes at the bottom.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Frame {
    pub title: String,
    pub subtitle: String,
    pub legend: Vec<LegendItem>,
    pub notes: Vec<String>,
}

impl Frame {
    /// Draws the frame (title and subtitle on top) across the canvas `root` and returns the
    /// area left for the plot; `notes_gap` separates plot and notes.
    pub fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        notes_gap: u32,
    ) -> Result<DrawingArea<DB, Shift>, DrawError> {
        let (width, _) = root.dim_in_pixel();
        let max_w = width.saturating_sub(2 * style::MARGIN);
        let title = fit_text(root, &self.title, style::TITLE_PX, max_w)?;
        let subtitle = fit_text(root, &self.subtitle, style::SUBTITLE_PX, max_w)?;
        let cx = (width / 2) as i32;
        let centred = |px| style::anchored(px, HPos::Center, VPos::Top);
        root.draw_text(&title, &centred(style::TITLE_PX), (cx, 14))?;
        let muted = centred(style::SUBTITLE_PX).color(&style::TEXT_MUTED);
        root.draw_text(&subtitle, &muted, (cx, 14 + style::TITLE_PX as i32 + 12))?;
        let body = root.split_vertically(style::HEADER_H).1;
        let (legend, body) = body.split_vertically(legend_height(&self.legend, width));
        // The legend's rows, each centred, broken by the drawn width of the text.
        let text_font = style::font(style::LEGEND_PX);
        let label_font = style::anchored(style::LEGEND_PX, HPos::Left, VPos::Center);
        let rows = legend_rows(&self.legend, max_w, |s| {
            Ok(legend.estimate_text_size(s, &text_font)?.0)
        })?;
        for (r, row) in rows.iter().enumerate() {
            let total: u32 = row.iter().map(|(_, w)| *w).sum::<u32>()
                + style::LEGEND_ITEM_GAP * (row.len().saturating_sub(1)) as u32;
            let mut x = (width.saturating_sub(total) / 2) as i32;
            let cy = (r as u32 * style::LEGEND_ROW_H + style::LEGEND_ROW_H / 2) as i32;
            for &(i, item_w) in row {
                draw_swatch(&legend, (x, cy), &self.legend[i].swatch)?;
                let text_x = x + (style::LEGEND_SWATCH_W + style::LEGEND_TEXT_GAP) as i32;
                legend.draw_text(&self.legend[i].label, &label_font, (text_x, cy))?;
                x += (item_w + style::LEGEND_ITEM_GAP) as i32;
            }
        }
        let (_, body_h) = body.dim_in_pixel();
        let notes_h = notes_height(self.notes.len()) + notes_gap;
        let (plot, notes) = body.split_vertically(body_h.saturating_sub(notes_h));
        let note_font =
            style::anchored(style::NOTE_PX, HPos::Left, VPos::Center).color(&style::TEXT_MUTED);
        for (i, line) in self.notes.iter().enumerate() {
            let text = fit_text(&notes, line, style::NOTE_PX, max_w)?;
            let y = 4 + i as u32 * style::NOTE_LINE_H + style::NOTE_LINE_H / 2;
            notes.draw_text(&text, &note_font, (style::MARGIN as i32, y as i32))?;
        }
        Ok(plot)
    }

    /// The size of a chart of the standard width with a plot `plot_h` high, at least `min_h`.
    pub fn size_with_plot(&self, plot_h: u32, min_h: u32) -> (u32, u32) {
        let chrome = style::HEADER_H
            + legend_height(&self.legend, style::WIDTH)
            + notes_height(self.notes.len());
        (style::WIDTH, (chrome + plot_h).max(min_h))
    }
}

/// Shortens `text` with an ellipsis until it fits `max_w` pixels at `px`.
pub(crate) fn fit_text<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    px: u32,
    max_w: u32,
) -> Result<String, DrawError> {
    let font = style::font(px);
    if area.estimate_text_size(text, &font)?.0 <= max_w {
        return Ok(text.to_string());
    }
    let chars: Vec<char> = text.chars().collect();
    // Binary search the longest prefix that fits with the ellipsis appended.
    let (mut lo, mut hi) = (0usize, chars.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        let candidate: String = chars[..mid].iter().collect::<String>() + "…";
        if area.estimate_text_size(&candidate, &font)?.0 <= max_w {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    Ok(chars[..lo]
        .iter()
        .collect::<String>()
        .trim_end()
        .to_string()
        + "…")
}

/// What a legend entry shows next to its text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Swatch {
    /// A filled box, optionally hatched (bars).
    Fill {
        color: RGBColor,
        hatch: Option<RGBColor>,
    },
    /// A line with an optional marker and a translucent band behind it (sweep series).
    Line {
        color: RGBColor,
        dashed: bool,
        marker: Option<Marker>,
        band: bool,
    },
    /// A shaded band.
    Band { color: RGBColor, alpha: f64 },
    /// A thin dashed reference line.
    RefLine,
    /// A whisker with caps (confidence interval).
    Whisker,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LegendItem {
    pub label: String,
    pub swatch: Swatch,
}

impl LegendItem {
    pub(crate) fn new(label: impl Into<String>, swatch: Swatch) -> Self {
        Self {
            label: label.into(),
            swatch,
        }
    }
}

impl Swatch {
    pub(crate) fn fill(color: RGBColor, hatch: Option<RGBColor>) -> Self {
        Swatch::Fill { color, hatch }
    }

    /// A line without a band behind it.
    pub(crate) fn line(color: RGBColor, dashed: bool, marker: Option<Marker>) -> Self {
        Swatch::Line {
            color,
            dashed,
            marker,
            band: false,
        }
    }
}

/// One filled legend entry per API, in its colour and hatch, labelled by `label`.
pub(crate) fn api_legend(
    apis: &[crate::rows::Api],
    label: impl Fn(crate::rows::Api) -> String,
) -> Vec<LegendItem> {
    apis.iter()
        .map(|&a| LegendItem::new(label(a), Swatch::fill(style::api_style(a).color, None)))
        .collect()
}

/// Greedy line breaking of legend items into rows that fit `width`, by `measure`d text width.
fn legend_rows<F: FnMut(&str) -> Result<u32, DrawError>>(
    items: &[LegendItem],
    width: u32,
    mut measure: F,
) -> Result<Vec<Vec<(usize, u32)>>, DrawError> {
    let mut rows: Vec<Vec<(usize, u32)>> = Vec::new();
    let mut row: Vec<(usize, u32)> = Vec::new();
    let mut used = 0u32;
    for (i, item) in items.iter().enumerate() {
        let w = style::LEGEND_SWATCH_W + style::LEGEND_TEXT_GAP + measure(&item.label)?;
        if !row.is_empty() && used + style::LEGEND_ITEM_GAP + w > width {
            rows.push(std::mem::take(&mut row));
            used = 0;
        }
        used += if row.is_empty() {
            w
        } else {
            w + style::LEGEND_ITEM_GAP
        };
        row.push((i, w));
    }
    if !row.is_empty() {
        rows.push(row);
    }
    Ok(rows)
}

/// Height to reserve for a legend, by the conservative width estimate: known before drawing.
pub(crate) fn legend_height(items: &[LegendItem], width: u32) -> u32 {
    let usable = width.saturating_sub(2 * style::MARGIN);
    let rows = legend_rows(items, usable, |s| {
        Ok(style::estimate_text_w(s, style::LEGEND_PX))
    })
    .map(|r| r.len())
    .unwrap_or(items.len());
    rows as u32 * style::LEGEND_ROW_H + if rows > 0 { 8 } else { 0 }
}

/// Draws one swatch whose left edge is at `x`, vertically centred on `cy`.
fn draw_swatch<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (x, cy): (i32, i32),
    swatch: &Swatch,
) -> Result<(), DrawError> {
    let w = style::LEGEND_SWATCH_W as i32;
    let h = style::LEGEND_SWATCH_H as i32;
    let (top, bottom) = (cy - h / 2, cy + h / 2);
    match swatch {
        Swatch::Fill { color, hatch } => {
            filled_box(area, (x, top), (x + w, bottom), *color, *hatch)?;
        }
        Swatch::Line {
            color,
            dashed,
            marker,
            band,
        } => {
            if *band {
                area.draw(&Rectangle::new(
                    [(x, top), (x + w, bottom)],
                    color.mix(style::CI_BAND_ALPHA).filled(),
                ))?;
            }
            let line = color.stroke_width(2);
            if *dashed {
                area.draw(&PathElement::new(vec![(x, cy), (x + 10, cy)], line))?;
                area.draw(&PathElement::new(vec![(x + 20, cy), (x + w, cy)], line))?;
            } else {
                area.draw(&PathElement::new(vec![(x, cy), (x + w, cy)], line))?;
            }
            if let Some(m) = marker {
                draw_marker(area, (x + w / 2, cy), *m, *color)?;
            }
        }
        Swatch::Band { color, alpha } => {
            area.draw(&Rectangle::new(
                [(x, top), (x + w, bottom)],
                color.mix(*alpha).filled(),
            ))?;
        }
        Swatch::RefLine => {
            ref_line_px(area, (x, cy), (x + w, cy))?;
        }
        Swatch::Whisker => {
            let s = style::WHISKER.stroke_width(1);
            whisker(area, (x + 3, cy), (x + w - 3, cy), (0, 5), s)?;
        }
    }
    Ok(())
}

/// A whisker (a confidence interval) from `a` to `b` in pixels, with a cap at each end that
/// reaches `cap` (x, y) either side of it: `(0, c)` across a horizontal whisker.
pub(crate) fn whisker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    a: (i32, i32),
    b: (i32, i32),
    cap: (i32, i32),
    line: ShapeStyle,
) -> Result<(), DrawError> {
    area.draw(&PathElement::new(vec![a, b], line))?;
    for (x, y) in [a, b] {
        let ends = vec![(x - cap.0, y - cap.1), (x + cap.0, y + cap.1)];
        area.draw(&PathElement::new(ends, line))?;
    }
    Ok(())
}

pub(crate) fn ref_line_px<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    a: (i32, i32),
    b: (i32, i32),
) -> Result<(), DrawError> {
    area.draw(&plotters::element::DashedPathElement::new(
        vec![a, b],
        6,
        4,
        style::REF_LINE.stroke_width(2),
    ))?;
    Ok(())
}

/// A filled box with a dark outline and optional hatching, in pixel coordinates.
pub(crate) fn filled_box<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    a: (i32, i32),
    b: (i32, i32),
    color: RGBColor,
    hatch_color: Option<RGBColor>,
) -> Result<(), DrawError> {
    let (x0, x1) = (a.0.min(b.0), a.0.max(b.0));
    let (y0, y1) = (a.1.min(b.1), a.1.max(b.1));
    area.draw(&Rectangle::new([(x0, y0), (x1, y1)], color.filled()))?;
    if let Some(h) = hatch_color {
        hatch(area, (x0, y0), (x1, y1), h)?;
    }
    area.draw(&Rectangle::new(
        [(x0, y0), (x1, y1)],
        style::OUTLINE.stroke_width(1),
    ))?;
    Ok(())
}

/// Diagonal ("/") hatching of a pixel rectangle. Drawn in pixel space rather than data space
/// so the lines keep one slope and spacing on log axes and in every bar.
pub(crate) fn hatch<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (x0, y0): (i32, i32),
    (x1, y1): (i32, i32),
    color: RGBColor,
) -> Result<(), DrawError> {
    let stroke = color.stroke_width(1);
    // Lines x + y = c; each is clipped to the rectangle.
    let mut c = x0 + y0 + style::HATCH_SPACING / 2;
    while c < x1 + y1 {
        let xa = x0.max(c - y1);
        let xb = x1.min(c - y0);
        if xa < xb {
            area.draw(&PathElement::new(vec![(xa, c - xa), (xb, c - xb)], stroke))?;
        }
        c += style::HATCH_SPACING;
    }
    Ok(())
}

pub(crate) fn draw_marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (x, y): (i32, i32),
    marker: Marker,
    color: RGBColor,
) -> Result<(), DrawError> {
    let fill = color.filled();
    let edge = style::OUTLINE.stroke_width(1);
    match marker {
        Marker::Circle => {
            area.draw(&Circle::new((x, y), 5, fill))?;
            area.draw(&Circle::new((x, y), 5, edge))?;
        }
        Marker::Square => {
            area.draw(&Rectangle::new([(x - 5, y - 5), (x + 5, y + 5)], fill))?;
            area.draw(&Rectangle::new([(x - 5, y - 5), (x + 5, y + 5)], edge))?;
        }
        Marker::Triangle | Marker::Diamond => {
            let pts = if marker == Marker::Triangle {
                vec![(x, y - 7), (x + 6, y + 4), (x - 6, y + 4)]
            } else {
                vec![(x, y - 7), (x + 6, y), (x, y + 7), (x - 6, y)]
            };
            area.draw(&Polygon::new(pts.clone(), fill))?;
            // The outline is closed back at the top point, where both shapes start.
            area.draw(&PathElement::new([pts, vec![(x, y - 7)]].concat(), edge))?;
        }
    }
    Ok(())
}

/// The plot of a line chart (shapes, sweep): x over `x`, y from 0 to `y_hi`.
pub(crate) fn line_chart<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    (x_lo, x_hi): (f64, f64),
    y_hi: f64,
) -> Result<ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>, DrawError> {
    Ok(ChartBuilder::on(area)
        .margin_left(style::MARGIN)
        .margin_right(style::MARGIN * 2)
        .margin_top(style::MARGIN)
        .x_label_area_size(style::X_AXIS_AREA)
        .y_label_area_size(84)
        .build_cartesian_2d(x_lo..x_hi, 0f64..y_hi)?)
}

/// The plot of a tuning chart: x counts (evaluations, ranks) from 0 to one past `x_hi` on an
/// integer axis, so no tick reads 2.5 of them; y over `y`.
pub(crate) fn counted_chart<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    x_hi: i64,
    y: std::ops::Range<f64>,
    (x_desc, y_desc): (&str, &str),
) -> Result<ChartContext<'a, DB, Cartesian2d<RangedCoordi64, RangedCoordf64>>, DrawError> {
    let mut chart = ChartBuilder::on(area)
        .margin(style::MARGIN)
        .x_label_area_size(style::X_AXIS_AREA)
        .y_label_area_size(84)
        .build_cartesian_2d(0i64..x_hi + 1, y)?;
    chart
        .configure_mesh()
        .house_style()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_labels((x_hi as usize + 2).min(12))
        .y_label_formatter(&super::fmt_tick)
        .draw()?;
    Ok(chart)
}

pub(crate) fn draw_line<DB: DrawingBackend, X: Ranged, Y: Ranged>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
    pts: impl Iterator<Item = (X::ValueType, Y::ValueType)> + Clone,
    line: ShapeStyle,
    dashed: bool,
) -> Result<(), DrawError>
where
    (X::ValueType, Y::ValueType): Clone + 'static,
{
    if dashed {
        chart.draw_series(DashedLineSeries::new(pts, 10, 6, line))?;
    } else {
        chart.draw_series(LineSeries::new(pts, line))?;
    }
    Ok(())
}

/// `notes` broken at spaces into lines of at most `max_w` estimated pixels: a long one wraps.
pub(crate) fn wrap_notes(notes: &[String], max_w: u32) -> Vec<String> {
    let mut out = Vec::new();
    for note in notes {
        let mut line = String::new();
        for word in note.split(' ') {
            let candidate = if line.is_empty() {
                word.to_string()
            } else {
                format!("{line} {word}")
            };
            if !line.is_empty() && style::estimate_text_w(&candidate, style::NOTE_PX) > max_w {
                out.push(std::mem::replace(&mut line, format!("  {word}")));
            } else {
                line = candidate;
            }
        }
        out.push(line);
    }
    out
}

pub(crate) fn notes_height(lines: usize) -> u32 {
    if lines == 0 {
        0
    } else {
        lines as u32 * style::NOTE_LINE_H + 10
    }
}
