//! Real OpenCL: every safe variant executes on the OpenCL device (PoCL's CPU device in CI) and
//! verifies against the f64 reference, for several sizes (1, primes, non-multiples of the
//! work-group size) and work-group sizes.

mod common;

use std::sync::{Mutex, MutexGuard};

use clvscu::backend::opencl::{self, OpenClBackend};
use clvscu::backend::{Backend, HostTransfers, LaunchShape};
use clvscu::fairness::Flags;
use clvscu::families::exec::{self, Inputs, SideConfig};
use clvscu::families::{self, all_variants, find_variant, FamilyId, Size};
use clvscu::kernels::KernelSources;

/// PoCL lists no device when two threads open it at once: the tests take turns.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn backend() -> (MutexGuard<'static, ()>, OpenClBackend) {
    let turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    common::need("OpenCL", opencl::availability());
    (turn, OpenClBackend::open(None).expect("open OpenCL device"))
}

fn sizes(family: FamilyId) -> Vec<Size> {
    clvscu::families::get(family).spec().test_sizes.to_vec()
}

/// The default launch of a variant: 2-D kernels get work-groups of `local` x 4.
fn default_shape(v: &families::Variant, size: Size, local: u32) -> LaunchShape {
    let groups = v.family.family().default_groups(v, size, local, 2);
    if v.default_groups.is_planar() {
        let local_y = 4;
        let groups_y = v.family.family().default_groups_y(v, size, local_y);
        return LaunchShape::planar((groups, groups_y), (local, local_y));
    }
    LaunchShape::linear(groups, local)
}

fn locals(v: &families::Variant) -> Vec<u32> {
    if v.family == FamilyId::Launch {
        return vec![1];
    }
    [32u32, 64, 128, 256, 96]
        .into_iter()
        .filter(|l| v.family.family().check_local(v, *l).is_ok())
        .collect()
}

#[test]
#[ignore = "needs OpenCL"]
fn every_variant_verifies_on_opencl() {
    let (_turn, mut b) = backend();
    let sources = KernelSources::embedded();
    let mut executed = 0;
    for v in all_variants().iter().filter(|v| v.safe) {
        // A size the variant's own rule refuses (a float4 Sobel on a width that is not a
        // multiple of 4) is skipped here; every variant must still verify at some size.
        let mut verified_sizes = 0;
        for size in sizes(v.family) {
            if v.family.family().check_size(v, size).is_err() {
                continue;
            }
            verified_sizes += 1;
            let inputs = Inputs::of_variant(
                v,
                size,
                42,
                &clvscu::families::matrix::MatrixSource::Uniform,
            );
            for local in locals(v) {
                let shape = default_shape(v, size, local);
                let groups = shape.describe();
                let side = SideConfig {
                    shape,
                    defines: vec![],
                    flags: vec![],
                    jit: Default::default(),
                };
                let p = exec::prepare(&mut b, &sources, v, &inputs, &side).unwrap_or_else(|e| {
                    panic!("{}/{} {size} wg{local}: {e}", v.family.name(), v.name)
                });
                let ver = exec::verify(&mut b, &p, &inputs).unwrap();
                assert!(
                    ver.ok,
                    "{}/{} size {size} wg {local} groups {groups}: max error {} > tol {}",
                    v.family.name(),
                    v.name,
                    ver.max_error,
                    ver.tolerance
                );
                exec::release(&mut b, p);
                executed += 1;
            }
        }
        assert!(
            verified_sizes > 0 || sizes(v.family).is_empty(),
            "{}/{}: no size of this test suits it",
            v.family.name(),
            v.name
        );
    }
    println!(
        "OpenCL executed and verified {executed} configurations on {}",
        b.info().name
    );
    assert!(executed > 50);
}

