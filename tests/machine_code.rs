//! The machine code each runtime ran, as committed from an H200: whole cubins cut out of the
//! CUDA compute cache (two kept as fixtures), and each kernel's SASS, which parses into the
//! instruction classes the explain folder recorded. No GPU needed.

use std::io::Read;
use std::path::{Path, PathBuf};

use clvscu::explain::machine_code::{self, MachineCodeRow, MACHINE_CODE_CSV};
use clvscu::export::csv::read_rows;
use clvscu::inspect::cubin::{class_counts, elf_images, elf_length, holds_kernel};
use clvscu::inspect::sass::parse_cuobjdump;
use clvscu::rows::{ExplainRow, EXPLAIN_CSV};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(Path::new(ROOT).join("tests/fixtures/cubins").join(name)).unwrap()
}

/// The explain folders committed with the machine code each runtime ran.
fn folders() -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(Path::new(ROOT).join("results"))
        .unwrap()
        .flatten()
        .map(|e| e.path().join("explain-known"))
        .filter(|p| p.join(MACHINE_CODE_CSV).is_file())
        .collect();
    found.sort();
    found
}

#[test]
fn committed_cubins_are_whole_gpu_images_holding_their_kernel() {
    for name in [
        "sgemm-blocked-cuda-best.opencl-runtime.cubin",
        "sgemm-blocked-cuda-best.cuda-driver-opencl-ptx.cubin",
    ] {
        let image = fixture(name);
        assert_eq!(elf_length(&image), Some(image.len()), "{name}");
        assert!(holds_kernel(&image, "sgemm_blocked"), "{name}");
        // As a cache entry holds it: among other bytes, and cut out whole again.
        let mut entry = b"index record".repeat(7);
        entry.extend(&image);
        entry.extend(b"trailing bookkeeping");
        assert_eq!(elf_images(&entry), vec![image.as_slice()], "{name}");
        assert!(elf_images(&entry[..entry.len() - 30]).is_empty() || image.len() < 30);
    }
    let (cl, cu) = (
        fixture("sgemm-blocked-cuda-best.opencl-runtime.cubin"),
        fixture("sgemm-blocked-cuda-best.cuda-driver-opencl-ptx.cubin"),
    );
    assert_ne!(cl, cu, "two runtimes' code of the same PTX differ");
}

fn sass_text(folder: &Path, row: &MachineCodeRow) -> String {
    let mut text = String::new();
    let file = std::fs::File::open(folder.join(&row.sass)).unwrap();
    flate2::read::GzDecoder::new(file)
        .read_to_string(&mut text)
        .unwrap();
    text
}

#[test]
fn committed_sass_parses_into_the_classes_the_folder_recorded() {
    let dirs = folders();
    assert!(
        !dirs.is_empty(),
        "no explain folder with machine code under results/"
    );
    for dir in dirs {
        let rows: Vec<MachineCodeRow> = read_rows(&dir.join(MACHINE_CODE_CSV)).unwrap();
        let recorded = machine_code::read(&dir).unwrap();
        let mut checked = 0;
        for row in rows.iter().filter(|r| !r.sass.is_empty()) {
            let text = sass_text(&dir, row);
            let ops = parse_cuobjdump(&text)
                .remove(&row.kernel)
                .unwrap_or_else(|| panic!("{}: no {} in {}", dir.display(), row.kernel, row.sass));
            let key = (row.target.clone(), row.code.clone());
            assert_eq!(class_counts(&ops), recorded[&key].classes, "{key:?}");
            checked += 1;
        }
        assert!(checked > 0, "{}", dir.display());
    }
}

/// The finding the issue asked for, counted from the two runtimes' code of the same PTX: the
/// tuned SGEMM's tiles are read with scalar shared loads by OpenCL's JIT and with 128-bit
/// ones by the CUDA driver.
#[test]
fn from_the_same_ptx_opencls_jit_reads_the_sgemm_tiles_with_scalar_shared_loads() {
    for dir in folders() {
        let codes = machine_code::read(&dir).unwrap();
        let get =
            |code: &str| codes.get(&("sgemm-blocked-cuda-best".to_string(), code.to_string()));
        let (Some(cl), Some(cu)) = (
            get(machine_code::OPENCL_RUNTIME),
            get(machine_code::CUDA_DRIVER_OPENCL_PTX),
        ) else {
            panic!("{}: the tuned SGEMM's codes were not read", dir.display());
        };
        let n = |k: &clvscu::inspect::cubin::KernelCode, c: &str| {
            k.classes.get(c).copied().unwrap_or(0)
        };
        assert!(
            n(cl, "LDS") > 0 && n(cl, "LDS.128") == 0,
            "{:?}",
            cl.classes
        );
        assert!(
            n(cu, "LDS.128") > 0 && n(cu, "LDS") == 0,
            "{:?}",
            cu.classes
        );
    }
}

/// A register rung whose control moved the PR is marked void in the committed rows.
#[test]
fn a_register_rung_whose_control_moved_is_void_in_the_committed_rows() {
    for dir in folders() {
        let rows: Vec<ExplainRow> = read_rows(&dir.join(EXPLAIN_CSV)).unwrap();
        let control = |target: &str| {
            rows.iter()
                .find(|r| r.target == target && r.rung.contains("-capped-to-own-r"))
        };
        for r in rows
            .iter()
            .filter(|r| r.rung.contains("-capped-to-r") && !r.rung.contains("-capped-to-own-r"))
        {
            let c = control(&r.target).expect("every register rung runs its control");
            let reference = rows
                .iter()
                .find(|x| x.target == r.target && x.rung == "opencl-ptx")
                .unwrap();
            let apart = c.pr_ci_lo > reference.pr_ci_hi || c.pr_ci_hi < reference.pr_ci_lo;
            assert_eq!(
                r.void.starts_with("void:"),
                apart,
                "{}: {} void `{}` but its control {:?} against {:?}",
                dir.display(),
                r.rung,
                r.void,
                c.pr,
                reference.pr
            );
        }
    }
}
