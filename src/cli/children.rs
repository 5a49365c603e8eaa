//! The child processes of `suite` and `explain`: each in a process group of its own (a signal
//! reaches all a step started, nothing else), ended when this process dies or is told to stop.

use std::os::unix::process::CommandExt as _;
use std::process::{Child, Command};
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::cli::stopping::EXIT_INTERRUPTED;

/// The last stop signal received (0: none) and how many came.
static STOP_SIGNAL: AtomicI32 = AtomicI32::new(0);
static STOPS: AtomicUsize = AtomicUsize::new(0);

/// How long a child told to stop by Ctrl-C or its cap gets to write what it finished.
const GRACE: Duration = Duration::from_secs(15);

/// The same for SIGTERM or SIGHUP: their sender wants the process gone, not its work finished.
const TERM_GRACE: Duration = Duration::from_secs(2);

extern "C" fn note_stop(signal: libc::c_int) {
    // Atomic stores only: nothing else is safe inside a signal handler.
    STOP_SIGNAL.store(signal, Ordering::SeqCst);
    STOPS.fetch_add(1, Ordering::SeqCst);
}

/// SIGINT, SIGTERM and SIGHUP are only noted: the waiting loop ends the child's group, then exits.
pub fn catch_stop_signals() {
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler only stores to atomics; the struct is fully initialised
        // (zeroed, then its mask emptied) before sigaction reads it.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = note_stop as extern "C" fn(libc::c_int) as usize;
            libc::sigemptyset(&mut action.sa_mask);
            action.sa_flags = libc::SA_RESTART;
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

pub fn stop_signal() -> Option<i32> {
    Some(STOP_SIGNAL.load(Ordering::SeqCst)).filter(|&s| s != 0)
}

/// Makes `command` a guarded child: its own process group, sent `death` when this process dies.
pub fn guard(command: &mut Command, death: libc::c_int) -> &mut Command {
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    command.process_group(0);
    // SAFETY: between fork and exec only async-signal-safe calls are made (prctl, getppid,
    // _exit), and nothing is allocated.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, death) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent may have died before prctl ran: no signal would then ever come.
            if libc::getppid() != parent {
                libc::_exit(EXIT_INTERRUPTED);
            }
            Ok(())
        });
    }
    command
}

/// Sends `signal` to the child's whole process group (the child leads it, see [`guard`]).
fn signal_group(child: &Child, signal: libc::c_int) {
    if let Ok(pid) = libc::pid_t::try_from(child.id()) {
        // SAFETY: kill(2) on the group a child this process started and has not reaped leads:
        // its id cannot have been reused.
        unsafe {
            libc::kill(-pid, signal);
        }
    }
}

/// Runs a guarded `command` to its end or a stop signal: its exit code, or [`EXIT_INTERRUPTED`].
pub fn run_to_end(command: &mut Command) -> std::io::Result<i32> {
    let mut child = guard(command, libc::SIGTERM).spawn()?;
    let (code, _) = wait_stopping(&mut child, None)?;
    Ok(code.unwrap_or(EXIT_INTERRUPTED))
}

/// Waits for a guarded `child`, ending its group on a stop signal or past `cap`: the exit code
/// (`None`: ended by a signal) and whether the cap, not a stop signal, ended it.
pub fn wait_stopping(
    child: &mut Child,
    cap: Option<Duration>,
) -> std::io::Result<(Option<i32>, bool)> {
    let started = Instant::now();
    // Once the stop is passed on (SIGINT with [`GRACE`]; SIGTERM and SIGHUP as SIGTERM with
    // [`TERM_GRACE`]): when, the grace, how many stop signals had come. A second stop signal, or
    // the grace running out, kills the group.
    let mut stopping: Option<(Instant, Duration, usize)> = None;
    loop {
        if let Some(status) = child.try_wait()? {
            let capped = stopping.is_some() && stop_signal().is_none();
            return Ok((status.code(), capped));
        }
        let due = cap.is_some_and(|cap| started.elapsed() > cap) || stop_signal().is_some();
        match stopping {
            None if due => {
                let term = matches!(stop_signal(), Some(libc::SIGTERM | libc::SIGHUP));
                signal_group(child, if term { libc::SIGTERM } else { libc::SIGINT });
                let grace = if term { TERM_GRACE } else { GRACE };
                stopping = Some((Instant::now(), grace, STOPS.load(Ordering::SeqCst)));
            }
            Some((since, grace, seen))
                if STOPS.load(Ordering::SeqCst) > seen || since.elapsed() > grace =>
            {
                signal_group(child, libc::SIGKILL);
            }
            _ => {}
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `args` without the `options` (each with its value, `--opt V` or `--opt=V`) and the `flags`.
pub fn without(
    args: impl IntoIterator<Item = String>,
    options: &[&str],
    flags: &[&str],
) -> Vec<String> {
    let mut kept = Vec::new();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let with_value = |o: &&str| arg.strip_prefix(o).is_some_and(|v| v.starts_with('='));
        if options.contains(&arg.as_str()) {
            args.next();
        } else if !flags.contains(&arg.as_str()) && !options.iter().any(with_value) {
            kept.push(arg);
        }
    }
    kept
}
