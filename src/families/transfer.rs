//! Host transfers as a family: host↔device copies with pageable and pinned host memory, and a
//! host-to-device copy beside a kernel (serially on one queue, or concurrently on two queues /
//! streams) to see whether the runtime overlaps them. Every transfer's data must arrive unchanged.

use crate::backend::{Arg, Direction, HostBufferId, HostMemory};
use crate::families::family::{vectors, Family, FamilySpec, InputChoice, PlainCalls, QuickSize};
use crate::families::footprint::{mul, plain, Footprint};
use crate::families::plan::{Build, Built, ExecError, Inputs, Place, Step};
use crate::families::reference;
use crate::families::variant::{bare, GroupRule, Variant};
use crate::rows::{FamilyId, Metric, Size};

const fn transfer(name: &'static str, kernel: &'static str, about: &'static str) -> Variant {
    let rule = GroupRule::PerComputeUnit(16);
    bare(FamilyId::Transfer, name, kernel, rule, about)
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

/// Direction and host memory of a variant (the overlap pair's: pinned, to device).
fn kind(variant: &str) -> (Direction, HostMemory) {
    match variant {
        "h2d-pageable" => (Direction::H2d, HostMemory::Pageable),
        "d2h-pageable" => (Direction::D2h, HostMemory::Pageable),
        "d2h-pinned" => (Direction::D2h, HostMemory::Pinned),
        _ => (Direction::H2d, HostMemory::Pinned),
    }
}

/// The buffers of a transfer variant, `host` already allocated, with the inputs where the
/// transfer starts, and its one step: the transfer, or the overlap pair's copy kernel beside it.
fn stage(cx: &mut Build<'_>, host: HostBufferId, direction: Direction) -> Result<Built, ExecError> {
    let data = &cx.inputs.a;
    let n = data.len();
    let dev = cx.output(n)?;
    let mut checked = Vec::new();
    match direction {
        Direction::H2d => {
            cx.backend.host_data(host)?.copy_from_slice(data);
            checked.push((Place::Device(dev), n));
        }
        Direction::D2h => {
            cx.backend.upload(dev, data)?;
            checked.push((Place::Host(host), n));
        }
    }
    let transfer = crate::backend::Transfer {
        host,
        buffer: dev,
        direction,
        len: n,
    };
    let step = match cx.kernel {
        None => Step::Transfer(transfer),
        Some(kernel) => {
            let x = cx.upload(data)?;
            let y = cx.output(n)?;
            checked.push((Place::Device(y), n));
            Step::Beside {
                transfer,
                kernel,
                shape: cx.side.shape,
                args: vec![Arg::Buffer(x), Arg::Buffer(y), Arg::U32(n as u32)],
                concurrent: cx.variant.name == "overlap-concurrent",
            }
        }
    };
    Ok(Built {
        steps: vec![step],
        outputs: Vec::new(),
        result: (dev, 0),
        hosts: vec![host],
        checked,
    })
}

pub struct Transfer;

impl Family for Transfer {
    fn spec(&self) -> &FamilySpec {
        const SPEC: FamilySpec = FamilySpec {
            quick_size: Some(QuickSize::same("2^16")),
            variants: &VARIANTS,
            test_sizes: &vectors([1, 4099]),
            ..FamilySpec::new(FamilyId::Transfer, "peak", Metric::Bandwidth)
        };
        &SPEC
    }

    /// Bytes moved by one run: the transfer, plus the copy kernel's read and write beside it.
    fn work(&self, variant: &str, size: Size, _global: u64) -> (u64, u64) {
        let copies = if variant.starts_with("overlap") { 3 } else { 1 };
        (mul(mul(size.rows, 4), copies), 0)
    }

    /// Pinned or pageable host buffers beside the device copy.
    fn footprint(&self, size: Size) -> Footprint {
        plain(size.rows, size.rows, 0, mul(size.rows, 8))
    }

    /// One copy of `N` floats, for the variants without a kernel beside it.
    fn plain_calls(&self, variant: &Variant, size: Size) -> Option<PlainCalls> {
        if !variant.kernel.is_empty() {
            return None;
        }
        let (direction, memory) = kind(variant.name);
        Some(PlainCalls::Copy {
            direction,
            memory,
            len: usize::try_from(size.rows).ok()?,
        })
    }

    /// The data to move; each result is checked against it in place (see `Built::checked`).
    fn inputs(&self, _: &'static Variant, size: Size, seed: u64, _: InputChoice<'_>) -> Inputs {
        let a = reference::random_vector(size.rows as usize, seed);
        Inputs::new(size, a, Vec::new())
    }

    fn build(&self, cx: &mut Build<'_>) -> Result<Built, ExecError> {
        let (direction, memory) = kind(cx.variant.name);
        let host = cx.backend.alloc_host(cx.inputs.a.len(), memory)?;
        // The runner frees the device buffers of a failed build; the host buffer is freed here.
        stage(cx, host, direction).inspect_err(|_| {
            let _ = cx.backend.free_host(host);
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::fake::{FakeBackend, FakeScript};
    use crate::backend::LaunchShape;
    use crate::families::exec::{self, Inputs};
    use crate::families::find_variant;
    use crate::families::reference::Verification;
    use crate::kernels::KernelSources;
    use crate::rows::Api;
    use crate::rows::FamilyId;

    fn run_variant(name: &str, wrong: bool) -> Verification {
        let script = FakeScript {
            wrong_results: if wrong {
                vec!["peak_copy".into()]
            } else {
                vec![]
            },
            ..FakeScript::default()
        };
        let mut b = FakeBackend::new(Api::Cuda, script, crate::families::emulator());
        let v = find_variant(FamilyId::Transfer, name).unwrap();
        let inputs = Inputs::generate(FamilyId::Transfer, Size::vector(1000), 3);
        let side = crate::families::tests::side(LaunchShape::linear(4, 64));
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
        let work = |variant| Transfer.work(variant, Size::vector(10), 0);
        assert_eq!(work("h2d-pinned"), (40, 0));
        assert_eq!(work("overlap-serial"), (120, 0));
    }
}
