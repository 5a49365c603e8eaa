//! The sparse matrices a study can give a family (the key `matrix`): generated ones and Matrix
//! Market files, in CSR form.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use rayon::prelude::*;

use crate::rows::Size;

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

/// Why a study's matrix cannot be had: an unknown name, or a Matrix Market file that cannot be
/// read, is malformed or is too large.
#[derive(Debug, thiserror::Error)]
pub enum MatrixError {
    #[error("matrix '{0}' is not one of uniform, banded, powerlaw or file:PATH.mtx")]
    Unknown(String),
    #[error("cannot read matrix file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{name}: line {line}: {source}")]
    Malformed {
        name: String,
        line: usize,
        source: sprs::io::IoError,
    },
    /// A file without a size line, with an entry outside its shape, or with counts that the
    /// kernels' 32-bit indices or the file itself cannot hold: the message says which.
    #[error("{0}")]
    Refused(String),
    #[error(transparent)]
    HostMemory(#[from] crate::host_memory::HostMemoryError),
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
    pub fn parse(text: &str) -> Result<MatrixSource, MatrixError> {
        match text {
            "uniform" => Ok(MatrixSource::Uniform),
            "banded" => Ok(MatrixSource::Banded),
            "powerlaw" => Ok(MatrixSource::PowerLaw),
            _ => match text.strip_prefix("file:") {
                Some(path) => Ok(MatrixSource::File {
                    path: path.to_string(),
                    csr: load_cached(path)?,
                }),
                None => Err(MatrixError::Unknown(text.to_string())),
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

use crate::families::footprint::{add, mul};
use crate::families::reference::{hashed, mix};

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

/// Columns uniform over the row (`band` 0) or over row ± band, sorted per row; every entry a
/// hash of its position, so rows are made in parallel and the same on any thread count.
fn generate(rows: usize, lengths: &[usize], seed: u64, band: usize) -> Csr {
    let mut row_ptr = Vec::with_capacity(rows + 1);
    row_ptr.push(0u32);
    let mut total = 0usize;
    for &len in lengths {
        total += len;
        row_ptr.push(total as u32);
    }
    let col = (0..rows)
        .into_par_iter()
        .flat_map_iter(|i| {
            let (lo, hi) = if band == 0 {
                (0, rows)
            } else {
                (i.saturating_sub(band), (i + band + 1).min(rows))
            };
            let mut entries: Vec<u32> = (row_ptr[i] as usize..row_ptr[i + 1] as usize)
                .map(|k| (lo as u64 + mix(seed, STREAM_COL, k as u64) % (hi - lo) as u64) as u32)
                .collect();
            entries.sort_unstable();
            entries
        })
        .collect();
    let val = hashed(total, seed, STREAM_VAL, |_, h| unit_value(h));
    Csr {
        rows,
        cols: rows,
        row_ptr,
        col,
        val,
    }
}

pub fn x_vector(cols: usize, seed: u64) -> Vec<f32> {
    (0..cols as u64)
        .map(|k| unit_value(mix(seed, STREAM_X, k)))
        .collect()
}

fn file_cache() -> &'static Mutex<HashMap<String, Arc<Csr>>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<Csr>>>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// A file read once per process: a study names it once per comparison.
fn load_cached(path: &str) -> Result<Arc<Csr>, MatrixError> {
    if let Some(csr) = file_cache().lock().ok().and_then(|c| c.get(path).cloned()) {
        return Ok(csr);
    }
    let text = crate::input_file::read_capped(Path::new(path), crate::input_file::MTX_CAP)
        .map_err(|source| MatrixError::Read {
            path: path.to_string(),
            source,
        })?;
    let csr = Arc::new(read_mtx(&text, path)?);
    if let Ok(mut c) = file_cache().lock() {
        c.insert(path.to_string(), csr.clone());
    }
    Ok(csr)
}

/// Reads a Matrix Market coordinate file (real, integer or pattern; general or symmetric)
/// with `sprs` and converts it to CSR (repeated entries summed). Pattern entries are 1.
pub fn read_mtx(text: &[u8], name: &str) -> Result<Csr, MatrixError> {
    check_size_line(text, name)?;
    // What the reader leaves of `text` tells the line it stopped in, for its errors (which
    // say only "bad file"): the last one read whole, or the one it is in.
    let mut rest = text;
    // sprs asserts (panics) where an entry lies outside the declared shape, after reading
    // every line; that one case is caught here and its line found by `entry_outside`. The
    // panic message is silenced for the call (the error below says it better).
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        sprs::io::read_matrix_market_from_bufread::<f64, usize, _>(&mut rest)
    }));
    std::panic::set_hook(hook);
    let tri = match read {
        Ok(Ok(tri)) => tri,
        Ok(Err(source)) => {
            let read = &text[..text.len() - rest.len()];
            let newlines = read.iter().filter(|&&b| b == b'\n').count();
            return Err(MatrixError::Malformed {
                name: name.to_string(),
                line: newlines + usize::from(read.last() != Some(&b'\n')),
                source,
            });
        }
        Err(_) => return Err(entry_outside(text, name)),
    };
    let (rows, cols) = tri.shape();
    if tri.nnz() >= u32::MAX as usize || rows >= u32::MAX as usize || cols >= u32::MAX as usize {
        return Err(MatrixError::Refused(format!(
            "{name}: {rows}x{cols} with {} entries exceeds the kernels' 32-bit indices",
            tri.nnz()
        )));
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

/// Refuses, before the reader reserves room for them, counts the kernels cannot index or the
/// file cannot hold (the reader trusts the declared count: 2^40 entries aborted on allocation).
fn check_size_line(text: &[u8], name: &str) -> Result<(), MatrixError> {
    let text = String::from_utf8_lossy(text);
    let Some((n, line)) = text
        .lines()
        .enumerate()
        .find(|(_, l)| !l.trim().is_empty() && !l.starts_with('%'))
    else {
        // sprs's reader loops for ever on a file that ends before its size line (found by
        // tests/fuzz.rs): a cut file is refused here instead.
        return Err(MatrixError::Refused(format!(
            "{name}: no size line (ROWS COLS ENTRIES) after the header: the file is empty or cut \
             short"
        )));
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
        return Err(MatrixError::Refused(format!(
            "{name}: line {line_no}: {rows}x{cols} with {nnz} entries exceeds the kernels' 32-bit \
             indices (limit {limit} rows, columns and entries)"
        )));
    }
    // An entry line is at least "i j\n": a file cannot hold more entries than that allows.
    let room = text.len() as u64 / 4;
    if nnz > room {
        return Err(MatrixError::Refused(format!(
            "{name}: line {line_no}: declares {nnz} entries, but a file of {} bytes holds at most \
             {room}",
            text.len()
        )));
    }
    // Host bytes reading it takes: the reader's triplets (two indices and an f64 per entry,
    // twice for a symmetric file), the CSR conversion (the same again, plus row pointers), and
    // the f32/u32 copies kept.
    let host = add(mul(nnz, 2 * 24 + 24 + 8), mul(add(rows, 1), 8 + 4));
    let what = format!("{name}: {rows}x{cols} with {nnz} entries");
    Ok(crate::host_memory::check_host(host, &what)?)
}

/// The error for an entry outside the shape of the size line: names the first such line.
fn entry_outside(text: &[u8], name: &str) -> MatrixError {
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
            return MatrixError::Refused(format!(
                "{name}: line {}: entry ({}, {}) lies outside the {}x{} matrix of the size line",
                i + 1,
                at[0],
                at[1],
                shape[0],
                shape[1]
            ));
        }
    }
    MatrixError::Refused(format!(
        "{name}: an entry lies outside the matrix's declared shape"
    ))
}
