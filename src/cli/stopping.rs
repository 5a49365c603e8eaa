//! How a run, an explain or a tune stops early: the exit codes, the launch watchdog, Ctrl-C.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use clvscu::session::watchdog::Watchdog;

/// The exit codes `args::EXIT_HELP` documents.
pub const EXIT_OK: i32 = 0;
pub const EXIT_ERROR: i32 = 1;
pub const EXIT_USAGE: i32 = 2;
pub const EXIT_FAILED_CONFIGS: i32 = 3;
pub const EXIT_HUNG: i32 = 4;
pub const EXIT_REGRESSED: i32 = 5;
pub const EXIT_INTERRUPTED: i32 = 130;

/// Ends the process at once (every finished comparison is on disk): a driver thread stuck in a
/// kernel can hold exit handlers forever.
fn end_now(code: i32) -> ! {
    use std::io::Write as _;
    let _ = std::io::stdout().flush();
    // No destructor runs after _exit: the folder's lock file is removed here.
    clvscu::export::folder::release_held_locks();
    // SAFETY: _exit only ends the process; nothing runs after it.
    unsafe { libc::_exit(code) }
}

/// Ctrl-C sets the flag; the session stops after the comparison in progress. On a second Ctrl-C,
/// or during a launch running for over a second (a stuck kernel would never look at the flag),
/// the process ends at once, saying `kept` (where the finished work is, how to continue).
pub fn interrupt_flag(watchdog: &Watchdog, kept: String) -> Arc<AtomicBool> {
    let interrupted = Arc::new(AtomicBool::new(false));
    let flag = interrupted.clone();
    let dog = watchdog.clone();
    let _ = ctrlc::set_handler(move || {
        let stuck = dog.busy_for().is_some_and(|t| t > Duration::from_secs(1));
        if stuck || flag.swap(true, Ordering::SeqCst) {
            let during = stuck.then_some(" during a launch that had not returned");
            let during = during.unwrap_or_default();
            say_err!("\ninterrupted{during}: {kept}");
            end_now(EXIT_INTERRUPTED);
        }
    });
    interrupted
}

/// A launch past its limit ends the process with [`EXIT_HUNG`], saying `then` (how to go on).
pub fn start_watchdog(then: String) -> Watchdog {
    Watchdog::start(move |what, ran, limit| {
        say_err!(
            "\nwatchdog: the {what} has run for {:.1} s, past its limit of {:.1} s; the run is \
             stopped. {then}",
            ran.as_secs_f64(),
            limit.as_secs_f64()
        );
        end_now(EXIT_HUNG);
    })
}
