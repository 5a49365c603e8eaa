//! The report's content: run folders grouped per GPU, and per folder its PR, fairness and
//! measurement tables; per GPU the vendor-baseline ratios. Built as [`Doc`] blocks.

use crate::plot::distinct;
use crate::rows::{Catalog, MeasurementRow, PrRow, Side, Status, Step};

use super::baseline;
use super::doc::{Block, Doc, Table};
use super::load::RunFolder;

/// The GPU(s) of a folder: model (`NVIDIA H100 80GB HBM3`), place (`pci 19:00`) and drivers
/// (`OpenCL 580.159.04, CUDA 13.0`). The report groups by model, the rest beneath.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GpuKey {
    pub model: String,
    pub place: Option<String>,
    pub drivers: String,
}

impl GpuKey {
    pub fn beneath(&self) -> String {
        let mut parts = Vec::new();
        if let Some(place) = &self.place {
            parts.push(place.clone());
        }
        if !self.drivers.is_empty() {
            parts.push(format!("driver {}", self.drivers));
        }
        join_or(&parts, " · ", "no PCI bus or driver recorded")
    }

    pub fn full_title(&self) -> String {
        format!("{} ({})", self.model, self.beneath())
    }
}

fn join_or<S: std::borrow::Borrow<str>>(parts: &[S], sep: &str, none: &str) -> String {
    if parts.is_empty() {
        none.into()
    } else {
        parts.join(sep)
    }
}

fn push_unique(v: &mut Vec<String>, s: &str) {
    if !s.is_empty() && !v.iter().any(|x| x == s) {
        v.push(s.to_string());
    }
}

/// The devices and drivers a folder ran on: from its measurements, else its provenance, else
/// its PR rows (which name devices but no drivers).
pub fn gpu_of(f: &RunFolder) -> GpuKey {
    let (mut gpus, mut drivers) = (Vec::new(), Vec::new());
    for m in f.measurements() {
        push_unique(&mut gpus, &m.device);
        push_unique(&mut drivers, &format!("{} {}", m.api, m.driver));
    }
    if gpus.is_empty() {
        for d in &f.provenance_devices {
            push_unique(&mut gpus, &d.device);
            push_unique(&mut drivers, &format!("{} {}", d.api, d.driver));
        }
    }
    if gpus.is_empty() {
        for p in f.prs() {
            push_unique(&mut gpus, &p.device_a);
            push_unique(&mut gpus, &p.device_b);
        }
    }
    GpuKey {
        model: join_or(&gpus, " + ", "unknown GPU (no rows name a device)"),
        place: f.gpu_place.clone(),
        drivers: drivers.join(", "),
    }
}

/// Folders grouped per GPU (model, place and drivers), the GPUs of one model next to each
/// other, models in the order they first appear.
pub fn per_gpu(folders: &[RunFolder]) -> Vec<(GpuKey, Vec<&RunFolder>)> {
    let mut groups = crate::plot::group_in_order(folders.iter(), |f| gpu_of(f));
    let models: Vec<String> = crate::plot::group_in_order(groups.iter(), |g| g.0.model.clone())
        .into_iter()
        .map(|(m, _)| m)
        .collect();
    // A stable sort: within a model, GPUs keep the order they first appear in.
    groups.sort_by_key(|(k, _)| models.iter().position(|m| *m == k.model));
    groups
}

pub fn models(groups: &[(GpuKey, Vec<&RunFolder>)]) -> usize {
    crate::plot::group_in_order(groups.iter(), |g| g.0.model.clone()).len()
}

/// A comparison's full name: the name already carries a sweep value (`@index=u32`); one that
/// does not gets it appended, so two points of a sweep never read alike.
pub(crate) fn full_name(comparison: &str, param: &str, value: &str) -> String {
    if param.is_empty() || comparison.contains(&format!("{param}={value}")) {
        comparison.to_string()
    } else {
        format!("{comparison} [{param}={value}]")
    }
}

pub(crate) fn pr3(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.3}")
    } else {
        "n/a".into()
    }
}

pub(crate) fn sig(v: f64) -> String {
    crate::export::markdown::format_sig(v, 4)
}

/// A side's letter and API, and its device when the two sides' devices differ.
fn side_label(side: Side, api: impl std::fmt::Display, device: &str, other: &str) -> String {
    if device == other || other.is_empty() {
        format!("{side}: {api}")
    } else {
        format!("{side}: {api} on {device}")
    }
}

