//! The BFS family's graphs: the layered and random generators (see the family's docs), their
//! sizes and levels, the CSR layout both APIs search, and the CPU reference search.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Edges per vertex (the graph has exactly `n × DEGREE` edges).
pub const DEGREE: u64 = 8;
/// Each layer is this many times wider than the one before it.
pub const GROWTH: u64 = 4;
/// The level of a vertex not reached (the kernels' `cost` before it is reached).
pub const UNREACHED: i32 = -1;

/// How the edges are drawn: the layered graphs' extra edges, or the random graphs' partners.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::EnumString)]
#[strum(serialize_all = "kebab-case")]
pub enum Generator {
    Uniform,
    PowerLaw,
    RandomUniform,
    RandomPowerLaw,
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

pub fn edges(n: u64) -> u64 {
    n.saturating_mul(DEGREE)
}

/// Bytes one search moves at least (a model for reference; the metric is GTEPS): the CSR
/// arrays (`n + 1` offsets, the edges), one `visited` word per edge, `cost`, `mask`, `updating`
/// and `visited` written once per vertex, and for a layered graph both masks read once per
/// level (a random graph's level count is not known here: a lower bound). Saturating, as
/// [`Family::work`](crate::families::Family::work) is; accepted sizes stay below 2^40 bytes.
pub fn bytes_of(variant: &str, n: u64) -> u64 {
    let csr = n.saturating_add(1).saturating_add(edges(n));
    let words = csr
        .saturating_add(edges(n))
        .saturating_add(n.saturating_mul(4));
    let mask_reads = if is_layered(variant) {
        levels(n).saturating_mul(2).saturating_mul(n)
    } else {
        0
    };
    mask_reads.saturating_add(words).saturating_mul(4)
}

/// The seeded graph of `generator` with `n` vertices (see the module docs).
pub fn generate(generator: Generator, n: usize, seed: u64) -> Graph {
    if let Generator::RandomUniform | Generator::RandomPowerLaw = generator {
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

/// A random graph (see the module docs).
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
pub(super) fn csr(n: usize, src: &[u32], dst: &[u32]) -> Graph {
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
