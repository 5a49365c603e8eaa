//! Prefix sum (Scan in Fang, Varbanescu and Sips, "A Comprehensive Performance Comparison of
//! CUDA and OpenCL", ICPP 2011, Table II): the inclusive scan `out[i] = in[0] + ... + in[i]`
//! of `N` unsigned 32-bit integers. The kernels are `kernels_*/scan.*`.
//!
//! One variant, `blelloch`, work-efficient in three phases (Blelloch 1990; Harris, Sengupta
//! and Owens, GPU Gems 3, ch. 39): `scan_blocks` scans each work-group's `2 * WG_SIZE`
//! elements in local memory (up- and down-sweep) and writes the block's total; the totals are
//! scanned the same way, level after level, until one work-group holds them all; `scan_add`,
//! from the top level down, adds to every block the scanned total of the blocks before it.
//!
//! The result is exact, carried bit for bit, and checked element by element against a
//! wrapping u32 scan on the host (inputs below 8 keep the sums far below 2^32 up to 2^28
//! elements). Metric: GB/s of one read and one write of the array (8 bytes per element), as a
//! library scan is quoted; the block totals are not counted.

use crate::backend::fake::FakeLaunch;
use crate::backend::{self, Arg, BufferId, KernelId, LaunchShape};
use crate::families::emulation::{floats, wg_size, words};
use crate::families::error::WorkloadError;
use crate::families::family::{check_cover, vectors, Family, FamilySpec, InputChoice, VendorOp};
use crate::families::footprint::{mul, plain, Footprint};
use crate::families::plan::{Build, Built, ExecError, Inputs, SideConfig, Step};
use crate::families::reference;
use crate::families::variant::{bare, pow2, GroupRule, Variant};
use crate::rows::{FamilyId, Metric, Size};

const ID: FamilyId = FamilyId::new("scan");

/// Elements each work-item of `scan_blocks` and `scan_add` handles.
pub const PER_ITEM: u32 = 2;

/// Input values lie in `0..VALUE_RANGE`.
const VALUE_RANGE: u32 = 8;

const VARIANTS: [Variant; 1] = [pow2(
    bare(
        ID,
        "blelloch",
        "scan_blocks",
        GroupRule::Cover { per_item: PER_ITEM },
        "work-efficient: per-work-group up-/down-sweep in local memory, the block totals \
             scanned the same way, then added back",
    ),
    1,
    1024,
)];

/// The inclusive scan of `x` in u32 arithmetic (wrapping, as the kernels' adds do).
pub fn inclusive_scan(x: &[u32]) -> Vec<u32> {
    let mut total = 0u32;
    x.iter()
        .map(|v| {
            total = total.wrapping_add(*v);
            total
        })
        .collect()
}

/// Each level's element count: the input, its block totals, theirs..., until one fits `block`.
pub fn levels(n: u64, block: u64) -> Vec<u64> {
    let mut out = vec![n.max(1)];
    while let Some(&last) = out.last() {
        if last <= block {
            break;
        }
        out.push(last.div_ceil(block));
    }
    out
}

pub struct Scan;

/// The launches of one multi-level scan of `n` words, over buffers allocated once: the scan
/// family's whole run, and the scan of the digit counts in each pass of the radix sort.
pub struct ScanLevels {
    launches: Vec<(KernelId, LaunchShape, Vec<Arg>)>,
    /// Each level's scanned output, its length and its work-groups; the first is the result.
    outs: Vec<(BufferId, u64, u32)>,
}

