//! clvscu binary: parse, dispatch, print the error chain, exit with a documented code.

/// `println!` fitted to the terminal ([`clvscu::terminal::fit`]): what a person reads keeps
/// to the terminal's width, at most 100 columns.
macro_rules! say {
    () => { println!() };
    ($($arg:tt)*) => {
        println!("{}", clvscu::terminal::show(&format!($($arg)*), clvscu::terminal::width()))
    };
}

/// [`say!`] on standard error.
macro_rules! say_err {
    () => { eprintln!() };
    ($($arg:tt)*) => {
        eprintln!("{}", clvscu::terminal::show(&format!($($arg)*), clvscu::terminal::err_width()))
    };
}

/// `print!` fitted to the terminal, for text that ends its own lines.
macro_rules! say_text {
    ($($arg:tt)*) => {
        print!("{}", clvscu::terminal::show(&format!($($arg)*), clvscu::terminal::width()))
    };
}

mod cli;

use clap::Parser;
use clvscu::terminal::printable_lines;

fn main() {
    // A write past the file-size limit (`ulimit -f`) raises SIGXFSZ, whose default action ends
    // the process without a word. Ignored, the write fails with EFBIG instead, and the usual I/O
    // error path names the file and exits 1.
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to SIG_IGN installs no handler code; it runs
    // before any other thread exists.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    let cli = cli::args::Cli::parse();
    let code = match cli::dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            // Shown escaped: the error may quote study text (a comparison's name). A context
            // that already quotes its cause ("X: Y") is not followed by Y again.
            let mut shown = e.to_string();
            say_err!("error: {}", printable_lines(&shown));
            for cause in e.chain().skip(1) {
                let text = cause.to_string();
                if !shown.contains(&text) {
                    say_err!("  caused by: {}", printable_lines(&text));
                }
                shown = text;
            }
            cli::stopping::EXIT_ERROR
        }
    };
    std::process::exit(code);
}
