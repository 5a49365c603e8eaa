//! The math family: chains of `sin` or `exp` (kernels_*/math.*), precise or through the
//! hardware intrinsics, where compiler flags (fast math) and intrinsics decide the speed.
//! Metric: G evaluations per second (`Geval/s`), one being a chain step (a `sin` or `exp` and
//! the multiply-add around it); the `flops` column counts the multiply-add's 2 FLOP per step
//! and nothing inside the function, whose instruction count the flags change (evaluations =
//! flops / 2).
//!
//! Each chain is a contraction with factor at most 1/2 (see the kernel file), so an error of
//! `e` per step stays below `2e` along the chain. The tolerance of the output (the sum of 8
//! chains, |sum| < 12) is twice `8 · 2 · step + 7 ulp(12)`, with `step` the documented error
//! bound of one evaluation, scaled by its factor, plus two ulp of the multiply-add:
//! - precise `sin`: 4 ulp (OpenCL's bound, the looser of the two APIs), `exp`: 3 ulp;
//! - intrinsics or fast math, `sin`: 2^-11 absolute on [-pi, pi] (OpenCL's relaxed-math
//!   bound, looser than `__sinf`'s 2^-21.41); `exp`: 8 ulp (relaxed OpenCL allows
//!   3 + floor(|2x|) = 6 at |x| = 1.5, `__expf` 2 + floor(|1.173x|) = 3).
//!
//! A kernel that computes another function, uses another constant or drops a chain still
//! misses by far more (a unit test shows it for each tolerance).

use crate::backend::fake::FakeLaunch;
use crate::families::emulation::fma_iters;
use crate::families::family::{Family, FamilySpec, QuickSize};
use crate::families::flops::{check_sampled, one_per_work_item};
use crate::families::footprint::{plain, Footprint};
use crate::families::plan::{Build, Built, ExecError, Inputs, Ran, FMA_ITERS};
use crate::families::reference::{self, Verification};
use crate::families::variant::GroupRule::*;
use crate::families::variant::{bare, Variant};
use crate::rows::{FamilyId, Metric, Size};

const fn chains(name: &'static str, kernel: &'static str, about: &'static str) -> Variant {
    bare(FamilyId::Math, name, kernel, Cover { per_item: 1 }, about)
}

const VARIANTS: [Variant; 4] = [
    chains(
        "sin",
        "math_sin",
        "8 chains of precise sin per work-item (x = sin(x)/2 + c)",
    ),
    chains(
        "exp",
        "math_exp",
        "8 chains of precise exp per work-item (x = exp(-x)/4 + c)",
    ),
    chains(
        "native-sin",
        "math_native_sin",
        "the sin chains through the intrinsic: native_sin / __sinf",
    ),
    chains(
        "native-exp",
        "math_native_exp",
        "the exp chains through the intrinsic: native_exp / __expf",
    ),
];

/// The function a math variant chains.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Function {
    Sin,
    Exp,
}

/// The function of a variant or kernel name (`native-exp`, `math_sin`).
fn function(name: &str) -> Function {
    if name.ends_with("exp") {
        Function::Exp
    } else {
        Function::Sin
    }
}

/// Whether the compiler flags relax math accuracy (fast math in either API's spelling).
pub fn relaxed(flags: &[String]) -> bool {
    flags
        .iter()
        .any(|f| f == "-cl-fast-relaxed-math" || f == "--use_fast_math")
}

/// One work-item's output in f64: the kernel's recurrence, with its float32 constants.
pub fn chain(f: Function, input: f32, iters: u32) -> f64 {
    let h = 0.5f32 * input;
    let mut sums = [0.0f64; 8];
    for (j, s) in sums.iter_mut().enumerate() {
        let c = f64::from(h + 0.0625f32 * j as f32);
        let mut x = c;
        for _ in 0..iters {
            x = match f {
                Function::Sin => 0.5 * x.sin(),
                Function::Exp => 0.25 * (-x).exp(),
            } + c;
        }
        *s = x;
    }
    // The kernel's order of summation.
    let s = sums;
    ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))
}

/// The unit in the last place of a float32 value of magnitude `x`.
fn ulp(x: f64) -> f64 {
    let e = x.abs().log2().floor();
    2f64.powf(e) * reference::EPS32
}

