//! The BFS family: level-synchronous breadth-first search as in Rodinia's `bfs` (two kernels
//! per level, a one-word flag read back after each), its seeded graph generators, the CPU
//! reference, and the runner that drives a backend level by level. The kernels are
//! `kernels_*/bfs.*`.
//!
//! # Graphs
//!
//! `size` is the vertex count `n`; every graph has exactly `n × DEGREE` directed edges and is
//! searched from vertex 0. Vertices lie in layers of growing width (1, 4, 16, … from the
//! source; the last layer takes the rest): every vertex of layer `k > 0` has one edge from a
//! random vertex of layer `k − 1`, and no edge ever reaches more than one layer deeper than
//! its source. So each vertex's BFS level is its layer, and the number of levels is a
//! function of `n` alone ([`levels`]): both APIs run the same, known number of launches, and
//! time per level is total time / levels. The remaining edges make the two generators:
//!
//! * `uniform`: sources and targets uniform (targets among the vertices at most one layer
//!   deeper than the source), out-degrees about Poisson(`DEGREE`) — Rodinia's kind of graph;
//! * `power-law`: sources drawn from a power law (density ∝ rank^(−2/3), ranks scattered over
//!   the vertices), so a few hubs hold a large share of the edges: a few work-items of the
//!   expand kernel loop over very long edge lists.
//!
//! ## Random graphs: levels measured, not known
//!
//! `random-uniform` and `random-power-law` have no layers: each vertex `v` picks `DEGREE/2`
//! partners and every pair is an edge both ways (undirected, as Rodinia's `graphgen`), so
//! the graph again has exactly `n × DEGREE` edges. Each `v > 0` takes its first partner
//! among the vertices before it, so every vertex is reachable from vertex 0 and GTEPS counts
//! every edge.
//!
//! * `random-uniform`: the other partners uniform over all vertices (Erdős–Rényi-like, mean
//!   degree `DEGREE`, as Rodinia's generator; its first partner uniform over the earlier ones);
//! * `random-power-law`: preferential attachment (Barabási–Albert): every partner is the end
//!   of a uniformly drawn earlier edge, so a vertex is picked in proportion to its degree and
//!   degrees follow a power law (exponent 3); vertex 0 starts with self-loops.
//!
//! Their depth is whatever the graph gives: [`depth`] counts it from the CPU BFS, and the
//! device run must reach every vertex at the same level.
//!
//! # Timing
//!
//! One run starts from a fresh state (uploaded before the first level, untimed) and loops:
//! clear the flag (one word up), expand, update, read the flag (one word down). Per level the
//! device clock gives the two kernels' time; the host clock spans the whole level, so host
//! clock − device clock is what launching, waiting and the flag's two transfers cost. A run's
//! [`Timing`] adds the levels up, as every multi-step run does.
//!
//! # Metric
//!
//! GTEPS: edges of the graph (`n × DEGREE`, all reachable) per second of one whole search.

use std::time::Instant;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::backend::fake::{FakeLaunch, KernelEmulation};
use crate::backend::{
    Arg, Backend, BackendError, BufferId, KernelId, LaunchShape, ProgramId, Seconds, Timing,
};
use crate::families::error::WorkloadError;
use crate::families::family::{bad_size, vector_size, Family, InputChoice, QuickSize};
use crate::families::footprint::{add, mul, plain, Footprint};
use crate::families::id::FamilyId;
use crate::families::metric::Metric;
use crate::families::plan::{Build, Built, ExecError, Inputs, LaunchLoop, Ran, Step};
use crate::families::reference::{self, Verification};
use crate::families::size::Size;
use crate::families::variant::GroupRule::*;
use crate::families::variant::{points, v, Variant};

