//! Radix sort (RdxS in Fang, Varbanescu & Sips 2011, Table II): `N` unsigned 32-bit keys
//! sorted ascending, least significant digit first, [`RADIX_BITS`] bits per pass. The kernels
//! are in `kernels_*/scan.*`, beside the scan whose kernels count the digits' offsets.
//!
//! One variant, `lsd`; each of the [`PASSES`] passes: `radix_histogram` counts each
//! work-group's keys per digit (digit-major); the scan family's [`ScanLevels`] scans the
//! counts, so each (digit, work-group) slot learns how many keys precede it; `radix_scatter`
//! puts each key in its slot after its digit's earlier keys of its work-group (stable).
//! The passes go from the input to one work array and then back and forth between two, so
//! the input is never written and every timed run sorts the same random keys ([`keys`]).

use crate::backend::fake::FakeLaunch;
use crate::backend::{self, Arg};
use crate::families::emulation::{floats, wg_size, words};
use crate::families::error::WorkloadError;
use crate::families::family::{check_cover, Family, FamilySpec, InputChoice, QuickSize};
use crate::families::footprint::{mul, plain, Footprint};
use crate::families::keys;
use crate::families::plan::{Build, Built, ExecError, Inputs, SideConfig};
use crate::families::scan::ScanLevels;
use crate::families::variant::{bare, pow2, GroupRule, Variant};
use crate::rows::{FamilyId, Metric, Size};

const ID: FamilyId = FamilyId::new("radix");

/// Bits of the key each pass sorts by (the kernels' `RADIX_BITS`).
pub const RADIX_BITS: u32 = 4;

/// Digits of one pass.
pub const RADIX: usize = 1 << RADIX_BITS;

/// Passes over 32-bit keys.
pub const PASSES: u32 = 32 / RADIX_BITS;

const VARIANTS: [Variant; 1] = [pow2(
    bare(
        ID,
        "lsd",
        "radix_scatter",
        GroupRule::Cover { per_item: 1 },
        "least significant digit first, 4 bits a pass: per-work-group digit counts, their \
             scan, a stable scatter",
    ),
    RADIX as u32,
    1024,
)];

/// The digit of `key` in the pass that shifts it by `shift`.
fn digit(key: u32, shift: usize) -> usize {
    (key >> shift) as usize & (RADIX - 1)
}

/// `radix_histogram(keys, counts, n, shift)`: per work-group counts, digit-major.
fn emulate_histogram(l: &mut FakeLaunch<'_>) -> backend::Result<()> {
    let (local, groups) = (wg_size(l), l.shape.groups as usize);
    let keys = words(l.read(0)?);
    let (n, shift) = (l.count(2)?.min(keys.len()), l.count(3)?);
    let mut counts = vec![0u32; RADIX * groups];
    for (i, key) in keys[..n].iter().enumerate() {
        counts[digit(*key, shift) * groups + i / local] += 1;
    }
    l.write(1, floats(counts))
}

/// `radix_scatter(keys, out, counts, offsets, n, shift)`: every key to its slot, stably.
fn emulate_scatter(l: &mut FakeLaunch<'_>) -> backend::Result<()> {
    let (local, groups) = (wg_size(l), l.shape.groups as usize);
    let keys = words(l.read(0)?);
    let mut out = words(l.read(1)?);
    let (counts, offsets) = (words(l.read(2)?), words(l.read(3)?));
    let (n, shift) = (l.count(4)?.min(keys.len()), l.count(5)?);
    for (group, chunk) in keys[..n].chunks(local).enumerate() {
        let mut rank = [0u32; RADIX];
        for key in chunk {
            let slot = digit(*key, shift) * groups + group;
            out[(offsets[slot] - counts[slot] + rank[digit(*key, shift)]) as usize] = *key;
            rank[digit(*key, shift)] += 1;
        }
    }
    l.write(1, floats(out))
}

pub struct Radix;

impl Family for Radix {
    fn spec(&self) -> &FamilySpec {
        const SPEC: FamilySpec = FamilySpec {
            quick_size: Some(QuickSize::same("2^20")),
            variants: &VARIANTS,
            test_sizes: keys::TEST_SIZES,
            emulations: &[
                ("radix_histogram", emulate_histogram),
                ("radix_scatter", emulate_scatter),
            ],
            ..FamilySpec::new(ID, "scan", Metric::Bandwidth)
        };
        &SPEC
    }

    fn work(&self, _variant: &str, size: Size, _global: u64) -> (u64, u64) {
        (mul(size.rows, 8), 0)
    }

    /// The keys, two work arrays, and the counts and their scan (a sixteenth of the keys
    /// each at the smallest work-group, 16).
    fn footprint(&self, size: Size) -> Footprint {
        let n = size.rows;
        plain(n, mul(n, 3), n, 0)
    }

    /// Every key needs a work-item: the counts are laid out per launched work-group.
    fn check_launch(
        &self,
        variant: &Variant,
        size: Size,
        side: &SideConfig,
    ) -> Result<(), WorkloadError> {
        check_cover(variant, side.shape, 1, size.rows, |covered| {
            format!("hold {covered} keys, fewer than {}", size.rows)
        })
    }

    fn inputs(&self, _: &'static Variant, size: Size, seed: u64, _: InputChoice<'_>) -> Inputs {
        keys::sorting_inputs(size, seed)
    }

    fn build(&self, cx: &mut Build<'_>) -> Result<Built, ExecError> {
        let scatter = cx.kernel()?;
        let program = cx.program()?;
        let histogram = cx.backend.kernel(program, "radix_histogram")?;
        let n = cx.inputs.size.rows;
        let groups = cx.side.shape.groups;
        let input = cx.upload_u32(&cx.inputs.ints[0])?;
        let work = [cx.output(n as usize)?, cx.output(n as usize)?];
        let counts = cx.output(RADIX * groups as usize)?;
        let scan = ScanLevels::plan(cx, counts, RADIX as u64 * u64::from(groups), None)?;
        let mut steps = Vec::new();
        let mut from = input;
        let (count_arg, offsets) = (Arg::Buffer(counts), Arg::Buffer(scan.result()));
        for pass in 0..PASSES {
            let shift = Arg::U32(pass * RADIX_BITS);
            let to = work[pass as usize % 2];
            let (n, keys) = (Arg::U32(n as u32), Arg::Buffer(from));
            steps.push(cx.launch(histogram, vec![keys, count_arg, n, shift]));
            steps.extend(scan.steps());
            let args = vec![keys, Arg::Buffer(to), count_arg, offsets, n, shift];
            steps.push(cx.launch(scatter, args));
            from = to;
        }
        let mut built = Built::into(steps, from, n as usize);
        built
            .outputs
            .extend([(work[0], n as usize), (counts, RADIX * groups as usize)]);
        built.outputs.extend(scan.outputs());
        Ok(built)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eight_passes_of_four_bits_cover_a_key() {
        assert_eq!(PASSES * RADIX_BITS, 32);
        assert_eq!(digit(0xabcd_1234, 0), 4);
        assert_eq!(digit(0xabcd_1234, 28), 0xa);
    }
}