fn pr_table(prs: &[PrRow], verdicts: &[super::why::FoundVerdict]) -> Table {
    let mut t = Table::new(&[
        ("comparison", false),
        ("side A", false),
        ("side B", false),
        ("local×groups", true),
        ("perf A", true),
        ("perf B", true),
        ("unit", false),
        ("PR", true),
        ("95% CI", true),
        ("verdict", false),
        ("fair", false),
        ("why (explain)", false),
    ]);
    for r in prs {
        t.rows.push(vec![
            full_name(&r.comparison, &r.sweep_param, &r.sweep_value),
            side_label(Side::A, r.api_a, &r.device_a, &r.device_b),
            side_label(Side::B, r.api_b, &r.device_b, &r.device_a),
            format!("{}×{}", r.local_size, r.groups),
            sig(r.metric_a),
            sig(r.metric_b),
            r.metric_unit.unit().to_string(),
            pr3(r.pr),
            format!("[{}, {}]", pr3(r.pr_ci_lo), pr3(r.pr_ci_hi)),
            crate::stats::verdict_word(r.pr, r.pr_ci_lo, r.pr_ci_hi),
            if r.fair { "fair" } else { "unfair" }.to_string(),
            super::why::why(verdicts, r).cell(),
        ]);
    }
    t
}

/// Per step, in how many comparisons it was held equal and in which it differed; then what
/// differed in each unfair comparison.
fn fairness(doc: &mut Doc, prs: &[PrRow]) {
    let fair = prs.iter().filter(|r| r.fair).count();
    doc.para(format!(
        "{fair} of {} comparisons fair: all eight steps of the paper held equal.",
        prs.len()
    ));
    let mut steps = Table::new(&[
        ("step", false),
        ("held equal in", true),
        ("differed in", false),
    ]);
    for step in Step::ALL {
        let prefix = format!("{step}:");
        let differed: Vec<String> = prs
            .iter()
            .filter(|r| r.steps().any(|e| e.starts_with(&prefix)))
            .map(|r| full_name(&r.comparison, &r.sweep_param, &r.sweep_value))
            .collect();
        steps.rows.push(vec![
            step.to_string(),
            format!("{} of {}", prs.len() - differed.len(), prs.len()),
            join_or(&differed, ", ", "-"),
        ]);
    }
    doc.table(steps, "");
    let mut unfair = Table::new(&[
        ("unfair comparison", false),
        ("differing steps (A vs B)", false),
    ]);
    for r in prs.iter().filter(|r| !r.fair) {
        let what: Vec<&str> = r.steps().collect();
        unfair.rows.push(vec![
            full_name(&r.comparison, &r.sweep_param, &r.sweep_value),
            join_or(&what, "; ", "not recorded"),
        ]);
    }
    if !unfair.rows.is_empty() {
        doc.table(unfair, "");
    }
}

/// Each measurement's side: rows of one comparison are written side A first.
pub(crate) fn with_sides(rows: &[MeasurementRow]) -> Vec<(Side, &MeasurementRow)> {
    let mut seen: std::collections::HashMap<(&str, &str), usize> = Default::default();
    rows.iter()
        .map(|m| {
            let n = seen.entry((&m.run_id, &m.comparison)).or_default();
            let side = if *n == 0 { Side::A } else { Side::B };
            *n += 1;
            (side, m)
        })
        .collect()
}

fn measurement_table(rows: &[MeasurementRow]) -> Table {
    let mut t = Table::new(&[
        ("comparison", false),
        ("side", false),
        ("local×groups", true),
        ("median time (ms)", true),
        ("95% CI (ms)", true),
        ("metric", true),
        ("status", false),
    ]);
    for (side, m) in with_sides(rows) {
        // A failed side's numbers are not results: its cells show a dash.
        let ok = m.status == Status::Ok;
        let timed = |cell: String| if ok { cell } else { "-".into() };
        t.rows.push(vec![
            full_name(&m.comparison, &m.sweep_param, &m.sweep_value),
            format!("{side}: {}", m.api),
            format!("{}×{}", m.local_size, m.groups),
            timed(sig(m.median_s * 1e3)),
            timed(format!(
                "[{}, {}]",
                sig(m.ci_lo_s * 1e3),
                sig(m.ci_hi_s * 1e3)
            )),
            timed(format!("{} {}", sig(m.metric), m.metric_unit.unit())),
            m.status.to_string(),
        ]);
    }
    t
}

