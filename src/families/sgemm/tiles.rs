//! The SGEMM register-blocked kernel's tile knobs (`SG_BM`, `SG_BN`, `SG_BK`, `SG_TM`,
//! `SG_TN`): the launch they imply and the rules a tiling must satisfy before it runs. The
//! kernel (`kernels_*/sgemm.*`) refuses to compile where these rules fail; checking them here
//! keeps such points out of the search and counts them by name.

use crate::backend::DeviceInfo;
use crate::families::family::Tuning;
use crate::families::tune_space::{param as p, Config, Constraint, Knob, SpaceDef, SpaceKind};
use crate::rows::{FamilyId, Size};

/// The tiling rules, then a register ceiling only where the second stage takes one.
const SGEMM_JIT_RULES: &[Constraint] = &[
    Constraint::TileDividesMatrix,
    Constraint::VariantLocal,
    Constraint::DeviceLocal,
    Constraint::TileLoads,
    Constraint::LocalMemory,
    Constraint::SecondStage,
];
const SGEMM_RULES: &[Constraint] = SGEMM_JIT_RULES.split_at(5).0;
const BLOCKED: SpaceDef = SpaceDef::of(FamilyId::Sgemm, "blocked", SGEMM_RULES);
const BLOCKED_JIT: SpaceDef = SpaceDef::of(FamilyId::Sgemm, "blocked", SGEMM_JIT_RULES);

/// SGEMM's tunable spaces: the register-blocked kernel's tiles.
pub const SPACES: &[(SpaceKind, SpaceDef)] = &[
    // Two block tiles x two micro-tiles x two K-steps x unroll of the K loop: 16 points, of
    // which the 4 whose slices a group cannot load in whole float4 are refused; the 512
    // work-item tiling is in on purpose (NVIDIA's OpenCL refuses it at build time).
    BLOCKED.space(
        SpaceKind::Full,
        "blocked",
        "4096",
        &[
            p("tile_m", Knob::Define("SG_BM"), &[64, 128]),
            p("tile_n", Knob::Define("SG_BN"), &[128]),
            p("tile_k", Knob::Define("SG_BK"), &[8, 16]),
            p("item_m", Knob::Define("SG_TM"), &[4, 8]),
            p("item_n", Knob::Define("SG_TN"), &[8]),
            p("unroll.A", Knob::Unroll("A"), &[0, 2]),
        ],
    ),
    // At 2048 the waves decide: block tiles 64 or 128 each way (64 to 256 work-items of 8 x 8),
    // the K loop unrolled or not, and the register ceiling left to the drivers or capped at 128,
    // which fits twice the 128 x 128 work-groups on an SM (harness/experiments/sgemm-waves.toml):
    // 16 points, 8 programs a side; the capped half only where the second stage takes options.
    BLOCKED_JIT.space(
        SpaceKind::Full,
        "blocked-waves",
        "2048",
        &[
            p("tile_m", Knob::Define("SG_BM"), &[64, 128]),
            p("tile_n", Knob::Define("SG_BN"), &[64, 128]),
            p("tile_k", Knob::Define("SG_BK"), &[16]),
            p("item_m", Knob::Define("SG_TM"), &[8]),
            p("item_n", Knob::Define("SG_TN"), &[8]),
            p("unroll.A", Knob::Unroll("A"), &[0, 2]),
            p("registers", Knob::MaxRegisters, &[0, 128]),
        ],
    ),
    // Two tilings run, two are refused (tile-loads): 2 programs.
    BLOCKED.space(
        SpaceKind::Small,
        "blocked",
        "128",
        &[
            p("tile_m", Knob::Define("SG_BM"), &[64, 128]),
            p("tile_n", Knob::Define("SG_BN"), &[128]),
            p("tile_k", Knob::Define("SG_BK"), &[8]),
            p("item_m", Knob::Define("SG_TM"), &[4, 8]),
            p("item_n", Knob::Define("SG_TN"), &[8]),
        ],
    ),
];

/// The kernel's pad on the transposed A slice's rows (SG_PAD).
const PAD: u64 = 4;

/// One tiling, from a configuration's defines (the kernel's defaults for those it lacks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tiling {
    pub bm: u32,
    pub bn: u32,
    pub bk: u32,
    pub tm: u32,
    pub tn: u32,
}

