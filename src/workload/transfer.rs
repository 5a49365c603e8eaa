//! Host transfers as a family: host↔device copies with pageable and pinned host memory, and
//! a host-to-device copy beside a kernel (serially on one queue, or concurrently on two
//! queues / streams) to see whether the runtime overlaps them. Every transfer is verified:
//! the data must arrive unchanged.

use super::exec::{ExecError, Place, Prepared, Step};
use super::reference::{self, Verification};
use super::{FamilyKind, GroupRule, Size, Variant};
use crate::backend::{Arg, Backend, BufferId, Direction, HostBufferId, HostMemory, KernelId};

const fn transfer(name: &'static str, kernel: &'static str, about: &'static str) -> Variant {
    Variant {
        family: FamilyKind::Transfer,
        name,
        kernel,
        pow2_local: false,
        min_local: 1,
        max_local: u32::MAX,
        safe: true,
        experiment: false,
        default_groups: GroupRule::PerComputeUnit(16),
        unroll_points: &[],
        about,
    }
}

/// The transfer family's variants (appended to the variant table).
pub const VARIANTS: [Variant; 6] = [
    transfer(
        "h2d-pageable",
        "",
        "host to device from ordinary (pageable) memory",
    ),
    transfer(
        "h2d-pinned",
        "",
        "host to device from pinned memory (CL_MEM_ALLOC_HOST_PTR + map / cuMemAllocHost)",
    ),
    transfer(
        "d2h-pageable",
        "",
        "device to host into ordinary (pageable) memory",
    ),
    transfer("d2h-pinned", "", "device to host into pinned memory"),
    transfer(
        "overlap-serial",
        "peak_copy",
        "pinned host-to-device copy, then the copy kernel, on one queue / stream",
    ),
    transfer(
        "overlap-concurrent",
        "peak_copy",
        "pinned host-to-device copy and the copy kernel on two queues / streams at once",
    ),
];

/// Direction and host memory of a variant; `None` for the overlap pair (pinned, to device).
fn kind(variant: &str) -> (Direction, HostMemory) {
    match variant {
        "h2d-pageable" => (Direction::H2d, HostMemory::Pageable),
        "d2h-pageable" => (Direction::D2h, HostMemory::Pageable),
        "d2h-pinned" => (Direction::D2h, HostMemory::Pinned),
        _ => (Direction::H2d, HostMemory::Pinned),
    }
}

/// Bytes moved by one run: the transfer, plus the copy kernel's read and write beside it.
pub fn work(variant: &str, n: u64) -> (u64, u64) {
    let bytes = n.saturating_mul(4);
    if variant.starts_with("overlap") {
        (bytes.saturating_mul(3), 0)
    } else {
        (bytes, 0)
    }
}

/// What `build` made: the steps, the buffers it owns and where the results are checked.
pub(super) struct Built {
    pub(super) steps: Vec<Step>,
    pub device: Vec<BufferId>,
    pub hosts: Vec<HostBufferId>,
    pub(super) checked: Vec<(Place, usize)>,
}

/// Allocates the buffers of a transfer variant and stages `data` (the inputs) where the
/// transfer starts. `kernel` is the copy kernel of the overlap pair.
pub(super) fn build(
    backend: &mut dyn Backend,
    variant: &Variant,
    data: &[f32],
    kernel: Option<KernelId>,
    shape: crate::backend::LaunchShape,
) -> Result<Built, ExecError> {
    let n = data.len();
    let (direction, memory) = kind(variant.name);
    let mut built = Built {
        steps: Vec::new(),
        device: Vec::new(),
        hosts: Vec::new(),
        checked: Vec::new(),
    };
    let result = stage(backend, &mut built, data, direction, memory);
    let (host, dev) = match result {
        Ok(pair) => pair,
        Err(e) => {
            release(backend, &built);
            return Err(e);
        }
    };
    let transfer = (host, dev, direction, n);
    match kernel {
        None => built.steps.push(Step::Transfer(transfer)),
        Some(kernel) => {
            let extra = (|| -> Result<(BufferId, BufferId), ExecError> {
                let x = backend.alloc(n)?;
                built.device.push(x);
                backend.upload(x, data)?;
                let y = backend.alloc(n)?;
                built.device.push(y);
                Ok((x, y))
            })();
            let (x, y) = match extra {
                Ok(pair) => pair,
                Err(e) => {
                    release(backend, &built);
                    return Err(e);
                }
            };
            built.checked.push((Place::Device(y), n));
            built.steps.push(Step::Beside {
                transfer,
                kernel,
                shape,
                args: vec![Arg::Buffer(x), Arg::Buffer(y), Arg::U32(n as u32)],
                concurrent: variant.name == "overlap-concurrent",
            });
        }
    }
    Ok(built)
}

