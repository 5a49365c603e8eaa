//! Sorting network (STNW in Fang, Varbanescu & Sips 2011, Table II, from NVIDIA's SDK sample
//! sortingNetworks): bitonic sort of `N` unsigned 32-bit keys, ascending (`kernels_*/bitonic.*`).
//!
//! One variant, `bitonic`. The network sorts `P` keys, the power of two at or above `N` and
//! at least one block of `2 * local` keys; the keys past `N` read as `u32::MAX` and end up past
//! the real ones. One run: `bitonic_local` sorts each block in local memory (alternately
//! ascending and descending) from the input into the work array; then for every later stage
//! `k` (2 blocks .. `P`), `bitonic_global` once per step `j >= block` (one work-item per pair)
//! and `bitonic_local` for the steps `j < block`, in place. The input is never written, so
//! every timed run sorts the same random keys ([`keys`]).

use crate::backend::fake::FakeLaunch;
use crate::backend::{self, Arg, LaunchShape};
use crate::families::emulation::{floats, wg_size, words};
use crate::families::error::WorkloadError;
use crate::families::family::{bad_launch, Family, FamilySpec, InputChoice, QuickSize};
use crate::families::footprint::{mul, plain, Footprint};
use crate::families::keys;
use crate::families::plan::{Build, Built, ExecError, Inputs, SideConfig, Step};
use crate::families::variant::{bare, pow2, GroupRule, Variant};
use crate::rows::{FamilyId, Metric, Size};

const ID: FamilyId = FamilyId::new("bitonic");

const VARIANTS: [Variant; 1] = [pow2(
    bare(
        ID,
        "bitonic",
        "bitonic_local",
        GroupRule::Grid,
        "bitonic network: blocks of 2 x local keys sorted in local memory, then each \
             stage's wide steps over global memory and its narrow steps in local memory",
    ),
    1,
    1024,
)];

/// The keys the network sorts: the power of two at or above `n`, one block at least (2^63
/// for a count past it, which `check_size` refuses before anything runs).
pub fn padded(n: u64, block: u64) -> u64 {
    n.max(1)
        .checked_next_power_of_two()
        .unwrap_or(1 << 63)
        .max(block)
}

/// The launches of one sort after the first (`bitonic_local` over every block) as
/// `(k, j)` steps: `j == 0` stands for `bitonic_local` merging stage `k` within blocks.
pub fn merge_steps(padded: u64, block: u64) -> Vec<(u64, u64)> {
    let mut steps = Vec::new();
    let mut k = 2 * block;
    while k <= padded {
        let mut j = k / 2;
        while j >= block {
            steps.push((k, j));
            j /= 2;
        }
        steps.push((k, 0));
        k *= 2;
    }
    steps
}

/// One compare-exchange step `(k, j)` of the network over `keys`, whose first index is
/// `base` in the whole array (the kernels' arithmetic, on the host).
fn network_step(keys: &mut [u32], base: usize, k: usize, j: usize) {
    for i in 0..keys.len() {
        if i & j != 0 || i + j >= keys.len() {
            continue;
        }
        let ascending = (base + i) & k == 0;
        if (keys[i] > keys[i + j]) == ascending {
            keys.swap(i, i + j);
        }
    }
}

/// `bitonic_local(in, out, n, k_merge)` on the host, block by block.
fn emulate_local(l: &mut FakeLaunch<'_>) -> backend::Result<()> {
    let block = 2 * wg_size(l);
    let input = words(l.read(0)?);
    let (n, k_merge) = (l.count(2)?, l.count(3)?);
    let mut out = Vec::with_capacity(block * l.shape.groups as usize);
    for group in 0..l.shape.groups as usize {
        let base = group * block;
        let mut keys: Vec<u32> = (base..base + block)
            .map(|i| if i < n { input[i] } else { u32::MAX })
            .collect();
        let stages = if k_merge == 0 {
            (1..=block.trailing_zeros()).map(|s| 1usize << s).collect()
        } else {
            vec![k_merge]
        };
        for k in stages {
            let mut j = k.min(block) / 2;
            while j > 0 {
                network_step(&mut keys, base, k, j);
                j /= 2;
            }
        }
        out.extend(keys);
    }
    l.write(1, floats(out))
}

/// `bitonic_global(data, k, j)` on the host.
fn emulate_global(l: &mut FakeLaunch<'_>) -> backend::Result<()> {
    let mut keys = words(l.read(0)?);
    let pairs = l.shape.global() as usize;
    let len = (2 * pairs).min(keys.len());
    network_step(&mut keys[..len], 0, l.count(1)?, l.count(2)?);
    l.write(0, floats(keys))
}

pub struct Bitonic;

impl Family for Bitonic {
    fn spec(&self) -> &FamilySpec {
        const SPEC: FamilySpec = FamilySpec {
            quick_size: Some(QuickSize::same("2^20")),
            variants: &VARIANTS,
            test_sizes: keys::TEST_SIZES,
            emulations: &[
                ("bitonic_local", emulate_local),
                ("bitonic_global", emulate_global),
            ],
            ..FamilySpec::new(ID, "bitonic", Metric::Bandwidth)
        };
        &SPEC
    }

