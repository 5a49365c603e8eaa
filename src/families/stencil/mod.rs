//! The 3D stencil family (FDTD3d, radius 4): its grid spelling, size and launch rules, work
//! counts and the f64 reference of one time step. The kernel is `kernels_*/stencil.*`.
//!
//! Sizes: `N` is an N x N x N cube; `NxNZ` an N x N plane repeated over NZ planes (x fastest,
//! then y, then z). The grid includes its boundary: no padding.
//!
//! Boundary rule: a point is interior when it lies at least [`RADIUS`] cells from every face.
//! An interior point gets `c0 * in + sum_{i=1..RADIUS} c_i * (its six neighbours at distance
//! i)`; every other point is copied from the input unchanged. Both kernels and this reference
//! apply the same rule, so every output point is written once and checked.
//!
//! Metric: GB/s counting one read and one write of the grid per step (8 bytes per point): the
//! kernel's halo re-reads and the coefficients are served by caches and are not counted, as
//! in the SDK's own report of points per second. The flop count (29 per interior point: one
//! multiply, then per radius step five adds, a multiply and an add) is recorded beside it.

use crate::backend::fake::FakeLaunch;
use crate::backend::{self, Arg, LaunchShape};
use crate::families::emulation::rounded;
use crate::families::error::WorkloadError;
use crate::families::family::{bad_launch, bad_size, Family, FamilySpec, InputChoice, QuickSize};
use crate::families::footprint::{mul, plain, Footprint};
use crate::families::plan::{Build, Built, ExecError, Inputs, SideConfig};
use crate::families::reference;
use crate::families::variant::GroupRule::*;
use crate::families::variant::{points, pow2, v, Variant};
use crate::rows::{FamilyId, Metric, Size};

pub mod tiles;

const VARIANTS: [Variant; 1] = [pow2(
    points(
        v(
            FamilyId::Stencil,
            "fdtd3d",
            "stencil_fdtd3d",
            Columns,
            "FDTD3d as in NVIDIA's SDK: radius 4, z-marching register queue, local tile",
        ),
        &["A", "B"],
    ),
    128,
    1024,
)];

/// The stencil's radius, the kernels' `RADIUS`.
pub const RADIUS: u64 = 4;
/// The kernels' default tile width ([`tile_x_of`]): a tile is `TILE_X` x (local / `TILE_X`).
pub const TILE_X: u64 = 32;
/// Flops per interior point (see the module docs).
pub const FLOPS_PER_POINT: u64 = 1 + 7 * RADIUS;

/// The grid a size names (see the module docs for the spelling).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grid {
    pub nx: u64,
    pub ny: u64,
    pub nz: u64,
}

impl Grid {
    pub fn of(size: Size) -> Grid {
        let nz = if size.cols == 0 { size.rows } else { size.cols };
        Grid {
            nx: size.rows,
            ny: size.rows,
            nz,
        }
    }

    pub fn points(&self) -> u64 {
        self.nx.saturating_mul(self.ny).saturating_mul(self.nz)
    }

    /// Points at least RADIUS cells from every face.
    pub fn interior(&self) -> u64 {
        let inner = |n: u64| n.saturating_sub(2 * RADIUS);
        inner(self.nx)
            .saturating_mul(inner(self.ny))
            .saturating_mul(inner(self.nz))
    }

    fn is_interior(&self, x: usize, y: usize, z: usize) -> bool {
        let r = RADIUS as usize;
        let inside = |c: usize, n: u64| c >= r && c + r < n as usize;
        inside(x, self.nx) && inside(y, self.ny) && inside(z, self.nz)
    }
}

/// A grid the stencil kernel cannot run, naming the limit.
#[derive(Debug, thiserror::Error)]
pub enum SizeError {
    #[error(
        "grid {size}: the x/y extent {nx} must be a positive multiple of the tile width \
         {tile} (give N for an N^3 cube or NxNZ)",
        tile = TILE_X
    )]
    Extent { size: Size, nx: u64 },
    #[error(
        "grid {size}: {nz} planes in z; the radius-{r} stencil needs at least {min_z}",
        r = RADIUS,
        min_z = 2 * RADIUS + 1
    )]
    Planes { size: Size, nz: u64 },
    #[error(
        "grid {size} has {points} points; kernels index with 32-bit integers (limit {})",
        u32::MAX - 1
    )]
    TooManyPoints { size: Size, points: u64 },
}

