//! The ground floor: the words every layer shares, and every row type a command writes, each
//! with the name of its CSV file and its columns. Producers fill rows; the outputs (`export/`,
//! `plot/`, `report/`) read nothing else but `stats` and `paper`. Nothing here depends on
//! anything of this crate above it.

mod baseline;
mod calibration;
mod catalog;
mod explain;
mod inspect;
mod run;
mod suite;
mod tune;
mod words;

pub use baseline::*;
pub use calibration::*;
pub use catalog::*;
pub use explain::*;
pub use inspect::*;
pub use run::*;
pub use suite::*;
pub use tune::*;
pub use words::*;
