//! Constant memory as a fairness factor (Fang, Varbanescu & Sips 2011, Figs. 3 and 8): the
//! Sobel family (3x3 in X on a grey image, its filter in constant memory, in global memory or
//! as literals) and the broadcast micro-kernel (constant vs global memory, one address per
//! warp vs 32). The kernels are `kernels_*/constant.*`.
//!
//! Sizes. Sobel: `HxW`, an image of H rows of W pixels, launched in 2-D (x over the columns, y
//! over the rows; `GroupRule::Cover2D`). Broadcast: `N` is the table length, a power of two up
//! to [`TABLE_MAX`] (the CUDA symbol's size).
//!
//! Metrics. Sobel: GB/s counting one read and one write of the image (8 bytes per pixel), as
//! the copy kernel counts a copy; the window's re-reads of neighbours and the filter are served
//! by caches and are not counted. Broadcast: G reads per second, every work-item reading every
//! table entry once (`global x N` reads of 4 bytes; the "bytes" recorded are those 4-byte
//! reads, requested, not moved from DRAM).
//!
//! Exact verification: the inputs are quantised so that every result is exact in float32
//! whatever order or contraction a compiler picks: image pixels are multiples of 2^-8 in
//! [-1, 1] (a Sobel sum is at most 8 in magnitude: 12 significant bits), table entries
//! multiples of 2^-10 in [-1, 1] (a sum of 8192 of them needs 24 bits). The tolerance is 0.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::backend::fake::FakeLaunch;
use crate::backend::{self, Arg, BufferId};
use crate::families::error::WorkloadError;
use crate::families::family::{bad_size, matrices, Family, FamilySpec, InputChoice, QuickSize};
use crate::families::footprint::{plain, Footprint};
use crate::families::plan::{Build, Built, ExecError, Inputs, Ran};
use crate::families::reference::{self, Verification};
use crate::families::variant::{points, v, GroupRule, Variant};
use crate::rows::{FamilyId, Metric, Size};

/// Sobel in X, row-major: `[-1 0 1; -2 0 2; -1 0 1]`.
pub const FILTER_X: [f32; 9] = [-1.0, 0.0, 1.0, -2.0, 0.0, 2.0, -1.0, 0.0, 1.0];
/// The constant-memory names: OpenCL parameter and CUDA module symbol alike.
pub const FILTER_SYMBOL: &str = "FILTER";
pub const TABLE_SYMBOL: &str = "TABLE";
/// Entries of the CUDA `TABLE` symbol (32 KiB), the longest table a study may ask for.
pub const TABLE_MAX: u64 = 8192;
/// Pixels each Sobel work-item computes down its column: `SOBEL_ROWS` in the kernels (a test
/// holds the two to one value), so a launch covers `local_y * groups_y * SOBEL_ROWS` rows.
pub const SOBEL_ROWS: u64 = 8;
/// Columns each `_x4` Sobel work-item computes: `SOBEL_COLS` in the kernels (a test holds the
/// two to one value), so a launch covers `local * groups * SOBEL_COLS` columns.
pub const SOBEL_COLS: u64 = 4;
/// Images with more pixels are verified on a sample (see [`sobel_sample`]).
const FULL_CHECK_PIXELS: u64 = 1 << 24;
const SAMPLED_PIXELS: usize = 1 << 22;

const fn sobel(name: &'static str, kernel: &'static str, about: &'static str) -> Variant {
    v(FamilyId::Sobel, name, kernel, GroupRule::Cover2D, about)
}

const fn broadcast(name: &'static str, kernel: &'static str, about: &'static str) -> Variant {
    let rule = GroupRule::PerComputeUnit(16);
    points(v(FamilyId::Broadcast, name, kernel, rule, about), &[])
}

