//! What the families' host emulations of their kernels share (for the fake backend): the
//! defines a launch was built with, and floats that carry integer words.

use crate::backend::fake::FakeLaunch;

/// The FMA_ITERS the launch's program was built with (chain lengths of flops and math).
pub fn fma_iters(launch: &FakeLaunch<'_>) -> u32 {
    launch
        .define("FMA_ITERS")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// The work-group size the launch's program was built with (`WG_SIZE`), or its launch's.
pub fn wg_size(launch: &FakeLaunch<'_>) -> usize {
    launch
        .define("WG_SIZE")
        .and_then(|v| v.parse().ok())
        .unwrap_or(launch.shape.local as usize)
}

/// `parts` partial sums of the first `n` floats of `x`, element `i` going to `i % parts`.
pub fn strided_sums(x: &[f32], n: usize, parts: usize) -> Vec<f32> {
    let mut sums = vec![0.0f64; parts.max(1)];
    for (i, v) in x[..n.min(x.len())].iter().enumerate() {
        sums[i % parts.max(1)] += f64::from(*v);
    }
    sums.into_iter().map(|s| s as f32).collect()
}

/// Floats carrying u32 words bit for bit, as the integer kernels' buffers hold them.
pub fn words(x: &[f32]) -> Vec<u32> {
    x.iter().map(|f| f.to_bits()).collect()
}

/// The floats that carry `words` bit for bit.
pub fn floats(words: impl IntoIterator<Item = u32>) -> Vec<f32> {
    words.into_iter().map(f32::from_bits).collect()
}

/// An f64 result rounded to the floats a device writes.
pub fn rounded(x: &[f64]) -> Vec<f32> {
    x.iter().map(|v| *v as f32).collect()
}
