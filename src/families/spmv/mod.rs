//! Sparse matrix-vector product, CSR, as in SHOC (`kernels_*/spmv.*`): a scalar kernel (one
//! work-item per row), a vector kernel (one warp per row) and a CSR-stream kernel (a work-group's
//! rows streamed in coalesced chunks through local memory, after CSR-adaptive), each with the
//! gathered vector `x` read three ways ([`ReadPath`](crate::families::read_path::ReadPath)).
//!
//! Sizes: `ROWSxNNZ`, a square matrix of ROWS rows and exactly NNZ stored entries, for
//! instance `2^24x2^28`. The study key `matrix` picks how they are placed ([`MatrixSource`]); a
//! Matrix Market file brings its own shape, and the study's size is then set from the file.
//!
//! Generated matrices: every number comes from [`mix`](crate::families::reference::mix)
//! (SplitMix64) of the seed and a position, never from a stateful generator, so
//! `baselines/baselines.py` rebuilds the same matrices bit for bit for the cuSPARSE baseline
//! (the fingerprint test below and the script's self-test hold both to one value):
//!
//! * `uniform`: NNZ / ROWS entries per row (the first NNZ % ROWS rows one more), columns
//!   uniform over the row;
//! * `banded`: the same row lengths, columns uniform in a band of ±8·(NNZ/ROWS) around the
//!   diagonal (clipped at the edges);
//! * `powerlaw`: row lengths proportional to Pareto(α = 2) weights, apportioned by cumulative
//!   sums so that they add up to NNZ exactly; columns uniform.
//!
//! Columns of a row are sorted; repeats are kept (a CSR row may name a column twice: both
//! products are summed, in cuSPARSE as here).
//!
//! Metric: GFLOP/s of 2·NNZ (one multiply and one add per entry), as SHOC and cuSPARSE
//! comparisons report it. The bytes column counts what the kernel requests once: values and
//! column indices (8 bytes per entry), row pointers (4·(ROWS+1)), one 4-byte read of `x` per
//! entry (the gather, whichever path serves it) and the 4·ROWS bytes of `y` written.

mod tune;

use rayon::prelude::*;

use crate::families::matrix::*;
use crate::families::read_path::{gather_build, path_arg, without_read_path};

use crate::backend::fake::FakeLaunch;
use crate::backend::{self, Arg};
use crate::families::emulation::words;
use crate::families::error::WorkloadError;
use crate::families::family::{
    bad_size, matrices, Family, FamilySpec, InputChoice, QuickSize, Tuning,
};
use crate::families::footprint::{add, mul, plain, Footprint};
use crate::families::plan::{Build, Built, ExecError, Inputs};
use crate::families::reference;
use crate::families::tune_space::{SpaceDef, SpaceKind};
use crate::families::variant::{points, pow2, v, GroupRule, Variant};
use crate::rows::{FamilyId, Metric, Size};

/// One warp per row in the vector kernel: the kernels' `WARP_SIZE`.
const WARP: u32 = 32;

/// The scalar kernels' row loop is unroll point A (the texture-explain study's experiment).
const fn scalar(name: &'static str, kernel: &'static str, about: &'static str) -> Variant {
    let rule = GroupRule::Cover { per_item: 1 };
    v(FamilyId::Spmv, name, kernel, rule, about)
}

const fn vector(name: &'static str, kernel: &'static str, about: &'static str) -> Variant {
    let rule = GroupRule::PerComputeUnit(16);
    let variant = points(v(FamilyId::Spmv, name, kernel, rule, about), &[]);
    pow2(variant, WARP, 1024)
}

