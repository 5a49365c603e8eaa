//! Chart tests on fixture rows built in code: every chart kind renders to PNG and SVG, at the
//! stated size, not blank, with the expected labels; empty data writes nothing.
//!
//! Set `CLVSCU_PLOT_EXAMPLES=<dir>` to keep the rendered fixture charts there for a look.

use std::path::{Path, PathBuf};

use super::*;
use crate::rows::{Api, MeasurementRow, Metric, PrRow, Status, TimerKind};

const RUN: &str = "20250301-abc1234";
const GPU: &str = "NVIDIA GeForce RTX 4090";
const GPU2: &str = "NVIDIA H100 80GB HBM3";
const DRIVER: &str = "550.54.14";

pub(crate) fn m(
    api: &str,
    device: &str,
    study: &str,
    family: &str,
    variant: &str,
    metric: f64,
) -> MeasurementRow {
    let median_s = 1e-3;
    MeasurementRow {
        run_id: RUN.into(),
        study: study.into(),
        comparison: format!("{family}/{variant}"),
        api: api.parse().unwrap(),
        device: device.into(),
        platform: if api == "CUDA" { "CUDA" } else { "NVIDIA CUDA" }.into(),
        driver: DRIVER.into(),
        api_version: if api == "CUDA" { "12.4" } else { "OpenCL 3.0" }.into(),
        family: family.parse().unwrap(),
        variant: variant.into(),
        size: "67108864".into(),
        elements: 67_108_864,
        local_size: 256,
        groups: 1024,
        global_size: 262_144,
        local_y: 1,
        groups_y: 1,
        unroll: String::new(),
        flags: String::new(),
        timer: TimerKind::DeviceEvent,
        warmup: 5,
        reps: 50,
        median_s,
        min_s: median_s * 0.98,
        mean_s: median_s * 1.01,
        mad_s: median_s * 0.01,
        ci_lo_s: median_s * 0.99,
        ci_hi_s: median_s * 1.02,
        outliers: 1,
        metric,
        metric_unit: Metric::Bandwidth,
        metric_ci_lo: metric * 0.97,
        metric_ci_hi: metric * 1.02,
        bytes: 805_306_368,
        flops: 0,
        peak_gbs: Some(if device == GPU { 1008.0 } else { 3352.0 }),
        verified: true,
        max_error: 0.0,
        status: Status::Ok,
        error: String::new(),
        sweep_param: String::new(),
        sweep_value: String::new(),
        wait_mode: Some(crate::rows::WaitMode::Spin),
        queued_to_submit_s: None,
        submit_to_start_s: None,
        turn: Some(1),
        levels: None,
        front_end: None,
        kernel_work_group_limit: None,
        registers: None,
        spill_bytes: None,
        shared_bytes: None,
    }
}

fn pr(device: &str, study: &str, family: &str, variant: &str, value: f64, fair: bool) -> PrRow {
    PrRow {
        run_id: RUN.into(),
        study: study.into(),
        comparison: format!("{family}/{variant}"),
        device_a: device.into(),
        device_b: device.into(),
        api_a: Api::OpenCl,
        api_b: Api::Cuda,
        family: family.parse().unwrap(),
        variant: variant.into(),
        size: "60989x1100".into(),
        local_size: 256,
        groups: 60,
        metric_unit: Metric::Bandwidth,
        metric_a: 800.0 * value,
        metric_b: 800.0,
        pr: value,
        pr_ci_lo: value * 0.97,
        pr_ci_hi: value * 1.03,
        similar: (0.9..=1.1).contains(&value),
        similar_tight: (0.95..=1.05).contains(&value),
        fair,
        differing_steps: if fair {
            String::new()
        } else {
            "local_size: 256 vs 128;flags: -cl-fast-relaxed-math vs -O3".into()
        },
        timer: "device-event".into(),
        sweep_param: String::new(),
        sweep_value: String::new(),
    }
}

/// Rows of a plausible run: two APIs, two GPUs, PRs (fair and unfair), a local-size sweep,
/// a size sweep, the whitepaper Table 1 study, bandwidth kernels with a copy reference, PTX.
/// No rows, and the registry's word on every family, as the face hands it to the charts.
pub(crate) fn registered() -> ChartData {
    ChartData {
        catalog: crate::families::catalog(),
        ..ChartData::default()
    }
}

