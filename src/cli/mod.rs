//! The binary: the command line (`args`), a file per subcommand that needs more than a call into
//! the library, and what they share. None of it is the library, which is usable without it.

use anyhow::Result;

use args::{Cli, Command};
use stopping::EXIT_OK;

pub mod args;
pub mod children;
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

/// Dispatches each subcommand to its own file of `cli/` (`anyhow` errors, output for people).
pub fn dispatch(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Devices => device::devices(),
        Command::Studies => device::studies(),
        Command::Families => {
            say_text!("{}", tables::families());
            Ok(EXIT_OK)
        }
        Command::Run(args) => run::run(*args),
        Command::Calibrate(args) => device::calibrate(&args),
        Command::ShapesRule { sweep, out } => shapes_rule::run(&sweep, &out),
        Command::Tune(args) => tune::run(*args),
        Command::Explain(args) => explain::run(*args),
        Command::Suite(args) => suite::run(args),
        Command::Parity { devices } => device::parity(&devices),
        Command::Plot { inputs, out } => files::plot_cmd(&inputs, &out),
        Command::Merge { inputs, output } => files::merge(&inputs, &output),
        Command::Inspect(args) => files::inspect_cmd(args),
        Command::Report(args) => files::report(args),
        Command::Diff(args) => files::diff(&args),
    }
}
