//! The BFS family: level-synchronous breadth-first search as in Rodinia's `bfs` (two kernels
//! per level, `kernels_*/bfs.*`, a one-word flag read back after each) and the runner that
//! drives a backend level by level; the graphs and the CPU reference are in `graph`.
//!
//! Graphs: `size` is the vertex count `n`; every graph has exactly `n × DEGREE` directed edges and
//! is searched from vertex 0. The layered graphs put the vertices in layers of growing width (1, 4,
//! 16, …; the last takes the rest): each vertex of layer `k > 0` has an edge from a random vertex
//! of layer `k − 1`, and no edge reaches more than one layer deeper than its source. So a vertex's
//! level is its layer and the level count a function of `n` ([`levels`]): both APIs run the same,
//! known number of launches (time per level is total time / levels). Their other edges:
//!
//! * `uniform`: sources and targets uniform (targets at most one layer deeper than the
//!   source), out-degrees about Poisson(`DEGREE`) — Rodinia's kind of graph;
//! * `power-law`: sources drawn from a power law (density ∝ rank^(−2/3), ranks scattered over
//!   the vertices): a few hubs, whose expand work-items loop over very long edge lists.
//!
//! The random graphs have no layers: each vertex `v` picks `DEGREE/2` partners, each pair an edge
//! both ways (undirected, as Rodinia's `graphgen`); each `v > 0` takes its first partner uniformly
//! among those before it, so all are reachable from 0 and GTEPS counts every edge.
//!
//! * `random-uniform`: the other partners uniform over all vertices (Erdős–Rényi-like, mean
//!   degree `DEGREE`, as Rodinia's generator);
//! * `random-power-law`: preferential attachment (Barabási–Albert): each partner is the end of
//!   a uniformly drawn earlier edge, so a vertex is picked in proportion to its degree and
//!   degrees follow a power law (exponent 3); vertex 0 starts with self-loops.
//!
//! Their depth is measured: [`depth`] counts it from the CPU BFS, and the device run must
//! reach every vertex at the same level.
//!
//! Timing and metric: a run uploads a fresh state (untimed), then per level: clear the flag (one
//! word up), expand, update, read the flag (one word down). The device clock gives the two kernels'
//! time, the host clock the whole level, so their difference is what launching, waiting and the
//! flag's two transfers cost; a run's [`Timing`] adds the levels up, as every multi-step run does.
//! GTEPS: the graph's `n × DEGREE` edges (all reachable) per second of one whole search.

use std::time::Instant;

use crate::backend::fake::FakeLaunch;
use crate::backend::{Arg, BackendError, BufferId, KernelId, LaunchShape, Runtime, Timing};
use crate::families::emulation::floats;
use crate::families::error::WorkloadError;
use crate::families::family::{bad_size, vector_size, Family, FamilySpec, InputChoice, QuickSize};
use crate::families::footprint::{add, mul, plain, Footprint};
use crate::families::plan::{Build, Built, ExecError, Inputs, LaunchLoop, Ran, Step};
use crate::families::reference::{self, Verification};
use crate::families::variant::GroupRule::*;
use crate::families::variant::{points, v, Variant};
use crate::rows::{FamilyId, Metric, Seconds, Size};

mod graph;
pub use graph::*;

const fn graph(name: &'static str, about: &'static str) -> Variant {
    let rule = Cover { per_item: 1 };
    points(v(FamilyId::Bfs, name, "bfs_expand", rule, about), &[])
}

/// The variants are the graph generators; one kernel pair searches them all.
const VARIANTS: [Variant; 4] = [
    graph(
        "uniform",
        "Rodinia's level-synchronous BFS on a seeded graph with uniform edges",
    ),
    graph(
        "power-law",
        "Rodinia's level-synchronous BFS on a seeded graph with power-law out-degrees",
    ),
    graph(
        "random-uniform",
        "Rodinia's BFS on a seeded uniform random graph (as Rodinia's graphgen; levels measured)",
    ),
    graph(
        "random-power-law",
        "Rodinia's BFS on a seeded preferential-attachment power-law graph (levels measured)",
    ),
];

