//! The binary: the command line (`args`), a file per subcommand that needs more than a call into
//! the library, and what they share. None of it is the library, which is usable without it.

pub mod args;
pub mod children;
pub mod commands;
pub mod device;
pub mod every_gpu;
pub mod explain;
pub mod files;
pub mod progress;
pub mod run;
pub mod setup;
pub mod shapes_rule;
pub mod stopping;
pub mod suite;
pub mod suite_steps;
pub mod tables;
pub mod tune;
