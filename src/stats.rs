//! Robust statistics over timing samples, and the Performance Ratio (PR) with its CI.
//!
//! Pure: no I/O, no global state, no clock; the bootstrap takes an explicit seed, so a past run
//! re-analysed from its raw samples gives the same numbers.
//! * A summary of an empty sample is `None`, never a made-up number mistaken for a measured one.
//! * Ordering uses [`f64::total_cmp`]: a NaN never panics, sorts to the end (a negative NaN to
//!   the start) and propagates into the result.
//! * Timings are summarised by the median, which GPU timings' long right tail (clock ramp-up,
//!   preemption, driver work) does not move.

pub mod change;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// The band in which two implementations count as performing "similarly" (Fang, Varbanescu
/// and Sips, ICPP 2011: PR within 0.9..1.1).
pub const SIMILAR_LO: f64 = 0.9;
pub const SIMILAR_HI: f64 = 1.1;
/// The tighter band (within 5%), reported beside the paper's 10% band.
pub const TIGHT_LO: f64 = 0.95;
pub const TIGHT_HI: f64 = 1.05;
/// Confidence level of the intervals that [`summarize`] and [`performance_ratio`] report.
pub const CONFIDENCE: f64 = 0.95;

/// The fewest samples a CI is given from: a bootstrap of one sample gives a zero-width CI.
pub const MIN_SAMPLES_FOR_CI: usize = 2;