/// The device side of one search: both kernels and every buffer.
#[derive(Debug, Clone)]
struct Plan {
    expand: KernelId,
    update: KernelId,
    shape: LaunchShape,
    offsets: BufferId,
    edges: BufferId,
    mask: BufferId,
    updating: BufferId,
    visited: BufferId,
    cost: BufferId,
    over: BufferId,
    n: u32,
}

/// Device levels (`cost`, carried bit for bit in floats) against the CPU's, exactly.
pub fn check(got: &[f32], want: &[f64]) -> Verification {
    let levels: Vec<f32> = got.iter().map(|g| g.to_bits() as i32 as f32).collect();
    reference::compare(&levels, want, &vec![0.0; want.len()])
}

/// The host emulation of both kernels, for the fake backend: `bufs` are the kernel's buffer
/// arguments in order (as floats carrying 32-bit words), `n` its count.
fn emulate(kernel: &str, bufs: &mut [Vec<f32>], n: usize) -> Result<(), NotBfs> {
    let word = |b: &[f32], i: usize| b[i].to_bits();
    let set = |b: &mut Vec<f32>, i: usize, w: u32| b[i] = f32::from_bits(w);
    match (kernel, bufs) {
        ("bfs_expand", [offsets, edges, mask, updating, visited, cost]) => {
            let frontier: Vec<usize> = (0..n).filter(|&v| word(mask, v) != 0).collect();
            for v in frontier {
                set(mask, v, 0);
                let next = (word(cost, v) as i32 + 1) as u32;
                for e in word(offsets, v)..word(offsets, v + 1) {
                    let t = word(edges, e as usize) as usize;
                    if word(visited, t) == 0 {
                        set(cost, t, next);
                        set(updating, t, 1);
                    }
                }
            }
            Ok(())
        }
        ("bfs_update", [mask, updating, visited, over]) => {
            let reached: Vec<usize> = (0..n).filter(|&v| word(updating, v) != 0).collect();
            for v in reached {
                set(mask, v, 1);
                set(visited, v, 1);
                set(over, 0, 1);
                set(updating, v, 0);
            }
            Ok(())
        }
        // Neither BFS kernel with its buffers.
        (k, b) => Err(NotBfs {
            kernel: k.to_string(),
            buffers: b.len(),
        }),
    }
}

/// A launch the emulation does not know: neither BFS kernel with its buffers.
#[derive(Debug, thiserror::Error)]
#[error("kernel '{kernel}' with {buffers} buffers is not a BFS kernel")]
struct NotBfs {
    kernel: String,
    buffers: usize,
}

impl LaunchLoop for Plan {
    /// One whole search from a fresh start state (vertex 0 the frontier, reached at level 0),
    /// level by level (see the module docs), the levels' clocks added up. More rounds than
    /// vertices means the device never cleared the flag: an error, not a hang.
    fn run(&self, backend: &mut dyn Runtime) -> Result<Timing, BackendError> {
        let p = self;
        let n = p.n as usize;
        let mut one_hot = vec![0u32; n];
        one_hot[0] = 1;
        backend.upload_u32(p.mask, &one_hot)?;
        backend.upload_u32(p.visited, &one_hot)?;
        backend.upload_u32(p.updating, &vec![0; n])?;
        let mut cost = vec![UNREACHED as u32; n];
        cost[0] = 0;
        backend.upload_u32(p.cost, &cost)?;
        let [offsets, edges, mask, updating, visited, cost, over] = [
            p.offsets, p.edges, p.mask, p.updating, p.visited, p.cost, p.over,
        ]
        .map(Arg::Buffer);
        let expand = [offsets, edges, mask, updating, visited, cost, Arg::U32(p.n)];
        let update = [mask, updating, visited, over, Arg::U32(p.n)];
        let (mut wall, mut device, mut levels) = (0.0, Some(0.0), 0);
        loop {
            let started = Instant::now();
            backend.upload_u32(p.over, &[0])?;
            let a = backend.launch(p.expand, p.shape, &expand)?;
            let b = backend.launch(p.update, p.shape, &update)?;
            let mut flag = [0u32];
            backend.download_u32(p.over, &mut flag)?;
            let kernels = a.device.zip(b.device).map(|(x, y)| x.0 + y.0);
            device = device.zip(kernels).map(|(d, k)| d + k);
            wall += started.elapsed().as_secs_f64();
            levels += 1;
            if flag[0] == 0 {
                return Ok(Timing::clocks(Seconds(wall), device.map(Seconds)));
            }
            if levels > n {
                return Err(BackendError::driver(
                    backend.api(),
                    "bfs",
                    format!("the flag was still set after {levels} levels"),
                ));
            }
        }
    }
}

