//! The problem size of a study entry (a ground-floor word, [`crate::rows::Size`]).

pub use crate::rows::{Size, SizeError};
