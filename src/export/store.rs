//! Where a session's rows go: a [`Sink`] takes each finished comparison as a unit. The CSV
//! store is the durable one (resume reads it back); the session's tests keep rows in memory.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::csv::{read_folder_rows, read_to_append, render_with, CsvAppender, Existing};
use super::folder::{short_hash, FolderIdentity, IDENTITY_FILE};
use super::json::write_json_atomic;
use super::safe::{self, LockCheck};
use super::ExportError;
use crate::rows::{ComparisonRows, MeasurementRow, PrRow, SampleRow, Side, Status};
use crate::rows::{TimingRow, MEASUREMENTS_CSV, PRS_CSV, SAMPLES_CSV, TIMINGS_CSV};
use crate::stats;

pub trait Sink {
    /// How many sides of `comparison` are already stored (so `--resume` skips it).
    fn stored_sides(&self, _comparison: &str) -> usize {
        0
    }
    /// Stores one comparison whole, or nothing of it.
    fn record(&mut self, rows: &ComparisonRows) -> Result<(), ExportError>;
}

/// Comparisons complete in the output, by name, with their sides.
type Done = HashMap<String, usize>;

/// The three CSVs of an output folder, appended after every comparison.
pub struct CsvStore {
    pub dir: PathBuf,
    measurements: CsvAppender<MeasurementRow>,
    prs: CsvAppender<PrRow>,
    samples: CsvAppender<SampleRow>,
    /// What `--resume` skips.
    done: Done,
    /// Comparisons of a resumed folder that were incomplete or had failed, and why.
    pub remeasured: Vec<String>,
    /// The measurement and PR rows a resumed folder already held and keeps, in file order.
    pub kept: (Vec<MeasurementRow>, Vec<PrRow>),
    /// The earlier `timings.csv` rows of the kept comparisons, in file order (the file is
    /// rewritten whole at the run's end), or why they cannot be read.
    pub kept_timings: Result<Vec<TimingRow>, ExportError>,
    guards: Guards,
}

/// What keeps a folder's rows honest: the identity that records each comparison's row hash
/// (rewritten as comparisons are written), and the lock checked before every write.
#[derive(Debug, Default)]
pub struct Guards {
    /// The folder's identity, with the row hashes a resumed folder recorded.
    pub identity: Option<FolderIdentity>,
    pub lock: Option<LockCheck>,
}

impl CsvStore {
    /// Opens the three CSVs in `dir` for runs of `sides` sides. Without `resume`, non-empty
    /// files are refused; with it, only whole, successful comparisons count as done, and the
    /// others' rows are dropped to be measured again, each named in `remeasured`.
    pub fn open(dir: &Path, resume: bool, sides: usize) -> Result<Self, ExportError> {
        safe::prepare_dir(dir, true)?;
        safe::probe_writable(dir)?;
        Self::open_guarded(dir, resume, sides, Guards::default())
    }

    /// [`CsvStore::open`] of a `dir` the caller prepared, with `guards`: a resumed folder whose
    /// rows `verify` refuses is left untouched; each later write checks the lock and records
    /// its rows' hash.
    pub fn open_guarded(
        dir: &Path,
        resume: bool,
        sides: usize,
        mut guards: Guards,
    ) -> Result<Self, ExportError> {
        let stored = Stored::read(dir, resume)?;
        let (order, rows) = stored.by_comparison();
        let (done, remeasured) = audit(&order, &rows, sides);
        if let (true, Some(identity)) = (resume, &mut guards.identity) {
            verify(dir, &rows, &done, &identity.rows)?;
            identity.rows.retain(|c, _| done.contains_key(c));
        }
        guards.lock.as_ref().map_or(Ok(()), LockCheck::still_held)?;
        let kept = stored.keep_only(&done)?;
        let measurements = CsvAppender::continue_file(&kept.measurements)?;
        let prs = CsvAppender::continue_file(&kept.prs)?;
        let samples = CsvAppender::continue_file(&kept.samples)?;
        // Only once the folder is accepted: a refused run leaves its identity as it was.
        if let Some(identity) = &guards.identity {
            write_json_atomic(&dir.join(IDENTITY_FILE), identity)?;
        }
        Ok(CsvStore {
            dir: dir.to_path_buf(),
            measurements,
            prs,
            samples,
            done,
            remeasured,
            kept_timings: kept_timings(dir, &kept.measurements.rows),
            kept: (kept.measurements.rows, kept.prs.rows),
            guards,
        })
    }

    /// Records the hash of `rows` in the identity before they are written: a kill between
    /// the two leaves a hash without rows, which a resume measures again, never rows
    /// without a hash, which it would refuse.
    fn note_hash(&mut self, rows: &ComparisonRows) -> Result<(), ExportError> {
        let Some(identity) = &mut self.guards.identity else {
            return Ok(());
        };
        let Some(name) = rows.measurements.first().map(|m| m.comparison.clone()) else {
            return Ok(());
        };
        let hash = rows_hash(&rows.measurements, &rows.samples, rows.pr.as_ref())?;
        identity.rows.insert(name, hash);
        write_json_atomic(&self.dir.join(IDENTITY_FILE), identity)
    }
}