fn fixture() -> ChartData {
    let mut measurements = Vec::new();
    // Bandwidth kernels on GPU 1, both APIs, copy included.
    for (variant, cl, cu) in [
        ("copy", 905.0, 921.0),
        ("scale", 890.0, 915.0),
        ("add", 870.0, 902.0),
        ("triad", 866.0, 899.0),
    ] {
        measurements.push(m("OpenCL", GPU, "default", "bandwidth", variant, cl));
        measurements.push(m("CUDA", GPU, "default", "bandwidth", variant, cu));
    }
    for (variant, cl, cu) in [("tree", 610.0, 702.0), ("warp_shuffle", 760.0, 805.0)] {
        measurements.push(m("OpenCL", GPU, "default", "reduce", variant, cl));
        measurements.push(m("CUDA", GPU, "default", "reduce", variant, cu));
    }
    // An unroll pragma on one side, against CUDA without: the unroll chart's input.
    for (api, unroll) in [("OpenCL", "A=9;B=4"), ("CUDA", "none")] {
        let mut r = m(api, GPU, "fdtd-unroll", "stencil", "fdtd3d", 500.0);
        r.unroll = unroll.into();
        measurements.push(r);
    }
    // A local-size sweep (powers of two: log2 axis).
    for (i, ls) in [32u32, 64, 128, 256, 512, 1024].iter().enumerate() {
        for (api, base) in [("OpenCL", 520.0), ("CUDA", 560.0)] {
            let mut r = m(
                api,
                GPU,
                "sweeps",
                "matvec",
                "listing5",
                base + 60.0 * i as f64,
            );
            r.comparison = format!("matvec/listing5/ls{ls}");
            r.local_size = *ls;
            r.sweep_param = "local_size".into();
            r.sweep_value = ls.to_string();
            r.metric_ci_lo = r.metric - 25.0;
            r.metric_ci_hi = r.metric + 20.0;
            measurements.push(r);
        }
    }
    // A size sweep up to 2^28 (exponent tick labels).
    for k in (16..=28).step_by(2) {
        for (api, eff) in [("OpenCL", 0.86), ("CUDA", 0.9)] {
            let n = 1u64 << k;
            let sat = 1.0 - (-(f64::from(k) - 14.0) / 3.0).exp();
            let mut r = m(api, GPU, "sweeps", "bandwidth", "copy", 1008.0 * eff * sat);
            r.comparison = format!("bandwidth/copy/n{n}");
            r.size = n.to_string();
            r.sweep_param = "size".into();
            r.sweep_value = n.to_string();
            measurements.push(r);
        }
    }
    // Whitepaper Table 1 on GPU 1.
    for (listing, cl_ms, cu_ms) in [
        (2, 4.91, 4.80),
        (3, 4.85, 4.71),
        (4, 1.32, 1.30),
        (5, 0.41, 0.39),
        (6, 0.36, 0.35),
        (7, 0.35, 0.34),
    ] {
        for (api, ms) in [("OpenCL", cl_ms), ("CUDA", cu_ms)] {
            let mut r = m(
                api,
                GPU,
                "whitepaper-table1",
                "matvec",
                &format!("listing{listing}"),
                268.0 / ms,
            );
            r.size = "60989x1100".into();
            r.groups = if listing == 2 { 239 } else { 60 };
            r.median_s = ms * 1e-3;
            r.ci_lo_s = ms * 0.97e-3;
            r.ci_hi_s = ms * 1.04e-3;
            measurements.push(r);
        }
    }
    // A failed row must never show up.
    let mut failed = m("CUDA", GPU, "default", "reduce", "broken", 9999.0);
    failed.status = Status::VerifyFailed;
    measurements.push(failed);
    // GPU 2: no copy row for it, so the peak chart must say so.
    measurements.push(m("OpenCL", GPU2, "default", "reduce", "tree", 2400.0));
    measurements.push(m("CUDA", GPU2, "default", "reduce", "tree", 2650.0));

    let mut prs = Vec::new();
    let variants = [
        ("bandwidth", "copy", 0.98, true),
        ("bandwidth", "scale", 0.97, true),
        ("bandwidth", "add", 0.96, true),
        ("bandwidth", "triad", 0.96, true),
        ("reduce", "tree", 0.87, true),
        ("reduce", "warp_shuffle", 0.94, true),
        ("matvec", "listing2", 1.02, true),
        ("matvec", "listing3", 1.03, true),
        ("matvec", "listing4", 1.01, true),
        ("matvec", "listing5", 0.71, false),
        ("matvec", "listing6", 1.05, true),
        ("matvec", "listing7", 1.34, false),
    ];
    for (family, variant, v, fair) in variants {
        prs.push(pr(GPU, "default", family, variant, v, fair));
    }
    for (family, variant, v, fair) in variants.iter().take(5) {
        prs.push(pr(GPU2, "default", family, variant, v * 1.04, *fair));
    }
    // A sweep PR row must not appear in the PR chart.
    let mut sweep_pr = pr(GPU, "sweeps", "matvec", "sweeponly", 2.5, true);
    sweep_pr.sweep_param = "local_size".into();
    sweep_pr.sweep_value = "64".into();
    prs.push(sweep_pr);

    let mut ptx_classes = Vec::new();
    for (class, cl, cu) in [
        ("ld.global", 4, 4),
        ("ld.global.nc", 0, 2),
        ("st.global", 1, 1),
        ("ld.shared", 9, 9),
        ("st.shared", 9, 9),
        ("fma.rn.f32", 2, 3),
        ("add.f32", 5, 5),
        ("bar.sync", 10, 10),
        ("shfl.sync", 0, 5),
        ("setp", 14, 12),
        ("bra", 12, 11),
    ] {
        for (api, n) in [("OpenCL", cl), ("CUDA", cu)] {
            if n > 0 {
                ptx_classes.push(ClassCountRow {
                    pair: "matvec/listing5".into(),
                    kernel: "matvec".into(),
                    api: api.into(),
                    class: class.into(),
                    count: n,
                });
            }
        }
    }
    ChartData {
        measurements,
        prs,
        ptx_classes,
        baselines: Vec::new(),
        catalog: crate::families::catalog(),
    }
}

