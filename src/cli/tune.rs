//! `clvscu tune FAMILY/VARIANT`: the arguments and the command, at the edge.

use std::time::Duration;

use anyhow::{bail, Context, Result};
use strum::VariantArray as _;

use clvscu::backend::Runtime;
use clvscu::families::{FamilyId, Size};
use clvscu::rows::StrategyKind;
use clvscu::session::provenance::{record_after, GpuSnapshot};
use clvscu::tune::cache::{Cache, Outcome};
use clvscu::tune::run::{Budget, EvalOptions, Evaluation, Side};
use clvscu::tune::space::{space_def, SpaceKind};
use clvscu::tune::{self, output, provenance, scope_of, TunePlan};

use crate::cli::args::{Pairing, TuneArgs, TunePairing};
use crate::cli::setup::open_pair;

/// The target: the one given, or the first comparison of `--study` (whose kernel pairs the
/// load registers, so that their names parse).
fn target_of(args: &TuneArgs) -> Result<String> {
    let study = args.study.as_deref().map(clvscu::study::load).transpose()?;
    if let Some(t) = &args.target {
        return Ok(t.clone());
    }
    let first = study.and_then(|s| s.comparisons.into_iter().next());
    first
        .map(|c| c.a.variant.full_name())
        .context("give FAMILY/VARIANT, e.g. matvec/tuned")
}

pub fn run(args: TuneArgs) -> Result<i32> {
    args.devices.one_cuda_device("tune")?;
    let target = target_of(&args)?;
    let Some((family, variant)) = target.split_once('/') else {
        bail!("give FAMILY/VARIANT, e.g. matvec/tuned");
    };
    let family = FamilyId::parse(family)?;
    let mut strategies = Vec::new();
    for s in &args.strategy {
        let Ok(kind) = s.parse::<StrategyKind>() else {
            let known: Vec<&str> = StrategyKind::VARIANTS.iter().map(|&k| k.into()).collect();
            bail!("unknown strategy '{s}': {}", known.join(", "));
        };
        strategies.push(kind);
    }
    // The backends of `--pair`, as `run` opens them: without CUDA, OpenCL alone.
    let pair = match args.pair {
        TunePairing::OpenclCuda => Pairing::OpenclCuda,
        TunePairing::Opencl => Pairing::Opencl,
        TunePairing::Cuda => Pairing::Cuda,
        TunePairing::Fake => Pairing::Fake,
    };
    let sides = open_pair(&args.devices, pair, None, ("tuning", "best-vs-best ratio"))?;
    let mut backends: Vec<Box<dyn Runtime>> = std::iter::once(sides.a).chain(sides.b).collect();
    let kind = match &args.space {
        Some(s) => s
            .parse::<SpaceKind>()
            .map_err(|_| anyhow::anyhow!("--space {s}: full or small"))?,
        None if backends.iter().all(|b| b.info().is_gpu) => SpaceKind::Full,
        None => SpaceKind::Small,
    };
    let def = space_def(family, variant, kind)?;
    let size = Size::parse(args.size.as_deref().unwrap_or(def.size))?;
    let sources = args.devices.sources()?;
    // A link planted in the output folder would take a write elsewhere: refused by name.
    clvscu::export::safe::prepare_dir(&args.out, true)?;
    let cache_path = args
        .cache
        .clone()
        .unwrap_or_else(|| tune::default_cache(&args.out));
    let kept = format!(
        "every finished evaluation is in the cache {}; the same command continues from it",
        cache_path.display()
    );
    let watchdog = crate::cli::stopping::start_watchdog(format!("{kept}."));
    let interrupted = crate::cli::stopping::interrupt_flag(&watchdog, kept.clone());
    let plan = TunePlan {
        def,
        size,
        strategies,
        budget: Budget {
            evaluations: args.budget,
            seconds: args.budget_s,
        },
        seed: args.seed,
        options: EvalOptions {
            warmup: args.warmup,
            reps: args.reps,
        },
        sources: &sources,
        watchdog: Some(&watchdog),
        interrupted: Some(&interrupted),
        timeout: args.timeout.map(Duration::from_secs_f64),
        progress: Some(&|line: String| say!("{line}")),
    };
    let mut cache = Cache::open(&cache_path)?;
    if cache.unchecked() > 0 {
        say_err!(
            "note: {} entries of {} have no checksum (an older cache): measured again",
            cache.unchecked(),
            cache_path.display()
        );
    }
    let before = cache.len();
    let mut sides = Vec::new();
    for b in backends.iter_mut() {
        let scope = scope_of(b.as_ref(), &sources, def, size)?;
        say_err!("tuning {target} on {} ({})", b.info().name, b.api().label());
        sides.push(Side {
            backend: b.as_mut(),
            scope,
        });
    }
    let gpus_before = GpuSnapshot::now();
    let report = plan.execute(&mut sides, &mut cache)?;
    // Times no device can give (a broken timer, or a cache edited and signed again) are never
    // the best; how many, and why the first is.
    let implausible = |e: &&Evaluation| matches!(e.outcome, Outcome::Implausible { .. });
    let bad: Vec<_> = report.evaluations.iter().filter(implausible).collect();
    if let Some(first) = bad.first() {
        say_err!(
            "note: {} evaluation(s) implausible, never taken as best (first: {} {} on {}: {})",
            bad.len(),
            first.config.text(),
            first.outcome.status(),
            first.api.label(),
            first.outcome.message()
        );
    }
    let infos: Vec<_> = backends.iter().map(|b| b.info()).collect();
    let command_line: Vec<String> = std::env::args().collect();
    let mut prov = provenance::of_tune(&plan, &report.space, &infos, &command_line, gpus_before);
    record_after(&mut prov, GpuSnapshot::now());
    let title = format!("{target} at {size}");
    output::write_all(&report, &args.out, &title, &prov).context("writing the tuning results")?;
    if !args.no_charts {
        if let Err(e) = output::draw_charts(&report, &args.out, &title, &subtitle(&infos)) {
            say_err!("note: no charts: {e}");
        }
    }
    say!("{}", output::answer_markdown(&report, &title, None));
    say!(
        "cache {}: {} entries ({} new); results in {}",
        cache_path.display(),
        cache.len(),
        cache.len() - before,
        args.out.display()
    );
    if report.interrupted {
        say_err!("interrupted: {kept}");
        return Ok(crate::cli::stopping::EXIT_INTERRUPTED);
    }
    Ok(0)
}

fn subtitle(infos: &[&clvscu::backend::DeviceInfo]) -> String {
    let mut devices: Vec<String> = Vec::new();
    let mut drivers: Vec<String> = Vec::new();
    for i in infos {
        for (list, value) in [(&mut devices, &i.name), (&mut drivers, &i.driver_version)] {
            if !list.contains(value) {
                list.push(value.clone());
            }
        }
    }
    let when = chrono::Utc::now().format("%Y-%m-%d %H:%M UTC").to_string();
    clvscu::plot::style::subtitle(&devices, &drivers, &[when])
}