pub fn check_size(size: Size) -> Result<(), SizeError> {
    let g = Grid::of(size);
    if g.nx == 0 || !g.nx.is_multiple_of(TILE_X) {
        return Err(SizeError::Extent { size, nx: g.nx });
    }
    if g.nz < 2 * RADIUS + 1 {
        return Err(SizeError::Planes { size, nz: g.nz });
    }
    if g.points() >= u64::from(u32::MAX) {
        return Err(SizeError::TooManyPoints {
            size,
            points: g.points(),
        });
    }
    Ok(())
}

/// The tile width a configuration compiles in: its `ST_TILE_X` (the tuner's knob) or [`TILE_X`].
pub fn tile_x_of(defines: &[(String, String)]) -> u64 {
    defines
        .iter()
        .rev()
        .find(|(k, _)| k == "ST_TILE_X")
        .and_then(|(_, v)| v.trim().parse().ok())
        .unwrap_or(TILE_X)
}

/// Refuse a launch that does not tile the grid exactly (the kernel maps group `g` to tile `g`)
/// in tiles `tile_x` wide ([`tile_x_of`] the configuration's defines).
pub fn check_launch(
    variant: &Variant,
    size: Size,
    shape: LaunchShape,
    tile_x: u64,
) -> Result<(), WorkloadError> {
    let bad = |reason: String| bad_launch(variant, reason);
    let local = u64::from(shape.local);
    if tile_x < RADIUS || !local.is_multiple_of(tile_x) || local / tile_x < RADIUS {
        return Err(bad(format!(
            "work-group size {local} must be a multiple of the tile width {tile_x} with at \
             least {RADIUS} rows (the halo rows are loaded by the first {RADIUS} rows), and \
             the tile at least {RADIUS} wide"
        )));
    }
    let g = Grid::of(size);
    let tile_y = local / tile_x;
    if !g.nx.is_multiple_of(tile_x) || !g.ny.is_multiple_of(tile_y) {
        return Err(bad(format!(
            "grid {size}: its x/y extents {}x{} are not multiples of the tile {tile_x}x{tile_y} \
             (work-group size {local})",
            g.nx, g.ny
        )));
    }
    let tiles = (g.nx / tile_x) * (g.ny / tile_y);
    if u64::from(shape.groups) != tiles {
        return Err(bad(format!(
            "{} work-groups; grid {size} in tiles of {tile_x}x{tile_y} needs exactly {tiles} \
             (leave 'groups' unset to get it)",
            shape.groups
        )));
    }
    Ok(())
}

/// One time step in f64, and per point the sum of the magnitudes of its terms (0 for boundary
/// copies, which must be exact).
pub fn step(input: &[f32], coeff: &[f32], g: Grid) -> (Vec<f64>, Vec<f64>) {
    let (nx, ny) = (g.nx as usize, g.ny as usize);
    let plane = nx * ny;
    let at = |i: usize| f64::from(input[i]);
    let c = |i: usize| f64::from(coeff[i]);
    let mut out = Vec::with_capacity(input.len());
    let mut abs = Vec::with_capacity(input.len());
    for z in 0..g.nz as usize {
        for y in 0..ny {
            for x in 0..nx {
                let p = z * plane + y * nx + x;
                if !g.is_interior(x, y, z) {
                    out.push(at(p));
                    abs.push(0.0);
                    continue;
                }
                let mut v = c(0) * at(p);
                let mut a = v.abs();
                for i in 1..=RADIUS as usize {
                    // The six neighbours at distance i: in x, in y, in z.
                    let n = [1, nx, plane].map(|d| [p - i * d, p + i * d]);
                    let s: f64 = n.as_flattened().iter().map(|&q| at(q)).sum();
                    let m: f64 = n.as_flattened().iter().map(|&q| at(q).abs()).sum();
                    v += c(i) * s;
                    a += c(i).abs() * m;
                }
                out.push(v);
                abs.push(a);
            }
        }
    }
    (out, abs)
}

/// What the kernel writes, for the fake backend: the reference rounded to float32.
fn emulate(input: &[f32], coeff: &[f32], g: Grid) -> Vec<f32> {
    let n = g.points() as usize;
    if input.len() < n || coeff.len() <= RADIUS as usize {
        return Vec::new();
    }
    rounded(&step(&input[..n], coeff, g).0)
}

pub struct Stencil;

