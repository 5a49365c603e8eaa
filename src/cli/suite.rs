//! `clvscu suite`: the plan of [`clvscu::suite`], each step a child process (this program, or
//! `python3` for the vendor baselines) under its time cap; then the peaks table and one report.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context, Result};
use clap::ValueEnum;

use clvscu::export::csv::{read_rows, read_rows_if_file};
use clvscu::report::write_report;
use clvscu::rows::{MeasurementRow, StepRow, StepStatus, MEASUREMENTS_CSV, SUITE_CSV};
use clvscu::suite::{self, peaks, state, Plan, Slack, Step, StepKind};
use clvscu::terminal::printable;

use crate::cli::args::SuiteArgs;
use crate::cli::children::{self, stop_signal};
use crate::cli::every_gpu;
use crate::cli::setup::{out_folder, stamp_now};
use crate::cli::stopping::{EXIT_ERROR, EXIT_FAILED_CONFIGS, EXIT_INTERRUPTED, EXIT_OK};
use crate::cli::suite_steps::{no_opencl_cpu, on_the_cpu, step_command, study_command, uses_cuda};

const CAPPED_NOTE: &str = "stopped at its cap; --resume goes on from its last finished part";
const ABORTED: &str =
    "ended their process without an exit code of ours (the CPU runtime aborted; see";

pub fn run(args: SuiteArgs) -> Result<i32> {
    let plan = args.plan;
    let steps = suite::select(plan, &args.steps).map_err(anyhow::Error::msg)?;
    let on_every_gpu = every_gpu::wanted(&args.devices)?;
    let out = out_folder(args.out.as_deref(), "suite", &stamp_now())?;
    if on_every_gpu {
        return every_gpu::run_command(&out);
    }
    ensure!(
        args.resume || !out.join(SUITE_CSV).exists(),
        "{} holds an earlier suite: continue it with --resume, or give another --out",
        out.display()
    );
    clvscu::export::safe::prepare_dir(&out.join("logs"), false)?;
    check_made_with(&out, &args)?;
    let mut rows = if args.resume {
        state::read(&out)?
    } else {
        Vec::new()
    };
    // The terminal's Ctrl-C misses each step's own process group: this process passes it on.
    children::catch_stop_signals();
    say!(
        "clvscu suite, {} plan ({}): {} steps into {}",
        plan.name(),
        mode(&args),
        steps.len(),
        out.display()
    );
    let cap = |s: &Step| f64::from(s.cap_s(args.quick)) * args.cap_scale;
    let mut slack = Slack::default();
    let started = Instant::now();
    for (index, step) in steps.iter().enumerate() {
        if stop_signal().is_some() {
            say!("{}", resume_hint(&out));
            return Ok(EXIT_INTERRUPTED);
        }
        if args.resume && state::is_finished(&rows, step.name) {
            say!("== {}: finished before, skipped", step.name);
            continue;
        }
        let allowance = slack.allowance(cap(step));
        // No step runs past its cap: the most the suite can take from here.
        let later: f64 = steps[index + 1..].iter().map(cap).sum();
        say!(
            "== [{}/{}] {} (at most {allowance:.0} s; {:.0} s in, at most {:.0} s to go): {}",
            index + 1,
            steps.len(),
            step.name,
            started.elapsed().as_secs_f64(),
            allowance + later,
            step.reproduces
        );
        let row = run_step(&args, &out, step, allowance)?;
        slack = slack.after(allowance, row.wall_s);
        let code = row.exit_code.map(|c| format!(", exit {c}"));
        let note = Some(&row.note).filter(|n| !n.is_empty());
        say!(
            "   {} after {:.1} s{}{}",
            row.status,
            row.wall_s,
            code.unwrap_or_default(),
            note.map(|n| format!(": {n}")).unwrap_or_default()
        );
        let stop = row.status == StepStatus::Interrupted;
        state::record(&mut rows, row);
        state::write(&out, &rows)?;
        if stop {
            say!("{}", resume_hint(&out));
            return Ok(EXIT_INTERRUPTED);
        }
    }
    match plan {
        Plan::Paper => finish(&args, &out, &rows)?,
        Plan::MatvecRule => finish_rule(&args, &out, &rows)?,
    }
    // A skipped step (no CPU device, no torch) is no failed configuration, whatever its exit code.
    let whole = rows.iter().all(|r| match r.status {
        StepStatus::Done => r.exit_code.unwrap_or(0) == 0,
        StepStatus::Skipped => true,
        _ => false,
    });
    Ok(if whole { EXIT_OK } else { EXIT_FAILED_CONFIGS })
}

