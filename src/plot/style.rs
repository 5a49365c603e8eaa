//! Shared look of every chart (font, colours, markers, sizes), so the charts cannot drift apart.
//! The colours stay apart in greyscale: OpenCL dark blue, CUDA a light orange, and what must be
//! told apart without colour (unfair comparisons, the whitepaper's figures) is also hatched.

use std::sync::OnceLock;

use crate::rows::Api;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{register_font, FontStyle};

/// Embedded: rendering needs no system fonts or fontconfig and gives the same glyphs everywhere.
static FONT_BYTES: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");

/// The embedded font's registered name; SVG names it too, so a viewer without DejaVu uses its own.
pub const FONT_FAMILY: &str = "sans-serif";

static FONT_READY: OnceLock<bool> = OnceLock::new();

/// Registers the embedded font once (plotters falls back to its one face for every style);
/// `false` when unusable: callers then refuse to draw, as plotters would leave a blank image.
pub fn ensure_font() -> bool {
    *FONT_READY.get_or_init(|| register_font(FONT_FAMILY, FontStyle::Normal, FONT_BYTES).is_ok())
}

/// Canvas width: ~30 bar labels beside a plot, 16:9-ish to fit a slide or a paper column.
pub const WIDTH: u32 = 1200;
/// Of the line and vertical-bar charts.
pub const HEIGHT: u32 = 700;
/// Horizontal bar charts are as tall as their rows need (one bar thickness), at least this.
pub const MIN_HEIGHT: u32 = 360;

/// Height of the title block (title + one subtitle line with GPU, driver and run).
pub const HEADER_H: u32 = 74;
/// Space around every chart.
pub const MARGIN: u32 = 16;

/// Font sizes in pixels.
pub const TITLE_PX: u32 = 24;
pub const SUBTITLE_PX: u32 = 15;
pub const PANEL_TITLE_PX: u32 = 18;
pub const AXIS_DESC_PX: u32 = 16;
pub const TICK_PX: u32 = 14;
pub const LEGEND_PX: u32 = 14;
pub const NOTE_PX: u32 = 13;
pub const VALUE_PX: u32 = 12;

/// Legend geometry: one line of items is this tall, each swatch this wide.
pub const LEGEND_ROW_H: u32 = 24;
pub const LEGEND_SWATCH_W: u32 = 30;
pub const LEGEND_SWATCH_H: u32 = 14;
/// Gap between a swatch and its text, and between two legend items.
pub const LEGEND_TEXT_GAP: u32 = 6;
pub const LEGEND_ITEM_GAP: u32 = 26;

pub const NOTE_LINE_H: u32 = 19;

/// Height of one category row in horizontal bar charts; rows with several bars grow by
/// `BAR_SLOT_H` per bar so each bar stays at least that thick.
pub const ROW_H: u32 = 24;
pub const BAR_SLOT_H: u32 = 13;
/// Fraction of a row (or of a group's width) covered by its bars; the rest separates rows.
pub const BAR_FILL: f64 = 0.76;

/// Bounds of the row-label column (the widest label's width; longer labels get an ellipsis).
pub const MIN_LABEL_W: u32 = 60;
pub const MAX_LABEL_SHARE: f64 = 0.32;

/// Space below a plot for tick labels plus the axis description.
pub const X_AXIS_AREA: u32 = 52;
/// A panel's caption above its plot, and the gap above it from the panel above's axis text.
pub const PANEL_CAPTION_H: u32 = 30;
pub const PANEL_GAP: u32 = 18;
/// Light grid lines between two labelled ticks: one is enough to read values off.
pub const MAX_LIGHT_LINES: usize = 1;

pub const HATCH_SPACING: i32 = 7;