pub struct Bfs;

/// A BFS kernel on copies of its buffer arguments, stored back whole: it updates several.
fn emulate_level(l: &mut FakeLaunch<'_>) -> Result<(), BackendError> {
    let ids = l.buffers();
    let n = l.count(l.args.len().saturating_sub(1))?;
    let mut bufs = ids
        .iter()
        .map(|b| l.data(*b).map(<[f32]>::to_vec))
        .collect::<Result<Vec<_>, _>>()?;
    let kernel = l.kernel.to_string();
    emulate(&kernel, &mut bufs, n).map_err(|e| l.refuse(&e.to_string()))?;
    for (id, data) in ids.into_iter().zip(bufs) {
        l.replace(id, data)?;
    }
    Ok(())
}

impl Family for Bfs {
    fn spec(&self) -> &FamilySpec {
        /// A layered graph's depth follows from its size (rows written before `levels`).
        fn known_levels(variant: &str, elements: u64) -> Option<u64> {
            is_layered(variant).then(|| levels(elements))
        }
        const SPEC: FamilySpec = FamilySpec {
            charts: &["bfs"],
            levels_of_size: Some(known_levels),
            quick_size: Some(QuickSize::same("2^12")),
            variants: &VARIANTS,
            // One vertex, a few layers, and a size no work-group size divides.
            test_sizes: &[Size::vector(1), Size::vector(1000), Size::vector(5003)],
            emulations: &[("bfs_*", emulate_level)],
            // The variant picks the graph.
            inputs_per_variant: true,
            always_runtime_bound: true,
            ..FamilySpec::new(FamilyId::Bfs, "bfs", Metric::Teps)
        };
        &SPEC
    }

    /// The `flops` column counts edges (the metric is traversed edges per second).
    fn work(&self, variant: &str, size: Size, _global: u64) -> (u64, u64) {
        (bytes_of(variant, size.rows), edges(size.rows))
    }

    fn footprint(&self, size: Size) -> Footprint {
        let n = size.rows;
        let edges = edges(n);
        // CSR offsets and edges, the frontier, visited and cost words; on the host the
        // generator's source and destination lists (8 bytes an edge) and the levels.
        let fp = plain(add(n, edges), mul(n, 6), n, 0);
        Footprint {
            host: add(fp.host, mul(edges, 8)),
            ..fp
        }
        .with_largest(edges)
    }

    /// The CSR offsets of a graph are 32-bit too: they index its `n × DEGREE` edges.
    fn check_size(&self, variant: &Variant, size: Size) -> Result<(), WorkloadError> {
        vector_size(variant, size)?;
        let (edges, limit) = (edges(size.rows), u64::from(u32::MAX) - 1);
        if edges > limit {
            let most = limit / DEGREE;
            let reason = format!(
                "{size} vertices have {edges} edges; edge offsets are 32-bit integers (limit \
                 {limit}, so at most {most} vertices)"
            );
            return Err(bad_size(variant, reason));
        }
        Ok(())
    }

    fn inputs(
        &self,
        variant: &'static Variant,
        size: Size,
        seed: u64,
        _: InputChoice<'_>,
    ) -> Inputs {
        // The variant names the generator (layered uniform for any other name); the graph
        // goes as 32-bit words carried in float slots, bit for bit.
        let generator = variant.name.parse().unwrap_or(Generator::Uniform);
        let graph = generate(generator, size.rows as usize, seed);
        let levels: Vec<f64> = cpu_bfs(&graph).into_iter().map(f64::from).collect();
        Inputs::new(size, floats(graph.offsets), floats(graph.edges)).with_exact(levels)
    }

