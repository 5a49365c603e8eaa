//! `split-flat`: the matvec that reads M as one flat stream of float4s, whatever the row width.
//!
//! A row of 60989 floats is not 16-byte aligned, so every row-based kernel reads such a matrix
//! with scalar loads. The matrix as a whole is one aligned array of `rows * cols` floats:
//! `matvec_split_flat` cuts it into tasks of [`chunk`] floats (a multiple of 4, at most one row,
//! so a task starts aligned and spans at most two rows) and reads each task as the read kernel
//! reads its array. Each task leaves two partial sums, `P[2t]` for the row it starts in and
//! `P[2t + 1]` for the next; the work-group that completes a row (an atomic count per row, as
//! in `split-one`) adds the row's partial sums into W. One launch.
//!
//! Here: the chunk, the task arithmetic (mirrored from the kernel, to test it without a device)
//! and the launch's arguments.

use super::shapes::SPLIT_FLAT;
use super::split::one_launch_step;
use crate::backend::{BufferId, KernelId};
use crate::families::error::WorkloadError;
use crate::families::plan::{Build, ExecError, Step};
use crate::rows::Size;

/// Why a matrix's rows, narrower than one float4, leave split-flat no task to cut.
pub(super) fn narrow_rows(size: Size) -> String {
    format!(
        "matrix {size}: split-flat cuts M into float4 tasks of at most a row; rows need at least \
         4 columns"
    )
}

/// The chunk (floats per task) of a `rows` x `cols` launch of `groups` work-groups of `local`:
/// about one task per group (so the `groups` sweep of a study is also a chunk sweep), a
/// multiple of `4 * local` (every work-item reads as many float4s), never more than a row
/// (a task spans at most two rows). Rows narrower than `4 * local` get a multiple of 4 only;
/// rows narrower than 4 floats cannot be cut: `None` (split-flat is made for wide rows).
pub fn chunk(size: Size, groups: u32, local: u32) -> Option<u32> {
    let cols = size.cols;
    if cols < 4 {
        return None;
    }
    let step = 4 * u64::from(local.max(1));
    let step = if cols >= step { step } else { 4 };
    let most = cols / step * step;
    let want = size
        .elements()
        .div_ceil(u64::from(groups.max(1)))
        .next_multiple_of(step);
    // `most` is at most cols < 2^32 (the harness refuses larger matrices).
    Some(want.clamp(4, most) as u32)
}

/// Tasks of a launch with this chunk: the kernel's `tasks`.
pub fn tasks(size: Size, chunk: u32) -> u64 {
    size.elements().div_ceil(u64::from(chunk.max(1)))
}

