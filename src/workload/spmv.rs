//! Sparse matrix-vector product, CSR, as in SHOC: a scalar kernel (one work-item per row) and
//! a vector kernel (one warp per row), and a CSR-stream kernel (a work-group's rows streamed
//! in coalesced chunks through local memory, after CSR-adaptive), each with the gathered vector
//! `x` read three ways ([`ReadPath`]). The kernels are `kernels_*/spmv.*`.
//!
//! # Size spelling
//!
//! `ROWSxNNZ`: a square matrix of ROWS rows and exactly NNZ stored entries, for instance
//! `2^24x2^28`. The study key `matrix` picks how they are placed ([`MatrixSource`]); a Matrix
//! Market file brings its own shape, and the study's size is then set from the file.
//!
//! # Generated matrices
//!
//! Every number comes from [`mix`] (SplitMix64) of the seed and a position, never from a
//! stateful generator, so `scripts/baselines.py` rebuilds the same matrices bit for bit for the
//! cuSPARSE baseline (the fingerprint test below and the script's self-test hold both to one
//! value):
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
//! # Metric
//!
//! GFLOP/s of 2·NNZ (one multiply and one add per entry), as SHOC and cuSPARSE comparisons
//! report it. The bytes column counts what the kernel requests once: values and column indices
//! (8 bytes per entry), row pointers (4·(ROWS+1)), one 4-byte read of `x` per entry (the gather,
//! whichever path serves it) and the 4·ROWS bytes of `y` written.

use std::collections::HashMap;
use std::io::{BufRead, Read};
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use super::reference;
use super::{points, pow2, v, FamilyKind, GroupRule, Size, Variant};
use crate::backend::{Arg, BufferId};

crate::names::named_enum! {
    /// How a kernel reads the gathered operand (SpMV's `x`, MD's positions).
    #[strum(serialize_all = "lowercase")]
    pub enum ReadPath {
        /// A plain `const` pointer: ordinary global loads.
        Global,
        /// `const restrict` pointers on both sides, and CUDA's `__ldg` on the gather: the
        /// read-only (non-coherent) data path, where each compiler chooses to take it.
        Ro,
        /// An OpenCL `image1d_buffer_t` read with `read_imagef` / a CUDA texture object read
        /// with `tex1Dfetch`: the texture path.
        Tex,
    }
}

impl ReadPath {
    /// The path a variant's name ends in (`scalar-tex`), `Global` when it names none.
    pub fn of(variant: &str) -> ReadPath {
        match variant.rsplit_once('-').map(|(_, p)| p) {
            Some("ro") => ReadPath::Ro,
            Some("tex") => ReadPath::Tex,
            _ => ReadPath::Global,
        }
    }

    /// The kernel argument that passes `buffer` along this path.
    pub fn arg(self, buffer: BufferId, channels: u32) -> Arg {
        match self {
            ReadPath::Tex => Arg::Texture { buffer, channels },
            _ => Arg::Buffer(buffer),
        }
    }
}

/// One warp per row in the vector kernel: the kernels' `WARP_SIZE`.
const WARP: u32 = 32;

/// The scalar kernels' row loop is unroll point A (the texture-explain study's experiment).
const fn scalar(name: &'static str, kernel: &'static str, about: &'static str) -> Variant {
    points(
        v(
            FamilyKind::Spmv,
            name,
            kernel,
            GroupRule::Cover { per_item: 1 },
            about,
        ),
        &["A"],
    )
}