/// The host and device buffers of the transfer, with `data` where the transfer starts.
fn stage(
    backend: &mut dyn Backend,
    built: &mut Built,
    data: &[f32],
    direction: Direction,
    memory: HostMemory,
) -> Result<(HostBufferId, BufferId), ExecError> {
    let n = data.len();
    let host = backend.alloc_host(n, memory)?;
    built.hosts.push(host);
    let dev = backend.alloc(n)?;
    built.device.push(dev);
    match direction {
        Direction::H2d => {
            backend.host_data(host)?.copy_from_slice(data);
            built.checked.push((Place::Device(dev), n));
        }
        Direction::D2h => {
            backend.upload(dev, data)?;
            built.checked.push((Place::Host(host), n));
        }
    }
    Ok((host, dev))
}

fn release(backend: &mut dyn Backend, built: &Built) {
    for b in &built.device {
        let _ = backend.free(*b);
    }
    for h in &built.hosts {
        let _ = backend.free_host(*h);
    }
}

/// Poisons every place a result lands, runs once, and checks that each holds the inputs
/// exactly (a copy is exact).
pub(super) fn verify(
    backend: &mut dyn Backend,
    p: &Prepared,
    data: &[f32],
) -> Result<Verification, ExecError> {
    for (place, len) in &p.checked {
        let poison = vec![f32::NAN; *len];
        match place {
            Place::Device(b) => backend.upload(*b, &poison)?,
            Place::Host(h) => backend.host_data(*h)?[..*len].copy_from_slice(&poison),
        }
    }
    super::exec::run(backend, p)?;
    let want: Vec<f64> = data.iter().map(|x| f64::from(*x)).collect();
    let mut got = Vec::new();
    for (place, len) in &p.checked {
        let mut part = vec![0.0f32; *len];
        match place {
            Place::Device(b) => backend.download(*b, &mut part)?,
            Place::Host(h) => part.copy_from_slice(&backend.host_data(*h)?[..*len]),
        }
        got.extend(part);
    }
    let want: Vec<f64> = want.iter().cycle().take(got.len()).copied().collect();
    Ok(reference::compare(&got, &want, &vec![0.0; want.len()]))
}

/// The default size of the family: 64 MiB of floats.
pub const DEFAULT_SIZE: Size = Size {
    rows: 1 << 24,
    cols: 0,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::fake::{FakeBackend, FakeScript};
    use crate::backend::{Api, LaunchShape};
    use crate::kernels::KernelSources;
    use crate::workload::exec::{self, Inputs, SideConfig};
    use crate::workload::find_variant;

    fn run_variant(name: &str, wrong: bool) -> Verification {
        let script = FakeScript {
            wrong_results: if wrong {
                vec!["peak_copy".into()]
            } else {
                vec![]
            },
            ..FakeScript::default()
        };
        let mut b = FakeBackend::new(Api::Cuda, script);
        let v = find_variant(FamilyKind::Transfer, name).unwrap();
        let inputs = Inputs::generate(FamilyKind::Transfer, Size::vector(1000), 3);
        let side = SideConfig {
            shape: LaunchShape::linear(4, 64),
            defines: vec![],
            flags: vec![],
            jit: Default::default(),
        };
        let p = exec::prepare(&mut b, &KernelSources::embedded(), v, &inputs, &side).unwrap();
        let ver = exec::verify(&mut b, &p, &inputs).unwrap();
        exec::release(&mut b, p);
        assert_eq!(b.live_buffers(), 0, "{name} leaks");
        ver
    }

    #[test]
    fn every_transfer_round_trips_on_the_fake() {
        for v in &VARIANTS {
            let ver = run_variant(v.name, false);
            assert!(ver.ok, "{}: {ver:?}", v.name);
            assert!(ver.checked >= 1000, "{}: {}", v.name, ver.checked);
        }
    }

    #[test]
    fn a_wrong_kernel_beside_a_transfer_is_caught() {
        assert!(!run_variant("overlap-concurrent", true).ok);
    }

    #[test]
    fn overlap_counts_the_kernel_bytes() {
        assert_eq!(work("h2d-pinned", 10), (40, 0));
        assert_eq!(work("overlap-serial", 10), (120, 0));
    }
}
