//! The horizontal grouped-bar panel and the figure of one or two of them under a title
//! block: the PR, peak, PTX, unroll, fill, BFS and texture charts.

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::layout::{filled_box, fit_text, ref_line_px, Frame};
use super::style::{self, HouseMesh};
use super::{group_in_order, DrawError};
use crate::rows::{Api, MeasurementRow};

/// Width of the row-label column: the longest label's (conservative estimate), bounded at `width`.
pub(crate) fn labels_width<'a>(labels: impl IntoIterator<Item = &'a str>, width: u32) -> u32 {
    let needed = labels
        .into_iter()
        .map(|l| style::estimate_text_w(l, style::TICK_PX))
        .max()
        .unwrap_or(0);
    needed.clamp(
        style::MIN_LABEL_W,
        (f64::from(width) * style::MAX_LABEL_SHARE) as u32,
    )
}

/// A bar of a horizontal bar panel (or of the Table 1 chart, upright).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HBar {
    pub value: f64,
    /// Drawn as a whisker.
    pub ci: Option<(f64, f64)>,
    pub color: RGBColor,
    pub hatch: Option<RGBColor>,
    /// Drawn just past the bar's end (its value).
    pub text: Option<String>,
}

impl HBar {
    pub(crate) fn of_api(api: Api, value: f64, text: String) -> Self {
        HBar {
            value,
            ci: None,
            color: style::api_style(api).color,
            hatch: None,
            text: Some(text),
        }
    }
}

/// One category row: a label at the left, one slot per series, an optional note at the right.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HBarRow {
    pub label: String,
    /// One entry per slot; `None` leaves the slot empty (no data for that series).
    pub bars: Vec<Option<HBar>>,
    pub annotation: Option<String>,
}

impl HBarRow {
    pub(crate) fn new(label: String, bars: Vec<Option<HBar>>) -> Self {
        HBarRow {
            label,
            bars,
            annotation: None,
        }
    }
}

/// One row per comparison of `rows`, in their order, with one slot per API of `apis`: the bar
/// `bar` makes of that API's row, empty where there is none.
pub(crate) fn comparison_rows(
    rows: &[&MeasurementRow],
    apis: &[Api],
    bar: impl Fn(&MeasurementRow) -> Option<HBar>,
) -> Vec<HBarRow> {
    group_in_order(rows.iter().copied(), |r| r.comparison.clone())
        .into_iter()
        .map(|(name, rs)| {
            let bars = apis
                .iter()
                .map(|a| bar(rs.iter().find(|r| r.api == *a)?))
                .collect();
            HBarRow::new(name, bars)
        })
        .collect()
}

/// A horizontal grouped-bar plot: long, numerous category labels (variants, PTX classes) stay
/// readable.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HBarPanel {
    pub caption: String,
    pub x_desc: String,
    pub x_max: f64,
    pub rows: Vec<HBarRow>,
    /// Shaded x band (the PR chart's 0.9-1.1).
    pub band: Option<(f64, f64)>,
    /// Dashed vertical reference line (PR = 1, 100 %).
    pub ref_line: Option<f64>,
}

impl HBarPanel {
    fn slots(&self) -> usize {
        self.rows.iter().map(|r| r.bars.len()).max().unwrap_or(1)
    }

    /// Caption and axis included.
    pub(crate) fn height(&self) -> u32 {
        let row_h = style::ROW_H.max(self.slots() as u32 * style::BAR_SLOT_H + 8);
        style::PANEL_CAPTION_H
            + style::PANEL_GAP
            + self.rows.len().max(1) as u32 * row_h
            + style::X_AXIS_AREA
    }