impl Sink for CsvStore {
    fn stored_sides(&self, comparison: &str) -> usize {
        self.done.get(comparison).copied().unwrap_or(0)
    }

    /// Writes one comparison's rows as a unit, one write a file: samples, the PR, and last the
    /// measurements, which `--resume` reads to know what is done. A failed write cuts all three
    /// back, so only whole comparisons stay; a kill between writes is repaired on resume.
    fn record(&mut self, rows: &ComparisonRows) -> Result<(), ExportError> {
        self.guards
            .lock
            .as_ref()
            .map_or(Ok(()), LockCheck::still_held)?;
        self.note_hash(rows)?;
        let marks = (
            self.samples.byte_len()?,
            self.measurements.byte_len()?,
            self.prs.byte_len()?,
        );
        let written = self
            .samples
            .append_all(&rows.samples)
            .and_then(|_| self.prs.append_all(rows.pr.as_slice()))
            .and_then(|_| self.measurements.append_all(&rows.measurements));
        if written.is_err() {
            // The first error is the one to report; these cuts are best effort.
            let _ = self.samples.roll_back_to(marks.0);
            let _ = self.measurements.roll_back_to(marks.1);
            let _ = self.prs.roll_back_to(marks.2);
        }
        written
    }
}

/// The earlier timing rows of the comparisons in `kept`; none are read where none are kept.
fn kept_timings(dir: &Path, kept: &[MeasurementRow]) -> Result<Vec<TimingRow>, ExportError> {
    let names: BTreeSet<&str> = kept.iter().map(|m| m.comparison.as_str()).collect();
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let earlier: Vec<TimingRow> = read_folder_rows(&dir.join(TIMINGS_CSV))?;
    Ok(earlier
        .into_iter()
        .filter(|t| names.contains(t.comparison.as_str()))
        .collect())
}

/// What a resumed comparison's rows say that its samples do not (each side's median time and
/// metric, and the PR, derived again as a run derives them); `None` when they agree.
fn disagreement(
    measurements: &[&MeasurementRow],
    samples: &[&SampleRow],
    pr: Option<&PrRow>,
) -> Option<String> {
    let mut times_of = Vec::new();
    // A run writes side A's measurement row first.
    for (m, side) in measurements.iter().zip([Side::A, Side::B]) {
        let times: Vec<f64> = samples
            .iter()
            .filter(|s| s.side == side && s.timer == m.timer)
            .map(|s| s.seconds)
            .filter(|x| x.is_finite() && *x > 0.0)
            .collect();
        if times.len() != m.reps as usize {
            return Some(format!(
                "{} row counts {} repetitions, its samples {}",
                m.api,
                m.reps,
                times.len()
            ));
        }
        // Point values only: the bootstrap would cost seconds a comparison and check no more.
        let Some(median) = stats::median(&times) else {
            return Some(format!("{} has no usable sample", m.api));
        };
        if !same(m.median_s, median) {
            return Some(format!(
                "{} median {:e} s, its samples give {:e} s",
                m.api, m.median_s, median
            ));
        }
        if !same(m.metric, m.metric_at(median)) {
            return Some(format!(
                "{} metric {}, its samples give {}",
                m.api,
                m.metric,
                m.metric_at(median)
            ));
        }
        times_of.push(times);
    }
    let (Some(p), [a, b], [ta, tb]) = (pr, measurements, times_of.as_slice()) else {
        return None;
    };
    let work = |m: &MeasurementRow| m.metric_unit.work(m.bytes, m.flops);
    match stats::point_ratio(ta, work(a), tb, work(b)) {
        Some(r) if same(p.pr, r) && same(p.metric_a, a.metric) && same(p.metric_b, b.metric) => {
            None
        }
        Some(r) => Some(format!("PR {}, its samples give {}", p.pr, r)),
        None => Some(format!("PR {}, its samples give none", p.pr)),
    }
}

/// Equal up to the last bits a CSV round trip may change.
fn same(stored: f64, derived: f64) -> bool {
    stored == derived || (stored - derived).abs() <= 1e-9 * derived.abs().max(f64::MIN_POSITIVE)
}

/// The hash of one comparison's rows as the CSV files hold them: samples, PR, measurements.
fn rows_hash(
    measurements: &[impl serde::Serialize],
    samples: &[impl serde::Serialize],
    pr: Option<&PrRow>,
) -> Result<String, ExportError> {
    let bytes = [
        render_with(samples, &[])?,
        render_with(pr.as_slice(), &[])?,
        render_with(measurements, &[])?,
    ];
    Ok(short_hash(&bytes.concat()))
}

