//! Every CUDA kernel compiles to PTX with NVRTC (no GPU needed), for several work-group sizes
//! and with each family's unroll points switched on, and the PTX holds every kernel entry.

mod common;

use clvscu::backend::cuda::{compile_to_ptx, entry_names, nvrtc_availability};
use clvscu::backend::{Api, CompileRequest};
use clvscu::fairness::Flags;
use clvscu::families::{all_variants, FamilyId, FMA_ITERS};
use clvscu::kernels::KernelSources;

fn request(stem: &str, local: u32, extra: &[(&str, &str)]) -> CompileRequest {
    let mut defines = vec![
        ("WG_SIZE".to_string(), local.to_string()),
        ("FMA_ITERS".to_string(), FMA_ITERS.to_string()),
    ];
    defines.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    CompileRequest {
        source: KernelSources::embedded().program(Api::Cuda, stem).unwrap(),
        defines,
        flags: Flags {
            mad: true,
            ..Default::default()
        }
        .for_api(Api::Cuda),
        jit: Default::default(),
    }
}

#[test]
#[ignore = "needs NVRTC"]
fn every_cuda_kernel_compiles_with_nvrtc() {
    common::need("NVRTC", nvrtc_availability());
    let mut stems: Vec<&str> = FamilyId::all().iter().map(|f| f.file()).collect();
    stems.dedup();
    let mut compiled = 0;
    for stem in stems {
        for local in [64u32, 256, 1024] {
            for extra in [
                vec![],
                vec![("UNROLL_A", "4"), ("UNROLL_B", "2")],
                vec![("WARP_SYNC_WG", "0"), ("USE_SUBGROUPS", "1")],
                vec![("CLVSCU_INDEX", "64")],
                vec![("CLVSCU_INDEX", "0")],
            ] {
                let ptx = compile_to_ptx(&request(stem, local, &extra), "compute_90")
                    .unwrap_or_else(|e| panic!("{stem} WG {local} {extra:?}: {e}"));
                let entries = entry_names(&ptx);
                for v in all_variants()
                    .iter()
                    .filter(|v| v.family.file() == stem && !v.kernel.is_empty())
                {
                    assert!(
                        entries.iter().any(|e| e == v.kernel),
                        "{} missing from PTX of {stem}: {entries:?}",
                        v.kernel
                    );
                }
                compiled += 1;
            }
        }
    }
    println!("NVRTC compiled {compiled} CUDA programs to PTX (every kernel entry present)");
}

#[test]
#[ignore = "needs NVRTC"]
fn the_work_group_bound_reaches_the_cuda_compiler() {
    common::need("NVRTC", nvrtc_availability());
    // REQD_WG=1 puts __launch_bounds__(WG_SIZE) on reduce_tuned (reqd_work_group_size in
    // OpenCL): the PTX then carries the bound, and without it none.
    for local in [256u32, 1024] {
        let bound =
            compile_to_ptx(&request("reduce", local, &[("REQD_WG", "1")]), "compute_90").unwrap();
        assert!(bound.contains(&format!(".maxntid {local}")), "WG {local}");
    }
    let plain = compile_to_ptx(&request("reduce", 1024, &[]), "compute_90").unwrap();
    assert!(!plain.contains(".maxntid"));
}

#[test]
#[ignore = "needs NVRTC"]
fn unroll_pragma_reaches_the_cuda_compiler() {
    common::need("NVRTC", nvrtc_availability());
    // An unroll factor given as a define must change the generated code at that loop.
    let plain = compile_to_ptx(&request("matvec", 256, &[]), "compute_90").unwrap();
    let unrolled =
        compile_to_ptx(&request("matvec", 256, &[("UNROLL_A", "8")]), "compute_90").unwrap();
    assert_ne!(plain, unrolled);
}

