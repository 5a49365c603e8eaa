//! What `run` and `explain` share: opening the sides (with the fallbacks a first run on any
//! machine needs), the study a command line names, the default output folder, the run's lines.

use std::path::{Path, PathBuf};

use anyhow::{bail, ensure, Context, Result};

use clvscu::backend::cuda::CudaBackend;
use clvscu::backend::fake::{FakeBackend, FakeScript};
use clvscu::backend::opencl::OpenClBackend;
use clvscu::backend::{Api, Runtime};
use clvscu::families;
use clvscu::session::provenance::GIT_COMMIT;
use clvscu::session::run::{Event, Sides};
use clvscu::study::{self, quick::QuickRun};
use clvscu::terminal::printable;

use crate::cli::args::{DeviceArgs, Pairing, RunArgs};

/// The sides; without `--pair` and CUDA, OpenCL against itself, so a first run has a PR chart.
pub(crate) fn open_sides(args: &RunArgs) -> Result<Sides> {
    let cl_b = args.cl_device_b.as_deref();
    if let Some(pair) = args.pair {
        return open_pair(&args.devices, pair, cl_b, RUNNING);
    }
    let d = &args.devices;
    let cuda_error = match CudaBackend::open(d.cuda_device.as_deref()) {
        Ok(cuda) => {
            return Ok(match OpenClBackend::open(d.cl_device.as_deref()) {
                Ok(cl) => Sides {
                    a: Box::new(cl),
                    b: Some(Box::new(cuda)),
                },
                Err(e) => alone(Box::new(cuda), e, RUNNING),
            });
        }
        Err(e) => e,
    };
    let sides = open_pair(d, Pairing::OpenclOpencl, cl_b, RUNNING)
        .map_err(|ecl| anyhow::anyhow!("no backend can run:\n  {ecl}\n  {cuda_error}"))?;
    say_err!("note: {cuda_error}");
    say_err!("{}", noise_floor_note());
    Ok(sides)
}

/// What a run of OpenCL against itself prints at its start and end: where measured PRs are.
pub(crate) fn noise_floor_note() -> &'static str {
    "note: OpenCL against OpenCL on one device (the harness's noise floor). A PR between the \
     APIs needs an NVIDIA GPU with both OpenCL and CUDA; measured ones: results/h100 and \
     results/h200 (docs/findings.md sets them side by side)."
}

/// What a command does and the ratio it forms, as the note on a missing API says them.
pub(crate) const RUNNING: (&str, &str) = ("running", "Performance Ratio");

/// The backends of `pair`; of both APIs, one alone where the other is missing (a note in `words`).
pub(crate) fn open_pair(
    d: &DeviceArgs,
    pair: Pairing,
    cl_device_b: Option<&str>,
    words: (&str, &str),
) -> Result<Sides> {
    let open_cl =
        |sel: Option<&str>| OpenClBackend::open(sel).map(|b| Box::new(b) as Box<dyn Runtime>);
    let open_cuda =
        || CudaBackend::open(d.cuda_device.as_deref()).map(|b| Box::new(b) as Box<dyn Runtime>);
    match pair {
        Pairing::Opencl => Ok(Sides {
            a: open_cl(d.cl_device.as_deref())?,
            b: None,
        }),
        Pairing::Cuda => Ok(Sides {
            a: open_cuda()?,
            b: None,
        }),
        Pairing::OpenclOpencl => {
            let a = open_cl(d.cl_device.as_deref())?;
            let b = open_cl(cl_device_b.or(d.cl_device.as_deref()))?;
            Ok(Sides { a, b: Some(b) })
        }
        Pairing::Fake => {
            // It runs kernels through the registered families' own host emulations.
            let fake = |api| FakeBackend::new(api, FakeScript::default(), families::emulator());
            Ok(Sides {
                a: Box::new(fake(Api::OpenCl)),
                b: Some(Box::new(fake(Api::Cuda))),
            })
        }
        Pairing::OpenclCuda => match (open_cl(d.cl_device.as_deref()), open_cuda()) {
            (Ok(a), Ok(b)) => Ok(Sides { a, b: Some(b) }),
            (Ok(one), Err(e)) | (Err(e), Ok(one)) => Ok(alone(one, e, words)),
            (Err(ea), Err(eb)) => bail!("no backend can run:\n  {ea}\n  {eb}"),
        },
    }
}

fn alone(side: Box<dyn Runtime>, missing: impl std::fmt::Display, words: (&str, &str)) -> Sides {
    let (doing, ratio) = words;
    say_err!("note: {missing}");
    say_err!(
        "note: {doing} {} only; no {ratio} can be formed",
        side.api().label()
    );
    Sides { a: side, b: None }
}