/// The absolute tolerance of one output (see the module docs).
pub fn tolerance(f: Function, relaxed: bool) -> f64 {
    let evaluation = match (f, relaxed) {
        (Function::Sin, false) => 0.5 * 4.0 * ulp(1.5),
        (Function::Sin, true) => 0.5 * 2f64.powi(-11),
        (Function::Exp, false) => 0.25 * 3.0 * ulp(1.5f64.exp()),
        (Function::Exp, true) => 0.25 * 8.0 * ulp(1.5f64.exp()),
    };
    let step = evaluation + 2.0 * ulp(1.5);
    2.0 * (8.0 * 2.0 * step + 7.0 * ulp(12.0))
}

pub struct Math;

/// `math_*(x, out, n)`: each work-item's chain of the kernel's function from input `g % n`.
fn emulate_chain(l: &mut FakeLaunch<'_>) -> crate::backend::Result<()> {
    let (x, iters, f) = (l.read(0)?, fma_iters(l), function(l.kernel));
    let n = l.count(2)?.clamp(1, x.len());
    let out = (0..l.shape.global() as usize)
        .map(|g| chain(f, x[g % n], iters) as f32)
        .collect();
    l.write(1, out)
}

impl Family for Math {
    fn spec(&self) -> &FamilySpec {
        const SPEC: FamilySpec = FamilySpec {
            quick_size: Some(QuickSize::same("2^16")),
            variants: &VARIANTS,
            emulations: &[("math_*", emulate_chain)],
            test_sizes: &[Size::vector(1000)],
            ..FamilySpec::new(FamilyId::Math, "math", Metric::Evaluations)
        };
        &SPEC
    }

    /// One float read and one written per work-item, 2 flops per step.
    fn work(&self, _variant: &str, _size: Size, global: u64) -> (u64, u64) {
        let steps = global.saturating_mul(8 * u64::from(FMA_ITERS));
        (global.saturating_mul(8), steps.saturating_mul(2))
    }

    fn footprint(&self, size: Size) -> Footprint {
        plain(size.rows, size.rows, 1, 0)
    }

    fn build(&self, cx: &mut Build<'_>) -> Result<Built, ExecError> {
        one_per_work_item(cx)
    }