const MADE_WITH: &str = "suite-options.txt";

/// Refuses a resume with other options than the folder was made with (they would mix sizes or
/// devices in one folder); records a new suite's, as one line.
fn check_made_with(out: &Path, args: &SuiteArgs) -> Result<()> {
    let pair = args
        .pair
        .and_then(|p| p.to_possible_value())
        .map_or("opencl-cuda".to_string(), |v| v.get_name().to_string());
    let mode = if args.quick { "--quick" } else { "full" };
    let now = format!("--plan {}, {mode}, --pair {pair}", args.plan.name());
    let file = out.join(MADE_WITH);
    if args.resume && file.exists() {
        let then = clvscu::input_file::read_text_capped(&file, 4096)
            .with_context(|| file.display().to_string())?;
        let then = then.trim();
        if then != now {
            bail!(
                "{} was made with {}; this resume asks for {now}: resume with the folder's \
                 options, or give another --out",
                out.display(),
                printable(then)
            );
        }
    }
    clvscu::export::write_atomic(&file, format!("{now}\n").as_bytes())?;
    Ok(())
}

fn mode(args: &SuiteArgs) -> &'static str {
    if args.quick {
        "quick"
    } else {
        "full"
    }
}

fn resume_hint(out: &Path) -> String {
    let out = out.display();
    format!("interrupted: continue with `clvscu suite --resume --out {out}`")
}

/// One step, run for at most `allowance_s` seconds (its cap and earlier steps' slack): its row.
fn run_step(args: &SuiteArgs, out: &Path, step: &Step, allowance_s: f64) -> Result<StepRow> {
    if let StepKind::CpuStudy(name) = step.kind {
        return run_cpu_step(args, out, step, name, allowance_s);
    }
    let row = |status, exit_code, wall_s, note| StepRow {
        step: step.name.into(),
        status,
        exit_code,
        wall_s,
        cap_s: allowance_s.floor() as u32,
        note,
    };
    let command = match step_command(args, out, step)? {
        Ok(c) => c,
        Err(why) => return Ok(row(StepStatus::Skipped, None, 0.0, why)),
    };
    let log = log_file(out, step, "log");
    let started = Instant::now();
    // This attempt's lines are appended to the log, after a [`resumed_marker`].
    let marker = resumed_marker(&read_log(&log)?);
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
        .with_context(|| format!("opening {}", log.display()))?;
    file.write_all(marker.as_bytes())
        .with_context(|| format!("writing {}", log.display()))?;
    let (code, capped) = run_capped(command, file, allowance_s)?;
    let wall_s = started.elapsed().as_secs_f64();
    let (status, note) = match code {
        Some(EXIT_OK) => (StepStatus::Done, String::new()),
        Some(EXIT_FAILED_CONFIGS) => (StepStatus::Done, failed_rows_note(&out.join(step.dir))),
        _ if stop_signal().is_some() => (StepStatus::Interrupted, String::new()),
        _ if capped => (StepStatus::Capped, CAPPED_NOTE.into()),
        _ => (
            StepStatus::Failed,
            format!("see {}", printable(&log.display().to_string())),
        ),
    };
    Ok(row(status, code, wall_s, note))
}

fn log_file(out: &Path, step: &Step, ext: &str) -> PathBuf {
    out.join("logs").join(format!("{}.{ext}", step.name))
}

/// The line between an `earlier` attempt's lines and a resumed one's in a step's log; "" at first.
fn resumed_marker(earlier: &[u8]) -> String {
    if earlier.is_empty() {
        return String::new();
    }
    let newline = if earlier.ends_with(b"\n") { "" } else { "\n" };
    format!(
        "{newline}\n==== a resumed attempt starts here ({}); the lines above are an earlier \
         attempt's ====\n",
        stamp_now()
    )
}

