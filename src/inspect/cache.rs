//! A compute cache's folder read as the builds leave it: the images in the files a build added.
//! The CUDA driver and NVIDIA's OpenCL both write what they JIT there, so a process given an
//! empty private cache finds its own builds' images (`inspect --sass`, `explain`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::cubin;

/// The private cache's folder, in a process whose `CUDA_CACHE_PATH` was made empty for it.
pub const PRIVATE_CACHE_ENV: &str = "CLVSCU_PRIVATE_COMPUTE_CACHE";

/// The files of a cache folder with their sizes and times: what a build adds shows as new.
pub type Snapshot = BTreeMap<PathBuf, (u64, Option<SystemTime>)>;

pub fn snapshot(dir: &Path) -> Snapshot {
    let mut all = Snapshot::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(meta) = e.metadata() else { continue };
            if meta.is_dir() {
                stack.push(e.path());
            } else if meta.is_file() {
                all.insert(e.path(), (meta.len(), meta.modified().ok()));
            }
        }
    }
    all
}

/// The images holding `kernel` (any image where `kernel` is empty) in the files that are new
/// or changed since `before`, and the folder's files now.
pub fn new_images(dir: &Path, before: &Snapshot, kernel: &str) -> (Vec<Vec<u8>>, Snapshot) {
    let after = snapshot(dir);
    let mut images = Vec::new();
    for (path, stamp) in &after {
        if before.get(path) == Some(stamp) {
            continue;
        }
        let Ok(bytes) = std::fs::read(path) else {
            continue;
        };
        images.extend(
            cubin::elf_images(&bytes)
                .into_iter()
                .filter(|i| kernel.is_empty() || cubin::holds_kernel(i, kernel))
                .map(<[u8]>::to_vec),
        );
    }
    (images, after)
}
