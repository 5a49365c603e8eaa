//! explain's waterfall: one chart per target, a bar per rung from the fair comparison down the
//! ladder (PTX swap, registers, carveout, compiler steps, the other clock), each with its CI,
//! the similar band and the line at PR = 1 — the PR chart's drawing, over the rungs' own rows.

use std::path::{Path, PathBuf};

use super::pr::PrChart;
use super::{slug, Chart, ChartData, Format, PlotError};
use crate::explain::ladder::RungKind;
use crate::explain::split_rung_id;
use crate::record::PrRow;

/// The rung rows of each target among `prs`, in ladder order, relabelled for the chart: the
/// bar names the rung and what it holds; the chart is titled by the target.
pub fn rows_per_target(prs: &[PrRow]) -> Vec<(String, Vec<PrRow>)> {
    let mut targets: Vec<(String, Vec<(RungKind, PrRow)>)> = Vec::new();
    for row in prs {
        let Some((target, rung)) = split_rung_id(&row.comparison) else {
            continue;
        };
        let Some(kind) = RungKind::parse(rung) else {
            continue;
        };
        let mut bar = row.clone();
        bar.comparison = format!("{}: {}", kind.name(), kind.describe());
        // The bar's label is the variant's place: the rung's name.
        bar.variant = kind.name();
        bar.study = format!("explain {target}");
        // Both passes' rows on one chart.
        bar.run_id = "explain".into();
        bar.sweep_param.clear();
        match targets.iter_mut().find(|(t, _)| t == target) {
            Some((_, rows)) => rows.push((kind, bar)),
            None => targets.push((target.to_string(), vec![(kind, bar)])),
        }
    }
    targets
        .into_iter()
        .map(|(t, mut rows)| {
            rows.sort_by_key(|(k, _)| (k.step(), k.name()));
            (t, rows.into_iter().map(|(_, r)| r).collect())
        })
        .collect()
}

/// Draws `waterfall-<target>.<ext>` for every target among `prs` into `out_dir`.
pub fn draw(prs: &[PrRow], out_dir: &Path, formats: &[Format]) -> Result<Vec<PathBuf>, PlotError> {
    let mut written = Vec::new();
    for (target, rows) in rows_per_target(prs) {
        let data = ChartData {
            prs: rows,
            ..Default::default()
        };
        for file in PrChart.draw(&data, out_dir, formats)? {
            let ext = file.extension().and_then(|e| e.to_str()).unwrap_or("svg");
            let named = out_dir.join(format!("waterfall-{}.{ext}", slug(&target)));
            std::fs::rename(&file, &named).map_err(|e| PlotError::Write {
                path: named.clone(),
                message: e.to_string(),
            })?;
            written.push(named);
        }
    }
    Ok(written)
}