/// The variants are the graph generators; one kernel pair searches them all.
const VARIANTS: [Variant; 4] = [
    points(
        v(
            FamilyId::Bfs,
            "uniform",
            "bfs_expand",
            Cover { per_item: 1 },
            "Rodinia's level-synchronous BFS on a seeded graph with uniform edges",
        ),
        &[],
    ),
    points(
        v(
            FamilyId::Bfs,
            "power-law",
            "bfs_expand",
            Cover { per_item: 1 },
            "Rodinia's level-synchronous BFS on a seeded graph with power-law out-degrees",
        ),
        &[],
    ),
    points(
        v(
            FamilyId::Bfs,
            "random-uniform",
            "bfs_expand",
            Cover { per_item: 1 },
            "Rodinia's BFS on a seeded uniform random graph (as Rodinia's graphgen; levels measured)",
        ),
        &[],
    ),
    points(
        v(
            FamilyId::Bfs,
            "random-power-law",
            "bfs_expand",
            Cover { per_item: 1 },
            "Rodinia's BFS on a seeded preferential-attachment power-law graph (levels measured)",
        ),
        &[],
    ),
];

/// Edges per vertex (the graph has exactly `n × DEGREE` edges).
pub const DEGREE: u64 = 8;
/// Each layer is this many times wider than the one before it.
pub const GROWTH: u64 = 4;
/// The level of a vertex not reached (the kernels' `cost` before it is reached).
pub const UNREACHED: i32 = -1;

/// How the edges are drawn (see the module docs): the layered graphs' extra edges, or the
/// random graphs' partners.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generator {
    Uniform,
    PowerLaw,
    RandomUniform,
    RandomPowerLaw,
}

impl Generator {
    /// The generator a variant names; layered uniform for anything else.
    pub fn of(variant: &Variant) -> Generator {
        match variant.name {
            "power-law" => Generator::PowerLaw,
            "random-uniform" => Generator::RandomUniform,
            "random-power-law" => Generator::RandomPowerLaw,
            _ => Generator::Uniform,
        }
    }

    /// Whether the graph is layered, its number of levels a function of its size.
    pub fn is_layered(self) -> bool {
        matches!(self, Generator::Uniform | Generator::PowerLaw)
    }
}

/// Whether the variant's graph is layered (its levels known from the size: [`levels`]).
pub fn is_layered(variant: &str) -> bool {
    !variant.starts_with("random-")
}

/// The number of levels of a search: the deepest level reached, plus one (the source's).
pub fn depth(level: &[f64]) -> u64 {
    level
        .iter()
        .map(|&l| l as i64 + 1)
        .max()
        .unwrap_or(0)
        .max(0) as u64
}

/// A directed graph in CSR form: the edges of vertex `v` are `edges[offsets[v]..offsets[v+1]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Graph {
    pub offsets: Vec<u32>,
    pub edges: Vec<u32>,
}

