//! A study sized for a GPU run on a CPU device is said before it starts, so an hours-long run
//! does not look hung. The estimate is a floor: each side's warm-up and minimum repetitions at a
//! CPU's bandwidth or peak flops, whichever takes longer, before adaptive repetitions or builds.

use crate::study::Study;

/// A CPU device's bandwidth for PoCL's kernels, bytes/s: generous (its read kernel reached
/// 1.5 GB/s on two cores), so the floor is low.
const CPU_BYTES_PER_S: f64 = 5e9;

/// A CPU device's arithmetic rate as PoCL's kernels reach it, flops per second: generous too.
const CPU_FLOPS_PER_S: f64 = 20e9;

/// Below this floor a run needs no warning.
const WORTH_SAYING_S: f64 = 60.0;

/// A note, naming the largest comparison, when `study`'s minimum work on a CPU passes a minute.
pub fn cpu_note(study: &Study, sides: usize) -> Option<String> {
    let mut floor_s = 0.0;
    let mut largest = (0.0, String::new());
    for c in &study.comparisons {
        let family = crate::families::get(c.a.family);
        let elements = c.a.family.family().elements(c.a.size);
        let (moved, flops) = family.work(c.a.variant.name, c.a.size, elements);
        let bytes = moved.max(crate::families::fits::of(c.a.family, c.a.size).device);
        let launch_s = (bytes as f64 / CPU_BYTES_PER_S).max(flops as f64 / CPU_FLOPS_PER_S);
        let launches = f64::from(c.a.warmup + c.a.reps.max(1));
        floor_s += sides as f64 * launches * launch_s;
        if launch_s > largest.0 {
            largest = (launch_s, c.id.clone());
        }
    }
    (floor_s > WORTH_SAYING_S).then(|| {
        format!(
            "study '{}' is sized for a GPU: a launch of {} takes at least {:.2} s on a CPU \
             device, and the minimum repetitions alone over {:.0} minute(s). --size scales a \
             comparison down, --max-time bounds each one, and Ctrl-C keeps every finished \
             comparison.",
            study.name,
            largest.1,
            largest.0,
            (floor_s / 60.0).floor().max(1.0)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn study(name: &str) -> Study {
        crate::study::load(name).unwrap()
    }

    #[test]
    fn the_peaks_study_is_said_to_be_gpu_sized_and_the_default_is_not() {
        let note = cpu_note(&study("peaks"), 2).expect("peaks is GPU-sized");
        assert!(
            note.starts_with("study 'peaks' is sized for a GPU: "),
            "{note}"
        );
        assert!(
            note.contains("a launch of flops/fma takes at least "),
            "{note}"
        );
        assert!(cpu_note(&study("default"), 2).is_none());
    }
}
