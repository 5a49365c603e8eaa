//! `clvscu shapes-rule`: the decision table of `matvec/auto` derived from a shape sweep (the
//! `shape-sweep` study's folder, with the vendor baselines beside it), and the two checks the
//! sweep answers: `auto` against cuBLAS SGEMV at every shape beyond the L2, and `auto` against
//! the read kernel at 2^28 floats.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::rules::{Key, Region, RuleTable};
use super::shapes::pick;
use crate::rows::{FamilyId, L2_BYTES};

/// The read kernel's check: `auto` at this many floats.
pub const READ_CHECK_FLOATS: u64 = 1 << 28;

/// Why a sweep could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error("{path}: {source}")]
    Csv { path: PathBuf, source: csv::Error },
    #[error("{path}: no column `{column}`")]
    Column { path: PathBuf, column: &'static str },
    #[error("{0}: no measurements.csv in this folder or below it")]
    NoMeasurements(PathBuf),
}

/// One verified side of one comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Side {
    pub run_id: String,
    pub comparison: String,
    pub api: String,
    pub device: String,
    pub family: String,
    pub variant: String,
    pub size: String,
    pub gbs: f64,
    /// The launch (work-items per group, groups) when the sweep swept it for this side (its
    /// row's `sweep_param` is `local` or `groups`); `None` at the variant's default launch.
    pub launch: Option<(u32, u32)>,
}

/// One candidate of a shape: a variant at its default launch, or at a swept one.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Candidate {
    pub variant: String,
    pub launch: Option<(u32, u32)>,
}

impl std::fmt::Display for Candidate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.launch {
            Some((local, groups)) => write!(f, "{}@{local}x{groups}", self.variant),
            None => f.write_str(&self.variant),
        }
    }
}

/// A swept launch from a measurements row: its work-group size and count when the row's
/// sweep parameter is one of them. Older sweeps, and rows without the columns, have none.
fn swept_launch(row: &BTreeMap<String, String>) -> Option<(u32, u32)> {
    let param = row.get("sweep_param")?;
    if param != "local" && param != "groups" {
        return None;
    }
    Some((
        row.get("local_size")?.parse().ok()?,
        row.get("groups")?.parse().ok()?,
    ))
}

impl Side {
    /// Rows x cols of a matvec size (`ROWSxCOLS`).
    pub fn shape(&self) -> Option<(u64, u64)> {
        let (r, c) = self.size.split_once('x')?;
        Some((r.parse().ok()?, c.parse().ok()?))
    }

    /// Whether this side is `matvec/auto`'s (its variant column names the algorithm that ran).
    pub fn is_auto(&self) -> bool {
        self.comparison.starts_with("matvec/auto/")
    }
}

/// A cuBLAS (or other vendor) baseline row of `baselines.csv`.
#[derive(Debug, Clone, PartialEq)]
pub struct Baseline {
    pub baseline: String,
    pub size: String,
    pub gbs: f64,
}

/// Everything a sweep folder holds: the verified sides of every `measurements.csv` under it
/// and the rows of every `baselines.csv`.
#[derive(Debug, Default)]
pub struct Sweep {
    pub sides: Vec<Side>,
    pub baselines: Vec<Baseline>,
}

fn files_named(dir: &Path, name: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            files_named(&p, name, out);
        } else if p.file_name().is_some_and(|n| n == name) {
            out.push(p);
        }
    }
}

/// The rows of a CSV file as column-name maps.
fn read_rows(path: &Path) -> Result<Vec<BTreeMap<String, String>>, SweepError> {
    let err = |source| SweepError::Csv {
        path: path.into(),
        source,
    };
    let mut reader = csv::Reader::from_path(path).map_err(err)?;
    // Read first: a header line that cannot be read is the error, as for any other line.
    reader.headers().map_err(err)?;
    reader.deserialize().collect::<Result<_, _>>().map_err(err)
}

fn column<'a>(
    row: &'a BTreeMap<String, String>,
    path: &Path,
    column: &'static str,
) -> Result<&'a str, SweepError> {
    row.get(column)
        .map(String::as_str)
        .ok_or_else(|| SweepError::Column {
            path: path.into(),
            column,
        })
}