impl Graph {
    pub fn vertices(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    pub fn out_degree(&self, v: usize) -> usize {
        (self.offsets[v + 1] - self.offsets[v]) as usize
    }
}

/// The end (exclusive) of each layer of an `n`-vertex graph.
pub fn layer_ends(n: u64) -> Vec<u64> {
    let mut ends = Vec::new();
    let (mut end, mut width) = (0u64, 1u64);
    while end < n {
        end = end.saturating_add(width).min(n);
        ends.push(end);
        width = width.saturating_mul(GROWTH);
    }
    ends
}

/// BFS levels of an `n`-vertex graph from vertex 0 (the source's level counts): also the
/// number of expand/update rounds of one search, since the last round finds nothing new.
pub fn levels(n: u64) -> u64 {
    layer_ends(n).len() as u64
}

/// Edges of an `n`-vertex graph.
pub fn edges(n: u64) -> u64 {
    n.saturating_mul(DEGREE)
}

/// Bytes one search moves at least, as a model: every round reads both masks once, and the
/// whole search reads the CSR arrays, one `visited` word per edge, and writes `cost`, `mask`,
/// `updating` and `visited` once per vertex. For reference only: the metric is GTEPS.
///
/// Saturating, as `work_of` is: sizes `check_size` accepts (under 2^32 vertices) stay below
/// 2^40 bytes, but a count asked of a larger `n` pins at `u64::MAX`, visibly wrong, where a
/// wrapped one would look plausible.
pub fn bytes(n: u64) -> u64 {
    let mask_reads = levels(n).saturating_mul(2).saturating_mul(n);
    mask_reads.saturating_add(search_words(n)).saturating_mul(4)
}

/// Bytes of the model for a variant: layered graphs as [`bytes`]; random graphs without the
/// per-level mask reads (their level count is measured, not known here): a lower bound.
pub fn bytes_of(variant: &str, n: u64) -> u64 {
    if is_layered(variant) {
        return bytes(n);
    }
    search_words(n).saturating_mul(4)
}

/// Words one search moves apart from the per-level mask reads (see [`bytes`]): the CSR
/// arrays (`n + 1` offsets, the edges), one `visited` word per edge, four words per vertex.
/// Saturating: [`bytes`] says why.
fn search_words(n: u64) -> u64 {
    let csr = n.saturating_add(1).saturating_add(edges(n));
    csr.saturating_add(edges(n))
        .saturating_add(n.saturating_mul(4))
}

/// The seeded graph of `generator` with `n` vertices (see the module docs).
pub fn generate(generator: Generator, n: usize, seed: u64) -> Graph {
    if !generator.is_layered() {
        return random(generator, n, seed);
    }
    let ends: Vec<usize> = layer_ends(n as u64).iter().map(|e| *e as usize).collect();
    let m = edges(n as u64) as usize;
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut src: Vec<u32> = Vec::with_capacity(m);
    let mut dst: Vec<u32> = Vec::with_capacity(m);
    // The layer tree: it fixes every vertex's level.
    for k in 1..ends.len() {
        let parents = if k == 1 { 0 } else { ends[k - 2] }..ends[k - 1];
        for v in ends[k - 1]..ends[k] {
            src.push(rng.gen_range(parents.clone()) as u32);
            dst.push(v as u32);
        }
    }
    while src.len() < m {
        let s = match generator {
            Generator::Uniform => rng.gen_range(0..n),
            _ => power_law_vertex(&mut rng, n),
        };
        // Never deeper than one layer below the source, so no level shrinks.
        let layer = ends.partition_point(|&e| e <= s);
        let limit = ends[(layer + 1).min(ends.len() - 1)];
        src.push(s as u32);
        dst.push(rng.gen_range(0..limit) as u32);
    }
    csr(n, &src, &dst)
}

/// A random graph (see the module docs): `DEGREE / 2` partners per vertex, each pair an edge
/// both ways; vertex `v > 0` takes its first partner before it, so all are reachable from 0.
fn random(generator: Generator, n: usize, seed: u64) -> Graph {
    let m = edges(n as u64) as usize;
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut src: Vec<u32> = Vec::with_capacity(m);
    let mut dst: Vec<u32> = Vec::with_capacity(m);
    for v in 0..n {
        for k in 0..DEGREE / 2 {
            let u = match generator {
                _ if v == 0 && generator == Generator::RandomPowerLaw => 0,
                // `src` holds every end of every edge so far: degree-proportional.
                Generator::RandomPowerLaw => src[rng.gen_range(0..src.len())] as usize,
                _ if k == 0 && v > 0 => rng.gen_range(0..v),
                _ => rng.gen_range(0..n),
            };
            src.extend([v as u32, u as u32]);
            dst.extend([u as u32, v as u32]);
        }
    }
    csr(n, &src, &dst)
}

/// A vertex of rank `n · u³` (density ∝ rank^(−2/3)), the rank scattered over the vertices by
/// multiplying with a prime that shares no factor with `n` below 2^32.
fn power_law_vertex(rng: &mut SmallRng, n: usize) -> usize {
    const SCATTER: u64 = 2_654_435_761;
    let u: f64 = rng.gen();
    let rank = ((n as f64) * u * u * u) as u64 % n as u64;
    (rank * SCATTER % n as u64) as usize
}

/// CSR of an edge list, each vertex's edges in the order the list gives them.
fn csr(n: usize, src: &[u32], dst: &[u32]) -> Graph {
    let mut offsets = vec![0u32; n + 1];
    for s in src {
        offsets[*s as usize + 1] += 1;
    }
    for v in 0..n {
        offsets[v + 1] += offsets[v];
    }
    let mut next: Vec<u32> = offsets[..n].to_vec();
    let mut edges = vec![0u32; src.len()];
    for (s, d) in src.iter().zip(dst) {
        let slot = &mut next[*s as usize];
        edges[*slot as usize] = *d;
        *slot += 1;
    }
    Graph { offsets, edges }
}

/// The CPU reference: each vertex's level from vertex 0, [`UNREACHED`] where none.
pub fn cpu_bfs(graph: &Graph) -> Vec<i32> {
    let n = graph.vertices();
    let mut level = vec![UNREACHED; n];
    if n == 0 {
        return level;
    }
    let mut queue = std::collections::VecDeque::from([0usize]);
    level[0] = 0;
    while let Some(v) = queue.pop_front() {
        let (a, b) = (graph.offsets[v] as usize, graph.offsets[v + 1] as usize);
        for &t in &graph.edges[a..b] {
            let t = t as usize;
            if level[t] == UNREACHED {
                level[t] = level[v] + 1;
                queue.push_back(t);
            }
        }
    }
    level
}

/// Host inputs of one BFS configuration: the graph as 32-bit words carried in float slots
/// (bit for bit, the way [`Backend::upload_u32`] carries them) and the reference levels.
pub struct Problem {
    pub offsets: Vec<f32>,
    pub edges: Vec<f32>,
    pub levels: Vec<f64>,
}

/// The graph of `generator` at `size` and `seed`, with its CPU BFS.
pub fn problem(generator: Generator, size: Size, seed: u64) -> Problem {
    let graph = generate(generator, size.rows as usize, seed);
    let levels = cpu_bfs(&graph).into_iter().map(f64::from).collect();
    let words = |v: Vec<u32>| v.into_iter().map(f32::from_bits).collect();
    Problem {
        offsets: words(graph.offsets),
        edges: words(graph.edges),
        levels,
    }
}

/// The device side of one search: both kernels and every buffer.
#[derive(Debug, Clone)]
pub struct Plan {
    expand: KernelId,
    update: KernelId,
    shape: LaunchShape,
    offsets: BufferId,
    edges: BufferId,
    mask: BufferId,
    updating: BufferId,
    visited: BufferId,
    pub cost: BufferId,
    over: BufferId,
    n: u32,
}

/// Compiled kernels and staged graph: allocates through `alloc` (which records each buffer
/// for release) and uploads the CSR arrays.
pub fn plan(
    backend: &mut dyn Backend,
    program: ProgramId,
    expand: KernelId,
    problem: (&[f32], &[f32]),
    shape: LaunchShape,
    alloc: &mut dyn FnMut(&mut dyn Backend, usize) -> Result<BufferId, BackendError>,
) -> Result<Plan, BackendError> {
    let update = backend.kernel(program, "bfs_update")?;
    let n = problem.0.len().saturating_sub(1);
    let offsets = alloc(backend, problem.0.len())?;
    backend.upload(offsets, problem.0)?;
    let edges = alloc(backend, problem.1.len().max(1))?;
    if !problem.1.is_empty() {
        backend.upload(edges, problem.1)?;
    }
    Ok(Plan {
        expand,
        update,
        shape,
        offsets,
        edges,
        mask: alloc(backend, n)?,
        updating: alloc(backend, n)?,
        visited: alloc(backend, n)?,
        cost: alloc(backend, n)?,
        over: alloc(backend, 1)?,
        n: n as u32,
    })
}

/// One level's clocks: the two kernels on the device clock, the whole level on the host's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LevelTiming {
    pub kernels: Option<Seconds>,
    pub wall: Seconds,
}

