//! Did a timing move between two runs? The significance test behind `clvscu diff`.
//!
//! Criterion's approach (`src/stats/` there): a resampling test gives a p-value, a bootstrap a
//! CI of the change, and a change is real only when significant and beyond a noise threshold
//! (a 0.3% shift that many samples make "significant" is still no change). The statistic is
//! the ratio of medians, not criterion's t statistic of means: GPU timings have a long right
//! tail. Pure and deterministic like [`crate::stats`]: the seed is an argument.

use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;

use super::{percentile_interval, resample_into, tails};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangeTest {
    /// Resamples of the permutation test and of the bootstrap.
    pub resamples: usize,
    /// A change is significant when its p-value is below this.
    pub significance: f64,
    /// Relative changes within ±`noise` are no change (criterion's `noise_threshold`).
    pub noise: f64,
    pub confidence: f64,
    pub seed: u64,
}

impl Default for ChangeTest {
    fn default() -> Self {
        Self {
            resamples: 1000,
            significance: 0.05,
            noise: 0.02,
            confidence: super::CONFIDENCE,
            seed: 0x5eed_d1ff,
        }
    }
}

/// What a test concluded, oriented so that "improved" is always better performance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Significant and above the noise threshold: the new value is better.
    Improved,
    /// Significant and above the noise threshold: the new value is worse.
    Regressed,
    /// Significant, but the interval reaches inside the noise threshold.
    WithinNoise,
    /// Not significant.
    NoChange,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Improved => "improved",
            Verdict::Regressed => "regressed",
            Verdict::WithinNoise => "no change (within noise)",
            Verdict::NoChange => "no change",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Change {
    /// New over old: `median(new) / median(old)` for times, `PR_new / PR_old` for ratios.
    pub ratio: f64,
    /// Bootstrap confidence interval of `ratio`.
    pub ci_lo: f64,
    pub ci_hi: f64,
    /// Two-sided p-value of "nothing changed".
    pub p_value: f64,
    pub verdict: Verdict,
}

/// [`super::median`] of a buffer that may be reordered, by selection instead of a sort (the
/// resample loops call it thousands of times); NaN when empty, so those loops never branch.
fn med(buf: &mut [f64]) -> f64 {
    let n = buf.len();
    if n == 0 {
        return f64::NAN;
    }
    let (below, upper, _) = buf.select_nth_unstable_by(n / 2, f64::total_cmp);
    let upper = *upper;
    if n % 2 == 1 {
        return upper;
    }
    let lower = below
        .iter()
        .copied()
        .max_by(f64::total_cmp)
        .unwrap_or(upper);
    f64::midpoint(lower, upper)
}

/// Permutation p-value of the observed `|ln(ratio of medians)|` (symmetric in old and new):
/// old and new are pooled, shuffled and split again, as if the label "old"/"new" did not
/// matter. The `+1`s count the observed split itself, so the p-value is never 0.
fn permutation_p(old: &[f64], new: &[f64], observed: f64, t: &ChangeTest) -> f64 {
    let mut rng = SmallRng::seed_from_u64(t.seed);
    let mut pooled: Vec<f64> = old.iter().chain(new).copied().collect();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let mut at_least = 0usize;
    for _ in 0..t.resamples {
        // Only which values land in "old" matters, not their order: a partial shuffle.
        let (pa, pb) = pooled.partial_shuffle(&mut rng, old.len());
        a.clear();
        a.extend_from_slice(pa);
        b.clear();
        b.extend_from_slice(pb);
        let d = (med(&mut b) / med(&mut a)).ln().abs();
        // A permutation that reproduces the observed distance up to rounding counts as at
        // least as extreme.
        if d >= observed * (1.0 - 1e-12) {
            at_least += 1;
        }
    }
    (at_least + 1) as f64 / (t.resamples + 1) as f64
}

/// Percentile bootstrap interval of `median(new) / median(old)`, each sample resampled on its
/// own (the runs are independent).
fn ratio_ci(old: &[f64], new: &[f64], t: &ChangeTest) -> Option<(f64, f64)> {
    let tails = tails(t.confidence)?;
    let mut rng = SmallRng::seed_from_u64(t.seed ^ 0xb007);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let mut ratios = Vec::with_capacity(t.resamples);
    for _ in 0..t.resamples {
        resample_into(&mut rng, old, &mut a);
        resample_into(&mut rng, new, &mut b);
        ratios.push(med(&mut b) / med(&mut a));
    }
    percentile_interval(ratios, tails)
}

/// Criterion's rule, for a ratio where below 1 is better: significant, and the whole interval
/// beyond the threshold on one side.
fn verdict(p: f64, ci: (f64, f64), t: &ChangeTest) -> Verdict {
    if p >= t.significance {
        Verdict::NoChange
    } else if ci.1 < 1.0 - t.noise {
        Verdict::Improved
    } else if ci.0 > 1.0 + t.noise {
        Verdict::Regressed
    } else {
        Verdict::WithinNoise
    }
}

