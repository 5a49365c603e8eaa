//! CSV, the durable record of every run: rows are appended and flushed one at a time, so a
//! killed run leaves a valid file that `--resume` continues; a file is re-read only after its
//! header is checked, so a CSV of another kind is refused, not mis-parsed.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::Write;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::{io_err, write_atomic, ExportError};
use crate::rows::RowCheck;

/// The column list of a row type in field order, derived from its `Deserialize`, so a header
/// can be written and checked before any row exists and never drifts from the struct.
pub trait CsvSchema {
    fn columns() -> &'static [&'static str];
}

impl<T: DeserializeOwned> CsvSchema for T {
    fn columns() -> &'static [&'static str] {
        serde_aux::serde_introspection::serde_introspect::<T>()
    }
}

/// The header of `T` as owned strings (the form [`ExportError::Schema`] carries).
pub fn header_of<T: CsvSchema>() -> Vec<String> {
    T::columns().iter().map(|c| c.to_string()).collect()
}

/// A `csv` error naming the file, the line and, where known, the column of `columns`.
fn csv_err(path: &Path, err: ::csv::Error, columns: &[&str]) -> ExportError {
    let line = err.position().map_or(0, ::csv::Position::line);
    let fallback = err.to_string();
    let column = |i: u64| -> String {
        match usize::try_from(i).ok().and_then(|i| columns.get(i)) {
            Some(name) => format!("column `{name}`"),
            None => format!("field {}", i.saturating_add(1)),
        }
    };
    let message = match err.into_kind() {
        ::csv::ErrorKind::Io(source) => {
            return ExportError::Io {
                path: path.to_path_buf(),
                source,
            }
        }
        // No field for the row type's own messages (an unknown enum value names itself instead).
        ::csv::ErrorKind::Deserialize { err, .. } => match err.field() {
            Some(i) => format!("{}: {}", column(i), err.kind()),
            None => err.kind().to_string(),
        },
        ::csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!(
            "the row has {len} fields but the header has {expected_len} \
             (a truncated or hand-edited line?)"
        ),
        ::csv::ErrorKind::Utf8 { err, .. } => {
            format!("{} is not valid UTF-8", column(err.field() as u64))
        }
        _ => fallback,
    };
    ExportError::Csv {
        path: path.to_path_buf(),
        line,
        message,
    }
}

/// Columns added to a row type after results were first written, each with a serde default (a
/// 1-D launch's 1, an empty cell): an older file is still read, never appended to (shorter rows).
const LATER_COLUMNS: &[&str] = &[
    "local_y",
    "groups_y",
    "wait_mode",
    "queued_to_submit_s",
    "submit_to_start_s",
    "turn",
    "levels",
    "front_end",
    "kernel_work_group_limit",
    "registers",
    "spill_bytes",
    "shared_bytes",
    "replay",
];

/// Whether a header line (no quoted names) is `T`'s, or an older file's.
pub fn reads_as<T: CsvSchema>(header: &str) -> bool {
    let found = ::csv::StringRecord::from(header.split(',').collect::<Vec<_>>());
    check_header::<T>(Path::new(""), &found, true).is_ok()
}

/// Whether `found` is `columns` with some of [`LATER_COLUMNS`] left out, in order.
fn is_older_form(found: &::csv::StringRecord, columns: &[&str]) -> bool {
    let mut found = found.iter().peekable();
    for c in columns {
        if found.peek() == Some(c) {
            found.next();
        } else if !LATER_COLUMNS.contains(c) {
            return false;
        }
    }
    found.next().is_none()
}

/// Refuses `found` unless it is `T`'s header or, with `older_too` (not to append to), an older
/// form of it.
fn check_header<T: CsvSchema>(
    path: &Path,
    found: &::csv::StringRecord,
    older_too: bool,
) -> Result<(), ExportError> {
    let exact = found.iter().eq(T::columns().iter().copied());
    if exact || (older_too && is_older_form(found, T::columns())) {
        Ok(())
    } else {
        Err(ExportError::Schema {
            path: path.to_path_buf(),
            expected: header_of::<T>(),
            found: found.iter().map(str::to_string).collect(),
        })
    }
}

/// Parses a CSV of `T` rows (`path` names it in errors); empty content is no rows.
pub(crate) fn parse_rows<T: DeserializeOwned + CsvSchema>(
    path: &Path,
    data: &[u8],
) -> Result<Vec<T>, ExportError> {
    parse_rows_with(path, data, true)
}

fn parse_rows_with<T: DeserializeOwned + CsvSchema>(
    path: &Path,
    data: &[u8],
    older_too: bool,
) -> Result<Vec<T>, ExportError> {
    if data.is_empty() {
        return Ok(Vec::new());
    }
    let mut reader = ::csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(data);
    let header = reader
        .headers()
        .map_err(|e| csv_err(path, e, T::columns()))?
        .clone();
    check_header::<T>(path, &header, older_too)?;
    reader
        .deserialize::<T>()
        .map(|row| row.map_err(|e| csv_err(path, e, T::columns())))
        .collect()
}