#[test]
#[ignore = "needs OpenCL"]
fn every_variant_verifies_at_every_index_width() {
    let (_turn, mut b) = backend();
    let sources = KernelSources::embedded();
    let mut executed = 0;
    for index in ["32", "64", "0"] {
        for v in all_variants()
            .iter()
            .filter(|v| v.safe && v.family != FamilyId::Fill)
        {
            let size = sizes(v.family)[sizes(v.family).len() - 1];
            // The variant's own inputs: a family may give its variants different ones.
            let inputs =
                Inputs::of_variant(v, size, 7, &clvscu::families::matrix::MatrixSource::Uniform);
            let local = locals(v)[0];
            let side = SideConfig {
                shape: default_shape(v, size, local),
                defines: vec![("CLVSCU_INDEX".into(), index.into())],
                flags: vec![],
                jit: Default::default(),
            };
            let p = exec::prepare(&mut b, &sources, v, &inputs, &side)
                .unwrap_or_else(|e| panic!("{}/{} index {index}: {e}", v.family.name(), v.name));
            let ver = exec::verify(&mut b, &p, &inputs).unwrap();
            assert!(
                ver.ok,
                "{}/{} index {index}: max error {}",
                v.family.name(),
                v.name,
                ver.max_error
            );
            exec::release(&mut b, p);
            executed += 1;
        }
    }
    println!("OpenCL verified {executed} configurations across index widths");
    assert!(executed > 40);
}

/// Listing 2 on an 8x8 matrix, built with `jit`'s second-stage options.
fn build_listing2_with(
    b: &mut OpenClBackend,
    jit: clvscu::backend::JitOptions,
) -> Result<exec::Prepared, exec::ExecError> {
    let v = families::find_variant(FamilyId::Matvec, "listing2").unwrap();
    let inputs = Inputs::generate(v.family, Size::matrix(8, 8), 1);
    let side = SideConfig {
        shape: LaunchShape::linear(1, 32),
        defines: vec![],
        flags: vec![],
        jit,
    };
    exec::prepare(b, &KernelSources::embedded(), v, &inputs, &side)
}

/// Second-stage options exist only in NVIDIA's OpenCL: elsewhere they are refused by name,
/// never dropped silently (a row would otherwise claim options the build did not have).
#[test]
#[ignore = "needs OpenCL"]
fn second_stage_options_are_refused_where_the_platform_has_no_way_to_pass_them() {
    let (_turn, mut b) = backend();
    let built = build_listing2_with(
        &mut b,
        clvscu::backend::JitOptions {
            opt_level: Some(1),
            ..Default::default()
        },
    );
    if b.info().platform.contains("NVIDIA") {
        // NVIDIA's OpenCL passes them to its PTX assembler: the build must work.
        exec::release(
            &mut b,
            built.expect("NVIDIA's OpenCL takes -cl-nv-opt-level"),
        );
        return;
    }
    let text = built
        .err()
        .expect("a build with second-stage options on a non-NVIDIA OpenCL platform")
        .to_string();
    assert!(
        text.contains("cl_nv_compiler_options") && text.contains("-cl-nv-opt-level=1"),
        "{text}"
    );
}

/// The FFT at every index width, each batch against the f64 reference, and a run whose input
/// is changed after the reference was taken fails (the check is not vacuous).
#[test]
#[ignore = "needs OpenCL"]
fn fft_verifies_at_every_index_width() {
    let (_turn, mut b) = backend();
    let sources = KernelSources::embedded();
    let v = families::find_variant(FamilyId::Fft, "fft512").unwrap();
    let size = Size::vector(512 * 5);
    let mut inputs = Inputs::generate(FamilyId::Fft, size, 11);
    for index in ["32", "64", "0"] {
        let side = SideConfig {
            shape: LaunchShape::linear(v.family.family().default_groups(v, size, 64, 2), 64),
            defines: vec![("CLVSCU_INDEX".into(), index.into())],
            flags: vec![],
            jit: Default::default(),
        };
        assert_eq!(side.shape.groups, 5, "one work-group per 512-point batch");
        let p = exec::prepare(&mut b, &sources, v, &inputs, &side).unwrap();
        let ver = exec::verify(&mut b, &p, &inputs).unwrap();
        assert!(
            ver.ok && ver.checked == 2 * 512 * 5,
            "index {index}: {ver:?}"
        );
        exec::release(&mut b, p);
    }
    inputs.a[2 * 512 * 3 + 7] += 1.0;
    let side = SideConfig {
        shape: LaunchShape::linear(5, 64),
        defines: vec![],
        flags: vec![],
        jit: Default::default(),
    };
    let p = exec::prepare(&mut b, &sources, v, &inputs, &side).unwrap();
    assert!(!exec::verify(&mut b, &p, &inputs).unwrap().ok);
    exec::release(&mut b, p);
}

