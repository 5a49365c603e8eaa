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

/// Why a suite folder answers no check: what it lacks.
#[derive(Debug, thiserror::Error)]
pub enum Absent {
    /// A step or comparison without results, in the words of what the folder holds.
    #[error("{0}")]
    Missing(String),
    #[error("step `{step}` has no {what}OpenCL-against-CUDA PR")]
    NoPr { step: String, what: &'static str },
    #[error("step `{step}` measured `{from}` and `{to}` on no common API")]
    NoCommonApi {
        step: String,
        from: String,
        to: String,
    },
    #[error("step `{step}` recorded no Eq. 2 peak for `{comparison}`")]
    NoPeak { step: String, comparison: String },
    #[error("step `{step}` wrote no {file}")]
    NoFile { step: String, file: &'static str },
    #[error(transparent)]
    Unreadable(#[from] crate::report::ReportError),
    #[error(transparent)]
    UnreadableRows(#[from] crate::export::ExportError),
    #[error("step `{step}`'s ptx_classes.csv has no loads or stores of `{comparison}`")]
    NoMemoryCode { step: String, comparison: String },
    #[error(
        "step `{step}`'s ptx_classes.csv counts no {api} PTX of `{comparison}`: one front end's \
         code alone compares with nothing"
    )]
    NoPtxOf {
        step: String,
        api: &'static str,
        comparison: String,
    },
    #[error(
        "step `{step}` has fewer than 3 verified points of `{sweep}` up to local {up_to} on \
         every API"
    )]
    TooFewPoints {
        step: String,
        sweep: String,
        up_to: u32,
    },
    #[error("step `{0}`'s table-v.csv lacks an OpenCL or a CUDA row of ours")]
    NoOwnRows(String),
}

/// The answer, or why there is none.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Answered(Answer),
    Absent(String),
}