/// The one launch of `split-flat` over `[M, V, W]`: P holds two sums per task, the block
/// parameter is the chunk, and there is one counter per row (see
/// [`super::split::one_launch_step`]). Returns the step and P (poisoned before checks).
pub(super) fn steps(
    cx: &mut Build<'_>,
    kernel: KernelId,
    [m, v, w]: [BufferId; 3],
) -> Result<(Vec<Step>, (BufferId, usize)), ExecError> {
    let (size, shape) = (cx.inputs.size, cx.side.shape);
    let chunk =
        chunk(size, shape.groups, shape.local).ok_or_else(|| WorkloadError::BadProblem {
            variant: format!("matvec/{SPLIT_FLAT}"),
            reason: narrow_rows(size),
        })?;
    let len = 2 * tasks(size, chunk) as usize;
    let partial = cx.output(len)?;
    let step = one_launch_step(cx, kernel, chunk, size.rows as usize, [m, v, w, partial])?;
    Ok((vec![step], (partial, len)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tasks that cover row `r`: the kernel counts this many before a row is complete.
    fn row_tasks(r: u64, cols: u64, chunk: u32) -> std::ops::RangeInclusive<u64> {
        let chunk = u64::from(chunk.max(1));
        (r * cols / chunk)..=(((r + 1) * cols).saturating_sub(1) / chunk)
    }

    /// What the kernel's first phase leaves in P: each task's sums over the part of
    /// row r0 (slot 0) and of row r0 + 1 (slot 1) that it covers, with the kernel's boundaries.
    fn partials(m: &[f32], v: &[f32], size: Size, chunk: u32) -> Vec<f64> {
        let (n, cols, chunk) = (size.elements(), size.cols, u64::from(chunk));
        let mut p = vec![0.0; 2 * tasks(size, chunk as u32) as usize];
        for t in 0..tasks(size, chunk as u32) {
            let (begin, end) = (t * chunk, ((t + 1) * chunk).min(n));
            let b = (begin / cols + 1) * cols;
            for i in begin..end {
                let slot = usize::from(i >= b);
                let col = (i % cols) as usize;
                p[2 * t as usize + slot] += f64::from(m[i as usize]) * f64::from(v[col]);
            }
        }
        p
    }

    /// What the last work-group of each row adds: row r's partial sums, slot 1 of the
    /// task that starts in the row before, slot 0 of every other.
    fn row_sums(p: &[f64], size: Size, chunk: u32) -> Vec<f64> {
        (0..size.rows)
            .map(|r| {
                let first = r * size.cols;
                row_tasks(r, size.cols, chunk)
                    .map(|j| p[(2 * j + u64::from(j * u64::from(chunk) < first)) as usize])
                    .sum()
            })
            .collect()
    }

    fn product(size: Size, chunk: u32) -> (Vec<f64>, Vec<f64>) {
        let (rows, cols) = (size.rows as usize, size.cols as usize);
        let m: Vec<f32> = (0..rows * cols).map(|i| (i % 13) as f32 - 6.0).collect();
        let v: Vec<f32> = (0..cols).map(|i| (i % 7) as f32 * 0.25 - 0.5).collect();
        let (want, _) = crate::families::reference::matvec(&m, &v, rows, cols);
        let got = row_sums(&partials(&m, &v, size, chunk), size, chunk);
        (got, want)
    }

    #[test]
    fn every_row_is_the_sum_of_the_tasks_that_cover_it() {
        // Odd widths (cols % 4 = 1, 2, 3 and 0), the n % 4 tail, chunks from 4 to a whole row.
        for (rows, cols) in [(7, 61), (5, 62), (9, 63), (3, 64), (1, 4099), (11, 5)] {
            let size = Size::matrix(rows, cols);
            for chunk in [4u32, 8, 20, 60, 64] {
                if u64::from(chunk) > cols {
                    continue;
                }
                let (got, want) = product(size, chunk);
                for (r, (g, w)) in got.iter().zip(&want).enumerate() {
                    assert!(
                        (g - w).abs() < 1e-9,
                        "{size} chunk {chunk} row {r}: {g} vs {w}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_task_spans_at_most_two_rows_and_each_row_counts_its_tasks() {
        for (size, groups, local) in [
            (Size::matrix(1100, 60989), 2112, 256),
            (Size::matrix(16, 4_194_304), 528, 256),
            (Size::matrix(37, 4103), 7, 32),
            (Size::matrix(5, 6), 100, 256),
        ] {
            let c = chunk(size, groups, local).unwrap();
            assert!(
                c.is_multiple_of(4) && u64::from(c) <= size.cols,
                "{size}: chunk {c}"
            );
            // Each task's rows, counted as the kernel counts them (r0, and r0 + 1 if reached).
            let mut counted = vec![0u64; size.rows as usize];
            for t in 0..tasks(size, c) {
                let begin = t * u64::from(c);
                let end = (begin + u64::from(c)).min(size.elements());
                let r0 = begin / size.cols;
                counted[r0 as usize] += 1;
                if end > (r0 + 1) * size.cols {
                    assert!((end - 1) / size.cols == r0 + 1, "{size}: task {t}");
                    counted[r0 as usize + 1] += 1;
                }
            }
            // The last task starts in the last row, so M's n % 4 tail is in its first row.
            let last = (tasks(size, c) - 1) * u64::from(c) / size.cols;
            assert_eq!(last, size.rows - 1, "{size}");
            for (r, n) in counted.iter().enumerate() {
                let want = row_tasks(r as u64, size.cols, c).count() as u64;
                assert_eq!(*n, want, "{size} chunk {c} row {r}");
            }
        }
    }

    #[test]
    fn the_chunk_is_about_one_task_per_group_in_whole_group_steps() {
        // 2^26 floats over 1056 groups: 63551 per group, up to a multiple of 1024.
        let wide = Size::matrix(16, 4_194_304);
        assert_eq!(chunk(wide, 1056, 256), Some(64_512));
        assert_eq!(tasks(wide, 64_512), 1041);
        // Never more than a row: 60989 columns hold 59 steps of 1024.
        let odd = Size::matrix(1100, 60989);
        assert_eq!(chunk(odd, 1, 256), Some(59 * 1024));
        assert_eq!(chunk(odd, 4224, 256), Some(16 * 1024));
        // Rows narrower than one step: a multiple of 4, at most the row.
        assert_eq!(chunk(Size::matrix(100, 1001), 10, 256), Some(1000));
        assert_eq!(chunk(Size::matrix(100, 1001), 1000, 256), Some(104));
        assert_eq!(chunk(Size::matrix(100, 7), 1000, 256), Some(4));
        // Rows of fewer than 4 floats are refused.
        assert_eq!(chunk(Size::matrix(100, 3), 10, 256), None);
    }

    #[test]
    fn row_tasks_follow_the_row_boundaries() {
        // 10 columns, chunk 8: row 0 is task 0..=1, row 1 (10..20) tasks 1..=2, row 3
        // (30..40) tasks 3..=4.
        assert_eq!(row_tasks(0, 10, 8), 0..=1);
        assert_eq!(row_tasks(1, 10, 8), 1..=2);
        assert_eq!(row_tasks(3, 10, 8), 3..=4);
        // A task that ends exactly at a row's end: row 1 of 8 columns is task 1 alone.
        assert_eq!(row_tasks(1, 8, 8), 1..=1);
    }
}