/// Every flag set a study can give, in OpenCL's spelling.
fn flag_sets() -> Vec<Flags> {
    let mut sets = Vec::new();
    for mad in [false, true] {
        for fast_math in [false, true] {
            for denorms_zero in [false, true] {
                sets.push(Flags {
                    mad,
                    fast_math,
                    denorms_zero,
                });
            }
        }
    }
    sets
}

#[test]
#[ignore = "needs OpenCL"]
fn math_and_sgemm_verify_under_every_flag_set() {
    let (_turn, mut b) = backend();
    let sources = KernelSources::embedded();
    let mut executed = 0;
    let kernels = all_variants()
        .iter()
        .filter(|v| matches!(v.family, FamilyId::Math | FamilyId::Sgemm));
    for v in kernels {
        let size = sizes(v.family)[0];
        let inputs = Inputs::generate(v.family, size, 11);
        for flags in flag_sets() {
            let side = SideConfig {
                shape: LaunchShape::linear(v.family.family().default_groups(v, size, 256, 2), 256),
                defines: vec![],
                flags: flags.for_api(clvscu::backend::Api::OpenCl),
                jit: Default::default(),
            };
            let p = exec::prepare(&mut b, &sources, v, &inputs, &side).unwrap();
            let ver = exec::verify(&mut b, &p, &inputs).unwrap();
            assert!(
                ver.ok,
                "{}/{} flags {}: max error {} > tol {}",
                v.family.name(),
                v.name,
                flags.describe(),
                ver.max_error,
                ver.tolerance
            );
            exec::release(&mut b, p);
            executed += 1;
        }
    }
    assert_eq!(executed, 7 * 8);
}

#[test]
#[ignore = "needs OpenCL"]
fn sgemm_groups_stride_over_tiles_and_bad_sizes_are_refused() {
    let (_turn, mut b) = backend();
    let sources = KernelSources::embedded();
    for name in ["tiled16", "blocked"] {
        let v = find_variant(FamilyId::Sgemm, name).unwrap();
        let size = Size::vector(256);
        let inputs = Inputs::generate(v.family, size, 5);
        // Fewer groups than tiles (3 for 4 or 256 tiles): each group takes several tiles.
        let side = SideConfig {
            shape: LaunchShape::linear(3, 256),
            defines: vec![],
            flags: vec![],
            jit: Default::default(),
        };
        let p = exec::prepare(&mut b, &sources, v, &inputs, &side).unwrap();
        let ver = exec::verify(&mut b, &p, &inputs).unwrap();
        assert!(ver.ok, "{name} with 3 groups: {ver:?}");
        exec::release(&mut b, p);
        let odd = Inputs::generate(v.family, Size::vector(200), 5);
        let e = exec::prepare(&mut b, &sources, v, &odd, &side)
            .err()
            .expect("N = 200 is refused");
        assert!(e.to_string().contains("not a multiple of"), "{e}");
    }
}

/// The stencil with each unroll setting the `fdtd-unroll` study uses (none, A, B, A+B), at
/// every work-group size it accepts: the pragmas change the code, never the result.
#[test]
#[ignore = "needs OpenCL"]
fn stencil_verifies_with_and_without_pragmas() {
    let (_turn, mut b) = backend();
    let sources = KernelSources::embedded();
    let v = families::find_variant(FamilyId::Stencil, "fdtd3d").unwrap();
    let size = Size::matrix(64, 13);
    let inputs = Inputs::generate(v.family, size, 5);
    let settings: [&[(&str, &str)]; 4] = [
        &[],
        &[("UNROLL_A", "9")],
        &[("UNROLL_B", "4")],
        &[("UNROLL_A", "9"), ("UNROLL_B", "4")],
    ];
    let mut executed = 0;
    for defines in settings {
        for local in [128u32, 1024] {
            let side = SideConfig {
                shape: LaunchShape::linear(
                    v.family.family().default_groups(v, size, local, 2),
                    local,
                ),
                defines: defines
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                flags: vec![],
                jit: Default::default(),
            };
            let p = exec::prepare(&mut b, &sources, v, &inputs, &side)
                .unwrap_or_else(|e| panic!("stencil {defines:?} wg {local}: {e}"));
            let ver = exec::verify(&mut b, &p, &inputs).unwrap();
            assert!(
                ver.ok && ver.checked == 64 * 64 * 13,
                "stencil {defines:?} wg {local}: max error {} > tol {}",
                ver.max_error,
                ver.tolerance
            );
            exec::release(&mut b, p);
            executed += 1;
        }
    }
    assert_eq!(executed, 8);
}

