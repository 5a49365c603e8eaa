//! The fill family: the "OpenCL Optimization" article's buffer fill (a 10^4 × 10^4 table of
//! one value, 10 calls), in its 1D, float4 and two 2D forms. The kernels are `kernels_*/fill.*`.
//! The 1D kernels take `N` floats, the 2D ones `ROWSxCOLS` (`2d-article` square ones only).
//! Metric: GB/s of stores, 4 bytes per element, nothing read.
//!
//! The harness launches whole work-groups and every kernel has a bound check, as CUDA code
//! does (`1d`). The article launched OpenCL with a global size of exactly N, and OpenCL 1.2
//! (NVIDIA's) refuses a local size that does not divide it (`CL_INVALID_WORK_GROUP_SIZE`): the
//! article's local size of 512 "crashed" for that reason. `1d-exact` is that launch
//! ([`ExactLaunch::launch_exact`](crate::backend::ExactLaunch::launch_exact)): OpenCL's driver
//! gets global = N and the local size, and its answer is recorded as it comes (its error name
//! in the row's failure; a driver with OpenCL 2.0's non-uniform work-groups may run it), while
//! CUDA runs it with its grid rounded up and the bound check. `1d-auto` leaves the work-group
//! size to the runtime: OpenCL's `local_work_size = NULL` (picked at enqueue and never said:
//! the row's local size and group count are 0) against CUDA's occupancy calculator
//! (`cuOccupancyMaxPotentialBlockSize`, whose block size the row records, the grid rounded up
//! to cover N).

use crate::backend::fake::FakeLaunch;
use crate::backend::{self, Arg, LaunchShape, Runtime};
use crate::families::error::WorkloadError;
use crate::families::exec::compile;
use crate::families::family::{bad_size, Family, FamilySpec, InputChoice, QuickSize};
use crate::families::footprint::{mul, plain, Footprint};
use crate::families::plan::{Build, Built, ExecError, Inputs, Ran, SideConfig, Step};
use crate::families::reference::Verification;
use crate::families::variant::GroupRule::*;
use crate::families::variant::{bare, Variant};
use crate::kernels::KernelSources;
use crate::rows::{FamilyId, Metric, Size};

const VARIANTS: [Variant; 7] = [
    bare(
        FamilyId::Fill,
        "1d",
        "fill_1d",
        Cover { per_item: 1 },
        "fill article: one float per work-item, whole work-groups and a bound check",
    ),
    bare(
        FamilyId::Fill,
        "1d-exact",
        "fill_1d",
        Cover { per_item: 1 },
        "fill article's launch: global size exactly N (OpenCL 1.2 refuses a local size \
             that does not divide it)",
    ),
    bare(
        FamilyId::Fill,
        "1d-auto",
        "fill_1d",
        Cover { per_item: 1 },
        "fill article's NULL launch: global size exactly N, the work-group size the \
             runtime's (OpenCL NULL, CUDA's occupancy calculator)",
    ),
    bare(
        FamilyId::Fill,
        "float4",
        "fill_float4",
        Cover { per_item: 4 },
        "fill article: one float4 store per work-item",
    ),
    bare(
        FamilyId::Fill,
        "scalar4",
        "fill_scalar4",
        Cover { per_item: 4 },
        "float4's launch with four scalar stores per work-item, each a quarter of the \
             buffer apart: the vector type's own share of float4's gain",
    ),
    bare(
        FamilyId::Fill,
        "2d-rows",
        "fill_2d_rows",
        Cover2D,
        "2D fill, columns on dimension 0 (coalesced stores)",
    ),
    bare(
        FamilyId::Fill,
        "2d-article",
        "fill_2d_article",
        Cover2D,
        "fill article's 2D kernel: rows on dimension 0 (strided stores); square tables",
    ),
];

/// The value every element is filled with (not 0, so a fresh zeroed buffer cannot pass).
pub const VALUE: f32 = 1.5;

fn is_2d(variant: &Variant) -> bool {
    variant.name.starts_with("2d")
}

/// The exact launch of `1d-exact` and `1d-auto` (global = N): N and the local size, `None`
/// for the runtime's; `None` for the variants that launch whole work-groups.
pub fn exact_launch(
    variant: &Variant,
    size: Size,
    shape: LaunchShape,
) -> Option<(u64, Option<u32>)> {
    let n = size.elements();
    match variant.name {
        "1d-exact" => Some((n, Some(shape.local))),
        _ if Fill.leaves_local_to_runtime(variant) => Some((n, None)),
        _ => None,
    }
}