/// The variants of both families, in report order: Sobel's, then broadcast's.
pub const VARIANTS: [Variant; 10] = [
    sobel(
        "constant",
        "sobel_constant",
        "Sobel X 3x3, the filter in constant memory (OpenCL __constant argument, CUDA \
         __constant__ symbol)",
    ),
    sobel(
        "global",
        "sobel_global",
        "Sobel X 3x3, the filter in global memory (a buffer argument)",
    ),
    sobel(
        "literal",
        "sobel_literal",
        "Sobel X 3x3, the filter as literals (six pixel reads, no filter reads)",
    ),
    sobel(
        "constant-x4",
        "sobel_constant_x4",
        "Sobel X 3x3, filter in constant memory, 4 columns per work-item (float4 rows)",
    ),
    sobel(
        "global-x4",
        "sobel_global_x4",
        "Sobel X 3x3, filter in global memory, 4 columns per work-item (float4 rows)",
    ),
    sobel(
        "literal-x4",
        "sobel_literal_x4",
        "Sobel X 3x3, filter as literals, 4 columns per work-item (float4 rows)",
    ),
    broadcast(
        "constant-uniform",
        "broadcast_constant_uniform",
        "constant memory, one address per warp at each step (the broadcast case)",
    ),
    broadcast(
        "constant-divergent",
        "broadcast_constant_divergent",
        "constant memory, 32 addresses per warp at each step (serialised)",
    ),
    broadcast(
        "global-uniform",
        "broadcast_global_uniform",
        "global memory, one address per warp at each step",
    ),
    broadcast(
        "global-divergent",
        "broadcast_global_divergent",
        "global memory, 32 neighbouring addresses per warp at each step (coalesced)",
    ),
];

/// Pixels of the image a size names (`HxW`: `rows` H, `cols` W); 0 for a vector size.
pub fn pixels(img: Size) -> u64 {
    img.cols.saturating_mul(img.rows)
}

/// Columns of the image one work-item of `kernel` computes: [`SOBEL_COLS`] for the `-x4`
/// Sobel variants, 1 for every other kernel (an emulated launch knows only the name).
fn cols_per_item(kernel: &str) -> u64 {
    if kernel.starts_with("sobel_") && kernel.ends_with("_x4") {
        SOBEL_COLS
    } else {
        1
    }
}

/// A size a constant-memory kernel cannot run, naming the limit.
#[derive(Debug, thiserror::Error)]
pub enum SizeError {
    #[error(
        "image {size}: {variant} reads rows as float4, so the width must be a multiple of \
         {cols} (16-byte aligned rows)"
    )]
    Unaligned {
        size: Size,
        variant: &'static str,
        cols: u64,
    },
    #[error("image {0}: give HxW, rows by columns, both at least 1 (e.g. 8192x8192)")]
    EmptyImage(Size),
    #[error(
        "image {size} has {pixels} pixels; kernels index with 32-bit integers (limit {})",
        u32::MAX - 1
    )]
    TooManyPixels { size: Size, pixels: u64 },
    #[error(
        "table length {0}: a power of two from 1 to {max} (the CUDA symbol TABLE holds {max} \
         floats)",
        max = TABLE_MAX
    )]
    TableLength(Size),
}

pub fn check_image(variant: &Variant, size: Size) -> Result<(), SizeError> {
    let cols = cols_per_item(variant.kernel);
    if !size.cols.is_multiple_of(cols) {
        return Err(SizeError::Unaligned {
            size,
            variant: variant.name,
            cols,
        });
    }
    if size.cols == 0 || size.rows == 0 {
        return Err(SizeError::EmptyImage(size));
    }
    let pixels = pixels(size);
    if pixels >= u64::from(u32::MAX) {
        return Err(SizeError::TooManyPixels { size, pixels });
    }
    Ok(())
}

pub struct Sobel;

pub struct Broadcast;

/// `sobel_<placement>(data, out, [filter,] w, h)`: every pixel the launch covers, the filter
/// read where the placement puts it (constant memory, global memory, or the kernel's text).
fn emulate_sobel_launch(l: &mut FakeLaunch<'_>) -> backend::Result<()> {
    let kernel = l.kernel;
    let placement = kernel.trim_start_matches("sobel_").trim_end_matches("_x4");
    let (filter, w_at) = match placement {
        "constant" => (l.constant(2, FILTER_SYMBOL)?, 3),
        "global" => (l.read(2)?, 3),
        _ => (&FILTER_X[..], 2),
    };
    let img = Size::matrix(l.count(w_at + 1)? as u64, l.count(w_at)? as u64);
    let [x, y] = l.shape.global_dims();
    let (cover_x, cover_y) = (x * cols_per_item(kernel), y * SOBEL_ROWS);
    let data = l.read(0)?;
    // The pixels the launch covers; the rest untouched (`None`).
    let out = (0..pixels(img) as usize)
        .map(|p| {
            let (x, y) = ((p as u64) % img.cols, (p as u64) / img.cols);
            (x < cover_x && y < cover_y).then(|| sobel_at(data, filter, img, p) as f32)
        })
        .collect();
    l.write_some(1, out)
}