/// Width and height from a PNG's IHDR chunk (bytes 16..24, big-endian).
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert!(bytes.len() > 24, "PNG too short");
    assert_eq!(&bytes[1..4], b"PNG");
    assert_eq!(&bytes[12..16], b"IHDR");
    let w = u32::from_be_bytes([bytes[16], bytes[17], bytes[18], bytes[19]]);
    let h = u32::from_be_bytes([bytes[20], bytes[21], bytes[22], bytes[23]]);
    (w, h)
}

/// Renders into a buffer and checks the picture is not blank: many non-white pixels, many
/// colours, and the given colours present.
fn assert_not_blank<F: Figure>(fig: &F, must_have: &[plotters::style::RGBColor]) {
    let buf = render_rgb(fig).expect("render");
    let (w, h) = fig.size();
    assert_eq!(buf.len(), w as usize * h as usize * 3);
    let pixels: Vec<[u8; 3]> = buf.chunks_exact(3).map(|p| [p[0], p[1], p[2]]).collect();
    let non_white = pixels.iter().filter(|p| **p != [255, 255, 255]).count();
    assert!(
        non_white > pixels.len() / 50,
        "only {non_white} of {} pixels drawn",
        pixels.len()
    );
    let mut distinct: Vec<[u8; 3]> = pixels.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert!(distinct.len() > 30, "only {} colours", distinct.len());
    for c in must_have {
        let want = [c.0, c.1, c.2];
        let n = pixels.iter().filter(|p| **p == want).count();
        assert!(n > 100, "colour {want:?} drawn on only {n} pixels");
    }
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn svg_text(dir: &Path, stem: &str) -> String {
    String::from_utf8(read(&dir.join(format!("{stem}.svg")))).expect("utf-8 svg")
}

fn check_files<F: Figure>(dir: &Path, chart: &str, figs: &[(String, F)], written: &[PathBuf]) {
    assert!(!figs.is_empty(), "no {chart} figure");
    for (slug, fig) in figs {
        let png = dir.join(format!("{chart}-{slug}.png"));
        let svg = dir.join(format!("{chart}-{slug}.svg"));
        assert!(written.contains(&png), "{} not reported", png.display());
        assert!(written.contains(&svg), "{} not reported", svg.display());
        let bytes = read(&png);
        assert_eq!(png_size(&bytes), fig.size(), "{}", png.display());
        assert!(read(&svg).len() > 1000, "{} nearly empty", svg.display());
    }
}

pub(super) fn keep_figure<F: Figure>(fig: &F, stem: &str) {
    if let Some(dir) = std::env::var_os("CLVSCU_PLOT_EXAMPLES") {
        write_figure(fig, Path::new(&dir), stem, &[Format::Png]).expect("write example");
    }
}

fn keep_examples(written: &[PathBuf]) {
    if let Some(dir) = std::env::var_os("CLVSCU_PLOT_EXAMPLES") {
        let dir = PathBuf::from(dir);
        std::fs::create_dir_all(&dir).expect("examples dir");
        for p in written {
            if let Some(name) = p.file_name() {
                std::fs::copy(p, dir.join(name)).expect("copy example");
            }
        }
    }
}

#[test]
fn draw_all_renders_every_chart_kind_in_both_formats() {
    let data = fixture();
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("charts");
    let written = draw_all(&data, &dir, &Format::ALL).expect("draw_all");
    keep_examples(&written);
    for p in &written {
        assert!(read(p).len() > 1000, "{} too small", p.display());
    }

    let prs = pr::figures(&data);
    check_files(&dir, "pr", &prs, &written);
    let sweeps = sweep::figures(&data);
    check_files(&dir, "sweep", &sweeps, &written);
    let tables = table1::figures(&data);
    check_files(&dir, "table1", &tables, &written);
    let peaks = peak::figures(&data);
    check_files(&dir, "peak", &peaks, &written);
    let ptxs = ptx::figures(&data);
    check_files(&dir, "ptx", &ptxs, &written);
    let gpus = gpus::figures(&data);
    check_files(&dir, "pr-gpus", &gpus, &written);
    assert_eq!(gpus.len(), 1, "the fixture's two GPUs ran one study");
    let unrolls = unroll::figures(&data);
    check_files(&dir, "unroll", &unrolls, &written);
    let expected = 2
        * (prs.len()
            + sweeps.len()
            + tables.len()
            + peaks.len()
            + ptxs.len()
            + gpus.len()
            + unrolls.len());
    assert_eq!(written.len(), expected);
    assert_eq!(sweeps.len(), 2, "one chart per swept configuration");

    // Charts are named by what they show, never by the run's timestamp.
    assert!(
        written
            .iter()
            .all(|f| !f.to_string_lossy().contains(&slug(RUN))),
        "{written:?}"
    );
    let pr_svg = svg_text(&dir, "pr-default");
    for label in [
        "PR",
        "listing4",
        "warp_shuffle",
        GPU,
        GPU2,
        DRIVER,
        RUN,
        "unfair: local_size, flags",
        "local_size: 256 vs 128",
        "0.9",
    ] {
        assert!(pr_svg.contains(label), "PR chart lacks `{label}`");
    }
    assert!(
        !pr_svg.contains("sweeponly"),
        "sweep PR rows belong to the sweep chart"
    );

    let sweep_svg = svg_text(&dir, "sweep-sweeps-matvec-listing5-local_size");
    for label in [
        "GB/s",
        "local_size",
        "work-items",
        "OpenCL",
        "CUDA",
        GPU,
        "1024",
    ] {
        assert!(sweep_svg.contains(label), "sweep chart lacks `{label}`");
    }
    let size_svg = svg_text(&dir, "sweep-sweeps-bandwidth-copy-size");
    assert!(
        size_svg.contains("2^20"),
        "large powers of two shown as 2^k"
    );

    let t1_svg = svg_text(&dir, "table1-whitepaper-table1");
    for label in [
        "Listing 2",
        "Listing 7",
        "ms",
        "GTX 285",
        "83.2",
        "9.2",
        GPU,
    ] {
        assert!(t1_svg.contains(label), "table1 chart lacks `{label}`");
    }

    assert_eq!(peaks.len(), 2, "one peak chart per GPU");
    let peak_svg = svg_text(&dir, &format!("peak-{}", slug(GPU)));
    for label in [
        "%",
        "Share of measured copy bandwidth",
        "Eq. 2",
        "triad",
        GPU,
        "1008",
        "905",
    ] {
        assert!(peak_svg.contains(label), "peak chart lacks `{label}`");
    }
    assert!(!peak_svg.contains("broken"), "failed rows are never drawn");
    let peak2_svg = svg_text(&dir, &format!("peak-{}", slug(GPU2)));
    for label in [GPU2, "reduce/tree", "No bandwidth/copy row for this GPU"] {
        assert!(
            peak2_svg.contains(label),
            "second peak chart lacks `{label}`"
        );
    }
    assert!(!peak2_svg.contains("Share of measured copy bandwidth"));

    let ptx_svg = svg_text(&dir, "ptx-matvec-listing5");
    for label in [
        "ld.global.nc",
        "shfl.sync",
        "OpenCL",
        "CUDA",
        "instructions",
    ] {
        assert!(ptx_svg.contains(label), "ptx chart lacks `{label}`");
    }
}

#[test]
fn charts_are_not_blank() {
    let data = fixture();
    let (api_cl, api_cu) = (style::OPENCL, style::CUDA);
    for (_, f) in pr::figures(&data) {
        assert_not_blank(&f, &[style::FAIR, style::UNFAIR_FILL]);
    }
    for (_, f) in sweep::figures(&data) {
        assert_not_blank(&f, &[api_cl, api_cu]);
    }
    for (_, f) in table1::figures(&data) {
        assert_not_blank(&f, &[api_cl, api_cu, style::REFERENCE_FILL]);
    }
    for (_, f) in peak::figures(&data) {
        assert_not_blank(&f, &[api_cl, api_cu]);
    }
    for (_, f) in ptx::figures(&data) {
        assert_not_blank(&f, &[api_cl, api_cu]);
    }
}

#[test]
fn draw_all_on_empty_data_writes_nothing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("never-created");
    let written =
        draw_all(&crate::plot::tests::registered(), &dir, &Format::ALL).expect("draw_all");
    assert!(written.is_empty());
    assert!(!dir.exists(), "no directory for no charts");
}