fn read_log(log: &Path) -> Result<Vec<u8>> {
    match std::fs::read(log) {
        Ok(bytes) => Ok(bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e).with_context(|| format!("reading {}", log.display())),
    }
}

/// A CPU step: a child and run folder per comparison (`cpu/0-transpose-naive`), one cap and log:
/// a runtime that aborts on one kernel (PoCL 5.0 asserted in its work-group pass) costs only that.
fn run_cpu_step(
    args: &SuiteArgs,
    out: &Path,
    step: &Step,
    name: &str,
    allowance_s: f64,
) -> Result<StepRow> {
    let exe = std::env::current_exe().context("finding this program to run it again")?;
    let (dir, cpu) = (out.join(step.dir), on_the_cpu(args));
    let (log, part) = (log_file(out, step, "log"), log_file(out, step, "part.log"));
    let text = suite::study_text(name, args.quick).map_err(anyhow::Error::msg)?;
    let study = clvscu::study::parse(&text, name)?;
    let started = Instant::now();
    let row = |status, code, note: String| StepRow {
        step: step.name.into(),
        status,
        exit_code: Some(code),
        wall_s: started.elapsed().as_secs_f64(),
        cap_s: allowance_s.floor() as u32,
        note,
    };
    let earlier = read_log(&log)?;
    let mut text = String::from_utf8_lossy(&earlier).into_owned() + &resumed_marker(&earlier);
    let (mut aborted, mut errors, mut failed_configs) = (Vec::new(), Vec::new(), false);
    let mut status = StepStatus::Done;
    for (i, comparison) in study.comparisons.iter().enumerate() {
        let left = allowance_s - started.elapsed().as_secs_f64();
        if left <= 0.0 {
            status = StepStatus::Capped;
            break;
        }
        let own = dir.join(format!(
            "{i}-{}",
            comparison.id.replace(['/', '@', '='], "-")
        ));
        let mut c = Command::new(&exe);
        study_command(&mut c, &cpu, &own, step, name)?;
        c.args(one_comparison(&study, &comparison.id));
        let fresh =
            std::fs::File::create(&part).with_context(|| format!("creating {}", part.display()))?;
        let (code, capped) = run_capped(c, fresh, left)?;
        let said = part_text(&part);
        text += &said;
        clvscu::export::write_atomic(&log, text.as_bytes())?;
        match code {
            Some(EXIT_OK) => {}
            Some(EXIT_FAILED_CONFIGS) => failed_configs = true,
            Some(EXIT_ERROR) => match no_opencl_cpu(&said) {
                Some(why) => {
                    let _ = std::fs::remove_file(&part);
                    return Ok(row(StepStatus::Skipped, EXIT_ERROR, why));
                }
                None => errors.push(comparison.id.clone()),
            },
            _ if stop_signal().is_some() => {
                status = StepStatus::Interrupted;
                break;
            }
            _ if capped => {
                status = StepStatus::Capped;
                break;
            }
            _ => aborted.push(comparison.id.clone()),
        }
    }
    let _ = std::fs::remove_file(&part);
    let mut notes = Vec::new();
    let ended = [(&aborted, ABORTED), (&errors, "ended with an error (see")];
    for (ids, how) in ended.into_iter().filter(|(ids, _)| !ids.is_empty()) {
        let (n, of, step) = (ids.len(), study.comparisons.len(), step.name);
        notes.push(format!(
            "{n} of {of} comparisons {how} logs/{step}.log): {}",
            ids.join(", ")
        ));
    }
    if aborted.len() + errors.len() == study.comparisons.len() {
        status = StepStatus::Failed;
    }
    if failed_configs {
        notes.push(
            "some configuration failed to build, launch or verify (see each folder's summary)"
                .into(),
        );
    }
    if status == StepStatus::Capped {
        notes.push(CAPPED_NOTE.into());
    }
    let whole = aborted.is_empty() && errors.is_empty() && !failed_configs;
    let code = if whole { EXIT_OK } else { EXIT_FAILED_CONFIGS };
    Ok(row(status, code, notes.join("; ")))
}

