//! Matrix transpose (TranP in Fang, Varbanescu & Sips 2011, Table II): `out = in^T` for a
//! row-major `ROWSxCOLS` matrix of floats (`kernels_*/transpose.*`). Launched in 2-D, x over
//! the input's columns and y over its rows (`GroupRule::Cover2D`); `local` is 32 work-items
//! wide and any number tall, each group moving one 32 x 32 tile whose rows are padded by one
//! float, so that reading a tile column hits no bank twice.
//!
//! Two more, `copy` and `copy-barrier`, transpose nothing: they copy with `naive`'s launch,
//! the second with one work-group barrier between its read and its write, so that their ratio
//! is the price of a barrier (Table VI's local-memory TranP lost a factor of 11 on a CPU).
//! Metric: GB/s of one read and one write of the matrix (8 bytes per element); the result must
//! be exact (a transpose moves floats, it computes none).

use crate::backend::fake::FakeLaunch;
use crate::backend::{self, Arg};
use crate::families::emulation::rounded;
use crate::families::error::WorkloadError;
use crate::families::family::{matrices, matrix_size, Family, FamilySpec, InputChoice, QuickSize};
use crate::families::footprint::{mul, plain, Footprint};
use crate::families::plan::{Build, Built, ExecError, Inputs};
use crate::families::reference::{self};
use crate::families::variant::{exact_local, v, GroupRule, Variant};
use crate::rows::{FamilyId, Metric, Size};

const ID: FamilyId = FamilyId::new("transpose");

/// The tile of `local`, the kernels' `TR_TILE`: its width is the work-group's.
pub const TILE: u32 = 32;

const fn planar(name: &'static str, kernel: &'static str, about: &'static str) -> Variant {
    v(ID, name, kernel, GroupRule::Cover2D, about)
}

const VARIANTS: [Variant; 4] = [
    planar(
        "naive",
        "transpose_naive",
        "one element per work-item: coalesced reads, writes a whole output row apart",
    ),
    exact_local(
        planar(
            "local",
            "transpose_local",
            "32x32 tiles through local memory, rows padded against bank conflicts: coalesced \
             reads and writes",
        ),
        TILE,
    ),
    planar(
        "copy",
        "transpose_copy",
        "no transpose: one element copied per work-item, the naive kernel's launch",
    ),
    planar(
        "copy-barrier",
        "transpose_copy_barrier",
        "no transpose: `copy` with one work-group barrier between the read and the write (a \
         barrier's price on a CPU device)",
    ),
];

/// `in^T` of a row-major `rows` x `cols` matrix, in f64 (the values themselves: exact).
pub fn transposed(input: &[f32], rows: usize, cols: usize) -> Vec<f64> {
    let mut out = vec![0.0; rows * cols];
    for (r, row) in input.chunks(cols.max(1)).enumerate().take(rows) {
        for (c, x) in row.iter().enumerate() {
            out[c * rows + r] = f64::from(*x);
        }
    }
    out
}

pub struct Transpose;

/// `transpose_*(in, out, rows, cols)`: the reference itself (a transpose computes nothing).
fn emulate_transpose(l: &mut FakeLaunch<'_>) -> backend::Result<()> {
    let out = transposed(l.read(0)?, l.count(2)?, l.count(3)?);
    l.write(1, rounded(&out))
}

/// `transpose_copy*(in, out, rows, cols)`: the input as it is.
fn emulate_copy(l: &mut FakeLaunch<'_>) -> backend::Result<()> {
    let n = l.count(2)? * l.count(3)?;
    let out: Vec<f32> = l.read(0)?.iter().take(n).copied().collect();
    l.write(1, out)
}

impl Family for Transpose {
    fn spec(&self) -> &FamilySpec {
        const SPEC: FamilySpec = FamilySpec {
            default_size: "8192x8192",
            // 32 wide: `local`'s only width, and whole warps along a row for `naive`.
            default_local: Some(TILE),
            quick_size: Some(QuickSize::same("1024x1024")),
            variants: &VARIANTS,
            // One element, odd shapes no tile divides, a tall and a wide one.
            test_sizes: &matrices([(1, 1), (37, 101), (64, 32), (300, 7), (5, 260)]),
            emulations: &[
                ("transpose_copy*", emulate_copy),
                ("transpose_*", emulate_transpose),
            ],
            ..FamilySpec::new(ID, "transpose", Metric::Bandwidth)
        };
        &SPEC
    }

    fn work(&self, _variant: &str, size: Size, _global: u64) -> (u64, u64) {
        (mul(size.elements(), 8), 0)
    }

    fn footprint(&self, size: Size) -> Footprint {
        let n = size.elements();
        plain(n, n, n, 0).with_largest(n)
    }

    fn check_size(&self, variant: &Variant, size: Size) -> Result<(), WorkloadError> {
        matrix_size(variant, size, "a transpose takes")
    }

    /// y over the rows: one tile tall for `local`, whatever the work-group's height.
    /// (x: the default, one column per work-item; `local`'s groups are one tile wide.)
    fn groups_y(&self, variant: &Variant, size: Size, local_y: u32) -> u64 {
        let per_group = if variant.kernel == "transpose_local" {
            u64::from(TILE)
        } else {
            u64::from(local_y.max(1))
        };
        size.rows.max(1).div_ceil(per_group)
    }

    fn inputs(&self, v: &'static Variant, size: Size, seed: u64, _: InputChoice<'_>) -> Inputs {
        let (rows, cols) = (size.rows as usize, size.cols as usize);
        let a = reference::random_vector(rows * cols, seed);
        // `copy` and `copy-barrier` copy rather than transpose.
        let want = if v.kernel.starts_with("transpose_copy") {
            a.iter().map(|x| f64::from(*x)).collect()
        } else {
            transposed(&a, rows, cols)
        };
        Inputs::new(size, a, Vec::new()).with_exact(want)
    }

    fn build(&self, cx: &mut Build<'_>) -> Result<Built, ExecError> {
        let size = cx.inputs.size;
        let dims = [size.rows, size.cols].map(|d| Arg::U32(d as u32));
        cx.in_out(cx.inputs.a.len(), &dims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_swaps_rows_and_columns() {
        let m = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]; // 2 x 3
        assert_eq!(transposed(&m, 2, 3), vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    }

    #[test]
    fn local_groups_cover_whole_tiles() {
        let local = &VARIANTS[1];
        let size = Size::matrix(65, 33);
        assert_eq!(Transpose.groups(local, size, TILE), 2);
        assert_eq!(Transpose.groups_y(local, size, 8), 3);
        let naive = &VARIANTS[0];
        assert_eq!(Transpose.groups_y(naive, size, 8), 9);
    }

    #[test]
    fn sizes_must_be_matrices() {
        let naive = &VARIANTS[0];
        assert!(Transpose.check_size(naive, Size::vector(64)).is_err());
        assert!(Transpose.check_size(naive, Size::matrix(64, 0)).is_err());
        assert!(Transpose.check_size(naive, Size::matrix(3, 5)).is_ok());
    }
}
