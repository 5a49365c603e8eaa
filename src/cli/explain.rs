//! `clvscu explain`: the targets, the ladder's parts (a process each), waterfalls and verdicts.

use std::collections::btree_map::{BTreeMap, Entry};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use anyhow::{bail, ensure, Context, Result};

use clvscu::explain::ladder::not_a_target;
use clvscu::explain::run::{self as explain_run, ExplainPlan, SwapRungs, LADDER_DIR};
use clvscu::explain::{machine_code, profile, TargetExplanation, PARITY};
use clvscu::rows::{PrRow, PRS_CSV};
use clvscu::session::provenance::GIT_COMMIT;
use clvscu::session::RunContext;
use clvscu::study::{self, Comparison, Study};
use clvscu::terminal::printable;

use crate::cli::args::ExplainArgs;
use crate::cli::children;
use crate::cli::progress::ProgressView;
use crate::cli::setup::{load_study, open_sides, out_folder, show_event, stamp_now};
use crate::cli::stopping::{interrupt_flag, start_watchdog, EXIT_INTERRUPTED, EXIT_OK};

pub fn run(args: ExplainArgs) -> Result<i32> {
    args.run.devices.one_cuda_device("explain")?;
    // explain writes its own files: an export option is refused, not ignored.
    if let Some((option, _)) = args.run.exports().find(|(_, path)| path.is_some()) {
        bail!(
            "explain does not take {option}: its rows are in explain.csv and \
             explain-verdicts.csv of its folder (export a rung's run folder with `clvscu run`)"
        );
    }
    if let Some(dir) = &args.from {
        verdicts(&redraw_folder(dir, args.run.out.as_deref())?)?;
        return Ok(EXIT_OK);
    }
    let targets = targets(&args)?;
    let out = out_folder(args.run.out.as_deref(), "explain", &stamp_now())?;
    if let Some(part) = args.part.as_deref() {
        return run_part(&args, targets, &out, part);
    }
    ensure!(
        args.run.resume || !out.join(LADDER_DIR).exists(),
        "{} holds an earlier explain: continue it with --resume, or give another --out",
        out.display()
    );
    let code_only: Vec<PrRow> = code_only_targets(&args, &targets)?
        .into_iter()
        .map(|(_, row)| row)
        .collect();
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    clvscu::export::csv::write_rows(&out.join(machine_code::CODE_ONLY_CSV), &code_only)?;
    run_parts(&out, !args.no_profile)
}

/// The folder `--from DIR` writes its verdicts into: DIR, or with `--out` a copy of DIR's rungs,
/// so a folder given only to be read is never written. A DIR without a ladder is an error.
fn redraw_folder(dir: &Path, out: Option<&Path>) -> Result<PathBuf> {
    let from = dir.display();
    ensure!(dir.is_dir(), "--from {from}: no such folder");
    ensure!(
        dir.join(LADDER_DIR).is_dir(),
        "--from {from}: holds no explain ladder ({LADDER_DIR}/); give a folder \
         `clvscu explain` wrote"
    );
    let (prs, _) = explain_run::read_folder_rows(dir)
        .with_context(|| format!("reading the rungs under {from}"))?;
    if prs.is_empty() {
        bail!("--from {from}: its ladder holds no rung with a PR");
    }
    let Some(out) = out else {
        return Ok(dir.to_path_buf());
    };
    if std::fs::canonicalize(dir).ok() != std::fs::canonicalize(out).ok() {
        let shown = out.display();
        if within(out, dir) {
            // The copy would be part of what it copies, again and again.
            bail!("--out {shown}: inside --from {from}; give a folder outside the one read");
        }
        if std::fs::read_dir(out).is_ok_and(|mut d| d.next().is_some()) {
            bail!("--out {shown}: already exists and is not empty; give a new folder");
        }
        copy_rungs(dir, out)?;
    }
    Ok(out.to_path_buf())
}

/// Whether `path` (which need not exist yet) lies inside the folder `dir`: its nearest
/// existing ancestor resolved, links and `..` included, and the rest of it appended.
fn within(path: &Path, dir: &Path) -> bool {
    let Ok(dir) = std::fs::canonicalize(dir) else {
        return false;
    };
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    for at in absolute.ancestors() {
        if let Ok(real) = std::fs::canonicalize(at) {
            let rest = absolute.strip_prefix(at).unwrap_or(Path::new(""));
            return real.join(rest).starts_with(&dir);
        }
        if at.file_name().is_none() {
            break;
        }
    }
    false
}

