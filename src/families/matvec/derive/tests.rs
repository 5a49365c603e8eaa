use super::*;

const HEADER: &str =
    "run_id,comparison,api,device,family,variant,size,metric,metric_unit,status,verified\n";

fn row(comparison: &str, api: &str, variant: &str, size: &str, gbs: f64) -> String {
    let family = comparison.split('/').next().unwrap();
    format!("r1,{comparison},{api},GPU X,{family},{variant},{size},{gbs},GB/s,ok,true\n")
}

/// Both APIs of one comparison at the same GB/s.
fn pair(comparison: &str, variant: &str, size: &str, gbs: f64) -> String {
    row(comparison, "OpenCL", variant, size, gbs) + &row(comparison, "CUDA", variant, size, gbs)
}

/// A synthetic sweep: a tall-narrow shape where row-pack wins, a wide one where split-flat
/// wins on one API and split-k on average, auto at both, the read kernel at 2^28 and cuBLAS.
fn synthetic(dir: &Path) {
    let mut m = String::from(HEADER);
    m += &pair(
        "matvec/row-pack/2097152x32",
        "row-pack",
        "2097152x32",
        3000.0,
    );
    m += &pair(
        "matvec/row-warp/2097152x32",
        "row-warp",
        "2097152x32",
        2000.0,
    );
    // Not auto-eligible: never a winner.
    m += &pair("matvec/tuned/2097152x32", "tuned", "2097152x32", 9000.0);
    m += &row(
        "matvec/split-k/64x1048576",
        "OpenCL",
        "split-k",
        "64x1048576",
        2600.0,
    );
    m += &row(
        "matvec/split-k/64x1048576",
        "CUDA",
        "split-k",
        "64x1048576",
        2600.0,
    );
    m += &row(
        "matvec/split-flat/64x1048576",
        "OpenCL",
        "split-flat",
        "64x1048576",
        2000.0,
    );
    m += &row(
        "matvec/split-flat/64x1048576",
        "CUDA",
        "split-flat",
        "64x1048576",
        3000.0,
    );
    // Only one side verified: not a candidate.
    m += &row(
        "matvec/split-one/64x1048576",
        "CUDA",
        "split-one",
        "64x1048576",
        5000.0,
    );
    m += "r1,matvec/split-one/64x1048576,OpenCL,GPU X,matvec,split-one,64x1048576,,GB/s,failed,false\n";
    // auto's rows name the variant that ran; they are not candidates.
    m += &pair("matvec/auto/2097152x32", "row-warp", "2097152x32", 2000.0);
    m += &pair("matvec/auto/16384x16384", "row-warp", "16384x16384", 2700.0);
    m += &pair("bandwidth/read/2^28", "read", "268435456", 2900.0);
    std::fs::create_dir_all(dir.join("shape-sweep")).unwrap();
    std::fs::write(dir.join("shape-sweep/measurements.csv"), m).unwrap();
    let b = "baseline,library,size,bytes,median_ms,min_ms,reps,gbs,gflops\n\
             sgemv,cuBLAS SGEMV via torch.mv,2097152x32,1,1,1,50,2500.00,\n\
             sgemv,cuBLAS SGEMV via torch.mv,16384x16384,1,1,1,50,2600.00,\n";
    std::fs::write(dir.join("baselines.csv"), b).unwrap();
}

#[test]
fn the_table_names_each_shapes_winner_on_both_apis() {
    let dir = tempfile::tempdir().unwrap();
    synthetic(dir.path());
    let sweep = Sweep::read(dir.path()).unwrap();
    assert_eq!(sweep.devices(), ["GPU X"]);
    let table = sweep.table("GPU X").unwrap();
    assert_eq!(table.regions.len(), 2, "{table:?}");
    let tall = &table.regions.iter().find(|r| r.cols == 32).unwrap();
    assert_eq!((tall.variant.as_str(), tall.gbs), ("row-pack", 3000.0));
    assert_eq!(tall.runner_up, "row-warp");
    // split-flat's geometric mean sqrt(2000 x 3000) = 2449 < split-k's 2600.
    let wide = &table.regions.iter().find(|r| r.rows == 64).unwrap();
    assert_eq!(wide.variant, "split-k");
    assert_eq!(
        (wide.runner_up.as_str(), wide.runner_up_gbs),
        ("split-flat", 2449.49)
    );
    assert!(table.provenance.contains("r1"));
    // The table round-trips through its file and picks row-pack for a nearby tall shape.
    let back = RuleTable::parse("t", &table.to_toml()).unwrap();
    assert_eq!(back.nearest(1 << 20, 64).variant, "row-pack");
    assert!(sweep.table("GPU Y").is_none());
}

