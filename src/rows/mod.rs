//! The ground floor, depending on nothing above it: the shared words, and every row type a
//! command writes with its CSV file's name. The outputs (`export/`, `plot/`, `report/`) read
//! nothing else but `stats` and `paper`.

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
