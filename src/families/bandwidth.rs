//! Peak bandwidth: a read kernel, a copy kernel and the API's own copy command
//! (`kernels_*/peak.*`, shared with the flops and launch families).

use crate::backend::fake::FakeLaunch;
use crate::backend::{self, Arg};
use crate::families::emulation::strided_sums;
use crate::families::family::{vectors, Family, FamilySpec, MemoryReferences, QuickSize, VendorOp};
use crate::families::footprint::{mul, plain, Footprint};
use crate::families::plan::{Build, Built, ExecError, Inputs, Ran, Step};
use crate::families::reference::Verification;
use crate::families::variant::GroupRule::*;
use crate::families::variant::{bare, Variant};
use crate::rows::{FamilyId, Metric, Size};

const VARIANTS: [Variant; 3] = [
    bare(
        FamilyId::Bandwidth,
        "read",
        "peak_read",
        PerComputeUnit(16),
        "coalesced float4 read of the whole array",
    ),
    bare(
        FamilyId::Bandwidth,
        "copy-kernel",
        "peak_copy",
        PerComputeUnit(16),
        "float4 copy kernel (bytes read + written)",
    ),
    bare(
        FamilyId::Bandwidth,
        "copy",
        "",
        Fixed(1),
        "the API's device-to-device copy (clEnqueueCopyBuffer / cuMemcpyDtoD)",
    ),
];

pub struct Bandwidth;

/// `peak_read(x, sums, n)`: one partial sum per work-item.
fn emulate_read(l: &mut FakeLaunch<'_>) -> backend::Result<()> {
    let items = l.shape.global() as usize;
    let sums = strided_sums(l.read(0)?, l.count(2)?, items);
    l.write(1, sums)
}

/// `peak_copy(x, y, n)`: the first `n` floats copied.
fn emulate_copy(l: &mut FakeLaunch<'_>) -> backend::Result<()> {
    let x = l.read(0)?;
    let copy = x[..l.count(2)?.min(x.len())].to_vec();
    l.write(1, copy)
}

impl Family for Bandwidth {
    fn spec(&self) -> &FamilySpec {
        const SPEC: FamilySpec = FamilySpec {
            measures_peak: true,
            memory_references: Some(MemoryReferences {
                read: "read",
                copy: "copy",
            }),
            vendor_ops: &[VendorOp {
                name: "copy",
                variant: Some("read"),
            }],
            quick_size: Some(QuickSize::same("2^22")),
            variants: &VARIANTS,
            test_sizes: &vectors([1, 997, 4096, 100_003]),
            emulations: &[("peak_read", emulate_read), ("peak_copy", emulate_copy)],
            ..FamilySpec::new(FamilyId::Bandwidth, "peak", Metric::Bandwidth)
        };
        &SPEC
    }

    fn work(&self, variant: &str, size: Size, _global: u64) -> (u64, u64) {
        let n = size.rows;
        match variant {
            "read" => (mul(n, 4), n),
            _ => (mul(mul(2, n), 4), 0),
        }
    }

    fn footprint(&self, size: Size) -> Footprint {
        plain(size.rows, size.rows, 0, 0).with_largest(size.rows)
    }

    fn build(&self, cx: &mut Build<'_>) -> Result<Built, ExecError> {
        let inputs = cx.inputs;
        let n = inputs.size.rows as usize;
        if cx.kernel.is_none() {
            // The API's own copy command.
            let (src, dst) = (cx.upload(&inputs.a)?, cx.output(n)?);
            let copy = Step::Copy { src, dst, len: n };
            return Ok(Built::into(vec![copy], dst, n));
        }
        // The read kernel leaves one partial sum per work-item.
        let len = if cx.variant.name == "read" {
            cx.side.shape.global() as usize
        } else {
            n
        };
        cx.in_out(len, &[Arg::U32(n as u32)])
    }

    fn check(&self, ran: &Ran, inputs: &Inputs, got: &[f32]) -> Verification {
        if ran.variant == "read" {
            inputs.check_total(got)
        } else {
            // A copy is exact.
            inputs.check_copy(got)
        }
    }
}