/// Refuses a resumed folder whose whole comparisons are not what runs wrote: one the identity
/// has no hash of (rows copied under a name that never ran), rows whose median, metric or PR
/// their samples do not give, or rows whose hash is not the one recorded when written.
fn verify(
    dir: &Path,
    rows: &HashMap<&str, Rows>,
    done: &Done,
    hashes: &BTreeMap<String, String>,
) -> Result<(), ExportError> {
    let mut names: Vec<&String> = done.keys().collect();
    names.sort();
    for c in names {
        // A comparison is done only when it has measurement rows: it has a group.
        let r = &rows[c.as_str()];
        let (m, s, p) = (&r.measurements, &r.samples, r.prs.first().copied());
        let refuse = |what: String| ExportError::Tampered {
            dir: dir.to_path_buf(),
            comparison: c.clone(),
            what,
        };
        let Some(recorded) = hashes.get(c) else {
            return Err(refuse(format!(
                "no run of this folder wrote it ({IDENTITY_FILE} records no rows of it)"
            )));
        };
        if let Some(what) = disagreement(m, s, p) {
            return Err(refuse(format!(
                "its rows disagree with its samples: {what}"
            )));
        }
        if &rows_hash(m, s, p)? != recorded {
            return Err(refuse(
                "its rows were changed after they were written (their hash is not the one \
                 recorded)"
                    .into(),
            ));
        }
    }
    Ok(())
}

/// The three files of a resumed folder, read once, each with what its appender must know.
#[derive(Debug)]
struct Stored {
    measurements: Existing<MeasurementRow>,
    prs: Existing<PrRow>,
    samples: Existing<SampleRow>,
}

impl Stored {
    /// Reads the three files; without `resume` a file must be empty or missing.
    fn read(dir: &Path, resume: bool) -> Result<Stored, ExportError> {
        Ok(Stored {
            measurements: read_to_append(&dir.join(MEASUREMENTS_CSV), resume)?,
            prs: read_to_append(&dir.join(PRS_CSV), resume)?,
            samples: read_to_append(&dir.join(SAMPLES_CSV), resume)?,
        })
    }

    fn keep_only(self, done: &Done) -> Result<Stored, ExportError> {
        let is_done = |c: &String| done.contains_key(c);
        Ok(Stored {
            measurements: self.measurements.retain(|r| is_done(&r.comparison))?,
            prs: self.prs.retain(|r| is_done(&r.comparison))?,
            samples: self.samples.retain(|r| is_done(&r.comparison))?,
        })
    }

    /// Each comparison's rows, and the comparisons in the order they first appear (in the
    /// measurements, the PRs, then the samples).
    fn by_comparison(&self) -> (Vec<&str>, HashMap<&str, Rows<'_>>) {
        let mut rows: HashMap<&str, Rows> = HashMap::new();
        for m in &self.measurements.rows {
            rows.entry(&m.comparison).or_default().measurements.push(m);
        }
        for p in &self.prs.rows {
            rows.entry(&p.comparison).or_default().prs.push(p);
        }
        for s in &self.samples.rows {
            rows.entry(&s.comparison).or_default().samples.push(s);
        }
        let mut seen = HashSet::new();
        let order = (self.measurements.rows.iter().map(|m| &m.comparison))
            .chain(self.prs.rows.iter().map(|p| &p.comparison))
            .chain(self.samples.rows.iter().map(|s| &s.comparison))
            .map(String::as_str)
            .filter(|c| seen.insert(*c))
            .collect();
        (order, rows)
    }
}

/// One comparison's rows in the three files, each in file order.
#[derive(Debug, Default)]
struct Rows<'a> {
    measurements: Vec<&'a MeasurementRow>,
    prs: Vec<&'a PrRow>,
    samples: Vec<&'a SampleRow>,
}

/// The comparisons that are whole (one verified, timed measurement row per side, one PR row for
/// two sides, samples of every side), and why each other one is measured again: rows deleted by
/// hand, a kill between two writes, two runs of one comparison or a failure break it.
fn audit(order: &[&str], rows: &HashMap<&str, Rows>, sides: usize) -> (Done, Vec<String>) {
    let (mut done, mut remeasured) = (HashMap::new(), Vec::new());
    for &c in order {
        match incomplete(&rows[c], sides) {
            Some(reason) => remeasured.push(format!("{c}: {reason}; measured again")),
            None => {
                done.insert(c.to_string(), sides);
            }
        }
    }
    (done, remeasured)
}

/// Why a comparison's rows are not a whole, successful comparison; `None` when they are.
fn incomplete(rows: &Rows, sides: usize) -> Option<String> {
    let measured = &rows.measurements;
    if measured.is_empty() {
        return Some("PR or sample rows without measurement rows (interrupted)".into());
    }
    if measured.len() != sides {
        return Some(format!("{} of {sides} measurement rows", measured.len()));
    }
    if let Some(failed) = measured.iter().find(|r| r.status != Status::Ok) {
        return Some(format!("{} failed before ({})", failed.api, failed.status));
    }
    let (prs, pr_expected) = (rows.prs.len(), usize::from(sides == 2));
    if prs != pr_expected {
        return Some(format!("{prs} PR rows, expected {pr_expected}"));
    }
    let sampled: HashSet<_> = rows.samples.iter().map(|s| s.side).collect();
    if sampled.len() != sides {
        return Some(format!("samples of {} of {sides} sides", sampled.len()));
    }
    None
}
