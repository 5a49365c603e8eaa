//! Side-by-side reports of two class counts (OpenCL vs CUDA): Markdown and CSV rows.

use std::fmt::Write as _;

use crate::rows::ClassCountRow;

use super::classify::{ClassCounts, InstrClass};

const NOT_COUNTED: &str = "—";

/// One kernel pair's section of a report in `language` (`"PTX"`, `"SASS"`) appended to `md`:
/// per class (`InstrClass::ALL` order) OpenCL's count, CUDA's and CUDA - OpenCL, then the
/// totals. Returns the CSV rows, per class OpenCL's then CUDA's (no total row: summing `count`
/// per `api` gives `ClassCounts::total`). A side not counted (`None`) shows `—`, never 0, and
/// has no rows.
pub fn opencl_beside_cuda(
    language: &str,
    pair: &str,
    kernel: &str,
    opencl: Option<&ClassCounts>,
    cuda: Option<&ClassCounts>,
    md: &mut String,
) -> Vec<ClassCountRow> {
    let sides = [("OpenCL", opencl), ("CUDA", cuda)];
    let _ = write!(
        md,
        "### {pair}\n\n{language} instructions by class: {}\n\n\
         | class | group | OpenCL | CUDA | CUDA - OpenCL |\n|---|---|--:|--:|--:|\n",
        // A `|` or a line break in the pair would split the row.
        pair.replace('|', "\\|").replace(['\n', '\r'], " ")
    );
    let cells = |n: &dyn Fn(&ClassCounts) -> u64| {
        let cell =
            |c: Option<&ClassCounts>| c.map_or_else(|| NOT_COUNTED.into(), |c| n(c).to_string());
        let diff = match (opencl, cuda) {
            // In `i128`, so that no pair of `u64` counts can overflow.
            (Some(a), Some(b)) => match i128::from(n(b)) - i128::from(n(a)) {
                d if d > 0 => format!("+{d}"),
                d => d.to_string(),
            },
            _ => NOT_COUNTED.to_string(),
        };
        format!("{} | {} | {diff}", cell(opencl), cell(cuda))
    };
    let mut rows = Vec::new();
    for class in InstrClass::ALL {
        let (key, group) = (class.name(), class.group().name());
        let _ = writeln!(md, "| {key} | {group} | {} |", cells(&|c| c.get_name(key)));
        rows.extend(sides.iter().filter_map(|&(api, counts)| {
            Some(ClassCountRow {
                pair: pair.to_string(),
                kernel: kernel.to_string(),
                api: api.to_string(),
                class: key.to_string(),
                count: counts?.get_name(key),
            })
        }));
    }
    let _ = writeln!(md, "| **total** | | {} |\n", cells(&ClassCounts::total));
    rows
}
