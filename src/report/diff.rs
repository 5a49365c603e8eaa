//! `clvscu diff OLD NEW`: comparisons matched by study and name, and per comparison how the
//! PR and each side's metric moved, with the significance test of [`crate::stats::change`]
//! on the raw samples. For a new driver, a new GPU or a kernel change.

use std::collections::{btree_map, BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::rows::{MeasurementRow, PrRow, SampleRow, Side, Status, SAMPLES_CSV};
use crate::stats::change::{compare_ratio, compare_times, Change, ChangeTest};
use crate::stats::median;

use super::doc::{Doc, Table};
use super::load::{self, RunFolder};
use super::tables::{full_name, pr3, sig, with_sides};
use super::ReportError;

/// A row of `diff.csv`: the PR or one side's metric of one comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiffRow {
    pub study: String,
    pub comparison: String,
    /// `PR`, or the side and its API (`A: OpenCL`).
    pub quantity: String,
    pub unit: String,
    pub old: f64,
    pub new: f64,
    /// `new / old`: above 1 the new run performs better (for the PR: side A gained on B).
    pub ratio: f64,
    pub change_pct: f64,
    /// Bootstrap 95% CI of `ratio` and the p-value from the raw samples; NaN without samples.
    pub ci_lo: f64,
    pub ci_hi: f64,
    pub p_value: f64,
    /// `improved`, `regressed`, `no change`, `no change (within noise)`, or why there is no
    /// verdict.
    pub verdict: String,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Diff {
    pub rows: Vec<DiffRow>,
    /// `study: comparison` only in NEW.
    pub added: Vec<String>,
    /// `study: comparison` only in OLD.
    pub removed: Vec<String>,
    /// A side that fails in NEW but not in OLD (`study: comparison, A: ok → verify-failed`,
    /// or `… (new) → build-failed` for a comparison only in NEW).
    pub new_failures: Vec<String>,
    /// Things the reader must know (duplicates, missing samples).
    pub notes: Vec<String>,
    pub test: ChangeTest,
}

/// One comparison of one run folder: its measurements by side and its PR.
struct Entry<'a> {
    folder: &'a RunFolder,
    sides: Vec<(Side, &'a MeasurementRow)>,
    pr: Option<&'a PrRow>,
}

type Key = (String, String);

/// Comparisons by `(study, full name)`; the first folder wins a duplicate, counted in `dups`.
fn index<'a>(folders: &'a [RunFolder], dups: &mut usize) -> BTreeMap<Key, Entry<'a>> {
    let mut out: BTreeMap<Key, Entry<'a>> = BTreeMap::new();
    for f in folders {
        let mut here: BTreeMap<Key, Entry<'a>> = BTreeMap::new();
        let key = |study: &str, comparison: &str, param: &str, value: &str| {
            (study.to_string(), full_name(comparison, param, value))
        };
        let empty = || Entry {
            folder: f,
            sides: Vec::new(),
            pr: None,
        };
        for (side, m) in with_sides(f.measurements()) {
            let k = key(&m.study, &m.comparison, &m.sweep_param, &m.sweep_value);
            here.entry(k).or_insert_with(empty).sides.push((side, m));
        }
        for p in f.prs() {
            let k = key(&p.study, &p.comparison, &p.sweep_param, &p.sweep_value);
            here.entry(k).or_insert_with(empty).pr = Some(p);
        }
        for (k, e) in here {
            if let btree_map::Entry::Vacant(v) = out.entry(k) {
                v.insert(e);
            } else {
                *dups += 1;
            }
        }
    }
    out
}

/// Raw samples of each folder by (run, comparison, side, timer), read once per folder.
type SampleCache = HashMap<PathBuf, HashMap<(String, String, Side, String), Vec<f64>>>;

fn samples_of(
    cache: &mut SampleCache,
    folder: &Path,
    m: &MeasurementRow,
    side: Side,
) -> Result<Vec<f64>, ReportError> {
    if !cache.contains_key(folder) {
        let mut map: HashMap<_, Vec<f64>> = HashMap::new();
        // Every raw sample (`samples.csv` or its `.gz`); none when the folder has none.
        let samples: Option<Vec<SampleRow>> = load::read_csv(folder, SAMPLES_CSV)?;
        for s in samples.unwrap_or_default() {
            map.entry((s.run_id, s.comparison, s.side, s.timer.to_string()))
                .or_default()
                .push(s.seconds);
        }
        cache.insert(folder.to_path_buf(), map);
    }
    let key = (
        m.run_id.clone(),
        m.comparison.clone(),
        side,
        m.timer.to_string(),
    );
    Ok(cache[folder].get(&key).cloned().unwrap_or_default())
}

