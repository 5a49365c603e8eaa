//! A molecular-dynamics gather in the style of SHOC's MD: the Lennard-Jones force on each atom
//! from a fixed-length neighbour list, with the neighbours' positions read three ways
//! ([`ReadPath`](crate::families::read_path::ReadPath)). The kernels are `kernels_*/md.*`.
//!
//! `N` atoms (N = L³, L ≥ 5) on a jittered cubic lattice of spacing 1 (each coordinate moved
//! by at most [`JITTER`]), numbered by a seeded permutation so that neighbours' positions are
//! gathered from scattered addresses, as with SHOC's random atoms. Each atom lists the
//! [`NEIGHBOURS`] sites at offsets in [-2, 2]³ (periodic in the numbering, not in space: a
//! wrapped neighbour is far away, outside the cutoff), neighbour-major (`list[k·N + i]`) as
//! SHOC stores it, so the list reads are coalesced and only the positions are gathered. The
//! squared cutoff [`CUTSQ`] = 4.5 lies between the lattice's squared distances 4 and 5, and no
//! jittered pair comes within 0.04 of it in r²: whether a pair interacts never depends on
//! rounding, so both compilers, whatever they contract, and the f64 reference agree on it.
//!
//! Metric: GB/s of the bytes the kernel requests: per atom its own position (16), N·K list
//! entries (4 each), one 16-byte position per list entry (the gather, whichever path serves
//! it) and the 16-byte force written. Caches serve much of the gather, so this is a request
//! rate, not DRAM traffic, counted the same on every path and both APIs.

use rayon::prelude::*;

use crate::backend::fake::FakeLaunch;
use crate::backend::{self, Arg};
use crate::families::emulation::{rounded, words};
use crate::families::error::WorkloadError;
use crate::families::family::{bad_size, vectors, Family, FamilySpec, InputChoice, QuickSize};
use crate::families::footprint::{add, mul, plain, Footprint};
use crate::families::plan::{Build, Built, ExecError, Inputs};
use crate::families::read_path::{gather_build, path_arg, without_read_path};
use crate::families::reference::{self, mix};
use crate::families::variant::{bare, GroupRule, Variant};
use crate::rows::{FamilyId, Metric, Size};

/// Neighbours per atom: the lattice sites at offsets in [-2, 2]³ other than the atom itself.
pub const NEIGHBOURS: usize = 124;
pub const CUTSQ: f32 = 4.5;
/// The largest displacement of a coordinate from its lattice site.
pub const JITTER: f32 = 0.03;
/// Lennard-Jones constants (SHOC's defaults).
pub const LJ1: f32 = 1.5;
pub const LJ2: f32 = 2.0;

const fn lj(name: &'static str, kernel: &'static str, about: &'static str) -> Variant {
    let rule = GroupRule::Cover { per_item: 1 };
    bare(FamilyId::Md, name, kernel, rule, about)
}

pub const VARIANTS: [Variant; 3] = [
    lj(
        "lj",
        "md_lj",
        "SHOC-style Lennard-Jones gather, neighbour positions through plain global loads",
    ),
    lj(
        "lj-ro",
        "md_lj_ro",
        "LJ gather, positions through the read-only path (const restrict; __ldg in CUDA)",
    ),
    lj(
        "lj-tex",
        "md_lj_tex",
        "LJ gather, positions through a float4 texture (image1d_buffer / texture object)",
    ),
];

/// The lattice edge of `n` atoms, when `n` is a cube of at least 5³.
pub fn edge(n: u64) -> Option<u64> {
    let l = (n as f64).cbrt().round() as u64;
    (l >= 5 && l.checked_pow(3) == Some(n)).then_some(l)
}

pub struct MdInputs {
    /// x, y, z, 0 per atom.
    pub positions: Vec<f32>,
    /// Neighbour-major: `list[k * n + i]`.
    pub list: Vec<u32>,
    pub reference: Vec<f64>,
    pub tolerances: Vec<f64>,
}

/// The lattice offsets of the neighbour list, nearest first.
fn offsets() -> Vec<[i64; 3]> {
    let mut o = Vec::with_capacity(NEIGHBOURS);
    for dz in -2..=2i64 {
        for dy in -2..=2i64 {
            for dx in -2..=2i64 {
                if (dx, dy, dz) != (0, 0, 0) {
                    o.push([dx, dy, dz]);
                }
            }
        }
    }
    o.sort_by_key(|d| d.iter().map(|c| c * c).sum::<i64>());
    o
}