pub const VARIANTS: [Variant; 9] = [
    scalar(
        "scalar",
        "spmv_csr_scalar",
        "SHOC CSR scalar: one work-item per row, x through plain global loads",
    ),
    scalar(
        "scalar-ro",
        "spmv_csr_scalar_ro",
        "CSR scalar, x through the read-only path (const restrict; __ldg in CUDA)",
    ),
    scalar(
        "scalar-tex",
        "spmv_csr_scalar_tex",
        "CSR scalar, x through the texture path (image1d_buffer / texture object)",
    ),
    vector(
        "vector",
        "spmv_csr_vector",
        "SHOC CSR vector: one warp per row, local-memory reduction, x through global loads",
    ),
    vector(
        "vector-ro",
        "spmv_csr_vector_ro",
        "CSR vector, x through the read-only path (const restrict; __ldg in CUDA)",
    ),
    vector(
        "vector-tex",
        "spmv_csr_vector_tex",
        "CSR vector, x through the texture path (image1d_buffer / texture object)",
    ),
    vector(
        "stream",
        "spmv_csr_stream",
        "CSR-stream: a group's rows streamed in coalesced chunks through local memory, \
         each row summed by a power of two of work-items that follows the mean row length",
    ),
    vector(
        "stream-ro",
        "spmv_csr_stream_ro",
        "CSR-stream, values, columns and x through the read-only path (const restrict; __ldg \
         in CUDA)",
    ),
    vector(
        "stream-tex",
        "spmv_csr_stream_tex",
        "CSR-stream, x through the texture path (image1d_buffer / texture object)",
    ),
];

/// A size the generators cannot make, naming the rule.
#[derive(Debug, thiserror::Error)]
pub enum SizeError {
    #[error("matrix {0}: give ROWSxNNZ (rows, stored entries), both at least 1")]
    Empty(Size),
    #[error(
        "matrix {0}: row pointers and column indices are 32-bit (limit {limit})",
        limit = u32::MAX - 1
    )]
    TooLarge(Size),
}

/// y = A·x in f64, and per row the sum of |a·x| for the tolerance.
pub fn reference(a: &Csr, x: &[f32]) -> (Vec<f64>, Vec<f64>) {
    // Rows in parallel, each summed in order: the same numbers on any thread count.
    (0..a.rows)
        .into_par_iter()
        .map(|r| {
            let (s, e) = (a.row_ptr[r] as usize, a.row_ptr[r + 1] as usize);
            (s..e).fold((0.0, 0.0), |(y, m), k| {
                let p = f64::from(a.val[k]) * f64::from(x[a.col[k] as usize]);
                (y + p, m + p.abs())
            })
        })
        .unzip()
}

/// What a kernel writes, for the fake backend: y rounded to float32.
fn emulate(val: &[f32], col: &[f32], ptr: &[f32], x: &[f32], rows: usize) -> Vec<f32> {
    let (col, ptr) = (words(col), words(ptr));
    (0..rows.min(ptr.len().saturating_sub(1)))
        .map(|r| {
            let (s, e) = (ptr[r] as usize, ptr[r + 1] as usize);
            (s..e.min(val.len()))
                .map(|k| f64::from(val[k]) * f64::from(x[col[k] as usize]))
                .sum::<f64>() as f32
        })
        .collect()
}

pub struct Spmv;

/// `spmv_*(val, col, ptr, x, rows, y)`: y = A x.
fn emulate_product(l: &mut FakeLaunch<'_>) -> backend::Result<()> {
    let y = emulate(l.read(0)?, l.read(1)?, l.read(2)?, l.read(3)?, l.count(4)?);
    l.write(5, y)
}

impl Family for Spmv {
    fn spec(&self) -> &FamilySpec {
        const SPEC: FamilySpec = FamilySpec {
            default_size: "2^24x2^28",
            takes_matrix: true,
            charts: &["texture"],
            quick_size: Some(QuickSize::same("2^14x2^18")),
            variants: &VARIANTS,
            tuning: Some(&Spmv),
            // ROWSxNNZ: one entry, rows shorter and longer than a warp, empty rows (fewer entries
            // than rows).
            test_sizes: &matrices([(1, 1), (37, 1000), (300, 100)]),
            emulations: &[("spmv_*", emulate_product)],
            ..FamilySpec::new(FamilyId::Spmv, "spmv", Metric::Flops)
        };
        &SPEC
    }

    fn problem_text(&self, size: Size, seed: u64, choice: InputChoice<'_>) -> String {
        let (id, matrix) = (self.spec().id.name(), choice.matrix.name());
        format!("{id} {matrix} {size} f32 seed {seed}")
    }

    /// Bytes requested and flops of one product (see the module docs).
    fn work(&self, _variant: &str, size: Size, _global: u64) -> (u64, u64) {
        let (rows, nnz) = (size.rows, size.cols);
        let bytes = nnz
            .saturating_mul(12)
            .saturating_add(rows.saturating_mul(8))
            .saturating_add(4);
        (bytes, nnz.saturating_mul(2))
    }

    /// ROWSxNNZ: the stored entries.
    fn elements(&self, size: Size) -> u64 {
        size.cols
    }