/// Reads every row of a CSV of `T` rows: a foreign header is refused with both column lists, a
/// bad row named by file, line and column; an empty file reads as no rows.
pub fn read_rows<T: DeserializeOwned + CsvSchema>(path: &Path) -> Result<Vec<T>, ExportError> {
    let data = crate::input_file::read_capped(path, crate::input_file::RESULT_CAP)
        .map_err(io_err(path))?;
    parse_rows(path, &data)
}

/// [`read_rows`] of an optional file: none where it is not there.
pub fn read_rows_if_file<T: DeserializeOwned + CsvSchema>(
    path: &Path,
) -> Result<Vec<T>, ExportError> {
    if path.is_file() {
        read_rows(path)
    } else {
        Ok(Vec::new())
    }
}

/// The bytes of a file, gunzipped when its name ends in `.gz`.
pub fn read_maybe_gz(path: &Path) -> Result<Vec<u8>, ExportError> {
    let raw = crate::input_file::read_capped(path, crate::input_file::RESULT_CAP)
        .map_err(io_err(path))?;
    if path.extension().is_some_and(|e| e == "gz") {
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(raw.as_slice()), &mut out)
            .map_err(io_err(path))?;
        Ok(out)
    } else {
        Ok(raw)
    }
}

/// The rows of a CSV another command wrote (`.gz`: gunzipped), by column name: a file that
/// gained a column still reads; a missing column without a default names the file and line.
pub fn read_by_name<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>, ExportError> {
    let data = read_maybe_gz(path)?;
    ::csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(data.as_slice())
        .deserialize()
        .collect::<Result<Vec<T>, _>>()
        .map_err(|e| csv_err(path, e, &[]))
}

/// `rows` as CSV text, after `header` unless it is empty.
pub(crate) fn csv_bytes<T: Serialize>(
    rows: &[T],
    header: &[&str],
) -> Result<Vec<u8>, ::csv::Error> {
    let mut writer = ::csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    if !header.is_empty() {
        writer.write_record(header)?;
    }
    for row in rows {
        writer.serialize(row)?;
    }
    writer.into_inner().map_err(|e| e.into_error().into())
}

/// Renders rows as a CSV document, header included even with no rows.
pub fn render<T: Serialize + CsvSchema>(rows: &[T]) -> Result<Vec<u8>, ExportError> {
    render_with(rows, T::columns())
}

/// [`csv_bytes`] as an in-memory render: a failure is [`ExportError::Render`].
pub(crate) fn render_with<T: Serialize>(
    rows: &[T],
    header: &[&str],
) -> Result<Vec<u8>, ExportError> {
    csv_bytes(rows, header).map_err(|e| ExportError::Render {
        format: "csv",
        message: e.to_string(),
    })
}

/// Writes `rows` as a whole CSV file, atomically: for derived tables, not incremental results.
pub fn write_rows<T: Serialize + CsvSchema>(path: &Path, rows: &[T]) -> Result<(), ExportError> {
    write_atomic(path, &render(rows)?)
}

/// Appends `T` rows to a CSV file, each flushed to the operating system before `append`
/// returns, so a killed (not power-cut) process leaves a valid CSV with every finished row.
#[derive(Debug)]
pub struct CsvAppender<T> {
    path: PathBuf,
    file: File,
    _row: PhantomData<fn(&T)>,
}

/// A result file read once by [`read_to_append`]: its rows, and what an appender must know.
#[derive(Debug, Clone, PartialEq)]
pub struct Existing<T> {
    path: PathBuf,
    pub rows: Vec<T>,
    /// No bytes at all (then it gets a header).
    empty: bool,
    /// The line of a last line without a line break: a row cut by an interrupted write.
    cut_line: Option<u64>,
}

impl<T: Serialize + CsvSchema> Existing<T> {
    /// The file with only the rows `keep` accepts, rewritten whole by [`write_rows`] (with
    /// header, every line ended) only when it loses a row.
    pub fn retain(mut self, keep: impl FnMut(&T) -> bool) -> Result<Self, ExportError> {
        let total = self.rows.len();
        self.rows.retain(keep);
        if self.rows.len() < total {
            write_rows(&self.path, &self.rows)?;
            self.empty = false;
            self.cut_line = None;
        }
        Ok(self)
    }
}

/// The bytes of a file a run folder owns, none where it is missing. Checked before it is
/// read: a FIFO would block the read forever, a device never end it.
fn read_folder_file(path: &Path) -> Result<Vec<u8>, ExportError> {
    super::safe::check_target(path)?;
    match crate::input_file::read_capped(path, crate::input_file::RESULT_CAP) {
        Ok(data) => Ok(data),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(io_err(path)(e)),
    }
}

/// The rows of a file a run folder owns, read back by a resume (none where it is missing or
/// empty): checked as the store's files are, and the header must be exactly `T`'s (a resume
/// runs the binary that wrote it).
pub fn read_folder_rows<T: DeserializeOwned + CsvSchema>(
    path: &Path,
) -> Result<Vec<T>, ExportError> {
    parse_rows_with(path, &read_folder_file(path)?, false)
}