/// The arguments that select the comparison `id` alone: `--only` takes every name containing
/// its text, so the others containing `id` (`transpose/copy-barrier`) are skipped by name.
fn one_comparison(study: &clvscu::study::Study, id: &str) -> Vec<String> {
    let mut args = vec!["--only".to_string(), id.to_string()];
    for other in study
        .comparisons
        .iter()
        .filter(|c| c.id != id && c.id.contains(id))
    {
        args.extend(["--skip".to_string(), other.id.clone()]);
    }
    args
}

/// One CPU comparison's part log, bytes that are not UTF-8 (a CPU runtime's own) replaced.
fn part_text(part: &Path) -> String {
    std::fs::read(part)
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_default()
}

/// What a step with failed configurations failed at: each status, its count and first error (a
/// launch refused on purpose reads unlike a kernel that did not verify); else the generic line.
fn failed_rows_note(dir: &Path) -> String {
    let generic = "some configuration failed to build, launch or verify (see its summary)";
    let Ok(rows) = read_rows::<MeasurementRow>(&dir.join(MEASUREMENTS_CSV)) else {
        return generic.into();
    };
    let mut failed: std::collections::BTreeMap<&str, (usize, &str)> = Default::default();
    for r in rows.iter().filter(|r| r.status != clvscu::rows::Status::Ok) {
        let status: &str = r.status.into();
        failed.entry(status).or_insert((0, &r.error)).0 += 1;
    }
    if failed.is_empty() {
        return generic.into();
    }
    let parts: Vec<String> = failed
        .iter()
        .map(|(status, (n, error))| {
            // Escaped, a driver's message cannot move the cursor or reverse the text of suite.md.
            let first_line = printable(error.lines().next().unwrap_or(""));
            format!("{n} of {} rows {status} ({first_line})", rows.len())
        })
        .collect();
    format!("{}; see its summary", parts.join("; "))
}

/// Runs `command` guarded into `file`, stopped past `cap_s` seconds: its exit code, and if capped.
fn run_capped(
    mut command: Command,
    file: std::fs::File,
    cap_s: f64,
) -> Result<(Option<i32>, bool)> {
    command
        .stdout(file.try_clone()?)
        .stderr(file)
        .stdin(Stdio::null());
    let mut child = children::guard(&mut command, libc::SIGTERM)
        .spawn()
        .with_context(|| format!("starting {:?}", command.get_program()))?;
    let cap = Some(Duration::from_secs_f64(cap_s));
    Ok(children::wait_stopping(&mut child, cap)?)
}

/// After the steps: the peaks table, the report of the whole folder, suite.md.
fn finish(args: &SuiteArgs, out: &Path, rows: &[StepRow]) -> Result<()> {
    let peak_rows: Vec<MeasurementRow> =
        read_rows_if_file(&out.join("peaks").join(MEASUREMENTS_CSV))?;
    // Eq. 3 of the CUDA device the steps ran on (none where the pair does not use CUDA).
    let list = uses_cuda(args).then(clvscu::backend::cuda::list_devices);
    let selector = args.devices.cuda_device.as_deref();
    let cuda = list
        .and_then(Result::ok)
        .and_then(|list| the_cuda_device(list, selector));
    let eq3 = cuda.as_ref().and_then(peaks::eq3);
    let peaks_md = peaks::markdown(&peak_rows, eq3.as_ref());
    clvscu::export::write_atomic(&out.join(peaks::FILE), peaks_md.as_bytes())?;
    let catalog = clvscu::families::catalog();
    let report = write_report(&[out.to_path_buf()], out, true, &catalog);
    match &report {
        // The report's front page under the name the suite promises, beside its pages.
        Ok(_) => std::fs::copy(out.join("index.html"), out.join("report.html"))
            .map(drop)
            .with_context(|| format!("copying {}", out.join("index.html").display()))?,
        Err(e) => say_err!("warning: no report: {e}"),
    }
    let have_findings = findings(out, report.is_ok())
        .inspect_err(|e| say_err!("warning: no findings: {e}"))
        .is_ok();
    let mut md = format!(
        "# clvscu suite ({})\n\n{}\n",
        mode(args),
        state::markdown(rows)
    );
    // Only what this finish wrote is named: a folder without a run has no report to open.
    let mut written = vec!["suite.md", "suite.csv", "peaks.md"];
    let last = match (have_findings, &report) {
        (true, Ok(_)) => {
            written.extend(["findings.md", "findings.html", "report.md", "report.html"]);
            "The findings: findings.md and findings.html; the report: report.md and report.html."
        }
        (true, Err(_)) => {
            written.extend(["findings.md", "findings.html", "report.md"]);
            "The findings: findings.md and findings.html; report.md opens them (no HTML report)."
        }
        (false, Ok(_)) => {
            // findings() moves report.md aside first; it may have failed before or after.
            let md = [clvscu::report::findings::APPENDIX, "report.md"]
                .into_iter()
                .find(|f| out.join(f).is_file())
                .unwrap_or("report.md");
            written.extend([md, "report.html"]);
            &format!("No findings; the report: {md} and report.html.")
        }
        (false, Err(e)) => &format!("No findings and no report: {e}."),
    };
    md += &format!("\n{peaks_md}\n{last}\n");
    write_suite_md(out, &md, rows, &peaks_md, &written)
}