    /// Draws into `area`; labels, hatching and notes go on the whole canvas `root`, in pixels
    /// from the chart's mapping: labels in a `label_w` column left of the plot (none when 0),
    /// annotations in an `annot_w` column right of it.
    pub(crate) fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        area: &DrawingArea<DB, Shift>,
        label_w: u32,
        annot_w: u32,
    ) -> Result<(), DrawError> {
        let n = self.rows.len().max(1);
        let x_max = super::axis_top(self.x_max, 1.0);
        let y_top = n as f64 - 0.5;
        let mut chart = ChartBuilder::on(area)
            .caption(&self.caption, style::font(style::PANEL_TITLE_PX))
            .margin_top(style::PANEL_GAP)
            .margin_left(label_w + style::MARGIN)
            .margin_right(annot_w + style::MARGIN)
            .x_label_area_size(style::X_AXIS_AREA)
            .build_cartesian_2d(0f64..x_max, -0.5f64..y_top)?;

        // Row i is drawn top-down: the first row at the top.
        let row_y = |i: usize| (n - 1 - i) as f64;
        // Background first (stripes, band), then the grid over it, then data on top.
        draw_ground(&mut chart, self.rows.len(), (0.0, x_max), self.band)?;
        chart
            .configure_mesh()
            .house_style()
            .disable_y_mesh()
            .y_labels(0)
            .x_labels(8)
            .x_max_light_lines(style::MAX_LIGHT_LINES)
            .x_label_formatter(&super::fmt_tick)
            .x_desc(self.x_desc.as_str())
            .draw()?;
        // The reference line goes under the bars so value labels never sit on a dashed line;
        // it stays visible in the gaps between rows.
        if let Some(x) = self.ref_line {
            if x > 0.0 && x < x_max {
                let a = chart.backend_coord(&(x, y_top));
                let b = chart.backend_coord(&(x, -0.5));
                ref_line_px(root, a, b)?;
            }
        }
        let slots = self.slots().max(1);
        let slot_h = style::BAR_FILL / slots as f64;
        let value_font = style::anchored(style::VALUE_PX, HPos::Left, VPos::Center);
        for (i, row) in self.rows.iter().enumerate() {
            let y = row_y(i);
            for (s, bar) in row.bars.iter().enumerate() {
                let Some(bar) = bar else { continue };
                if !bar.value.is_finite() {
                    continue;
                }
                // Slot 0 on top, so the series order matches the legend's reading order.
                let top = y + style::BAR_FILL / 2.0 - s as f64 * slot_h;
                let bottom = top - slot_h;
                let mid = (top + bottom) / 2.0;
                let a = chart.backend_coord(&(0.0, top));
                let b = chart.backend_coord(&(bar.value.clamp(0.0, x_max), bottom));
                filled_box(root, a, b, bar.color, bar.hatch)?;
                let mut text_x = b.0;
                if let Some((lo, hi)) = bar.ci {
                    if lo.is_finite() && hi.is_finite() && lo <= hi {
                        let (l, _) = chart.backend_coord(&(lo.clamp(0.0, x_max), mid));
                        let (h, cy) = chart.backend_coord(&(hi.clamp(0.0, x_max), mid));
                        let cap = ((a.1 - b.1).abs() / 3).max(3);
                        let s = style::WHISKER.stroke_width(1);
                        super::layout::whisker(root, (l, cy), (h, cy), (0, cap), s)?;
                        text_x = text_x.max(h);
                    }
                }
                if let Some(text) = &bar.text {
                    let (_, cy) = chart.backend_coord(&(0.0, mid));
                    // Clear the row background under the value so a grid or reference line
                    // crossing it does not cut through the digits.
                    let (tw, th) = root.estimate_text_size(text, &style::font(style::VALUE_PX))?;
                    let bg = if i % 2 == 0 { style::ROW_STRIPE } else { WHITE };
                    let half = (th / 2 + 1) as i32;
                    root.draw(&Rectangle::new(
                        [(text_x + 2, cy - half), (text_x + 6 + tw as i32, cy + half)],
                        bg.filled(),
                    ))?;
                    root.draw_text(text, &value_font, (text_x + 4, cy))?;
                }
            }
        }

        let label_font = style::anchored(style::TICK_PX, HPos::Right, VPos::Center);
        let note_font = style::anchored(style::NOTE_PX, HPos::Left, VPos::Center);
        for (i, row) in self.rows.iter().enumerate() {
            let (left, cy) = chart.backend_coord(&(0.0, row_y(i)));
            if label_w > 0 {
                let text = fit_text(root, &row.label, style::TICK_PX, label_w)?;
                root.draw(&Text::new(text, (left - 8, cy), label_font.clone()))?;
            }
            if let Some(note) = &row.annotation {
                if annot_w > 0 {
                    let (right, _) = chart.backend_coord(&(x_max, 0.0));
                    let text = fit_text(root, note, style::NOTE_PX, annot_w.saturating_sub(8))?;
                    root.draw(&Text::new(text, (right + 10, cy), note_font.clone()))?;
                }
            }
        }
        Ok(())
    }
}