/// `broadcast_<placement>(table, out, n)`: every work-item stores the table's sum.
fn emulate_broadcast(l: &mut FakeLaunch<'_>) -> backend::Result<()> {
    let table = if l.kernel.starts_with("broadcast_constant") {
        l.constant(0, TABLE_SYMBOL)?
    } else {
        l.read(0)?
    };
    let n = l.count(2)?.min(table.len());
    let sum = table[..n].iter().map(|x| f64::from(*x)).sum::<f64>() as f32;
    let items = l.shape.global() as usize;
    l.write(1, vec![sum; items])
}

/// The filter or table `b` as the variant places it: the `constant*` variants take it in
/// constant memory, an `Arg::Constant` and a bound symbol of the same name.
fn place(cx: &mut Build<'_>, symbol: &str, b: BufferId) -> Result<Arg, ExecError> {
    if !cx.variant.name.starts_with("constant") {
        return Ok(Arg::Buffer(b));
    }
    if let Some(program) = cx.program {
        cx.backend.bind_constant(program, symbol, b)?;
    }
    Ok(Arg::Constant(b))
}

impl Family for Sobel {
    fn spec(&self) -> &FamilySpec {
        const SPEC: FamilySpec = FamilySpec {
            default_size: "8192x8192",
            charts: &["constant"],
            quick_size: Some(QuickSize::same("1024x1024")),
            variants: VARIANTS.split_at(6).0,
            // Rows x columns: one pixel, odd sizes that no work-group divides, a wide image.
            test_sizes: &matrices([(1, 1), (37, 101), (20, 300)]),
            emulations: &[("sobel_*", emulate_sobel_launch)],
            ..FamilySpec::new(FamilyId::Sobel, "constant", Metric::Bandwidth)
        };
        &SPEC
    }

    /// One read and one write of the image (see the module docs); nine multiplies and eight
    /// adds per interior pixel (the filter in memory).
    fn work(&self, _variant: &str, size: Size, _global: u64) -> (u64, u64) {
        let interior = (size.cols.saturating_sub(2)).saturating_mul(size.rows.saturating_sub(2));
        (pixels(size).saturating_mul(8), interior.saturating_mul(17))
    }

    fn elements(&self, size: Size) -> u64 {
        pixels(size)
    }

    fn footprint(&self, size: Size) -> Footprint {
        let p = pixels(size);
        plain(p, p, p, 0)
    }

    fn check_size(&self, variant: &Variant, size: Size) -> Result<(), WorkloadError> {
        check_image(variant, size).map_err(|r| bad_size(variant, r))
    }

    /// x over the image's columns (`cols_per_item` each).
    fn groups(&self, variant: &Variant, size: Size, local: u32) -> u64 {
        let cols = size.cols.max(1).div_ceil(cols_per_item(variant.kernel));
        cols.div_ceil(u64::from(local.max(1)))
    }

    /// y over its rows, [`SOBEL_ROWS`] per work-item.
    fn groups_y(&self, _variant: &Variant, size: Size, local_y: u32) -> u64 {
        let rows = size.rows.max(1).div_ceil(SOBEL_ROWS);
        rows.div_ceil(u64::from(local_y.max(1)))
    }

    fn inputs(&self, _: &'static Variant, size: Size, seed: u64, _: InputChoice<'_>) -> Inputs {
        problem(size, seed)
    }

    /// `sobel_*(image, out, [filter,] w, h)`, one float out per pixel.
    fn build(&self, cx: &mut Build<'_>) -> Result<Built, ExecError> {
        let (k, inputs) = (cx.kernel()?, cx.inputs);
        let (data, filter) = (cx.upload(&inputs.a)?, cx.upload(&inputs.b)?);
        let len = pixels(inputs.size) as usize;
        let out = cx.output(len)?;
        let mut args = vec![Arg::Buffer(data), Arg::Buffer(out)];
        if !cx.variant.name.starts_with("literal") {
            args.push(place(cx, FILTER_SYMBOL, filter)?);
        }
        args.extend([inputs.size.cols, inputs.size.rows].map(|n| Arg::U32(n as u32)));
        Ok(Built::into(vec![cx.launch(k, args)], out, len))
    }

    /// Constant, global and literal filters are one algorithm.
    fn algorithm(&self, _variant: &Variant) -> &'static str {
        "sobel-x-3x3"
    }
}

