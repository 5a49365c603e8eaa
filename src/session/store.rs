//! Where a session's rows go: a [`Sink`] takes each finished comparison as a unit. The CSV
//! store is the durable one (resume reads it back); the session's tests keep rows in memory.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::folder::{short_hash, FolderIdentity, LockCheck, IDENTITY_FILE};
use crate::export::csv::{csv_bytes, read_to_append, CsvAppender, Existing};
use crate::export::json::write_json_atomic;
use crate::export::{safe, ExportError};
use crate::rows::{MeasurementRow, PrRow, SampleRow, Status};
use crate::rows::{MEASUREMENTS_CSV, PRS_CSV, SAMPLES_CSV};

/// Everything one comparison produced: one measurement row per side, the raw samples of the
/// sides that were timed, and the PR when both sides were.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ComparisonRows {
    pub measurements: Vec<MeasurementRow>,
    pub samples: Vec<SampleRow>,
    pub pr: Option<PrRow>,
}

/// A destination of finished comparisons.
pub trait Sink {
    /// How many sides of `comparison` are already stored (so `--resume` skips it).
    fn stored_sides(&self, _comparison: &str) -> usize {
        0
    }
    /// Stores one comparison whole, or nothing of it.
    fn record(&mut self, rows: &ComparisonRows) -> Result<(), ExportError>;
}

/// The three CSVs of an output folder, appended after every comparison.
pub struct CsvStore {
    pub dir: PathBuf,
    measurements: CsvAppender<MeasurementRow>,
    prs: CsvAppender<PrRow>,
    samples: CsvAppender<SampleRow>,
    /// Comparisons already complete in the output (sides present), for `--resume`.
    done: HashMap<String, usize>,
    remeasured: Vec<String>,
    /// The measurement and PR rows a resumed folder already held and keeps, in file order.
    kept: (Vec<MeasurementRow>, Vec<PrRow>),
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

impl Guards {
    fn check_lock(&self) -> Result<(), ExportError> {
        self.lock.as_ref().map_or(Ok(()), LockCheck::still_held)
    }
}

impl CsvStore {
    /// Open (or, with `resume`, reopen) the three CSVs in `dir` for runs of `sides` sides.
    /// Without `resume`, existing non-empty files are refused rather than overwritten. With
    /// it, every comparison is audited across the three files (`audit`): only whole,
    /// successful ones count as done; the rows of the others are dropped and they are
    /// measured again, each named in [`CsvStore::remeasured`].
    pub fn open(dir: &Path, resume: bool, sides: usize) -> Result<Self, ExportError> {
        safe::prepare_dir(dir, true)?;
        safe::probe_writable(dir)?;
        Self::open_guarded(dir, resume, sides, Guards::default())
    }

    /// [`CsvStore::open`] with `guards`: on resume every whole comparison must have the row
    /// hash the identity recorded and rows that its own samples give again, or the folder is
    /// refused untouched; each later write checks the lock and records its rows' hash. The
    /// caller has prepared `dir` and found it writable, as [`CsvStore::open`] does.
    pub fn open_guarded(
        dir: &Path,
        resume: bool,
        sides: usize,
        mut guards: Guards,
    ) -> Result<Self, ExportError> {
        // A resumed folder's rows are read once: audited, checked against the hashes its
        // runs recorded, rewritten without the comparisons that are not whole, and appended to.
        let stored = Stored::read(dir, resume)?;
        let (order, rows) = stored.by_comparison();
        let audit = audit(&order, &rows, sides);
        if let (true, Some(identity)) = (resume, &mut guards.identity) {
            verify(dir, &rows, &audit.done, &identity.rows)?;
            identity.rows.retain(|c, _| audit.done.contains_key(c));
        }
        guards.check_lock()?;
        let kept = stored.keep_only(&audit.done)?;
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
            done: audit.done,
            remeasured: audit.remeasured,
            kept: (kept.measurements.rows, kept.prs.rows),
            guards,
        })
    }

    /// Comparisons of a resumed folder that were incomplete or had failed, with the reason;
    /// they are measured again.
    pub fn remeasured(&self) -> &[String] {
        &self.remeasured
    }

    /// The measurement and PR rows of the whole comparisons a resumed folder held when it
    /// was opened, in file order (none for a new folder): with what the run adds, the folder.
    pub fn kept(&self) -> (&[MeasurementRow], &[PrRow]) {
        (&self.kept.0, &self.kept.1)
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
        let hash = rows_hash(
            &rows.measurements.iter().collect::<Vec<_>>(),
            &rows.samples.iter().collect::<Vec<_>>(),
            rows.pr.as_ref(),
        )?;
        identity.rows.insert(name, hash);
        write_json_atomic(&self.dir.join(IDENTITY_FILE), identity)
    }
}