/// Reads the rows of `path` (none where missing or empty) to append to: the header must be
/// exactly `T`'s, and a non-empty file needs `resume`, so no run mixes into another's by accident.
pub fn read_to_append<T: DeserializeOwned + CsvSchema>(
    path: &Path,
    resume: bool,
) -> Result<Existing<T>, ExportError> {
    let data = read_folder_file(path)?;
    if !data.is_empty() && !resume {
        return Err(ExportError::OutputExists {
            path: path.to_path_buf(),
            hint: "pass --resume to continue it, --force to start afresh, or choose another output"
                .to_string(),
        });
    }
    let rows = parse_rows_with::<T>(path, &data, false)?;
    let cut_line = (!data.is_empty() && data.last() != Some(&b'\n')).then(|| {
        let newlines = data.iter().filter(|&&b| b == b'\n').count();
        u64::try_from(newlines).map_or(0, |n| n.saturating_add(1))
    });
    Ok(Existing {
        path: path.to_path_buf(),
        rows,
        empty: data.is_empty(),
        cut_line,
    })
}

impl<T: Serialize + DeserializeOwned + CsvSchema> CsvAppender<T> {
    /// Opens the file `existing` was read from for appending; refused when its last line has
    /// no line break (a row cut by an interrupted write, which the next row would merge into).
    pub fn continue_file(existing: &Existing<T>) -> Result<Self, ExportError> {
        let path = existing.path.as_path();
        if let Some(line) = existing.cut_line {
            return Err(ExportError::Csv {
                path: path.to_path_buf(),
                line,
                message: "the last line has no line break, so it was probably cut by an \
                          interrupted write; check it, delete it if incomplete, then resume"
                    .to_string(),
            });
        }
        let file = super::safe::open_append(path)?;
        let mut appender = CsvAppender {
            path: path.to_path_buf(),
            file,
            _row: PhantomData,
        };
        if existing.empty {
            let header =
                csv_bytes::<T>(&[], T::columns()).map_err(|e| csv_err(path, e, T::columns()))?;
            appender.write_or_roll_back(&header)?;
        }
        Ok(appender)
    }

    /// Writes `rows` in one write, cut back when it fails (disk full): no half line is left.
    pub fn append_all(&mut self, rows: &[T]) -> Result<(), ExportError> {
        let bytes = csv_bytes(rows, &[]).map_err(|e| csv_err(&self.path, e, T::columns()))?;
        self.write_or_roll_back(&bytes)
    }

    /// The file's length now: a point to roll back to.
    pub fn byte_len(&self) -> Result<u64, ExportError> {
        Ok(self.file.metadata().map_err(io_err(&self.path))?.len())
    }

    /// Cuts the file back to `len` bytes (a length from [`byte_len`](Self::byte_len)).
    pub fn roll_back_to(&mut self, len: u64) -> Result<(), ExportError> {
        self.file.set_len(len).map_err(io_err(&self.path))
    }

    fn write_or_roll_back(&mut self, bytes: &[u8]) -> Result<(), ExportError> {
        let before = self.byte_len()?;
        let written = self.file.write_all(bytes).and_then(|_| self.file.flush());
        if let Err(e) = written {
            // Best effort: a failing cut is only mentioned in the write error the user sees.
            let cut = self.file.set_len(before);
            let e = match cut {
                Ok(()) => e,
                Err(cut) => std::io::Error::new(
                    e.kind(),
                    format!("{e}; cutting the file back to {before} bytes also failed: {cut}"),
                ),
            };
            return Err(io_err(&self.path)(e));
        }
        Ok(())
    }
}

