//! The one rule for tests that need a real runtime: they are `#[ignore = "needs OpenCL"]` (or
//! NVRTC, or a GPU), so a plain `cargo test` lists them as ignored instead of passing them
//! unseen, and the test command runs them with `--include-ignored`. There they call [`need`],
//! which fails the test, loudly and with the reason, when the runtime is missing.

#![allow(dead_code)]

/// Panics with the reason when `what` is unavailable: a test that needs it cannot pass
/// without it.
pub fn need<T, E: std::fmt::Display>(what: &str, available: Result<T, E>) {
    if let Err(reason) = available {
        panic!("{what} is needed by this test but unavailable: {reason}");
    }
}

/// The matvec entries of `study` as `[[comparison]]` tables at test size: each matrix scaled to
/// about 2^14 elements with its aspect ratio, same names and variants.
pub fn matvec_entries_at_test_size(study: &clvscu::study::Study) -> String {
    let mut text = String::new();
    for c in study
        .comparisons
        .iter()
        .filter(|c| c.a.family == clvscu::families::FamilyId::Matvec)
    {
        let z = c.a.size;
        let f = ((z.elements() as f64) / 16384.0).sqrt().max(1.0);
        let rows = ((z.rows as f64 / f).round() as u64).max(1);
        let cols = ((z.cols as f64 / f).round() as u64).max(1);
        text += &format!(
            "[[comparison]]\nname = \"{}\"\nfamily = \"matvec\"\nvariant = \"{}\"\nsize = \"{rows}x{cols}\"\n",
            c.id, c.a.variant.name
        );
    }
    text
}

/// The matvec variant `variant` at `groups` x `local` on `b`: launched `runs` times, then
/// verified. For the one-launch split variants the per-row (or per-tile) counters that the
/// last work-group resets must be 0 again at every launch, so one verification after several
/// launches checks that too.
pub fn matvec_after_runs(
    b: &mut clvscu::backend::opencl::OpenClBackend,
    variant: &str,
    size: clvscu::families::Size,
    local: u32,
    groups: u32,
    runs: u32,
) {
    use clvscu::families::{exec, find_variant, FamilyId};
    let v = find_variant(FamilyId::Matvec, variant).unwrap();
    let inputs =
        exec::Inputs::of_variant(v, size, 7, &clvscu::families::matrix::MatrixSource::Uniform);
    let side = exec::SideConfig {
        shape: clvscu::backend::LaunchShape::linear(groups, local),
        defines: vec![],
        flags: vec![],
        jit: Default::default(),
    };
    let sources = clvscu::kernels::KernelSources::embedded();
    let p = exec::prepare(b, &sources, v, &inputs, &side)
        .unwrap_or_else(|e| panic!("{variant} {size} {local}x{groups}: {e}"));
    for _ in 0..runs {
        exec::run(b, &p).unwrap();
    }
    let check = exec::verify(b, &p, &inputs).unwrap();
    assert!(
        check.ok,
        "{variant} {size} {local}x{groups} after {runs} runs: {check:?}"
    );
    exec::release(b, p);
}

/// Fails, naming the comparison and API, unless every row ran and verified.
pub fn assert_all_verified(rows: &[clvscu::rows::MeasurementRow]) {
    for r in rows {
        assert!(
            r.status == clvscu::rows::Status::Ok && r.verified,
            "{} {}",
            r.comparison,
            r.api
        );
    }
}

/// Copies `src` (a committed results folder) into `dst`, file by file.
pub fn copy_tree(src: &std::path::Path, dst: &std::path::Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        let to = dst.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &to);
        } else {
            std::fs::copy(e.path(), to).unwrap();
        }
    }
}

/// A backend's poison: the first 600 of 1000 floats read back as NaN, the rest keep their
/// values, and a range longer than the buffer is refused.
pub fn poison_sets_the_range_and_nothing_past_it(b: &mut dyn clvscu::backend::Runtime) {
    let data: Vec<f32> = (0..1000).map(|i| i as f32).collect();
    let dev = b.alloc(data.len()).unwrap();
    b.upload(dev, &data).unwrap();
    b.poison(dev, 600).unwrap();
    let mut back = vec![0.0f32; data.len()];
    b.download(dev, &mut back).unwrap();
    assert!(back[..600].iter().all(|v| v.is_nan()));
    assert_eq!(&back[600..], &data[600..]);
    assert!(
        b.poison(dev, 1001).is_err(),
        "a fill past the end is refused"
    );
    b.free(dev).unwrap();
}

/// A transfer longer than its buffers is refused before the driver is asked for anything:
/// it counts no call, where the same transfer within them counts its events.
pub fn a_refused_transfer_counts_no_call(b: &mut dyn clvscu::backend::Runtime) {
    use clvscu::backend::{Direction, HostMemory, Transfer};
    let host = b.alloc_host(4, HostMemory::Pageable).unwrap();
    let buffer = b.alloc(4).unwrap();
    let of = |len| Transfer {
        host,
        buffer,
        direction: Direction::H2d,
        len,
    };
    let before = b.calls();
    let e = b.transfer(of(8)).unwrap_err();
    assert!(e.to_string().contains("transfer of 8 floats"), "{e}");
    assert_eq!(b.calls(), before, "a refused transfer counts no call");
    b.transfer(of(4)).unwrap();
    assert!(b.calls().events > before.events);
}

/// The processes whose command line names `folder`, other than `except`.
pub fn processes_naming(folder: &std::path::Path, except: u32) -> Vec<u32> {
    let needle = folder.as_os_str().as_encoded_bytes();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        // A zombie has an empty command line; a process that ended is no longer listed.
        if pid != except && cmdline.windows(needle.len()).any(|w| w == needle) {
            found.push(pid);
        }
    }
    found
}

/// Waits up to `limit` for `check` to hold, polling.
pub fn within(limit: std::time::Duration, mut check: impl FnMut() -> bool) -> bool {
    let start = std::time::Instant::now();
    while start.elapsed() < limit {
        if check() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    check()
}

/// Every file under `dir`, relative to it, sorted.
pub fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    out.sort();
    out
}