/// Every element must hold [`VALUE`], exactly.
pub fn check(got: &[f32], n: usize) -> Verification {
    let wrong = got[..n.min(got.len())].iter().any(|g| *g != VALUE);
    Verification {
        ok: got.len() >= n && !wrong,
        max_error: if wrong { f64::INFINITY } else { 0.0 },
        tolerance: 0.0,
        checked: n,
    }
}

pub struct Fill;

/// `fill_*(out, value, counts...)`: the value in the first `n` (or rows × cols) elements.
fn emulate_fill(l: &mut FakeLaunch<'_>) -> backend::Result<()> {
    let counts = l.args.iter().filter_map(|a| match a {
        Arg::U32(c) => Some(*c as usize),
        _ => None,
    });
    let value = l.args.iter().find_map(|a| match a {
        Arg::F32(v) => Some(*v),
        _ => None,
    });
    let n = counts.product::<usize>().min(l.read(0)?.len());
    l.write(0, vec![value.unwrap_or(f32::NAN); n])
}

impl Family for Fill {
    fn spec(&self) -> &FamilySpec {
        const SPEC: FamilySpec = FamilySpec {
            charts: &["fill"],
            quick_size: Some(QuickSize {
                length: "2^20",
                matrix: "1024x1024",
            }),
            variants: &VARIANTS,
            emulations: &[("fill_*", emulate_fill)],
            ..FamilySpec::new(FamilyId::Fill, "fill", Metric::Bandwidth)
        };
        &SPEC
    }

    fn work(&self, _variant: &str, size: Size, _global: u64) -> (u64, u64) {
        (mul(size.elements(), 4), 0)
    }

    fn footprint(&self, size: Size) -> Footprint {
        let n = size.elements();
        plain(n, n, 0, 0).with_largest(n)
    }

    fn check_size(&self, variant: &Variant, size: Size) -> Result<(), WorkloadError> {
        let n = size.elements();
        let reason = if n == 0 || n >= u64::from(u32::MAX) {
            format!(
                "{size} has {n} elements; the kernels index with 32-bit integers, from 1 to {}",
                u32::MAX - 1
            )
        } else if !is_2d(variant) && size.cols != 0 {
            format!("{size} is a table; the 1D fill takes one length N")
        } else if is_2d(variant) && size.cols == 0 {
            format!("{size} is one length; the 2D fill takes ROWSxCOLS")
        } else if variant.name == "2d-article" && size.cols != size.rows {
            format!(
                "{size} is not square: the article's kernel puts rows on dimension 0 while the \
                 launch covers columns in x"
            )
        } else {
            return Ok(());
        };
        Err(bad_size(variant, reason))
    }

    /// `1d-auto` (see the module docs).
    fn leaves_local_to_runtime(&self, variant: &Variant) -> bool {
        variant.name == "1d-auto"
    }

    /// CUDA's occupancy calculator, `None` on OpenCL (see
    /// [`crate::backend::ExactLaunch::runtime_local`]).
    fn runtime_local(
        &self,
        backend: &mut dyn Runtime,
        sources: &KernelSources,
        variant: &Variant,
        side: &SideConfig,
    ) -> Result<Option<u32>, ExecError> {
        let program = compile(backend, sources, self.spec().kernel_file, side, None)?;
        let kernel = backend.kernel(program, variant.kernel)?;
        Ok(backend.runtime_local(kernel)?)
    }

    /// Nothing is read: the kernels write [`VALUE`].
    fn inputs(&self, _: &'static Variant, size: Size, _seed: u64, _: InputChoice<'_>) -> Inputs {
        Inputs::new(size, Vec::new(), Vec::new())
    }

    fn build(&self, cx: &mut Build<'_>) -> Result<Built, ExecError> {
        let k = cx.kernel()?;
        let (variant, size) = (cx.variant, cx.inputs.size);
        let len = size.elements() as usize;
        let out = cx.output(len)?;
        let mut args = vec![Arg::Buffer(out), Arg::F32(VALUE)];
        if is_2d(variant) {
            args.extend([size.rows, size.cols].map(|d| Arg::U32(d as u32)));
        } else {
            args.push(Arg::U32(size.elements() as u32));
        }
        let step = match exact_launch(variant, size, cx.side.shape) {
            Some((global, local)) => Step::Exact(k, global, local, args),
            None => cx.launch(k, args),
        };
        Ok(Built::into(vec![step], out, len))
    }