#[test]
fn no_formats_writes_nothing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let written = draw_all(&fixture(), tmp.path(), &[]).expect("draw_all");
    assert!(written.is_empty());
}

#[test]
fn unwritable_output_is_an_error_naming_the_path() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let blocker = tmp.path().join("a-file");
    std::fs::write(&blocker, b"x").expect("write");
    let err = draw_all(&fixture(), &blocker.join("charts"), &[Format::Png]).unwrap_err();
    assert!(err.path().starts_with(&blocker), "{err}");
    assert!(err.to_string().contains("a-file"), "{err}");
}

#[test]
fn many_variants_get_a_taller_pr_chart() {
    let mut data = crate::plot::tests::registered();
    for i in 0..30 {
        let fair = i % 7 != 3;
        data.prs.push(pr(
            GPU,
            "default",
            "matvec",
            &format!("a_rather_long_variant_name_{i:02}"),
            0.8 + 0.015 * f64::from(i),
            fair,
        ));
    }
    let figs = pr::figures(&data);
    assert_eq!(figs.len(), 1);
    let (w, h) = figs[0].1.size();
    assert_eq!(w, style::WIDTH);
    assert!(
        h > style::HEIGHT,
        "30 rows need more than the default height"
    );
    assert_not_blank(&figs[0].1, &[style::FAIR]);
    let svg = render_svg(&figs[0].1).expect("svg");
    assert!(svg.contains("a_rather_long_variant_name_29"));
    keep_figure(&figs[0].1, "pr-many-variants");
}

