//! clvscu binary: parse, dispatch, print the error chain, exit with a documented code.

mod cli;
mod commands;
mod terminal;
mod tune_cli;

use clap::Parser;

fn main() {
    let cli = cli::Cli::parse();
    let code = match commands::dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            // A context that already quotes its cause ("X: Y") is not followed by Y again.
            let mut shown = e.to_string();
            for cause in e.chain().skip(1) {
                let text = cause.to_string();
                if !shown.contains(&text) {
                    eprintln!("  caused by: {text}");
                }
                shown = text;
            }
            1
        }
    };
    std::process::exit(code);
}
