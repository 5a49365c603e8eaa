//! Fairness as the compilers did it, for rows written before the labels were fixed: runs
//! before the flag mapping was corrected labelled fair the three settings `unequal_steps`
//! names. The committed rows stay as measured; the report reads each PR's verdict again from
//! its sides' flags, so a fair count never includes them.

use crate::rows::{MeasurementRow, PrRow};

/// Each unequal step the flags show (`-cl-fast-relaxed-math` alone keeps denormals), as
/// `differing_steps` spells a step.
fn unequal_steps(opencl: &str, cuda: &str) -> Vec<&'static str> {
    let has = |flags: &str, flag: &str| flags.split_whitespace().any(|f| f == flag);
    let mut steps = Vec::new();
    let opencl_contracts_anyway = !has(opencl, "-cl-mad-enable");
    if opencl_contracts_anyway && has(cuda, "--fmad=false") {
        steps.push(
            "compiler flags: mad off vs --fmad=false (NVIDIA's OpenCL contracts a*b+c anyway)",
        );
    }
    if has(opencl, "-cl-fast-relaxed-math")
        && !has(opencl, "-cl-denorms-are-zero")
        && has(cuda, "--use_fast_math")
    {
        steps
            .push("compiler flags: denormals kept vs flushed (--use_fast_math implies --ftz=true)");
    }
    let index_held = |flags: &str| flags.contains("-DCLVSCU_INDEX=");
    if !index_held(opencl) || !index_held(cuda) {
        steps.push("index width: native (OpenCL size_t ids vs CUDA 32-bit int)");
    }
    steps
}

/// Marks unfair every fair PR whose OpenCL and CUDA rows ran with flags that were not equal,
/// appending the steps to `differing_steps`. Rows without both sides' measurements are left.
pub fn relabel(prs: &mut [PrRow], measurements: &[MeasurementRow]) {
    use crate::rows::Api;
    let flags_of = |pr: &PrRow, api: Api| {
        measurements
            .iter()
            .find(|m| m.run_id == pr.run_id && m.comparison == pr.comparison && m.api == api)
            .map(|m| m.flags.as_str())
    };
    for pr in prs.iter_mut().filter(|p| p.fair) {
        let (Some(opencl), Some(cuda)) = (flags_of(pr, Api::OpenCl), flags_of(pr, Api::Cuda))
        else {
            continue;
        };
        let steps = unequal_steps(opencl, cuda);
        if !steps.is_empty() {
            pr.fair = false;
            let mut all: Vec<&str> = pr
                .differing_steps
                .split(';')
                .filter(|s| !s.is_empty())
                .collect();
            all.extend(steps);
            pr.differing_steps = all.join(";");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::unequal_steps;

    const HELD: &str = "-DWG_SIZE=256 -DCLVSCU_INDEX=32";

    #[test]
    fn the_three_old_labels_are_unequal_and_todays_flags_are_not() {
        let cl = format!("{HELD} -cl-mad-enable");
        assert!(unequal_steps(&cl, &format!("{HELD} --fmad=true --ftz=false")).is_empty());
        let mad_off = unequal_steps(HELD, &format!("{HELD} --fmad=false --ftz=false"));
        assert_eq!(mad_off.len(), 1, "{mad_off:?}");
        let old_fast = unequal_steps(
            &format!("{cl} -cl-fast-relaxed-math"),
            &format!("{HELD} --fmad=true --use_fast_math --ftz=true"),
        );
        assert_eq!(old_fast.len(), 1, "{old_fast:?}");
        let new_fast = unequal_steps(
            &format!("{cl} -cl-fast-relaxed-math -cl-denorms-are-zero"),
            &format!("{HELD} --fmad=true --use_fast_math --ftz=true"),
        );
        assert!(new_fast.is_empty(), "{new_fast:?}");
        let native = unequal_steps("-DWG_SIZE=256 -cl-mad-enable", "-DWG_SIZE=256 --fmad=true");
        assert_eq!(
            native,
            vec!["index width: native (OpenCL size_t ids vs CUDA 32-bit int)"]
        );
    }
}