/// Tests whether the times `new` differ from the times `old`; shorter is better. `None` (no
/// verdict rather than a made-up one) when a median is not a positive number (an empty
/// sample), `resamples` is 0 or the confidence level is not in (0, 1).
pub fn compare_times(old: &[f64], new: &[f64], t: &ChangeTest) -> Option<Change> {
    if t.resamples == 0 {
        return None;
    }
    let m_old = med(&mut old.to_vec());
    let m_new = med(&mut new.to_vec());
    if !(m_old > 0.0 && m_new > 0.0 && m_old.is_finite() && m_new.is_finite()) {
        return None;
    }
    let ratio = m_new / m_old;
    let (ci_lo, ci_hi) = ratio_ci(old, new, t)?;
    let p_value = permutation_p(old, new, ratio.ln().abs(), t);
    Some(Change {
        ratio,
        ci_lo,
        ci_hi,
        p_value,
        verdict: verdict(p_value, (ci_lo, ci_hi), t),
    })
}

/// The change of a PR from old to new, from each side's times `(old, new)`: `PR_new / PR_old =
/// (b_new / b_old) / (a_new / a_old)` in medians, times `work_factor` (the change of the work
/// per run; 1 for the same work). Higher is better. The CI bootstraps all four samples; the
/// p-value inverts it (twice the share of resampled changes beyond 1), since no permutation
/// keeps the structure of four labelled samples.
pub fn compare_ratio(
    a: (&[f64], &[f64]),
    b: (&[f64], &[f64]),
    work_factor: f64,
    t: &ChangeTest,
) -> Option<Change> {
    let tails = tails(t.confidence)?;
    if t.resamples == 0 || !(work_factor > 0.0 && work_factor.is_finite()) {
        return None;
    }
    let pr_change = |ao: &mut [f64], an: &mut [f64], bo: &mut [f64], bn: &mut [f64]| {
        work_factor * (med(bn) / med(bo)) / (med(an) / med(ao))
    };
    let ratio = pr_change(
        &mut a.0.to_vec(),
        &mut a.1.to_vec(),
        &mut b.0.to_vec(),
        &mut b.1.to_vec(),
    );
    if !(ratio > 0.0 && ratio.is_finite()) {
        return None;
    }
    let mut rng = SmallRng::seed_from_u64(t.seed ^ 0x9e);
    let mut bufs: [Vec<f64>; 4] = Default::default();
    let mut ratios = Vec::with_capacity(t.resamples);
    for _ in 0..t.resamples {
        for (buf, src) in bufs.iter_mut().zip([a.0, a.1, b.0, b.1]) {
            resample_into(&mut rng, src, buf);
        }
        let [ao, an, bo, bn] = &mut bufs;
        ratios.push(pr_change(ao, an, bo, bn));
    }
    let below = ratios.iter().filter(|&&r| r <= 1.0).count();
    let above = ratios.iter().filter(|&&r| r >= 1.0).count();
    let p_value = ((2 * below.min(above) + 1) as f64 / (t.resamples + 1) as f64).min(1.0);
    let (ci_lo, ci_hi) = percentile_interval(ratios, tails)?;
    // Higher is better for a PR: its reciprocal goes through the lower-is-better rule.
    Some(Change {
        ratio,
        ci_lo,
        ci_hi,
        p_value,
        verdict: verdict(p_value, (1.0 / ci_hi, 1.0 / ci_lo), t),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::Rng;

    /// `n` times around `center` with ±`jitter` relative uniform noise, from `seed`.
    fn times(center: f64, jitter: f64, n: usize, seed: u64) -> Vec<f64> {
        let mut rng = SmallRng::seed_from_u64(seed);
        (0..n)
            .map(|_| center * (1.0 + rng.gen_range(-jitter..=jitter)))
            .collect()
    }

    fn quick() -> ChangeTest {
        ChangeTest {
            resamples: 500,
            ..ChangeTest::default()
        }
    }

    proptest! {
        #[test]
        fn the_selection_median_is_the_median(xs in prop::collection::vec(-1e6f64..1e6, 0..40)) {
            let m = med(&mut xs.clone());
            match super::super::median(&xs) {
                Some(v) => prop_assert_eq!(m, v),
                None => prop_assert!(m.is_nan()),
            }
        }
    }

    #[test]
    fn identical_samples_are_no_change() {
        let a = times(1e-3, 0.05, 200, 1);
        let c = compare_times(&a, &a, &quick()).unwrap();
        assert_eq!(c.ratio, 1.0);
        assert_eq!(c.verdict, Verdict::NoChange);
        assert!(c.p_value > 0.5, "{c:?}");
        assert!(c.ci_lo <= 1.0 && 1.0 <= c.ci_hi, "{c:?}");
        let r = compare_ratio((&a, &a), (&a, &a), 1.0, &quick()).unwrap();
        assert_eq!(r.verdict, Verdict::NoChange, "{r:?}");
    }

    #[test]
    fn two_draws_of_one_distribution_are_no_change() {
        let a = times(1e-3, 0.05, 200, 1);
        let b = times(1e-3, 0.05, 200, 2);
        let c = compare_times(&a, &b, &quick()).unwrap();
        assert!(
            matches!(c.verdict, Verdict::NoChange | Verdict::WithinNoise),
            "{c:?}"
        );
    }

    #[test]
    fn clearly_shifted_samples_are_a_change_in_the_right_direction() {
        let old = times(1e-3, 0.05, 200, 1);
        let slower = times(1.2e-3, 0.05, 200, 2);
        let c = compare_times(&old, &slower, &quick()).unwrap();
        assert_eq!(c.verdict, Verdict::Regressed, "{c:?}");
        assert!(c.p_value < 0.01 && (c.ratio - 1.2).abs() < 0.03, "{c:?}");
        let c = compare_times(&slower, &old, &quick()).unwrap();
        assert_eq!(c.verdict, Verdict::Improved, "{c:?}");
    }

    #[test]
    fn a_significant_shift_below_the_threshold_is_no_change() {
        // 1% slower with 0.2% jitter: certainly real, but under the 2% noise threshold.
        let old = times(1e-3, 0.002, 300, 1);
        let new = times(1.01e-3, 0.002, 300, 2);
        let c = compare_times(&old, &new, &quick()).unwrap();
        assert!(c.p_value < 0.05, "{c:?}");
        assert_eq!(c.verdict, Verdict::WithinNoise, "{c:?}");
        // With a 0.5% threshold the same shift is a regression.
        let strict = ChangeTest {
            noise: 0.005,
            ..quick()
        };
        assert_eq!(
            compare_times(&old, &new, &strict).unwrap().verdict,
            Verdict::Regressed
        );
    }

    #[test]
    fn empty_or_non_positive_samples_have_no_verdict() {
        let a = times(1e-3, 0.05, 20, 1);
        assert!(compare_times(&[], &a, &quick()).is_none());
        assert!(compare_times(&a, &[0.0, 0.0], &quick()).is_none());
        let none = ChangeTest {
            resamples: 0,
            ..quick()
        };
        assert!(compare_times(&a, &a, &none).is_none());
        assert!(compare_ratio((&a, &a), (&a, &[]), 1.0, &quick()).is_none());
    }

    #[test]
    fn a_ratio_moves_when_one_side_moves() {
        let old = times(1e-3, 0.03, 200, 1);
        let same = times(1e-3, 0.03, 200, 2);
        let faster = times(0.8e-3, 0.03, 200, 3);
        // Side A got faster, B stayed: the PR (perf A / perf B) went up by 1/0.8.
        let c = compare_ratio((&old, &faster), (&old, &same), 1.0, &quick()).unwrap();
        assert!((c.ratio - 1.25).abs() < 0.04, "{c:?}");
        assert_eq!(c.verdict, Verdict::Improved, "{c:?}");
        // B got faster instead: the PR went down.
        let c = compare_ratio((&old, &same), (&old, &faster), 1.0, &quick()).unwrap();
        assert_eq!(c.verdict, Verdict::Regressed, "{c:?}");
        // Both sides faster by the same factor: the PR did not move.
        let c = compare_ratio((&old, &faster), (&same, &faster), 1.0, &quick()).unwrap();
        assert!(
            matches!(c.verdict, Verdict::NoChange | Verdict::WithinNoise),
            "{c:?}"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(40))]

        /// Scaling both samples by one factor (another unit) changes nothing, the same seed
        /// gives the same answer, and swapping old and new inverts the ratio and never keeps
        /// the direction of a change.
        #[test]
        fn scale_invariant_symmetric_and_deterministic(
            seed in 0u64..1000,
            shift in 0.7f64..1.4,
            scale in 1e-3f64..1e3,
        ) {
            let t = ChangeTest { resamples: 200, ..ChangeTest::default() };
            let old = times(1e-3, 0.05, 40, seed);
            let new = times(1e-3 * shift, 0.05, 40, seed + 1);
            let c = compare_times(&old, &new, &t).unwrap();
            prop_assert!(c.p_value > 0.0 && c.p_value <= 1.0);
            prop_assert!(c.ci_lo <= c.ci_hi);
            prop_assert_eq!(compare_times(&old, &new, &t).unwrap(), c);
            let scaled = |v: &[f64]| v.iter().map(|x| x * scale).collect::<Vec<_>>();
            let s = compare_times(&scaled(&old), &scaled(&new), &t).unwrap();
            prop_assert!((s.ratio - c.ratio).abs() <= 1e-9 * c.ratio);
            prop_assert_eq!(s.verdict, c.verdict);
            let back = compare_times(&new, &old, &t).unwrap();
            prop_assert!((back.ratio * c.ratio - 1.0).abs() < 1e-9);
            let directed = matches!(c.verdict, Verdict::Improved | Verdict::Regressed);
            prop_assert!(!(directed && back.verdict == c.verdict), "{:?} both ways", c.verdict);
        }
    }
}