/// `stencil_fdtd3d(input, output, coeff, nx, ny, nz, ...)`: one step over the grid.
fn emulate_step(l: &mut FakeLaunch<'_>) -> backend::Result<()> {
    let [nx, ny, nz] = [l.count(3)?, l.count(4)?, l.count(5)?].map(|n| n as u64);
    let out = emulate(l.read(0)?, l.read(2)?, Grid { nx, ny, nz });
    l.write(1, out)
}

impl Family for Stencil {
    fn spec(&self) -> &FamilySpec {
        const SPEC: FamilySpec = FamilySpec {
            default_size: "384",
            quick_size: Some(QuickSize::same("64")),
            variants: &VARIANTS,
            tuning: Some(&Stencil),
            // Cubes and a plane stack with the fewest planes a radius-4 step allows.
            test_sizes: &[Size::matrix(32, 9), Size::vector(64)],
            emulations: &[("stencil_fdtd3d", emulate_step)],
            ..FamilySpec::new(FamilyId::Stencil, "stencil", Metric::Bandwidth)
        };
        &SPEC
    }

    /// Bytes (one read + one write of the grid) and flops of one step.
    fn work(&self, _variant: &str, size: Size, _global: u64) -> (u64, u64) {
        let g = Grid::of(size);
        let flops = g.interior().saturating_mul(FLOPS_PER_POINT);
        (g.points().saturating_mul(8), flops)
    }

    fn elements(&self, size: Size) -> u64 {
        Grid::of(size).points()
    }

    fn footprint(&self, size: Size) -> Footprint {
        let p = Grid::of(size).points();
        // The reference step keeps the magnitudes (f64) beside the values.
        plain(p, p, p, mul(p, 8)).with_largest(p)
    }

    fn check_size(&self, variant: &Variant, size: Size) -> Result<(), WorkloadError> {
        check_size(size).map_err(|r| bad_size(variant, r))
    }

    /// One work-item per (x, y) column.
    fn groups(&self, _variant: &Variant, size: Size, local: u32) -> u64 {
        let g = Grid::of(size);
        g.nx.saturating_mul(g.ny).div_ceil(u64::from(local.max(1)))
    }

    fn check_launch(
        &self,
        variant: &Variant,
        size: Size,
        side: &SideConfig,
    ) -> Result<(), WorkloadError> {
        check_launch(variant, size, side.shape, tile_x_of(&side.defines))
    }

    fn inputs(&self, _: &'static Variant, size: Size, seed: u64, _: InputChoice<'_>) -> Inputs {
        let g = Grid::of(size);
        let grid = reference::random_vector(g.points() as usize, seed);
        let coeff = reference::random_vector(RADIUS as usize + 1, seed.wrapping_add(1));
        let (want, abs) = step(&grid, &coeff, g);
        // 25 float32 products summed in an order each compiler picks (contractions included):
        // a 25-term sum's tolerance. Boundary copies are exact (abs = 0).
        let f = reference::tolerance_factor(6 * RADIUS + 1);
        let tolerances = abs.iter().map(|a| f * a).collect();
        Inputs::new(size, grid, coeff).with_reference(want, tolerances)
    }

    fn build(&self, cx: &mut Build<'_>) -> Result<Built, ExecError> {
        let k = cx.kernel()?;
        let inputs = cx.inputs;
        let points = inputs.a.len();
        let input = cx.upload(&inputs.a)?;
        let coeff = cx.upload(&inputs.b)?;
        let out = cx.output(points)?;
        let g = Grid::of(inputs.size);
        let mut args = vec![Arg::Buffer(input), Arg::Buffer(out), Arg::Buffer(coeff)];
        args.extend([g.nx, g.ny, g.nz].map(|d| Arg::U32(d as u32)));
        Ok(Built::into(vec![cx.launch(k, args)], out, points))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rows::FamilyId;

    fn variant() -> &'static Variant {
        crate::families::find_variant(FamilyId::Stencil, "fdtd3d").unwrap()
    }

    #[test]
    fn sizes_spell_cubes_and_planes() {
        assert_eq!(
            Grid::of(Size::parse("384").unwrap()),
            Grid {
                nx: 384,
                ny: 384,
                nz: 384
            }
        );
        let g = Grid::of(Size::parse("64x9").unwrap());
        assert_eq!((g.nx, g.ny, g.nz, g.points()), (64, 64, 9, 64 * 64 * 9));
        assert_eq!(g.interior(), 56 * 56);
    }

