//! Side-by-side reports of two class counts (OpenCL vs CUDA): Markdown and CSV rows.

use crate::rows::ClassCountRow;

use super::classify::{ClassCounts, InstrClass};

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
/// `"SASS"`), one row per class (every known class, in `InstrClass::ALL` order), with both counts and the difference `b - a`, and the totals as the last row. A side
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
    for class in InstrClass::ALL {
        let counts = cells(&|c| c.get_name(class.name()));
        let (key, group) = (class.name(), class.group().name());
        out.push_str(&format!("| {key} | {group} | {counts} |\n"));
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
    InstrClass::ALL
        .iter()
        .flat_map(|class| {
            [(a_label, a), (b_label, b)]
                .into_iter()
                .filter_map(move |(label, counts)| {
                    Some(ClassCountRow {
                        pair: pair.to_string(),
                        kernel: kernel.to_string(),
                        api: label.to_string(),
                        class: class.name().to_string(),
                        count: counts?.get_name(class.name()),
                    })
                })
        })
        .collect()
}