fn row(key: &Key, quantity: String, unit: &str, old: f64, new: f64) -> DiffRow {
    DiffRow {
        study: key.0.clone(),
        comparison: key.1.clone(),
        quantity,
        unit: unit.to_string(),
        old,
        new,
        ratio: new / old,
        change_pct: (new / old - 1.0) * 100.0,
        ci_lo: f64::NAN,
        ci_hi: f64::NAN,
        p_value: f64::NAN,
        verdict: String::new(),
    }
}

/// Fills the statistics of `r` from `change`: of the times behind a metric (`invert`), or of
/// the PR itself.
fn apply(r: &mut DiffRow, change: Option<Change>, invert: bool) {
    let Some(c) = change else {
        r.verdict = "no verdict: raw samples missing".into();
        return;
    };
    // A metric is work / time: its CI is the time ratio's, inverted and scaled by the work per
    // run (the same in both runs unless the size changed).
    (r.ci_lo, r.ci_hi) = if invert {
        let k = r.ratio * c.ratio;
        (k / c.ci_hi, k / c.ci_lo)
    } else {
        (c.ci_lo, c.ci_hi)
    };
    r.p_value = c.p_value;
    r.verdict = c.verdict.as_str().to_string();
}

/// The rows of one comparison found in both: each side present and verified in both, then
/// the PR when both have one.
fn compare(
    key: &Key,
    (o, n): (&Entry, &Entry),
    test: &ChangeTest,
    samples: &mut SampleCache,
    out: &mut Vec<DiffRow>,
) -> Result<(), ReportError> {
    let mut times: Vec<(Side, Vec<f64>, Vec<f64>)> = Vec::new();
    for &(side, mo) in &o.sides {
        let Some(&(_, mn)) = n.sides.iter().find(|(s, _)| *s == side) else {
            continue;
        };
        let api = if mo.api == mn.api {
            mo.api.to_string()
        } else {
            format!("{} → {}", mo.api, mn.api)
        };
        let mut r = row(
            key,
            format!("{side}: {api}"),
            mo.metric_unit.unit(),
            mo.metric,
            mn.metric,
        );
        if mo.status != Status::Ok || mn.status != Status::Ok {
            r.verdict = format!("no verdict: {} → {}", mo.status, mn.status);
            out.push(r);
            continue;
        }
        let to = samples_of(samples, &o.folder.path, mo, side)?;
        let tn = samples_of(samples, &n.folder.path, mn, side)?;
        apply(&mut r, compare_times(&to, &tn, test), true);
        out.push(r);
        times.push((side, to, tn));
    }
    if let (Some(po), Some(pn)) = (o.pr, n.pr) {
        let mut r = row(key, "PR".into(), "", po.pr, pn.pr);
        let t = |s: Side| times.iter().find(|(x, ..)| *x == s);
        let change = match (t(Side::A), t(Side::B)) {
            (Some((_, ao, an)), Some((_, bo, bn))) => {
                let med = |v: &[f64]| median(v).unwrap_or(f64::NAN);
                let from_times = (med(bn) / med(bo)) / (med(an) / med(ao));
                compare_ratio((ao, an), (bo, bn), r.ratio / from_times, test)
            }
            _ => None,
        };
        apply(&mut r, change, false);
        out.push(r);
    }
    Ok(())
}

pub fn diff(old: &[PathBuf], new: &[PathBuf], test: &ChangeTest) -> Result<Diff, ReportError> {
    let (fo, fnew) = (load::load_tree(old)?, load::load_tree(new)?);
    let (mut dup_o, mut dup_n) = (0, 0);
    let (io, inew) = (index(&fo, &mut dup_o), index(&fnew, &mut dup_n));
    let mut d = Diff {
        test: *test,
        ..Diff::default()
    };
    for (dups, which) in [(dup_o, "OLD"), (dup_n, "NEW")] {
        if dups > 0 {
            d.notes.push(format!(
                "{dups} comparisons appear in several run folders of {which}: the first \
                 folder's rows (in path order) are compared"
            ));
        }
    }
    // One cache for both: a folder given as OLD and as NEW is read once.
    let mut samples = SampleCache::new();
    for (key, o) in &io {
        match inew.get(key) {
            Some(n) => compare(key, (o, n), test, &mut samples, &mut d.rows)?,
            None => d.removed.push(format!("{}: {}", key.0, key.1)),
        }
    }
    d.added = inew
        .keys()
        .filter(|k| !io.contains_key(*k))
        .map(|k| format!("{}: {}", k.0, k.1))
        .collect();
    d.new_failures = new_failures(&io, &inew);
    Ok(d)
}