/// Uploads the start state: vertex 0 is the frontier, reached at level 0.
fn reset(backend: &mut dyn Backend, p: &Plan) -> Result<(), BackendError> {
    let n = p.n as usize;
    let mut one_hot = vec![0u32; n];
    one_hot[0] = 1;
    backend.upload_u32(p.mask, &one_hot)?;
    backend.upload_u32(p.visited, &one_hot)?;
    backend.upload_u32(p.updating, &vec![0; n])?;
    let mut cost = vec![UNREACHED as u32; n];
    cost[0] = 0;
    backend.upload_u32(p.cost, &cost)
}

/// One whole search, level by level (see the module docs); the timings of every level.
/// More rounds than vertices means the device never cleared the flag: an error, not a hang.
pub fn run_levels(backend: &mut dyn Backend, p: &Plan) -> Result<Vec<LevelTiming>, BackendError> {
    reset(backend, p)?;
    let expand = [
        Arg::Buffer(p.offsets),
        Arg::Buffer(p.edges),
        Arg::Buffer(p.mask),
        Arg::Buffer(p.updating),
        Arg::Buffer(p.visited),
        Arg::Buffer(p.cost),
        Arg::U32(p.n),
    ];
    let update = [
        Arg::Buffer(p.mask),
        Arg::Buffer(p.updating),
        Arg::Buffer(p.visited),
        Arg::Buffer(p.over),
        Arg::U32(p.n),
    ];
    let mut out = Vec::new();
    loop {
        let started = Instant::now();
        backend.upload_u32(p.over, &[0])?;
        let a = backend.launch(p.expand, p.shape, &expand)?;
        let b = backend.launch(p.update, p.shape, &update)?;
        let mut flag = [0u32];
        backend.download_u32(p.over, &mut flag)?;
        out.push(LevelTiming {
            kernels: a.device.zip(b.device).map(|(x, y)| Seconds(x.0 + y.0)),
            wall: Seconds(started.elapsed().as_secs_f64()),
        });
        if flag[0] == 0 {
            return Ok(out);
        }
        if out.len() > p.n as usize {
            return Err(BackendError::driver(
                backend.api(),
                "bfs",
                format!("the flag was still set after {} levels", out.len()),
            ));
        }
    }
}

