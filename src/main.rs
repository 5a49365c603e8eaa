//! clvscu binary: parse, dispatch, print the error chain, exit with a documented code.

mod cli;
mod commands;
mod tune_cli;

use clap::Parser;

fn main() {
    let cli = cli::Cli::parse();
    let code = match commands::dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            for cause in e.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            1
        }
    };
    std::process::exit(code);
}
