//! explain's rows: one verdict per target (`explain-verdicts.csv`) and one row per rung of
//! each target (`explain.csv`).

use serde::{Deserialize, Serialize};

/// Separates a target's name from its rung's in a comparison id (`matvec/listing4::own`).
pub const RUNG_SEPARATOR: &str = "::";

/// explain's verdicts, one row per target (`explain-verdicts.csv` in its output folder).
pub const VERDICTS_CSV: &str = "explain-verdicts.csv";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerdictRow {
    pub target: String,
    pub study: String,
    pub family: String,
    pub variant: String,
    pub size: String,
    pub device: String,
    pub pr: Option<f64>,
    pub pr_ci_lo: Option<f64>,
    pub pr_ci_hi: Option<f64>,
    /// The causes' short names, `+`-joined; `unexplained`, `no-gap` or `not-measured`.
    pub cause: String,
    pub verdict: String,
    /// Every cause comes from a rung whose control held and, for a second-stage cause, whose
    /// machine code reproduces the slower side's. Missing in folders of earlier versions.
    #[serde(default)]
    pub verified: bool,
    /// The machine-code difference behind the verdict, counted from the cubins each runtime
    /// runs (empty where none were read).
    #[serde(default)]
    pub machine_code: String,
    /// The fix offered (the family's alternative on both sides) and what it gives; empty where
    /// the family declares none.
    #[serde(default)]
    pub fix: String,
    /// The target's calls replayed as a plain program beside the harness (empty where it is
    /// not the runtime's own calls).
    #[serde(default)]
    pub replay: String,
}

/// explain's rungs, one row per rung of each target (`explain.csv` in its output folder).
pub const EXPLAIN_CSV: &str = "explain.csv";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExplainRow {
    pub target: String,
    pub study: String,
    pub family: String,
    pub variant: String,
    pub size: String,
    pub device: String,
    /// The ladder's step (`front-end-or-runtime`, `second-stage`, ...).
    pub step: String,
    pub rung: String,
    /// What the rung holds, in words.
    pub what: String,
    /// Empty when a side of the rung failed (see `note`).
    pub pr: Option<f64>,
    pub pr_ci_lo: Option<f64>,
    pub pr_ci_hi: Option<f64>,
    /// The share of the target's gap the rung removed, in logarithms (1: closed it).
    pub gap_closed: Option<f64>,
    /// The rung's CI and the target's do not overlap.
    pub moved: bool,
    /// The rung's CI touches [0.98, 1.02].
    pub at_parity: bool,
    /// Why the rung names no cause whatever its PR (empty when it may).
    #[serde(default)]
    pub void: String,
    pub note: String,
}
