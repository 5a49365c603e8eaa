//! Keys for the sorting families (the bitonic network and the radix sort): random unsigned
//! 32-bit keys over their whole range, the reference a sorted copy, and the sizes both test.
//! Both count one read and one write of the keys (8 bytes per key, GB/s): a constant times the
//! paper's sorted elements per second, so the PR is the same.

use super::family::vectors;
use super::plan::Inputs;
use super::reference;
use crate::rows::Size;

/// `len` keys over the whole u32 range from `seed`, drawn on every core.
pub fn random_keys(len: usize, seed: u64) -> Vec<u32> {
    // The high half of the mix: the low bits of a multiply-xorshift are the weaker.
    reference::hashed(len, seed, 0x736f_7274, |_, h| (h >> 32) as u32)
}

/// Random keys and, as the reference, the same keys sorted (`sort_unstable`: equal keys are
/// indistinguishable, so any order of them is the sorted one). Exact: every u32 is an f64.
pub fn sorting_inputs(size: Size, seed: u64) -> Inputs {
    let keys = random_keys(size.rows as usize, seed);
    let mut sorted = keys.clone();
    sorted.sort_unstable();
    Inputs::new(size, Vec::new(), Vec::new())
        .with_ints(vec![keys])
        .with_words(sorted)
}

/// One key, two, sizes no work-group or power of two divides, and one that needs several
/// merge stages beyond a work-group's block at every tested work-group size.
pub const TEST_SIZES: &[Size] = &vectors([1, 2, 100, 1000, 4097, 70_001]);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_span_the_range_and_the_reference_is_sorted() {
        let keys = random_keys(10_000, 3);
        assert!(keys.iter().any(|k| *k > u32::MAX / 4 * 3));
        assert!(keys.iter().any(|k| *k < u32::MAX / 4));
        assert_ne!(keys, random_keys(10_000, 4));
        let inputs = sorting_inputs(Size::vector(1000), 5);
        assert!(inputs.reference.windows(2).all(|w| w[0] <= w[1]));
        let mut want: Vec<f64> = inputs.ints[0].iter().map(|k| f64::from(*k)).collect();
        want.sort_by(f64::total_cmp);
        assert_eq!(want, inputs.reference);
    }
}