const fn vector(name: &'static str, kernel: &'static str, about: &'static str) -> Variant {
    pow2(
        points(
            v(
                FamilyKind::Spmv,
                name,
                kernel,
                GroupRule::PerComputeUnit(16),
                about,
            ),
            &[],
        ),
        WARP,
        1024,
    )
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

/// A matrix in CSR form. `col` and `val` have `row_ptr[rows]` entries.
#[derive(Debug, Clone, PartialEq)]
pub struct Csr {
    pub rows: usize,
    pub cols: usize,
    pub row_ptr: Vec<u32>,
    pub col: Vec<u32>,
    pub val: Vec<f32>,
}

impl Csr {
    pub fn nnz(&self) -> usize {
        self.col.len()
    }

    /// The study size that names this matrix: rows x stored entries.
    pub fn size(&self) -> Size {
        Size::matrix(self.rows as u64, self.nnz() as u64)
    }
}

/// Where a study's matrix comes from: the study key `matrix`.
#[derive(Debug, Clone)]
pub enum MatrixSource {
    Uniform,
    Banded,
    PowerLaw,
    /// A Matrix Market file, read once when the study is loaded.
    File {
        path: String,
        csr: Arc<Csr>,
    },
}

impl PartialEq for MatrixSource {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

impl MatrixSource {
    /// `uniform`, `banded`, `powerlaw` or `file:PATH`; a file is read here, and a malformed one
    /// is refused with its line.
    pub fn parse(text: &str) -> Result<MatrixSource, String> {
        match text {
            "uniform" => Ok(MatrixSource::Uniform),
            "banded" => Ok(MatrixSource::Banded),
            "powerlaw" => Ok(MatrixSource::PowerLaw),
            _ => match text.strip_prefix("file:") {
                Some(path) => Ok(MatrixSource::File {
                    path: path.to_string(),
                    csr: load_cached(path)?,
                }),
                None => Err(format!(
                    "matrix '{text}' is not one of uniform, banded, powerlaw or file:PATH.mtx"
                )),
            },
        }
    }

    /// The spelling `parse` reads, for records and the fairness verdict.
    pub fn name(&self) -> String {
        match self {
            MatrixSource::Uniform => "uniform".into(),
            MatrixSource::Banded => "banded".into(),
            MatrixSource::PowerLaw => "powerlaw".into(),
            MatrixSource::File { path, .. } => format!("file:{path}"),
        }
    }

    /// The matrix of a size and seed (a file ignores both).
    pub fn build(&self, size: Size, seed: u64) -> Arc<Csr> {
        let (rows, nnz) = (size.rows as usize, size.cols as usize);
        match self {
            MatrixSource::File { csr, .. } => csr.clone(),
            MatrixSource::Uniform => Arc::new(generate(rows, &even_lengths(rows, nnz), seed, 0)),
            MatrixSource::Banded => {
                let band = 8 * (nnz / rows.max(1)).max(1);
                Arc::new(generate(rows, &even_lengths(rows, nnz), seed, band))
            }
            MatrixSource::PowerLaw => {
                Arc::new(generate(rows, &power_lengths(rows, nnz, seed), seed, 0))
            }
        }
    }
}

pub use super::reference::mix;

/// A value in [-1, 1) with 24 significant bits: exact in f32 and in the script's float64.
fn unit_value(h: u64) -> f32 {
    ((h >> 40) as f32) / (1u32 << 23) as f32 - 1.0
}

const STREAM_COL: u64 = 1;
const STREAM_VAL: u64 = 2;
const STREAM_LEN: u64 = 3;
const STREAM_X: u64 = 4;

fn even_lengths(rows: usize, nnz: usize) -> Vec<usize> {
    let (q, r) = (nnz / rows.max(1), nnz % rows.max(1));
    (0..rows).map(|i| q + usize::from(i < r)).collect()
}

/// Pareto(2) weights w_i = 1 / sqrt(u_i), apportioned by cumulative sums: row i gets
/// floor(NNZ·C_i/C) - floor(NNZ·C_{i-1}/C) entries, which add up to NNZ exactly.
fn power_lengths(rows: usize, nnz: usize, seed: u64) -> Vec<usize> {
    let weights: Vec<f64> = (0..rows as u64)
        .map(|i| {
            let u = ((mix(seed, STREAM_LEN, i) >> 11) + 1) as f64 / (1u64 << 53) as f64;
            1.0 / u.sqrt()
        })
        .collect();
    let total: f64 = weights.iter().sum();
    let mut acc = 0.0f64;
    let mut prev = 0usize;
    weights
        .iter()
        .enumerate()
        .map(|(i, w)| {
            acc += w;
            let upto = if i + 1 == rows {
                nnz
            } else {
                ((nnz as f64 * acc / total).floor() as usize).min(nnz)
            };
            let len = upto.saturating_sub(prev);
            prev = prev.max(upto);
            len
        })
        .collect()
}

/// Columns uniform over the row (`band` 0) or over row ± band, sorted per row.
fn generate(rows: usize, lengths: &[usize], seed: u64, band: usize) -> Csr {
    let mut row_ptr = Vec::with_capacity(rows + 1);
    let mut col = Vec::with_capacity(lengths.iter().sum());
    row_ptr.push(0u32);
    for (i, &len) in lengths.iter().enumerate() {
        let (lo, hi) = if band == 0 {
            (0, rows)
        } else {
            (i.saturating_sub(band), (i + band + 1).min(rows))
        };
        let start = col.len();
        for k in 0..len {
            let h = mix(seed, STREAM_COL, (start + k) as u64);
            col.push((lo as u64 + h % (hi - lo) as u64) as u32);
        }
        col[start..].sort_unstable();
        row_ptr.push(col.len() as u32);
    }
    let val = (0..col.len() as u64)
        .map(|k| unit_value(mix(seed, STREAM_VAL, k)))
        .collect();
    Csr {
        rows,
        cols: rows,
        row_ptr,
        col,
        val,
    }
}

/// The vector `x` of a matrix with `cols` columns.
pub fn x_vector(cols: usize, seed: u64) -> Vec<f32> {
    (0..cols as u64)
        .map(|k| unit_value(mix(seed, STREAM_X, k)))
        .collect()
}

/// Refuse a size the generators cannot make, naming the rule.
pub fn check_size(size: Size) -> Result<(), String> {
    if size.rows == 0 || size.cols == 0 {
        return Err(format!(
            "matrix {size}: give ROWSxNNZ (rows, stored entries), both at least 1"
        ));
    }
    // Row pointers and column indices are 32-bit.
    if size.cols >= u64::from(u32::MAX) || size.rows >= u64::from(u32::MAX) {
        return Err(format!(
            "matrix {size}: row pointers and column indices are 32-bit (limit {})",
            u32::MAX - 1
        ));
    }
    Ok(())
}

/// Bytes requested and flops of one product (see the module docs).
pub fn work(size: Size) -> (u64, u64) {
    let (rows, nnz) = (size.rows, size.cols);
    let bytes = nnz
        .saturating_mul(12)
        .saturating_add(rows.saturating_mul(8))
        .saturating_add(4);
    (bytes, nnz.saturating_mul(2))
}

/// y = A·x in f64, and per row the sum of |a·x| for the tolerance.
pub fn reference(a: &Csr, x: &[f32]) -> (Vec<f64>, Vec<f64>) {
    (0..a.rows)
        .map(|r| {
            let (s, e) = (a.row_ptr[r] as usize, a.row_ptr[r + 1] as usize);
            (s..e).fold((0.0, 0.0), |(y, m), k| {
                let p = f64::from(a.val[k]) * f64::from(x[a.col[k] as usize]);
                (y + p, m + p.abs())
            })
        })
        .unzip()
}

/// Inputs of one configuration: the matrix, `x`, and the reference with its tolerances.
pub struct SpmvInputs {
    pub csr: Arc<Csr>,
    pub x: Vec<f32>,
    pub reference: Vec<f64>,
    pub tolerances: Vec<f64>,
}

pub fn inputs(size: Size, seed: u64, matrix: &MatrixSource) -> SpmvInputs {
    let csr = matrix.build(size, seed);
    let x = x_vector(csr.cols, seed);
    let (reference, abs) = reference(&csr, &x);
    let longest = (0..csr.rows)
        .map(|r| csr.row_ptr[r + 1] - csr.row_ptr[r])
        .max()
        .unwrap_or(0);
    let f = reference::tolerance_factor(u64::from(longest));
    let tolerances = abs.iter().map(|a| f * a).collect();
    SpmvInputs {
        csr,
        x,
        reference,
        tolerances,
    }
}

/// The kernel arguments, in the kernels' order: values, columns, row pointers, x, rows, y.
pub fn args(path: ReadPath, val: BufferId, col: BufferId, ptr: BufferId, x: BufferId) -> Vec<Arg> {
    vec![
        Arg::Buffer(val),
        Arg::Buffer(col),
        Arg::Buffer(ptr),
        path.arg(x, 1),
    ]
}

/// What a kernel writes, for the fake backend: y rounded to float32.
pub fn emulate(val: &[f32], col: &[f32], ptr: &[f32], x: &[f32], rows: usize) -> Vec<f32> {
    let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<u32>>();
    let (col, ptr) = (bits(col), bits(ptr));
    (0..rows.min(ptr.len().saturating_sub(1)))
        .map(|r| {
            let (s, e) = (ptr[r] as usize, ptr[r + 1] as usize);
            (s..e.min(val.len()))
                .map(|k| f64::from(val[k]) * f64::from(x[col[k] as usize]))
                .sum::<f64>() as f32
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Matrix Market files

fn file_cache() -> &'static Mutex<HashMap<String, Arc<Csr>>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<Csr>>>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// A file read once per process: a study names it once per comparison.
fn load_cached(path: &str) -> Result<Arc<Csr>, String> {
    if let Some(csr) = file_cache().lock().ok().and_then(|c| c.get(path).cloned()) {
        return Ok(csr);
    }
    let text = crate::input_file::read_capped(Path::new(path), crate::input_file::MTX_CAP)
        .map_err(|e| format!("cannot read matrix file {path}: {e}"))?;
    let csr = Arc::new(read_mtx(&text, path)?);
    if let Ok(mut c) = file_cache().lock() {
        c.insert(path.to_string(), csr.clone());
    }
    Ok(csr)
}

/// Counts the lines a reader has handed out, so that an error of the parser (which says only
/// "bad file") can name the line it stopped on.
struct LineCounter<R> {
    inner: R,
    newlines: usize,
    last: Option<u8>,
}

impl<R: BufRead> Read for LineCounter<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = {
            let available = self.fill_buf()?;
            let n = available.len().min(buf.len());
            buf[..n].copy_from_slice(&available[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for LineCounter<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        if let Ok(buf) = self.inner.fill_buf() {
            let taken = &buf[..amt.min(buf.len())];
            self.newlines += taken.iter().filter(|&&b| b == b'\n').count();
            self.last = taken.last().copied().or(self.last);
        }
        self.inner.consume(amt);
    }
}

impl<R> LineCounter<R> {
    /// The 1-based line the reader stopped in: the last one read whole, or the one it is in.
    fn line(&self) -> usize {
        if self.last == Some(b'\n') {
            self.newlines
        } else {
            self.newlines + 1
        }
    }
}

/// Reads a Matrix Market coordinate file (real, integer or pattern; general or symmetric)
/// with `sprs` and converts it to CSR (repeated entries summed). Pattern entries are 1.
pub fn read_mtx(text: &[u8], name: &str) -> Result<Csr, String> {
    check_size_line(text, name)?;
    let mut counted = LineCounter {
        inner: text,
        newlines: 0,
        last: None,
    };
    // sprs asserts (panics) where an entry lies outside the declared shape, after reading
    // every line; that one case is caught here and its line found by `entry_outside`. The
    // panic message is silenced for the call (the error below says it better).
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        sprs::io::read_matrix_market_from_bufread::<f64, usize, _>(&mut counted)
    }));
    std::panic::set_hook(hook);
    let tri = match read {
        Ok(Ok(tri)) => tri,
        Ok(Err(e)) => return Err(format!("{name}: line {}: {e}", counted.line())),
        Err(_) => return Err(entry_outside(text, name)),
    };
    let (rows, cols) = tri.shape();
    if tri.nnz() >= u32::MAX as usize || rows >= u32::MAX as usize || cols >= u32::MAX as usize {
        return Err(format!(
            "{name}: {rows}x{cols} with {} entries exceeds the kernels' 32-bit indices",
            tri.nnz()
        ));
    }
    let csr: sprs::CsMatI<f64, usize> = tri.to_csr();
    Ok(Csr {
        rows,
        cols,
        row_ptr: csr.indptr().as_slice().map_or_else(
            || csr.indptr().to_proper().iter().map(|&p| p as u32).collect(),
            |s| s.iter().map(|&p| p as u32).collect(),
        ),
        col: csr.indices().iter().map(|&c| c as u32).collect(),
        val: csr.data().iter().map(|&v| v as f32).collect(),
    })
}

/// Refuses a size line whose counts the kernels cannot index or the file cannot hold, before
/// the reader reserves room for them: the reader trusts the declared entry count (2^40 entries
/// aborted the process on allocation).
fn check_size_line(text: &[u8], name: &str) -> Result<(), String> {
    let text = String::from_utf8_lossy(text);
    let Some((n, line)) = text
        .lines()
        .enumerate()
        .find(|(_, l)| !l.trim().is_empty() && !l.starts_with('%'))
    else {
        // sprs's reader loops for ever on a file that ends before its size line (found by
        // tests/fuzz.rs): a cut file is refused here instead.
        return Err(format!(
            "{name}: no size line (ROWS COLS ENTRIES) after the header: the file is empty or              cut short"
        ));
    };
    let counts: Vec<u64> = line
        .split_whitespace()
        .map_while(|w| w.parse().ok())
        .collect();
    let &[rows, cols, nnz] = counts.as_slice() else {
        // Not a coordinate size line: the reader names what is wrong with it.
        return Ok(());
    };
    let limit = u64::from(u32::MAX) - 1;
    let line_no = n + 1;
    if rows > limit || cols > limit || nnz > limit {
        return Err(format!(
            "{name}: line {line_no}: {rows}x{cols} with {nnz} entries exceeds the kernels' \
             32-bit indices (limit {limit} rows, columns and entries)"
        ));
    }
    // An entry line is at least "i j\n": a file cannot hold more entries than that allows.
    let room = text.len() as u64 / 4;
    if nnz > room {
        return Err(format!(
            "{name}: line {line_no}: declares {nnz} entries, but a file of {} bytes holds at \
             most {room}",
            text.len()
        ));
    }
    let host = mtx_host_bytes(rows, nnz);
    super::host_memory::check_host(host, &format!("{name}: {rows}x{cols} with {nnz} entries"))
}

/// Host bytes reading a matrix takes: the reader's triplets (two indices and an f64 per entry,
/// twice for a symmetric file), the CSR conversion (the same again, plus row pointers), and
/// the f32/u32 copies kept.
fn mtx_host_bytes(rows: u64, nnz: u64) -> u64 {
    let per_entry = 2 * 24 + 24 + 8;
    nnz.saturating_mul(per_entry)
        .saturating_add(rows.saturating_add(1).saturating_mul(8 + 4))
}

/// The error for an entry outside the shape of the size line: names the first such line.
fn entry_outside(text: &[u8], name: &str) -> String {
    let text = String::from_utf8_lossy(text);
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(i, l)| *i == 0 || !(l.starts_with('%') || l.trim().is_empty()));
    let _banner = lines.next();
    let numbers = |l: &str| -> Vec<usize> {
        l.split_whitespace()
            .take(2)
            .filter_map(|t| t.parse().ok())
            .collect()
    };
    let shape = lines.next().map(|(_, l)| numbers(l)).unwrap_or_default();
    for (i, l) in lines {
        let at = numbers(l);
        if at.len() == 2 && shape.len() == 2 && (at[0] > shape[0] || at[1] > shape[1]) {
            return format!(
                "{name}: line {}: entry ({}, {}) lies outside the {}x{} matrix of the size line",
                i + 1,
                at[0],
                at[1],
                shape[0],
                shape[1]
            );
        }
    }
    format!("{name}: an entry lies outside the matrix's declared shape")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_paths_follow_the_variant_name() {
        assert_eq!(ReadPath::of("scalar"), ReadPath::Global);
        assert_eq!(ReadPath::of("vector-ro"), ReadPath::Ro);
        assert_eq!(ReadPath::of("lj-tex"), ReadPath::Tex);
        assert_eq!(
            ReadPath::Tex.arg(BufferId(3), 4),
            Arg::Texture {
                buffer: BufferId(3),
                channels: 4
            }
        );
        assert_eq!(ReadPath::Ro.arg(BufferId(3), 4), Arg::Buffer(BufferId(3)));
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

    /// The same number `scripts/baselines.py --self-test` prints for its copy of the
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
        let e = read_mtx(bad.as_bytes(), "bad.mtx").unwrap_err();
        assert!(e.contains("bad.mtx: line 5"), "{e}");
        let bad = GOOD.replace("3 1 -1", "3 9 -1");
        let e = read_mtx(bad.as_bytes(), "bad.mtx").unwrap_err();
        assert!(
            e.contains("bad.mtx: line 6: entry (3, 9) lies outside"),
            "{e}"
        );
        // Cut before its size line: refused, never a reader that waits for more.
        for cut in [
            "%%MatrixMarket matrix coordinate real general\n% a commen",
            "",
        ] {
            let e = read_mtx(cut.as_bytes(), "cut.mtx").unwrap_err();
            assert!(e.contains("cut.mtx: no size line"), "{e}");
        }
        let e = MatrixSource::parse("file:/nonexistent/m.mtx").unwrap_err();
        assert!(e.contains("/nonexistent/m.mtx"), "{e}");
        let e = MatrixSource::parse("diagonal").unwrap_err();
        assert!(e.contains("uniform, banded, powerlaw"), "{e}");
    }
}