#[test]
fn the_checks_hold_auto_to_cublas_and_the_read_kernel() {
    let dir = tempfile::tempdir().unwrap();
    synthetic(dir.path());
    let sweep = Sweep::read(dir.path()).unwrap();
    let checks = sweep.checks("GPU X", Some((crate::rows::FamilyId::Bandwidth, "read")));
    // Two auto shapes beyond the L2 on two APIs, and the 2^28 one against the read kernel.
    assert_eq!(checks.len(), 6, "{checks:?}");
    let tall: Vec<&Check> = checks.iter().filter(|c| c.size == "2097152x32").collect();
    assert!(tall
        .iter()
        .all(|c| c.what == CheckKind::Cublas && !c.passes()));
    assert_eq!(tall[0].ratio(), Some(0.8));
    let square_cublas = checks
        .iter()
        .find(|c| c.size == "16384x16384" && c.what == CheckKind::Cublas)
        .unwrap();
    assert!(square_cublas.passes());
    let read = checks.iter().find(|c| c.what == CheckKind::Read).unwrap();
    assert!((read.ratio().unwrap() - 2700.0 / 2900.0).abs() < 1e-12);
    assert!(read.passes());
    let md = checks_markdown("GPU X", &checks);
    assert!(
        md.contains("| 2097152x32 | OpenCL | row-warp | cuBLAS SGEMV | 2000 | 2500 | 0.800 | NO |"),
        "{md}"
    );
}

#[test]
fn a_missing_bar_fails_its_check() {
    let c = Check {
        what: CheckKind::Cublas,
        size: "1x1".into(),
        api: "CUDA".into(),
        variant: "row-item".into(),
        gbs: 1.0,
        against: None,
    };
    assert!(!c.passes());
    assert!(c.row().contains("missing"));
}

#[test]
fn a_folder_without_measurements_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let e = Sweep::read(dir.path()).unwrap_err();
    assert!(e.to_string().contains("no measurements.csv"), "{e}");
}

/// A launch sweep's rows: the candidate is the variant at that launch, so a swept launch that
/// beats the default one wins the region, and the table records it for `auto`.
#[test]
fn a_swept_launch_that_wins_is_the_regions_launch() {
    let dir = tempfile::tempdir().unwrap();
    let header = "run_id,comparison,api,device,family,variant,size,metric,metric_unit,status,\
                  verified,local_size,groups,sweep_param,sweep_value\n";
    let mut m = String::from(header);
    for api in ["OpenCL", "CUDA"] {
        let c = "matvec/split-one/32x4194304";
        m += &format!(
            "r1,{c},{api},GPU X,matvec,split-one,32x4194304,2800,GB/s,ok,true,256,1056,,\n"
        );
        m += &format!(
            "r1,{c},{api},GPU X,matvec,split-one,32x4194304,2900,GB/s,ok,true,512,528,groups,528\n"
        );
        m += &format!("r1,{c},{api},GPU X,matvec,split-one,32x4194304,2850,GB/s,ok,true,512,1056,groups,1056\n");
        // A swept launch that did not verify on one side is no candidate.
        let bad = if api == "CUDA" {
            "failed,false"
        } else {
            "ok,true"
        };
        m += &format!(
            "r1,{c},{api},GPU X,matvec,split-one,32x4194304,9000,GB/s,{bad},128,4224,groups,4224\n"
        );
        // A sweep of another parameter leaves the launch the default one.
        let f = "matvec/split-flat/32x4194304";
        m += &format!("r1,{f},{api},GPU X,matvec,split-flat,32x4194304,2700,GB/s,ok,true,256,2112,index,u32\n");
    }
    std::fs::create_dir_all(dir.path().join("s")).unwrap();
    std::fs::write(dir.path().join("s/measurements.csv"), m).unwrap();
    let sweep = Sweep::read(dir.path()).unwrap();
    let table = sweep.table("GPU X").unwrap();
    let region = &table.regions[0];
    assert_eq!(
        (region.variant.as_str(), region.local, region.groups),
        ("split-one", 512, 528)
    );
    assert_eq!(
        (region.runner_up.as_str(), region.runner_up_gbs),
        ("split-one@512x1056", 2850.0)
    );
    let ranked = &sweep.scores("GPU X")[&(32, 4194304)];
    assert_eq!(ranked.len(), 4, "{ranked:?}");
    assert_eq!(ranked[3].0.to_string(), "split-flat");
    // The launch survives the table's file; a default-launch region writes no launch.
    let back = RuleTable::parse("t", &table.to_toml()).unwrap();
    assert_eq!((back.regions[0].local, back.regions[0].groups), (512, 528));
    assert!(table.to_toml().contains("local = 512"));
}