/// The background of a panel of `rows` rows (the first on top) over `x0..x1`: a stripe
/// behind every other row, then the `band`.
pub(crate) fn draw_ground<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    rows: usize,
    (x0, x1): (f64, f64),
    band: Option<(f64, f64)>,
) -> Result<(), DrawError> {
    let n = rows.max(1);
    for i in (0..rows).step_by(2) {
        let y = (n - 1 - i) as f64;
        let stripe = [(x0, y - 0.5), (x1, y + 0.5)];
        chart.draw_series([Rectangle::new(stripe, style::ROW_STRIPE.filled())])?;
    }
    if let Some((lo, hi)) = band {
        let area = [(lo.max(x0), -0.5), (hi.min(x1), n as f64 - 0.5)];
        let fill = style::BAND.mix(style::BAND_ALPHA).filled();
        chart.draw_series([Rectangle::new(area, fill)])?;
    }
    Ok(())
}

/// An axis top of at least `floor`, 12 % above the largest value so value labels stay inside.
pub(crate) fn axis_max<I: IntoIterator<Item = f64>>(values: I, floor: f64) -> f64 {
    let max = values
        .into_iter()
        .filter(|v| v.is_finite())
        .fold(floor, f64::max);
    if max > floor {
        max * 1.12
    } else {
        floor
    }
}

/// [`axis_max`] over the ends of the bars of `rows` and of their whiskers.
pub(crate) fn rows_axis_max<'a>(rows: impl IntoIterator<Item = &'a HBarRow>, floor: f64) -> f64 {
    let ends = rows.into_iter().flat_map(|r| {
        r.bars
            .iter()
            .flatten()
            .map(|b| b.ci.map_or(b.value, |c| c.1))
    });
    axis_max(ends, floor)
}

/// A figure of horizontal-bar panels under one title block: one panel, two side by side
/// sharing their rows (labels left of the first only), or any number stacked (the PR chart).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HBarFigure {
    frame: Frame,
    panels: Vec<HBarPanel>,
    /// The column of row annotations right of stacked panels.
    annot_w: u32,
    stacked: bool,
}

impl HBarFigure {
    /// Panels side by side, as tall as the first panel's rows need.
    pub(crate) fn new(frame: Frame, panels: Vec<HBarPanel>) -> Self {
        HBarFigure {
            frame,
            panels,
            annot_w: 0,
            stacked: false,
        }
    }

    pub(crate) fn rows(&self) -> usize {
        self.panels.iter().map(|p| p.rows.len()).sum()
    }

    /// Panels one above the other, with an `annot_w` column of row annotations at the right.
    pub(crate) fn stacked(frame: Frame, panels: Vec<HBarPanel>, annot_w: u32) -> Self {
        HBarFigure {
            frame,
            panels,
            annot_w,
            stacked: true,
        }
    }
}

impl super::Figure for HBarFigure {
    fn size(&self) -> (u32, u32) {
        let plot_h = if self.stacked {
            self.panels.iter().map(HBarPanel::height).sum()
        } else {
            self.panels.first().map_or(0, HBarPanel::height)
        };
        self.frame
            .size_with_plot(plot_h + style::MARGIN, style::MIN_HEIGHT)
    }

    fn paint<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), DrawError> {
        let mut plots = self.frame.draw(root, style::MARGIN)?;
        let labels = self.panels.iter().flat_map(|p| &p.rows);
        let label_w = labels_width(labels.map(|r| r.label.as_str()), style::WIDTH);
        if self.stacked {
            // Panels share the space in proportion to their row counts.
            let total: u32 = self.panels.iter().map(HBarPanel::height).sum();
            let (_, avail) = plots.dim_in_pixel();
            for (i, panel) in self.panels.iter().enumerate() {
                let area = if i + 1 == self.panels.len() {
                    plots.clone()
                } else {
                    let h = u64::from(avail) * u64::from(panel.height()) / u64::from(total.max(1));
                    let (top, bottom) = plots.split_vertically(h as u32);
                    plots = bottom;
                    top
                };
                panel.draw(root, &area, label_w, self.annot_w)?;
            }
            return Ok(());
        }
        match self.panels.as_slice() {
            [only] => only.draw(root, &plots, label_w, 0)?,
            [left, right, ..] => {
                let plot_w = style::WIDTH.saturating_sub(label_w) / 2;
                let (a, b) = plots.split_horizontally(label_w + plot_w);
                left.draw(root, &a, label_w, 0)?;
                right.draw(root, &b, 0, 0)?;
            }
            [] => {}
        }
        Ok(())
    }
}
