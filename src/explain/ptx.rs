//! What the two front ends made of a target, by instruction class: the static count of each
//! class in each side's kernel, in PTX or in SASS, and the difference in words for the verdict
//! of a target whose gap is the front end's.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::inspect::ptx::{count_classes, parse_kernel};
use crate::rows::Api;

pub const PTX_CLASSES_CSV: &str = "ptx-classes.csv";

/// One class of one side's kernel of one target, in one code (the file says which: PTX in
/// `ptx-classes.csv`, SASS in `sass-classes.csv`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CodeClassRow {
    pub target: String,
    pub api: Api,
    pub kernel: String,
    pub class: String,
    /// Static count: instructions of this class in the kernel's text, not executed ones.
    pub count: u64,
}

impl CodeClassRow {
    pub fn new(target: &str, api: Api, kernel: &str, class: &str, count: u64) -> CodeClassRow {
        CodeClassRow {
            target: target.to_string(),
            api,
            kernel: kernel.to_string(),
            class: class.to_string(),
            count,
        }
    }
}

/// Why a PTX text gives no class counts of a kernel.
#[derive(Debug, thiserror::Error)]
pub enum ClassError {
    #[error(transparent)]
    Parse(#[from] crate::inspect::ptx::PtxError),
    #[error("no kernel {kernel} in {api}'s PTX")]
    NoKernel { kernel: String, api: Api },
}

/// The class counts of `kernel` in `text`, or why there are none.
pub fn class_rows(
    target: &str,
    api: Api,
    kernel: &str,
    text: &str,
) -> Result<Vec<CodeClassRow>, ClassError> {
    let k = parse_kernel(text, kernel)?.ok_or_else(|| ClassError::NoKernel {
        kernel: kernel.into(),
        api,
    })?;
    Ok(count_classes(&k)
        .iter()
        .map(|(class, count)| CodeClassRow::new(target, api, kernel, class, count))
        .collect())
}

const MAX_CLASSES: usize = 4;

/// "in the PTX, OpenCL's kernel has 12 more arithmetic, 4 fewer ld.global ... (static PTX
/// counts: OpenCL 120 instructions, CUDA 104)" for `target`, from the rows of both sides in
/// `code` (`PTX`, `SASS`); `None` without both.
pub fn difference(rows: &[CodeClassRow], target: &str, code: &str) -> Option<String> {
    let side = |api| -> BTreeMap<&str, u64> {
        rows.iter()
            .filter(|r| r.target == target && r.api == api)
            .map(|r| (r.class.as_str(), r.count))
            .collect()
    };
    let (cl, cu) = (side(Api::OpenCl), side(Api::Cuda));
    if cl.is_empty() || cu.is_empty() {
        return None;
    }
    let mut diffs: Vec<(&str, i64)> = cl
        .keys()
        .chain(cu.keys())
        .map(|c| {
            let d = cl.get(c).copied().unwrap_or(0) as i64 - cu.get(c).copied().unwrap_or(0) as i64;
            (*c, d)
        })
        .filter(|(_, d)| *d != 0)
        .collect();
    diffs.sort_by_key(|(c, d)| (std::cmp::Reverse(d.abs()), *c));
    diffs.dedup();
    let total = |m: &BTreeMap<&str, u64>| m.values().sum::<u64>();
    let totals = format!(
        "static {code} counts: OpenCL {} instructions, CUDA {}",
        total(&cl),
        total(&cu)
    );
    if diffs.is_empty() {
        return Some(format!(
            "the two kernels' {code} has the same count in every class ({totals})"
        ));
    }
    let named: Vec<String> = diffs
        .iter()
        .take(MAX_CLASSES)
        .map(|(c, d)| {
            let word = if *d > 0 { "more" } else { "fewer" };
            format!("{} {word} {c}", d.abs())
        })
        .collect();
    Some(format!(
        "in the {code}, OpenCL's kernel has {} ({totals})",
        named.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(api: Api, class: &str, count: u64) -> CodeClassRow {
        CodeClassRow::new("t", api, "k", class, count)
    }

    #[test]
    fn the_difference_names_the_largest_classes_with_their_signs() {
        let rows = vec![
            row(Api::OpenCl, "arithmetic", 30),
            row(Api::OpenCl, "ld.global", 4),
            row(Api::Cuda, "arithmetic", 20),
            row(Api::Cuda, "ld.global", 6),
        ];
        let text = difference(&rows, "t", "SASS").unwrap();
        assert!(text.starts_with("in the SASS"), "{text}");
        assert!(
            text.contains("10 more arithmetic, 2 fewer ld.global"),
            "{text}"
        );
        assert!(
            text.contains("static SASS counts: OpenCL 34 instructions, CUDA 26"),
            "{text}"
        );
        assert_eq!(difference(&rows, "other", "PTX"), None);
    }
}