    fn check(&self, ran: &Ran, inputs: &Inputs, got: &[f32]) -> Verification {
        let global = ran.shape.global() as usize;
        let loose = ran.variant.starts_with("native") || relaxed(&ran.flags);
        let f = function(ran.variant);
        let tolerance = tolerance(f, loose);
        check_sampled(
            got,
            &inputs.a,
            global,
            |x| chain(f, x, FMA_ITERS),
            |_| tolerance,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel in float32, with `eval` for the function and `step` for the chain offsets.
    fn float_chain(input: f32, iters: u32, eval: impl Fn(f32) -> f32, offset: f32) -> f32 {
        let h = 0.5f32 * input;
        let x: Vec<f32> = (0..8)
            .map(|j| {
                let c = h + offset * j as f32;
                (0..iters).fold(c, |x, _| eval(x) + c)
            })
            .collect();
        ((x[0] + x[1]) + (x[2] + x[3])) + ((x[4] + x[5]) + (x[6] + x[7]))
    }

    #[test]
    fn chains_stay_in_range_and_converge() {
        for input in [-1.0f32, -0.3, 0.0, 0.999] {
            for f in [Function::Sin, Function::Exp] {
                let r = chain(f, input, 1024);
                assert!(r.is_finite() && r.abs() < 12.0, "{f:?} {input}: {r}");
                // A contraction: more steps no longer move the result.
                assert!((chain(f, input, 2048) - r).abs() < 1e-12, "{f:?} {input}");
            }
        }
    }

    #[test]
    fn float32_chains_pass_and_wrong_kernels_fail() {
        let sin = |x: f32| 0.5f32 * x.sin();
        let exp = |x: f32| 0.25f32 * (-x).exp();
        for relaxed in [false, true] {
            let (ts, te) = (
                tolerance(Function::Sin, relaxed),
                tolerance(Function::Exp, relaxed),
            );
            for input in [-0.9f32, 0.1, 0.7] {
                let want = chain(Function::Sin, input, 1024);
                let got = float_chain(input, 1024, sin, 0.0625);
                assert!((f64::from(got) - want).abs() <= ts);
                // cos instead of sin, another offset, a chain dropped: each fails.
                let cos = float_chain(input, 1024, |x| 0.5 * x.cos(), 0.0625);
                assert!((f64::from(cos) - want).abs() > ts, "cos passes");
                let off = float_chain(input, 1024, sin, 0.065);
                assert!((f64::from(off) - want).abs() > ts, "offset passes");
                let want_e = chain(Function::Exp, input, 1024);
                let got_e = float_chain(input, 1024, exp, 0.0625);
                assert!((f64::from(got_e) - want_e).abs() <= te);
                let dropped = got_e - float_chain(input, 1, exp, 0.0625) / 8.0;
                assert!((f64::from(dropped) - want_e).abs() > te, "dropped passes");
                let plus = float_chain(input, 1024, |x| 0.25 * x.exp(), 0.0625);
                assert!((f64::from(plus) - want_e).abs() > te, "exp(+x) passes");
            }
        }
        assert!(tolerance(Function::Sin, true) > tolerance(Function::Sin, false));
    }

    #[test]
    fn check_samples_and_catches_one_wrong_output() {
        let inputs = reference::random_vector(64, 4);
        let global = 128;
        let mut got: Vec<f32> = (0..global)
            .map(|g| chain(Function::Exp, inputs[g % 64], 16) as f32)
            .collect();
        let t = tolerance(Function::Exp, false);
        let check = |got: &[f32]| {
            check_sampled(got, &inputs, global, |x| chain(Function::Exp, x, 16), |_| t)
        };
        assert!(check(&got).ok);
        got[0] += 1e-3;
        assert!(!check(&got).ok);
    }

    #[test]
    fn variants_and_flags_are_read() {
        assert_eq!(function("native-exp"), Function::Exp);
        assert_eq!(function("math_native_sin"), Function::Sin);
        assert!(relaxed(&["--fmad=true".into(), "--use_fast_math".into()]));
        assert!(!relaxed(&["-cl-mad-enable".into()]));
        assert_eq!(
            Math.work("sin", Size::vector(1), 10),
            (80, 10 * 8 * 1024 * 2)
        );
    }
}

/// The fake backend's emulation of the new kernels verifies through the same path as a device.
#[cfg(test)]
mod fake_tests {
    use crate::backend::fake::{FakeBackend, FakeScript};
    use crate::backend::LaunchShape;
    use crate::families::exec::{self, Inputs};
    use crate::families::{FamilyId, Size};
    use crate::kernels::KernelSources;
    use crate::rows::Api;

    fn verify(script: FakeScript) -> Vec<bool> {
        let mut b = FakeBackend::new(Api::Cuda, script, crate::families::emulator());
        let kernels = crate::families::all_variants()
            .iter()
            .filter(|v| matches!(v.family, FamilyId::Math | FamilyId::Sgemm));
        kernels
            .map(|v| {
                let size = Size::vector(if v.family == FamilyId::Sgemm {
                    128
                } else {
                    300
                });
                let inputs = Inputs::generate(v.family, size, 2);
                let shape =
                    LaunchShape::linear(v.family.family().default_groups(v, size, 256, 4), 256);
                let side = crate::families::tests::side(shape);
                let p =
                    exec::prepare(&mut b, &KernelSources::embedded(), v, &inputs, &side).unwrap();
                let ok = exec::verify(&mut b, &p, &inputs).unwrap().ok;
                exec::release(&mut b, p);
                ok
            })
            .collect()
    }

    #[test]
    fn fake_emulation_verifies_and_a_wrong_result_fails() {
        assert_eq!(verify(FakeScript::default()), vec![true; 7]);
        let wrong = FakeScript {
            wrong_results: ["sgemm_blocked", "math_native_exp"]
                .map(String::from)
                .to_vec(),
            ..FakeScript::default()
        };
        assert_eq!(
            verify(wrong),
            vec![true, false, true, true, true, true, false]
        );
    }
}