#[test]
fn peak_chart_without_copy_rows_says_so() {
    let data = ChartData {
        measurements: vec![
            m("OpenCL", GPU, "default", "bandwidth", "triad", 850.0),
            m("CUDA", GPU, "default", "bandwidth", "triad", 880.0),
        ],
        ..crate::plot::tests::registered()
    };
    let figs = peak::figures(&data);
    assert_eq!(figs.len(), 1);
    let svg = render_svg(&figs[0].1).expect("svg");
    assert!(svg.contains("No bandwidth/copy row for this GPU"));
    assert!(!svg.contains("Share of measured copy bandwidth"));
    assert_not_blank(&figs[0].1, &[style::OPENCL, style::CUDA]);
    keep_figure(&figs[0].1, "peak-no-copy");
}

#[test]
fn the_sweep_chart_counts_what_it_leaves_out_by_the_figures_it_draws() {
    // One variant swept over its group count at 25 fixed sizes: 25 figures, one too many.
    let mut data = registered();
    for k in 0..=MAX_FIGURES_PER_CHART {
        for groups in [64, 128] {
            let mut r = m("CUDA", GPU, "groups", "reduce", "tree", 100.0);
            r.sweep_param = "groups".into();
            r.sweep_value = groups.to_string();
            r.size = (1u64 << (10 + k)).to_string();
            data.measurements.push(r);
        }
    }
    // A sweep whose only row failed draws no figure, so it is none to leave out either.
    let mut failed = m("CUDA", GPU, "other", "reduce", "tree", 0.0);
    failed.status = Status::VerifyFailed;
    failed.sweep_param = "groups".into();
    failed.sweep_value = "64".into();
    data.measurements.push(failed);
    assert_eq!(sweep::figures(&data).len(), MAX_FIGURES_PER_CHART);
    let said = format!(
        "the sweep chart draws {MAX_FIGURES_PER_CHART} of {} swept configurations",
        MAX_FIGURES_PER_CHART + 1
    );
    assert!(left_out(&data).contains(&said), "{:?}", left_out(&data));
}