impl Tiling {
    /// The kernel's defaults: the shipped 128 x 128 tile, K-step 8, 8 x 8 per work-item.
    pub fn of(c: &Config) -> Tiling {
        Tiling {
            bm: c.define("SG_BM").unwrap_or(128),
            bn: c.define("SG_BN").unwrap_or(128),
            bk: c.define("SG_BK").unwrap_or(8),
            tm: c.define("SG_TM").unwrap_or(8),
            tn: c.define("SG_TN").unwrap_or(8),
        }
    }

    /// Work-items per group: one per micro-tile of the block tile.
    pub fn local(self) -> u32 {
        (self.bm / self.tm.max(1)) * (self.bn / self.tn.max(1))
    }

    /// Local memory of the two staged slices: A transposed and padded, B as is.
    pub fn local_bytes(self) -> u64 {
        let (bm, bn, bk) = (u64::from(self.bm), u64::from(self.bn), u64::from(self.bk));
        4 * bk * (bm + PAD + bn)
    }

    /// The block tile divides N both ways (the kernel has no edge handling), and the micro-tile
    /// the block tile in runs of 4.
    pub fn divides(self, size: Size) -> bool {
        let n = size.rows;
        let (bm, bn) = (u64::from(self.bm), u64::from(self.bn));
        [self.bm, self.bn, self.tm, self.tn].iter().all(|v| *v > 0)
            && n.is_multiple_of(bm)
            && n.is_multiple_of(bn)
            && [self.tm, self.tn, self.bk]
                .iter()
                .all(|v| v.is_multiple_of(4))
            && self.bm.is_multiple_of(self.tm)
            && self.bn.is_multiple_of(self.tn)
    }

    /// Every work-item loads a whole number (at least one) of float4 of each K-step slice.
    pub fn loads_whole(self) -> bool {
        let l = self.local().max(1);
        let a = self.bm * self.bk / 4;
        let b = self.bk * self.bn / 4;
        a >= l && b >= l && a.is_multiple_of(l) && b.is_multiple_of(l)
    }
}

impl Tuning for super::Sgemm {
    fn spaces(&self) -> &'static [(SpaceKind, SpaceDef)] {
        SPACES
    }

    /// Fill in the work-group size and group count the tiling implies.
    fn derive_launch(&self, size: Size, c: &mut Config) {
        let t = Tiling::of(c);
        if c.local == 0 {
            c.local = t.local();
        }
        if c.groups == 0 {
            // One work-group per block tile of the N x N output.
            let n = size.rows;
            let tiles = (n / u64::from(t.bm.max(1))) * (n / u64::from(t.bn.max(1)));
            c.groups = u32::try_from(tiles).unwrap_or(u32::MAX);
        }
    }

    /// Whether `c` breaks one of the tiling's rules (the others are not SGEMM's); a device's
    /// unknown local memory passes.
    fn breaks_rule(&self, rule: Constraint, c: &Config, size: Size, device: &DeviceInfo) -> bool {
        let t = Tiling::of(c);
        match rule {
            Constraint::TileDividesMatrix => !t.divides(size),
            Constraint::TileLoads => !t.loads_whole(),
            Constraint::LocalMemory => {
                device.local_mem_bytes != 0 && t.local_bytes() > device.local_mem_bytes
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::sgemm::Sgemm;

    #[test]
    fn the_defaults_are_the_shipped_kernel() {
        let mut c = Config::with_defines(&[]);
        Sgemm.derive_launch(Size::vector(4096), &mut c);
        assert_eq!((c.local, c.groups), (256, 32 * 32));
        let t = Tiling::of(&c);
        assert!(t.divides(Size::vector(4096)) && t.loads_whole());
        assert_eq!(t.local_bytes(), 4 * 8 * (132 + 128));
    }

    #[test]
    fn tilings_imply_their_launch_and_break_rules_by_name() {
        let mut c = Config::with_defines(&[("SG_BM", 64), ("SG_TM", 4), ("SG_BK", 8)]);
        Sgemm.derive_launch(Size::vector(256), &mut c);
        // 16 x 16 work-items, but a 64 x 8 A slice is only 128 float4.
        assert_eq!((c.local, c.groups), (256, 4 * 2));
        assert!(!Tiling::of(&c).loads_whole());
        let c = Config::with_defines(&[("SG_BM", 64)]);
        assert!(Tiling::of(&c).loads_whole());
        assert!(!Tiling::of(&c).divides(Size::vector(96)));
        let mut other = Config::with_defines(&[]);
        let spmv = crate::families::get(FamilyId::Spmv).tuning().unwrap();
        spmv.derive_launch(Size::vector(256), &mut other);
        assert_eq!((other.local, other.groups), (0, 0));
    }
}