/// The command line's study, when it names a kernel instead of a study.
fn quick_run(args: &RunArgs, target: &str) -> Result<QuickRun> {
    let lists = [
        ("local", &args.local),
        ("size", &args.size),
        ("groups", &args.groups),
        ("index", &args.index),
    ];
    let [local, size, groups, index] = lists.map(|(param, v)| -> Result<Vec<String>> {
        v.as_deref()
            .map(|t| study::quick::expand(param, t).map_err(anyhow::Error::msg))
            .unwrap_or(Ok(Vec::new()))
    });
    Ok(QuickRun {
        target: target.to_string(),
        local: local?,
        size: size?,
        groups: groups?,
        index: index?,
        ranges: lists
            .into_iter()
            .filter(|(_, v)| v.as_deref().is_some_and(|t| t.contains("..")))
            .map(|(p, _)| p.to_string())
            .collect(),
        reps: args.reps,
        warmup: args.warmup,
        min_time: args.min_time,
        max_time: args.max_time,
        target_ci: args.target_ci,
        timer: args.timer.clone(),
    })
}

/// The study to run and, for a command-line run, the study file it stands for.
pub(crate) fn load_study(args: &RunArgs) -> Result<(study::Study, Option<String>)> {
    clvscu::families::rule_tables::check_env()
        .context("CLVSCU_MATVEC_RULES names a table that cannot be used")?;
    let (mut study, text) = match &args.target {
        Some(target) => {
            let (s, text) = quick_run(args, target)?.study()?;
            (s, Some(text))
        }
        None => (
            study::load(args.study.as_deref().unwrap_or("default"))?,
            None,
        ),
    };
    study
        .set_stopping(args.max_time, args.target_ci)
        .map_err(|e| anyhow::anyhow!("--max-time/--target-ci: {e}"))?;
    if let Some(only) = &args.only {
        study.comparisons.retain(|c| c.id.contains(only.as_str()));
        ensure!(
            !study.comparisons.is_empty(),
            "--only '{only}' matches no comparison of study {}",
            study.name
        );
    }
    if !args.skip.is_empty() {
        let skipped = |id: &str| args.skip.iter().any(|s| id.contains(s.as_str()));
        study.comparisons.retain(|c| !skipped(&c.id));
        ensure!(
            !study.comparisons.is_empty(),
            "--skip {} leaves no comparison of study {}",
            args.skip.join(", "),
            study.name
        );
    }
    Ok((study, text))
}

/// The folders a default output name may take in one second before the run gives up.
const DEFAULT_FOLDER_TRIES: u32 = 1000;

/// The UTC second a command starts, in its default folder's name and its run id.
pub(crate) fn stamp_now() -> String {
    chrono::Utc::now().format("%Y%m%dT%H%M%SZ").to_string()
}

/// The `--out` folder `given`, or a new `clvscu-results/NAME-STAMP`, created exclusively: a run
/// started in the same second as another takes `NAME-STAMP-2`, `-3`, ..., never its folder.
pub(crate) fn out_folder(given: Option<&Path>, name: &str, stamp: &str) -> Result<PathBuf> {
    if let Some(out) = given {
        return Ok(out.to_path_buf());
    }
    let root = PathBuf::from("clvscu-results");
    std::fs::create_dir_all(&root)
        .with_context(|| format!("cannot create output directory {}", root.display()))?;
    for n in 1..=DEFAULT_FOLDER_TRIES {
        let leaf = match n {
            1 => format!("{name}-{stamp}"),
            n => format!("{name}-{stamp}-{n}"),
        };
        let path = root.join(leaf);
        match std::fs::create_dir(&path) {
            Ok(()) => return Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(e)
                    .with_context(|| format!("cannot create output directory {}", path.display()))
            }
        }
    }
    bail!(
        "{DEFAULT_FOLDER_TRIES} output folders named {}/{name}-{stamp}* exist already; give --out",
        root.display()
    )
}

pub(crate) fn show_event(event: Event) {
    match event {
        Event::Started { study, sides } => {
            say!(
                "clvscu {} ({GIT_COMMIT}) study '{}': {} comparisons",
                env!("CARGO_PKG_VERSION"),
                printable(&study.name),
                study.comparisons.len(),
            );
            let same_api = sides.b.as_ref().is_some_and(|b| b.api() == sides.a.api());
            let all = std::iter::once(sides.a.as_ref()).chain(sides.b.as_deref());
            // The names the tables give the sides, with their devices.
            for (side, letter) in all.zip([" A", " B"]) {
                let letter = if same_api { letter } else { "" };
                say!("  {}{letter}: {}", side.api(), printable(&side.info().name));
            }
        }
        Event::PassDone { row, of } => say!(
            "pass {}/{of}: {:.1} s, resident {} KiB, {} open files",
            row.pass,
            row.seconds,
            row.resident_kib.map_or("?".into(), |k| k.to_string()),
            row.open_fds.map_or("?".into(), |n| n.to_string())
        ),
        Event::Note(note) => say_err!("note: {}", printable(&note)),
    }
}