#[test]
fn sweep_axes_follow_the_values() {
    let mut data = crate::plot::tests::registered();
    for (api, base) in [("OpenCL", 100.0), ("CUDA", 110.0)] {
        for (i, v) in ["A=1;B=none", "A=2;B=none", "A=4;B=2"].iter().enumerate() {
            let mut r = m(
                api,
                GPU,
                "unrolls",
                "reduce",
                "tree",
                base + 10.0 * i as f64,
            );
            r.sweep_param = "unroll".into();
            r.sweep_value = (*v).into();
            data.measurements.push(r);
        }
        for v in [100, 300, 1000] {
            let mut r = m(
                api,
                GPU,
                "groups",
                "reduce",
                "tree",
                base + f64::from(v) / 10.0,
            );
            r.sweep_param = "groups".into();
            r.sweep_value = v.to_string();
            data.measurements.push(r);
        }
    }
    let figs = sweep::figures(&data);
    assert_eq!(figs.len(), 2);
    for (name, f) in &figs {
        assert_not_blank(f, &[style::OPENCL, style::CUDA]);
        keep_figure(f, &format!("sweep-{name}"));
    }
    let unroll = render_svg(&figs[0].1).expect("svg");
    assert!(unroll.contains("A=4;B=2"), "categorical labels drawn");
    let groups = render_svg(&figs[1].1).expect("svg");
    assert!(groups.contains("work-groups"));
    assert!(
        !groups.contains("log2"),
        "100/300/1000 are not powers of two"
    );
}

#[test]
fn whitepaper_figures_match_table_1() {
    let ms: Vec<f64> = (2..=7).filter_map(table1::whitepaper_ms).collect();
    assert_eq!(ms, vec![83.2, 82.2, 32.5, 12.1, 9.6, 9.2]);
    assert_eq!(table1::listing_number("listing7"), Some(7));
    assert_eq!(table1::listing_number("Listing 12"), Some(12));
    assert_eq!(table1::listing_number("tree"), None);
}

#[test]
fn slugs_and_stems_are_file_safe_and_unique() {
    assert_eq!(
        run_slug("quick-matvec-listing6", ["matvec/listing6@local=64"; 2]),
        "quick-matvec-listing6-matvec-listing6-local-64"
    );
    assert_eq!(run_slug("modern", ["a", "b", "a"]), "modern");
    assert_eq!(run_slug("", ["reduce/tree"]), "reduce-tree");
    assert_eq!(slug("NVIDIA GeForce RTX 4090"), "nvidia-geforce-rtx-4090");
    assert_eq!(
        slug("matvec/listing5 local_size"),
        "matvec-listing5-local_size"
    );
    assert_eq!(slug("///"), "chart");
    assert!(slug(&"x".repeat(200)).len() <= 80);
    let tmp = tempfile::tempdir().expect("tempdir");
    let (_, fig) = ptx::figures(&fixture()).remove(0);
    let same = vec![("a".to_string(), fig); 3];
    let written = write_figures("pr", &same, tmp.path(), &[Format::Svg]).unwrap();
    let names: Vec<_> = written.iter().map(|p| p.file_name().unwrap()).collect();
    assert_eq!(names, ["pr-a.svg", "pr-a-2.svg", "pr-a-3.svg"]);
}

#[test]
fn formats_name_their_extension() {
    assert_eq!(Format::Png.extension(), "png");
    assert_eq!(Format::Svg.extension(), "svg");
}

#[test]
fn drivers_are_named_per_api_only_when_they_differ() {
    let a = m("OpenCL", GPU, "s", "matvec", "v", 1.0);
    let mut b = m("CUDA", GPU, "s", "matvec", "v", 1.0);
    assert_eq!(drivers(&[&a, &b]), vec![DRIVER.to_string()]);
    b.driver = "12.4".into();
    assert_eq!(
        drivers(&[&a, &b]),
        vec![format!("OpenCL {DRIVER}"), "CUDA 12.4".to_string()]
    );
    assert!(run_subtitle([&a, &b]).contains(GPU));
}

#[test]
fn a_failed_write_is_reported_with_the_file_and_leaves_no_file() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = fixture();
    let (slug, fig) = ptx::figures(&data).remove(0);
    // A directory where the SVG should go makes the write fail.
    let target = tmp.path().join(format!("ptx-{slug}.svg"));
    std::fs::create_dir(&target).expect("mkdir");
    let err = write_figures("ptx", &ptx::figures(&data), tmp.path(), &[Format::Svg]).unwrap_err();
    assert!(matches!(err, PlotError::Write { .. }), "{err}");
    assert_eq!(err.path(), target.as_path());
    // The PNG of the same figure still renders and writes fine.
    let written = write_figure(&fig, tmp.path(), "ok", &[Format::Png]).expect("png");
    assert_eq!(png_size(&read(&written[0])), fig.size());
}