/// The three placements of Sobel's filter and the four broadcast kernels verify exactly, on
/// 2-D work-groups of several shapes; a launch one row of groups short leaves pixels unwritten
/// and fails. 150 rows: each work-item computes 8 (SOBEL_ROWS), so the last strip is partial
/// (150 = 18 x 8 + 6) and one row of groups less falls short for every shape below. The x4
/// kernels (4 columns per work-item, float4 rows) take a width of 72 (18 work-items in x: no
/// work-group shape below divides it, so the last group in x is partial too).
#[test]
#[ignore = "needs OpenCL"]
fn constant_memory_kernels_verify_on_opencl() {
    let (_turn, mut b) = backend();
    let sources = KernelSources::embedded();
    let mut executed = 0;
    for name in [
        "constant",
        "global",
        "literal",
        "constant-x4",
        "global-x4",
        "literal-x4",
    ] {
        let cols = if name.ends_with("-x4") { 72 } else { 70 };
        let size = Size::matrix(150, cols);
        let inputs = Inputs::generate(FamilyId::Sobel, size, 3);
        let v = families::find_variant(FamilyId::Sobel, name).unwrap();
        for (lx, ly) in [(32u32, 8u32), (16, 16), (8, 1)] {
            let gx = v.family.family().default_groups(v, size, lx, 2);
            let gy = v.family.family().default_groups_y(v, size, ly);
            for (groups_y, covers) in [(gy, true), (gy - 1, false)] {
                let side = SideConfig {
                    shape: LaunchShape::planar((gx, groups_y), (lx, ly)),
                    defines: vec![],
                    flags: vec![],
                    jit: Default::default(),
                };
                let p = exec::prepare(&mut b, &sources, v, &inputs, &side)
                    .unwrap_or_else(|e| panic!("sobel/{name} ({lx}, {ly}): {e}"));
                let ver = exec::verify(&mut b, &p, &inputs).unwrap();
                assert_eq!(ver.checked as u64, 150 * cols);
                assert_eq!(
                    ver.ok, covers,
                    "sobel/{name} ({lx}, {ly}) y groups {groups_y}: {ver:?}"
                );
                exec::release(&mut b, p);
                executed += 1;
            }
        }
    }
    let size = Size::vector(256);
    let inputs = Inputs::generate(FamilyId::Broadcast, size, 3);
    for v in all_variants()
        .iter()
        .filter(|v| v.family == FamilyId::Broadcast)
    {
        let side = SideConfig {
            shape: LaunchShape::linear(3, 64),
            defines: vec![],
            flags: vec![],
            jit: Default::default(),
        };
        let p = exec::prepare(&mut b, &sources, v, &inputs, &side).unwrap();
        let ver = exec::verify(&mut b, &p, &inputs).unwrap();
        assert!(
            ver.ok && ver.checked == 3 * 64,
            "broadcast/{}: {ver:?}",
            v.name
        );
        exec::release(&mut b, p);
        executed += 1;
    }
    assert_eq!(executed, 6 * 3 * 2 + 4);
}

/// SpMV verifies on every generated matrix kind and on a Matrix Market file, through all three
/// read paths (PoCL has image1d_buffer: the texture path executes here too).
#[test]
#[ignore = "needs OpenCL"]
fn spmv_verifies_on_every_matrix_kind_and_path() {
    use clvscu::families::matrix::MatrixSource;
    let (_turn, mut b) = backend();
    let sources = KernelSources::embedded();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.mtx");
    std::fs::write(
        &file,
        "%%MatrixMarket matrix coordinate real symmetric\n5 5 6\n1 1 2\n2 1 -1\n3 3 4\n\
         5 2 0.5\n5 5 1\n4 4 -3\n",
    )
    .unwrap();
    let matrices = [
        MatrixSource::Banded,
        MatrixSource::PowerLaw,
        MatrixSource::parse(&format!("file:{}", file.display())).unwrap(),
    ];
    let mut executed = 0;
    for m in &matrices {
        let size = match m {
            MatrixSource::File { csr, .. } => csr.size(),
            _ => Size::matrix(500, 9000),
        };
        let inputs = Inputs::of_variant(&families::get(FamilyId::Spmv).variants()[0], size, 3, m);
        for v in all_variants().iter().filter(|v| v.family == FamilyId::Spmv) {
            let local = 64;
            let side = SideConfig {
                shape: LaunchShape::linear(
                    v.family.family().default_groups(v, size, local, 2),
                    local,
                ),
                defines: vec![],
                flags: vec![],
                jit: Default::default(),
            };
            let p = exec::prepare(&mut b, &sources, v, &inputs, &side)
                .unwrap_or_else(|e| panic!("{} {}: {e}", m.name(), v.name));
            let ver = exec::verify(&mut b, &p, &inputs).unwrap();
            assert!(
                ver.ok,
                "{} {}: {} > {}",
                m.name(),
                v.name,
                ver.max_error,
                ver.tolerance
            );
            exec::release(&mut b, p);
            executed += 1;
        }
    }
    assert_eq!(executed, 27);
}