impl Sink for CsvStore {
    fn stored_sides(&self, comparison: &str) -> usize {
        self.done.get(comparison).copied().unwrap_or(0)
    }

    /// Writes one comparison's rows to the three files as a unit: samples, the PR, and
    /// last the measurements, which `--resume` reads to know what is done (each file gets
    /// one write). When a write fails, all three files are cut back to where they were, so
    /// the output holds whole comparisons only and a resumed run measures the failed one
    /// again; a kill between the writes is repaired on resume (`Stored::keep_only`).
    fn record(&mut self, rows: &ComparisonRows) -> Result<(), ExportError> {
        self.guards.check_lock()?;
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

/// The hash of one comparison's rows as the CSV files hold them (no header): samples, PR,
/// measurements.
pub fn rows_hash(
    measurements: &[&MeasurementRow],
    samples: &[&SampleRow],
    pr: Option<&PrRow>,
) -> Result<String, ExportError> {
    let parts = [
        csv_bytes(samples, &[]),
        csv_bytes(pr.as_slice(), &[]),
        csv_bytes(measurements, &[]),
    ];
    let bytes: Vec<Vec<u8>> =
        parts
            .into_iter()
            .collect::<Result<_, _>>()
            .map_err(|e| ExportError::Render {
                format: "csv",
                message: e.to_string(),
            })?;
    Ok(short_hash(&bytes.concat()))
}

/// Refuses a resumed folder whose whole comparisons are not what runs wrote: a comparison
/// the identity has no hash of (rows copied under a name that never ran), rows whose median,
/// metric or PR their own samples do not give, or rows whose hash differs from the one
/// recorded when they were written.
fn verify(
    dir: &Path,
    rows: &HashMap<&str, Rows>,
    done: &HashMap<String, usize>,
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
        if let Some(what) = super::analysis::disagreement(m, s, p) {
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

/// What a resumed folder holds: the comparisons that are done, and why the others are not.
#[derive(Debug, Default)]
struct Audit {
    done: HashMap<String, usize>,
    remeasured: Vec<String>,
}

/// The three files of a resumed folder, read once: each one's rows, with what its appender
/// must know of it.
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

    /// Drops every row of a comparison that is not done from the three files, rewriting a
    /// file only when it loses a row.
    fn keep_only(self, done: &HashMap<String, usize>) -> Result<Stored, ExportError> {
        let is_done = |c: &String| done.contains_key(c);
        Ok(Stored {
            measurements: self.measurements.retain(|r| is_done(&r.comparison))?,
            prs: self.prs.retain(|r| is_done(&r.comparison))?,
            samples: self.samples.retain(|r| is_done(&r.comparison))?,
        })
    }

    /// Each comparison's rows, and the comparisons in the order they first appear: in the
    /// measurements, then the PRs, then the samples.
    fn by_comparison(&self) -> (Vec<&str>, HashMap<&str, Rows<'_>>) {
        let mut by = (Vec::new(), HashMap::new());
        for m in &self.measurements.rows {
            group(&mut by, &m.comparison).measurements.push(m);
        }
        for p in &self.prs.rows {
            group(&mut by, &p.comparison).prs.push(p);
        }
        for s in &self.samples.rows {
            group(&mut by, &s.comparison).samples.push(s);
        }
        by
    }
}

/// The rows of comparison `c`, noted in the order when it is new.
fn group<'r, 'a>(
    (order, rows): &'r mut (Vec<&'a str>, HashMap<&'a str, Rows<'a>>),
    c: &'a str,
) -> &'r mut Rows<'a> {
    rows.entry(c).or_insert_with(|| {
        order.push(c);
        Rows::default()
    })
}

/// One comparison's rows in the three files, each in file order.
#[derive(Debug, Default)]
struct Rows<'a> {
    measurements: Vec<&'a MeasurementRow>,
    prs: Vec<&'a PrRow>,
    samples: Vec<&'a SampleRow>,
}

/// Decides from the three files' rows, comparison by comparison, whether it is whole:
/// one measurement row per side, all verified and timed, one PR row when there are two
/// sides, and samples of every side. Rows deleted by hand, a kill between two writes, two
/// runs that wrote the same comparison, or a configuration that failed all make it
/// incomplete.
fn audit(order: &[&str], rows: &HashMap<&str, Rows>, sides: usize) -> Audit {
    let mut audit = Audit::default();
    for &c in order {
        match incomplete(&rows[c], sides) {
            Some(reason) => audit
                .remeasured
                .push(format!("{c}: {reason}; measured again")),
            None => {
                audit.done.insert(c.to_string(), sides);
            }
        }
    }
    audit
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
    let sampled_sides = rows
        .samples
        .iter()
        .map(|s| s.side)
        .collect::<HashSet<_>>()
        .len();
    if sampled_sides != sides {
        return Some(format!("samples of {sampled_sides} of {sides} sides"));
    }
    None
}