/// Runs `f` on its own thread and fails the test if it takes over 60 s: a chart whose axis
/// sends plotters' tick search into an endless loop fails instead of hanging the suite.
pub(super) fn within_a_minute<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(f()));
    rx.recv_timeout(std::time::Duration::from_secs(60))
        .expect("did not finish within 60 s (or the drawing thread panicked)")
}

#[test]
fn axis_top_leaves_headroom_and_stays_finite() {
    assert_eq!(axis_top(100.0, 1.08), 108.0);
    // The headroom would overflow to infinity: the top is the largest value itself.
    assert_eq!(axis_top(f64::MAX, 1.08), f64::MAX);
    for nothing in [0.0, -5.0, f64::NAN, f64::INFINITY] {
        assert_eq!(axis_top(nothing, 1.08), 1.0, "{nothing}");
    }
}

/// Sweep values ±1.7e308 span more than f64 can (the x axis falls back to 0..1) and a metric
/// CI bound of -1e308 lies far below the y axis: plotters' pixel arithmetic overflowed on
/// such points (a panic in debug builds). They are drawn at the edge, and the chart says so.
#[test]
fn sweep_points_off_the_axes_are_pinned_and_noted() {
    let mut data = crate::plot::tests::registered();
    for (api, sign) in [("CUDA", ""), ("OpenCL", "-")] {
        for (v, metric) in [("1.7e308", 100.0), ("1", 120.0)] {
            let mut r = m(api, GPU, "sweeps", "reduce", "tree", metric);
            r.sweep_param = "groups".into();
            r.sweep_value = format!("{sign}{v}");
            r.metric_ci_lo = -1e308;
            data.measurements.push(r);
        }
    }
    let figs = sweep::figures(&data);
    assert_eq!(figs.len(), 1);
    let svg = within_a_minute(move || render_svg(&figs[0].1)).expect("svg");
    assert!(
        svg.contains("4 point(s) beyond what the axes can show"),
        "{svg}"
    );
    // Points on the axes move nowhere, so ordinary sweeps carry no such note.
    let ordinary = render_svg(&sweep::figures(&fixture())[0].1).expect("svg");
    assert!(!ordinary.contains("beyond what the axes can show"));
}

/// Numbers a hand-edited or corrupted CSV can hold. Every chart must draw them (or report an
/// error) in bounded time: plotters' tick search never ends on an infinite span or a zero
/// log-axis bound, which is how 1e308 s or 5e-324 s once hung the Table 1 chart.
#[test]
fn extreme_values_draw_in_bounded_time() {
    const VALUES: [f64; 8] = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        1e308,
        -1e308,
        0.0,
        5e-324,
        f64::MAX,
    ];
    // Sweep values: OpenCL rows get the negated text, so the x span can overflow.
    const SWEEP: [&str; 5] = ["1.7e308", "1e300", "5e-324", "inf", "x"];
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for (i, &v) in VALUES.iter().enumerate() {
            let sweep = SWEEP[i % SWEEP.len()];
            let mut data = fixture();
            for (k, r) in data.measurements.iter_mut().enumerate() {
                // Every other row keeps its metric, so extremes meet ordinary values.
                if k % 2 == i % 2 {
                    r.metric = v;
                }
                r.metric_ci_lo = v;
                r.median_s = v;
                r.ci_hi_s = v;
                r.peak_gbs = Some(v);
                if !r.sweep_param.is_empty() {
                    r.sweep_value = if r.api == Api::Cuda {
                        sweep.to_string()
                    } else {
                        format!("-{sweep}")
                    };
                }
            }
            for p in &mut data.prs {
                p.pr = v;
                p.pr_ci_hi = v;
                p.metric_a = v;
            }
            for c in &mut data.ptx_classes {
                c.count = u64::MAX;
            }
            let tmp = tempfile::tempdir().expect("tempdir");
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                draw_all(&data, tmp.path(), &Format::ALL).map(|files| files.len())
            }));
            let report = match outcome {
                Ok(Ok(n)) => Ok(n),
                Ok(Err(e)) => Err(format!("error: {e}")),
                Err(_) => Err("panic".to_string()),
            };
            if tx.send((v, sweep, report)).is_err() {
                return;
            }
        }
    });
    let mut drawn = Vec::new();
    for _ in VALUES {
        // A hung case leaves its thread spinning, but fails the test instead of hanging it.
        let (v, sweep, report) = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("a chart did not finish within 60 s (or the drawing thread died)");
        match report {
            Ok(n) => drawn.push(n),
            Err(e) => panic!("value {v}, sweep value {sweep}: {e}"),
        }
    }
    // Every case keeps ordinary rows beside the extreme ones, so every case draws.
    assert!(drawn.iter().all(|&n| n > 0), "files per case: {drawn:?}");
}

