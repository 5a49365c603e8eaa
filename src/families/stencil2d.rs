//! 2D stencil (St2D in Fang, Varbanescu & Sips 2011, Table II): one step of SHOC's 9-point
//! Stencil2D on a row-major `ROWSxCOLS` grid of floats (`kernels_*/stencil2d.*`).
//!
//! An interior point becomes `w_centre * c + w_edge * (its four edge neighbours) + w_corner * (its
//! four corner neighbours)`; a border point is copied unchanged. Two variants: `naive` reads the
//! nine points from global memory, `local` stages each work-group's points and their one-point halo
//! in local memory first. Launched in 2-D, one point per work-item, x over the columns and y over
//! the rows (`GroupRule::Cover2D`). Metric: GB/s counting one read and one write of the grid (8
//! bytes per point); flops: 11 per interior point (three multiplies, eight adds).

use crate::backend::fake::FakeLaunch;
use crate::backend::{self, Arg};
use crate::families::emulation::rounded;
use crate::families::error::WorkloadError;
use crate::families::family::{matrices, matrix_size, Family, FamilySpec, InputChoice, QuickSize};
use crate::families::footprint::{mul, plain, Footprint};
use crate::families::plan::{Build, Built, ExecError, Inputs};
use crate::families::reference::{self};
use crate::families::variant::{bare, GroupRule, Variant};
use crate::rows::{FamilyId, Metric, Size};

const ID: FamilyId = FamilyId::new("stencil2d");

/// SHOC's Stencil2D weights: the centre, each edge neighbour, each corner neighbour.
pub const WEIGHTS: [f32; 3] = [0.25, 0.15, 0.05];

/// Flops per interior point (see the module docs).
pub const FLOPS_PER_POINT: u64 = 11;

const VARIANTS: [Variant; 2] = [
    bare(
        ID,
        "naive",
        "stencil2d_naive",
        GroupRule::Cover2D,
        "9-point stencil, every point read from global memory",
    ),
    bare(
        ID,
        "local",
        "stencil2d_local",
        GroupRule::Cover2D,
        "9-point stencil, the work-group's points and halo staged in local memory",
    ),
];

/// One step in f64, and per point the tolerance: the float32 rounding of a nine-term sum of
/// these magnitudes in any order (contractions included); border copies are exact.
pub fn step(input: &[f32], rows: usize, cols: usize) -> (Vec<f64>, Vec<f64>) {
    let [centre, edge, corner] = WEIGHTS.map(f64::from);
    let f = reference::tolerance_factor(9);
    let at = |r: usize, c: usize| f64::from(input[r * cols + c]);
    let mut out = Vec::with_capacity(rows * cols);
    let mut tolerances = Vec::with_capacity(rows * cols);
    for r in 0..rows {
        for c in 0..cols {
            if r == 0 || c == 0 || r + 1 >= rows || c + 1 >= cols {
                out.push(at(r, c));
                tolerances.push(0.0);
                continue;
            }
            let edges = [at(r - 1, c), at(r + 1, c), at(r, c - 1), at(r, c + 1)];
            let corners = [
                at(r - 1, c - 1),
                at(r - 1, c + 1),
                at(r + 1, c - 1),
                at(r + 1, c + 1),
            ];
            let sum = |xs: [f64; 4]| xs.iter().sum::<f64>();
            let abs = |xs: [f64; 4]| xs.iter().map(|x| x.abs()).sum::<f64>();
            out.push(centre * at(r, c) + edge * sum(edges) + corner * sum(corners));
            let magnitude = centre * at(r, c).abs() + edge * abs(edges) + corner * abs(corners);
            tolerances.push(f * magnitude);
        }
    }
    (out, tolerances)
}

pub struct Stencil2d;

/// `stencil2d_*(in, out, rows, cols, weights...)`: one step, from the f64 reference.
fn emulate_step(l: &mut FakeLaunch<'_>) -> backend::Result<()> {
    let (out, _) = step(l.read(0)?, l.count(2)?, l.count(3)?);
    l.write(1, rounded(&out))
}

impl Family for Stencil2d {
    fn spec(&self) -> &FamilySpec {
        const SPEC: FamilySpec = FamilySpec {
            default_size: "8192x8192",
            // 32 wide: whole warps along a row.
            default_local: Some(32),
            quick_size: Some(QuickSize::same("1024x1024")),
            variants: &VARIANTS,
            // One point, grids with no interior, odd shapes no work-group divides, tall and wide.
            test_sizes: &matrices([(1, 1), (2, 3), (37, 101), (64, 32), (300, 7)]),
            emulations: &[("stencil2d_*", emulate_step)],
            ..FamilySpec::new(ID, "stencil2d", Metric::Bandwidth)
        };
        &SPEC
    }

    fn work(&self, _variant: &str, size: Size, _global: u64) -> (u64, u64) {
        let interior = mul(size.rows.saturating_sub(2), size.cols.saturating_sub(2));
        (mul(size.elements(), 8), mul(interior, FLOPS_PER_POINT))
    }

    /// The grid in and out; on the host the reference and its tolerances.
    fn footprint(&self, size: Size) -> Footprint {
        let n = size.elements();
        plain(n, n, n, 0).with_largest(n)
    }

    fn check_size(&self, variant: &Variant, size: Size) -> Result<(), WorkloadError> {
        matrix_size(variant, size, "a 2D stencil takes")
    }

    fn inputs(&self, _: &'static Variant, size: Size, seed: u64, _: InputChoice<'_>) -> Inputs {
        let (rows, cols) = (size.rows as usize, size.cols as usize);
        let grid = reference::random_vector(rows * cols, seed);
        let (want, tolerances) = step(&grid, rows, cols);
        Inputs::new(size, grid, Vec::new()).with_reference(want, tolerances)
    }

    fn build(&self, cx: &mut Build<'_>) -> Result<Built, ExecError> {
        let size = cx.inputs.size;
        let dims = [size.rows, size.cols].map(|d| Arg::U32(d as u32));
        cx.in_out(
            cx.inputs.a.len(),
            &[&dims[..], &WEIGHTS.map(Arg::F32)].concat(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn borders_are_copied_and_the_interior_weighed() {
        // 3 x 3 of ones: the centre is 0.25 + 4 * 0.15 + 4 * 0.05 = 1.05.
        let (out, tol) = step(&[1.0; 9], 3, 3);
        assert!((out[4] - 1.05).abs() < 1e-6, "{}", out[4]);
        assert_eq!(tol[0], 0.0);
        assert!(tol[4] > 0.0);
        assert!(out.iter().enumerate().all(|(i, x)| i == 4 || *x == 1.0));
    }

    #[test]
    fn interior_flops_skip_the_border() {
        assert_eq!(
            Stencil2d.work("naive", Size::matrix(4, 5), 0),
            (160, 6 * 11)
        );
        assert_eq!(Stencil2d.work("naive", Size::matrix(1, 5), 0).1, 0);
    }
}