impl Family for Broadcast {
    fn spec(&self) -> &FamilySpec {
        const SPEC: FamilySpec = FamilySpec {
            default_size: "1024",
            variants: VARIANTS.split_at(6).1,
            // Table lengths: shorter than a warp, one warp, many.
            test_sizes: &[Size::vector(8), Size::vector(32), Size::vector(1024)],
            emulations: &[("broadcast_*", emulate_broadcast)],
            ..FamilySpec::new(FamilyId::Broadcast, "constant", Metric::Reads)
        };
        &SPEC
    }

    /// Every work-item reads every table entry once (4-byte reads, see the module docs).
    fn work(&self, _variant: &str, size: Size, global: u64) -> (u64, u64) {
        let reads = global.saturating_mul(size.rows);
        (reads.saturating_mul(4), reads)
    }

    fn footprint(&self, size: Size) -> Footprint {
        plain(size.rows, size.rows, size.rows, 0)
    }

    fn check_size(&self, variant: &Variant, size: Size) -> Result<(), WorkloadError> {
        let n = size.rows;
        if size.cols != 0 || !n.is_power_of_two() || n > TABLE_MAX {
            return Err(bad_size(variant, SizeError::TableLength(size)));
        }
        Ok(())
    }

    fn inputs(&self, _: &'static Variant, size: Size, seed: u64, _: InputChoice<'_>) -> Inputs {
        let data = quantised(size.rows as usize, seed, 10);
        let sum = data.iter().map(|x| f64::from(*x)).sum();
        Inputs::new(size, data, Vec::new()).with_reference(vec![sum], Vec::new())
    }

    /// `broadcast_*(table, out, n)`, one float out per work-item.
    fn build(&self, cx: &mut Build<'_>) -> Result<Built, ExecError> {
        let (k, inputs) = (cx.kernel()?, cx.inputs);
        let table = cx.upload(&inputs.a)?;
        let len = cx.side.shape.global() as usize;
        let out = cx.output(len)?;
        let args = vec![
            place(cx, TABLE_SYMBOL, table)?,
            Arg::Buffer(out),
            Arg::U32(inputs.size.rows as u32),
        ];
        Ok(Built::into(vec![cx.launch(k, args)], out, len))
    }

    /// Every work-item's sum is the table's sum.
    fn check(&self, _: &Ran, inputs: &Inputs, got: &[f32]) -> Verification {
        let sum = inputs.reference.first().copied().unwrap_or(f64::NAN);
        reference::compare_exact(got, got.len(), |_| sum)
    }
}

/// Floats in [-1, 1] that are multiples of 2^-bits (see the module docs).
fn quantised(len: usize, seed: u64, bits: i32) -> Vec<f32> {
    let scale = 2f32.powi(bits);
    reference::random_vector(len, seed)
        .into_iter()
        .map(|x| (x * scale).round() / scale)
        .collect()
}

/// Sobel's inputs: the image, the filter, the reference and its output positions (empty: all).
pub fn problem(size: Size, seed: u64) -> Inputs {
    let data = quantised(pixels(size) as usize, seed, 8);
    let sample = sobel_sample(size, seed);
    let positions: Box<dyn Iterator<Item = usize>> = if sample.is_empty() {
        Box::new(0..pixels(size) as usize)
    } else {
        Box::new(sample.iter().copied())
    };
    let reference = positions
        .map(|p| sobel_at(&data, &FILTER_X, size, p))
        .collect();
    Inputs::new(size, data, FILTER_X.to_vec())
        .with_exact(reference)
        .with_sample(sample)
}

/// Empty for an image checked whole; else its first and last two rows and a seeded sample.
fn sobel_sample(img: Size, seed: u64) -> Vec<usize> {
    if pixels(img) <= FULL_CHECK_PIXELS {
        return Vec::new();
    }
    let (w, n) = (img.cols as usize, pixels(img) as usize);
    let mut p: Vec<usize> = (0..2 * w).chain(n - 2 * w..n).collect();
    let mut rng = SmallRng::seed_from_u64(seed ^ 0x50be1);
    p.extend((0..SAMPLED_PIXELS).map(|_| rng.gen_range(0..n)));
    p
}