    fn footprint(&self, size: Size) -> Footprint {
        let (rows, nnz) = (size.rows, size.cols);
        // Values and columns (8 per entry), the row pointers, x and y; the generator's row
        // lengths (8 bytes a row).
        plain(add(mul(nnz, 2), mul(rows, 3)), rows, rows, mul(rows, 8)).with_largest(nnz)
    }

    fn check_size(&self, variant: &Variant, size: Size) -> Result<(), WorkloadError> {
        if size.rows == 0 || size.cols == 0 {
            return Err(bad_size(variant, SizeError::Empty(size)));
        }
        if size.cols >= u64::from(u32::MAX) || size.rows >= u64::from(u32::MAX) {
            return Err(bad_size(variant, SizeError::TooLarge(size)));
        }
        Ok(())
    }

    fn inputs(
        &self,
        _: &'static Variant,
        size: Size,
        seed: u64,
        choice: InputChoice<'_>,
    ) -> Inputs {
        let csr = choice.matrix.build(size, seed);
        let x = x_vector(csr.cols, seed);
        let (want, abs) = reference(&csr, &x);
        let longest = (0..csr.rows)
            .map(|r| csr.row_ptr[r + 1] - csr.row_ptr[r])
            .max()
            .unwrap_or(0);
        let f = reference::tolerance_factor(u64::from(longest));
        let tolerances = abs.iter().map(|a| f * a).collect();
        Inputs::new(size, csr.val.clone(), x)
            .with_ints(vec![csr.col.clone(), csr.row_ptr.clone()])
            .with_reference(want, tolerances)
    }

    fn build(&self, cx: &mut Build<'_>) -> Result<Built, ExecError> {
        gather_build(cx, |cx, path, val, ints| {
            let inputs = cx.inputs;
            let x = cx.upload(&inputs.b)?;
            let rows = inputs.reference.len() as u32;
            // Values, columns, row pointers, x, rows (then y).
            let (col, ptr) = (Arg::Buffer(ints[0]), Arg::Buffer(ints[1]));
            let x = path_arg(path, x, 1);
            Ok(vec![Arg::Buffer(val), col, ptr, x, Arg::U32(rows)])
        })
    }

    /// The read paths of one kernel are one algorithm.
    fn algorithm(&self, variant: &Variant) -> &'static str {
        without_read_path(variant.name)
    }
}

impl Tuning for Spmv {
    fn spaces(&self) -> &'static [(SpaceKind, SpaceDef)] {
        tune::SPACES
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::BufferId;
    use crate::families::read_path::ReadPath;

    #[test]
    fn read_paths_follow_the_variant_name() {
        assert_eq!(ReadPath::of("scalar"), ReadPath::Global);
        assert_eq!(ReadPath::of("vector-ro"), ReadPath::Ro);
        assert_eq!(ReadPath::of("lj-tex"), ReadPath::Tex);
        assert_eq!(
            path_arg(ReadPath::Tex, BufferId(3), 4),
            Arg::Texture {
                buffer: BufferId(3),
                channels: 4
            }
        );
        assert_eq!(
            path_arg(ReadPath::Ro, BufferId(3), 4),
            Arg::Buffer(BufferId(3))
        );
    }

    #[test]
    fn generated_matrices_have_exactly_the_asked_entries() {
        for m in [
            MatrixSource::Uniform,
            MatrixSource::Banded,
            MatrixSource::PowerLaw,
        ] {
            let a = m.build(Size::matrix(1000, 7777), 3);
            assert_eq!(a.nnz(), 7777, "{}", m.name());
            assert_eq!(a.row_ptr.len(), 1001);
            assert_eq!(*a.row_ptr.last().unwrap(), 7777);
            assert!(a.col.iter().all(|&c| c < 1000));
            for r in 0..1000 {
                let row = &a.col[a.row_ptr[r] as usize..a.row_ptr[r + 1] as usize];
                assert!(row.windows(2).all(|w| w[0] <= w[1]), "row {r} sorted");
            }
        }
    }