/// Copies the files under `from` to `to` through the safe writer; a link is refused.
fn copy_rungs(from: &Path, to: &Path) -> Result<()> {
    clvscu::export::safe::prepare_dir(to, true)?;
    for entry in std::fs::read_dir(from).with_context(|| from.display().to_string())? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let (source, target) = (entry.path(), to.join(entry.file_name()));
        if kind.is_dir() {
            copy_rungs(&source, &target)?;
        } else if kind.is_file() {
            let bytes = clvscu::input_file::read_capped(&source, clvscu::input_file::RESULT_CAP)
                .with_context(|| source.display().to_string())?;
            clvscu::export::write_atomic(&target, &bytes)?;
        } else {
            bail!("{}: not a file or folder; not copied", source.display());
        }
    }
    Ok(())
}

/// The file the `ladder` part leaves the NVRTC-PTX rungs in, one id a line, for the parent.
const PENDING: &str = "pending-swaps.txt";
// The `--part` values: every pass but the NVRTC-PTX rungs; reading each runtime's machine code;
// the run ncu watches (`explain::profile`).
const LADDER_PART: &str = "ladder";
const MACHINE_CODE_PART: &str = "machine-code";
const PROFILE_PART: &str = "profile";

/// The parent: each part in a process of its own, one after another, then the verdicts. A
/// stop signal to it ends the running part's process group (see `children`).
fn run_parts(out: &Path, profile: bool) -> Result<i32> {
    children::catch_stop_signals();
    let code = run_part_process(out, LADDER_PART, &[])?;
    if code == EXIT_INTERRUPTED {
        return Ok(code);
    }
    let pending = out.join(PENDING);
    let ids = std::fs::read_to_string(&pending).unwrap_or_default();
    for id in ids.lines().filter(|l| !l.is_empty()) {
        if run_part_process(out, id, &[])? == EXIT_INTERRUPTED {
            return Ok(EXIT_INTERRUPTED);
        }
    }
    let _ = std::fs::remove_file(&pending);
    if run_machine_code_part(out)? == EXIT_INTERRUPTED {
        return Ok(EXIT_INTERRUPTED);
    }
    if profile {
        profile_with_ncu(out)?;
    }
    if children::stop_signal().is_some() {
        return Ok(EXIT_INTERRUPTED);
    }
    let missing = verdicts(out)?
        .iter()
        .flat_map(|t| &t.rungs)
        .filter(|r| r.pr.is_none())
        .count();
    if missing > 0 {
        say!(
            "{missing} rung(s) have no PR (explain.md says why for each); the verdicts use \
             the rungs that ran"
        );
    }
    Ok(code)
}

/// The machine-code part, in a process of its own whose CUDA compute cache is an empty folder of
/// `out` (the driver reads `CUDA_CACHE_PATH` once, at start), removed afterwards.
fn run_machine_code_part(out: &Path) -> Result<i32> {
    let cache = out.join(machine_code::CACHE_DIR);
    if cache.exists() {
        std::fs::remove_dir_all(&cache).with_context(|| format!("clearing {}", cache.display()))?;
    }
    std::fs::create_dir_all(&cache).with_context(|| format!("creating {}", cache.display()))?;
    let env = [
        ("CUDA_CACHE_PATH", cache.display().to_string()),
        ("CUDA_CACHE_DISABLE", "0".to_string()),
        ("CUDA_CACHE_MAXSIZE", (4u64 << 30).to_string()),
    ];
    let code = run_part_process(out, MACHINE_CODE_PART, &env)?;
    let _ = std::fs::remove_dir_all(&cache);
    Ok(code)
}

/// The profile part in a process of its own under ncu, where ncu is at hand and the ladder kept
/// the PTX texts. A failure is a note; the verdicts do not depend on it.
fn profile_with_ncu(out: &Path) -> Result<()> {
    let Some(ncu) = clvscu::inspect::sass::find_cuda_tool("ncu") else {
        say!("ncu not found: no hardware counters (explain.md says so)");
        return Ok(());
    };
    if !out.join(clvscu::explain::code::PTX_INDEX_CSV).is_file() {
        return Ok(());
    }
    let (exe, part) = part_command_line(out, PROFILE_PART)?;
    let mut args = profile::ncu_arguments(&out.join(profile::RAW_FILE));
    args.push(exe.display().to_string());
    args.extend(part);
    let status = children::run_to_end(std::process::Command::new(&ncu).args(&args))
        .with_context(|| format!("running {}", ncu.display()))?;
    let status = format!("exit {status}");
    let version = std::process::Command::new(&ncu).arg("--version").output();
    let version = version.map_or(String::new(), |o| String::from_utf8_lossy(&o.stdout).into());
    match profile::collect(out, version.lines().last().unwrap_or("").trim()) {
        Ok(rows) => say!("ncu: counters of {} runs ({status})", rows.len()),
        Err(e) => say!("ncu: no counters ({status}): {}", printable(&e.to_string())),
    }
    Ok(())
}

