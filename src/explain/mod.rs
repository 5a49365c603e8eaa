//! `clvscu explain`: why a fair PR is away from 1, found by one-step experiments the tool runs
//! itself, on the same GPU, each verified, interleaved and with a CI.
//!
//! The jobs are apart and data flows one way:
//! - [`ladder`] turns a fair comparison (the *target*) into its rungs: the same comparison
//!   with one thing changed (whose PTX each runtime runs, the register limit, CUDA's
//!   L1/shared split, index width, unroll pragmas, fast math, the timer). Rungs that need a
//!   fact of the first run (register counts, shared memory) are made from its rows.
//! - The session runs the rungs like any study: the rows are ordinary measurement, sample and
//!   PR rows in ordinary run folders.
//! - [`attribute`] reads the rungs' PR rows back and names the cause: the front end, the
//!   second stage's register allocation, the carveout, launch and wait, a compiler step, or
//!   "unexplained" with what remains. Nothing is guessed: a cause is named only when its rung
//!   brings the PR into [`PARITY`].
//! - [`code`] keeps each front end's PTX and counts its kernel's instructions by class, in PTX
//!   and (where a CUDA device and `cuobjdump` are at hand) in SASS; [`profile`] adds ncu's
//!   counters of both front ends' code where ncu is at hand.
//! - [`machine_code`] takes the cubins each runtime actually runs out of a private CUDA
//!   compute cache ([`cubin`](crate::inspect::cubin) cuts them out and counts their SASS by class); [`verify`] holds
//!   every verdict against them: a cause counts only when its rung's control held and, for a
//!   second-stage cause, when the rung's code reproduces the slower side's.
//! - [`output`] writes `explain.csv`, `explain-verdicts.csv` and `explain.md` (a waterfall per
//!   target); the chart is `plot::waterfall`.

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

/// The comparison id of `rung` of `target`.
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
