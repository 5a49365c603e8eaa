//! Vendor-library baselines for the charts: a `baselines.csv` beside run folders, tagged with
//! their runs (it names no device; it was measured in the same GPU visit).

use std::path::Path;

use crate::export::csv::read_by_name;
use crate::rows::MeasurementRow;
use crate::rows::{BaselineRow, BASELINES_CSV};

/// One vendor measurement and the run it was taken beside.
#[derive(Debug, Clone, PartialEq)]
pub struct RunBaseline {
    pub run_id: String,
    pub row: BaselineRow,
}

/// `rows` once for each run among `measurements`: the runs they were measured beside.
pub fn beside(rows: &[BaselineRow], measurements: &[MeasurementRow]) -> Vec<RunBaseline> {
    super::distinct(measurements.iter().map(|m| &m.run_id))
        .iter()
        .flat_map(|id| {
            rows.iter().map(|r| RunBaseline {
                run_id: id.clone(),
                row: r.clone(),
            })
        })
        .collect()
}

/// The nearest `baselines.csv` in `dir` or up to two folders above (where the GPU scripts write
/// it); `None` when there is none or it does not read: the charts go on without it.
pub fn near(dir: &Path) -> Option<Vec<BaselineRow>> {
    dir.ancestors()
        .take(3)
        .map(|d| d.join(BASELINES_CSV))
        .find(|f| f.is_file())
        .and_then(|f| read_by_name(&f).ok())
}