/// The profile part: only the CUDA driver is opened (ncu sees nothing of OpenCL's), and each
/// target's CUDA side runs once with each front end's PTX.
fn run_profile_part(args: &ExplainArgs, targets: &[Comparison], out: &Path) -> Result<i32> {
    let sources = args.run.devices.sources()?;
    let mut cuda =
        clvscu::backend::cuda::CudaBackend::open(args.run.devices.cuda_device.as_deref())?;
    let order = profile::profile(out, targets, &sources, &mut cuda)?;
    for o in order.iter().filter(|o| !o.verified) {
        say!(
            "profile: {} with {}'s PTX: {}",
            printable(&o.target),
            o.code.label(),
            printable(&o.note)
        );
    }
    Ok(EXIT_OK)
}

/// The machine-code part, in this process: the targets' and code-only gaps' code, then replays.
fn run_machine_code_part_here(
    args: &ExplainArgs,
    targets: Vec<Comparison>,
    out: &Path,
) -> Result<i32> {
    let sources = args.run.devices.sources()?;
    let mut sides = open_sides(&args.run)?;
    let cache = out.join(machine_code::CACHE_DIR);
    let capped = machine_code::capped_rungs(out);
    let mut all = targets;
    all.extend(code_only_targets(args, &all)?.into_iter().map(|(c, _)| c));
    let budget = args.code_budget.map_or(machine_code::BUDGET_S, f64::from);
    machine_code::collect(&all, &capped, out, &sources, &mut sides, &cache, budget)?;
    // The replays after the code: their own builds would otherwise be in the private
    // cache before the targets' builds that share a kernel file.
    if let Err(e) = clvscu::explain::replay::collect(&all, &sources, &mut sides, out) {
        say!("replay: not run: {}", printable(&e.to_string()));
    }
    Ok(EXIT_OK)
}

/// One part, in this process: `ladder`, `profile`, `machine-code`, or one NVRTC-PTX rung.
fn run_part(args: &ExplainArgs, targets: Vec<Comparison>, out: &Path, part: &str) -> Result<i32> {
    if part == PROFILE_PART {
        return run_profile_part(args, &targets, out);
    }
    if part == MACHINE_CODE_PART {
        return run_machine_code_part_here(args, targets, out);
    }
    let shown = out.display();
    let kept = format!("every finished rung is in {shown}; continue with --resume --out {shown}");
    let watchdog = start_watchdog(format!("{kept} (or raise --timeout)"));
    let interrupted = interrupt_flag(&watchdog, kept);
    let sources = args.run.devices.sources()?;
    let mut sides = open_sides(&args.run)?;
    let view = ProgressView::new(args.run.quiet);
    let plan = ExplainPlan {
        targets,
        out: out.to_path_buf(),
        resume: true,
        command_line: std::env::args().collect(),
        context: RunContext {
            watchdog: Some(&watchdog),
            timeout_s: args.run.timeout,
            on_progress: Some(&|p| view.tell(p)),
            ..RunContext::new(
                format!("{}-{GIT_COMMIT}", stamp_now()),
                &sources,
                &interrupted,
            )
        },
        swaps: match part {
            LADDER_PART => SwapRungs::Deferred,
            id => SwapRungs::Only(id.to_string()),
        },
    };
    let report = explain_run::run(&plan, &mut sides, &mut show_event)?;
    if part == LADDER_PART {
        let list = report.pending_swaps.join("\n") + "\n";
        clvscu::export::write_atomic(&out.join(PENDING), list.as_bytes())?;
    }
    let stopped = report.summary.interrupted || interrupted.load(Ordering::SeqCst);
    Ok(if stopped { EXIT_INTERRUPTED } else { EXIT_OK })
}