/// The Sobel output at pixel `p`: 0 on the border, the 3x3 filter elsewhere (in f64).
pub fn sobel_at(data: &[f32], filter: &[f32], img: Size, p: usize) -> f64 {
    let (w, h) = (img.cols as usize, img.rows as usize);
    let (x, y) = (p % w, p / w);
    if x == 0 || y == 0 || x + 1 >= w || y + 1 >= h {
        return 0.0;
    }
    let mut v = 0.0;
    for dy in 0..3 {
        for dx in 0..3 {
            let q = (y + dy - 1) * w + (x + dx - 1);
            v += f64::from(filter[dy * 3 + dx]) * f64::from(data[q]);
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::BufferOps;

    #[test]
    fn the_kernels_compute_as_many_rows_per_work_item_as_the_launch_assumes() {
        let define = format!("#define SOBEL_ROWS {SOBEL_ROWS}\n");
        for text in [
            include_str!("../../../kernels_cl/constant.cl"),
            include_str!("../../../kernels_cu/constant.cu"),
        ] {
            assert!(text.contains(&define), "{define}");
            assert!(text.contains(&format!("#define SOBEL_COLS {SOBEL_COLS}\n")));
        }
        for v in &VARIANTS {
            let want = if v.name.ends_with("-x4") {
                SOBEL_COLS
            } else {
                1
            };
            assert_eq!(cols_per_item(v.kernel), want, "{}", v.name);
        }
    }

    #[test]
    fn sobel_by_hand() {
        // 3 x 3 image with a ramp in x: the centre sees (3-1) + 2 (6-4) + (9-7) = 8.
        let img = Size::matrix(3, 3);
        let data = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0];
        assert_eq!(sobel_at(&data, &FILTER_X, img, 4), 8.0);
        assert_eq!(sobel_at(&data, &FILTER_X, img, 0), 0.0);
        assert_eq!(sobel_at(&data, &FILTER_X, img, 5), 0.0);
    }

    #[test]
    fn sizes_and_work() {
        let (sobel, x4, broadcast) = (&VARIANTS[0], &VARIANTS[5], &VARIANTS[6]);
        assert!(check_image(sobel, Size::matrix(16384, 16384)).is_ok());
        let e = check_image(sobel, Size::vector(64))
            .unwrap_err()
            .to_string();
        assert!(e.contains("HxW"), "{e}");
        let e = check_image(sobel, Size::matrix(70000, 70000))
            .unwrap_err()
            .to_string();
        assert!(e.contains("32-bit"), "{e}");
        // The float4 kernels need 16-byte aligned rows; the one-column kernels take any width.
        assert!(check_image(x4, Size::matrix(16384, 16384)).is_ok());
        let e = check_image(x4, Size::matrix(10, 42))
            .unwrap_err()
            .to_string();
        assert!(e.contains("multiple of 4"), "{e}");
        assert!(check_image(sobel, Size::matrix(10, 42)).is_ok());
        assert!(Broadcast.check_size(broadcast, Size::vector(1024)).is_ok());
        assert!(Broadcast.check_size(broadcast, Size::vector(1000)).is_err());
        assert!(Broadcast
            .check_size(broadcast, Size::vector(16384))
            .unwrap_err()
            .to_string()
            .contains("8192"));
        assert_eq!(Sobel.work("", Size::matrix(4, 4), 0), (4 * 4 * 8, 4 * 17));
        assert_eq!(Broadcast.work("", Size::vector(1024), 10).0, 10 * 1024 * 4);
    }

    /// The quantised inputs make every order of summation exact: the tolerance 0 is honest.
    #[test]
    fn quantised_sums_are_exact_in_any_order() {
        let t = quantised(TABLE_MAX as usize, 3, 10);
        let forward = t.iter().fold(0.0f32, |a, x| a + x);
        let backward = t.iter().rev().fold(0.0f32, |a, x| a + x);
        let exact: f64 = t.iter().map(|x| f64::from(*x)).sum();
        assert_eq!(f64::from(forward), exact);
        assert_eq!(f64::from(backward), exact);
    }

    #[test]
    fn large_images_are_sampled_with_their_borders() {
        let img = Size::matrix(4096, 8192);
        let s = sobel_sample(img, 1);
        assert_eq!(s.len(), 4 * 8192 + SAMPLED_PIXELS);
        assert!(s.contains(&(pixels(img) as usize - 1)));
        assert!(sobel_sample(Size::matrix(64, 64), 1).is_empty());
    }

    #[test]
    fn a_wrong_pixel_fails_exactly() {
        let p = problem(Size::matrix(16, 16), 1);
        let mut got: Vec<f32> = p.reference.iter().map(|v| *v as f32).collect();
        assert!(p.compare(&got).ok);
        got[17] += 1.0 / 256.0;
        assert!(!p.compare(&got).ok);
        let choice = crate::families::tests::no_matrix();
        let b = Broadcast.inputs(&VARIANTS[6], Size::vector(64), 1, choice);
        let mut got = vec![b.reference[0] as f32; 100];
        let ran = Ran {
            variant: VARIANTS[6].name,
            shape: backend::LaunchShape::linear(1, 100),
            flags: Vec::new(),
        };
        assert!(Broadcast.check(&ran, &b, &got).ok);
        got[99] = f32::NAN;
        assert!(!Broadcast.check(&ran, &b, &got).ok);
    }

    /// The fake backend emulates every kernel through the seam: on CUDA the constant-memory
    /// kernels read the symbol `bind_constant` filled, on OpenCL their argument; a wrong
    /// result and a launch that does not cover the image both fail verification.
    #[test]
    fn fake_emulation_verifies_through_the_constant_seam() {
        use crate::backend::fake::{FakeBackend, FakeScript};
        use crate::backend::LaunchShape;
        use crate::families::exec::{self, Inputs};
        use crate::kernels::KernelSources;
        use crate::rows::Api;
        let sources = KernelSources::embedded();
        let run = |api, v: &'static Variant, size, shape, script: FakeScript| {
            let mut b = FakeBackend::new(api, script, crate::families::emulator());
            let inputs = Inputs::generate(v.family, size, 2);
            let side = crate::families::tests::side(shape);
            let p = exec::prepare(&mut b, &sources, v, &inputs, &side).unwrap();
            exec::verify(&mut b, &p, &inputs).unwrap()
        };
        // 20 rows of 40 pixels; each work-item computes SOBEL_ROWS (8) rows: 3 x 1 work-items
        // in y cover 24 rows, 2 x 1 only 16. The x4 kernels compute 4 columns per work-item:
        // 2 x 8 work-items in x cover 64 columns, 1 x 8 only 32.
        let image = Size::matrix(20, 40);
        let covering = LaunchShape::planar((5, 3), (8, 1));
        let short = LaunchShape::planar((5, 2), (8, 1));
        let covering4 = LaunchShape::planar((2, 3), (8, 1));
        let narrow4 = LaunchShape::planar((1, 3), (8, 1));
        for api in [Api::OpenCl, Api::Cuda] {
            for v in &VARIANTS {
                let (size, shape) = match v.family {
                    FamilyId::Sobel if cols_per_item(v.kernel) > 1 => (image, covering4),
                    FamilyId::Sobel => (image, covering),
                    _ => (Size::vector(64), LaunchShape::linear(2, 32)),
                };
                let ok = run(api, v, size, shape, FakeScript::default());
                assert!(ok.ok && ok.checked > 0, "{api} {}: {ok:?}", v.name);
                let wrong = FakeScript {
                    wrong_results: vec![v.kernel.to_string()],
                    ..FakeScript::default()
                };
                assert!(!run(api, v, size, shape, wrong).ok, "{api} {}", v.name);
            }
            let sobel = &VARIANTS[0];
            assert!(!run(api, sobel, image, short, FakeScript::default()).ok);
            assert!(!run(api, &VARIANTS[5], image, narrow4, FakeScript::default()).ok);
        }
    }

    #[test]
    fn a_cuda_constant_kernel_without_a_bound_symbol_fails() {
        use crate::backend::fake::{FakeBackend, FakeScript};
        use crate::backend::{Backend, CompileRequest, LaunchShape};
        use crate::rows::Api;
        let mut b = FakeBackend::new(
            Api::Cuda,
            FakeScript::default(),
            crate::families::emulator(),
        );
        let request = CompileRequest {
            source: "__global__ void broadcast_constant_uniform(".into(),
            defines: vec![],
            flags: vec![],
            jit: Default::default(),
        };
        let p = b.compile(&request).unwrap();
        let k = b.kernel(p, "broadcast_constant_uniform").unwrap();
        let (table, out) = (b.alloc(32).unwrap(), b.alloc(32).unwrap());
        let args = [Arg::Constant(table), Arg::Buffer(out), Arg::U32(32)];
        let shape = LaunchShape::linear(1, 32);
        let e = b.launch(k, shape, &args).unwrap_err().to_string();
        assert!(e.contains("TABLE was never filled"), "{e}");
        b.bind_constant(p, TABLE_SYMBOL, table).unwrap();
        assert!(b.launch(k, shape, &args).is_ok());
    }
}