pub fn why_no_pr(f: &RunFolder) -> String {
    let rows = f.measurements();
    if f.measurements.is_none() {
        return "no PR: the folder has neither PR rows nor measurements".into();
    }
    if rows.is_empty() {
        return "no PR: the folder has no measurement rows (nothing was run)".into();
    }
    let sides = with_sides(rows);
    if sides.iter().all(|(s, _)| *s == Side::A) {
        let apis = distinct(rows.iter().map(|m| m.api.label()));
        return format!(
            "no PR: one side only ({}); a Performance Ratio needs two sides",
            apis.join(", ")
        );
    }
    let failed = rows.iter().filter(|m| m.status != Status::Ok).count();
    format!(
        "no PR: no comparison had both sides verified and timed ({failed} of {} measurements \
         failed)",
        rows.len()
    )
}

/// A folder's identity line: studies and run ids of its rows.
fn folder_summary(f: &RunFolder) -> String {
    let (ms, prs) = (f.measurements().iter(), f.prs().iter());
    let studies = distinct(
        ms.clone()
            .map(|m| &m.study)
            .chain(prs.clone().map(|p| &p.study)),
    );
    let runs = distinct(ms.map(|m| &m.run_id).chain(prs.map(|p| &p.run_id)));
    let short = |v: &[String]| {
        if v.len() > 3 {
            format!("{}, … ({} in all)", v[..3].join(", "), v.len())
        } else {
            v.join(", ")
        }
    };
    format!(
        "Study {}; run {}; {} measurements, {} PRs.",
        short(&studies),
        short(&runs),
        f.measurements().len(),
        f.prs().len()
    )
}

/// One folder's tables: its section of the report, and the page the HTML report gives it.
pub fn folder_doc(catalog: &Catalog, f: &RunFolder) -> Doc {
    let mut doc = Doc::default();
    doc.heading(3, format!("Run folder {}", f.label));
    doc.para(folder_summary(f));
    doc.heading(4, "Performance Ratio (PR = perf(A) / perf(B))");
    if f.prs().is_empty() {
        doc.para(why_no_pr(f));
    } else {
        doc.table(pr_table(f.prs(), &f.verdicts), "");
        doc.heading(4, "Fairness");
        fairness(&mut doc, f.prs());
    }
    calibration_section(&mut doc, f);
    super::bfs::section(&mut doc, catalog, f.measurements());
    doc.heading(4, "Measurements");
    match &f.measurements {
        None => doc.para("The folder has no measurements file: only its PR rows are reported."),
        Some(rows) => doc.table(
            measurement_table(rows),
            "The measurements file has no rows.",
        ),
    }
    doc
}

/// Whether the harness's own launch cost fell on one side of this folder's runtime rows.
fn calibration_section(doc: &mut Doc, f: &RunFolder) {
    let Some(prs) = &f.calibration else { return };
    doc.heading(4, "Runtime calibration (harness against a plain loop)");
    let flagged = prs.iter().filter(|p| p.flagged).count();
    doc.para(if flagged == 0 {
        format!(
            "In every calibrated case the harness's own overhead differs between the APIs by at \
             most {} µs: the launch, BFS and small-reduction rows of this folder are the APIs' own.",
            crate::rows::OVERHEAD_DIFF_LIMIT_US
        )
    } else {
        format!(
            "FLAGGED: in {flagged} of {} calibrated cases the harness's own overhead differs \
             between the APIs by more than {} µs; rows timed in those wait modes carry part of \
             it on one side.",
            prs.len(),
            crate::rows::OVERHEAD_DIFF_LIMIT_US
        )
    });
    let mut t = Table::new(&[
        ("shape", false),
        ("launches/wait", true),
        ("wait", false),
        ("PR harness", true),
        ("PR plain", true),
        ("overhead OpenCL µs", true),
        ("overhead CUDA µs", true),
        ("flag", false),
    ]);
    for p in prs {
        t.rows.push(vec![
            p.shape.clone(),
            p.batch.to_string(),
            p.wait.clone(),
            format!("{:.3}", p.pr_harness),
            format!("{:.3}", p.pr_plain),
            format!("{:+.3}", p.overhead_opencl_us),
            format!("{:+.3}", p.overhead_cuda_us),
            if p.flagged { "FLAGGED" } else { "" }.to_string(),
        ]);
    }
    doc.table(t, "");
}

