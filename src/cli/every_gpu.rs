//! `--cuda-device all`: the same command on every CUDA GPU at once, a child process each (which
//! keeps each GPU's driver state, watchdog and Ctrl-C apart), each paired with the OpenCL device
//! at the same PCI bus and writing its own folder under the command's `--out`.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, ensure, Context, Result};

use clvscu::backend::cuda;
use clvscu::plot;

use crate::cli::args::DeviceArgs;
use crate::cli::stopping::{
    EXIT_ERROR, EXIT_FAILED_CONFIGS, EXIT_HUNG, EXIT_INTERRUPTED, EXIT_OK, EXIT_REGRESSED,
    EXIT_USAGE,
};

/// Where each child's output lines go, prefixed with its GPU.
pub type Emit = Arc<dyn Fn(String) + Send + Sync>;

#[derive(Debug, Clone, PartialEq)]
pub struct GpuJob {
    pub index: usize,
    pub name: String,
    /// The OpenCL selector of the same GPU (indices differ between the APIs: the same H200
    /// can be OpenCL device 1 and CUDA device 0).
    pub cl_device: String,
    pub folder: PathBuf,
}

impl GpuJob {
    fn label(&self) -> String {
        format!("gpu{}", self.index)
    }

    fn describe(&self) -> String {
        let (name, cl, folder) = (&self.name, &self.cl_device, self.folder.display());
        format!("{}: {name} ({cl}) -> {folder}", self.label())
    }
}

/// Whether `devices` asks for every GPU (`--cuda-device all`), refusing a `--cl-device` beside it.
pub fn wanted(devices: &DeviceArgs) -> Result<bool> {
    ensure!(
        !devices.is_every_gpu() || devices.cl_device.is_none(),
        "--cuda-device all finds each GPU's OpenCL device by its PCI bus; leave --cl-device out"
    );
    Ok(devices.is_every_gpu())
}

pub fn jobs(out: &Path) -> Result<Vec<GpuJob>> {
    let gpus = cuda::list_devices()?;
    gpus.iter()
        .enumerate()
        .map(|(i, gpu)| {
            let Some(bus) = &gpu.pci_bus else {
                bail!(
                    "CUDA device {i} ({}) reports no PCI bus: pair it by hand with \
                     --cuda-device {i} --cl-device",
                    gpu.name
                );
            };
            Ok(GpuJob {
                index: i,
                name: gpu.name.clone(),
                cl_device: format!("pci:{bus}"),
                folder: out.join(format!("gpu{i}-{}", plot::slug(&gpu.name))),
            })
        })
        .collect()
}

/// The child's arguments: the user's (`argv` without the program), with `--cuda-device all`,
/// any `--cl-device` and `--out` replaced by this GPU's.
pub fn child_args(argv: &[String], job: &GpuJob) -> Vec<String> {
    let own = [
        ("--cuda-device", job.index.to_string()),
        ("--cl-device", job.cl_device.clone()),
        ("--out", job.folder.display().to_string()),
    ];
    let replaced = own.each_ref().map(|o| o.0);
    let mut kept = crate::cli::children::without(argv.iter().cloned(), &replaced, &[]);
    kept.extend(own.into_iter().flat_map(|(o, v)| [o.to_string(), v]));
    kept
}

/// Runs `program` once per job, all at once, each output line to `emit` prefixed with its GPU:
/// each exit code. Each increase of `interrupts` (Ctrl-Cs) reaches every child as one SIGINT.
pub fn run_all(
    program: &Path,
    jobs: &[GpuJob],
    args_of: &dyn Fn(&GpuJob) -> Vec<String>,
    interrupts: &AtomicUsize,
    emit: Emit,
) -> Result<Vec<i32>> {
    let mut children = Vec::with_capacity(jobs.len());
    let mut readers = Vec::new();
    for job in jobs {
        let mut child = match spawn(program, &args_of(job)) {
            Ok(child) => child,
            Err(e) => {
                // The GPUs already started stop as on Ctrl-C, keeping what they finished.
                let _ = wait_all(&mut children, &AtomicUsize::new(1));
                return Err(e).with_context(|| {
                    format!("starting {} for {}", program.display(), job.label())
                });
            }
        };
        let prefix = format!("[{}] ", job.label());
        let (out, err) = (child.stdout.take(), child.stderr.take());
        readers.extend(out.map(|p| forward_lines(p, &prefix, &emit)));
        readers.extend(err.map(|p| forward_lines(p, &prefix, &emit)));
        children.push(child);
    }
    let statuses = wait_all(&mut children, interrupts)?;
    for reader in readers {
        let _ = reader.join();
    }
    Ok(jobs
        .iter()
        .zip(statuses)
        .map(|(job, status)| exit_code(job, status, &emit))
        .collect())
}