/// Every fill variant in its own shape (1-D lengths, 2-D tables with a 2-D launch), including
/// sizes no work-group divides; the article's exact launch is refused by OpenCL 1.2's rule
/// exactly when the local size does not divide N.
#[test]
#[ignore = "needs OpenCL"]
fn every_fill_variant_verifies_on_opencl_and_the_exact_launch_gets_the_drivers_answer() {
    let (_turn, mut b) = backend();
    let sources = KernelSources::embedded();
    let mut executed = 0;
    for v in all_variants().iter().filter(|v| v.family == FamilyId::Fill) {
        let planar = v.default_groups.is_planar();
        let sizes = if planar {
            vec![Size::matrix(37, 37), Size::matrix(64, 64)]
        } else {
            vec![Size::vector(1000), Size::vector(4099), Size::vector(4096)]
        };
        for size in sizes {
            let inputs =
                Inputs::of_variant(v, size, 1, &clvscu::families::matrix::MatrixSource::Uniform);
            for local in [16u32, 64, 100, 256] {
                let shape = if planar {
                    let ly = 4;
                    let gy = v.family.family().default_groups_y(v, size, ly);
                    LaunchShape::planar(
                        (v.family.family().default_groups(v, size, local / ly, 2), gy),
                        (local / ly, ly),
                    )
                } else {
                    LaunchShape::linear(v.family.family().default_groups(v, size, local, 2), local)
                };
                let side = SideConfig {
                    shape,
                    defines: vec![],
                    flags: vec![],
                    jit: Default::default(),
                };
                // Sent to the driver as it is: PoCL may run an uneven exact launch
                // (non-uniform work-groups) or refuse it; either way its answer is the result.
                let uneven =
                    v.name == "1d-exact" && !size.elements().is_multiple_of(u64::from(local));
                let p = exec::prepare(&mut b, &sources, v, &inputs, &side)
                    .unwrap_or_else(|e| panic!("fill/{} {size} wg{local}: {e}", v.name));
                match exec::verify(&mut b, &p, &inputs) {
                    Ok(ver) => {
                        assert!(ver.ok, "fill/{} {size} wg{local}: not filled", v.name);
                        executed += 1;
                    }
                    Err(e) => {
                        assert!(uneven, "fill/{} {size} wg{local}: {e}", v.name);
                        assert!(e.to_string().contains("CL_INVALID_WORK_GROUP_SIZE"), "{e}");
                    }
                }
                exec::release(&mut b, p);
            }
        }
    }
    assert!(executed > 30, "{executed}");
}

