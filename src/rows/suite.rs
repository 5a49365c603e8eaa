//! `clvscu suite`'s rows: one per finished step (`suite.csv`), how it ended, its exit code and
//! its wall time against its cap.

use serde::{Deserialize, Serialize};

pub const SUITE_CSV: &str = "suite.csv";

crate::names::named_enum! {
    #[strum(serialize_all = "kebab-case")]
    pub enum StepStatus {
        /// It ran to its end (exit 0, or 3: finished with some configuration failed).
        Done,
        /// It reached its cap and was stopped; its finished parts are kept (`--resume` goes on).
        Capped,
        /// Ctrl-C: the suite stopped here.
        Interrupted,
        /// It could not run here (no python3 with torch for the baselines, no run to explain).
        Skipped,
        Failed,
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRow {
    pub step: String,
    pub status: StepStatus,
    /// The child's exit code; empty when none ran.
    pub exit_code: Option<i32>,
    pub wall_s: f64,
    pub cap_s: u32,
    /// Why it was skipped or failed, in words; empty otherwise.
    pub note: String,
}