    fn work(&self, _variant: &str, size: Size, _global: u64) -> (u64, u64) {
        (mul(size.rows, 8), 0)
    }

    /// The keys and the work array, padded to at most twice the keys (or one block).
    fn footprint(&self, size: Size) -> Footprint {
        let n = size.rows;
        plain(n, mul(n, 2).max(2048), n, 0)
    }

    /// One work-item per pair of the padded array.
    fn groups(&self, _variant: &Variant, size: Size, local: u32) -> u64 {
        let block = 2 * u64::from(local.max(1));
        padded(size.rows, block) / block
    }

    /// The network has one shape: a work-group per block of the padded array.
    fn check_launch(
        &self,
        variant: &Variant,
        size: Size,
        side: &SideConfig,
    ) -> Result<(), WorkloadError> {
        let shape = side.shape;
        let want = self.groups(variant, size, shape.local);
        if u64::from(shape.groups) != want {
            return Err(bad_launch(
                variant,
                format!(
                    "{} work-groups of {}: the network over {} keys takes exactly {want}, \
                     one per block of {} keys",
                    shape.groups,
                    shape.local,
                    padded(size.rows, 2 * u64::from(shape.local)),
                    2 * shape.local
                ),
            ));
        }
        Ok(())
    }

    fn inputs(&self, _: &'static Variant, size: Size, seed: u64, _: InputChoice<'_>) -> Inputs {
        keys::sorting_inputs(size, seed)
    }

    fn build(&self, cx: &mut Build<'_>) -> Result<Built, ExecError> {
        let local_kernel = cx.kernel()?;
        let program = cx.program()?;
        let global_kernel = cx.backend.kernel(program, "bitonic_global")?;
        let shape = cx.side.shape;
        let n = cx.inputs.size.rows;
        let block = 2 * u64::from(shape.local);
        let padded = padded(n, block);
        let input = cx.upload_u32(&cx.inputs.ints[0])?;
        let work = cx.output(padded as usize)?;
        let local = |from, count: u64, k: u64| {
            let [count, k] = [count, k].map(|c| Arg::U32(c as u32));
            cx.launch(
                local_kernel,
                vec![Arg::Buffer(from), Arg::Buffer(work), count, k],
            )
        };
        let mut steps = vec![local(input, n, 0)];
        let pairs = LaunchShape::linear((padded / 2 / u64::from(shape.local)) as u32, shape.local);
        for (k, j) in merge_steps(padded, block) {
            steps.push(if j == 0 {
                local(work, padded, k)
            } else {
                Step::Kernel {
                    kernel: global_kernel,
                    shape: pairs,
                    args: vec![Arg::Buffer(work), Arg::U32(k as u32), Arg::U32(j as u32)],
                }
            });
        }
        let mut built = Built::into(steps, work, n as usize);
        built.outputs = vec![(work, padded as usize)];
        Ok(built)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::tests::side;

    #[test]
    fn padding_reaches_a_power_of_two_and_one_block() {
        assert_eq!(padded(1, 64), 64);
        assert_eq!(padded(64, 64), 64);
        assert_eq!(padded(65, 64), 128);
        assert_eq!(padded(70_001, 512), 131_072);
    }

    #[test]
    fn every_stage_past_a_block_merges_wide_then_narrow() {
        assert!(merge_steps(64, 64).is_empty());
        assert_eq!(merge_steps(128, 64), vec![(128, 64), (128, 0)]);
        assert_eq!(
            merge_steps(256, 64),
            vec![(128, 64), (128, 0), (256, 128), (256, 64), (256, 0)]
        );
    }

    /// The host network, run as the kernels run it, sorts: the emulation is the algorithm.
    #[test]
    fn the_network_sorts_on_the_host() {
        let n = 1000usize;
        let block = 64usize;
        let keys = keys::random_keys(n, 9);
        let p = padded(n as u64, block as u64) as usize;
        let mut all: Vec<u32> = (0..p)
            .map(|i| keys.get(i).copied().unwrap_or(u32::MAX))
            .collect();
        let mut k = 2;
        while k <= p {
            let mut j = k / 2;
            while j > 0 {
                network_step(&mut all, 0, k, j);
                j /= 2;
            }
            k *= 2;
        }
        let mut want = keys.clone();
        want.sort_unstable();
        assert_eq!(&all[..n], &want[..]);
    }

    #[test]
    fn a_launch_of_other_than_one_group_per_block_is_refused() {
        let side = |groups| side(LaunchShape::linear(groups, 32));
        let size = Size::vector(1000);
        assert!(Bitonic.check_launch(&VARIANTS[0], size, &side(15)).is_err());
        assert!(Bitonic.check_launch(&VARIANTS[0], size, &side(16)).is_ok());
        assert!(Bitonic.check_launch(&VARIANTS[0], size, &side(17)).is_err());
    }
}
