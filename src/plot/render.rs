//! Rendering a laid-out figure: to RGB pixels or SVG text in memory, then to files written
//! whole (a failure leaves no half-drawn file), one per format.

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{style, Format, PlotError, MAX_FIGURES_PER_CHART};
use crate::export::safe;

/// A plotters failure, reduced to its message so drawing code can be generic over backends.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DrawError(pub String);

impl<E: std::error::Error + Send + Sync> From<DrawingAreaErrorKind<E>> for DrawError {
    fn from(e: DrawingAreaErrorKind<E>) -> Self {
        DrawError(e.to_string())
    }
}

/// One picture, drawable on any plotters backend so PNG and SVG come from the same code.
pub(crate) trait Figure {
    /// Canvas size in pixels (width, height).
    fn size(&self) -> (u32, u32);
    /// Draws onto `root`, which covers the whole canvas, already filled white.
    fn paint<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), DrawError>;
}

/// Paints `fig` on a white `root` and finishes the picture; refuses to without the embedded font.
fn paint_on<F: Figure, DB: DrawingBackend>(
    fig: &F,
    root: DrawingArea<DB, Shift>,
) -> Result<(), DrawError> {
    if !style::ensure_font() {
        return Err(DrawError(
            "the embedded font could not be registered".into(),
        ));
    }
    root.fill(&WHITE)?;
    fig.paint(&root)?;
    root.present()?;
    Ok(())
}

/// Renders `fig` into an RGB buffer (3 bytes per pixel, row-major).
pub(crate) fn render_rgb<F: Figure>(fig: &F) -> Result<Vec<u8>, DrawError> {
    let (w, h) = fig.size();
    let mut buf = vec![255u8; w as usize * h as usize * 3];
    paint_on(
        fig,
        BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area(),
    )?;
    Ok(buf)
}

pub(crate) fn render_svg<F: Figure>(fig: &F) -> Result<String, DrawError> {
    let mut svg = String::new();
    paint_on(
        fig,
        SVGBackend::with_string(&mut svg, fig.size()).into_drawing_area(),
    )?;
    Ok(svg)
}

/// Writes `fig` as `<out_dir>/<stem>.<ext>` for every format, rendered in memory first so a
/// drawing error leaves no file at all; returns the paths.
pub(crate) fn write_figure<F: Figure>(
    fig: &F,
    out_dir: &Path,
    stem: &str,
    formats: &[Format],
) -> Result<Vec<PathBuf>, PlotError> {
    let mut written = Vec::new();
    for &format in formats {
        let path = out_dir.join(format!("{stem}.{}", format.extension()));
        if !style::ensure_font() {
            return Err(PlotError::Font { path });
        }
        std::fs::create_dir_all(out_dir).map_err(|source| PlotError::CreateDir {
            path: out_dir.to_path_buf(),
            source,
        })?;
        let draw_err = |e: DrawError| PlotError::Draw {
            path: path.clone(),
            message: e.0,
        };
        let result = match format {
            Format::Png => {
                let buf = render_rgb(fig).map_err(draw_err)?;
                let (w, h) = fig.size();
                // plotters opens the file itself: it gets a path in a private folder, and
                // the picture is renamed into place.
                safe::write_through(&path, |inner| {
                    let mut backend = BitMapBackend::new(inner, (w, h));
                    backend
                        .blit_bitmap((0, 0), (w, h), &buf)
                        .and_then(|()| backend.present())
                        .map_err(|e| e.to_string())
                })
                .map_err(|e| e.to_string())
                .and_then(|r| r)
            }
            Format::Svg => {
                let svg = render_svg(fig).map_err(draw_err)?;
                safe::write_atomic(&path, svg.as_bytes()).map_err(|e| e.to_string())
            }
        };
        if let Err(message) = result {
            return Err(PlotError::Write { path, message });
        }
        written.push(path);
    }
    Ok(written)
}

/// [`write_all_figures`] of the first [`MAX_FIGURES_PER_CHART`] figures.
pub(crate) fn write_figures<F: Figure>(
    chart: &str,
    figures: &[(String, F)],
    out_dir: &Path,
    formats: &[Format],
) -> Result<Vec<PathBuf>, PlotError> {
    let kept = &figures[..figures.len().min(MAX_FIGURES_PER_CHART)];
    write_all_figures(chart, kept, out_dir, formats)
}

/// Writes a list of named figures of one chart kind, `<chart>-<slug>` each, appending `-2`,
/// `-3`, ... so groups that slug alike never overwrite each other's file.
pub(crate) fn write_all_figures<F: Figure>(
    chart: &str,
    figures: &[(String, F)],
    out_dir: &Path,
    formats: &[Format],
) -> Result<Vec<PathBuf>, PlotError> {
    let mut written = Vec::new();
    let mut stems = std::collections::HashSet::new();
    for (slug, fig) in figures {
        let base = format!("{chart}-{slug}");
        let mut stem = base.clone();
        for n in 2.. {
            if stems.insert(stem.clone()) {
                break;
            }
            stem = format!("{base}-{n}");
        }
        written.extend(write_figure(fig, out_dir, &stem, formats)?);
    }
    Ok(written)
}