    #[test]
    fn size_limits_are_named() {
        assert!(check_size(Size::vector(384)).is_ok());
        let e = check_size(Size::vector(40)).unwrap_err().to_string();
        assert!(e.contains("multiple of the tile width 32"), "{e}");
        let e = check_size(Size::matrix(32, 8)).unwrap_err().to_string();
        assert!(e.contains("at least 9"), "{e}");
        let e = check_size(Size::vector(2048)).unwrap_err().to_string();
        assert!(e.contains("32-bit"), "{e}");
    }

    #[test]
    fn launch_must_tile_the_grid_exactly() {
        let v = variant();
        let size = Size::vector(64);
        let ok = LaunchShape::linear(2 * 8, 256);
        assert!(check_launch(v, size, ok, TILE_X).is_ok());
        let e = check_launch(v, size, LaunchShape { groups: 15, ..ok }, TILE_X)
            .unwrap_err()
            .to_string();
        assert!(e.contains("exactly 16"), "{e}");
        let e = check_launch(v, size, LaunchShape::linear(32, 96), TILE_X)
            .unwrap_err()
            .to_string();
        assert!(e.contains("multiple of the tile width"), "{e}");
        let e = check_launch(v, size, LaunchShape::linear(2, 160), TILE_X)
            .unwrap_err()
            .to_string();
        assert!(e.contains("tile 32x5"), "{e}");
        // A 64 x 4 tile: the same work-group size, other tiles; 96 is no multiple of 64.
        let defines = [("ST_TILE_X".to_string(), "64".to_string())];
        assert_eq!(tile_x_of(&defines), 64);
        assert_eq!(tile_x_of(&[]), TILE_X);
        assert!(check_launch(v, size, LaunchShape::linear(16, 256), 64).is_ok());
        let e = check_launch(v, size, LaunchShape::linear(8, 128), 64)
            .unwrap_err()
            .to_string();
        assert!(e.contains("at least 4 rows"), "{e}");
        let e = check_launch(v, Size::vector(96), LaunchShape::linear(9, 256), 64)
            .unwrap_err()
            .to_string();
        assert!(e.contains("not multiples of the tile 64x4"), "{e}");
    }

    /// A 9 x 9 x 9 grid has one interior point, (4, 4, 4); with input 1 at its six neighbours
    /// at distance 2, 3 at its own place, and coefficients c = [0.5, 1, 2, 3, 4], the step is
    /// 0.5 * 3 + 2 * 6 = 13.5 there; every other point is its input.
    #[test]
    fn reference_of_one_interior_point_by_hand() {
        let g = Grid {
            nx: 9,
            ny: 9,
            nz: 9,
        };
        let mut input = vec![0.25f32; 729];
        let p = |x: usize, y: usize, z: usize| z * 81 + y * 9 + x;
        // Neighbours at distance 1, 3 and 4 are 0; at distance 2 they are 1.
        for d in [1usize, 3, 4] {
            for q in [
                p(4 - d, 4, 4),
                p(4 + d, 4, 4),
                p(4, 4 - d, 4),
                p(4, 4 + d, 4),
                p(4, 4, 4 - d),
                p(4, 4, 4 + d),
            ] {
                input[q] = 0.0;
            }
        }
        for q in [
            p(2, 4, 4),
            p(6, 4, 4),
            p(4, 2, 4),
            p(4, 6, 4),
            p(4, 4, 2),
            p(4, 4, 6),
        ] {
            input[q] = 1.0;
        }
        input[p(4, 4, 4)] = 3.0;
        let coeff = [0.5f32, 1.0, 2.0, 3.0, 4.0];
        let (out, abs) = step(&input, &coeff, g);
        assert_eq!(out[p(4, 4, 4)], 13.5);
        assert_eq!(abs[p(4, 4, 4)], 13.5);
        assert_eq!(out[p(0, 0, 0)], 0.25);
        assert_eq!(out[p(3, 4, 4)], 0.0, "boundary copy of a zero");
        assert_eq!(abs[p(3, 4, 4)], 0.0);
        let f = emulate(&input, &coeff, g);
        assert_eq!(f[p(4, 4, 4)], 13.5);
    }

    #[test]
    fn work_counts_one_read_and_one_write() {
        let (bytes, flops) = Stencil.work("", Size::matrix(32, 9), 0);
        assert_eq!(bytes, 32 * 32 * 9 * 8);
        assert_eq!(flops, 24 * 24 * FLOPS_PER_POINT);
    }
}
