//! Launch overhead: an empty kernel, launched once or `N` times back to back (`kernels_*/peak.*`).

use crate::backend::fake::FakeLaunch;
use crate::backend::{self, Arg};
use crate::families::family::{Family, FamilySpec, InputChoice, PlainCalls};
use crate::families::footprint::{plain, Footprint};
use crate::families::plan::{Build, Built, ExecError, Inputs, Step};
use crate::families::variant::GroupRule::*;
use crate::families::variant::{bare, Variant};
use crate::rows::{FamilyId, Metric, Size};

const fn empty(name: &'static str, about: &'static str) -> Variant {
    bare(FamilyId::Launch, name, "launch_empty", Fixed(1), about)
}

const VARIANTS: [Variant; 2] = [
    empty("empty", "1 x 1 launch of a kernel that stores one value"),
    empty(
        "back-to-back",
        "N launches of the empty kernel (N = size), one wait: time per launch",
    ),
];

pub struct Launch;

/// `launch_empty(x, out, count)`: the count, stored once.
fn emulate_empty(l: &mut FakeLaunch<'_>) -> backend::Result<()> {
    let count = l.count(2)? as f32;
    l.write(1, vec![count])
}

impl Family for Launch {
    fn spec(&self) -> &FamilySpec {
        const SPEC: FamilySpec = FamilySpec {
            default_size: "1",
            // One work-item: the kernel does nothing.
            default_local: Some(1),
            variants: &VARIANTS,
            test_sizes: &[Size::vector(7)],
            emulations: &[("launch_empty", emulate_empty)],
            always_runtime_bound: true,
            ..FamilySpec::new(FamilyId::Launch, "peak", Metric::Rate)
        };
        &SPEC
    }

    fn work(&self, _variant: &str, _size: Size, _global: u64) -> (u64, u64) {
        (4, 0)
    }

    fn footprint(&self, _size: Size) -> Footprint {
        plain(1, 1, 1, 0)
    }

    /// Its launches, `N` to one wait back to back.
    fn plain_calls(&self, variant: &Variant, size: Size) -> Option<PlainCalls> {
        let batch = if variant.name == "back-to-back" {
            u32::try_from(size.rows).ok()?
        } else {
            1
        };
        Some(PlainCalls::Launches { batch })
    }

    /// `N` is the number of launches; the kernel counts them in one float.
    fn inputs(&self, _: &'static Variant, size: Size, _seed: u64, _: InputChoice<'_>) -> Inputs {
        Inputs::new(size, vec![0.0], Vec::new()).with_reference(vec![size.rows as f64], vec![0.0])
    }

    fn build(&self, cx: &mut Build<'_>) -> Result<Built, ExecError> {
        let k = cx.kernel()?;
        let inputs = cx.inputs;
        let n = inputs.size.rows as u32;
        let x = cx.upload(&inputs.a)?;
        let out = cx.output(1)?;
        let args = vec![Arg::Buffer(x), Arg::Buffer(out), Arg::U32(n)];
        let step = if cx.variant.name == "back-to-back" {
            Step::Repeated {
                kernel: k,
                shape: cx.side.shape,
                args,
                count: n,
            }
        } else {
            cx.launch(k, args)
        };
        Ok(Built::into(vec![step], out, 1))
    }
}
