//! Real OpenCL: every safe variant executes on the OpenCL device (PoCL's CPU device in CI) and
//! verifies against the f64 reference, for several sizes (1, primes, non-multiples of the
//! work-group size) and work-group sizes.

mod common;

use std::sync::{Mutex, MutexGuard};

use clvscu::backend::opencl::{self, OpenClBackend};
use clvscu::backend::{Backend, LaunchShape};
use clvscu::kernels::KernelSources;
use clvscu::workload::exec::{self, Inputs, SideConfig};
use clvscu::workload::{self, default_groups, FamilyKind, Size, VARIANTS};

/// PoCL lists no device when two threads open it at once: the tests take turns.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn backend() -> (MutexGuard<'static, ()>, OpenClBackend) {
    let turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    common::need("OpenCL", opencl::availability());
    (turn, OpenClBackend::open(None).expect("open OpenCL device"))
}

fn sizes(family: FamilyKind) -> Vec<Size> {
    match family {
        FamilyKind::Matvec => vec![
            Size::matrix(1, 1),
            Size::matrix(37, 101),
            Size::matrix(131, 64),
            Size::matrix(300, 257),
        ],
        FamilyKind::Reduce | FamilyKind::Bandwidth => vec![
            Size::vector(1),
            Size::vector(997),
            Size::vector(4096),
            Size::vector(100_003),
        ],
        FamilyKind::Flops => vec![Size::vector(1000)],
        FamilyKind::Launch => vec![Size::vector(7)],
        // Cubes and a plane stack with the fewest planes a radius-4 step allows.
        FamilyKind::Stencil => vec![Size::matrix(32, 9), Size::vector(64)],
    }
}

fn locals(v: &workload::Variant) -> Vec<u32> {
    if v.family == FamilyKind::Launch {
        return vec![1];
    }
    [32u32, 64, 128, 256, 96]
        .into_iter()
        .filter(|l| workload::check_local(v, *l).is_ok())
        .collect()
}

#[test]
#[ignore = "needs OpenCL"]
fn every_variant_verifies_on_opencl() {
    let (_turn, mut b) = backend();
    let sources = KernelSources::embedded();
    let mut executed = 0;
    for v in VARIANTS.iter().filter(|v| v.safe) {
        for size in sizes(v.family) {
            let inputs = Inputs::generate(v.family, size, 42);
            for local in locals(v) {
                let groups = default_groups(v, size, local, 2);
                let side = SideConfig {
                    shape: LaunchShape { groups, local },
                    defines: vec![],
                    flags: vec![],
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
        for v in VARIANTS.iter().filter(|v| v.safe) {
            let size = sizes(v.family)[sizes(v.family).len() - 1];
            let inputs = Inputs::generate(v.family, size, 7);
            let local = locals(v)[0];
            let side = SideConfig {
                shape: LaunchShape {
                    groups: default_groups(v, size, local, 2),
                    local,
                },
                defines: vec![("CLVSCU_INDEX".into(), index.into())],
                flags: vec![],
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

/// The stencil with each unroll setting the `fdtd-unroll` study uses (none, A, B, A+B), at
/// every work-group size it accepts: the pragmas change the code, never the result.
#[test]
#[ignore = "needs OpenCL"]
fn stencil_verifies_with_and_without_pragmas() {
    let (_turn, mut b) = backend();
    let sources = KernelSources::embedded();
    let v = workload::find_variant(FamilyKind::Stencil, "fdtd3d").unwrap();
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
                shape: LaunchShape {
                    groups: default_groups(v, size, local, 2),
                    local,
                },
                defines: defines
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                flags: vec![],
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