/// A sorted copy (by [`f64::total_cmp`]), so callers' slices are never reordered.
fn sorted_copy(xs: &[f64]) -> Vec<f64> {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// Median of a slice that may be reordered (no copy per resample in a bootstrap loop).
fn median_in_place(xs: &mut [f64]) -> Option<f64> {
    xs.sort_by(f64::total_cmp);
    median_sorted(xs)
}

fn median_sorted(sorted: &[f64]) -> Option<f64> {
    let n = sorted.len();
    let upper = *sorted.get(n / 2)?;
    if n % 2 == 1 {
        Some(upper)
    } else {
        // `midpoint` cannot overflow and is correctly rounded, so the result stays inside
        // [lower, upper] even for huge or subnormal values.
        Some(f64::midpoint(sorted[n / 2 - 1], upper))
    }
}

/// Quantile of a sorted slice by linear interpolation between closest ranks (Hyndman & Fan
/// type 7, the default of R and NumPy). `p` is clamped to [0, 1].
fn quantile_sorted(sorted: &[f64], p: f64) -> Option<f64> {
    let n = sorted.len();
    let last = n.checked_sub(1)?;
    let p = if p.is_nan() { 0.5 } else { p.clamp(0.0, 1.0) };
    let h = p * last as f64;
    // `h` is in [0, last], so the floor is a valid index; `min` guards against rounding.
    let lo = (h.floor() as usize).min(last);
    let hi = (lo + 1).min(last);
    let (a, b) = (sorted[lo], sorted[hi]);
    let frac = h - lo as f64;
    // Returning `a` outright when there is nothing to interpolate avoids `inf - inf = NaN`
    // and keeps constant samples exactly constant.
    if frac == 0.0 || a == b {
        Some(a)
    } else {
        Some(a + frac * (b - a))
    }
}

/// The band a PR's CI must touch for a rung to count as closing a gap, and outside which a
/// fair PR is a gap to explain (`fair-gaps.md`).
pub const PARITY: (f64, f64) = (0.98, 1.02);

/// Median of `xs`, the average of the two middle values for an even count; `None` when empty.
pub fn median(xs: &[f64]) -> Option<f64> {
    median_in_place(&mut xs.to_vec())
}

/// Arithmetic mean; `None` when empty. Reported beside the median so a skewed distribution is
/// visible (mean far above median means a heavy tail).
pub fn mean(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

/// Median absolute deviation from the median, unscaled (no 1.4826 normal-consistency factor):
/// a standard deviation that a few preempted repetitions do not inflate. `None` when empty.
pub fn mad(xs: &[f64]) -> Option<f64> {
    let m = median(xs)?;
    let mut dev: Vec<f64> = xs.iter().map(|x| (x - m).abs()).collect();
    median_in_place(&mut dev)
}

/// Number of values outside Tukey's fences `Q1 - 1.5·IQR` and `Q3 + 1.5·IQR` (type 7
/// quartiles); a high count flags a noisy measurement. Values on a fence are not outliers; a
/// NaN is never counted (no comparison with it holds), nor is anything under a NaN quartile.
pub fn outlier_count(xs: &[f64]) -> usize {
    let sorted = sorted_copy(xs);
    let (Some(q1), Some(q3)) = (
        quantile_sorted(&sorted, 0.25),
        quantile_sorted(&sorted, 0.75),
    ) else {
        return 0;
    };
    let iqr = q3 - q1;
    let (lo, hi) = (q1 - 1.5 * iqr, q3 + 1.5 * iqr);
    sorted.iter().filter(|&&x| x < lo || x > hi).count()
}

/// Checks a confidence level and returns the two tail probabilities of its percentile interval.
fn tails(confidence: f64) -> Option<(f64, f64)> {
    let alpha = 1.0 - confidence;
    (confidence > 0.0 && confidence < 1.0).then_some((alpha / 2.0, 1.0 - alpha / 2.0))
}

/// Fills `buf` with `xs.len()` draws with replacement from `xs` (`xs` must be non-empty).
fn resample_into(rng: &mut SmallRng, xs: &[f64], buf: &mut Vec<f64>) {
    let n = xs.len();
    buf.clear();
    buf.extend((0..n).map(|_| xs[rng.gen_range(0..n)]));
}

/// Medians of resamples of one sample in O(n) instead of O(n log n) per resample (a
/// 20,000-sample launch row took seconds of sorting per CI): a resample's median depends only
/// on how often each sorted rank was drawn, so draws are counted per rank and the middle found
/// by one walk. The draws are [`resample_into`]'s `gen_range(0..n)` calls in the same order, so
/// every result equals `median_in_place` of the same resample bit for bit and committed CIs
/// rebuild unchanged.
struct ResampledMedian {
    /// The sample's values in `total_cmp` order.
    sorted: Vec<f64>,
    /// The rank in `sorted` of each of the sample's values, in sample order (u32: half the
    /// cache lines of a usize for the random reads of every draw).
    rank_of: Vec<u32>,
    /// Draws per rank in the current resample (zeroed after each).
    counts: Vec<u32>,
}

impl ResampledMedian {
    /// `xs` must be non-empty.
    fn new(xs: &[f64]) -> Self {
        let mut order: Vec<usize> = (0..xs.len()).collect();
        order.sort_by(|&a, &b| xs[a].total_cmp(&xs[b]));
        let mut rank_of = vec![0u32; xs.len()];
        for (rank, &i) in order.iter().enumerate() {
            // Samples are counted in u32 (repetitions are at most a million).
            rank_of[i] = rank as u32;
        }
        ResampledMedian {
            sorted: order.iter().map(|&i| xs[i]).collect(),
            rank_of,
            counts: vec![0; xs.len()],
        }
    }

    fn next(&mut self, rng: &mut SmallRng) -> f64 {
        let n = self.sorted.len();
        for _ in 0..n {
            self.counts[self.rank_of[rng.gen_range(0..n)] as usize] += 1;
        }
        // The resample sorted holds rank r at positions [seen, seen + counts[r]).
        let (lower_pos, upper_pos) = (n.saturating_sub(1) / 2, n / 2);
        let (lower_rank, seen) = self.rank_at(lower_pos, 0, 0);
        // The upper middle is the same rank or a later one: go on from there.
        let (upper_rank, _) = self.rank_at(upper_pos, lower_rank, seen);
        let (lower, upper) = (self.sorted[lower_rank], self.sorted[upper_rank]);
        self.counts.fill(0);
        if n % 2 == 1 {
            upper
        } else {
            f64::midpoint(lower, upper)
        }
    }

    /// The rank holding position `pos` of the current resample sorted, walking from rank
    /// `from`, before which `seen` draws lie; also the draws before that rank. Whole blocks of
    /// ranks are skipped by their sums (which vectorise), so the walk costs a fraction of n.
    fn rank_at(&self, pos: usize, from: usize, mut seen: usize) -> (usize, usize) {
        const BLOCK: usize = 64;
        let mut rank = from;
        while rank + BLOCK <= self.counts.len() {
            let block: u32 = self.counts[rank..rank + BLOCK].iter().sum();
            if seen + block as usize > pos {
                break;
            }
            seen += block as usize;
            rank += BLOCK;
        }
        loop {
            let next = seen + self.counts[rank] as usize;
            if pos < next {
                return (rank, seen);
            }
            seen = next;
            rank += 1;
        }
    }
}

/// The percentile interval of `stats` (sorted here) at tails `(p_lo, p_hi)`.
fn percentile_interval(mut stats: Vec<f64>, (p_lo, p_hi): (f64, f64)) -> Option<(f64, f64)> {
    stats.sort_by(f64::total_cmp);
    Some((
        quantile_sorted(&stats, p_lo)?,
        quantile_sorted(&stats, p_hi)?,
    ))
}

/// The 95% percentile-bootstrap CI of the median, through [`ResampledMedian`].
fn bootstrap_median_ci(xs: &[f64], resamples: usize, seed: u64) -> Option<(f64, f64)> {
    let tails = tails(CONFIDENCE)?;
    if xs.is_empty() || resamples == 0 {
        return None;
    }
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut medians = ResampledMedian::new(xs);
    let stats = (0..resamples).map(|_| medians.next(&mut rng)).collect();
    percentile_interval(stats, tails)
}

/// Everything a [`crate::rows::MeasurementRow`] reports about one set of timings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub n: usize,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub mad: f64,
    pub outliers: usize,
    /// The 95% percentile-bootstrap CI of the median.
    pub ci_lo: f64,
    pub ci_hi: f64,
}

/// Summarises timings with a 95% percentile-bootstrap CI of the median (`resamples` drawn with
/// `seed`); `None` when `xs` is empty or `resamples` is 0, never a CI mistaken for a tight one.
pub fn summarize(xs: &[f64], resamples: usize, seed: u64) -> Option<Summary> {
    let sorted = sorted_copy(xs);
    let median = median_sorted(&sorted)?;
    let (ci_lo, ci_hi) = bootstrap_median_ci(xs, resamples, seed)?;
    Some(Summary {
        n: xs.len(),
        median,
        min: *sorted.first()?,
        max: *sorted.last()?,
        mean: mean(xs)?,
        mad: mad(xs)?,
        outliers: outlier_count(xs),
        ci_lo,
        ci_hi,
    })
}

/// A Performance Ratio `perf(A) / perf(B)` at the median times, with its 95% bootstrap CI.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ratio {
    pub value: f64,
    pub ci_lo: f64,
    pub ci_hi: f64,
}