    #[test]
    fn banded_columns_stay_in_the_band_and_powerlaw_rows_are_skewed() {
        let a = MatrixSource::Banded.build(Size::matrix(500, 2000), 1);
        for r in 0..500usize {
            for k in a.row_ptr[r]..a.row_ptr[r + 1] {
                let c = a.col[k as usize] as usize;
                assert!(c.abs_diff(r) <= 32, "row {r} col {c}");
            }
        }
        let p = MatrixSource::PowerLaw.build(Size::matrix(10_000, 80_000), 1);
        let longest = (0..10_000)
            .map(|r| p.row_ptr[r + 1] - p.row_ptr[r])
            .max()
            .unwrap();
        assert!(longest > 80, "a heavy tail: longest row {longest}");
    }

    /// The same number `baselines/spmv_matrices.py --self-test` prints for its copy of the
    /// generators: the cuSPARSE baseline runs on these very matrices.
    #[test]
    fn fingerprint_matches_the_baseline_script() {
        let a = MatrixSource::PowerLaw.build(Size::matrix(64, 300), 7);
        let x = x_vector(64, 7);
        let (y, _) = reference(&a, &x);
        let cols: u64 = a.col.iter().map(|&c| u64::from(c)).sum();
        let ptr: u64 = a.row_ptr.iter().map(|&c| u64::from(c)).sum();
        let ysum: f64 = y.iter().sum();
        assert_eq!((cols, ptr), (FINGERPRINT.0, FINGERPRINT.1));
        assert!((ysum - FINGERPRINT.2).abs() < 1e-9, "{ysum}");
    }

    /// Column-index sum, row-pointer sum and sum of y of the fingerprint matrix.
    const FINGERPRINT: (u64, u64, f64) = (9320, 11260, -4.532501436347);

    #[test]
    fn reference_by_hand() {
        // [[2, 0], [1, 3]] x [1, -1] = [2, -2]
        let a = Csr {
            rows: 2,
            cols: 2,
            row_ptr: vec![0, 1, 3],
            col: vec![0, 0, 1],
            val: vec![2.0, 1.0, 3.0],
        };
        let (y, abs) = reference(&a, &[1.0, -1.0]);
        assert_eq!(y, vec![2.0, -2.0]);
        assert_eq!(abs, vec![2.0, 4.0]);
        let bits = |v: &[u32]| v.iter().map(|&b| f32::from_bits(b)).collect::<Vec<_>>();
        let got = emulate(&a.val, &bits(&a.col), &bits(&a.row_ptr), &[1.0, -1.0], 2);
        assert_eq!(got, vec![2.0, -2.0]);
    }

    const GOOD: &str = "%%MatrixMarket matrix coordinate real general\n% a comment\n3 3 4\n\
                        1 1 1.5\n2 2 2\n3 1 -1\n3 3 4\n";

    #[test]
    fn a_matrix_market_file_becomes_csr() {
        let a = read_mtx(GOOD.as_bytes(), "good.mtx").unwrap();
        assert_eq!((a.rows, a.cols, a.nnz()), (3, 3, 4));
        assert_eq!(a.row_ptr, vec![0, 1, 2, 4]);
        assert_eq!(a.col, vec![0, 1, 0, 2]);
        assert_eq!(a.val, vec![1.5, 2.0, -1.0, 4.0]);
        assert_eq!(a.size(), Size::matrix(3, 4));
    }

    #[test]
    fn a_malformed_file_names_its_line() {
        let bad = GOOD.replace("2 2 2", "2 x 2");
        let e = read_mtx(bad.as_bytes(), "bad.mtx").unwrap_err().to_string();
        assert!(e.contains("bad.mtx: line 5"), "{e}");
        let bad = GOOD.replace("3 1 -1", "3 9 -1");
        let e = read_mtx(bad.as_bytes(), "bad.mtx").unwrap_err().to_string();
        assert!(
            e.contains("bad.mtx: line 6: entry (3, 9) lies outside"),
            "{e}"
        );
        // Cut before its size line: refused, never a reader that waits for more.
        for cut in [
            "%%MatrixMarket matrix coordinate real general\n% a commen",
            "",
        ] {
            let e = read_mtx(cut.as_bytes(), "cut.mtx").unwrap_err().to_string();
            assert!(e.contains("cut.mtx: no size line"), "{e}");
        }
        let e = MatrixSource::parse("file:/nonexistent/m.mtx")
            .unwrap_err()
            .to_string();
        assert!(e.contains("/nonexistent/m.mtx"), "{e}");
        let e = MatrixSource::parse("diagonal").unwrap_err().to_string();
        assert!(e.contains("uniform, banded, powerlaw"), "{e}");
    }
}
