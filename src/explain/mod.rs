//! `clvscu explain`: why a fair PR is away from 1, found by one-step experiments run on the same
//! GPU, each verified, interleaved and with a CI.
//!
//! [`ladder`] turns each fair comparison (the *target*) into rungs, the same comparison with one
//! thing changed, which the session runs into ordinary run folders; [`attribute`] reads their PR
//! rows back and names a cause only when its rung brings the PR into [`PARITY`] (else
//! "unexplained"). [`code`], [`profile`] and [`machine_code`] read what each side's code is,
//! [`verify`] holds every verdict against the machine code each runtime runs, and [`output`]
//! writes `explain.csv`, `explain-verdicts.csv` and `explain.md`.

pub mod attribute;
pub mod code;
pub mod ladder;
pub mod launch;
pub mod machine_code;
pub mod output;
pub mod profile;
pub mod replay;
pub mod run;
pub mod verdict;
pub mod verify;
pub mod waterfall;

#[cfg(test)]
mod tests;

pub use attribute::{Cause, TargetExplanation, Verdict};
pub use ladder::{Rung, RungKind};

pub use crate::stats::PARITY;

use crate::rows::RUNG_SEPARATOR;

pub fn rung_id(target: &str, rung: &str) -> String {
    format!("{target}{RUNG_SEPARATOR}{rung}")
}

/// The target and rung of a comparison id made by [`rung_id`].
pub fn split_rung_id(id: &str) -> Option<(&str, &str)> {
    id.rsplit_once(RUNG_SEPARATOR)
}

/// Side A's runtime, then side B's where there is one.
fn each_side(
    sides: &mut crate::session::run::Sides,
) -> impl Iterator<Item = &mut dyn crate::backend::Runtime> {
    std::iter::once(&mut sides.a)
        .chain(sides.b.as_mut())
        .map(|b| b.as_mut() as &mut dyn crate::backend::Runtime)
}