/// `perf(A) / perf(B)` where `perf = work / time`; one formula for both the point value and the
/// resamples so they are comparable bit for bit.
fn ratio_of(work_a: f64, time_a: f64, work_b: f64, time_b: f64) -> f64 {
    (work_a / time_a) / (work_b / time_b)
}

/// The point value of [`performance_ratio`] alone (no bootstrap): what a stored PR is checked
/// against. `None` where a median time or a work amount is not a positive number.
pub fn point_ratio(times_a: &[f64], work_a: f64, times_b: &[f64], work_b: f64) -> Option<f64> {
    let (med_a, med_b) = (median(times_a)?, median(times_b)?);
    let positive = |x: f64| x > 0.0 && x.is_finite();
    if !(positive(med_a) && positive(med_b) && positive(work_a) && positive(work_b)) {
        return None;
    }
    Some(ratio_of(work_a, med_a, work_b, med_b))
}

/// `perf_a / perf_b` with `perf = work / median(time)` (above 1: A is faster; `work_*` in one
/// unit on both sides), with a 95% percentile-bootstrap CI resampling A and B independently
/// (independent runs). `None` where [`point_ratio`] is, or `resamples` is 0.
pub fn performance_ratio(
    times_a: &[f64],
    work_a: f64,
    times_b: &[f64],
    work_b: f64,
    resamples: usize,
    seed: u64,
) -> Option<Ratio> {
    let tails = tails(CONFIDENCE)?;
    let value = point_ratio(times_a, work_a, times_b, work_b)?;
    if resamples == 0 {
        return None;
    }
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut medians_a = ResampledMedian::new(times_a);
    let mut medians_b = ResampledMedian::new(times_b);
    // A's resample is drawn before B's each time, as the resampled pairs always were.
    let ratios = (0..resamples)
        .map(|_| {
            let ma = medians_a.next(&mut rng);
            let mb = medians_b.next(&mut rng);
            ratio_of(work_a, ma, work_b, mb)
        })
        .collect();
    let (ci_lo, ci_hi) = percentile_interval(ratios, tails)?;
    Some(Ratio {
        value,
        ci_lo,
        ci_hi,
    })
}

/// Whether a PR's whole CI (not merely its point estimate) lies in the similar and tight bands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrLabel {
    pub similar: bool,
    pub similar_tight: bool,
}

