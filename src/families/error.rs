//! What can be wrong with a family, variant, size or launch, found before anything runs.

use thiserror::Error;

use crate::rows::SizeError;

#[derive(Debug, Error)]
pub enum WorkloadError {
    #[error("unknown family '{name}'; valid families: {known}")]
    UnknownFamily { name: String, known: String },
    #[error("unknown variant '{name}' of family {family}; valid variants: {known}")]
    UnknownVariant {
        family: String,
        name: String,
        known: String,
    },
    #[error(transparent)]
    Size(#[from] SizeError),
    #[error("invalid problem for {variant}: {reason}")]
    BadProblem { variant: String, reason: String },
    #[error("invalid launch for {variant}: {reason}")]
    BadLaunch { variant: String, reason: String },
}

/// Why a study's kernel pair cannot take the family name it declares.
#[derive(Debug, Error)]
pub enum RegisterError {
    #[error(
        "family '{0}' is declared twice with different kernels, arguments or checks; give one \
         of them another 'family' name"
    )]
    Twice(String),
    #[error(
        "family '{0}' is a built-in family or kernel file; give the kernel pair another \
         'family' name"
    )]
    BuiltIn(String),
}