/// The levels added up: one run's [`Timing`].
pub fn total(levels: &[LevelTiming]) -> Timing {
    let device = levels
        .iter()
        .try_fold(0.0, |acc, l| l.kernels.map(|k| acc + k.0));
    Timing::clocks(
        Seconds(levels.iter().map(|l| l.wall.0).sum()),
        device.map(Seconds),
    )
}

/// One whole search as one timed run.
pub fn run(backend: &mut dyn Backend, p: &Plan) -> Result<Timing, BackendError> {
    Ok(total(&run_levels(backend, p)?))
}

/// Device levels (`cost`, carried bit for bit in floats) against the CPU's, exactly.
pub fn check(got: &[f32], want: &[f64]) -> Verification {
    let levels: Vec<f32> = got.iter().map(|g| g.to_bits() as i32 as f32).collect();
    reference::compare(&levels, want, &vec![0.0; want.len()])
}

/// The host emulation of both kernels, for the fake backend: `bufs` are the kernel's buffer
/// arguments in order (as floats carrying 32-bit words), `n` its count.
fn emulate(kernel: &str, bufs: &mut [Vec<f32>], n: usize) -> Result<(), String> {
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
        (k, b) => Err(format!(
            "kernel '{k}' with {} buffers is not a BFS kernel",
            b.len()
        )),
    }
}

impl LaunchLoop for Plan {
    fn run(&self, backend: &mut dyn Backend) -> Result<Timing, BackendError> {
        run(backend, self)
    }
}

pub struct Bfs;

/// A BFS kernel on copies of its buffer arguments, stored back whole: it updates several.
fn emulate_level(l: &mut FakeLaunch<'_>) -> Result<(), BackendError> {
    let ids = l.buffers();
    let n = l.count(l.args().len().saturating_sub(1))?;
    let mut bufs = ids
        .iter()
        .map(|b| l.data(*b).map(<[f32]>::to_vec))
        .collect::<Result<Vec<_>, _>>()?;
    let kernel = l.kernel().to_string();
    emulate(&kernel, &mut bufs, n).map_err(|e| l.refuse(&e))?;
    for (id, data) in ids.into_iter().zip(bufs) {
        l.replace(id, data)?;
    }
    Ok(())
}

