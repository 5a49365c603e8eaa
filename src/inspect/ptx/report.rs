//! Side-by-side reports of two class counts (OpenCL vs CUDA): Markdown and CSV rows.

use crate::rows::ClassCountRow;
use std::collections::BTreeSet;

use super::classify::{ClassCounts, InstrClass};

/// Row keys for reports: the known classes in [`InstrClass::ALL`] order, then any
/// other keys present in `a` or `b`, sorted, so that unknown keys are shown, not dropped.
fn row_keys(a: Option<&ClassCounts>, b: Option<&ClassCounts>) -> Vec<String> {
    let mut keys: Vec<String> = InstrClass::ALL
        .iter()
        .map(|c| c.name().to_string())
        .collect();
    let extra: BTreeSet<&String> = a
        .into_iter()
        .chain(b)
        .flat_map(|c| c.counts.keys())
        .filter(|k| InstrClass::from_name(k).is_none())
        .collect();
    keys.extend(extra.into_iter().cloned());
    keys
}

/// Escape text for a Markdown table cell: a `|` or a line break in a pair or label
/// would otherwise split the row.
fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// `b - a` with an explicit `+` when positive; computed in `i128` so that no pair of
/// `u64` counts can overflow.
fn signed_diff(a: u64, b: u64) -> String {
    let d = i128::from(b) - i128::from(a);
    if d > 0 {
        format!("+{d}")
    } else {
        d.to_string()
    }
}

/// Render a Markdown table comparing two class counts of `language`'s instructions (`"PTX"`,
/// `"SASS"`), one row per class (every known class, in `InstrClass::ALL` order, then any extra
/// keys), with both counts and the difference `b - a`, and the totals as the last row. A side
/// that was not counted (`None`) shows `—` in its cells and the differences, never a count of 0.
pub fn side_by_side_markdown(
    language: &str,
    pair: &str,
    a_label: &str,
    a: Option<&ClassCounts>,
    b_label: &str,
    b: Option<&ClassCounts>,
) -> String {
    let (al, bl) = (md_cell(a_label), md_cell(b_label));
    let mut out = format!("{language} instructions by class: {}\n\n", md_cell(pair));
    out.push_str(&format!("| class | group | {al} | {bl} | {bl} - {al} |\n"));
    out.push_str("|---|---|--:|--:|--:|\n");
    let cells = |n: &dyn Fn(&ClassCounts) -> u64| {
        let cell =
            |c: Option<&ClassCounts>| c.map_or_else(|| NOT_COUNTED.into(), |c| n(c).to_string());
        let diff = match (a, b) {
            (Some(a), Some(b)) => signed_diff(n(a), n(b)),
            _ => NOT_COUNTED.to_string(),
        };
        format!("{} | {} | {diff}", cell(a), cell(b))
    };
    for key in row_keys(a, b) {
        let group = InstrClass::from_name(&key)
            .map(|c| c.group().name())
            .unwrap_or("other");
        let counts = cells(&|c| c.get_name(&key));
        out.push_str(&format!("| {} | {group} | {counts} |\n", md_cell(&key)));
    }
    out.push_str(&format!(
        "| **total** | | {} |\n",
        cells(&ClassCounts::total)
    ));
    out
}

const NOT_COUNTED: &str = "—";

/// One kernel pair's section of a report, OpenCL beside CUDA: its heading and table appended
/// to `md`, its CSV rows returned.
/// A side that was not counted (`None`: no code, no such kernel) shows `—` and has no rows.
pub fn opencl_beside_cuda(
    language: &str,
    pair: &str,
    kernel: &str,
    opencl: Option<&ClassCounts>,
    cuda: Option<&ClassCounts>,
    md: &mut String,
) -> Vec<ClassCountRow> {
    let table = side_by_side_markdown(language, pair, "OpenCL", opencl, "CUDA", cuda);
    md.push_str(&format!("### {pair}\n\n{table}\n"));
    side_by_side_csv_rows(pair, kernel, "OpenCL", opencl, "CUDA", cuda)
}

/// Long-format rows for CSV export: for each class (same order as
/// [`side_by_side_markdown`]) one row for `a` then one for `b`, none for a side not counted.
/// No total row is emitted, so summing `count` per `api` gives `ClassCounts::total`.
pub fn side_by_side_csv_rows(
    pair: &str,
    kernel: &str,
    a_label: &str,
    a: Option<&ClassCounts>,
    b_label: &str,
    b: Option<&ClassCounts>,
) -> Vec<ClassCountRow> {
    row_keys(a, b)
        .into_iter()
        .flat_map(|key| {
            [(a_label, a), (b_label, b)]
                .into_iter()
                .filter_map(move |(label, counts)| {
                    Some(ClassCountRow {
                        pair: pair.to_string(),
                        kernel: kernel.to_string(),
                        api: label.to_string(),
                        class: key.clone(),
                        count: counts?.get_name(&key),
                    })
                })
        })
        .collect()
}