impl ScanLevels {
    /// Plans the scan of the first `n` words of `input` in work-groups of the configured
    /// size, the first level in `first_groups` of them (`None`: as many as cover `n`); the
    /// program must hold `scan_blocks` and `scan_add` (`kernels_*/scan.*`).
    pub fn plan(
        cx: &mut Build<'_>,
        input: BufferId,
        n: u64,
        first_groups: Option<u32>,
    ) -> Result<ScanLevels, ExecError> {
        let program = cx.program()?;
        let blocks = cx.backend.kernel(program, "scan_blocks")?;
        let add = cx.backend.kernel(program, "scan_add")?;
        let local = cx.side.shape.local;
        let block = u64::from(local) * u64::from(PER_ITEM);
        // Level l scans `sizes[l]` elements of `ins[l]` into `outs[l]`; its block totals are
        // level l + 1's input.
        let sizes = levels(n, block);
        let mut ins = vec![input];
        let mut outs = Vec::new();
        let mut launches = Vec::new();
        for (l, &n) in sizes.iter().enumerate() {
            let groups = match first_groups {
                Some(groups) if l == 0 => groups,
                _ => n.div_ceil(block) as u32,
            };
            let out = cx.output(n as usize)?;
            let totals = cx.output(groups as usize)?;
            launches.push((
                blocks,
                LaunchShape::linear(groups, local),
                vec![
                    Arg::Buffer(ins[l]),
                    Arg::Buffer(out),
                    Arg::Buffer(totals),
                    Arg::U32(n as u32),
                ],
            ));
            ins.push(totals);
            outs.push((out, n, groups));
        }
        // From the top down: level l's blocks add level l + 1's scanned totals.
        for l in (0..outs.len() - 1).rev() {
            let (out, n, groups) = outs[l];
            launches.push((
                add,
                LaunchShape::linear(groups, local),
                vec![
                    Arg::Buffer(out),
                    Arg::Buffer(outs[l + 1].0),
                    Arg::U32(n as u32),
                ],
            ));
        }
        Ok(ScanLevels { launches, outs })
    }

    /// The steps of one scan, in order (fresh each call, for a run that scans more than once).
    pub fn steps(&self) -> impl Iterator<Item = Step> + '_ {
        self.launches
            .iter()
            .map(|(kernel, shape, args)| Step::Kernel {
                kernel: *kernel,
                shape: *shape,
                args: args.clone(),
            })
    }

    pub fn result(&self) -> BufferId {
        self.outs[0].0
    }

    pub fn outputs(&self) -> Vec<(BufferId, usize)> {
        self.outs
            .iter()
            .map(|(b, n, _)| (*b, *n as usize))
            .collect()
    }
}

/// `scan_blocks(in, out, totals, n)`: each work-group's block scanned, and its total.
fn emulate_blocks(l: &mut FakeLaunch<'_>) -> backend::Result<()> {
    let block = PER_ITEM as usize * wg_size(l);
    let input = words(l.read(0)?);
    let n = l.count(3)?.min(input.len());
    let (mut out, mut totals) = (Vec::with_capacity(n), Vec::new());
    for group in 0..l.shape.groups as usize {
        let start = (group * block).min(n);
        let scanned = inclusive_scan(&input[start..(start + block).min(n)]);
        totals.push(scanned.last().copied().unwrap_or(0));
        out.extend(scanned);
    }
    l.write(1, floats(out))?;
    l.write(2, floats(totals))
}

/// `scan_add(out, scanned, n)`: block `g > 0` adds the scanned total of the blocks before it.
fn emulate_add(l: &mut FakeLaunch<'_>) -> backend::Result<()> {
    let block = PER_ITEM as usize * wg_size(l);
    let (mut out, scanned) = (words(l.read(0)?), words(l.read(1)?));
    let n = l.count(2)?.min(out.len());
    for group in 1..l.shape.groups as usize {
        let start = group * block;
        if start >= n {
            break;
        }
        for w in &mut out[start..(start + block).min(n)] {
            *w = w.wrapping_add(scanned[group - 1]);
        }
    }
    l.write(0, floats(out))
}