/// Concatenates CSV files of `T` rows into `output` atomically and returns the row count. Every
/// input must parse, every row pass its [`RowCheck`] and no key occur twice before anything is
/// written; refused when `output` is an input or a non-empty file.
pub fn merge_files<T: Serialize + DeserializeOwned + CsvSchema + RowCheck>(
    inputs: &[PathBuf],
    output: &Path,
) -> Result<usize, ExportError> {
    // A device node, FIFO, link or hard-linked file is refused before any input is read.
    super::safe::check_target(output)?;
    let output_canonical = fs::canonicalize(output).ok();
    for input in inputs {
        let same = input == output
            || output_canonical
                .as_ref()
                .is_some_and(|out| fs::canonicalize(input).ok().as_ref() == Some(out));
        if same {
            return Err(ExportError::OutputIsInput {
                path: output.to_path_buf(),
            });
        }
    }
    match fs::metadata(output) {
        Ok(meta) if meta.len() > 0 => {
            return Err(ExportError::OutputExists {
                path: output.to_path_buf(),
                hint: "choose another output for the merge, or remove it first".to_string(),
            })
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io_err(output)(e)),
    }
    let mut rows: Vec<T> = Vec::new();
    let mut seen: HashMap<String, (PathBuf, usize)> = HashMap::new();
    for input in inputs {
        for (i, row) in read_rows::<T>(input)?.into_iter().enumerate() {
            let problems = row.problems();
            let message = if !problems.is_empty() {
                format!("{}: {}", row.key(), problems.join(", "))
            } else if let Some((first, n)) = seen.insert(row.key(), (input.clone(), i + 1)) {
                format!(
                    "{} is already row {n} of {}: the same rows twice (the same file given \
                     twice?); nothing was merged",
                    row.key(),
                    first.display()
                )
            } else {
                rows.push(row);
                continue;
            };
            return Err(ExportError::BadRow {
                path: input.clone(),
                row: i + 1,
                message,
            });
        }
    }
    write_rows(output, &rows)?;
    Ok(rows.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rows::{
        Api, FamilyId, MeasurementRow, Metric, PrRow, SampleRow, Side, Status, TimerKind,
    };
    use proptest::prelude::*;
    use std::io::Write;
    use strum::VariantArray;

    impl<T: Serialize + DeserializeOwned + CsvSchema> CsvAppender<T> {
        /// [`read_to_append`] and [`CsvAppender::continue_file`], parent folders created.
        fn open(path: &Path, resume: bool) -> Result<Self, ExportError> {
            crate::export::create_parent_dirs(path)?;
            Self::continue_file(&read_to_append::<T>(path, resume)?)
        }

        fn append(&mut self, row: &T) -> Result<(), ExportError> {
            self.append_all(std::slice::from_ref(row))
        }
    }

    fn measurement(comparison: &str, api: &str) -> MeasurementRow {
        MeasurementRow {
            run_id: "2024-01-01-abc1234".into(),
            study: "default".into(),
            comparison: comparison.into(),
            api: api.parse().unwrap(),
            device: "NVIDIA H100".into(),
            platform: "NVIDIA CUDA".into(),
            driver: "550.54".into(),
            api_version: "OpenCL 3.0".into(),
            family: FamilyId::Reduce,
            variant: "reduce6".into(),
            size: "268435456".into(),
            elements: 268_435_456,
            local_size: 256,
            groups: 120,
            global_size: 30_720,
            local_y: 1,
            groups_y: 1,
            unroll: "A=4;B=none".into(),
            flags: "-cl-fast-relaxed-math, -O3".into(),
            timer: TimerKind::DeviceEvent,
            warmup: 5,
            reps: 100,
            median_s: 1.25e-3,
            min_s: 1.2e-3,
            mean_s: 1.3e-3,
            mad_s: 2e-5,
            ci_lo_s: 1.24e-3,
            ci_hi_s: 1.26e-3,
            outliers: 3,
            metric: 858.99,
            metric_unit: Metric::Bandwidth,
            metric_ci_lo: 850.0,
            metric_ci_hi: 866.0,
            bytes: 1 << 30,
            flops: 0,
            peak_gbs: Some(3352.0),
            verified: true,
            max_error: 0.0,
            status: Status::Ok,
            error: String::new(),
            sweep_param: String::new(),
            sweep_value: String::new(),
            wait_mode: Some(crate::rows::WaitMode::Spin),
            queued_to_submit_s: Some(2.5e-6),
            submit_to_start_s: None,
            turn: Some(1),
            levels: None,
            front_end: None,
            kernel_work_group_limit: None,
            registers: None,
            spill_bytes: None,
            shared_bytes: None,
        }
    }

    fn pr_row() -> PrRow {
        PrRow {
            run_id: "r".into(),
            study: "default".into(),
            comparison: "reduce6/268435456".into(),
            device_a: "H100".into(),
            device_b: "H100".into(),
            api_a: Api::OpenCl,
            api_b: Api::Cuda,
            family: FamilyId::Reduce,
            variant: "reduce6".into(),
            size: "268435456".into(),
            local_size: 256,
            groups: 120,
            metric_unit: Metric::Bandwidth,
            metric_a: 850.0,
            metric_b: 900.0,
            pr: 0.944,
            pr_ci_lo: 0.93,
            pr_ci_hi: 0.96,
            similar: true,
            similar_tight: false,
            fair: false,
            differing_steps: "compiler: -O3 vs -O2; unroll: \"A=4\" vs none".into(),
            timer: "device-event".into(),
            sweep_param: "local_size".into(),
            sweep_value: "256".into(),
        }
    }

    fn sample(rep: u32) -> SampleRow {
        SampleRow {
            run_id: "r".into(),
            comparison: "c".into(),
            side: Side::A,
            api: Api::Cuda,
            timer: TimerKind::WallClock,
            rep,
            seconds: 1e-3 * f64::from(rep + 1),
        }
    }

    /// The header that csv + serde write for a row, read back as a list of names.
    fn serde_header<T: Serialize>(row: &T) -> Vec<String> {
        let mut w = ::csv::Writer::from_writer(Vec::new());
        w.serialize(row).unwrap();
        let bytes = w.into_inner().unwrap();
        let mut r = ::csv::Reader::from_reader(bytes.as_slice());
        r.headers().unwrap().iter().map(str::to_string).collect()
    }

    #[test]
    fn columns_match_what_serde_writes() {
        assert_eq!(
            serde_header(&measurement("c", "CUDA")),
            header_of::<MeasurementRow>()
        );
        assert_eq!(serde_header(&pr_row()), header_of::<PrRow>());
        assert_eq!(serde_header(&sample(0)), header_of::<SampleRow>());
    }

    #[test]
    fn render_then_parse_round_trips_and_writes_header_for_no_rows() {
        let rows = vec![measurement("a", "OpenCL"), measurement("a", "CUDA")];
        let bytes = render(&rows).unwrap();
        let back: Vec<MeasurementRow> = parse_rows(Path::new("mem.csv"), &bytes).unwrap();
        assert_eq!(back, rows);
        let empty = render::<SampleRow>(&[]).unwrap();
        assert_eq!(empty, b"run_id,comparison,side,api,timer,rep,seconds\n");
    }

    #[test]
    fn status_is_written_in_kebab_case() {
        let mut row = measurement("a", "CUDA");
        row.status = Status::VerifyFailed;
        let text = String::from_utf8(render(&[row]).unwrap()).unwrap();
        assert!(text.contains(",verify-failed,"), "{text}");
    }

    #[test]
    fn append_then_read_after_each_row() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested/dir/samples.csv");
        let mut appender = CsvAppender::<SampleRow>::open(&path, false).unwrap();
        assert_eq!(read_rows::<SampleRow>(&path).unwrap(), vec![]);
        let mut expected = Vec::new();
        for rep in 0..5 {
            let row = sample(rep);
            appender.append(&row).unwrap();
            expected.push(row);
            // Read while the appender is still alive: this is what a killed run leaves.
            assert_eq!(read_rows::<SampleRow>(&path).unwrap(), expected);
        }
        let text = fs::read_to_string(&path).unwrap();
        assert_eq!(text.matches("run_id").count(), 1, "{text}");
        assert!(text.ends_with('\n'));
    }

    #[test]
    fn existing_non_empty_file_needs_resume() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.csv");
        CsvAppender::<SampleRow>::open(&path, false)
            .unwrap()
            .append(&sample(0))
            .unwrap();
        let err = CsvAppender::<SampleRow>::open(&path, false).unwrap_err();
        assert!(
            matches!(&err, ExportError::OutputExists { path: p, .. } if p == &path),
            "{err:?}"
        );
        assert!(err.to_string().contains("--resume"), "{err}");
        // The refused open must not have touched the file.
        assert_eq!(read_rows::<SampleRow>(&path).unwrap(), vec![sample(0)]);
    }

    #[test]
    fn resume_appends_without_a_second_header() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.csv");
        let mut first = CsvAppender::<SampleRow>::open(&path, false).unwrap();
        first.append(&sample(0)).unwrap();
        first.append(&sample(1)).unwrap();
        drop(first);
        let mut second = CsvAppender::<SampleRow>::open(&path, true).unwrap();
        second.append(&sample(2)).unwrap();
        let text = fs::read_to_string(&path).unwrap();
        assert_eq!(text.matches("run_id").count(), 1, "{text}");
        let rows = read_rows::<SampleRow>(&path).unwrap();
        assert_eq!(rows, vec![sample(0), sample(1), sample(2)]);
    }

    #[test]
    fn empty_file_is_treated_as_new_even_without_resume() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.csv");
        File::create(&path).unwrap();
        let mut a = CsvAppender::<SampleRow>::open(&path, false).unwrap();
        a.append(&sample(4)).unwrap();
        assert_eq!(read_rows::<SampleRow>(&path).unwrap(), vec![sample(4)]);
    }

    #[test]
    fn resume_with_mismatching_header_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pr.csv");
        CsvAppender::<PrRow>::open(&path, false)
            .unwrap()
            .append(&pr_row())
            .unwrap();
        let before = fs::read(&path).unwrap();
        let err = CsvAppender::<SampleRow>::open(&path, true).unwrap_err();
        match &err {
            ExportError::Schema {
                path: p,
                expected,
                found,
            } => {
                assert_eq!(p, &path);
                assert_eq!(expected, &header_of::<SampleRow>());
                assert_eq!(found, &header_of::<PrRow>());
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(
            err.to_string().contains("missing: side, api, rep, seconds"),
            "{err}"
        );
        assert_eq!(fs::read(&path).unwrap(), before);
    }

    #[test]
    fn files_older_than_two_dimensional_launches_are_read_but_never_appended_to() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.csv");
        let row = measurement("c", "OpenCL");
        let current = render(std::slice::from_ref(&row)).unwrap();
        // The same file as written before the y columns existed.
        let mut reader = ::csv::Reader::from_reader(current.as_slice());
        let keep: Vec<usize> = (0..MeasurementRow::columns().len())
            .filter(|&i| !["local_y", "groups_y"].contains(&MeasurementRow::columns()[i]))
            .collect();
        let mut writer = ::csv::Writer::from_writer(Vec::new());
        let header = reader.headers().unwrap().clone();
        writer
            .write_record(keep.iter().map(|&i| &header[i]))
            .unwrap();
        for rec in reader.records() {
            let rec = rec.unwrap();
            writer.write_record(keep.iter().map(|&i| &rec[i])).unwrap();
        }
        fs::write(&path, writer.into_inner().unwrap()).unwrap();
        let back: Vec<MeasurementRow> = read_rows(&path).unwrap();
        assert_eq!(back, vec![row]);
        let err = CsvAppender::<MeasurementRow>::open(&path, true).unwrap_err();
        assert!(matches!(err, ExportError::Schema { .. }), "{err:?}");
    }

    #[test]
    fn resume_refuses_a_cut_last_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.csv");
        let mut a = CsvAppender::<SampleRow>::open(&path, false).unwrap();
        a.append(&sample(0)).unwrap();
        drop(a);
        // A complete-looking row with no line break: cut inside its last field.
        let mut f = fs::OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"r,c,CUDA,wall-clock,1,0.00").unwrap();
        drop(f);
        let err = CsvAppender::<SampleRow>::open(&path, true).unwrap_err();
        match &err {
            ExportError::Csv { line, .. } => assert_eq!(*line, 3),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn a_file_read_to_append_is_continued_from_what_that_read_learnt() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.csv");
        let mut a = CsvAppender::<SampleRow>::open(&path, false).unwrap();
        a.append_all(&[sample(0), sample(1)]).unwrap();
        drop(a);
        let existing = read_to_append::<SampleRow>(&path, true).unwrap();
        assert_eq!(existing.rows, vec![sample(0), sample(1)]);
        // Without resume the same file is refused, before its rows are read.
        let refused = read_to_append::<SampleRow>(&path, false).unwrap_err();
        assert!(
            matches!(refused, ExportError::OutputExists { .. }),
            "{refused:?}"
        );
        // Keeping every row leaves the file as it is.
        let existing = existing.retain(|_| true).unwrap();
        assert_eq!(existing.rows.len(), 2);
        // Rewritten whole with one row: continued without a second header or a re-read.
        let kept = existing.retain(|r| r.rep == 0).unwrap();
        assert_eq!(kept.rows, vec![sample(0)]);
        let mut b = CsvAppender::continue_file(&kept).unwrap();
        b.append(&sample(2)).unwrap();
        let text = fs::read_to_string(&path).unwrap();
        assert_eq!(text.matches("run_id").count(), 1, "{text}");
        assert_eq!(
            read_rows::<SampleRow>(&path).unwrap(),
            vec![sample(0), sample(2)]
        );
        // A missing file is continued as a new one: with its header.
        let fresh = dir.path().join("new.csv");
        let new = read_to_append::<SampleRow>(&fresh, true).unwrap();
        assert!(new.rows.is_empty());
        drop(CsvAppender::continue_file(&new).unwrap());
        assert!(fs::read_to_string(&fresh).unwrap().starts_with("run_id"));
    }

    #[test]
    fn truncated_final_row_is_reported_with_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.csv");
        let mut a = CsvAppender::<SampleRow>::open(&path, false).unwrap();
        a.append(&sample(0)).unwrap();
        a.append(&sample(1)).unwrap();
        drop(a);
        let mut f = fs::OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"r,c,CU").unwrap();
        drop(f);
        let err = read_rows::<SampleRow>(&path).unwrap_err();
        match &err {
            ExportError::Csv { path: p, line, .. } => {
                assert_eq!(p, &path);
                assert_eq!(*line, 4);
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(err.to_string().contains("s.csv:4:"), "{err}");
    }

    #[test]
    fn foreign_csv_is_refused_with_columns_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("foreign.csv");
        fs::write(&path, "name,score\nalice,3\n").unwrap();
        let err = read_rows::<MeasurementRow>(&path).unwrap_err();
        match &err {
            ExportError::Schema {
                expected, found, ..
            } => {
                assert_eq!(expected, &header_of::<MeasurementRow>());
                assert_eq!(found, &["name".to_string(), "score".to_string()]);
            }
            other => panic!("unexpected {other:?}"),
        }
        let msg = err.to_string();
        assert!(msg.contains("foreign.csv"), "{msg}");
        assert!(msg.contains("not expected: name, score"), "{msg}");
        assert!(msg.contains("missing: run_id"), "{msg}");
    }

    #[test]
    fn a_file_from_before_the_wait_mode_reads_with_empty_cells_but_is_not_appended_to() {
        let rows = vec![measurement("x", "OpenCL")];
        let full = String::from_utf8(render(&rows).unwrap()).unwrap();
        // Cut the ten newest columns from the header and the row, as an older run wrote it.
        let cut = |line: &str| line.rsplitn(11, ',').last().unwrap().to_string();
        let old: String = full.lines().map(|l| cut(l) + "\n").collect();
        let read: Vec<MeasurementRow> = parse_rows(Path::new("old.csv"), old.as_bytes()).unwrap();
        assert_eq!(read[0].wait_mode, None);
        assert_eq!(read[0].comparison, "x");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.csv");
        fs::write(&path, &old).unwrap();
        let e = CsvAppender::<MeasurementRow>::open(&path, true).unwrap_err();
        assert!(matches!(e, ExportError::Schema { .. }), "{e}");
        // A header missing a column that was always there is refused.
        let missing = full.replacen("run_id,", "", 1);
        assert!(parse_rows::<MeasurementRow>(Path::new("m.csv"), missing.as_bytes()).is_err());
    }

    #[test]
    fn reordered_columns_are_refused() {
        let mut text = String::from("comparison,run_id,api,timer,rep,seconds\n");
        text.push_str("c,r,CUDA,t,0,1.0\n");
        let err = parse_rows::<SampleRow>(Path::new("x.csv"), text.as_bytes()).unwrap_err();
        assert!(matches!(err, ExportError::Schema { .. }), "{err:?}");
    }

    #[test]
    fn malformed_number_is_reported_with_line_and_column() {
        // Row 2 spans two physical lines (a quoted newline), so the bad row starts on line 5.
        let text = "run_id,comparison,side,api,timer,rep,seconds\n\
                    r,c,A,CUDA,device-event,0,0.5\n\
                    r,\"multi\nline\",A,CUDA,device-event,1,0.5\n\
                    r,c,A,CUDA,device-event,2,fast\n";
        let err = parse_rows::<SampleRow>(Path::new("runs/s.csv"), text.as_bytes()).unwrap_err();
        let (line, message) = csv_error(&err);
        assert_eq!(line, 5, "{message}");
        assert!(message.contains("column `seconds`"), "{message}");
        assert!(err.to_string().starts_with("runs/s.csv:5: "), "{err}");
    }

    /// The line and message of `err`, which must be a CSV error.
    fn csv_error(err: &ExportError) -> (u64, &str) {
        match err {
            ExportError::Csv { line, message, .. } => (*line, message),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn bad_enum_value_is_reported_with_its_line() {
        let mut bytes = render(&[measurement("a", "CUDA")]).unwrap();
        let text = String::from_utf8(bytes.clone())
            .unwrap()
            .replace(",ok,", ",fine,");
        bytes = text.into_bytes();
        let err = parse_rows::<MeasurementRow>(Path::new("m.csv"), &bytes).unwrap_err();
        let (line, message) = csv_error(&err);
        assert_eq!(line, 2);
        assert!(message.contains("unknown variant `fine`"), "{message}");
    }

    #[test]
    fn short_row_is_reported() {
        let text = "run_id,comparison,side,api,timer,rep,seconds\nr,c,CUDA\n";
        let err = parse_rows::<SampleRow>(Path::new("s.csv"), text.as_bytes()).unwrap_err();
        let (line, message) = csv_error(&err);
        assert_eq!(line, 2);
        assert!(message.contains("3 fields"), "{message}");
    }

    #[test]
    fn missing_file_is_an_io_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("absent.csv");
        let err = read_rows::<SampleRow>(&path).unwrap_err();
        assert!(matches!(&err, ExportError::Io { path: p, .. } if p == &path));
    }

    #[test]
    fn merge_concatenates_in_order_and_checks_schemas() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.csv");
        let b = dir.path().join("b.csv");
        write_rows(&a, &[sample(0), sample(1)]).unwrap();
        write_rows(&b, &[sample(2)]).unwrap();
        let out = dir.path().join("out/merged.csv");
        let n = merge_files::<SampleRow>(&[a.clone(), b.clone()], &out).unwrap();
        assert_eq!(n, 3);
        assert_eq!(
            read_rows::<SampleRow>(&out).unwrap(),
            vec![sample(0), sample(1), sample(2)]
        );

        // The output now exists: a second merge into it is refused.
        let err = merge_files::<SampleRow>(std::slice::from_ref(&a), &out).unwrap_err();
        assert!(matches!(err, ExportError::OutputExists { .. }), "{err:?}");

        // A foreign input fails the whole merge and writes nothing.
        let pr = dir.path().join("pr.csv");
        write_rows(&pr, &[pr_row()]).unwrap();
        let out2 = dir.path().join("merged2.csv");
        let err = merge_files::<SampleRow>(&[a.clone(), pr.clone()], &out2).unwrap_err();
        assert!(matches!(&err, ExportError::Schema { path, .. } if path == &pr));
        assert!(!out2.exists());
    }

    #[test]
    fn merge_refuses_output_that_is_an_input() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.csv");
        write_rows(&a, &[sample(0)]).unwrap();
        let err = merge_files::<SampleRow>(std::slice::from_ref(&a), &a).unwrap_err();
        assert!(matches!(err, ExportError::OutputIsInput { .. }), "{err:?}");
        // The same file through another spelling of its path.
        let other = dir.path().join(".").join("a.csv");
        let err = merge_files::<SampleRow>(std::slice::from_ref(&a), &other).unwrap_err();
        assert!(matches!(err, ExportError::OutputIsInput { .. }), "{err:?}");
        assert_eq!(read_rows::<SampleRow>(&a).unwrap(), vec![sample(0)]);
    }

    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<String>(),
            "[a-z0-9 ,;:=|\"'\n\r\t#-]{0,12}",
            Just(String::new()),
        ]
    }

    fn float() -> impl Strategy<Value = f64> {
        use prop::num::f64 as f;
        f::POSITIVE | f::NEGATIVE | f::NORMAL | f::SUBNORMAL | f::ZERO | f::INFINITE
    }

    fn status() -> impl Strategy<Value = Status> {
        prop_oneof![
            Just(Status::Ok),
            Just(Status::VerifyFailed),
            Just(Status::BuildFailed),
            Just(Status::LaunchFailed),
        ]
    }

    /// One of `all`, chosen by a generated number (the enums of a row are few).
    fn pick<T: Copy>(all: &[T], i: u32) -> T {
        all[i as usize % all.len()]
    }

    fn any_measurement() -> impl Strategy<Value = MeasurementRow> {
        use prop::collection::vec;
        (
            vec(text(), 18),
            vec(any::<u64>(), 4),
            vec(any::<u32>(), 5),
            vec(float(), 11),
            any::<bool>(),
            status(),
        )
            .prop_map(|(s, l, u, f, verified, status)| {
                let mut s = s.into_iter();
                let mut s = move || s.next().unwrap();
                MeasurementRow {
                    run_id: s(),
                    study: s(),
                    comparison: s(),
                    api: pick(Api::VARIANTS, u[0]),
                    device: s(),
                    platform: s(),
                    driver: s(),
                    api_version: s(),
                    family: pick(FamilyId::all(), u[1]),
                    variant: s(),
                    size: s(),
                    elements: l[0],
                    local_size: u[0],
                    groups: u[1],
                    global_size: l[1],
                    local_y: u[3],
                    groups_y: u[4],
                    unroll: s(),
                    flags: s(),
                    timer: pick(TimerKind::VARIANTS, u[2]),
                    warmup: u[2],
                    reps: u[3],
                    median_s: f[0],
                    min_s: f[1],
                    mean_s: f[2],
                    mad_s: f[3],
                    ci_lo_s: f[4],
                    ci_hi_s: f[5],
                    outliers: u[4],
                    metric: f[6],
                    metric_unit: pick(Metric::VARIANTS, u[3]),
                    metric_ci_lo: f[7],
                    metric_ci_hi: f[8],
                    bytes: l[2],
                    flops: l[3],
                    peak_gbs: Some(f[9]),
                    verified,
                    max_error: f[10],
                    status,
                    error: s(),
                    sweep_param: s(),
                    sweep_value: s(),
                    wait_mode: Some(crate::rows::WaitMode::Spin),
                    queued_to_submit_s: Some(2.5e-6),
                    submit_to_start_s: None,
                    turn: Some(1),
                    levels: None,
                    front_end: None,
                    kernel_work_group_limit: None,
                    registers: None,
                    spill_bytes: None,
                    shared_bytes: None,
                }
            })
    }

    fn any_pr() -> impl Strategy<Value = PrRow> {
        use prop::collection::vec;
        (
            vec(text(), 15),
            vec(any::<u32>(), 2),
            vec(float(), 5),
            vec(any::<bool>(), 3),
        )
            .prop_map(|(s, u, f, b)| {
                let mut s = s.into_iter();
                let mut s = move || s.next().unwrap();
                PrRow {
                    run_id: s(),
                    study: s(),
                    comparison: s(),
                    device_a: s(),
                    device_b: s(),
                    api_a: pick(Api::VARIANTS, u[0]),
                    api_b: pick(Api::VARIANTS, u[1]),
                    family: pick(FamilyId::all(), u[0]),
                    variant: s(),
                    size: s(),
                    local_size: u[0],
                    groups: u[1],
                    metric_unit: pick(Metric::VARIANTS, u[1]),
                    metric_a: f[0],
                    metric_b: f[1],
                    pr: f[2],
                    pr_ci_lo: f[3],
                    pr_ci_hi: f[4],
                    similar: b[0],
                    similar_tight: b[1],
                    fair: b[2],
                    differing_steps: s(),
                    timer: s(),
                    sweep_param: s(),
                    sweep_value: s(),
                }
            })
    }

    fn any_sample() -> impl Strategy<Value = SampleRow> {
        (
            text(),
            text(),
            any::<u32>(),
            any::<u32>(),
            any::<u32>(),
            any::<u32>(),
            float(),
        )
            .prop_map(
                |(run_id, comparison, side, api, timer, rep, seconds)| SampleRow {
                    run_id,
                    comparison,
                    side: pick(Side::VARIANTS, side),
                    api: pick(Api::VARIANTS, api),
                    timer: pick(TimerKind::VARIANTS, timer),
                    rep,
                    seconds,
                },
            )
    }

    /// Appends `rows` through a [`CsvAppender`] (reopening with resume halfway, as a resumed
    /// run does) and checks the file reads back identically, and that the in-memory render
    /// parses back identically too.
    fn round_trip<T>(rows: &[T]) -> Result<(), TestCaseError>
    where
        T: Serialize + DeserializeOwned + CsvSchema + PartialEq + std::fmt::Debug,
    {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rows.csv");
        let half = rows.len() / 2;
        let mut a = CsvAppender::<T>::open(&path, false).unwrap();
        for row in &rows[..half] {
            a.append(row).unwrap();
        }
        drop(a);
        let existing = read_to_append::<T>(&path, true).unwrap();
        prop_assert_eq!(existing.rows.len(), half);
        let mut a = CsvAppender::continue_file(&existing).unwrap();
        for row in &rows[half..] {
            a.append(row).unwrap();
        }
        prop_assert_eq!(&read_rows::<T>(&path).unwrap(), rows);
        let bytes = render(rows).unwrap();
        prop_assert_eq!(&parse_rows::<T>(&path, &bytes).unwrap(), rows);
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn measurement_rows_round_trip(rows in prop::collection::vec(any_measurement(), 0..4)) {
            round_trip(&rows)?;
        }

        #[test]
        fn pr_rows_round_trip(rows in prop::collection::vec(any_pr(), 0..4)) {
            round_trip(&rows)?;
        }

        #[test]
        fn sample_rows_round_trip(rows in prop::collection::vec(any_sample(), 0..6)) {
            round_trip(&rows)?;
        }
    }
}