/// Labels a ratio by whether its whole CI (bounds included) lies inside [0.9, 1.1] and
/// [0.95, 1.05]: a noisy ratio that merely lands near 1 is not similar. A NaN bound never is.
pub fn classify_pr(r: &Ratio) -> PrLabel {
    let inside = |lo: f64, hi: f64| r.ci_lo >= lo && r.ci_hi <= hi && r.ci_lo <= r.ci_hi;
    PrLabel {
        similar: inside(SIMILAR_LO, SIMILAR_HI),
        similar_tight: inside(TIGHT_LO, TIGHT_HI),
    }
}

/// A PR's verdict (A against B) as the terminal, Markdown and report say it: "similar (±5%)"
/// or "similar" (whole CI in the band), "1.50× faster" / "2.00× slower" (whole CI above / below
/// 1), "unclear" (the CI holds 1 but leaves the band), or "no verdict" (not a number).
pub fn verdict_word(pr: f64, ci_lo: f64, ci_hi: f64) -> String {
    if !(pr.is_finite() && ci_lo.is_finite() && ci_hi.is_finite() && ci_lo > 0.0) {
        return "no verdict".into();
    }
    let label = classify_pr(&Ratio {
        value: pr,
        ci_lo,
        ci_hi,
    });
    if label.similar_tight {
        "similar (±5%)".into()
    } else if label.similar {
        "similar".into()
    } else if ci_lo > 1.0 {
        format!("{pr:.2}× faster")
    } else if ci_hi < 1.0 {
        format!("{:.2}× slower", 1.0 / pr)
    } else {
        "unclear".into()
    }
}

