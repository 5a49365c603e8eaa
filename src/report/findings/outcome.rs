//! What a check of an experiment comes to: a number with its agreement and causes, or why
//! the suite folder gives none.

/// A number the folder gives.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub value: String,
    /// `None` where the rule compares nothing.
    pub agrees: Option<bool>,
    /// explain's verdicts on the comparisons the number comes from.
    pub causes: Vec<Cause>,
}

/// One verdict of explain on a comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Cause {
    pub comparison: String,
    pub verdict: String,
    pub verified: bool,
}

/// Why a suite folder answers no check: what it lacks, in the words of what it holds, or
/// why a file of it could not be read.
#[derive(Debug, thiserror::Error)]
pub enum Absent {
    #[error("{0}")]
    Missing(String),
    #[error(transparent)]
    Unreadable(#[from] crate::report::ReportError),
    #[error(transparent)]
    UnreadableRows(#[from] crate::export::ExportError),
}

/// The answer, or why there is none.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Answered(Answer),
    Absent(String),
}