impl Family for Bfs {
    fn quick_size(&self) -> Option<QuickSize> {
        Some(QuickSize::same("2^12"))
    }

    fn charts(&self) -> &'static [&'static str] {
        &["bfs"]
    }

    fn id(&self) -> FamilyId {
        FamilyId::Bfs
    }

    fn kernel_file(&self) -> &'static str {
        "bfs"
    }

    fn metric(&self) -> Metric {
        Metric::Teps
    }

    fn variants(&self) -> &'static [Variant] {
        &VARIANTS
    }

    /// One vertex, a few layers, and a size no work-group size divides.
    fn test_sizes(&self) -> Vec<Size> {
        vec![Size::vector(1), Size::vector(1000), Size::vector(5003)]
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
        if edges(size.rows) >= u64::from(u32::MAX) {
            return Err(bad_size(
                variant,
                format!(
                    "{size} vertices have {} edges; edge offsets are 32-bit integers (limit {}, \
                     so at most {} vertices)",
                    edges(size.rows),
                    u32::MAX - 1,
                    (u64::from(u32::MAX) - 1) / DEGREE
                ),
            ));
        }
        Ok(())
    }

    fn runtime_bound(&self, _size: Size) -> bool {
        true
    }

    fn inputs(
        &self,
        variant: &'static Variant,
        size: Size,
        seed: u64,
        _: InputChoice<'_>,
    ) -> Inputs {
        let p = problem(Generator::of(variant), size, seed);
        let tolerances = vec![0.0; p.levels.len()];
        Inputs::new(size, p.offsets, p.edges).with_reference(p.levels, tolerances)
    }

    /// The variant picks the graph.
    fn input_key(&self, variant: &'static Variant) -> &'static str {
        variant.name
    }

    /// The search's depth from the source, as the CPU reference found it (a verified run
    /// matched it vertex by vertex).
    fn levels(&self, inputs: &Inputs) -> Option<u64> {
        Some(depth(&inputs.reference))
    }

    fn build(&self, cx: &mut Build<'_>) -> Result<Built, ExecError> {
        let k = cx.kernel()?;
        let program = cx.program()?;
        let (inputs, shape) = (cx.inputs, cx.shape());
        let owned = &mut *cx.owned;
        let mut alloc = |b: &mut dyn Backend, len: usize| {
            let id = b.alloc(len.max(1))?;
            owned.push(id);
            Ok(id)
        };
        let plan = plan(
            cx.backend,
            program,
            k,
            (&inputs.a, &inputs.b),
            shape,
            &mut alloc,
        )?;
        let (cost, n) = (plan.cost, inputs.size.rows as usize);
        Ok(Built::into(vec![Step::Loop(Box::new(plan))], cost, n))
    }

    fn emulation(&self, kernel: &str) -> Option<KernelEmulation> {
        kernel
            .starts_with("bfs_")
            .then_some(emulate_level as KernelEmulation)
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
        let max_degree = |g: &Graph| (0..g.vertices()).map(|v| g.out_degree(v)).max().unwrap();
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
        let max_degree = |g: &Graph| (0..g.vertices()).map(|v| g.out_degree(v)).max().unwrap();
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
        assert_eq!(bytes(n), (17 * 2 * n + (n + 1) + 2 * 8 * n + 4 * n) * 4);
        assert_eq!(
            bytes_of("random-uniform", n),
            ((n + 1) + 2 * 8 * n + 4 * n) * 4
        );
        // Beyond it the sums overflow: pinned at the maximum, never wrapped to a small count.
        for n in [u64::MAX / 64, u64::MAX / 8, u64::MAX - 1, u64::MAX] {
            assert_eq!(bytes(n), u64::MAX, "{n}");
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