/// A seeded permutation of 0..n (Fisher-Yates driven by [`mix`]).
fn permutation(n: usize, seed: u64) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = (mix(seed, 5, i as u64) % (i as u64 + 1)) as usize;
        p.swap(i, j);
    }
    p
}

pub fn inputs(size: Size, seed: u64) -> MdInputs {
    let n = size.rows as usize;
    let l = edge(size.rows).unwrap_or(5) as usize;
    let n = n.min(l * l * l);
    // atom[site] = the atom number of a lattice site.
    let atom = permutation(n, seed);
    // site_of[a]: the lattice site of atom a, so that each atom's entries are made in
    // parallel (every number is a hash of its site: the same on any thread count).
    let mut site_of = vec![0usize; n];
    for (site, &a) in atom.iter().enumerate() {
        site_of[a] = site;
    }
    let cell = |site: usize| [site % l, (site / l) % l, site / (l * l)];
    let mut positions = vec![0.0f32; 4 * n];
    positions.par_chunks_mut(4).enumerate().for_each(|(a, p)| {
        let site = site_of[a];
        let c = cell(site);
        for d in 0..3 {
            let u = (mix(seed, 6, (3 * site + d) as u64) >> 40) as f32 / (1u32 << 24) as f32;
            p[d] = c[d] as f32 + JITTER * (2.0 * u - 1.0);
        }
    });
    let offs = offsets();
    let mut list = vec![0u32; NEIGHBOURS * n];
    list.par_chunks_mut(n.max(1))
        .zip(offs.par_iter())
        .for_each(|(row, o)| {
            for (a, entry) in row.iter_mut().enumerate() {
                let c = cell(site_of[a]);
                let w = |d: usize| (c[d] as i64 + o[d]).rem_euclid(l as i64) as usize;
                *entry = atom[w(0) + l * (w(1) + l * w(2))] as u32;
            }
        });
    let (reference, abs) = forces(&positions, &list, n);
    let f = reference::tolerance_factor(NEIGHBOURS as u64) * 16.0;
    let tolerances = abs.iter().map(|a| f * a).collect();
    MdInputs {
        positions,
        list,
        reference,
        tolerances,
    }
}

/// The force on every atom in f64 (x, y, z, 0 per atom) and per component its terms' summed
/// magnitudes for the tolerance, each atom's terms in list order (the same on any thread count).
pub fn forces(pos: &[f32], list: &[u32], n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut out = vec![0.0f64; 4 * n];
    let mut abs = vec![0.0f64; 4 * n];
    out.par_chunks_mut(4)
        .zip(abs.par_chunks_mut(4))
        .enumerate()
        .for_each(|(i, (out, abs))| {
            for k in 0..NEIGHBOURS {
                let j = list[k * n + i] as usize;
                let d: [f64; 3] =
                    std::array::from_fn(|c| f64::from(pos[4 * i + c]) - f64::from(pos[4 * j + c]));
                let r2: f64 = d.iter().map(|x| x * x).sum();
                if r2 < f64::from(CUTSQ) {
                    let r2inv = 1.0 / r2;
                    let r6inv = r2inv * r2inv * r2inv;
                    let force = r2inv * r6inv * (f64::from(LJ1) * r6inv - f64::from(LJ2));
                    for c in 0..3 {
                        out[c] += d[c] * force;
                        abs[c] += (d[c] * force).abs();
                    }
                }
            }
        });
    (out, abs)
}

/// What the kernel writes, for the fake backend.
fn emulate(pos: &[f32], list: &[f32], n: usize) -> Vec<f32> {
    if pos.len() < 4 * n || list.len() < NEIGHBOURS * n {
        return Vec::new();
    }
    rounded(&forces(pos, &words(&list[..NEIGHBOURS * n]), n).0)
}

pub struct Md;

/// `md_*(pos, neighbours, n, force)`: every atom's force.
fn emulate_forces(l: &mut FakeLaunch<'_>) -> backend::Result<()> {
    let force = emulate(l.read(0)?, l.read(1)?, l.count(2)?);
    l.write(3, force)
}

impl Family for Md {
    fn spec(&self) -> &FamilySpec {
        const SPEC: FamilySpec = FamilySpec {
            // L^3 atoms.
            default_size: "128^3",
            charts: &["texture"],
            quick_size: Some(QuickSize::same("16^3")),
            variants: &VARIANTS,
            emulations: &[("md_*", emulate_forces)],
            test_sizes: &vectors([125, 216]),
            ..FamilySpec::new(FamilyId::Md, "md", Metric::Bandwidth)
        };
        &SPEC
    }