/// Runs this command again for one part, resuming `out`, with `env` added; its exit code.
fn run_part_process(out: &Path, part: &str, env: &[(&str, String)]) -> Result<i32> {
    let (exe, args) = part_command_line(out, part)?;
    let mut command = std::process::Command::new(&exe);
    command.args(&args).envs(env.iter().map(|(k, v)| (k, v)));
    let code = children::run_to_end(&mut command)
        .with_context(|| format!("running {} for {part}", exe.display()))?;
    if children::stop_signal().is_some() {
        // Stopped from outside: whatever the part said, the explain stops here.
        return Ok(EXIT_INTERRUPTED);
    }
    if code != EXIT_OK {
        say!("{}: its process ended with exit {code}", printable(part));
    }
    Ok(code)
}

fn part_command_line(out: &Path, part: &str) -> Result<(PathBuf, Vec<String>)> {
    let exe = std::env::current_exe().context("finding this program to run it again")?;
    let mut args = resume_arguments(std::env::args().skip(1), out);
    args.extend(["--part".into(), part.to_string()]);
    Ok((exe, args))
}

/// The command line again, resuming `out`: its own `--out` and `--resume` replaced.
fn resume_arguments(args: impl Iterator<Item = String>, out: &Path) -> Vec<String> {
    let mut kept = children::without(args, &["--out", "--part"], &["--resume"]);
    kept.extend(["--resume".into(), "--out".into(), out.display().to_string()]);
    kept
}

/// TARGET, where it is a run folder.
fn target_folder(args: &ExplainArgs) -> Option<PathBuf> {
    let folder = PathBuf::from(args.run.target.as_deref()?);
    folder.join(PRS_CSV).is_file().then_some(folder)
}

/// The comparisons to explain: a run folder's fair gaps, a study's, or the command line's.
fn targets(args: &ExplainArgs) -> Result<Vec<Comparison>> {
    let comparisons = match target_folder(args) {
        Some(dir) => {
            let gaps = folder_gaps(&dir, args.all)?;
            let prs: Vec<(&str, f64)> = gaps.iter().map(|(c, r)| (c.id.as_str(), r.pr)).collect();
            let far = farthest_of(&prs, args.max_targets);
            far.into_iter().map(|i| gaps[i].0.clone()).collect()
        }
        None => {
            let mut run = args.run.clone();
            // A study named as TARGET is a study, not a kernel.
            if let Some(t) = run.target.clone().filter(|t| study::load(t).is_ok()) {
                run.target = None;
                run.study = Some(t);
            }
            load_study(&run)?.0.comparisons
        }
    };
    let mut targets = Vec::new();
    for c in comparisons {
        match not_a_target(&c) {
            None if !targets.iter().any(|t: &Comparison| t.id == c.id) => targets.push(c),
            None => {}
            Some(why) => say!("skipped {}", printable(&why)),
        }
    }
    if targets.is_empty() {
        bail!("nothing to explain: no fair comparison among the targets");
    }
    Ok(targets)
}

/// The `--machine-code-for` folders' fair gaps that are no target, with their rows: code only.
fn code_only_targets(
    args: &ExplainArgs,
    targets: &[Comparison],
) -> Result<Vec<(Comparison, PrRow)>> {
    let mut found: Vec<(Comparison, PrRow)> = Vec::new();
    // The gaps of the target folder past --max-targets are read without rungs too.
    let own = args.max_targets.and(target_folder(args));
    for dir in own.iter().chain(&args.machine_code_for) {
        for (c, row) in folder_gaps(dir, false)? {
            let known =
                targets.iter().any(|t| t.id == c.id) || found.iter().any(|(f, _)| f.id == c.id);
            if !known {
                found.push((c, row));
            }
        }
    }
    Ok(found)
}

/// The first row of each comparison of `prs`, or of the `max` farthest from parity (in
/// logarithm), in the rows' order; a sweep's comparison counts once, at its farthest row.
fn farthest_of(prs: &[(&str, f64)], max: Option<u32>) -> Vec<usize> {
    let mut each: Vec<(usize, f64)> = Vec::new();
    for (i, (id, pr)) in prs.iter().enumerate() {
        let distance = pr.ln().abs();
        match each.iter_mut().find(|(first, _)| prs[*first].0 == *id) {
            Some(e) => e.1 = e.1.max(distance),
            None => each.push((i, distance)),
        }
    }
    if let Some(max) = max {
        let mut by_distance = each.clone();
        by_distance.sort_by(|a, b| b.1.total_cmp(&a.1));
        by_distance.truncate(max as usize);
        each.retain(|e| by_distance.iter().any(|kept| kept.0 == e.0));
    }
    each.into_iter().map(|(i, _)| i).collect()
}

