//! The 3D stencil's tile knobs (`ST_TILE_X`, `ST_TILE_Y`): the launch a tile implies and the
//! rules it must satisfy before it runs. The kernel (`kernels_*/stencil.*`) refuses to compile
//! a tile that does not match `WG_SIZE` or is smaller than the radius, and the harness refuses
//! a launch that does not tile the grid; checking the same rules here keeps such points out of
//! the search and counts them by name.

use super::{Grid, RADIUS, TILE_X};
use crate::backend::DeviceInfo;
use crate::families::family::Tuning;
use crate::families::tune_space::{param as p, Config, Constraint, Knob, SpaceDef, SpaceKind};
use crate::rows::{FamilyId, Size};

/// The grid first (a refused tile never reaches the device), then the halo, then the limits.
const STENCIL_RULES: &[Constraint] = &[
    Constraint::TileDividesGrid,
    Constraint::TileHalo,
    Constraint::DeviceLocal,
    Constraint::VariantLocal,
    Constraint::LocalMemory,
];

/// Tile widths and heights of the stencil's full space: 15 tiles, of which the 2-row ones are
/// refused (`tile-halo`) and, on a 1024-work-item device, the three of 2048 or 4096 work-items
/// (`device-local`). The 512 and 1024 work-item tiles are in on purpose: NVIDIA's OpenCL allows
/// this kernel 256 work-items, so they are recorded there as build or launch failures.
const SPACE_TILE_X: &[u32] = &[32, 64, 128];
const SPACE_TILE_Y: &[u32] = &[2, 4, 8, 16, 32];
const FDTD3D: SpaceDef = SpaceDef::of(FamilyId::Stencil, "fdtd3d", STENCIL_RULES);

/// The stencil's tunable spaces: FDTD3d's tile.
pub const SPACES: &[(SpaceKind, SpaceDef)] = &[
    // 9 tiles x the z loop unrolled or not (the radius loop fully, as the SDK): 18 points, each
    // its own program, at the fdtd-unroll study's 384^3 (226 MB a grid). The study's own
    // kernel (32 x 8, A = 9, B = 4) is one of them.
    FDTD3D.space(
        SpaceKind::Full,
        "fdtd3d",
        "384",
        &[
            p("tile_x", Knob::Define("ST_TILE_X"), SPACE_TILE_X),
            p("tile_y", Knob::Define("ST_TILE_Y"), SPACE_TILE_Y),
            p("unroll.A", Knob::Unroll("A"), &[0, 9]),
            p("unroll.B", Knob::Unroll("B"), &[4]),
        ],
    ),
    // Four tiles run, 32 and 64 wide; the 2-row ones break the halo rule and the 128-wide
    // ones do not divide the 64-wide grid: 4 programs.
    FDTD3D.space(
        SpaceKind::Small,
        "fdtd3d",
        "64x9",
        &[
            p("tile_x", Knob::Define("ST_TILE_X"), SPACE_TILE_X),
            p("tile_y", Knob::Define("ST_TILE_Y"), &[2, 4, 8]),
            p("unroll.A", Knob::Unroll("A"), &[0]),
            p("unroll.B", Knob::Unroll("B"), &[4]),
        ],
    ),
];

/// One stencil tile: columns in x and rows in y of one work-group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StencilTile {
    pub x: u32,
    pub y: u32,
}

impl StencilTile {
    /// The tile a configuration sets; without the defines, the shipped 32-wide tile of the
    /// configuration's work-group size.
    pub fn of(c: &Config) -> StencilTile {
        let x = c.define("ST_TILE_X").unwrap_or(TILE_X as u32);
        let y = c.define("ST_TILE_Y").unwrap_or_else(|| c.local / x.max(1));
        StencilTile { x, y }
    }

    /// Work-items per group: one per column of the tile.
    pub fn local(self) -> u32 {
        self.x.saturating_mul(self.y)
    }

    /// Local memory of the tile with its halo of RADIUS on every side.
    pub fn local_bytes(self) -> u64 {
        let halo = 2 * RADIUS;
        4 * (u64::from(self.x) + halo) * (u64::from(self.y) + halo)
    }
}

/// The tile divides the grid's x and y extents.
pub fn divides(c: &Config, size: Size) -> bool {
    let t = StencilTile::of(c);
    let g = Grid::of(size);
    t.x > 0 && t.y > 0 && g.nx.is_multiple_of(u64::from(t.x)) && g.ny.is_multiple_of(u64::from(t.y))
}

impl Tuning for super::Stencil {
    fn spaces(&self) -> &'static [(SpaceKind, SpaceDef)] {
        SPACES
    }

    /// Fill in the launch the tile implies: its work-group size, and one group per tile.
    fn derive_launch(&self, size: Size, c: &mut Config) {
        let t = StencilTile::of(c);
        if c.local == 0 {
            c.local = t.local();
        }
        if c.groups == 0 && divides(c, size) {
            let g = Grid::of(size);
            let tiles = (g.nx / u64::from(t.x)) * (g.ny / u64::from(t.y));
            c.groups = u32::try_from(tiles).unwrap_or(u32::MAX);
        }
    }

    /// Whether `c` breaks one of the tile's rules (the others are not the stencil's); a device's
    /// unknown local memory passes.
    fn breaks_rule(&self, rule: Constraint, c: &Config, size: Size, device: &DeviceInfo) -> bool {
        let t = StencilTile::of(c);
        match rule {
            Constraint::TileDividesGrid => !divides(c, size),
            Constraint::TileHalo => u64::from(t.x) < RADIUS || u64::from(t.y) < RADIUS,
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
    use crate::families::stencil::Stencil;

    #[test]
    fn a_tile_implies_its_launch() {
        let mut c = Config::with_defines(&[("ST_TILE_X", 64), ("ST_TILE_Y", 8)]);
        Stencil.derive_launch(Size::vector(256), &mut c);
        assert_eq!((c.local, c.groups), (512, 4 * 32));
        assert_eq!(StencilTile::of(&c).local_bytes(), 4 * 72 * 16);
        // The shipped tile: 32 wide, as high as the work-group allows.
        let mut shipped = Config::with_defines(&[]);
        shipped.local = 256;
        assert_eq!(StencilTile::of(&shipped), StencilTile { x: 32, y: 8 });
    }

    #[test]
    fn tiles_that_do_not_fit_break_rules() {
        let breaks = |rule, c: &Config, device: &DeviceInfo| {
            Stencil.breaks_rule(rule, c, Size::vector(256), device)
        };
        let any = DeviceInfo::default();
        let c = Config::with_defines(&[("ST_TILE_X", 64), ("ST_TILE_Y", 2)]);
        assert!(breaks(Constraint::TileHalo, &c, &any));
        assert!(divides(&c, Size::vector(256)));
        let c = Config::with_defines(&[("ST_TILE_X", 64), ("ST_TILE_Y", 4)]);
        assert!(!breaks(Constraint::TileHalo, &c, &any));
        assert!(!divides(&c, Size::vector(96)));
        let mut small = DeviceInfo {
            local_mem_bytes: 3072,
            ..DeviceInfo::default()
        };
        assert!(
            breaks(Constraint::LocalMemory, &c, &small),
            "72 x 12 floats"
        );
        small.local_mem_bytes = 72 * 12 * 4;
        assert!(!breaks(Constraint::LocalMemory, &c, &small));
    }
}