    /// Bytes requested (see the module docs) and flops: only the distance test of every listed
    /// pair (8 per pair), the part that does not depend on the cutoff.
    fn work(&self, _variant: &str, size: Size, _global: u64) -> (u64, u64) {
        let n = size.rows;
        let pairs = n.saturating_mul(NEIGHBOURS as u64);
        let bytes = pairs
            .saturating_mul(4 + 16)
            .saturating_add(n.saturating_mul(32));
        (bytes, pairs.saturating_mul(8))
    }

    fn footprint(&self, size: Size) -> Footprint {
        let atoms = size.rows;
        let list = mul(atoms, NEIGHBOURS as u64);
        plain(add(mul(atoms, 4), list), mul(atoms, 4), mul(atoms, 4), 0)
    }

    fn check_size(&self, variant: &Variant, size: Size) -> Result<(), WorkloadError> {
        if size.cols != 0 || edge(size.rows).is_none() {
            return Err(bad_size(
                variant,
                format!(
                    "{size} atoms: the lattice needs N = L^3 atoms with L at least 5 (e.g. 128^3)"
                ),
            ));
        }
        if size.rows.saturating_mul(NEIGHBOURS as u64) >= u64::from(u32::MAX) {
            return Err(bad_size(
                variant,
                format!(
                    "{size} atoms: the neighbour list of {NEIGHBOURS} per atom exceeds the \
                     kernels' 32-bit indices"
                ),
            ));
        }
        Ok(())
    }

    fn inputs(&self, _: &'static Variant, size: Size, seed: u64, _: InputChoice<'_>) -> Inputs {
        let p = inputs(size, seed);
        Inputs::new(size, p.positions, Vec::new())
            .with_ints(vec![p.list])
            .with_reference(p.reference, p.tolerances)
    }

    fn build(&self, cx: &mut Build<'_>) -> Result<Built, ExecError> {
        gather_build(cx, |cx, path, positions, ints| {
            let n = Arg::U32(cx.inputs.size.rows as u32);
            // Positions (along `path`), the list, N; the force output follows.
            Ok(vec![path_arg(path, positions, 4), Arg::Buffer(ints[0]), n])
        })
    }

    /// The read paths of one kernel are one algorithm.
    fn algorithm(&self, variant: &Variant) -> &'static str {
        without_read_path(variant.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_must_be_cubes() {
        let check_size = |size| Md.check_size(&VARIANTS[0], size);
        assert!(check_size(Size::vector(125)).is_ok());
        assert!(check_size(Size::parse("128^3").unwrap()).is_ok());
        let e = check_size(Size::vector(126)).unwrap_err().to_string();
        assert!(e.contains("L^3"), "{e}");
        assert!(check_size(Size::vector(64)).is_err(), "4^3 is too small");
    }

    #[test]
    fn no_pair_sits_near_the_cutoff() {
        let inp = inputs(Size::vector(6 * 6 * 6), 3);
        let n = 216;
        let mut inside = 0;
        for i in 0..n {
            for k in 0..NEIGHBOURS {
                let j = inp.list[k * n + i] as usize;
                let r2: f32 = (0..3)
                    .map(|c| inp.positions[4 * i + c] - inp.positions[4 * j + c])
                    .map(|d| d * d)
                    .sum();
                assert!((r2 - CUTSQ).abs() > 0.04, "pair ({i}, {j}) r2 {r2}");
                inside += usize::from(r2 < CUTSQ);
            }
        }
        // Shells at squared distance 1, 2, 3 and 4: 6 + 12 + 8 + 6 sites, fewer at the wrap.
        assert!(inside > 20 * n && inside <= 32 * n, "{inside}");
    }

    #[test]
    fn two_atoms_by_hand() {
        // Atom 0 at the origin, atom 1 at x = 1, atom 2 far away. Atom 0 lists atom 1 once and
        // atom 2 otherwise: r2 = 1, force = 1 * 1 * (1.5 - 2) = -0.5, so atom 0 gets
        // -0.5 * (0 - 1) = +0.5 in x; atom 2 is outside the cutoff.
        let far = [0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 9.0, 9.0, 9.0, 0.0];
        let mut l3 = vec![2u32; NEIGHBOURS * 3];
        l3[0] = 1;
        let (f, _) = forces(&far, &l3, 3);
        assert_eq!(f[0], 0.5);
        assert_eq!(&f[1..3], &[0.0, 0.0]);
        let bits: Vec<f32> = l3.iter().map(|&b| f32::from_bits(b)).collect();
        assert_eq!(emulate(&far, &bits, 3)[0], 0.5);
    }
}