impl Sweep {
    /// Reads every `measurements.csv` and `baselines.csv` under `dir`; sides that did not
    /// verify or did not finish are left out.
    pub fn read(dir: &Path) -> Result<Sweep, SweepError> {
        let mut found = Vec::new();
        files_named(dir, "measurements.csv", &mut found);
        if found.is_empty() {
            return Err(SweepError::NoMeasurements(dir.into()));
        }
        let mut sweep = Sweep::default();
        for path in &found {
            for row in read_rows(path)? {
                let ok = column(&row, path, "status")? == "ok"
                    && column(&row, path, "verified")? == "true";
                let Ok(gbs) = column(&row, path, "metric")?.parse::<f64>() else {
                    continue;
                };
                if !ok || column(&row, path, "metric_unit")? != "GB/s" {
                    continue;
                }
                sweep.sides.push(Side {
                    run_id: column(&row, path, "run_id")?.into(),
                    comparison: column(&row, path, "comparison")?.into(),
                    api: column(&row, path, "api")?.into(),
                    device: column(&row, path, "device")?.into(),
                    family: column(&row, path, "family")?.into(),
                    variant: column(&row, path, "variant")?.into(),
                    size: column(&row, path, "size")?.into(),
                    gbs,
                    launch: swept_launch(&row),
                });
            }
        }
        let mut baselines = Vec::new();
        files_named(dir, "baselines.csv", &mut baselines);
        for path in &baselines {
            for row in read_rows(path)? {
                let Ok(gbs) = column(&row, path, "gbs")?.parse::<f64>() else {
                    continue;
                };
                sweep.baselines.push(Baseline {
                    baseline: column(&row, path, "baseline")?.into(),
                    size: column(&row, path, "size")?.into(),
                    gbs,
                });
            }
        }
        Ok(sweep)
    }

    /// The devices of the sweep, in order of appearance.
    pub fn devices(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for s in &self.sides {
            if !out.contains(&s.device) {
                out.push(s.device.clone());
            }
        }
        out
    }

    /// Per matvec shape on `device`, best first, each auto-eligible candidate (a variant at its
    /// default or a swept launch) scored by the geometric mean of its OpenCL and CUDA GB/s, only
    /// where both sides verified (`auto`'s own rows excluded: they repeat a variant).
    pub fn scores(&self, device: &str) -> BTreeMap<(u64, u64), Vec<(Candidate, f64)>> {
        let mut per: BTreeMap<((u64, u64), Candidate), Vec<f64>> = BTreeMap::new();
        for s in &self.sides {
            // The shape rule is matvec's own (`matvec/auto`): the study's rows name the family.
            if s.device != device || s.family != "matvec" || s.is_auto() {
                continue;
            }
            let (Some(shape), Some(_)) = (s.shape(), pick(&s.variant)) else {
                continue;
            };
            let candidate = Candidate {
                variant: s.variant.clone(),
                launch: s.launch,
            };
            per.entry((shape, candidate)).or_default().push(s.gbs);
        }
        let mut out: BTreeMap<(u64, u64), Vec<(Candidate, f64)>> = BTreeMap::new();
        for ((shape, candidate), gbs) in per {
            if gbs.len() < 2 {
                continue;
            }
            let mean = (gbs.iter().map(|g| g.ln()).sum::<f64>() / gbs.len() as f64).exp();
            out.entry(shape).or_default().push((candidate, mean));
        }
        for list in out.values_mut() {
            list.sort_by(|a, b| b.1.total_cmp(&a.1));
        }
        out
    }

