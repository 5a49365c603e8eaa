//! The split variants' launches (`split-k`, `split-wide`: partial sums then a final pass;
//! `split-one`, `split-flat`: one launch with completion counters) and their emulation.

use super::shapes::{splits_of, tile_of, SPLIT_K_FINAL, SPLIT_ONE, TILE};
use crate::backend::fake::FakeLaunch;
use crate::backend::{self, Arg, BufferId, KernelId, LaunchShape};
use crate::families::plan::{Build, ExecError, Step};

/// What the split-K kernels compute, for the fake backend: the partial sums of each column
/// block, `P[split * rows + row]`, with the kernels' block boundaries.
pub(super) fn partial_sums(
    m: &[f32],
    v: &[f32],
    rows: usize,
    cols: usize,
    splits: usize,
) -> Vec<f32> {
    let splits = splits.max(1);
    let chunk = cols.div_ceil(splits).next_multiple_of(4);
    let mut p = vec![0.0f32; splits * rows];
    for s in 0..splits {
        let (begin, end) = ((s * chunk).min(cols), ((s + 1) * chunk).min(cols));
        for r in 0..rows {
            let row = &m[r * cols..(r + 1) * cols];
            let dot: f64 = (begin..end)
                .map(|x| f64::from(row[x]) * f64::from(v[x]))
                .sum();
            p[s * rows + r] = dot as f32;
        }
    }
    p
}

/// The split-K kernels' emulation (`M, cols, rows, V, P, splits`).
pub(super) fn emulate_partial_sums(l: &mut FakeLaunch<'_>) -> backend::Result<()> {
    let (cols, rows, splits) = (l.count(1)?, l.count(2)?, l.count(5)?);
    let p = partial_sums(l.read(0)?, l.read(3)?, rows, cols, splits);
    l.write(4, p)
}

/// The final split-K kernel's emulation (`P, W, rows, splits`).
pub(super) fn emulate_final_sums(l: &mut FakeLaunch<'_>) -> backend::Result<()> {
    let w = final_sums(l.read(0)?, l.count(2)?, l.count(3)?);
    l.write(1, w)
}

/// The second split-K pass, for the fake backend: each row's partial sums added.
pub(super) fn final_sums(p: &[f32], rows: usize, splits: usize) -> Vec<f32> {
    (0..rows)
        .map(|r| {
            (0..splits)
                .map(|s| p.get(s * rows + r).map_or(f64::NAN, |x| f64::from(*x)))
                .sum::<f64>() as f32
        })
        .collect()
}

/// The steps of a split variant over `[M, V, W]` and its partials buffer (poisoned before
/// checks): `split-k` and `split-wide` time the partial sums of `splits` column blocks, then a
/// warp-sized slice per row adding them into W; `split-one` does both in one launch.
pub(super) fn split_k_steps(
    cx: &mut Build<'_>,
    kernel: KernelId,
    [m, v, w]: [BufferId; 3],
) -> Result<(Vec<Step>, (BufferId, usize)), ExecError> {
    let (variant, size, shape) = (cx.variant.name, cx.inputs.size, cx.side.shape);
    let program = cx.program()?;
    let splits = splits_of(size, shape.groups, tile_of(variant));
    let (rows, cols) = (size.rows as u32, size.cols as u32);
    let len = splits as usize * rows as usize;
    let partial = cx.output(len)?;
    if variant == SPLIT_ONE {
        let counters = size.rows.div_ceil(u64::from(TILE)).max(1) as usize;
        let step = one_launch_step(cx, kernel, splits, counters, [m, v, w, partial])?;
        return Ok((vec![step], (partial, len)));
    }
    let final_kernel = cx.backend.kernel(program, SPLIT_K_FINAL)?;
    let [m, v, w, p] = [m, v, w, partial].map(Arg::Buffer);
    let [c, r, s] = [cols, rows, splits].map(Arg::U32);
    // (M, cols, rows, V, P, splits), then (P, W, rows, splits).
    let first = cx.launch(kernel, vec![m, c, r, v, p, s]);
    let second = Step::Kernel {
        kernel: final_kernel,
        shape: LaunchShape::linear(rows.div_ceil((shape.local / 32).max(1)).max(1), shape.local),
        args: vec![p, w, r, s],
    };
    Ok((vec![first, second], (partial, len)))
}

/// The one launch of `split-one` or `split-flat` over `[M, V, W, P]`: a matvec's arguments (so
/// the fake backend emulates it as one), then P, the block parameter (splits, or the chunk) and
/// `counters` completion counters (row tiles, rows), zeroed once here: the kernel leaves each
/// at 0 (whoever completes a row or tile resets it).
pub(super) fn one_launch_step(
    cx: &mut Build<'_>,
    kernel: KernelId,
    blocks: u32,
    counters: usize,
    [m, v, w, partial]: [BufferId; 4],
) -> Result<Step, ExecError> {
    let count = cx.upload_u32(&vec![0; counters])?;
    let size = cx.inputs.size;
    let [m, v, w, p, count] = [m, v, w, partial, count].map(Arg::Buffer);
    let [cols, rows, blocks] = [size.cols as u32, size.rows as u32, blocks].map(Arg::U32);
    Ok(cx.launch(kernel, vec![m, cols, rows, v, w, p, blocks, count]))
}