/// Not pure black, which looks heavy next to thin lines.
pub const TEXT: RGBColor = RGBColor(34, 34, 34);
/// Subtitles and footnotes.
pub const TEXT_MUTED: RGBColor = RGBColor(85, 85, 85);
/// OpenCL: dark blue, solid fill (greyscale: dark).
pub const OPENCL: RGBColor = RGBColor(31, 64, 140);
/// CUDA: orange, solid fill with a dark outline (greyscale: light).
pub const CUDA: RGBColor = RGBColor(240, 150, 50);
/// Any other API name (a second OpenCL device, HIP, ...): mid grey.
pub const OTHER_API: RGBColor = RGBColor(120, 120, 120);
/// Outline around light fills, so light bars keep a visible edge on white.
pub const OUTLINE: RGBColor = RGBColor(60, 60, 60);
/// The whitepaper's published figures: light grey, hatched, so they read as "not ours".
pub const REFERENCE_FILL: RGBColor = RGBColor(215, 215, 215);
pub const REFERENCE_HATCH: RGBColor = RGBColor(70, 70, 70);
/// PR bars of fair comparisons: solid dark slate.
pub const FAIR: RGBColor = RGBColor(55, 80, 110);
/// PR bars of unfair comparisons: pale fill with dark red hatching.
pub const UNFAIR_FILL: RGBColor = RGBColor(250, 228, 222);
pub const UNFAIR_HATCH: RGBColor = RGBColor(170, 40, 30);
/// The 0.9-1.1 "similar performance" band of the PR chart.
pub const BAND: RGBColor = RGBColor(150, 205, 150);
pub const BAND_ALPHA: f64 = 0.35;
/// Reference lines (PR = 1, 100 % of peak).
pub const REF_LINE: RGBColor = RGBColor(20, 20, 20);
/// Every other row's shading in horizontal bar charts, so the eye can follow a row.
pub const ROW_STRIPE: RGBColor = RGBColor(245, 245, 247);
pub const GRID_BOLD: RGBColor = RGBColor(205, 205, 205);
pub const GRID_LIGHT: RGBColor = RGBColor(236, 236, 236);
pub const WHISKER: RGBColor = RGBColor(0, 0, 0);
pub const CI_BAND_ALPHA: f64 = 0.18;

/// Series differ by marker shape as well as colour, so greyscale prints work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    Circle,
    Triangle,
    Square,
    Diamond,
}

/// How one API is drawn in every chart: colour, marker, dashed line or not (never hatched).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ApiStyle {
    pub color: RGBColor,
    pub marker: Marker,
    pub dashed: bool,
}

pub fn api_style(api: Api) -> ApiStyle {
    match api {
        Api::Cuda => ApiStyle {
            color: CUDA,
            marker: Marker::Triangle,
            dashed: true,
        },
        Api::OpenCl => ApiStyle {
            color: OPENCL,
            marker: Marker::Circle,
            dashed: false,
        },
    }
}

/// Marker of the n-th device: the API keeps its colour, the device changes the shape.
pub fn device_marker(api: Api, device_index: usize) -> Marker {
    if device_index == 0 {
        return api_style(api).marker;
    }
    const OTHERS: [Marker; 2] = [Marker::Square, Marker::Diamond];
    OTHERS[(device_index - 1) % OTHERS.len()]
}

pub fn font(px: u32) -> TextStyle<'static> {
    (FONT_FAMILY, px).into_font().color(&TEXT)
}

/// Like [`font`] but anchored at `h`/`v`, for text placed at a computed pixel position.
pub fn anchored(px: u32, h: HPos, v: VPos) -> TextStyle<'static> {
    font(px).pos(Pos::new(h, v))
}

/// Chart title: what is shown, followed by the study or kernel it is about.
pub fn title(kind: &str, subject: &str) -> String {
    if subject.is_empty() {
        kind.to_string()
    } else {
        format!("{kind} — {subject}")
    }
}

/// GPU, driver and run (its id carries the date): a chart out of its folder still says its source.
pub fn subtitle(devices: &[String], drivers: &[String], run_ids: &[String]) -> String {
    fn join(values: &[String]) -> String {
        if values.is_empty() {
            "unknown".to_string()
        } else {
            values.join(", ")
        }
    }
    format!(
        "GPU: {}   ·   driver: {}   ·   run: {}",
        join(devices),
        join(drivers),
        join(run_ids)
    )
}

/// Width of `text` at `px` pixels, never below the real one: canvases are sized before drawing.
pub fn estimate_text_w(text: &str, px: u32) -> u32 {
    (text.chars().count() as f64 * f64::from(px) * 0.62).ceil() as u32
}

/// Axis descriptions, tick labels, grid and axes in the house font and colours (tick counts and
/// formats stay with each chart).
pub(crate) trait HouseMesh {
    fn house_style(&mut self) -> &mut Self;
}

impl<X: Ranged, Y: Ranged, DB: DrawingBackend> HouseMesh
    for plotters::chart::MeshStyle<'_, '_, X, Y, DB>
{
    fn house_style(&mut self) -> &mut Self {
        self.axis_desc_style(font(AXIS_DESC_PX))
            .label_style(font(TICK_PX))
            .bold_line_style(GRID_BOLD)
            .light_line_style(GRID_LIGHT)
            .axis_style(OUTLINE)
    }
}