    /// The decision table for `device`: one region per measured shape, its winner and
    /// runner-up; `None` when no shape has a variant measured on both APIs.
    pub fn table(&self, device: &str) -> Option<RuleTable> {
        let regions: Vec<Region> = self
            .scores(device)
            .into_iter()
            .map(|((rows, cols), ranked)| {
                let (local, groups) = ranked[0].0.launch.unwrap_or((0, 0));
                Region {
                    rows,
                    cols,
                    key: Key::of(rows, cols),
                    variant: ranked[0].0.variant.clone(),
                    local,
                    groups,
                    gbs: round2(ranked[0].1),
                    runner_up: ranked.get(1).map(|r| r.0.to_string()).unwrap_or_default(),
                    runner_up_gbs: ranked.get(1).map_or(0.0, |r| round2(r.1)),
                }
            })
            .collect();
        if regions.is_empty() {
            return None;
        }
        let runs: BTreeSet<&str> = self
            .sides
            .iter()
            .filter(|s| s.device == device)
            .map(|s| s.run_id.as_str())
            .collect();
        Some(RuleTable {
            device: device.into(),
            provenance: format!(
                "derived by `clvscu shapes-rule` from run(s) {} (geometric mean of OpenCL and \
                 CUDA GB/s per variant and shape)",
                Vec::from_iter(runs).join(", ")
            ),
            regions,
        })
    }

    /// The checks on `device`: for every `matvec/auto` shape beyond the L2, each API's GB/s over
    /// cuBLAS SGEMV's at the same size; at 2^28 floats, over the read kernel's on that API
    /// (`read`: its family and variant, from the registry's memory references).
    pub fn checks(&self, device: &str, read: Option<(FamilyId, &str)>) -> Vec<Check> {
        let mut out = Vec::new();
        for s in self
            .sides
            .iter()
            .filter(|s| s.device == device && s.is_auto())
        {
            // A size too large to count (read from a CSV) is no shape of ours.
            let Some(floats) = s.shape().and_then(|(rows, cols)| rows.checked_mul(cols)) else {
                continue;
            };
            let check = |what, against| Check {
                what,
                size: s.size.clone(),
                api: s.api.clone(),
                variant: s.variant.clone(),
                gbs: s.gbs,
                against,
            };
            if floats.saturating_mul(4) > L2_BYTES {
                let cublas = self
                    .baselines
                    .iter()
                    .find(|b| b.baseline == "sgemv" && b.size == s.size);
                out.push(check(CheckKind::Cublas, cublas.map(|b| b.gbs)));
            }
            if floats == READ_CHECK_FLOATS {
                let read = self.sides.iter().find(|r| {
                    r.device == device
                        && r.api == s.api
                        && read.is_some_and(|(f, v)| r.family == f.name() && r.variant == v)
                        && r.size == READ_CHECK_FLOATS.to_string()
                });
                out.push(check(CheckKind::Read, read.map(|r| r.gbs)));
            }
        }
        out
    }
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// Which bar a check holds `auto` to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckKind {
    Cublas,
    /// Against the read kernel at the same floats.
    Read,
}

impl CheckKind {
    /// The bar (the least ratio of `auto`'s GB/s to the other's) and the other's name.
    pub fn bar(self) -> (f64, &'static str) {
        match self {
            CheckKind::Cublas => (1.0, "cuBLAS SGEMV"),
            CheckKind::Read => (0.9, "read kernel"),
        }
    }
}

/// One side of `auto` held against its bar.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    pub what: CheckKind,
    pub size: String,
    pub api: String,
    pub variant: String,
    pub gbs: f64,
    /// The bar's GB/s; `None` when the sweep lacks it (a failed check).
    pub against: Option<f64>,
}

impl Check {
    pub fn ratio(&self) -> Option<f64> {
        self.against.map(|a| self.gbs / a)
    }

    pub fn passes(&self) -> bool {
        self.ratio().is_some_and(|r| r >= self.what.bar().0)
    }

    /// One Markdown table row.
    pub fn row(&self) -> String {
        let ratio = self.ratio().map_or("missing".into(), |r| format!("{r:.3}"));
        format!(
            "| {} | {} | {} | {} | {:.0} | {} | {} | {} |",
            self.size,
            self.api,
            self.variant,
            self.what.bar().1,
            self.gbs,
            self.against.map_or("-".into(), |a| format!("{a:.0}")),
            ratio,
            if self.passes() { "yes" } else { "NO" }
        )
    }
}

/// The checks' Markdown table for one device.
pub fn checks_markdown(device: &str, checks: &[Check]) -> String {
    let mut text = format!(
        "## {device}\n\n| shape | API | auto ran | against | auto GB/s | its GB/s | ratio | \
         meets the bar |\n|---|---|---|---|---|---|---|---|\n"
    );
    for c in checks {
        text += &c.row();
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests;
