//! Dispatches each subcommand to its own file of `cli/` (`anyhow` errors, output for people).

use anyhow::Result;

use crate::cli::args::{Cli, Command};
use crate::cli::{device, files, run};

use crate::cli::stopping::EXIT_OK;

pub fn dispatch(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Devices => device::devices(),
        Command::Studies => device::studies(),
        Command::Families => {
            say_text!("{}", crate::cli::tables::families());
            Ok(EXIT_OK)
        }
        Command::Run(args) => run::run(*args),
        Command::Calibrate(args) => device::calibrate(&args),
        Command::ShapesRule { sweep, out } => crate::cli::shapes_rule::run(&sweep, &out),
        Command::Tune(args) => crate::cli::tune::run(*args),
        Command::Explain(args) => crate::cli::explain::run(*args),
        Command::Suite(args) => crate::cli::suite::run(args),
        Command::Parity { devices } => device::parity(&devices),
        Command::Plot { inputs, out } => files::plot_cmd(&inputs, &out),
        Command::Merge { inputs, output } => files::merge(&inputs, &output),
        Command::Inspect(args) => files::inspect_cmd(args),
        Command::Report(args) => files::report(args),
        Command::Diff(args) => files::diff(&args),
    }
}
