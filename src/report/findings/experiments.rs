//! The seed papers' 39 experiments as data: each names the suite steps and comparisons that
//! answer it and the rule by which our number agrees with the seed's conclusion. The
//! published numbers are in [`crate::paper`], keyed by the same ids. Nothing here is a
//! result: every number and every statement of absence is computed from a suite folder.

use crate::paper::Source;

/// What one check reads from a suite folder, by step (its folder below the suite's) and
/// comparison id.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Measure {
    /// The OpenCL-against-CUDA PR [95% CI] of one comparison.
    Pr {
        step: &'static str,
        comparison: &'static str,
    },
    /// Every fair OpenCL-against-CUDA PR of a step.
    FairRows { step: &'static str },
    /// Every OpenCL-against-CUDA PR of a step, fair or not.
    AllRows { step: &'static str },
    /// Per API, the median time of `from` over that of `to`: above 1, `to` is faster.
    Speedup {
        step: &'static str,
        from: &'static str,
        to: &'static str,
    },
    /// Per API, the median time of `calls` calls of one comparison on the device that ran it:
    /// for a seed that published an absolute time.
    Time {
        step: &'static str,
        comparison: &'static str,
        calls: u32,
    },
    /// Each side's bandwidth as a share of the Eq. 2 peak the run recorded.
    PeakShare {
        step: &'static str,
        comparison: &'static str,
    },
    /// Table V: both front ends' PTX of the FFT by instruction class (`table-v.csv`).
    TableV { step: &'static str },
    /// Which of the named applications (paper name, family) have a fair row in any step.
    Twins {
        apps: &'static [(&'static str, &'static str)],
    },
    /// Both front ends' PTX loads and stores of one comparison's kernel, by memory space
    /// (`ptx_classes.csv` of `clvscu inspect`).
    MemoryCode {
        step: &'static str,
        comparison: &'static str,
    },
    /// Per API, the time of each point of a local-size sweep against its number of
    /// work-groups, fitted through the origin over the points up to `up_to` work-items.
    GroupCost {
        step: &'static str,
        sweep: &'static str,
        up_to: u32,
    },
}

impl Measure {
    /// The step the measure reads, `None` for one that reads every step.
    pub fn step(&self) -> Option<&'static str> {
        match *self {
            Measure::Pr { step, .. }
            | Measure::FairRows { step }
            | Measure::AllRows { step }
            | Measure::Speedup { step, .. }
            | Measure::PeakShare { step, .. }
            | Measure::Time { step, .. }
            | Measure::TableV { step }
            | Measure::MemoryCode { step, .. }
            | Measure::GroupCost { step, .. } => Some(step),
            Measure::Twins { .. } => None,
        }
    }
}

/// When our number agrees with the seed's conclusion (or an explanation's check is shown).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rule {
    Similar,
    OpenClFaster,
    OpenClSlower,
    MostSimilar,
    MostAtLeast(f64),
    SomeNotSimilar,
    Faster,
    NoGain,
    MoreOpenClInstructions,
    AllTwins,
    NoRule,
    Below(f64),
    NearPeak(f64),
    SameMemoryCode,
    FollowsGroups(f64),
}

