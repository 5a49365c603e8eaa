//! Peak arithmetic: eight FMA chains per work-item (`kernels_*/peak.*`).

use crate::backend::fake::{FakeLaunch, KernelEmulation};
use crate::backend::{self, Arg};
use crate::families::emulation::fma_iters;
use crate::families::family::{Family, FamilySpec, InputChoice, QuickSize};
use crate::families::footprint::{mul, plain, Footprint};
use crate::families::plan::{Build, Built, ExecError, Inputs, Ran, FMA_ITERS};
use crate::families::reference::{self, Verification};
use crate::families::variant::GroupRule::*;
use crate::families::variant::{v, Variant};
use crate::rows::FamilyId;
use crate::rows::Metric;
use crate::rows::Size;
use rayon::prelude::*;

/// One launch over the configured shape, `x` in and one output per work-item: the flops and
/// math kernels (`(x, out, n)`).
pub(crate) fn one_per_work_item(cx: &mut Build<'_>) -> Result<Built, ExecError> {
    let n = Arg::U32(cx.inputs.size.rows as u32);
    cx.in_out(cx.shape().global() as usize, &[n])
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
    let out = (0..l.shape().global() as usize)
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
            ..FamilySpec::new(FamilyId::Flops, "peak", Metric::Flops)
        };
        &SPEC
    }

    fn work(&self, _variant: &str, _size: Size, global: u64) -> (u64, u64) {
        (
            mul(global, 4 * 2),
            mul(global, 8 * u64::from(FMA_ITERS) * 2),
        )
    }

    fn footprint(&self, size: Size) -> Footprint {
        plain(size.rows, size.rows, 1, 0)
    }

    fn inputs(&self, _: &'static Variant, size: Size, seed: u64, _: InputChoice<'_>) -> Inputs {
        Inputs::summed(size, seed)
    }

    fn build(&self, cx: &mut Build<'_>) -> Result<Built, ExecError> {
        one_per_work_item(cx)
    }

    fn emulation(&self, kernel: &str) -> Option<KernelEmulation> {
        (kernel == "peak_fma").then_some(emulate_fma as KernelEmulation)
    }

    /// Checked on a sample of about 4096 work-items (the f64 reference of all of them would
    /// cost more CPU time than the measurement), with a relative tolerance of 1e-4: the
    /// recurrence contracts (|m| < 1), so float32 rounding stays bounded.
    fn check(&self, ran: &Ran, inputs: &Inputs, got: &[f32]) -> Verification {
        let global = ran.shape.global() as usize;
        let n = inputs.a.len().max(1);
        let stride = (global / 4096).max(1);
        let idx: Vec<usize> = (0..global.min(got.len())).step_by(stride).collect();
        let want: Vec<f64> = idx
            .par_iter()
            .map(|&g| reference::fma_chain(inputs.a[g % n], FMA_ITERS))
            .collect();
        let sampled: Vec<f32> = idx.iter().map(|&g| got[g]).collect();
        let tol: Vec<f64> = want.iter().map(|w| 1e-4 * w.abs().max(1.0)).collect();
        reference::compare(&sampled, &want, &tol)
    }
}