/// Writes suite.md, then says the steps, `text` (what the plan found) and the files `written`.
fn write_suite_md(
    out: &Path,
    md: &str,
    rows: &[StepRow],
    text: &str,
    written: &[&str],
) -> Result<()> {
    clvscu::export::write_atomic(&out.join("suite.md"), md.as_bytes())?;
    say!("{}", state::markdown(rows));
    say_text!("{text}");
    let paths: Vec<String> = written
        .iter()
        .map(|f| out.join(f).display().to_string())
        .collect();
    say!("written: {}", paths.join(", "));
    Ok(())
}

/// The findings as the report's front page, the per-folder report moved behind as the appendix.
fn findings(out: &Path, have_report: bool) -> Result<()> {
    use clvscu::report::findings::{write_suite, APPENDIX};
    if have_report {
        std::fs::rename(out.join("report.md"), out.join(APPENDIX))
            .with_context(|| format!("moving report.md to {APPENDIX}"))?;
    }
    let mut front = write_suite(out, have_report.then_some(APPENDIX))?.front_page;
    if have_report {
        front += &format!(
            "\nEvery table and chart of every step: [{APPENDIX}]({APPENDIX}); the HTML report: report.html.\n"
        );
    }
    clvscu::export::write_atomic(&out.join("report.md"), front.as_bytes())?;
    Ok(())
}

/// After the rule plan's steps: suite.md with the steps and the checks. No report: a chart per
/// sweep comparison would cost more than the sweep.
fn finish_rule(args: &SuiteArgs, out: &Path, rows: &[StepRow]) -> Result<()> {
    let checks = std::fs::read_to_string(out.join("rules").join("checks.md"))
        .unwrap_or_else(|_| "No checks: the table step did not finish.\n".into());
    let md = format!(
        "# clvscu suite --plan matvec-rule ({})\n\n{}\n\nThe table: rules/matvec-auto-*.toml \
         (copy it into harness/rules/ and rebuild, or name it in CLVSCU_MATVEC_RULES).\n\n{checks}",
        mode(args),
        state::markdown(rows)
    );
    write_suite_md(out, &md, rows, &checks, &["suite.md"])
}