    fn check(&self, _: &Ran, inputs: &Inputs, got: &[f32]) -> Verification {
        check(got, inputs.size.elements() as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Backend;
    use crate::families::{find_variant, FamilyId};

    #[test]
    fn sizes_follow_the_kernel_shape() {
        let one = find_variant(FamilyId::Fill, "1d").unwrap();
        let art = find_variant(FamilyId::Fill, "2d-article").unwrap();
        let rows = find_variant(FamilyId::Fill, "2d-rows").unwrap();
        assert!(Fill.check_size(one, Size::vector(100)).is_ok());
        assert!(Fill.check_size(one, Size::matrix(10, 10)).is_err());
        assert!(Fill.check_size(art, Size::matrix(10, 10)).is_ok());
        assert!(Fill.check_size(art, Size::matrix(10, 12)).is_err());
        assert!(Fill.check_size(rows, Size::matrix(10, 12)).is_ok());
        assert!(Fill.check_size(rows, Size::vector(10)).is_err());
        assert!(Fill.check_size(one, Size::vector(0)).is_err());
        assert!(Fill
            .check_size(rows, Size::matrix(1 << 16, 1 << 16))
            .is_err());
    }

    #[test]
    fn exact_launches_are_the_article_and_the_runtime_variants() {
        let n = Size::vector(100_000_000);
        let shape = LaunchShape::linear(1, 512);
        let exact = find_variant(FamilyId::Fill, "1d-exact").unwrap();
        let auto = find_variant(FamilyId::Fill, "1d-auto").unwrap();
        let plain = find_variant(FamilyId::Fill, "1d").unwrap();
        assert_eq!(
            exact_launch(exact, n, shape),
            Some((100_000_000, Some(512)))
        );
        assert_eq!(exact_launch(auto, n, shape), Some((100_000_000, None)));
        assert_eq!(exact_launch(plain, n, shape), None);
        assert!(Fill.leaves_local_to_runtime(auto) && !Fill.leaves_local_to_runtime(exact));
    }

    fn side(local: u32) -> SideConfig {
        crate::families::tests::side(LaunchShape::linear(1, local))
    }

    #[test]
    fn the_runtime_local_size_is_cudas_calculator_and_unknown_on_opencl() {
        use crate::backend::fake::{FakeBackend, FakeScript};
        use crate::rows::Api;
        let v = find_variant(FamilyId::Fill, "1d-auto").unwrap();
        let sources = KernelSources::embedded();
        let mut cuda = FakeBackend::new(
            Api::Cuda,
            FakeScript::default(),
            crate::families::emulator(),
        );
        let max = cuda.info().max_work_group_size;
        let got = Fill
            .runtime_local(&mut cuda, &sources, v, &side(256))
            .unwrap();
        assert_eq!(got, Some(max));
        let mut cl = FakeBackend::new(
            Api::OpenCl,
            FakeScript::default(),
            crate::families::emulator(),
        );
        assert_eq!(
            Fill.runtime_local(&mut cl, &sources, v, &side(256))
                .unwrap(),
            None
        );
    }

    #[test]
    fn an_uneven_exact_launch_carries_the_drivers_answer() {
        use crate::backend::fake::{FakeBackend, FakeScript};
        use crate::families::exec::{self, Inputs};
        use crate::rows::Api;
        let sources = KernelSources::embedded();
        let n = Size::vector(1000);
        let exact = find_variant(FamilyId::Fill, "1d-exact").unwrap();
        let auto = find_variant(FamilyId::Fill, "1d-auto").unwrap();
        let inputs = Inputs::generate(FamilyId::Fill, n, 1);
        for (api, local, ok) in [
            (Api::OpenCl, 64, false),
            (Api::OpenCl, 100, true),
            (Api::Cuda, 64, true),
        ] {
            let mut b = FakeBackend::new(api, FakeScript::default(), crate::families::emulator());
            let shape = LaunchShape::linear(n.elements().div_ceil(u64::from(local)) as u32, local);
            let whole = SideConfig {
                shape,
                ..side(local)
            };
            let p = exec::prepare(&mut b, &sources, exact, &inputs, &whole).unwrap();
            match exec::verify(&mut b, &p, &inputs) {
                Ok(v) => assert!(ok && v.ok, "{api} wg{local}"),
                Err(e) => {
                    assert!(!ok, "{api} wg{local}: {e}");
                    assert!(e.to_string().contains("CL_INVALID_WORK_GROUP_SIZE"), "{e}");
                }
            }
            // The runtime's choice runs on both (OpenCL's side planned with local 0).
            let side0 = if api == Api::OpenCl {
                side(0)
            } else {
                side(local)
            };
            let p = exec::prepare(&mut b, &sources, auto, &inputs, &side0).unwrap();
            assert!(
                exec::verify(&mut b, &p, &inputs).unwrap().ok,
                "{api} 1d-auto"
            );
        }
    }

    #[test]
    fn check_wants_every_element() {
        assert!(check(&[VALUE; 5], 5).ok);
        let mut got = [VALUE; 5];
        got[4] = 0.0;
        assert!(!check(&got, 5).ok);
        assert!(!check(&[VALUE; 4], 5).ok);
    }
}