    /// The search's depth, as the CPU reference found it (a verified run matched it).
    fn levels(&self, inputs: &Inputs) -> Option<u64> {
        Some(depth(&inputs.reference))
    }

    fn build(&self, cx: &mut Build<'_>) -> Result<Built, ExecError> {
        let expand = cx.kernel()?;
        let update = cx.backend.kernel(cx.program()?, "bfs_update")?;
        let inputs = cx.inputs;
        let n = inputs.a.len().saturating_sub(1);
        let plan = Plan {
            expand,
            update,
            shape: cx.side.shape,
            offsets: cx.upload(&inputs.a)?,
            edges: cx.upload(&inputs.b)?,
            mask: cx.output(n)?,
            updating: cx.output(n)?,
            visited: cx.output(n)?,
            cost: cx.output(n)?,
            over: cx.output(1)?,
            n: n as u32,
        };
        let (cost, n) = (plan.cost, inputs.size.rows as usize);
        Ok(Built::into(vec![Step::Loop(Box::new(plan))], cost, n))
    }

    fn check(&self, _: &Ran, inputs: &Inputs, got: &[f32]) -> Verification {
        check(got, &inputs.reference)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_grow_by_four_and_cover_the_vertices() {
        assert_eq!(layer_ends(1), vec![1]);
        assert_eq!(layer_ends(30), vec![1, 5, 21, 30]);
        assert_eq!(levels(1 << 16), 9);
        assert_eq!(levels(1 << 20), 11);
        assert_eq!(levels(1 << 24), 13);
    }

    #[test]
    fn generators_are_seeded_and_reproducible() {
        for g in [Generator::Uniform, Generator::PowerLaw] {
            let a = generate(g, 5000, 3);
            assert_eq!(a, generate(g, 5000, 3));
            assert_ne!(a, generate(g, 5000, 4));
            assert_eq!(a.edges.len() as u64, edges(5000));
            assert_eq!(a.vertices(), 5000);
            assert!(a.edges.iter().all(|&t| (t as usize) < 5000));
        }
    }

    #[test]
    fn every_vertex_sits_at_its_layer() {
        for g in [Generator::Uniform, Generator::PowerLaw] {
            for n in [1usize, 2, 6, 100, 4099] {
                let graph = generate(g, n, 9);
                let level = cpu_bfs(&graph);
                let ends = layer_ends(n as u64);
                for (v, l) in level.iter().enumerate() {
                    let layer = ends.partition_point(|&e| e <= v as u64) as i32;
                    assert_eq!(*l, layer, "{g:?} n={n} v={v}");
                }
                let deepest = level.iter().max().copied().unwrap_or(0);
                assert_eq!(deepest as u64 + 1, levels(n as u64), "{g:?} n={n}");
            }
        }
    }

    #[test]
    fn power_law_has_hubs_and_uniform_has_none() {
        let n = 1 << 14;
        let max_degree = |g: &Graph| {
            g.offsets
                .windows(2)
                .map(|w| (w[1] - w[0]) as usize)
                .max()
                .unwrap()
        };
        let uniform = max_degree(&generate(Generator::Uniform, n, 1));
        let power = max_degree(&generate(Generator::PowerLaw, n, 1));
        assert!(uniform < 40, "uniform max out-degree {uniform}");
        assert!(
            power > 100 * DEGREE as usize,
            "power-law max out-degree {power}"
        );
    }

    #[test]
    fn random_graphs_reach_every_vertex_with_every_edge() {
        for g in [Generator::RandomUniform, Generator::RandomPowerLaw] {
            let a = generate(g, 5000, 3);
            assert_eq!(a, generate(g, 5000, 3));
            assert_ne!(a, generate(g, 5000, 4));
            assert_eq!(a.edges.len() as u64, edges(5000), "{g:?}");
            let level = cpu_bfs(&a);
            assert!(level.iter().all(|&l| l != UNREACHED), "{g:?}");
            let d = depth(&level.iter().map(|&l| f64::from(l)).collect::<Vec<_>>());
            // Random graphs of mean degree 8 are shallow: a few levels, not the size's log4.
            assert!((3..=12).contains(&d), "{g:?} depth {d}");
        }
        let max_degree = |g: &Graph| {
            g.offsets
                .windows(2)
                .map(|w| (w[1] - w[0]) as usize)
                .max()
                .unwrap()
        };
        let n = 1 << 14;
        let uniform = max_degree(&generate(Generator::RandomUniform, n, 1));
        let power = max_degree(&generate(Generator::RandomPowerLaw, n, 1));
        assert!(uniform < 40, "uniform max degree {uniform}");
        assert!(power > 20 * DEGREE as usize, "power-law max degree {power}");
    }

    #[test]
    fn depth_counts_the_source_level() {
        assert_eq!(depth(&[0.0, 1.0, 2.0, 1.0]), 3);
        assert_eq!(depth(&[0.0]), 1);
        assert_eq!(depth(&[]), 0);
        assert!(is_layered("uniform") && !is_layered("random-uniform"));
        assert!(bytes_of("random-uniform", 1000) < bytes_of("uniform", 1000));
    }

    #[test]
    fn byte_counts_are_exact_for_accepted_sizes_and_saturate_beyond() {
        // Past the largest size `check_size` accepts (its edges need 32-bit offsets): 17
        // levels, nowhere near the limit.
        let n = u64::from(u32::MAX) - 1;
        assert_eq!(levels(n), 17);
        assert_eq!(
            bytes_of("uniform", n),
            (17 * 2 * n + (n + 1) + 2 * 8 * n + 4 * n) * 4
        );
        assert_eq!(
            bytes_of("random-uniform", n),
            ((n + 1) + 2 * 8 * n + 4 * n) * 4
        );
        // Beyond it the sums overflow: pinned at the maximum, never wrapped to a small count.
        for n in [u64::MAX / 64, u64::MAX / 8, u64::MAX - 1, u64::MAX] {
            assert_eq!(bytes_of("power-law", n), u64::MAX, "{n}");
            assert_eq!(bytes_of("random-power-law", n), u64::MAX, "{n}");
        }
    }

    #[test]
    fn cpu_bfs_of_a_small_graph() {
        // 0 -> 1, 0 -> 2, 2 -> 3, 3 -> 0; 4 unreachable.
        let g = csr(5, &[0, 0, 2, 3], &[1, 2, 3, 0]);
        assert_eq!(cpu_bfs(&g), vec![0, 1, 1, 2, UNREACHED]);
    }

    #[test]
    fn emulation_matches_the_cpu_search() {
        let graph = generate(Generator::PowerLaw, 3000, 5);
        let n = graph.vertices();
        let bits = |v: &[u32]| v.iter().map(|x| f32::from_bits(*x)).collect::<Vec<f32>>();
        let mut one_hot = vec![0u32; n];
        one_hot[0] = 1;
        let mut cost = vec![UNREACHED as u32; n];
        cost[0] = 0;
        let mut e = vec![
            bits(&graph.offsets),
            bits(&graph.edges),
            bits(&one_hot),
            bits(&vec![0; n]),
            bits(&one_hot),
            bits(&cost),
        ];
        let mut rounds = 0;
        loop {
            rounds += 1;
            emulate("bfs_expand", &mut e, n).unwrap();
            let mut u = vec![e[2].clone(), e[3].clone(), e[4].clone(), vec![0.0]];
            emulate("bfs_update", &mut u, n).unwrap();
            (e[2], e[3], e[4]) = (u[0].clone(), u[1].clone(), u[2].clone());
            if u[3][0].to_bits() == 0 {
                break;
            }
        }
        assert_eq!(rounds as u64, levels(n as u64));
        let want: Vec<f64> = cpu_bfs(&graph).into_iter().map(f64::from).collect();
        assert!(check(&e[5], &want).ok);
        let mut wrong = e[5].clone();
        wrong[7] = f32::from_bits(99);
        assert!(!check(&wrong, &want).ok);
    }
}
