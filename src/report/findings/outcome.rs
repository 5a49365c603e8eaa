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

/// The answer to a check, or why the folder gives none.
pub type Outcome = Result<Answer, crate::report::ReportError>;

/// One verdict of explain on a comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Cause {
    pub comparison: String,
    pub verdict: String,
    pub verified: bool,
}