/// The device of `list` that `--cuda-device` picks, as the CUDA backend does: Eq. 3's device.
fn the_cuda_device(
    list: Vec<clvscu::backend::DeviceInfo>,
    selector: Option<&str>,
) -> Option<clvscu::backend::DeviceInfo> {
    let i = clvscu::backend::cuda::select(&list, selector).ok()?;
    list.into_iter().nth(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A comparison's output that is not all UTF-8 (a CPU runtime's own message, written
    /// straight to the process's stderr) still reaches the step's log, its odd bytes replaced.
    #[test]
    fn a_comparison_s_output_that_is_not_utf8_is_kept_in_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let part = dir.path().join("cpu.part.log");
        std::fs::write(
            &part,
            b"clvscu study 'cpu'\npocl: bad \xff byte\nafter it\n",
        )
        .unwrap();
        let said = part_text(&part);
        assert!(said.contains("clvscu study 'cpu'"), "{said:?}");
        assert!(said.contains("after it"), "{said:?}");
        // No part log at all (the child could not be started into it) is no text.
        assert_eq!(part_text(&dir.path().join("none.log")), "");
    }

    /// Each child of the CPU step runs its one comparison: `--only transpose/copy` alone
    /// would also run `transpose/copy-barrier`, measured twice into two folders.
    #[test]
    fn each_cpu_child_selects_exactly_its_comparison() {
        let text = suite::study_text("cpu", true).unwrap();
        let study = clvscu::study::parse(&text, "cpu").unwrap();
        let ids: Vec<&str> = study.comparisons.iter().map(|c| c.id.as_str()).collect();
        assert!(ids.contains(&"transpose/copy") && ids.contains(&"transpose/copy-barrier"));
        for id in &ids {
            let args = one_comparison(&study, id);
            // As `run` reads --only and --skip: a name containing the text.
            let (mut only, mut skip) = (None, Vec::new());
            for pair in args.chunks(2) {
                match pair[0].as_str() {
                    "--only" => only = Some(pair[1].clone()),
                    "--skip" => skip.push(pair[1].clone()),
                    other => panic!("{other}"),
                }
            }
            let only = only.unwrap();
            let picked: Vec<&str> = ids
                .iter()
                .copied()
                .filter(|c| c.contains(only.as_str()))
                .filter(|c| !skip.iter().any(|s| c.contains(s.as_str())))
                .collect();
            assert_eq!(picked, [*id], "{args:?}");
        }
    }

    /// The committed H100 suite's fill step: OpenCL refuses the article's exact launch where
    /// the local size does not divide 10^8, and the note says so with the driver's words.
    #[test]
    fn a_cpu_step_without_a_cpu_device_is_told_from_a_failure() {
        let log = "clvscu 0.1.0 study 'cpu'\nerror: OpenCL unavailable: no OpenCL device \
                   matches 'cpu'; devices: 0: NVIDIA H200 [NVIDIA CUDA]\n";
        let why = no_opencl_cpu(log).unwrap();
        assert!(
            why.starts_with("no OpenCL CPU device is listed here"),
            "{why}"
        );
        let no_icd = "error: OpenCL unavailable: no OpenCL platform is installed\n";
        assert!(no_opencl_cpu(no_icd)
            .unwrap()
            .contains("no OpenCL platform"));
        assert_eq!(no_opencl_cpu("error: s.toml: a build failed\n"), None);
    }

    #[test]
    fn eq3_is_taken_from_the_device_the_steps_ran_on() {
        let gpu = |name: &str, bus: &str| clvscu::backend::DeviceInfo {
            name: name.into(),
            pci_bus: Some(bus.into()),
            ..Default::default()
        };
        let list = || vec![gpu("NVIDIA H100", "19:00"), gpu("NVIDIA H200", "3b:00")];
        let picked = |selector| the_cuda_device(list(), selector).map(|d| d.name);
        assert_eq!(picked(None).as_deref(), Some("NVIDIA H100"));
        assert_eq!(picked(Some("1")).as_deref(), Some("NVIDIA H200"));
        // The backend reads a name case-insensitively and a PCI place too.
        assert_eq!(picked(Some("h200")).as_deref(), Some("NVIDIA H200"));
        assert_eq!(picked(Some("pci:3b:00")).as_deref(), Some("NVIDIA H200"));
        assert_eq!(picked(Some("2")), None);
    }

    #[test]
    fn a_failed_rows_note_counts_each_status_with_its_first_error() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("results/h100/fill");
        let text = std::fs::read_to_string(dir.join(MEASUREMENTS_CSV)).unwrap();
        let rows = text.lines().count() - 1;
        let refused = text
            .lines()
            .filter(|l| l.contains(",launch-failed,"))
            .count();
        assert!(refused > 0, "the fixture has refused launches");
        let note = failed_rows_note(&dir);
        assert!(
            note.starts_with(&format!("{refused} of {rows} rows launch-failed (")),
            "{note}"
        );
        assert!(note.contains("CL_INVALID_WORK_GROUP_SIZE"), "{note}");
        let empty = tempfile::tempdir().unwrap();
        assert!(failed_rows_note(empty.path()).starts_with("some configuration failed"));
    }
}
