//! The seed papers' experiments, each with the committed run folders that answer it (on H100
//! and H200) and the explanation found. Data only: what a cell shows is computed in
//! [`super`]; the published numbers are in [`crate::paper`]. The explanations are prose
//! without measured numbers: every number of the findings comes from a CSV.

use anyhow::Result;

use super::tables::TABLE1;
use super::tables::{runtime_tables, sgemm_tables, shapes_table, table1, table_v};
use super::Ctx;

/// What one cell shows for a comparison of a folder.
#[derive(Debug, Clone, Copy)]
pub enum Show {
    /// PR [95% CI].
    Pr,
    /// "k of n similar; PR a–b" over every fair row of the folder (the comparison is unused).
    FairSummary,
    /// Each side's metric.
    Sides,
    /// Each side's median time, ms.
    TimeMs,
    /// Each side's median time, µs.
    TimeUs,
    /// Each side's metric as a share of the Eq. 2 peak the run recorded.
    PeakShare,
    /// Each side's metric over the same side's metric of another comparison of the folder.
    Over(&'static str),
    /// Each side's time over CUDA's time of another comparison (the paper's Fig. 7 form).
    TimeOverCuda(&'static str),
}

/// One measured row: a comparison of a folder, shown one way, for each GPU.
#[derive(Debug, Clone, Copy)]
pub struct Measure {
    pub label: &'static str,
    /// Below `results/`: `{gpu}` is `h100` or `h200`; `A|B` names each GPU's folder.
    pub folder: &'static str,
    pub comparison: &'static str,
    pub show: Show,
}

const fn m(
    label: &'static str,
    folder: &'static str,
    comparison: &'static str,
    show: Show,
) -> Measure {
    Measure {
        label,
        folder,
        comparison,
        show,
    }
}

/// One part of an experiment's "ours".
pub enum Part {
    Rows(&'static [Measure]),
    /// Every fair comparison of a folder (pattern as [`Measure::folder`]).
    AllFair(&'static str),
    /// A table of its own.
    Special(fn(&Ctx, &mut String) -> Result<()>),
    /// Why our results cannot answer it.
    Cannot(&'static str),
}

pub struct Experiment {
    /// The key of its quotes in [`crate::paper::QUOTES`].
    pub id: &'static str,
    /// The heading it is grouped under.
    pub section: &'static str,
    pub title: &'static str,
    pub question: &'static str,
    pub parts: &'static [Part],
    pub explanation: &'static str,
}

const FANG: &str = "Fang, Varbanescu & Sips (2011)";
const WHITEPAPER: &str = "NVIDIA's whitepaper";
const FILL: &str = "The fill article";
const OURS: &str = "Questions of our own";

const PEAKS: &str = "{gpu}-2026-11-23-fairness/peaks";
const MODERN: &str = "{gpu}-2026-11-26-modern-time/modern";
const TEXTURE: &str = "h100-2026-11-22-memspaces/texture|h200-2026-11-22-memspaces-launch/texture";
const CONSTANT: &str =
    "h100-2026-11-22-memspaces/constant|h200-2026-11-22-memspaces-launch/constant";
/// The `unfair` study ran on the H200 only.
const UNFAIR: &str = "h100-2026-11-21/pass1/unfair|h200-2026-11-21/pass1/unfair";
const SWEEPS: &str = "{gpu}-2026-11-23-fairness/sweeps";
const FILL_RUN: &str = "{gpu}-2026-11-22-turns-runtime/fill";

/// The README's headline table.
pub const HEADLINE: &[Measure] = &[
    m(
        "fair comparisons of the `modern` study (full-device shapes)",
        MODERN,
        "",
        Show::FairSummary,
    ),
    m(
        "whitepaper Listing 4, fair (`modern`)",
        MODERN,
        "matvec/listing4",
        Show::Pr,
    ),
    m(
        "tuned reduction, fair (`modern`)",
        MODERN,
        "reduce/tuned",
        Show::Pr,
    ),
    m(
        "read bandwidth against the Eq. 2 peak",
        PEAKS,
        "bandwidth/read",
        Show::PeakShare,
    ),
    m(
        "FFT of Table V, fair",
        "{gpu}-2026-11-22-compiler/fft",
        "fft/fft512@index=u32",
        Show::Pr,
    ),
    m(
        "1×1 launch + wait, host clock",
        "{gpu}-2026-11-26-runtime/launch",
        "launch/1x1-finish",
        Show::Pr,
    ),
    m(
        "BFS on 2^16 vertices (launch-bound)",
        "{gpu}-2026-11-26-runtime/bfs",
        "bfs-levels/uniform@size=2^16",
        Show::Pr,
    ),
    m(
        "SGEMM 4096, CUDA's best tiling on both",
        "{gpu}-2026-11-26-sgemm-cublas/sgemm",
        "blocked-cuda-best/4096",
        Show::Pr,
    ),
];

// Study data: ids, folders and comparisons name committed experiments, not families to switch on.
pub const EXPERIMENTS: &[Experiment] = &[
    Experiment {
        id: "similar",
        section: FANG,
        title: "Eq. 1: the Performance Ratio and \"similar\"",
        question: "How often are OpenCL and CUDA similar once everything is held equal?",
        parts: &[Part::Rows(&[
            m("fair comparisons, `modern`", MODERN, "", Show::FairSummary),
            m("fair comparisons, `whitepaper-table1`", TABLE1, "", Show::FairSummary),
            m("fair comparisons, `peaks`", PEAKS, "", Show::FairSummary),
            m("fair comparisons, `sweeps`", "{gpu}-2026-11-23-fairness/sweeps", "", Show::FairSummary),
        ])],
        explanation: "every row of every run carries its PR, CI and the similar verdict; the \
            band is `SIMILAR_LO`..`SIMILAR_HI` in `src/stats.rs`, the one the report and the \
            charts draw. The `peaks` study's lowest row is its host-timed empty launch, measured \
            then through the harness's old event-per-launch path; the runtime section below \
            measures launches as a plain program does.",
    },
    Experiment {
        id: "fair-prs",
        section: FANG,
        title: "Fig. 3: the fair PR of every kernel (the benchmarks of Tables I and II)",
        question: "Kernel by kernel, how far apart are the APIs when the comparison is fair?",
        parts: &[
            Part::AllFair(MODERN),
            Part::Cannot(
                "the paper's TranP, St2D, DXTC, RdxS, Scan and STNW have no twin kernels in \
                 clvscu, so their PRs are not measured.",
            ),
        ],
        explanation: "both front ends now feed the same NVVM and ptxas back end and the same \
            driver JIT, so most fair PRs sit at 1. The rows that do not (Listing 4, the blocked \
            SGEMM, the small reductions) each have a one-step experiment below and a cause in \
            the last section.",
    },
    Experiment {
        id: "bandwidth",
        section: FANG,
        title: "Eq. 2 and Fig. 1: achieved bandwidth against the theoretical peak",
        question: "How close does each API come to the memory's peak?",
        parts: &[Part::Rows(&[
            m("read kernel, share of Eq. 2", PEAKS, "bandwidth/read", Show::PeakShare),
            m("copy kernel, share of Eq. 2", PEAKS, "bandwidth/copy-kernel", Show::PeakShare),
            m("read kernel, GB/s", PEAKS, "bandwidth/read", Show::Sides),
            m("read kernel, fair PR", PEAKS, "bandwidth/read", Show::Pr),
            m("driver copy (`clEnqueueCopyBuffer` / `cuMemcpyDtoD`), fair PR", PEAKS, "bandwidth/copy", Show::Pr),
        ])],
        explanation: "the peak is Eq. 2 from the memory clock and bus width the CUDA driver \
            reports (OpenCL exposes neither); both APIs reach the same share of it.",
    },
    Experiment {
        id: "flops",
        section: FANG,
        title: "Eq. 3 and Fig. 2: achieved FLOPS",
        question: "Do both APIs reach the same arithmetic throughput?",
        parts: &[
            Part::Rows(&[
                m("FMA chain, GFLOP/s", PEAKS, "flops/fma", Show::Sides),
                m("FMA chain, fair PR", PEAKS, "flops/fma", Show::Pr),
            ]),
            Part::Cannot("Eq. 3's peak is not computed by clvscu, so no share of it is given."),
        ],
        explanation: "the same FMA chain compiles to the same instructions in both APIs.",
    },
    Experiment {
        id: "texture",
        section: FANG,
        title: "Figs. 4 and 5: texture memory in MD and SpMV",
        question: "What does removing the texture path cost each API, and the PR?",
        parts: &[Part::Rows(&[
            m("MD without texture, over MD with texture", TEXTURE, "md/lj", Show::Over("md/lj-tex")),
            m("SpMV vector (uniform) without texture, over with", TEXTURE, "spmv-uniform/vector", Show::Over("spmv-uniform/vector-tex")),
            m("MD with texture, fair PR", TEXTURE, "md/lj-tex", Show::Pr),
            m("MD without texture, fair PR", TEXTURE, "md/lj", Show::Pr),
            m("SpMV scalar through texture, fair PR", TEXTURE, "spmv-uniform/scalar-tex", Show::Pr),
        ])],
        explanation: "on Hopper the L1 serves plain loads as well as the texture path, so \
            texture barely matters. The scalar SpMV's texture gap is the compilers' unrolling \
            (NVRTC unrolls the row loop by itself); with the pragma held equal it closes \
            (`{gpu}-2026-11-22-memspaces2/texture-explain`).",
    },
    Experiment {
        id: "fdtd-unroll",
        section: FANG,
        title: "Figs. 6 and 7: FDTD3d unroll points a (z loop) and b (radius loop)",
        question: "Time relative to CUDA without pragmas, per setting (lower is faster).",
        parts: &[Part::Rows(&[
            m("no pragma", "{gpu}-2026-11-22-compiler/fdtd-unroll", "fdtd3d/none", Show::TimeOverCuda("fdtd3d/none")),
            m("a on both", "{gpu}-2026-11-22-compiler/fdtd-unroll", "fdtd3d/A-both", Show::TimeOverCuda("fdtd3d/none")),
            m("b on both", "{gpu}-2026-11-22-compiler/fdtd-unroll", "fdtd3d/B-both", Show::TimeOverCuda("fdtd3d/none")),
            m("a and b on both", "{gpu}-2026-11-22-compiler/fdtd-unroll", "fdtd3d/AB-both", Show::TimeOverCuda("fdtd3d/none")),
            m("a on CUDA only, PR", "{gpu}-2026-11-22-compiler/fdtd-unroll", "fdtd3d/A-cuda-only", Show::Pr),
            m("b on OpenCL only, PR", "{gpu}-2026-11-22-compiler/fdtd-unroll", "fdtd3d/B-opencl-only", Show::Pr),
        ])],
        explanation: "both front ends honour the pragma at a and gain by it alike; NVRTC's PTX \
            is identical with and without b (the radius loop is unrolled anyway, \
            `inspect/unroll_evidence.csv`), so the paper's OpenCL-beats-CUDA case does not \
            occur.",
    },
    Experiment {
        id: "sobel-constant",
        section: FANG,
        title: "Fig. 8: Sobel with and without constant memory",
        question: "What does constant memory buy Sobel in each API?",
        parts: &[Part::Rows(&[
            m("filter in global memory, over constant (16384²)", CONSTANT, "sobel/global@16384x16384", Show::Over("sobel/constant@16384x16384")),
            m("filter as literals, over constant (16384²)", CONSTANT, "sobel/literal@16384x16384", Show::Over("sobel/constant@16384x16384")),
            m("constant on OpenCL only, PR (16384²)", CONSTANT, "sobel/constant-opencl-only@16384x16384", Show::Pr),
            m("constant on both, fair PR (16384²)", CONSTANT, "sobel/constant@16384x16384", Show::Pr),
        ])],
        explanation: "like the paper's GTX 480, Hopper's caches serve a small read-only filter \
            from any memory space.",
    },
    Experiment {
        id: "table-v",
        section: FANG,
        title: "Table V: the PTX of the FFT",
        question: "Do the front ends still emit different PTX for the same FFT text?",
        parts: &[
            Part::Special(table_v),
            Part::Rows(&[
                m("fft512, u32 index, fair PR", "{gpu}-2026-11-22-compiler/fft", "fft/fft512@index=u32", Show::Pr),
                m("fft512, u64 index, fair PR", "{gpu}-2026-11-22-compiler/fft", "fft/fft512@index=u64", Show::Pr),
                m("fft512, GFLOP/s", "{gpu}-2026-11-22-compiler/fft", "fft/fft512@index=u32", Show::Sides),
            ]),
        ],
        explanation: "today's front ends agree instruction class by instruction class, at every \
            index width, so the 2011 gap (not index width: u64 on both sides adds nothing) is \
            gone.",
    },
    Experiment {
        id: "bfs",
        section: FANG,
        title: "BFS: launch time per level",
        question: "Does OpenCL's launch cost show in a launch-bound application?",
        parts: &[Part::Rows(&[
            m("2^16 vertices, per level", "{gpu}-2026-11-26-runtime/bfs", "bfs-levels/uniform@size=2^16", Show::Pr),
            m("2^20 vertices, per level", "{gpu}-2026-11-26-runtime/bfs", "bfs-levels/uniform@size=2^20", Show::Pr),
            m("2^24 vertices, per level", "{gpu}-2026-11-26-runtime/bfs", "bfs-levels/uniform@size=2^24", Show::Pr),
            m("2^16 vertices, whole search", "{gpu}-2026-11-26-runtime/bfs", "bfs-levels/uniform@size=2^16", Show::TimeUs),
        ])],
        explanation: "each level is a launch, a wait and a flag read back; on small graphs the \
            kernels take a few microseconds and OpenCL's dearer launch and wait dominate, on \
            large ones the kernels do. The runtime section below holds the launch itself against \
            a plain program.",
    },
    Experiment {
        id: "eight-steps",
        section: FANG,
        title: "Fig. 9: one development step at a time",
        question: "How much does each step move the PR when it differs on one side only?",
        parts: &[
            Part::Rows(&[
                m("baseline, Listing 6 (fair)", UNFAIR, "baseline/listing6", Show::Pr),
                m("configuration: work-group 128 against 256", UNFAIR, "workgroup-128-vs-256/listing6", Show::Pr),
                m("running: OpenCL wall clock, CUDA events", UNFAIR, "timer-wall-vs-event/listing6", Show::Pr),
                m("native optimisation: `__syncwarp` on CUDA only", UNFAIR, "warp-sync-cuda-only/listing7", Show::Pr),
                m("native optimisation: warp shuffles on CUDA only (matvec)", UNFAIR, "shuffle-cuda-only/matvec-tuned", Show::Pr),
                m("first stage: fast math on CUDA only", UNFAIR, "fast-math-cuda-only/listing6", Show::Pr),
                m("second stage: `-O0` on OpenCL only (tuned matvec)", "{gpu}-2026-11-22-compiler/second-stage", "matvec-tuned/O0-opencl-only", Show::Pr),
                m("first stage: index width native (tuned matvec)", "{gpu}-2026-11-22-index/index-width", "matvec/tuned@index=native", Show::Pr),
                m("first stage: index width u32 on both (tuned matvec)", "{gpu}-2026-11-22-index/index-width", "matvec/tuned@index=u32", Show::Pr),
            ]),
            Part::Cannot(
                "the `unfair` study ran on the H200 only, before index width was held equal, so \
                 the H100 has no run of its rows.",
            ),
        ],
        explanation: "configuration and timers move the PR as much as the API does; the index \
            width of OpenCL's work-item functions (64-bit `size_t` against CUDA's 32-bit \
            built-ins) was the largest part of the listings' fair gaps until it was held equal.",
    },
    Experiment {
        id: "portability",
        section: FANG,
        title: "Table VI: portability to CPUs and the Cell",
        question: "What does the same OpenCL code cost on other platforms?",
        parts: &[Part::Cannot(
            "clvscu compares OpenCL with CUDA on NVIDIA GPUs; it runs OpenCL on a CPU (PoCL) only \
             as its own noise floor, and no such run is committed.",
        )],
        explanation: "not studied.",
    },
    Experiment {
        id: "table1",
        section: WHITEPAPER,
        title: "Table 1: Listings 2 to 7, fifteen years on",
        question: "The whitepaper's matrix-vector kernels at its own launch shape.",
        parts: &[Part::Special(table1)],
        explanation: "with the 2010 shape (60 work-groups) the \"optimised\" Listings 4 to 7 \
            cannot fill a Hopper GPU and are slower than the naive Listing 2; Listing 4's \
            fair gap is the front end (OpenCL's serial loop stays rolled, see the PTX swap in \
            the last section).",
    },
    Experiment {
        id: "coalescing",
        section: WHITEPAPER,
        title: "Coalescing: Listing 3 to Listing 4",
        question: "How much faster is the coalesced Listing 4 than Listing 3?",
        parts: &[Part::Rows(&[
            m("Listing 4 over Listing 3, the whitepaper's 60 groups", TABLE1, "matvec/listing4", Show::Over("matvec/listing3")),
            m("Listing 4 over Listing 3, full device (`modern`)", MODERN, "matvec/listing4", Show::Over("matvec/listing3")),
        ])],
        explanation: "at 60 groups Listing 4 starves the GPU; at full-device shapes coalescing \
            pays, though not by the whitepaper's factor (no one-step study isolates it).",
    },
    Experiment {
        id: "bank-conflicts",
        section: WHITEPAPER,
        title: "Bank conflicts: Listing 5 to Listing 6",
        question: "What does the conflict-free reduction gain?",
        parts: &[Part::Rows(&[
            m("Listing 6 over Listing 5, 60 groups", TABLE1, "matvec/listing6", Show::Over("matvec/listing5")),
            m("Listing 6 over Listing 5, full device", MODERN, "matvec/listing6", Show::Over("matvec/listing5")),
        ])],
        explanation: "two-way conflicts in a short loop still cost a little, as the whitepaper \
            found.",
    },
    Experiment {
        id: "warp-sync",
        section: WHITEPAPER,
        title: "Warp-synchronous code: Listing 6 to Listing 7",
        question: "Does the warp-synchronous Listing 7 still gain?",
        parts: &[Part::Rows(&[
            m("Listing 7 over Listing 6, 60 groups", TABLE1, "matvec/listing7", Show::Over("matvec/listing6")),
            m("Listing 7 over Listing 6, full device", MODERN, "matvec/listing7", Show::Over("matvec/listing6")),
        ])],
        explanation: "warp-synchronous execution is not guaranteed since Volta, so the portable \
            Listing 7 synchronises every step with a barrier (NVIDIA's OpenCL has no \
            sub-groups) and gives its gain back.",
    },
    Experiment {
        id: "ndrange",
        section: WHITEPAPER,
        title: "How many work-groups: the execution configuration",
        question: "Listing 6 from far too few work-groups to many per SM: what does each API \
            reach, and does the PR move?",
        parts: &[Part::Rows(&[
            m("15 groups", SWEEPS, "matvec/listing6@groups=15", Show::Sides),
            m("60 groups (the whitepaper's)", SWEEPS, "matvec/listing6@groups=60", Show::Sides),
            m("132 groups (one per SM)", SWEEPS, "matvec/listing6@groups=132", Show::Sides),
            m("1056 groups", SWEEPS, "matvec/listing6@groups=1056", Show::Sides),
            m("4224 groups", SWEEPS, "matvec/listing6@groups=4224", Show::Sides),
            m("15 groups, PR", SWEEPS, "matvec/listing6@groups=15", Show::Pr),
            m("4224 groups, PR", SWEEPS, "matvec/listing6@groups=4224", Show::Pr),
            m("work-group 64 (tuned matvec), PR", SWEEPS, "matvec/tuned@local=64", Show::Pr),
        ])],
        explanation: "the whitepaper's guidance holds in both APIs alike: bandwidth grows with \
            the work-groups until every SM holds several, and the PR does not move with the \
            shape. The launch shape matters far more than the API.",
    },
    Experiment {
        id: "constant-broadcast",
        section: WHITEPAPER,
        title: "Constant memory: one address per warp",
        question: "What does a divergent read of constant memory cost?",
        parts: &[Part::Rows(&[
            m("divergent constant read, over divergent global read", CONSTANT, "broadcast/constant-divergent", Show::Over("broadcast/global-divergent")),
            m("uniform constant read, over uniform global read", CONSTANT, "broadcast/constant-uniform", Show::Over("broadcast/global-uniform")),
            m("divergent constant read, PR", CONSTANT, "broadcast/constant-divergent", Show::Pr),
        ])],
        explanation: "both PTX texts use `ld.const`, but NVIDIA's OpenCL turns it into global \
            loads through the constant path (`LDG.E.CONSTANT`) where CUDA keeps the constant \
            cache (`LDC`), which serialises divergent addresses: the whitepaper's rule holds in \
            CUDA only.",
    },
    Experiment {
        id: "native-mad",
        section: WHITEPAPER,
        title: "`native_*` functions and `-cl-mad-enable`",
        question: "What do the fast intrinsics and contraction buy?",
        parts: &[Part::Rows(&[
            m("sin intrinsic over precise", "{gpu}-2026-11-22-compiler/flags-compute", "sin/intrinsic", Show::Over("sin/precise")),
            m("exp intrinsic over precise", "{gpu}-2026-11-22-compiler/flags-compute", "exp/intrinsic", Show::Over("exp/precise")),
            m("FMA chain, mad off on both, PR", "{gpu}-2026-11-22-compiler/flags-compute", "fma/mad-off-both", Show::Pr),
            m("precise exp, fair PR", "{gpu}-2026-11-22-compiler/flags-compute", "exp/precise", Show::Pr),
        ])],
        explanation: "the intrinsics pay in both APIs alike. \"Mad off\" cannot be held equal: \
            NVIDIA's OpenCL contracts `a*b+c` even without `-cl-mad-enable`, which OpenCL C \
            allows, while NVRTC's `--fmad=false` does not. The precise exp differs in library \
            code (the PTX swap closes it).",
    },
    Experiment {
        id: "transfers",
        section: WHITEPAPER,
        title: "Pinned host memory",
        question: "How much faster are pinned transfers, and does either API transfer faster?",
        parts: &[Part::Rows(&[
            m("host to device, pinned, 2^28 bytes", "{gpu}-2026-11-26-runtime/transfers", "transfer/h2d-pinned@size=2^28", Show::Sides),
            m("host to device, pageable, 2^28 bytes", "{gpu}-2026-11-26-runtime/transfers", "transfer/h2d-pageable@size=2^28", Show::Sides),
            m("host to device, pinned, PR", "{gpu}-2026-11-26-runtime/transfers", "transfer/h2d-pinned@size=2^28", Show::Pr),
            m("copy and kernel overlapped, PR", "{gpu}-2026-11-26-runtime/transfers", "transfer/overlap-concurrent", Show::Pr),
        ])],
        explanation: "pinned memory is the fast path in both APIs; small transfers are \
            dominated by each driver's per-call cost.",
    },
    Experiment {
        id: "integer-division",
        section: WHITEPAPER,
        title: "Integer division, modulo and branch divergence",
        question: "The whitepaper's instruction guidance.",
        parts: &[Part::Cannot("no study of clvscu varies integer division or divergence alone.")],
        explanation: "not studied.",
    },
    Experiment {
        id: "fill-null",
        section: FILL,
        title: "The NULL local size",
        question: "What does leaving the work-group size to the runtime cost?",
        parts: &[Part::Rows(&[
            m("NULL local size (OpenCL) against the occupancy calculator's choice (CUDA), per call", FILL_RUN, "fill/1d-auto", Show::TimeMs),
            m("the same, PR", FILL_RUN, "fill/1d-auto", Show::Pr),
            m("256 work-items on both, per call", FILL_RUN, "fill/1d@local=256", Show::TimeMs),
        ])],
        explanation: "NVIDIA's OpenCL answers NULL with 256 work-items, as fast as an explicit \
            256; CUDA's occupancy calculator picks 1024, which is faster. The article's times \
            are ten calls on an Intel HD Graphics 5000, ours one call on each GPU.",
    },
    Experiment {
        id: "fill-local",
        section: FILL,
        title: "Explicit local sizes",
        question: "How does the fill's time move with the work-group size?",
        parts: &[Part::Rows(&[
            m("16 work-items", FILL_RUN, "fill/1d@local=16", Show::TimeMs),
            m("64 work-items", FILL_RUN, "fill/1d@local=64", Show::TimeMs),
            m("100 work-items", FILL_RUN, "fill/1d@local=100", Show::TimeMs),
            m("256 work-items", FILL_RUN, "fill/1d@local=256", Show::TimeMs),
            m("400 work-items, exact global size", "{gpu}-2026-11-22-fill-exact/fill", "fill/1d-exact@local=400", Show::TimeMs),
            m("500 work-items, exact global size", "{gpu}-2026-11-22-fill-exact/fill", "fill/1d-exact@local=500", Show::TimeMs),
        ])],
        explanation: "small groups starve the SMs; from a few hundred work-items on the fill runs \
            at memory speed in both APIs. A global size the local size does not divide is \
            refused by NVIDIA's OpenCL (`CL_INVALID_WORK_GROUP_SIZE`), while CUDA runs the \
            rounded-up grid.",
    },
    Experiment {
        id: "fill-float4",
        section: FILL,
        title: "float4 stores",
        question: "What do vector stores gain?",
        parts: &[Part::Rows(&[
            m("float4 over scalar (256 work-items)", FILL_RUN, "fill/float4", Show::Over("fill/1d@local=256")),
            m("float4, fair PR", FILL_RUN, "fill/float4", Show::Pr),
        ])],
        explanation: "wider stores move more bytes per instruction in both APIs alike.",
    },
    Experiment {
        id: "fill-2d",
        section: FILL,
        title: "The 2D kernel, and the CPU",
        question: "What does the article's 2D kernel cost against the 1D one?",
        parts: &[
            Part::Rows(&[
                m("the article's 2D kernel over 1D (256)", FILL_RUN, "fill/2d-article", Show::Over("fill/1d@local=256")),
                m("a coalesced 2D kernel over 1D (256)", FILL_RUN, "fill/2d-rows", Show::Over("fill/1d@local=256")),
            ]),
            Part::Cannot("the CPU loops are not measured (no CPU study is committed)."),
        ],
        explanation: "the article's 2D kernel puts rows on dimension 0, so its stores are \
            strided; the coalesced 2D kernel shows that the gap is coalescing, not the second \
            dimension.",
    },
    Experiment {
        id: "runtime",
        section: OURS,
        title: "Launch and runtime overhead, measured as a plain program measures it",
        question: "What does a launch cost in each API, and is the harness's own cost out of the ratio?",
        parts: &[Part::Special(runtime_tables)],
        explanation: "a host-timed launch asks neither driver for an event and waits with \
            `clFinish` / `cuStreamSynchronize`; `clvscu calibrate` holds the harness against a \
            plain loop of each API's driver calls in the same process. OpenCL's launch and wait \
            cost more than CUDA's, most visibly back to back; a large grid hides it.",
    },
    Experiment {
        id: "sgemm",
        section: OURS,
        title: "SGEMM against cuBLAS",
        question: "How close do the blocked SGEMM's best tilings come to cuBLAS, and where is \
            OpenCL's gap?",
        parts: &[Part::Special(sgemm_tables)],
        explanation: "CUDA's best tiling comes close to cuBLAS and OpenCL's does not. With one \
            PTX on both runtimes only a small part of the gap closes: most of it is OpenCL's \
            runtime and JIT (the second stage's register allocation), not its front end, and \
            neither telling the compilers the work-group size nor raising the register ceiling \
            moves it. NVIDIA's OpenCL cannot run NVRTC's PTX of this kernel (the launch fails \
            and the context is lost). At 2048 the 4096 tiling leaves CUDA's last wave of \
            work-groups mostly empty; larger tiles capped at 128 registers make one full wave.",
    },
    Experiment {
        id: "shapes",
        section: OURS,
        title: "Shapes and sizes against the vendor libraries",
        question: "Does the best kernel of each API match cuBLAS SGEMV at every matrix shape, \
            and the CUB-backed sum at every length?",
        parts: &[
            Part::Special(shapes_table),
            Part::Cannot(
                "Sobel against cuDNN and SpMV against cuSPARSE were measured (`memspaces3`), but \
                 the report's baseline ratios do not read those libraries yet, so no ratio is \
                 given here.",
            ),
        ],
        explanation: "one algorithm cannot serve every shape: the shape-aware variants \
            (`row-item`, `row-group`, `split-one`, ...) and the `auto` rule that picks among them \
            give each shape enough parallel work; both APIs gain alike, so the PR stays at 1 \
            while the ratio to cuBLAS moves.",
    },
    Experiment {
        id: "index-width",
        section: OURS,
        title: "Index width: OpenCL's 64-bit work-item functions",
        question: "How much of the fair gap was the index type?",
        parts: &[Part::Rows(&[
            m("Listing 4, native widths", "{gpu}-2026-11-22-index/index-width", "matvec/listing4@index=native", Show::Pr),
            m("Listing 4, u32 on both", "{gpu}-2026-11-22-index/index-width", "matvec/listing4@index=u32", Show::Pr),
            m("Listing 6, native widths", "{gpu}-2026-11-22-index/index-width", "matvec/listing6@index=native", Show::Pr),
            m("Listing 6, u64 on both", "{gpu}-2026-11-22-index/index-width", "matvec/listing6@index=u64", Show::Pr),
            m("Listing 6, u32 on both", "{gpu}-2026-11-22-index/index-width", "matvec/listing6@index=u32", Show::Pr),
        ])],
        explanation: "the same text is not the same program: `get_local_id` and friends return \
            `size_t`, so OpenCL does 64-bit index arithmetic where CUDA does 32-bit, and \
            NVIDIA's OpenCL front end handles 64-bit indices worse even when CUDA is widened too. \
            Fair comparisons hold the index at u32 since.",
    },
    Experiment {
        id: "small-sizes",
        section: OURS,
        title: "Small problems: a run's fixed cost",
        question: "Does the PR of the same reduction move with the problem size alone?",
        parts: &[Part::Rows(&[
            m("reduce/multi, 2^16 floats", "{gpu}-2026-11-22-compiler/reduce-sizes", "reduce/multi@size=2^16", Show::Pr),
            m("reduce/multi, 2^20 floats", "{gpu}-2026-11-22-compiler/reduce-sizes", "reduce/multi@size=2^20", Show::Pr),
            m("reduce/multi, 2^26 floats", "{gpu}-2026-11-22-compiler/reduce-sizes", "reduce/multi@size=2^26", Show::Pr),
            m("reduce/multi, 2^16 floats, time", "{gpu}-2026-11-22-compiler/reduce-sizes", "reduce/multi@size=2^16", Show::TimeUs),
            m("reduce/multi, 2^26 floats, time", "{gpu}-2026-11-22-compiler/reduce-sizes", "reduce/multi@size=2^26", Show::TimeUs),
        ])],
        explanation: "every step is held equal and only the size varies: a reduction of a few \
            microseconds carries the gap between its two launches, a per-run cost that does not \
            grow with the kernel, so the PR of small problems is the runtime's, not the \
            kernel's.",
    },
    Experiment {
        id: "registers",
        section: OURS,
        title: "The second stage's register allocation",
        question: "Is the blocked SGEMM's gap on one PTX the assembler's register count?",
        parts: &[Part::Rows(&[
            m("blocked SGEMM, own PTX", "{gpu}-2026-11-23-gaps/gaps-swap/_own", "blocked/own", Show::Pr),
            m("blocked SGEMM, OpenCL's PTX on both", "{gpu}-2026-11-23-gaps/gaps-swap/_opencl-ptx", "blocked/opencl-ptx", Show::Pr),
            m("the same, CUDA's JIT held to 120 registers", "{gpu}-2026-11-23-gaps/gaps-swap/_opencl-ptx", "blocked/opencl-ptx-cuda-r120", Show::Pr),
            m("Sobel `literal-x4`, both held to 48 registers", "{gpu}-2026-11-23-gaps2/gaps-registers", "sobel-literal-x4/both-r48", Show::Pr),
            m("Sobel `literal-x4`, default", "{gpu}-2026-11-23-gaps2/gaps-registers", "sobel-literal-x4/default", Show::Pr),
        ])],
        explanation: "with one PTX on both runtimes, NVIDIA's OpenCL assembles the blocked SGEMM \
            into fewer registers per work-item than the CUDA driver does; holding CUDA's JIT to \
            OpenCL's count closes the gap, so the register count is a fairness factor of its \
            own (step six). For Sobel it is the front end: OpenCL's PTX needs more registers, \
            and a common limit brings the PR back toward 1.",
    },
    Experiment {
        id: "ptx-swap",
        section: OURS,
        title: "Front end or runtime: the PTX swap",
        question: "With one PTX on both runtimes, which gaps stay?",
        parts: &[Part::Rows(&[
            m("Listing 4, own PTX", "{gpu}-2026-11-23-ptxswap/ptx-swap/_own", "listing4/own", Show::Pr),
            m("Listing 4, OpenCL's PTX on both", "{gpu}-2026-11-23-ptxswap/ptx-swap/_opencl-ptx", "listing4/opencl-ptx", Show::Pr),
            m("precise exp, own PTX", "{gpu}-2026-11-23-ptxswap/ptx-swap/_own", "exp/own", Show::Pr),
            m("precise exp, OpenCL's PTX on both", "{gpu}-2026-11-23-ptxswap/ptx-swap/_opencl-ptx", "exp/opencl-ptx", Show::Pr),
            m("SGEMM tiled16, own PTX", "{gpu}-2026-11-23-ptxswap/ptx-swap/_own", "tiled16/own", Show::Pr),
            m("SGEMM tiled16, OpenCL's PTX on both", "{gpu}-2026-11-23-ptxswap/ptx-swap/_opencl-ptx", "tiled16/opencl-ptx", Show::Pr),
            m("SGEMM tiled16, CUDA with half of L1 as shared memory", "{gpu}-2026-11-23-carveout/carveout", "tiled16/cuda-carveout-50", Show::Pr),
        ])],
        explanation: "a gap that closes with one PTX is the front ends' (Listing 4's rolled \
            loop, the precise exp's library code); one that stays is the runtime's (`tiled16`: \
            the L1/shared split NVIDIA's OpenCL picks, which CUDA matches with a carveout).",
    },
];