/// The vendor-baseline ratios of one GPU's folders, one table per baselines file.
pub fn baselines_doc(catalog: &Catalog, folders: &[&RunFolder]) -> Doc {
    let mut doc = Doc::default();
    let with_file = folders
        .iter()
        .filter_map(|f| Some((*f, f.baselines.as_ref()?)));
    for (file, under) in crate::plot::group_in_order(with_file, |(_, (p, _))| p.as_path()) {
        let rows: Vec<&MeasurementRow> = under.iter().flat_map(|(f, _)| f.measurements()).collect();
        // The folders of one group read the same file.
        let (_, (_, base)) = under[0];
        let mut t = Table::new(&[
            ("baseline", false),
            ("size", false),
            ("api", false),
            ("our best (study: comparison)", false),
            ("ours", true),
            ("library", true),
            ("unit", false),
            ("ratio", true),
        ]);
        for r in baseline::ratios(catalog, base, &rows) {
            t.rows.push(vec![
                r.baseline.library.clone(),
                r.baseline.size.clone(),
                r.api.to_string(),
                format!("{}: {}", r.study, r.comparison),
                sig(r.ours),
                sig(r.theirs),
                r.unit.to_string(),
                pr3(r.ratio),
            ]);
        }
        doc.heading(3, "Vendor baselines");
        doc.para(format!(
            "Our best verified kernel per API against the vendor libraries measured in the same \
             call ({}, {} run folders); ratio = ours / library.",
            file.display(),
            under.len()
        ));
        doc.table(
            t,
            "No verified measurement of these run folders has a baseline's family and size.",
        );
    }
    doc
}

fn overview(folders: &[(GpuKey, Vec<&RunFolder>)]) -> Table {
    let mut t = Table::new(&[
        ("GPU", false),
        ("run folder", false),
        ("measurements", true),
        ("PRs", true),
        ("similar (±10%)", true),
        ("fair", true),
    ]);
    for (gpu, list) in folders {
        for f in list {
            let prs = f.prs();
            t.rows.push(vec![
                gpu.full_title(),
                f.label.clone(),
                f.measurements().len().to_string(),
                prs.len().to_string(),
                prs.iter().filter(|r| r.similar).count().to_string(),
                prs.iter().filter(|r| r.fair).count().to_string(),
            ]);
        }
    }
    t
}

pub fn gpus_text(models: usize, gpus: usize) -> String {
    let s = |n: usize| if n == 1 { "" } else { "s" };
    format!(
        "{models} GPU model{} ({gpus} GPU{} by PCI bus and driver)",
        s(models),
        s(gpus)
    )
}

pub fn intro(folders: usize, roots: &[String], models: usize, gpus: usize) -> String {
    format!(
        "{folders} run folders found under {}, on {}. PR = perf(A) / \
         perf(B) with its 95% bootstrap CI; similar when the whole CI lies in {}–{} (the \
         paper's band); fair when all eight development steps were held equal.",
        roots.join(", "),
        gpus_text(models, gpus),
        crate::stats::SIMILAR_LO,
        crate::stats::SIMILAR_HI,
    )
}

