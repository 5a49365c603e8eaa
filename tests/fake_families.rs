//! Every built-in family runs on the fake backend: each safe variant is compiled, staged, run
//! and verified against its f64 reference on both fake APIs, at the family's small test sizes,
//! with the kernels computed by the families' own host emulations. A kernel whose family has
//! no emulation (a study's own pair) is refused by name, never passed.

use std::path::Path;

use assert_cmd::Command;

use clvscu::backend::fake::{FakeBackend, FakeScript};
use clvscu::backend::{Api, Backend, LaunchShape, Runtime};
use clvscu::families::exec::{self, Inputs, SideConfig};
use clvscu::families::matrix::MatrixSource;
use clvscu::families::{FamilyId, Size, Variant};
use clvscu::kernels::KernelSources;

fn fake(api: Api) -> FakeBackend {
    FakeBackend::new(api, FakeScript::default(), clvscu::families::emulator())
}

/// The family's test sizes; fill tests its own (2-D) sizes elsewhere, so it gets a vector and
/// a matrix here that its exact-launch variants' work-groups divide.
fn sizes(family: FamilyId) -> Vec<Size> {
    let own = clvscu::families::get(family).spec().test_sizes;
    if own.is_empty() {
        return vec![Size::vector(4096), Size::matrix(64, 256)];
    }
    own.to_vec()
}

/// The variant's default launch at `size`: 2-D kernels get work-groups `local` x 4.
fn shape(v: &Variant, size: Size) -> LaunchShape {
    let local = clvscu::families::get(v.family).default_local(v);
    let groups = v.family.family().default_groups(v, size, local, 4);
    if v.default_groups.is_planar() {
        let groups_y = v.family.family().default_groups_y(v, size, 4);
        return LaunchShape::planar((groups, groups_y), (local, 4));
    }
    LaunchShape::linear(groups, local)
}

/// Runs and verifies `v` at every size it accepts on `b`; returns how many it verified.
fn verify_variant(b: &mut dyn Runtime, sources: &KernelSources, v: &'static Variant) -> usize {
    let mut verified = 0;
    for size in sizes(v.family) {
        if v.family.family().check_size(v, size).is_err() {
            continue;
        }
        let inputs = Inputs::of_variant(v, size, 42, &MatrixSource::Uniform);
        let side = SideConfig {
            shape: shape(v, size),
            defines: vec![],
            flags: vec![],
            jit: Default::default(),
        };
        let what = format!("{}/{} {size} on fake {}", v.family.name(), v.name, b.api());
        let p =
            exec::prepare(b, sources, v, &inputs, &side).unwrap_or_else(|e| panic!("{what}: {e}"));
        let ver = exec::verify(b, &p, &inputs).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(
            ver.ok,
            "{what}: max error {} > tolerance {} ({} checked)",
            ver.max_error, ver.tolerance, ver.checked
        );
        exec::release(b, p);
        verified += 1;
    }
    verified
}

#[test]
fn every_built_in_family_verifies_on_the_fake_backend() {
    let sources = KernelSources::embedded();
    let mut families_run = Vec::new();
    for api in [Api::OpenCl, Api::Cuda] {
        let mut b = fake(api);
        for family in clvscu::families::all() {
            let mut verified = 0;
            for v in family.variants().iter().filter(|v| v.safe) {
                verified += verify_variant(&mut b, &sources, v);
            }
            assert!(
                verified > 0,
                "{}: no variant verified on fake {api}",
                family.id().name()
            );
            families_run.push(family.id().name());
        }
    }
    // The families the fake could not run before their emulations moved next to them.
    for name in ["transpose", "stencil2d", "scan", "guidance"] {
        assert!(families_run.contains(&name), "{name} did not run");
    }
}

/// `guidance_branch` follows its program's `BRANCH_BY_WARP`: each work-item's word is the
/// one of the path that switch gives it (the family's check accepts either assignment, so this
/// holds the emulation to the right one).
#[test]
fn the_branch_switch_reaches_the_emulation() {
    use clvscu::backend::{Arg, CompileRequest};
    use clvscu::families::guidance::branch_word;
    let source = KernelSources::embedded()
        .program(Api::Cuda, "guidance")
        .unwrap();
    let n = 100u32;
    for by_warp in [false, true] {
        let mut b = fake(Api::Cuda);
        let program = b
            .compile(&CompileRequest {
                source: source.clone(),
                defines: vec![("BRANCH_BY_WARP".into(), u8::from(by_warp).to_string())],
                flags: vec![],
                jit: Default::default(),
            })
            .unwrap();
        let kernel = b.kernel(program, "guidance_branch").unwrap();
        let out = b.alloc(n as usize).unwrap();
        b.launch(
            kernel,
            LaunchShape::linear(1, 128),
            &[Arg::Buffer(out), Arg::U32(n)],
        )
        .unwrap();
        let mut got = vec![0.0f32; n as usize];
        b.download(out, &mut got).unwrap();
        for i in 0..n {
            let second = if by_warp {
                (i / 32) % 2 == 1
            } else {
                i % 2 == 1
            };
            assert_eq!(
                got[i as usize].to_bits(),
                branch_word(i, second),
                "{i} {by_warp}"
            );
        }
    }
}

/// The saxpy example (a study's own kernel pair) through `clvscu run --pair fake`: its family
/// has no host emulation, and the run says so, naming the kernel.
#[test]
fn a_family_without_emulation_is_refused_by_kernel_name() {
    let home = tempfile::tempdir().unwrap();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/saxpy");
    for f in ["saxpy.cl", "saxpy.cu"] {
        std::fs::copy(example.join(f), home.path().join(f)).unwrap();
    }
    let study = std::fs::read_to_string(example.join("saxpy.toml")).unwrap();
    let small = study.replace("size = \"2^24\"", "size = \"2^10\"");
    assert_ne!(small, study, "the example's size moved; make it small here");
    std::fs::write(home.path().join("saxpy.toml"), small).unwrap();
    let out = home.path().join("out");
    let run = Command::cargo_bin("clvscu")
        .unwrap()
        .args(["run", "--pair", "fake", "--quiet", "--study"])
        .arg(home.path().join("saxpy.toml"))
        .arg("--out")
        .arg(&out)
        .assert()
        .failure();
    let said = String::from_utf8_lossy(&run.get_output().stderr).into_owned();
    assert!(
        said.contains("kernel 'saxpy'") && said.contains("has no host emulation"),
        "{said}"
    );
    let rows = std::fs::read_to_string(out.join("measurements.csv")).unwrap();
    assert!(
        rows.contains("launch-failed") && !rows.contains(",ok,"),
        "{rows}"
    );
}