/// Every launch and transfer variant in every wait mode: verified, timed on both clocks, and
/// OpenCL's queue intervals present (PoCL profiles queued, submit, start and end).
#[test]
#[ignore = "needs OpenCL"]
fn every_wait_mode_runs_launches_and_transfers_verified_on_opencl() {
    use clvscu::backend::WaitMode;
    let (_turn, mut b) = backend();
    let sources = KernelSources::embedded();
    let runtime = all_variants()
        .iter()
        .filter(|v| matches!(v.family, FamilyId::Launch | FamilyId::Transfer));
    let mut runs = 0;
    for v in runtime {
        let size = Size::vector(if v.family == FamilyId::Launch {
            20
        } else {
            10_000
        });
        let inputs = Inputs::generate(v.family, size, 5);
        let side = SideConfig {
            shape: LaunchShape::linear(3, if v.family == FamilyId::Launch { 1 } else { 64 }),
            defines: vec![],
            flags: vec![],
            jit: Default::default(),
        };
        for &mode in WaitMode::ALL {
            b.set_wait_mode(mode).unwrap();
            let p = exec::prepare(&mut b, &sources, v, &inputs, &side)
                .unwrap_or_else(|e| panic!("{}/{} {mode}: {e}", v.family.name(), v.name));
            let ver = exec::verify(&mut b, &p, &inputs).unwrap();
            assert!(ver.ok, "{}/{} {mode}: {ver:?}", v.family.name(), v.name);
            let t = exec::run(&mut b, &p).unwrap();
            assert!(t.wall.0 > 0.0, "{}/{} {mode}", v.family.name(), v.name);
            if !v.name.starts_with("overlap") {
                assert!(
                    t.device.is_some(),
                    "{}/{} {mode}: no device time",
                    v.family.name(),
                    v.name
                );
                assert!(t.queued_to_submit.is_some() && t.submit_to_start.is_some());
            }
            exec::release(&mut b, p);
            runs += 1;
        }
    }
    assert_eq!(runs, 4 * 8, "2 launch and 6 transfer variants in 4 modes");
}

/// With the wall clock alone a launch runs on the queue without profiling: still verified,
/// timed by the host clock, and without a device time; the device-event timer brings the
/// profiling queue back.
#[test]
#[ignore = "needs OpenCL"]
fn a_wall_clock_launch_has_no_device_timestamps_and_still_verifies() {
    use clvscu::backend::TimerKind;
    let (_turn, mut b) = backend();
    let sources = KernelSources::embedded();
    let v = all_variants()
        .iter()
        .find(|v| v.family == FamilyId::Launch && v.name == "empty")
        .unwrap();
    let inputs = Inputs::generate(v.family, Size::vector(20), 5);
    let side = SideConfig {
        shape: LaunchShape::linear(3, 1),
        defines: vec![],
        flags: vec![],
        jit: Default::default(),
    };
    let p = exec::prepare(&mut b, &sources, v, &inputs, &side).unwrap();
    for timer in [TimerKind::WallClock, TimerKind::DeviceEvent] {
        b.set_timer(timer).unwrap();
        assert!(exec::verify(&mut b, &p, &inputs).unwrap().ok, "{timer}");
        let t = exec::run(&mut b, &p).unwrap();
        assert!(t.wall.0 > 0.0);
        assert_eq!(
            t.device.is_some(),
            timer == TimerKind::DeviceEvent,
            "{timer}"
        );
    }
    exec::release(&mut b, p);
}

/// A transfer that lands wrong data is caught: the pinned host buffer is compared exactly.
#[test]
#[ignore = "needs OpenCL"]
fn a_pinned_round_trip_keeps_every_float() {
    use clvscu::backend::{Direction, HostMemory, Transfer};
    let (_turn, mut b) = backend();
    let data: Vec<f32> = (0..5000).map(|i| i as f32 * 0.5 - 7.0).collect();
    let host = b.alloc_host(data.len(), HostMemory::Pinned).unwrap();
    let dev = b.alloc(data.len()).unwrap();
    let copy = |direction| Transfer {
        host,
        buffer: dev,
        direction,
        len: data.len(),
    };
    b.host_data(host).unwrap().copy_from_slice(&data);
    b.transfer(copy(Direction::H2d)).unwrap();
    b.host_data(host).unwrap().fill(f32::NAN);
    b.transfer(copy(Direction::D2h)).unwrap();
    assert_eq!(b.host_data(host).unwrap(), &data[..]);
    b.free_host(host).unwrap();
    b.free(dev).unwrap();
    assert!(b.host_data(host).is_err(), "a freed host buffer is gone");
}

#[test]
#[ignore = "needs OpenCL"]
fn a_shared_memory_carveout_is_refused_by_every_opencl_platform_by_name() {
    let (_turn, mut b) = backend();
    let carveout = clvscu::backend::JitOptions {
        carveout: Some(100),
        ..Default::default()
    };
    let text = build_listing2_with(&mut b, carveout)
        .err()
        .expect("OpenCL has no carveout control: the build must be refused")
        .to_string();
    assert!(text.contains("carveout (100%)"), "{text}");
}