#[test]
#[ignore = "needs NVRTC"]
fn a_broken_kernel_reports_the_build_log() {
    common::need("NVRTC", nvrtc_availability());
    let mut r = request("matvec", 256, &[]);
    r.source
        .push_str("\nextern \"C\" __global__ void broken() { undefined_symbol(); }\n");
    let e = compile_to_ptx(&r, "compute_90").unwrap_err().to_string();
    assert!(
        e.contains("undefined_symbol") && e.contains("-DWG_SIZE=256"),
        "{e}"
    );
}

/// Table V's CUDA half from NVRTC alone: the FFT compiles at every index width, each saved PTX
/// is counted, and the table holds the paper's rows beside ours.
#[test]
#[ignore = "needs NVRTC"]
fn table_v_counts_the_fft_at_every_index_width() {
    use clvscu::inspect::table_v;
    common::need("NVRTC", nvrtc_availability());
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    let notes = table_v::run(
        &KernelSources::embedded(),
        None,
        None,
        &compile_to_ptx,
        "compute_90",
        dir.path(),
        &mut files,
    )
    .unwrap();
    assert!(notes.is_empty(), "{notes:?}");
    let rows = table_v::rows_from_dir(dir.path(), &mut Vec::new());
    let widths: Vec<(&str, &str, u32)> = rows
        .iter()
        .map(|r| (r.api.as_str(), r.index.as_str(), r.index_bits))
        .collect();
    assert_eq!(
        widths,
        [
            ("CUDA", "u32", 32),
            ("CUDA", "u64", 64),
            ("CUDA", "native", 32)
        ]
    );
    for r in &rows {
        assert!(r.arithmetic > 0 && r.synchronization >= 3, "{r:?}");
    }
    let md = std::fs::read_to_string(dir.path().join(table_v::TABLE_V_MD)).unwrap();
    assert!(md.contains("| paper (Fang et al. 2011) | OpenCL | native | 64 | 521 | 163 | 188 |"));
    assert!(md.contains("| clvscu | CUDA | u64 | 64 |"), "{md}");
    println!("{md}");
}

/// The stencil's unroll points reach NVRTC: each pragma changes the PTX of its loop, and every
/// setting the `fdtd-unroll` study uses compiles.
#[test]
#[ignore = "needs NVRTC"]
fn stencil_unroll_settings_compile() {
    common::need("NVRTC", nvrtc_availability());
    let ptx = |extra: &[(&str, &str)]| {
        compile_to_ptx(&request("stencil", 256, extra), "compute_90")
            .unwrap_or_else(|e| panic!("stencil {extra:?}: {e}"))
    };
    let none = ptx(&[]);
    assert!(entry_names(&none).iter().any(|e| e == "stencil_fdtd3d"));
    let a = ptx(&[("UNROLL_A", "9")]);
    assert_ne!(none, a, "#pragma unroll 9 at the z loop changed nothing");
    ptx(&[("UNROLL_B", "4")]);
    ptx(&[("UNROLL_A", "9"), ("UNROLL_B", "4")]);
}

/// The evidence `inspect` reports, from NVRTC's PTX: the z-loop pragma (A) unrolls the loop
/// (more shared loads, a remainder loop), and the radius loop is unrolled without a pragma
/// (B alone leaves the PTX as it is).
#[test]
#[ignore = "needs NVRTC"]
fn stencil_unroll_evidence_from_cuda_ptx() {
    use clvscu::inspect::unroll::{analyse, KERNEL};
    common::need("NVRTC", nvrtc_availability());
    let shape = |extra: &[(&str, &str)]| {
        let ptx = compile_to_ptx(&request("stencil", 512, extra), "compute_90").unwrap();
        analyse(&ptx, KERNEL).unwrap()
    };
    let (none, none_list) = shape(&[]);
    let (a, _) = shape(&[("UNROLL_A", "9")]);
    let (_, b_list) = shape(&[("UNROLL_B", "4")]);
    assert!(a.ld_shared >= 9 * none.ld_shared, "{a:?} vs {none:?}");
    assert!(a.back_edges > none.back_edges, "{a:?} vs {none:?}");
    assert_eq!(
        none.local_accesses, 0,
        "the register queue stays in registers"
    );
    assert_eq!(b_list, none_list);
}