/// Fig. 7 style: every bar is that side's median over the CUDA no-pragma median, labelled with
/// the side's pragmas; a run without any pragma, or without a CUDA baseline, draws nothing.
#[test]
fn unroll_chart_is_time_relative_to_cuda_without_pragmas() {
    let row = |api: &str, comparison: &str, unroll: &str, median_s: f64| {
        let mut r = m(api, GPU, "fdtd-unroll", "stencil", "fdtd3d", 100.0);
        r.comparison = comparison.into();
        r.unroll = unroll.into();
        r.size = "384".into();
        r.median_s = median_s;
        r.ci_lo_s = median_s * 0.99;
        r.ci_hi_s = median_s * 1.01;
        r
    };
    let data = ChartData {
        measurements: vec![
            row("OpenCL", "fdtd3d/none", "none", 3e-3),
            row("CUDA", "fdtd3d/none", "none", 2e-3),
            row("OpenCL", "fdtd3d/AB-both", "A=9;B=4", 1e-3),
            row("CUDA", "fdtd3d/AB-both", "A=9;B=4", 5e-3),
        ],
        ..crate::plot::tests::registered()
    };
    let figs = unroll::figures(&data);
    assert_eq!(figs.len(), 1);
    assert_eq!(figs[0].0, "fdtd-unroll-stencil-fdtd3d-384");
    let svg = render_svg(&figs[0].1).expect("svg");
    for label in [
        "1.50 (none)",
        "1.00 (none)",
        "0.500 (A=9 B=4)",
        "2.50 (A=9 B=4)",
        "fdtd3d/AB-both",
        "CUDA side of fdtd3d/none",
        "2.00 ms",
    ] {
        assert!(svg.contains(label), "unroll chart lacks `{label}`");
    }
    assert_not_blank(&figs[0].1, &[style::OPENCL, style::CUDA]);
    keep_figure(&figs[0].1, "unroll");

    let plain: Vec<_> = data.measurements[..2].to_vec();
    let no_pragma = ChartData {
        measurements: plain,
        ..crate::plot::tests::registered()
    };
    assert!(unroll::figures(&no_pragma).is_empty());
    let opencl_only = ChartData {
        measurements: data
            .measurements
            .iter()
            .filter(|r| r.api == Api::OpenCl)
            .cloned()
            .collect(),
        ..crate::plot::tests::registered()
    };
    assert!(unroll::figures(&opencl_only).is_empty(), "no CUDA baseline");
}

/// 100,000 measurement rows chart in linear time: 25,000 comparisons with no known peak and
/// no copy row (as a CPU device writes them) and 25,000 points of one sweep, both APIs each.
/// The peak chart asked every row for its copy reference by scanning every row, and the sweep
/// chart searched its labels and points for every value: minutes, where a second will do.
/// The bound allows for a debug build.
#[test]
fn a_hundred_thousand_rows_chart_in_bounded_time() {
    let limit = if cfg!(debug_assertions) { 60.0 } else { 10.0 };
    let elapsed = within_a_minute(move || {
        let mut data = crate::plot::tests::registered();
        for i in 0..25_000 {
            for api in ["OpenCL", "CUDA"] {
                let mut r = m(api, GPU, "big", "matvec", "listing2", 5.0 + i as f64 * 1e-6);
                r.comparison = format!("matvec/listing2-{i}");
                r.peak_gbs = None;
                let mut s = r.clone();
                s.comparison = format!("matvec/listing2@local={i}");
                s.sweep_param = "local".into();
                s.sweep_value = i.to_string();
                data.measurements.push(r);
                data.measurements.push(s);
            }
        }
        let tmp = tempfile::tempdir().expect("tempdir");
        let started = std::time::Instant::now();
        draw_all(&data, tmp.path(), &[Format::Svg]).expect("charts");
        started.elapsed().as_secs_f64()
    });
    assert!(
        elapsed < limit,
        "100,000 rows took {elapsed:.1} s to chart (limit {limit} s)"
    );
}