/// Every side that fails in NEW and did not fail in OLD: it was ok there, or not there.
fn new_failures(io: &BTreeMap<Key, Entry>, inew: &BTreeMap<Key, Entry>) -> Vec<String> {
    let mut found = Vec::new();
    for (key, n) in inew {
        for &(side, mn) in n.sides.iter().filter(|(_, m)| m.status != Status::Ok) {
            let before = io
                .get(key)
                .and_then(|o| o.sides.iter().find(|(s, _)| *s == side))
                .map(|(_, mo)| mo.status);
            let was = match before {
                Some(Status::Ok) => Status::Ok.into(),
                Some(_) => continue,
                None => "(new)",
            };
            found.push(format!(
                "{}: {}, {side}: {was} → {}",
                key.0, key.1, mn.status
            ));
        }
    }
    found
}

fn pct(v: f64) -> String {
    if v.is_finite() {
        format!("{v:+.1}%")
    } else {
        "n/a".into()
    }
}

fn value(v: f64, unit: &str) -> String {
    if unit.is_empty() {
        pr3(v)
    } else {
        format!("{} {unit}", sig(v))
    }
}

pub fn doc(d: &Diff, old: &str, new: &str) -> Doc {
    let mut doc = Doc::default();
    doc.heading(1, format!("clvscu diff: {old} → {new}"));
    let t = d.test;
    doc.para(format!(
        "Ratios are new / old: above 1 the new run performs better (for the PR: side A gained \
         on side B). Significance from the raw samples: a permutation test of the medians \
         (p-value; a bootstrap of all four samples for the PR) and a bootstrap 95% CI of the \
         ratio, {} resamples. A change is called improved or regressed only when p < {} and \
         the whole CI lies beyond the ±{}% noise threshold.",
        t.resamples,
        t.significance,
        t.noise * 100.0
    ));
    for n in &d.notes {
        doc.para(n.clone());
    }
    let count = |v: &str| d.rows.iter().filter(|r| r.verdict == v).count();
    doc.para(format!(
        "{} comparisons in both; {} quantities improved, {} regressed, {} no change, {} within \
         noise; {} comparisons only in OLD, {} only in NEW.",
        d.rows
            .iter()
            .map(|r| (&r.study, &r.comparison))
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
        count("improved"),
        count("regressed"),
        count("no change"),
        count("no change (within noise)"),
        d.removed.len(),
        d.added.len()
    ));
    let mut t = Table::new(&[
        ("study", false),
        ("comparison", false),
        ("quantity", false),
        ("old", true),
        ("new", true),
        ("new/old", true),
        ("change", true),
        ("95% CI of new/old", true),
        ("p", true),
        ("verdict", false),
    ]);
    for r in &d.rows {
        t.rows.push(vec![
            r.study.clone(),
            r.comparison.clone(),
            r.quantity.clone(),
            value(r.old, &r.unit),
            value(r.new, &r.unit),
            pr3(r.ratio),
            pct(r.change_pct),
            if r.ci_lo.is_finite() {
                format!("[{}, {}]", pr3(r.ci_lo), pr3(r.ci_hi))
            } else {
                "-".into()
            },
            if r.p_value < 0.001 {
                "< 0.001".into()
            } else if r.p_value.is_finite() {
                format!("{:.3}", r.p_value)
            } else {
                "-".into()
            },
            r.verdict.clone(),
        ]);
    }
    doc.heading(2, "Comparisons in both");
    doc.table(t, "No comparison is in both OLD and NEW.");
    for (title, list) in [
        ("New failures", &d.new_failures),
        ("Removed (only in OLD)", &d.removed),
        ("Added (only in NEW)", &d.added),
    ] {
        if !list.is_empty() {
            doc.heading(2, title);
            let mut t = Table::new(&[("comparison", false)]);
            t.rows = list.iter().map(|c| vec![c.clone()]).collect();
            doc.table(t, "");
        }
    }
    doc
}

/// `diff.csv`: one row per compared quantity.
pub fn csv(d: &Diff) -> Result<Vec<u8>, ReportError> {
    Ok(crate::export::csv::render(&d.rows)?)
}