/// A child's exit code; ended by SIGINT, an interruption; by another signal, an error told `emit`.
fn exit_code(job: &GpuJob, status: std::process::ExitStatus, emit: &Emit) -> i32 {
    use std::os::unix::process::ExitStatusExt as _;
    match (status.code(), status.signal()) {
        (Some(code), _) => code,
        (None, Some(libc::SIGINT)) => EXIT_INTERRUPTED,
        (None, signal) => {
            let signal = signal.map_or("an unknown signal".to_string(), |s| format!("signal {s}"));
            emit(format!(
                "[{}] ended by {signal} before it finished: an error (exit {EXIT_ERROR})",
                job.label()
            ));
            EXIT_ERROR
        }
    }
}

fn spawn(program: &Path, args: &[String]) -> std::io::Result<Child> {
    use std::os::unix::process::CommandExt as _;
    let mut command = Command::new(program);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: signal (a sigaction) is async-signal-safe. It gives the child SIGINT's default
    // disposition: one ignored on entry, as a background job of a script gets it, could never
    // be trapped, so no Ctrl-C would reach it.
    unsafe {
        command.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        });
    }
    // SIGINT when this process dies: the child stops as on Ctrl-C and keeps what it finished.
    crate::cli::children::guard(&mut command, libc::SIGINT).spawn()
}

fn forward_lines(
    pipe: impl Read + Send + 'static,
    prefix: &str,
    emit: &Emit,
) -> std::thread::JoinHandle<()> {
    let (prefix, emit) = (prefix.to_string(), emit.clone());
    std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines().map_while(|l| l.ok()) {
            emit(format!("{prefix}{line}"));
        }
    })
}