/// The least-squares line through the origin, `y = c·x`, of `(x, y)` points: `c` and the R²
/// of the fit against the mean of `y` (1 for points on the line; 0 or below for a fit no
/// better than the mean). Empty or all-zero `x` gives `(NaN, NaN)`.
pub fn fit_through_origin(points: &[(f64, f64)]) -> (f64, f64) {
    let sxx: f64 = points.iter().map(|(x, _)| x * x).sum();
    let sxy: f64 = points.iter().map(|(x, y)| x * y).sum();
    if points.is_empty() || sxx == 0.0 {
        return (f64::NAN, f64::NAN);
    }
    let c = sxy / sxx;
    let ys: Vec<f64> = points.iter().map(|(_, y)| *y).collect();
    let mean_y = mean(&ys).unwrap_or(0.0);
    let residual: f64 = points.iter().map(|(x, y)| (y - c * x).powi(2)).sum();
    let total: f64 = ys.iter().map(|y| (y - mean_y).powi(2)).sum();
    let r2 = match (total == 0.0, residual == 0.0) {
        (true, true) => 1.0,
        (true, false) => 0.0,
        (false, _) => 1.0 - residual / total,
    };
    (c, r2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    // Both globs above bring an `Rng`; the one of the `rand` the crate uses is meant.
    use rand::Rng;

    fn quantile(xs: &[f64], p: f64) -> Option<f64> {
        quantile_sorted(&sorted_copy(xs), p)
    }

    /// Percentile bootstrap CI of `stat` over `resamples` resamples of `xs` drawn with `seed`; `None`
    /// when `xs` is empty, `resamples` is 0, or `confidence` is not in (0, 1).
    fn bootstrap_ci<F: Fn(&[f64]) -> f64>(
        xs: &[f64],
        stat: F,
        resamples: usize,
        confidence: f64,
        seed: u64,
    ) -> Option<(f64, f64)> {
        let tails = tails(confidence)?;
        if xs.is_empty() || resamples == 0 {
            return None;
        }
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut buf = Vec::with_capacity(xs.len());
        let mut stats = Vec::with_capacity(resamples);
        for _ in 0..resamples {
            resample_into(&mut rng, xs, &mut buf);
            stats.push(stat(&buf));
        }
        percentile_interval(stats, tails)
    }

    /// Relative change from the reference `a` to `b`: `|b - a| / |a|`.
    fn relative_change(a: f64, b: f64) -> f64 {
        (b - a).abs() / a.abs()
    }

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * a.abs().max(b.abs())
    }

    #[test]
    fn a_fit_through_the_origin_finds_the_slope_and_scores_the_spread() {
        let line: Vec<(f64, f64)> = (1..=5)
            .map(|x| (f64::from(x), 0.6 * f64::from(x)))
            .collect();
        let (c, r2) = fit_through_origin(&line);
        assert!(close(c, 0.6, 1e-12) && close(r2, 1.0, 1e-12), "{c} {r2}");
        // Flat times over growing x: the line through the origin explains nothing.
        let flat = [(1.0, 5.0), (2.0, 5.0), (4.0, 5.0), (8.0, 5.0)];
        let (_, r2) = fit_through_origin(&flat);
        assert!(r2 < 0.5, "{r2}");
        assert!(fit_through_origin(&[]).0.is_nan());
    }

    #[test]
    fn median_known_values() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[7.0]), Some(7.0));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn median_with_nan_does_not_panic_and_sorts_nan_last() {
        // total_cmp puts +NaN after every number, so the middle of three is the larger number.
        assert_eq!(median(&[f64::NAN, 1.0, 2.0]), Some(2.0));
        assert!(median(&[f64::NAN]).is_some_and(f64::is_nan));
    }

    #[test]
    fn mean_known_values() {
        assert_eq!(mean(&[1.0, 2.0, 3.0, 6.0]), Some(3.0));
        assert_eq!(mean(&[]), None);
    }

    #[test]
    fn mad_known_values() {
        // median 3, deviations [2,1,0,1,97] -> median 1.
        assert_eq!(mad(&[1.0, 2.0, 3.0, 4.0, 100.0]), Some(1.0));
        // median 2.5, deviations [1.5,0.5,0.5,1.5] -> 1.0.
        assert_eq!(mad(&[1.0, 2.0, 3.0, 4.0]), Some(1.0));
        assert_eq!(mad(&[5.0, 5.0, 5.0]), Some(0.0));
        assert_eq!(mad(&[]), None);
    }

    #[test]
    fn quantile_known_values() {
        let xs = [1.0, 2.0, 3.0, 4.0, 100.0];
        assert_eq!(quantile(&xs, 0.25), Some(2.0));
        assert_eq!(quantile(&xs, 0.75), Some(4.0));
        assert_eq!(quantile(&xs, 0.0), Some(1.0));
        assert_eq!(quantile(&xs, 1.0), Some(100.0));
        // h = 0.1 * 3 = 0.3 -> 10 + 0.3 * 10.
        assert_eq!(quantile(&[40.0, 10.0, 30.0, 20.0], 0.1), Some(13.0));
        assert_eq!(quantile(&[], 0.5), None);
    }

    #[test]
    fn outliers_known_values() {
        // Q1 = 2, Q3 = 4, IQR = 2, fences -1 and 7: only 100 is outside.
        assert_eq!(outlier_count(&[1.0, 2.0, 3.0, 4.0, 100.0]), 1);
        assert_eq!(outlier_count(&[-100.0, 1.0, 2.0, 3.0, 4.0, 5.0, 100.0]), 2);
        assert_eq!(outlier_count(&[1.0, 2.0, 3.0, 4.0, 5.0]), 0);
        assert_eq!(outlier_count(&[]), 0);
        // Q1 = 2, Q3 = 4, upper fence 7: a value exactly on the fence is not an outlier.
        assert_eq!(outlier_count(&[1.0, 2.0, 3.0, 4.0, 7.0]), 0);
    }

    #[test]
    fn bootstrap_rejects_bad_arguments() {
        let m = |s: &[f64]| median(s).unwrap_or(f64::NAN);
        assert_eq!(bootstrap_ci(&[], m, 100, 0.95, 1), None);
        assert_eq!(bootstrap_ci(&[1.0], m, 0, 0.95, 1), None);
        assert_eq!(bootstrap_ci(&[1.0], m, 10, 1.0, 1), None);
        assert_eq!(bootstrap_ci(&[1.0], m, 10, 0.0, 1), None);
        assert_eq!(bootstrap_ci(&[1.0], m, 10, f64::NAN, 1), None);
    }

    #[test]
    fn resampled_medians_equal_sorting_each_resample_bit_for_bit() {
        let samples: Vec<Vec<f64>> = vec![
            vec![3.0],
            vec![2.0, 1.0],
            vec![1.0, 1.0, 1.0, 2.0],
            vec![0.0, -0.0, 5.0, f64::NAN, 2.5, 2.5, 1e-300, f64::INFINITY],
            (0..1001)
                .map(|i| ((i * 7919) % 211) as f64 * 0.37)
                .collect(),
        ];
        for xs in &samples {
            let mut slow_rng = SmallRng::seed_from_u64(11);
            let mut fast_rng = SmallRng::seed_from_u64(11);
            let mut fast = ResampledMedian::new(xs);
            let mut buf = Vec::new();
            for _ in 0..300 {
                resample_into(&mut slow_rng, xs, &mut buf);
                let slow = median_in_place(&mut buf).unwrap();
                assert_eq!(fast.next(&mut fast_rng).to_bits(), slow.to_bits(), "{xs:?}");
            }
        }
    }

    proptest! {
        #[test]
        fn the_fast_median_ci_is_the_generic_one(
            xs in proptest::collection::vec(0.0f64..1e3, 1..200),
            seed in 0u64..1000,
        ) {
            let generic = bootstrap_ci(&xs, |s| median(s).unwrap(), 200, CONFIDENCE, seed);
            prop_assert_eq!(bootstrap_median_ci(&xs, 200, seed), generic);
        }
    }

    #[test]
    fn bootstrap_ci_of_mean_brackets_the_mean_and_narrows_with_confidence() {
        let xs: Vec<f64> = (1..=50).map(f64::from).collect();
        let mean_of = |s: &[f64]| mean(s).unwrap_or(f64::NAN);
        let (lo95, hi95) = bootstrap_ci(&xs, mean_of, 2000, 0.95, 7).unwrap();
        let (lo50, hi50) = bootstrap_ci(&xs, mean_of, 2000, 0.50, 7).unwrap();
        assert!(lo95 < 25.5 && 25.5 < hi95, "{lo95}..{hi95}");
        assert!(lo95 < lo50 && hi50 < hi95);
        // The standard error of the mean is ~2.0, so the 95% interval is roughly +-4.
        assert!(hi95 - lo95 > 5.0 && hi95 - lo95 < 11.0, "{lo95}..{hi95}");
    }

    #[test]
    fn bootstrap_differs_between_seeds() {
        let xs: Vec<f64> = (1..=30).map(|i| f64::from(i * i)).collect();
        let m = |s: &[f64]| mean(s).unwrap_or(f64::NAN);
        let a = bootstrap_ci(&xs, m, 200, 0.95, 1).unwrap();
        let b = bootstrap_ci(&xs, m, 200, 0.95, 2).unwrap();
        assert_ne!(a, b);
    }

    #[test]
    fn summarize_known_values() {
        let s = summarize(&[1.0, 2.0, 3.0, 4.0, 100.0], 500, 3).unwrap();
        assert_eq!(s.n, 5);
        assert_eq!(s.median, 3.0);
        assert_eq!(s.min, 1.0);
        assert_eq!(s.max, 100.0);
        assert_eq!(s.mean, 22.0);
        assert_eq!(s.mad, 1.0);
        assert_eq!(s.outliers, 1);
        assert!(s.ci_lo <= s.median && s.median <= s.ci_hi, "{s:?}");
        assert!(s.ci_lo >= 1.0 && s.ci_hi <= 100.0);
        assert_eq!(summarize(&[], 500, 3), None);
        assert_eq!(summarize(&[1.0], 0, 3), None);
    }

    #[test]
    fn performance_ratio_known_values() {
        // A takes twice as long for the same work: half the performance.
        let r = performance_ratio(&[2.0; 10], 1.0, &[1.0; 10], 1.0, 1000, 9).unwrap();
        assert_eq!(
            r,
            Ratio {
                value: 0.5,
                ci_lo: 0.5,
                ci_hi: 0.5
            }
        );
        // Same time, A does three times the work.
        let r = performance_ratio(&[1.0; 3], 3.0, &[1.0; 5], 1.0, 100, 9).unwrap();
        assert_eq!(r.value, 3.0);
        // Medians 2 and 4 with equal work: A is twice as fast.
        let r = performance_ratio(&[1.0, 2.0, 3.0], 8.0, &[4.0, 3.0, 5.0], 8.0, 500, 9).unwrap();
        assert_eq!(r.value, 2.0);
        assert!(r.ci_lo <= r.value && r.value <= r.ci_hi, "{r:?}");
        // Best and worst resample: 8/1 / (8/5) = 5 and 8/3 / (8/3) = 1.
        assert!(r.ci_lo >= 1.0 && r.ci_hi <= 5.0, "{r:?}");
    }

    #[test]
    fn performance_ratio_rejects_degenerate_inputs() {
        assert_eq!(performance_ratio(&[], 1.0, &[1.0], 1.0, 10, 0), None);
        assert_eq!(performance_ratio(&[1.0], 1.0, &[], 1.0, 10, 0), None);
        assert_eq!(performance_ratio(&[0.0], 1.0, &[1.0], 1.0, 10, 0), None);
        assert_eq!(performance_ratio(&[1.0], 1.0, &[-1.0], 1.0, 10, 0), None);
        assert_eq!(
            performance_ratio(&[f64::NAN], 1.0, &[1.0], 1.0, 10, 0),
            None
        );
        assert_eq!(performance_ratio(&[1.0], 0.0, &[1.0], 1.0, 10, 0), None);
        assert_eq!(performance_ratio(&[1.0], 1.0, &[1.0], 1.0, 0, 0), None);
        assert!(performance_ratio(&[1.0], 1.0, &[1.0], 1.0, 1, 0).is_some());
    }

    #[test]
    fn classify_known_values() {
        let r = |ci_lo, ci_hi| Ratio {
            value: f64::midpoint(ci_lo, ci_hi),
            ci_lo,
            ci_hi,
        };
        let label = |similar, similar_tight| PrLabel {
            similar,
            similar_tight,
        };
        assert_eq!(classify_pr(&r(0.98, 1.02)), label(true, true));
        assert_eq!(classify_pr(&r(0.95, 1.05)), label(true, true));
        assert_eq!(classify_pr(&r(0.92, 1.02)), label(true, false));
        assert_eq!(classify_pr(&r(0.9, 1.1)), label(true, false));
        assert_eq!(classify_pr(&r(0.89, 1.0)), label(false, false));
        assert_eq!(classify_pr(&r(1.0, 1.11)), label(false, false));
        assert_eq!(verdict_word(1.0, 0.97, 1.03), "similar (±5%)");
        assert_eq!(verdict_word(1.0, 0.92, 1.08), "similar");
        assert_eq!(verdict_word(1.5, 1.4, 1.6), "1.50× faster");
        assert_eq!(verdict_word(0.5, 0.4, 0.6), "2.00× slower");
        assert_eq!(verdict_word(1.0, 0.8, 1.3), "unclear");
        assert_eq!(verdict_word(f64::NAN, 0.8, 1.3), "no verdict");
        // The point value may be inside the band while the CI is not: not similar.
        assert_eq!(classify_pr(&r(0.5, 1.5)), label(false, false));
        assert_eq!(classify_pr(&r(f64::NAN, 1.0)), label(false, false));
    }

    #[test]
    fn relative_change_known_values() {
        assert_eq!(relative_change(2.0, 3.0), 0.5);
        assert_eq!(relative_change(2.0, 1.0), 0.5);
        assert_eq!(relative_change(4.0, 4.0), 0.0);
        assert_eq!(relative_change(-2.0, -1.0), 0.5);
    }

    fn times() -> impl Strategy<Value = Vec<f64>> {
        prop::collection::vec(1e-9f64..1e3, 1..40)
    }

    proptest! {
        #[test]
        fn median_lies_within_min_and_max(xs in prop::collection::vec(-1e300f64..1e300, 1..40)) {
            let m = median(&xs).unwrap();
            let sorted = sorted_copy(&xs);
            prop_assert!(sorted[0] <= m && m <= sorted[sorted.len() - 1]);
        }

        #[test]
        fn median_is_order_invariant(mut xs in times(), seed in any::<u64>()) {
            let before = median(&xs);
            let mut rng = SmallRng::seed_from_u64(seed);
            for i in (1..xs.len()).rev() {
                xs.swap(i, rng.gen_range(0..=i));
            }
            prop_assert_eq!(before, median(&xs));
        }

        #[test]
        fn scaling_times_scales_median_mad_and_ci(xs in times(), k in 1e-3f64..1e3) {
            let scaled: Vec<f64> = xs.iter().map(|x| x * k).collect();
            prop_assert!(close(median(&scaled).unwrap(), k * median(&xs).unwrap(), 1e-12));
            // The deviations cancel, so the error is a few ulps of the data, not of the MAD.
            let err = (mad(&scaled).unwrap() - k * mad(&xs).unwrap()).abs();
            prop_assert!(err <= 1e-14 * k * sorted_copy(&xs)[xs.len() - 1]);
            let a = summarize(&xs, 200, 5).unwrap();
            let b = summarize(&scaled, 200, 5).unwrap();
            prop_assert!(close(b.ci_lo, k * a.ci_lo, 1e-12));
            prop_assert!(close(b.ci_hi, k * a.ci_hi, 1e-12));
            prop_assert_eq!(a.outliers, b.outliers);
        }

        #[test]
        fn summary_ci_is_ordered_and_within_the_data(xs in times(), seed in any::<u64>()) {
            let s = summarize(&xs, 200, seed).unwrap();
            prop_assert!(s.ci_lo <= s.ci_hi);
            prop_assert!(s.min <= s.ci_lo && s.ci_hi <= s.max);
            prop_assert!(s.min <= s.median && s.median <= s.max);
            prop_assert!(s.min <= s.mean * (1.0 + 1e-12) && s.mean <= s.max * (1.0 + 1e-12));
            prop_assert!(s.outliers < s.n.max(1));
        }

        #[test]
        fn constant_samples_have_degenerate_intervals(
            x in 1e-9f64..1e3, n in 1usize..30, m in 1usize..30, w in 1e-3f64..1e3,
        ) {
            let s = summarize(&vec![x; n], 100, 1).unwrap();
            prop_assert_eq!((s.median, s.ci_lo, s.ci_hi, s.mad), (x, x, x, 0.0));
            prop_assert_eq!(s.outliers, 0);
            let r = performance_ratio(&vec![x; n], w, &vec![2.0 * x; m], w, 100, 1).unwrap();
            prop_assert_eq!(r.ci_lo, r.value);
            prop_assert_eq!(r.ci_hi, r.value);
            prop_assert!(close(r.value, 2.0, 1e-12));
        }

        #[test]
        fn ratio_ci_is_ordered(a in times(), b in times(), seed in any::<u64>()) {
            let r = performance_ratio(&a, 1.0, &b, 1.0, 200, seed).unwrap();
            prop_assert!(r.ci_lo <= r.ci_hi);
            prop_assert!(r.ci_lo > 0.0 && r.ci_hi.is_finite());
        }

        #[test]
        fn ratio_is_antisymmetric(
            a in times(), b in times(), wa in 1e-3f64..1e3, wb in 1e-3f64..1e3,
        ) {
            let ab = performance_ratio(&a, wa, &b, wb, 50, 3).unwrap();
            let ba = performance_ratio(&b, wb, &a, wa, 50, 3).unwrap();
            prop_assert!(close(ab.value * ba.value, 1.0, 1e-12));
        }

        #[test]
        fn ratio_scales_with_work(a in times(), b in times(), k in 1e-3f64..1e3) {
            let base = performance_ratio(&a, 1.0, &b, 1.0, 50, 3).unwrap();
            let more = performance_ratio(&a, k, &b, 1.0, 50, 3).unwrap();
            prop_assert!(close(more.value, k * base.value, 1e-12));
            prop_assert!(close(more.ci_lo, k * base.ci_lo, 1e-12));
            prop_assert!(close(more.ci_hi, k * base.ci_hi, 1e-12));
        }

        #[test]
        fn same_seed_gives_same_intervals(a in times(), b in times(), seed in any::<u64>()) {
            prop_assert_eq!(summarize(&a, 100, seed), summarize(&a, 100, seed));
            prop_assert_eq!(
                performance_ratio(&a, 1.0, &b, 1.0, 100, seed),
                performance_ratio(&a, 1.0, &b, 1.0, 100, seed)
            );
        }

        #[test]
        fn outliers_never_exceed_half_the_sample(xs in prop::collection::vec(-1e6f64..1e6, 0..40)) {
            // Between Q1 and Q3 lie at least half the (interpolated) values, so fewer than half
            // (plus rounding at tiny n) can be outside fences that contain [Q1, Q3].
            let n = xs.len();
            prop_assert!(outlier_count(&xs) <= n / 2);
        }

        #[test]
        fn relative_change_is_symmetric_in_direction(a in 1e-6f64..1e6, d in 0.0f64..1e6) {
            // `a ± d` is rounded to the precision of the larger operand: a small `d` next to a
            // large `a` keeps only that many of its digits, so the bound allows a few units of
            // the last place of `a + d`, relative to `a`.
            let rounding = 4.0 * f64::EPSILON * (a + d) / a;
            for b in [a + d, a - d] {
                let error = (relative_change(a, b) - d / a).abs();
                prop_assert!(error <= 1e-12 * (d / a) + rounding, "{a} {b}: {error}");
            }
        }
    }

    /// A case proptest once shrank to (kept as a test, so that no seed file is needed).
    #[test]
    fn relative_change_keeps_a_small_step_next_to_a_large_value() {
        let (a, d) = (716_650.246_250_031, 7.421_398_271_641_544);
        let rounding = 4.0 * f64::EPSILON * (a + d) / a;
        for b in [a + d, a - d] {
            let error = (relative_change(a, b) - d / a).abs();
            assert!(error <= 1e-12 * (d / a) + rounding, "{a} {b}: {error}");
        }
    }
}