impl Family for Scan {
    fn spec(&self) -> &FamilySpec {
        const SPEC: FamilySpec = FamilySpec {
            vendor_ops: &[VendorOp {
                name: "cumsum",
                variant: None,
            }],
            variants: &VARIANTS,
            // One and two elements, one block (at work-group 32: 64 elements) and one more, sizes
            // no block divides, and one with three levels of block totals at small work-groups.
            test_sizes: &vectors([1, 2, 64, 65, 1000, 131_075]),
            emulations: &[("scan_blocks", emulate_blocks), ("scan_add", emulate_add)],
            ..FamilySpec::new(ID, "scan", Metric::Bandwidth)
        };
        &SPEC
    }

    fn work(&self, _variant: &str, size: Size, _global: u64) -> (u64, u64) {
        (mul(size.rows, 8), size.rows)
    }

    /// The input, the result and the block totals (under a third of the input at any block).
    fn footprint(&self, size: Size) -> Footprint {
        let n = size.rows;
        plain(n, n.saturating_add(n / 2), n, mul(n, 4))
    }

    /// The first level must cover every element: each work-group scans `2 * local` of them.
    fn check_launch(
        &self,
        variant: &Variant,
        size: Size,
        side: &SideConfig,
    ) -> Result<(), WorkloadError> {
        check_cover(variant, side.shape, PER_ITEM, size.rows, |covered| {
            format!("scan {covered} elements, fewer than {}", size.rows)
        })
    }

    fn inputs(&self, _: &'static Variant, size: Size, seed: u64, _: InputChoice<'_>) -> Inputs {
        let x = reference::hashed(size.rows as usize, seed, 0x7363_616e, |_, h| {
            (h % u64::from(VALUE_RANGE)) as u32
        });
        let want = inclusive_scan(&x);
        Inputs::new(size, Vec::new(), Vec::new())
            .with_ints(vec![x])
            .with_words(want)
    }

    fn build(&self, cx: &mut Build<'_>) -> Result<Built, ExecError> {
        let input = cx.upload_u32(&cx.inputs.ints[0])?;
        let n = cx.inputs.size.rows;
        let levels = ScanLevels::plan(cx, input, n, Some(cx.side.shape.groups))?;
        let mut built = Built::into(levels.steps().collect(), levels.result(), n as usize);
        built.outputs = levels.outputs();
        Ok(built)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::tests::no_matrix;
    use crate::families::tests::side;

    #[test]
    fn the_reference_is_inclusive_and_wraps() {
        assert_eq!(inclusive_scan(&[1, 2, 3, 0]), vec![1, 3, 6, 6]);
        assert_eq!(inclusive_scan(&[u32::MAX, 2]), vec![u32::MAX, 1]);
        assert!(inclusive_scan(&[]).is_empty());
    }

    #[test]
    fn levels_shrink_to_one_work_group() {
        assert_eq!(levels(1, 64), vec![1]);
        assert_eq!(levels(64, 64), vec![64]);
        assert_eq!(levels(65, 64), vec![65, 2]);
        assert_eq!(levels(131_075, 64), vec![131_075, 2049, 33]);
        assert_eq!(levels(1 << 24, 512), vec![1 << 24, 32_768, 64]);
    }

    #[test]
    fn inputs_are_small_and_the_reference_exact() {
        let inputs = Scan.inputs(&VARIANTS[0], Size::vector(1000), 7, no_matrix());
        let x = &inputs.ints[0];
        assert!(x.iter().all(|v| *v < VALUE_RANGE) && x.iter().any(|v| *v > 0));
        let last: u64 = x.iter().map(|v| u64::from(*v)).sum();
        assert_eq!(inputs.reference.last().copied(), Some(last as f64));
    }

    #[test]
    fn a_first_level_that_leaves_elements_out_is_refused() {
        let side = |groups| side(LaunchShape::linear(groups, 32));
        let size = Size::vector(1000);
        assert!(Scan.check_launch(&VARIANTS[0], size, &side(15)).is_err());
        assert!(Scan.check_launch(&VARIANTS[0], size, &side(16)).is_ok());
    }
}