/// The memory-space classes tell the three read paths apart in what NVRTC makes of them: the
/// read-only variants load the gathered operand with `ld.global.nc`, the texture variants with
/// `tex`, the plain ones with neither.
#[test]
#[ignore = "needs NVRTC"]
fn memory_spaces_show_each_read_path() {
    use clvscu::inspect::spaces::{count, SPACES};
    common::need("NVRTC", nvrtc_availability());
    let column = |label: &str| SPACES.iter().position(|s| s.label == label).unwrap();
    let (nc, tex) = (column("ld.global.nc"), column("tex"));
    let mut checked = 0;
    for v in all_variants()
        .iter()
        .filter(|v| matches!(v.family, FamilyId::Spmv | FamilyId::Md))
    {
        let ptx = compile_to_ptx(&request(v.family.file(), 256, &[]), "compute_90").unwrap();
        let c = count(&ptx, v.kernel).unwrap_or_else(|| panic!("{} not in the PTX", v.kernel));
        let (want_nc, want_tex) = match v.name.rsplit_once('-').map(|(_, p)| p) {
            Some("ro") => (true, false),
            Some("tex") => (false, true),
            _ => (false, false),
        };
        assert_eq!(c[nc] > 0, want_nc, "{}: {c:?}", v.name);
        assert_eq!(c[tex] > 0, want_tex, "{}: {c:?}", v.name);
        checked += 1;
    }
    assert_eq!(checked, 12);
}

/// Unroll point A sits in the scalar SpMV's row loop, inside the body macro the three read
/// paths share: the pragma reaches NVRTC through it. Unrolled by 8, the texture kernel's loop
/// holds at least 8 fetches; `unroll 1` leaves one (NVRTC's own choice is 4 + a remainder).
#[test]
#[ignore = "needs NVRTC"]
fn spmv_scalar_unroll_point_reaches_the_loop() {
    use clvscu::inspect::spaces::{count, SPACES};
    common::need("NVRTC", nvrtc_availability());
    let tex = SPACES.iter().position(|s| s.label == "tex").unwrap();
    let fetches = |extra: &[(&str, &str)]| {
        let ptx = compile_to_ptx(&request("spmv", 256, extra), "compute_90").unwrap();
        count(&ptx, "spmv_csr_scalar_tex").unwrap()[tex]
    };
    assert_eq!(fetches(&[("UNROLL_A", "1")]), 1);
    assert!(fetches(&[("UNROLL_A", "8")]) >= 8);
    assert!(fetches(&[]) > 1, "NVRTC unrolls the loop by itself");
}

/// The tuner's define knobs reach NVRTC: a tiling that does not match the work-group size, or
/// more lanes per row than a warp, is a compile error naming the rule; the matching tiling
/// compiles (and changes the code).
#[test]
#[ignore = "needs NVRTC"]
fn tile_and_lane_defines_reach_the_cuda_compiler() {
    common::need("NVRTC", nvrtc_availability());
    let tile = [
        ("SG_BM", "64"),
        ("SG_BN", "128"),
        ("SG_TM", "8"),
        ("SG_TN", "8"),
    ];
    let retiled = compile_to_ptx(&request("sgemm", 128, &tile), "compute_90").unwrap();
    let shipped = compile_to_ptx(&request("sgemm", 256, &[]), "compute_90").unwrap();
    assert_ne!(retiled, shipped);
    let e = compile_to_ptx(&request("sgemm", 256, &tile), "compute_90")
        .unwrap_err()
        .to_string();
    assert!(e.contains("WG_SIZE must be"), "{e}");
    let e = compile_to_ptx(&request("spmv", 256, &[("SPMV_LANES", "64")]), "compute_90")
        .unwrap_err()
        .to_string();
    assert!(e.contains("SPMV_LANES must be"), "{e}");
    let lanes = compile_to_ptx(&request("spmv", 256, &[("SPMV_LANES", "8")]), "compute_90");
    assert!(lanes.is_ok());
}