/// The fair comparisons of a run folder (outside [0.98, 1.02] unless `all`) with their rows.
fn folder_gaps(dir: &Path, all: bool) -> Result<Vec<(Comparison, PrRow)>> {
    let prs: Vec<PrRow> = clvscu::export::csv::read_rows(&dir.join(PRS_CSV))?;
    let saved = dir.join(clvscu::session::run::STUDY_FILE);
    let saved = saved
        .is_file()
        .then(|| saved.to_string_lossy().into_owned());
    // Each study is read once, at the first row that needs it: a folder's rows share one.
    let mut studies: BTreeMap<String, Study> = BTreeMap::new();
    let mut found = Vec::new();
    for row in prs.iter().filter(|r| r.fair) {
        if !all && (PARITY.0..=PARITY.1).contains(&row.pr) {
            continue;
        }
        let name = saved.clone().unwrap_or_else(|| row.study.clone());
        let study = match studies.entry(name) {
            Entry::Occupied(known) => known.into_mut(),
            Entry::Vacant(new) => {
                let study = study::load(new.key()).with_context(|| {
                    format!(
                        "{}: the study '{}' of its rows is neither built in nor saved as study.toml",
                        dir.display(),
                        row.study
                    )
                })?;
                new.insert(study)
            }
        };
        match study.comparisons.iter().find(|c| c.id == row.comparison) {
            Some(c) => found.push((c.clone(), row.clone())),
            None => say!(
                "skipped {}: study '{}' has no comparison of that name now",
                printable(&row.comparison),
                printable(&row.study)
            ),
        }
    }
    Ok(found)
}

/// The verdicts of the rungs under `out`: written, drawn and printed.
fn verdicts(out: &Path) -> Result<Vec<TargetExplanation>> {
    let (all, files) = explain_run::write_outputs(out)
        .with_context(|| format!("reading the rungs under {}", out.display()))?;
    let (prs, measurements) = explain_run::read_folder_rows(out)?;
    let dir = out.join("charts");
    clvscu::export::safe::prepare_dir(&dir, true)?;
    let charts = clvscu::plot::waterfall::draw(
        &clvscu::explain::waterfall::bars_per_target(&prs),
        &measurements,
        &dir,
        &[clvscu::plot::Format::Png, clvscu::plot::Format::Svg],
    )?;
    let mut table = crate::cli::tables::table(&["target", "device", "PR [CI]", "verdict"], &[2]);
    for t in &all {
        table.add_row(vec![
            printable(&t.target).into_owned(),
            t.device.clone(),
            t.pr.map_or_else(|| "—".into(), |p| p.to_string()),
            t.verdict.describe(),
        ]);
    }
    say!("{table}");
    for f in files {
        say!("wrote {}", f.display());
    }
    say!("charts: {} waterfall files", charts.len());
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::{farthest_of, resume_arguments};
    use std::path::Path;

    #[test]
    fn max_targets_counts_comparisons_not_rows() {
        // A sweep's comparison has a row per value: its two far rows are one target.
        let prs = [("a", 0.5), ("a", 0.6), ("b", 0.8), ("c", 0.99), ("b", 1.0)];
        assert_eq!(farthest_of(&prs, Some(2)), [0, 2]);
        assert_eq!(farthest_of(&prs, Some(1)), [0]);
        assert_eq!(farthest_of(&prs, None), [0, 2, 3]);
        // Far on either side of parity, in the rows' order.
        let prs = [("x", 1.02), ("y", 1.5), ("z", 0.5)];
        assert_eq!(farthest_of(&prs, Some(2)), [1, 2]);
    }

    #[test]
    fn the_new_process_resumes_the_same_folder() {
        let args = [
            "explain",
            "explain-known",
            "--out",
            "x",
            "--cl-device",
            "NVIDIA",
        ];
        assert_eq!(
            resume_arguments(args.iter().map(|s| s.to_string()), Path::new("x")),
            [
                "explain",
                "explain-known",
                "--cl-device",
                "NVIDIA",
                "--resume",
                "--out",
                "x"
            ]
        );
        let args = ["explain", "--resume", "--out=y", "m/v"];
        assert_eq!(
            resume_arguments(args.iter().map(|s| s.to_string()), Path::new("y")),
            ["explain", "m/v", "--resume", "--out", "y"]
        );
    }
}