impl Rule {
    pub fn text(self) -> String {
        let (lo, hi) = (crate::stats::SIMILAR_LO, crate::stats::SIMILAR_HI);
        match self {
            Rule::Similar => format!("agrees when the PR's 95% CI lies in [{lo}, {hi}]"),
            Rule::OpenClFaster => "agrees when the PR's 95% CI lies above 1".into(),
            Rule::OpenClSlower => format!("agrees when the PR's 95% CI lies below {lo}"),
            Rule::MostSimilar => "agrees when more than half of the rows are similar".into(),
            Rule::MostAtLeast(x) => {
                format!("agrees when more than half of the rows have PR ≥ {x}")
            }
            Rule::SomeNotSimilar => "agrees when at least one row is not similar".into(),
            Rule::Faster => {
                "agrees when the speedup's CI lies above 1 on every API measured".into()
            }
            Rule::NoGain => {
                format!("agrees when the speedup's CI lies in [{lo}, {hi}] on every API measured")
            }
            Rule::MoreOpenClInstructions => {
                "agrees when OpenCL's arithmetic, logic and flow-control \
                 instructions are at least 1.5 times CUDA's"
                    .into()
            }
            Rule::AllTwins => "agrees when every application has a fair row".into(),
            Rule::NoRule => {
                "no agreement rule: the seed's number is an absolute time on other hardware".into()
            }
            Rule::Below(x) => {
                format!("agrees when the speedup's CI lies below {x} on every API measured")
            }
            Rule::NearPeak(x) => format!(
                "agrees when every API reaches at least {:.0}% of the peak",
                100.0 * x
            ),
            Rule::SameMemoryCode => "agrees when both front ends' PTX has the same loads and \
                                     stores in every memory space"
                .into(),
            Rule::FollowsGroups(r2) => {
                format!("agrees when time = c × work-groups fits every API measured with R² ≥ {r2}")
            }
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Experiment {
    /// Its key in [`crate::paper::QUOTES`] and [`crate::paper::FILL_ARTICLE`].
    pub id: &'static str,
    pub source: Source,
    pub title: &'static str,
    pub question: &'static str,
    /// What answers it, each with its rule.
    pub checks: &'static [(Measure, Rule)],
}

use Measure::*;
use Rule::*;

const fn pr(step: &'static str, comparison: &'static str) -> Measure {
    Pr { step, comparison }
}

const fn speedup(step: &'static str, from: &'static str, to: &'static str) -> Measure {
    Speedup { step, from, to }
}

const fn peak_share(step: &'static str, comparison: &'static str) -> Measure {
    PeakShare { step, comparison }
}

const fn e(
    id: &'static str,
    source: Source,
    title: &'static str,
    question: &'static str,
    checks: &'static [(Measure, Rule)],
) -> Experiment {
    Experiment {
        id,
        source,
        title,
        question,
        checks,
    }
}

const FANG: Source = Source::Fang2011;
const WP: Source = Source::Whitepaper;
const FILL: Source = Source::FillArticle;

/// The 39 experiments, in the seeds' order.
pub const EXPERIMENTS: &[Experiment] = &[
    e("eq1-similar", FANG, "Eq. 1: the Performance Ratio and \"similar\"",
      "How many fair comparisons are similar by the paper's band?",
      &[(FairRows { step: "fair" }, MostSimilar)]),
    e("table2-apps", FANG, "Table II: the 14 applications",
      "Do all of the paper's applications have OpenCL and CUDA twins measured fairly here?",
      &[(Twins { apps: &crate::paper::FANG_TABLE_II }, AllTwins)]),
    e("eq2-bandwidth", FANG, "Eq. 2 and Fig. 1: achieved bandwidth",
      "Does OpenCL reach more of the memory bandwidth than CUDA?",
      &[(pr("peaks", "bandwidth/read"), OpenClFaster),
        (peak_share("peaks", "bandwidth/read"), NoRule)]),
    e("eq3-flops", FANG, "Eq. 3 and Fig. 2: achieved FLOPS",
      "Do the two APIs reach the same arithmetic throughput?",
      &[(pr("peaks", "flops/fma"), Similar)]),
    e("fig3-unmodified", FANG, "Fig. 3: the comparisons as written",
      "With one development step differing, is CUDA at most 30% faster?",
      &[(AllRows { step: "unfair" }, MostAtLeast(0.77))]),
    e("fig3-fair", FANG, "Fig. 3: the fair comparisons",
      "Is OpenCL similar to CUDA when the comparison is fair?",
      &[(FairRows { step: "fair" }, MostSimilar)]),
    e("fig3-sobel", FANG, "Fig. 3: Sobel with constant memory on the OpenCL side only",
      "Does constant memory on one side make OpenCL faster?",
      &[(pr("memory-spaces", "sobel/constant-opencl-only@16384x16384"), OpenClFaster)]),
    e("fig4-md-texture", FANG, "Fig. 4: texture memory in MD",
      "Does reading through the texture path make MD faster?",
      &[(speedup("memory-spaces", "md/lj", "md/lj-tex"), Faster)]),
    e("fig5-spmv-texture", FANG, "Fig. 5: texture memory in SpMV",
      "Does the texture path make SpMV faster, and without it are the APIs similar?",
      &[(speedup("memory-spaces", "spmv-uniform/vector", "spmv-uniform/vector-tex"), Faster),
        (pr("memory-spaces", "spmv-uniform/vector"), Similar)]),
    e("fig6-fdtd-a", FANG, "Fig. 6: FDTD3d unroll point a",
      "Does unrolling the outer z loop (point a) make FDTD3d faster?",
      &[(speedup("compiler", "fdtd3d/none", "fdtd3d/A-both"), Faster)]),
    e("fig7-fdtd-b", FANG, "Fig. 7: FDTD3d unroll point b on the OpenCL side",
      "With the radius loop (point b) unrolled in OpenCL only, is OpenCL faster?",
      &[(pr("compiler", "fdtd3d/B-opencl-only"), OpenClFaster)]),
    e("fig7-fdtd-ab", FANG, "Fig. 7: FDTD3d unroll points a and b on the OpenCL side",
      "With both unroll points in OpenCL only, is OpenCL slower?",
      &[(pr("compiler", "fdtd3d/AB-opencl-only"), OpenClSlower)]),
    e("fig8-sobel-constant", FANG, "Fig. 8: Sobel with and without constant memory",
      "With a global-memory cache, does constant memory still matter for Sobel?",
      &[(speedup("memory-spaces", "sobel/global@16384x16384", "sobel/constant@16384x16384"), NoGain),
        (pr("memory-spaces", "sobel/constant@16384x16384"), Similar)]),
    e("table-v-fft", FANG, "Table V: the PTX of the FFT",
      "Does OpenCL's front end emit far more instructions than CUDA's, and is the FFT then slower?",
      &[(TableV { step: "inspect" }, MoreOpenClInstructions),
        (pr("compiler", "fft/fft512@index=u32"), Similar)]),
    e("bfs-launch", FANG, "BFS: launch time per level",
      "Is OpenCL slower where launches dominate (BFS levels on a small graph, an empty launch)?",
      &[(pr("bfs", "bfs-levels/uniform@size=2^16"), OpenClSlower),
        (pr("runtime", "launch/1x1-blocking"), OpenClSlower)]),
    e("fig9-eight-steps", FANG, "Fig. 9: one development step at a time",
      "Does a difference in one development step move the PR out of the similar band?",
      &[(AllRows { step: "unfair" }, SomeNotSimilar)]),
    e("table-vi-tranp", FANG, "Table VI: TranP on a CPU",
      "On a CPU (PoCL), does the local-memory transpose run slower than the naive one?",
      &[(speedup("cpu", "transpose/local", "transpose/naive"), Faster)]),
    e("table-vi-spmv", FANG, "Table VI: SPMV on a CPU",
      "On a CPU (PoCL), does the warp-oriented SpMV run slower than the scalar one?",
      &[(speedup("cpu", "spmv-uniform/vector", "spmv-uniform/scalar"), Faster)]),
    e("wp-table1", WP, "Table 1: Listings 2 to 7",
      "Is each listing of the whitepaper's matrix-vector product faster than the one before?",
      &[(speedup("table1", "matvec/listing2", "matvec/listing3"), Faster),
        (speedup("table1", "matvec/listing3", "matvec/listing4"), Faster),
        (speedup("table1", "matvec/listing4", "matvec/listing5"), Faster),
        (speedup("table1", "matvec/listing5", "matvec/listing6"), Faster),
        (speedup("table1", "matvec/listing6", "matvec/listing7"), Faster)]),
    e("wp-coalescing", WP, "Coalescing: Listing 3 to Listing 4",
      "Do coalesced reads make Listing 4 faster than Listing 3, at the paper's 60 groups and at a full device?",
      &[(speedup("table1", "matvec/listing3", "matvec/listing4"), Faster),
        (speedup("fair", "matvec/listing3", "matvec/listing4"), Faster)]),
    e("wp-bank-conflicts", WP, "Bank conflicts: Listing 5 to Listing 6",
      "Does the conflict-free reduction make Listing 6 faster?",
      &[(speedup("table1", "matvec/listing5", "matvec/listing6"), Faster)]),
    e("wp-warp-sync", WP, "Warp-synchronous code: Listing 6 to Listing 7",
      "Does the (portable) warp-synchronous last warp make Listing 7 faster?",
      &[(speedup("table1", "matvec/listing6", "matvec/listing7"), Faster)]),
    e("wp-racy-listing7", WP, "Listing 7 as published: no barriers in the last warp",
      "Does CUDA's racy warp-synchronous reduction give CUDA an edge over a portable OpenCL one?",
      &[(pr("unfair", "warp-sync-cuda-only/listing7"), OpenClSlower)]),
    e("wp-groups-per-sm", WP, "Work-groups per multiprocessor",
      "Do more work-groups per multiprocessor make Listing 6 faster?",
      &[(speedup("sweeps", "matvec/listing6@groups=60", "matvec/listing6@groups=1056"), Faster)]),
    e("wp-multiple-32", WP, "Work-group sizes that are multiples of 32",
      "Is a work-group of 128 faster than one of 100 (not a multiple of the warp size)?",
      &[(speedup("fill", "fill/1d@local=100", "fill/1d@local=128"), Faster)]),
    e("wp-constant-broadcast", WP, "Constant memory: one address per warp",
      "Is constant memory slow when the threads of a warp read different addresses?",
      &[(speedup("memory-spaces", "broadcast/constant-divergent", "broadcast/constant-uniform"), Faster)]),
    e("wp-vector-types", WP, "Vector types",
      "Do float4 stores bring no gain over scalar stores?",
      &[(speedup("fill", "fill/1d@local=256", "fill/float4"), NoGain)]),
    e("wp-native-mad", WP, "`native_*` functions and fast math",
      "Do the native (intrinsic) functions make sin and exp faster?",
      &[(speedup("compiler", "sin/precise", "sin/intrinsic"), Faster),
        (speedup("compiler", "exp/precise", "exp/intrinsic"), Faster)]),
    e("wp-pinned", WP, "Pinned host memory",
      "Do pinned host buffers transfer faster than pageable ones?",
      &[(speedup("transfers", "transfer/h2d-pageable@size=2^26", "transfer/h2d-pinned@size=2^26"), Faster),
        (speedup("transfers", "transfer/d2h-pageable@size=2^26", "transfer/d2h-pinned@size=2^26"), Faster)]),
    e("wp-overlap", WP, "Transfers overlapping kernels",
      "Does overlapping transfers with kernels make the pair faster than running them one after the other?",
      &[(speedup("transfers", "transfer/overlap-serial", "transfer/overlap-concurrent"), Faster)]),
    e("wp-int-division", WP, "Integer division and modulo",
      "Are shifts and masks faster than division and modulo?",
      &[(speedup("compiler", "index/divmod-both", "index/shift-both"), Faster)]),
    e("wp-divergence", WP, "Branch divergence",
      "Is a branch that diverges within warps slower than one by warp?",
      &[(speedup("compiler", "branch/divergent-both", "branch/by-warp-both"), Faster)]),
    e("fill-null", FILL, "The NULL local size",
      "Is an explicit local size faster than leaving it to the implementation?",
      &[(speedup("fill", "fill/1d-auto", "fill/1d@local=256"), Faster)]),
    e("fill-local", FILL, "Explicit local sizes",
      "Are work-groups below 16 work-items much slower than 64 to 256, and 500 slower than 256?",
      &[(speedup("fill", "fill/1d@local=8", "fill/1d@local=256"), Faster),
        (speedup("fill", "fill/1d@local=500", "fill/1d@local=256"), Faster),
        (pr("fill", "fill/1d@local=512"), NoRule)]),
    e("fill-float4", FILL, "float4 stores",
      "Do float4 stores make the fill faster?",
      &[(speedup("fill", "fill/1d@local=256", "fill/float4"), Faster)]),
    e("fill-gpu-2d", FILL, "The 2D kernel on a GPU",
      "Is the 1D fill faster than the article's 2D kernel?",
      &[(speedup("fill", "fill/2d-article", "fill/1d@local=256"), Faster),
        (speedup("fill", "fill/2d-article", "fill/2d-rows"), Faster)]),
    e("fill-cpu-2d", FILL, "The 2D loop on a CPU",
      "How long does the article's 2D fill take on a CPU (PoCL)?",
      &[(Time { step: "cpu", comparison: "fill/2d-article", calls: 10 }, NoRule)]),
    e("fill-cpu-vector", FILL, "The vectorised 1D loop on a CPU",
      "On a CPU (PoCL), is the vectorised 1D fill faster than the 2D one?",
      &[(speedup("cpu", "fill/2d-article", "fill/float4"), Faster)]),
    e("fill-tail", FILL, "The float4 fill's tail",
      "Does the float4 fill stay correct and fast when the size is not a multiple of 4?",
      &[(pr("fill", "fill/float4-tail"), Similar)]),
];

/// Where a seed and this GPU differ, the measured steps that account for the difference:
/// each check's verdict ("shown" or "not shown") is computed from the folder like any other.
#[derive(Debug, Clone, Copy)]
pub struct Why {
    /// The experiment it explains.
    pub id: &'static str,
    /// What the checks test, in words.
    pub claim: &'static str,
    pub checks: &'static [(Measure, Rule)],
}

/// The seeds' contradictions and the steps measured to explain them.
pub const WHY: &[Why] = &[
    Why {
        id: "eq2-bandwidth",
        claim: "Where the seed's OpenCL led by 2 to 9%, both front ends now issue the same \
                loads and stores, and both run near the memory system's ceiling, which leaves \
                neither API room to lead by much",
        checks: &[
            (
                MemoryCode {
                    step: "inspect",
                    comparison: "bandwidth/read",
                },
                SameMemoryCode,
            ),
            (peak_share("peaks", "bandwidth/read"), NearPeak(0.85)),
        ],
    },
    Why {
        id: "table-vi-tranp",
        claim: "A work-group barrier no longer costs a CPU runtime what local memory cost \
                TranP in the seed (2.411 against 0.2150 GB/s, a factor of 11.2): a copy with \
                one barrier per work-item, the local kernel's only synchronisation, loses less \
                than that factor against the plain copy",
        checks: &[(
            speedup("cpu", "transpose/copy-barrier", "transpose/copy"),
            Below(11.2),
        )],
    },
    Why {
        id: "wp-vector-types",
        claim: "float4's gain is not the vector type's: four floats per work-item with scalar \
                stores (a quarter of the work-groups) win it, and the float4 store itself \
                adds nothing to that",
        checks: &[
            (speedup("fill", "fill/1d@local=256", "fill/scalar4"), Faster),
            (speedup("fill", "fill/scalar4", "fill/float4"), NoGain),
        ],
    },
    Why {
        id: "fill-local",
        claim: "The fill's time is the number of work-groups times a fixed cost per group, so \
                the largest groups are the fastest here, up to the memory system's ceiling",
        checks: &[(
            GroupCost {
                step: "fill",
                sweep: "fill/1d",
                up_to: 256,
            },
            FollowsGroups(0.99),
        )],
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn there_are_39_experiments_with_unique_ids_and_a_published_result_each() {
        assert_eq!(EXPERIMENTS.len(), 39);
        let mut ids: Vec<_> = EXPERIMENTS.iter().map(|e| e.id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), 39);
        for x in EXPERIMENTS {
            let quoted =
                crate::paper::quotes(x.id).count() + crate::paper::fill_quotes(x.id).count();
            assert!(quoted > 0, "{}: no published result in src/paper.rs", x.id);
            assert!(!x.checks.is_empty(), "{}", x.id);
        }
        for q in crate::paper::QUOTES {
            assert!(
                ids.contains(&q.experiment),
                "quote of unknown experiment {}",
                q.experiment
            );
        }
        for w in WHY {
            assert!(
                ids.contains(&w.id),
                "explanation of unknown experiment {}",
                w.id
            );
        }
        for q in crate::paper::FILL_ARTICLE {
            assert!(
                ids.contains(&q.experiment),
                "quote of unknown experiment {}",
                q.experiment
            );
        }
    }
}