/// The stencil's tile and matvec's vector width reach NVRTC: a tile that does not match the
/// work-group size, or a width the kernel lacks, is a compile error naming the rule; other
/// tiles and widths change the code, and the defaults are the shipped kernels.
#[test]
#[ignore = "needs NVRTC"]
fn stencil_tile_and_matvec_width_defines_reach_the_cuda_compiler() {
    common::need("NVRTC", nvrtc_availability());
    let ptx = |stem: &str, local: u32, extra: &[(&str, &str)]| {
        compile_to_ptx(&request(stem, local, extra), "compute_90")
    };
    let shipped = ptx("stencil", 256, &[]).unwrap();
    let same = ptx("stencil", 256, &[("ST_TILE_X", "32"), ("ST_TILE_Y", "8")]).unwrap();
    assert_eq!(same, shipped, "the 32 x 8 tile is the shipped kernel");
    let wide = ptx("stencil", 256, &[("ST_TILE_X", "64"), ("ST_TILE_Y", "4")]).unwrap();
    assert_ne!(wide, shipped);
    let e = ptx("stencil", 256, &[("ST_TILE_X", "64"), ("ST_TILE_Y", "8")])
        .unwrap_err()
        .to_string();
    assert!(e.contains("WG_SIZE must be ST_TILE_X"), "{e}");
    let e = ptx("stencil", 256, &[("ST_TILE_X", "128"), ("ST_TILE_Y", "2")])
        .unwrap_err()
        .to_string();
    assert!(e.contains("at least RADIUS"), "{e}");
    // matvec_tuned's own PTX (the file's other kernels load float4 whatever MV_VEC is).
    let tuned = |extra: &[(&str, &str)]| {
        let text = ptx("matvec", 256, extra).unwrap();
        let start = text
            .find(".entry matvec_tuned(")
            .expect("matvec_tuned in the PTX");
        let body = &text[start..];
        let end = body[1..].find(".entry ").map_or(body.len(), |e| e + 1);
        body[..end].to_string()
    };
    let float4 = tuned(&[]);
    assert_eq!(tuned(&[("MV_VEC", "4")]), float4);
    assert!(float4.contains("ld.global.v4.f32"), "float4 loads");
    let float2 = tuned(&[("MV_VEC", "2")]);
    assert!(float2.contains("ld.global.v2.f32") && !float2.contains(".v4.f32"));
    let scalar = tuned(&[("MV_VEC", "1")]);
    assert!(!scalar.contains(".v2.f32") && !scalar.contains(".v4.f32"));
    let e = ptx("matvec", 256, &[("MV_VEC", "3")])
        .unwrap_err()
        .to_string();
    assert!(e.contains("MV_VEC must be"), "{e}");
}

/// The example kernel pair's CUDA half compiles with NVRTC once its study is loaded, at each
/// work-group size its tune space lists, and the PTX holds the kernel's entry.
#[test]
#[ignore = "needs NVRTC"]
fn the_saxpy_example_compiles_with_nvrtc() {
    common::need("NVRTC", nvrtc_availability());
    let study = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/saxpy/saxpy.toml");
    let loaded = clvscu::study::load(study).unwrap();
    let family = loaded.comparisons[0].a.family;
    assert_eq!(family.name(), "saxpy");
    for local in [64u32, 256, 1024] {
        let ptx = compile_to_ptx(&request(family.file(), local, &[]), "compute_90")
            .unwrap_or_else(|e| panic!("saxpy WG {local}: {e}"));
        assert!(entry_names(&ptx).iter().any(|e| e == "saxpy"), "{ptx}");
    }
}
