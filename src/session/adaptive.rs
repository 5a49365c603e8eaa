//! When a comparison has been timed enough: past each side's `reps` and `min_time`, the sides
//! take turns until the 95% CI of the PR decides ([`decided`]) or `max_time` more seconds pass (as
//! criterion sizes samples to the noise): a GPU is usually decided at its minimum, a CPU later.

use std::time::Instant;

use crate::stats::{performance_ratio, Ratio, SIMILAR_HI, SIMILAR_LO};

/// Resamples of the bootstraps made while timing (the recorded CI uses the full count): enough
/// to place a CI's edges to a few percent of its width, cheap beside the runs a check saves.
const CHECK_RESAMPLES: usize = 400;

/// Samples a side gains between checks, as a share of its own: a check costs more as they grow.
const CHECK_GROWTH: f64 = 0.2;

/// Whether a PR's CI decides the verdict: wholly inside the similar band or wholly outside
/// it ("N times slower"), and at most `target_ci` of the PR wide on either side.
pub fn decided(r: &Ratio, target_ci: f64) -> bool {
    let half = (r.ci_hi - r.ci_lo) / 2.0 / r.value;
    let inside = r.ci_lo >= SIMILAR_LO && r.ci_hi <= SIMILAR_HI;
    let outside = r.ci_hi < SIMILAR_LO || r.ci_lo > SIMILAR_HI;
    half.is_finite() && half <= target_ci && (inside || outside)
}

/// The stopping rule of one comparison of two sides.
pub struct Rule {
    target_ci: f64,
    max_time_s: f64,
    /// Set when every side first has its minimum: the budget counts from there.
    extended_since: Option<Instant>,
    /// The samples of the first side at the last check.
    checked_at: usize,
}

impl Rule {
    /// The rule of two sides' `(target_ci, max_time_s)`, the stricter of each; `None` (off)
    /// for one side alone (no PR) or a target or budget of 0 (the minimum only).
    pub fn of(sides: &[(f64, f64)]) -> Option<Rule> {
        let [(t_a, m_a), (t_b, m_b)] = sides else {
            return None;
        };
        let rule = Rule {
            target_ci: t_a.min(*t_b),
            max_time_s: m_a.min(*m_b),
            extended_since: None,
            checked_at: 0,
        };
        (rule.target_ci > 0.0 && rule.max_time_s > 0.0).then_some(rule)
    }

    /// Once every side has its minimum: whether, by their times and work, all take another turn.
    pub fn wants_more(&mut self, times: [&[f64]; 2], work: [f64; 2]) -> bool {
        let since = *self.extended_since.get_or_insert_with(Instant::now);
        if since.elapsed().as_secs_f64() >= self.max_time_s {
            return false;
        }
        // One sample a side gives a zero-wide CI, which decides nothing (and no recorded CI).
        if times
            .iter()
            .any(|t| t.len() < crate::stats::MIN_SAMPLES_FOR_CI)
        {
            return true;
        }
        let n = times[0].len();
        let due = self.checked_at == 0 || n as f64 >= self.checked_at as f64 * (1.0 + CHECK_GROWTH);
        if !due {
            return true;
        }
        self.checked_at = n.max(1);
        let ratio = performance_ratio(times[0], work[0], times[1], work[1], CHECK_RESAMPLES, 1);
        !ratio.is_some_and(|r| decided(&r, self.target_ci))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ratio(value: f64, ci_lo: f64, ci_hi: f64) -> Ratio {
        Ratio {
            value,
            ci_lo,
            ci_hi,
        }
    }

    #[test]
    fn a_ci_decides_inside_or_wholly_outside_the_band_and_narrow_enough() {
        assert!(decided(&ratio(1.0, 0.98, 1.02), 0.05));
        assert!(decided(&ratio(0.5, 0.49, 0.51), 0.05));
        assert!(decided(&ratio(1.5, 1.45, 1.55), 0.05));
        // Across an edge of the band: neither similar nor different.
        assert!(!decided(&ratio(0.9, 0.88, 0.92), 0.05));
        // Inside the band but wider than asked.
        assert!(!decided(&ratio(1.0, 0.91, 1.09), 0.05));
        assert!(!decided(&ratio(1.0, f64::NAN, 1.0), 0.05));
    }

    #[test]
    fn the_rule_needs_two_sides_a_target_and_a_budget() {
        assert!(Rule::of(&[(0.05, 1.0)]).is_none());
        assert!(Rule::of(&[(0.0, 1.0), (0.05, 1.0)]).is_none());
        assert!(Rule::of(&[(0.05, 0.0), (0.05, 1.0)]).is_none());
        assert!(Rule::of(&[(0.05, 1.0), (0.05, 1.0)]).is_some());
    }

    #[test]
    fn noisy_times_want_more_and_steady_ones_do_not() {
        let steady: Vec<f64> = (0..20).map(|i| 1.0 + 0.001 * f64::from(i % 3)).collect();
        let mut rule = Rule::of(&[(0.05, 10.0), (0.05, 10.0)]).unwrap();
        assert!(!rule.wants_more([&steady, &steady], [1.0, 1.0]));
        let noisy: Vec<f64> = (0..6).map(|i| [0.5, 2.0, 1.0][i % 3]).collect();
        let mut rule = Rule::of(&[(0.05, 10.0), (0.05, 10.0)]).unwrap();
        assert!(rule.wants_more([&noisy, &steady[..6]], [1.0, 1.0]));
    }

    /// One sample a side has no spread: its bootstrap CI is zero-wide, which decides nothing.
    #[test]
    fn one_sample_a_side_wants_more() {
        let mut rule = Rule::of(&[(0.05, 10.0), (0.05, 10.0)]).unwrap();
        assert!(rule.wants_more([&[1.0], &[1.0]], [1.0, 1.0]));
        let mut rule = Rule::of(&[(0.05, 10.0), (0.05, 10.0)]).unwrap();
        assert!(rule.wants_more([&[1.0, 1.0], &[1.0]], [1.0, 1.0]));
    }

    #[test]
    fn a_spent_budget_wants_no_more() {
        let noisy: Vec<f64> = (0..6).map(|i| [0.5, 2.0, 1.0][i % 3]).collect();
        let mut rule = Rule::of(&[(0.05, 1e-9), (0.05, 1e-9)]).unwrap();
        // The first call starts the budget's clock.
        let _ = rule.wants_more([&noisy, &noisy], [1.0, 1.0]);
        std::thread::sleep(std::time::Duration::from_millis(1));
        assert!(!rule.wants_more([&noisy, &noisy], [1.0, 1.0]));
    }
}