/// After a failed wait (a kernel that crashed the driver), every later command says the
/// context is lost and names that first failure, instead of blaming a later comparison for
/// the driver's `CL_OUT_OF_RESOURCES`.
#[test]
#[ignore = "needs OpenCL"]
fn after_a_lost_context_every_command_names_the_first_failure() {
    let (_turn, mut b) = backend();
    let p = build_listing2_with(&mut b, Default::default()).expect("listing 2 builds");
    exec::run(&mut b, &p).expect("a healthy context runs it");
    b.mark_context_lost("wait (kernel): CL_INVALID_COMMAND_QUEUE");
    let launch = exec::run(&mut b, &p).unwrap_err().to_string();
    let buffer = b.alloc(4).expect("an allocation enqueues nothing");
    let upload = b.upload(buffer, &[1.0; 4]).unwrap_err().to_string();
    let rebuild = build_listing2_with(&mut b, Default::default())
        .err()
        .map(|e| e.to_string())
        .expect("a build on a lost context is refused");
    for e in [&launch, &upload, &rebuild] {
        assert!(
            e.contains("lost context") && e.contains("CL_INVALID_COMMAND_QUEUE"),
            "{e}"
        );
    }
}

/// A poisoned range reads back as NaN and the floats past it keep their values; a range
/// longer than the buffer is refused, never written past its end.
#[test]
#[ignore = "needs OpenCL"]
fn poison_sets_the_range_to_nan_on_the_device_and_nothing_past_it() {
    let (_turn, mut b) = backend();
    common::poison_sets_the_range_and_nothing_past_it(&mut b);
}

/// Runs the binary with `args` and returns its exit code, its error output and the most
/// resident memory it ever held (bytes), from the kernel's account of that one child.
// The child is waited for by wait4, which also gives its rusage; std's wait cannot.
#[allow(clippy::zombie_processes)]
fn run_measuring_memory(args: &[&str]) -> (i32, String, u64) {
    let dir = tempfile::tempdir().unwrap();
    let err_path = dir.path().join("stderr");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("clvscu"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value to be written over; the pid is our own child,
    // waited for here only.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4 on the child");
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    let stderr = std::fs::read_to_string(&err_path).unwrap();
    // Linux counts ru_maxrss in KiB.
    (code, stderr, usage.ru_maxrss as u64 * 1024)
}

/// On PoCL the device's memory is the host's: a problem past the device's memory, its largest
/// allocation or the one pool both share is refused before its inputs are made, and the
/// process never holds more than 2 GB on the way to the refusal.
#[test]
#[ignore = "needs OpenCL"]
fn too_large_problems_on_pocl_are_refused_before_anything_is_allocated() {
    let (_turn, b) = backend();
    let info = b.info().clone();
    drop(b);
    let out = tempfile::tempdir().unwrap();
    let folder = |name: &str| out.path().join(name).display().to_string();
    // Past the device's memory; a single buffer past its largest allocation (or its memory);
    // three matrices that fit one by one but not, with the host's copies, in the one pool.
    let one_buffer = info.max_alloc_bytes / 4 + 1;
    // SGEMM's three n x n matrices at 0.8 of what the device and the host both have: they
    // fit the device, but with the host's copies not the one pool.
    let pool = info
        .global_mem_bytes
        .min(clvscu::host_memory::available_host_bytes().unwrap_or(u64::MAX));
    let side = ((pool as f64 * 0.8 / 12.0).sqrt() as u64 / 128 * 128).clamp(1024, 65408);
    let cases = [
        ("matvec/listing2", "65536x65535".to_string()),
        ("fill/float4", one_buffer.to_string()),
        ("sgemm/tiled16", side.to_string()),
    ];
    for (i, (kernel, size)) in cases.iter().enumerate() {
        let dir = folder(&format!("run{i}"));
        let args = [
            "run",
            kernel,
            "--size",
            size,
            "--pair",
            "opencl",
            "--no-plot",
        ];
        let (code, stderr, peak) = run_measuring_memory(&[&args[..], &["--out", &dir]].concat());
        assert_eq!(code, 1, "{kernel} {size}: {stderr}");
        assert!(
            stderr.contains("needs") && stderr.contains("bytes"),
            "{kernel} {size}: {stderr}"
        );
        assert!(
            peak < 2_000_000_000,
            "{kernel} {size}: {peak} bytes before the refusal"
        );
    }
}