/// The whole report, with `charts` (relative to the report) after the overview.
pub fn build(
    catalog: &Catalog,
    folders: &[RunFolder],
    roots: &[String],
    charts: &[std::path::PathBuf],
) -> Doc {
    let mut doc = Doc::default();
    let groups = per_gpu(folders);
    doc.heading(1, "clvscu report");
    doc.para(intro(folders.len(), roots, models(&groups), groups.len()));
    doc.table(overview(&groups), "");
    if !charts.is_empty() {
        doc.heading(2, "Charts");
        for c in charts {
            doc.blocks.push(Block::Chart(c.clone()));
        }
    }
    let mut model = None;
    for (gpu, list) in &groups {
        if model != Some(&gpu.model) {
            doc.heading(2, gpu.model.clone());
            model = Some(&gpu.model);
        }
        doc.para(format!("This {}: {}.", gpu.model, gpu.beneath()));
        for f in list {
            doc.blocks.extend(folder_doc(catalog, f).blocks);
        }
        doc.blocks.extend(baselines_doc(catalog, list).blocks);
    }
    doc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweep_values_are_added_only_when_the_name_lacks_them() {
        assert_eq!(full_name("a@index=u32", "index", "u32"), "a@index=u32");
        assert_eq!(full_name("a", "local", "64"), "a [local=64]");
        assert_eq!(full_name("a", "", ""), "a");
    }

    /// Committed runs of two H200s of one host (told apart by their PCI buses) and of two
    /// H100 folders: two models, the H200's GPUs beneath its one heading.
    #[test]
    fn gpus_are_grouped_by_model_with_the_pci_bus_beneath() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("results");
        let roots = [
            root.join("h200x2-2026-11-22-every-gpu/all"),
            root.join("h100/table1"),
            root.join("h100/fair"),
        ];
        let folders = crate::report::load::load_tree(&roots).unwrap();
        let groups = per_gpu(&folders);
        assert_eq!(
            models(&groups),
            2,
            "{:?}",
            groups.iter().map(|g| &g.0).collect::<Vec<_>>()
        );
        let h200: Vec<&GpuKey> = groups
            .iter()
            .map(|g| &g.0)
            .filter(|k| k.model == "NVIDIA H200")
            .collect();
        assert_eq!(h200.len(), 2);
        // This folder predates the recorded bus: its CUDA index tells the two apart.
        assert!(h200.iter().all(|k| k.place.is_some()), "{h200:?}");
        assert_ne!(h200[0].beneath(), h200[1].beneath());
        let doc = build(
            &crate::plot::tests::registered().catalog,
            &folders,
            &["results".into()],
            &[],
        );
        let md = crate::report::markdown::render(&doc);
        assert_eq!(md.matches("\n## NVIDIA H200\n").count(), 1, "{md}");
        assert!(
            md.contains("on 2 GPU models (3 GPUs by PCI"),
            "{}",
            &md[..300]
        );
    }

    fn h100_default() -> Vec<MeasurementRow> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("results/h100/table1/measurements.csv");
        crate::export::csv::read_rows(&dir).unwrap()
    }

    #[test]
    fn a_folder_without_pr_says_why() {
        let all = h100_default();
        let one_side: Vec<MeasurementRow> = all
            .iter()
            .filter(|m| m.api == crate::rows::Api::OpenCl)
            .cloned()
            .collect();
        let mut f = RunFolder {
            measurements: Some(one_side),
            prs: Some(vec![]),
            ..RunFolder::default()
        };
        assert!(
            why_no_pr(&f).contains("one side only (OpenCL)"),
            "{}",
            why_no_pr(&f)
        );
        let failed: Vec<MeasurementRow> = all
            .into_iter()
            .map(|m| MeasurementRow {
                status: Status::VerifyFailed,
                ..m
            })
            .collect();
        let n = failed.len();
        f.measurements = Some(failed);
        assert!(
            why_no_pr(&f).contains(&format!("{n} of {n} measurements failed")),
            "{}",
            why_no_pr(&f)
        );
        f.measurements = None;
        assert!(why_no_pr(&f).contains("neither"), "{}", why_no_pr(&f));
    }

    /// The committed H100 suite's runtime step started with a calibration: the report shows it, and a
    /// flagged case is called so.
    #[test]
    fn a_calibrated_folder_reports_its_calibration_and_its_flags() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("results/h100/runtime");
        let folders = super::super::load::load_tree(&[dir]).unwrap();
        let mut prs = folders[0].calibration.clone().expect("calibration-pr.csv");
        let text = |prs: &[crate::rows::CalibrationPr]| {
            let f = RunFolder {
                calibration: Some(prs.to_vec()),
                ..RunFolder::default()
            };
            let mut doc = Doc::default();
            calibration_section(&mut doc, &f);
            super::super::markdown::render(&doc)
        };
        let shown = text(&prs);
        assert!(
            shown.contains("Runtime calibration") && shown.contains("PR plain"),
            "{shown}"
        );
        assert_eq!(
            shown.contains("FLAGGED"),
            prs.iter().any(|p| p.flagged),
            "{shown}"
        );
        for p in &mut prs {
            p.flagged = false;
        }
        assert!(!text(&prs).contains("FLAGGED"));
        prs[0].flagged = true;
        assert!(text(&prs).contains(&format!("in 1 of {} calibrated cases", prs.len())));
    }

    #[test]
    fn sides_follow_the_order_of_rows() {
        let rows = h100_default();
        let sides = with_sides(&rows);
        assert_eq!(sides[0].0, Side::A);
        assert_eq!(sides[1].0, Side::B);
        assert_eq!(sides[0].1.comparison, sides[1].1.comparison);
        assert_eq!(measurement_table(&rows).rows[1][1], "B: CUDA");
    }
}
