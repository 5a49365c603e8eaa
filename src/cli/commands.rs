//! The subcommands, at the edge: `anyhow` errors with context, human-readable output. Each
//! command lives in its own file of `cli/`; this one only dispatches.

use std::path::PathBuf;

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
        Command::Report {
            inputs,
            out,
            html,
            findings,
            readme,
        } => {
            if findings {
                files::findings_cmd(&inputs, out.as_deref(), readme.as_deref())
            } else {
                let out = out.unwrap_or_else(|| PathBuf::from("clvscu-report"));
                files::report(&inputs, &out, html)
            }
        }
        Command::Diff {
            old,
            new,
            out,
            noise,
            fail_on_regression,
        } => files::diff(&old, &new, out.as_deref(), noise, fail_on_regression),
    }
}
