//! Peak arithmetic: eight FMA chains per work-item (`kernels_*/peak.*`).

use crate::backend::fake::FakeLaunch;
use crate::backend::{self, Arg};
use crate::families::emulation::fma_iters;
use crate::families::family::{Family, FamilySpec, QuickSize};
use crate::families::footprint::{mul, plain, Footprint};
use crate::families::plan::{Build, Built, ExecError, Inputs, Ran, FMA_ITERS};
use crate::families::reference::{self, Verification};
use crate::families::variant::GroupRule::*;
use crate::families::variant::{v, Variant};
use crate::rows::{FamilyId, Metric, Size};
use rayon::prelude::*;

/// The flops and math kernels' one launch, `(x, out, n)`: one output per work-item.
pub(crate) fn one_per_work_item(cx: &mut Build<'_>) -> Result<Built, ExecError> {
    let n = Arg::U32(cx.inputs.size.rows as u32);
    cx.in_out(cx.side.shape.global() as usize, &[n])
}

/// Checks about 4096 evenly sampled work-items of a launch of `global` whose work-item `g`
/// computes `chain(x[g % n])` (a reference of all would cost more CPU time than the run), the
/// samples' independent chains computed in parallel (a second per side on one core).
pub(crate) fn check_sampled(
    got: &[f32],
    x: &[f32],
    global: usize,
    chain: impl Fn(f32) -> f64 + Sync,
    tolerance: impl Fn(f64) -> f64,
) -> Verification {
    let n = x.len().max(1);
    let stride = (global / 4096).max(1);
    let idx: Vec<usize> = (0..global.min(got.len())).step_by(stride).collect();
    let want: Vec<f64> = idx.par_iter().map(|&g| chain(x[g % n])).collect();
    let sampled: Vec<f32> = idx.iter().map(|&g| got[g]).collect();
    let tol: Vec<f64> = want.iter().map(|w| tolerance(*w)).collect();
    reference::compare(&sampled, &want, &tol)
}

const VARIANTS: [Variant; 1] = [v(
    FamilyId::Flops,
    "fma",
    "peak_fma",
    PerComputeUnit(16),
    "8 independent FMA chains per work-item",
)];

pub struct Flops;

/// `peak_fma(x, out, n)`: each work-item's FMA chain from input `g % n`.
fn emulate_fma(l: &mut FakeLaunch<'_>) -> backend::Result<()> {
    let (x, iters) = (l.read(0)?, fma_iters(l));
    let n = l.count(2)?.clamp(1, x.len());
    let out = (0..l.shape.global() as usize)
        .map(|g| reference::fma_chain(x[g % n], iters) as f32)
        .collect();
    l.write(1, out)
}

impl Family for Flops {
    fn spec(&self) -> &FamilySpec {
        const SPEC: FamilySpec = FamilySpec {
            measures_peak: true,
            quick_size: Some(QuickSize::same("2^16")),
            variants: &VARIANTS,
            test_sizes: &[Size::vector(1000)],
            emulations: &[("peak_fma", emulate_fma)],
            ..FamilySpec::new(FamilyId::Flops, "peak", Metric::Flops)
        };
        &SPEC
    }

    fn work(&self, _variant: &str, _size: Size, global: u64) -> (u64, u64) {
        let flops = mul(global, 8 * u64::from(FMA_ITERS) * 2);
        (mul(global, 4 * 2), flops)
    }

    fn footprint(&self, size: Size) -> Footprint {
        plain(size.rows, size.rows, 1, 0)
    }

    fn build(&self, cx: &mut Build<'_>) -> Result<Built, ExecError> {
        one_per_work_item(cx)
    }

    /// A sample, with a relative tolerance of 1e-4: the recurrence contracts (|m| < 1), so
    /// float32 rounding stays bounded.
    fn check(&self, ran: &Ran, inputs: &Inputs, got: &[f32]) -> Verification {
        let chain = |x| reference::fma_chain(x, FMA_ITERS);
        let global = ran.shape.global() as usize;
        check_sampled(got, &inputs.a, global, chain, |w| 1e-4 * w.abs().max(1.0))
    }
}