fn wait_all(
    children: &mut [Child],
    interrupts: &AtomicUsize,
) -> Result<Vec<std::process::ExitStatus>> {
    let mut codes: Vec<Option<std::process::ExitStatus>> = vec![None; children.len()];
    let mut passed_on = 0;
    while codes.iter().any(Option::is_none) {
        let seen = interrupts.load(Ordering::SeqCst);
        for (child, code) in children.iter_mut().zip(&mut codes) {
            if code.is_some() {
                continue;
            }
            for _ in passed_on..seen {
                // SAFETY: kill only sends a signal to a child this process started and has
                // not yet reaped, so its pid cannot have been reused.
                unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
            }
            if let Some(status) = child.try_wait()? {
                *code = Some(status);
            }
        }
        passed_on = seen;
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(codes.into_iter().flatten().collect())
}

/// This process's own command once per GPU, all at once: the most serious child's exit code.
pub fn run_command(out: &Path) -> Result<i32> {
    let jobs = jobs(out)?;
    // Ctrl-Cs counted, for [`run_all`] to pass on.
    static INTERRUPTS: AtomicUsize = AtomicUsize::new(0);
    let _ = ctrlc::set_handler(|| {
        INTERRUPTS.fetch_add(1, Ordering::SeqCst);
    });
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let program = std::env::current_exe().context("finding this program to run once per GPU")?;
    for job in &jobs {
        say!("== {}", job.describe());
    }
    let emit: Emit = Arc::new(|line| say!("{line}"));
    let args_of = |job: &GpuJob| child_args(&argv, job);
    let codes = run_all(&program, &jobs, &args_of, &INTERRUPTS, emit)?;
    let code = summarize(&jobs, &codes);
    if INTERRUPTS.load(Ordering::SeqCst) > 0 {
        return Ok(code);
    }
    // One report over every GPU's folder; one that cannot be made costs a warning.
    let catalog = clvscu::families::catalog();
    match clvscu::report::write_report(&[out.to_path_buf()], out, true, &catalog) {
        Ok(written) => say!(
            "one report over every GPU ({} run folders on {}): {} and {}",
            written.folders,
            written.gpus_text(),
            out.join("report.md").display(),
            out.join("index.html").display()
        ),
        Err(e) => say_err!("warning: no report over the GPUs: {e}"),
    }
    Ok(code)
}

/// Prints each GPU's outcome: the most serious exit code, so none hides behind another GPU's.
pub fn summarize(jobs: &[GpuJob], codes: &[i32]) -> i32 {
    say!("every GPU, one process each, at the same time:");
    for (job, code) in jobs.iter().zip(codes) {
        say!("  {}: exit {code}", job.describe());
    }
    // A code of no meaning of ours is an error.
    let rank = |code| {
        SEVERITY
            .iter()
            .position(|&c| c == code)
            .unwrap_or(SEVERITY.len() - 1)
    };
    codes
        .iter()
        .map(|&code| rank(code))
        .max()
        .map_or(EXIT_OK, |r| SEVERITY[r])
}

/// The exit codes in [`summarize`]'s order, least serious first.
const SEVERITY: [i32; 7] = [
    EXIT_OK,
    EXIT_FAILED_CONFIGS,
    EXIT_REGRESSED,
    EXIT_INTERRUPTED,
    EXIT_HUNG,
    EXIT_USAGE,
    EXIT_ERROR,
];

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use std::time::Instant;

    fn job(index: usize) -> GpuJob {
        GpuJob {
            index,
            name: "NVIDIA H200".into(),
            cl_device: format!("pci:00:0{}", 6 + index),
            folder: PathBuf::from(format!("out/gpu{index}-nvidia-h200")),
        }
    }

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_child_gets_its_gpu_and_folder_and_every_other_option_unchanged() {
        let argv = strings(&[
            "run",
            "--study",
            "fair",
            "--cuda-device",
            "all",
            "--out=res",
            "--cl-device",
            "0",
            "--resume",
            "-q",
        ]);
        assert_eq!(
            child_args(&argv, &job(1)),
            strings(&[
                "run",
                "--study",
                "fair",
                "--resume",
                "-q",
                "--cuda-device",
                "1",
                "--cl-device",
                "pci:00:07",
                "--out",
                "out/gpu1-nvidia-h200",
            ])
        );
        // An option that only begins like a replaced one is the user's and stays.
        let argv = strings(&["suite", "--cuda-device=all", "--outcome-x"]);
        assert_eq!(
            child_args(&argv, &job(0))[..2],
            strings(&["suite", "--outcome-x"])
        );
    }

    fn collected() -> (Arc<Mutex<Vec<String>>>, Emit) {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = lines.clone();
        (lines, Arc::new(move |l| sink.lock().unwrap().push(l)))
    }

    /// Runs `script` (arguments of `sh`) for two GPUs: each exit code, the output lines
    /// sorted, and the wall time.
    fn run_two(
        script: &dyn Fn(&GpuJob) -> Vec<String>,
        interrupts: &AtomicUsize,
    ) -> (Vec<i32>, Vec<String>, Duration) {
        let (lines, emit) = collected();
        let start = Instant::now();
        let codes = run_all(Path::new("sh"), &[job(0), job(1)], script, interrupts, emit).unwrap();
        let took = start.elapsed();
        let mut got = lines.lock().unwrap().clone();
        got.sort();
        (codes, got, took)
    }

    #[test]
    fn the_gpus_run_at_the_same_time_and_the_worst_exit_code_is_kept() {
        let script = |j: &GpuJob| {
            strings(&[
                "-c",
                &format!("sleep 1; echo done {}; exit {}", j.index, 3 * j.index),
            ])
        };
        let (codes, lines, took) = run_two(&script, &AtomicUsize::new(0));
        assert!(
            took < Duration::from_millis(1800),
            "two 1 s children took {took:?}: not at once"
        );
        assert_eq!(codes, vec![0, 3]);
        assert_eq!(summarize(&[job(0), job(1)], &codes), 3);
        assert_eq!(lines, strings(&["[gpu0] done 0", "[gpu1] done 1"]));
    }

    /// One GPU that did not run at all is never hidden behind another's failed
    /// configurations, a hang or an interruption; a hang is not hidden behind an
    /// interruption; failed configurations beat success.
    #[test]
    fn an_error_of_any_gpu_wins_then_a_hang_then_an_interruption() {
        let jobs = [job(0), job(1)];
        let code = |a, b| summarize(&jobs, &[a, b]);
        for other in [0, 3, 4, 130] {
            assert_eq!(code(1, other), 1, "1 beside {other}");
            assert_eq!(code(other, 1), 1, "{other} beside 1");
        }
        assert_eq!(code(4, 130), 4);
        assert_eq!(code(130, 4), 4);
        assert_eq!(code(3, 130), 130);
        assert_eq!(code(0, 3), 3);
        assert_eq!(code(0, 0), 0);
        // A code of no meaning of ours (a panic's 101) is an error, and says so.
        assert_eq!(code(101, 3), 1);
    }

    /// A child ended by a signal other than Ctrl-C's (the kernel's OOM killer, a crash) did
    /// not run its GPU to the end: an error, not an interruption.
    #[test]
    fn a_child_killed_outright_is_an_error_and_one_told_to_stop_is_interrupted() {
        let script = |j: &GpuJob| {
            let signal = if j.index == 0 { "KILL" } else { "INT" };
            strings(&["-c", &format!("trap - INT; kill -{signal} $$; sleep 5")])
        };
        let (codes, lines, _) = run_two(&script, &AtomicUsize::new(0));
        assert_eq!(codes, vec![EXIT_ERROR, EXIT_INTERRUPTED], "{lines:?}");
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("[gpu0] ") && l.contains("signal 9")),
            "{lines:?}"
        );
        assert_eq!(summarize(&[job(0), job(1)], &codes), EXIT_ERROR);
    }

    #[test]
    fn a_ctrl_c_reaches_every_child_once() {
        // Each child stops at its first SIGINT, saying so; none runs its 5 s to the end.
        let script = |_: &GpuJob| {
            strings(&[
                "-c",
                "trap 'echo interrupted; exit 130' INT; echo ready; i=0; while [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done; echo not interrupted",
            ])
        };
        let (lines, emit) = collected();
        let interrupts = Arc::new(AtomicUsize::new(0));
        let (later, seen) = (interrupts.clone(), lines.clone());
        // The Ctrl-C comes once both children have set their trap: one sent earlier, while a
        // child is still between fork and exec on a loaded machine, is not the case tested.
        std::thread::spawn(move || {
            while seen.lock().unwrap().len() < 2 {
                std::thread::sleep(Duration::from_millis(10));
            }
            later.fetch_add(1, Ordering::SeqCst);
        });
        let start = Instant::now();
        let codes = run_all(
            Path::new("sh"),
            &[job(0), job(1)],
            &script,
            &interrupts,
            emit,
        )
        .unwrap();
        assert!(
            start.elapsed() < Duration::from_secs(4),
            "{:?}",
            start.elapsed()
        );
        assert_eq!(codes, vec![130, 130]);
        let mut got = lines.lock().unwrap().clone();
        got.sort();
        let want = [
            "[gpu0] interrupted",
            "[gpu0] ready",
            "[gpu1] interrupted",
            "[gpu1] ready",
        ];
        assert_eq!(got, strings(&want));
    }

    #[test]
    fn a_program_that_cannot_start_is_an_error_naming_it() {
        let (_, emit) = collected();
        let err = run_all(
            Path::new("/nonexistent/clvscu"),
            &[job(0)],
            &|_| Vec::new(),
            &AtomicUsize::new(0),
            emit,
        )
        .unwrap_err();
        assert!(
            format!("{err:#}").contains("/nonexistent/clvscu"),
            "{err:#}"
        );
    }
}
