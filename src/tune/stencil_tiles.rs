//! The 3D stencil's tile knobs (`ST_TILE_X`, `ST_TILE_Y`): the launch a tile implies and the
//! rules it must satisfy before it runs. The kernel (`kernels_*/stencil.*`) refuses to compile
//! a tile that does not match `WG_SIZE` or is smaller than the radius, and the harness refuses
//! a launch that does not tile the grid; checking the same rules here keeps such points out of
//! the search and counts them by name.

use super::space_def::Config;
use crate::backend::DeviceInfo;
use crate::workload::stencil::{Grid, RADIUS, TILE_X};
use crate::workload::Size;

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

/// Fill in the launch the tile implies: its work-group size, and one group per tile.
pub fn derive(size: Size, c: &mut Config) {
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

/// The tile divides the grid's x and y extents.
pub fn divides(c: &Config, size: Size) -> bool {
    let t = StencilTile::of(c);
    let g = Grid::of(size);
    t.x > 0 && t.y > 0 && g.nx.is_multiple_of(u64::from(t.x)) && g.ny.is_multiple_of(u64::from(t.y))
}

/// The tile is at least RADIUS wide and high: its first RADIUS columns and rows load the halo.
pub fn has_halo(c: &Config) -> bool {
    let t = StencilTile::of(c);
    u64::from(t.x) >= RADIUS && u64::from(t.y) >= RADIUS
}

/// The tile and its halo fit the device's local memory (unknown limits pass).
pub fn fits_local_memory(c: &Config, device: &DeviceInfo) -> bool {
    device.local_mem_bytes == 0 || StencilTile::of(c).local_bytes() <= device.local_mem_bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(defines: &[(&'static str, u32)]) -> Config {
        Config::with_defines(defines)
    }

    #[test]
    fn a_tile_implies_its_launch() {
        let mut c = config(&[("ST_TILE_X", 64), ("ST_TILE_Y", 8)]);
        derive(Size::vector(256), &mut c);
        assert_eq!((c.local, c.groups), (512, 4 * 32));
        assert_eq!(StencilTile::of(&c).local_bytes(), 4 * 72 * 16);
        // The shipped tile: 32 wide, as high as the work-group allows.
        let mut shipped = config(&[]);
        shipped.local = 256;
        assert_eq!(StencilTile::of(&shipped), StencilTile { x: 32, y: 8 });
    }

    #[test]
    fn tiles_that_do_not_fit_break_rules() {
        let c = config(&[("ST_TILE_X", 64), ("ST_TILE_Y", 2)]);
        assert!(!has_halo(&c));
        assert!(divides(&c, Size::vector(256)));
        let c = config(&[("ST_TILE_X", 64), ("ST_TILE_Y", 4)]);
        assert!(has_halo(&c));
        assert!(!divides(&c, Size::vector(96)));
        let mut small = DeviceInfo {
            local_mem_bytes: 3072,
            ..DeviceInfo::default()
        };
        assert!(!fits_local_memory(&c, &small), "72 x 12 floats");
        small.local_mem_bytes = 72 * 12 * 4;
        assert!(fits_local_memory(&c, &small));
    }
}
