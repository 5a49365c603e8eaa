//! Where a run's time goes: per comparison, the seconds of inputs (and references), builds and
//! uploads, verification, warm-up and timing; per run, the calibration and the charts. Written
//! to `timings.csv` and summed in the provenance, so a slow study says which phase made it slow.

use std::time::Instant;

use crate::rows::TimingRow;

/// Seconds of each phase of one comparison (both sides together).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PhaseTimes {
    pub inputs: f64,
    pub build: f64,
    pub verify: f64,
    pub warmup: f64,
    pub timed: f64,
}

impl PhaseTimes {
    /// Runs `f`, adding its wall time to the phase `slot` picks.
    pub fn add<T>(&mut self, slot: fn(&mut PhaseTimes) -> &mut f64, f: impl FnOnce() -> T) -> T {
        let started = Instant::now();
        let out = f();
        *slot(self) += started.elapsed().as_secs_f64();
        out
    }

    pub fn total(&self) -> f64 {
        self.inputs + self.build + self.verify + self.warmup + self.timed
    }
}

impl TimingRow {
    pub fn of(comparison: &str, t: &PhaseTimes) -> TimingRow {
        TimingRow {
            comparison: comparison.to_string(),
            inputs_s: t.inputs,
            build_s: t.build,
            verify_s: t.verify,
            warmup_s: t.warmup,
            timed_s: t.timed,
            total_s: t.total(),
        }
    }
}

/// One sentence for the provenance: the run's wall time and its phases (the comparisons',
/// the programs built ahead, the calibration), largest first, and the slowest comparison. It
/// covers this process only: a resume counts its own comparisons, unlike `timings.csv`.
pub fn summary_line(run: &super::RunSummary, calibration_s: f64, wall_s: f64) -> String {
    let rows = &run.timings;
    let sum = |f: fn(&TimingRow) -> f64| rows.iter().map(f).sum::<f64>();
    let ahead = format!("{} program(s) built ahead, at once,", run.built_ahead);
    let mut phases = [
        ("inputs and references", sum(|r| r.inputs_s)),
        (ahead.as_str(), run.built_ahead_s),
        ("builds and uploads", sum(|r| r.build_s)),
        ("verification", sum(|r| r.verify_s)),
        ("warm-up", sum(|r| r.warmup_s)),
        ("timed repetitions", sum(|r| r.timed_s)),
        ("calibration", calibration_s),
    ];
    let accounted: f64 = phases.iter().map(|p| p.1).sum();
    phases.sort_by(|a, b| b.1.total_cmp(&a.1));
    let parts: Vec<String> = phases
        .iter()
        .filter(|p| p.1 >= 0.005)
        .map(|(name, s)| format!("{name} {s:.2} s"))
        .collect();
    let slowest = rows
        .iter()
        .max_by(|a, b| a.total_s.total_cmp(&b.total_s))
        .map(|r| format!("; slowest comparison {} ({:.2} s)", r.comparison, r.total_s))
        .unwrap_or_default();
    format!(
        "time: {wall_s:.2} s wall over {} comparison(s): {}, other {:.2} s{slowest}",
        rows.len(),
        if parts.is_empty() {
            "nothing measured".to_string()
        } else {
            parts.join(", ")
        },
        (wall_s - accounted).max(0.0)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, build: f64, timed: f64) -> TimingRow {
        let t = PhaseTimes {
            build,
            timed,
            ..PhaseTimes::default()
        };
        TimingRow::of(name, &t)
    }

    #[test]
    fn add_charges_the_named_phase_only() {
        let mut t = PhaseTimes::default();
        let v = t.add(
            |t| &mut t.verify,
            || {
                std::thread::sleep(std::time::Duration::from_millis(20));
                7
            },
        );
        assert_eq!(v, 7);
        assert!(t.verify >= 0.02 && t.build == 0.0 && t.timed == 0.0);
        assert_eq!(t.total(), t.verify);
    }

    #[test]
    fn the_summary_names_the_largest_phase_first_and_the_slowest_comparison() {
        let run = crate::session::RunSummary {
            timings: vec![row("a", 0.5, 1.0), row("b", 0.25, 18.0)],
            built_ahead: 12,
            built_ahead_s: 1.25,
            ..Default::default()
        };
        let line = summary_line(&run, 2.0, 25.25);
        assert!(
            line.starts_with("time: 25.25 s wall over 2 comparison(s): timed repetitions 19.00 s, calibration 2.00 s, 12 program(s) built ahead, at once, 1.25 s, builds and uploads 0.75 s"),
            "{line}"
        );
        assert!(line.contains("other 2.25 s"), "{line}");
        assert!(line.ends_with("slowest comparison b (18.25 s)"), "{line}");
    }
}
