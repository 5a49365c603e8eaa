//! The numbers the seed papers published, kept as data in one place: the charts, Table V and
//! `report --findings` quote them from here, never from prose. Each quote names the table or
//! figure it comes from.
//!
//! - Fang, Varbanescu & Sips, "A Comprehensive Performance Comparison of CUDA and OpenCL",
//!   ICPP 2011 (GTX 280 and GTX 480).
//! - NVIDIA, "OpenCL Programming for the CUDA Architecture" (the whitepaper; GTX 285).
//! - The "fill" article: an OpenCL optimisation of a buffer fill of 10^4 × 10^4 floats, ten
//!   calls, on an Intel HD Graphics 5000.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Fang2011,
    Whitepaper,
    FillArticle,
}

impl Source {
    pub fn cite(self) -> &'static str {
        match self {
            Source::Fang2011 => "Fang, Varbanescu & Sips (2011)",
            Source::Whitepaper => {
                "NVIDIA's whitepaper *OpenCL Programming for the CUDA Architecture*"
            }
            Source::FillArticle => "the fill article",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quote {
    /// Its experiment in [`crate::report::findings`].
    pub experiment: &'static str,
    pub source: Source,
    /// The table, figure, equation or section it is printed in.
    pub place: &'static str,
    pub text: &'static str,
}

/// The whitepaper's Table 1: (listing, ms) of `MatrixVectorMul` with OpenCL on a GTX 285, a
/// 60989 × 1100 matrix, work-group size 256, 239 work-groups for Listing 2 and 60 after.
pub const WHITEPAPER_TABLE1_MS: [(u32, f64); 6] = [
    (2, 83.2),
    (3, 82.2),
    (4, 32.5),
    (5, 12.1),
    (6, 9.6),
    (7, 9.2),
];

/// Fang et al., Table V, PTX of SHOC's FFT "forward" kernel by instruction class: (API,
/// arithmetic, logic/shift, flow control, data movement, sync, total), as printed.
pub const FANG_TABLE_V: [(&str, u64, u64, u64, u64, u64, u64); 2] = [
    ("CUDA", 220, 4, 4, 1131, 7, 1366),
    ("OpenCL", 521, 163, 188, 351, 7, 1230),
];

/// Fang et al., Figs. 4 and 5 (also the texture chart's footnote).
pub const FANG_TEXTURE: Quote = Quote {
    experiment: "fig4-md-texture",
    source: Source::Fang2011,
    place: "Figs. 4 and 5",
    text: "without texture memory MD and SPMV run at 87.6% and 65.1% (GTX 280), 59.6% and 44.3% (GTX 480) of their texture versions; the PR then comes close to 1",
};

/// Fang et al., Figs. 3 and 8 (also the constant-memory chart's footnote).
pub const FANG_SOBEL_CONSTANT_PR: Quote = Quote {
    experiment: "fig3-sobel",
    source: Source::Fang2011,
    place: "Fig. 3 caption and Fig. 8 (GTX 280 / GTX 480)",
    text: "Sobel's PR is 3.2 / 0.83 with constant memory on the OpenCL side only; without it, the two APIs performed alike",
};

/// One number of the article: which of our rows it stands beside, and its seconds for 10
/// calls (low, high), `None` where the kernel "crashed".
pub struct FillQuote {
    pub experiment: &'static str,
    pub what: &'static str,
    /// Our variants it matches; empty: none of ours (drawn as its own row).
    pub variants: &'static [&'static str],
    /// Local sizes it matches; empty: any.
    pub locals: &'static [u32],
    pub seconds: Option<(f64, f64)>,
    pub quoted: &'static str,
}

/// The fill article's numbers (also quoted in `harness/fill.toml`), for the fill chart.
// 0.318 s is the article's measurement, not an approximation of 1/pi.
#[allow(clippy::approx_constant)]
pub const FILL_ARTICLE: &[FillQuote] = &[
    FillQuote {
        experiment: "fill-gpu-2d",
        what: "2D kernel",
        variants: &["2d-article"],
        locals: &[],
        seconds: Some((2.018, 2.018)),
        quoted: "2.018 s",
    },
    FillQuote {
        experiment: "fill-float4",
        what: "float4 stores",
        variants: &["float4"],
        locals: &[],
        seconds: Some((0.283, 0.283)),
        quoted: "0.283 s",
    },
    FillQuote {
        experiment: "fill-local",
        what: "1D, local size 64-256",
        variants: &["1d", "1d-exact"],
        locals: &[64, 128, 256],
        seconds: Some((0.318, 0.330)),
        quoted: "0.318-0.330 s",
    },
    FillQuote {
        experiment: "fill-local",
        what: "1D, local size 100, 200, 400 or 500",
        variants: &["1d", "1d-exact"],
        locals: &[100, 200, 400, 500],
        seconds: Some((0.4, 0.5)),
        quoted: "0.4-0.5 s",
    },
    FillQuote {
        experiment: "fill-local",
        what: "1D, local size below 16",
        variants: &["1d", "1d-exact"],
        locals: &[1, 2, 4, 8],
        seconds: Some((1.5, 3.0)),
        quoted: "1.5-3.0 s",
    },
    FillQuote {
        experiment: "fill-local",
        what: "1D, local size 512: crashed",
        variants: &["1d", "1d-exact"],
        locals: &[512],
        seconds: None,
        quoted: "crashed",
    },
    FillQuote {
        experiment: "fill-null",
        what: "1D, local size left to OpenCL (NULL)",
        variants: &["1d-auto"],
        locals: &[],
        seconds: Some((0.353, 0.353)),
        quoted: "0.353 s",
    },
];

/// Fang et al.'s Table II applications, by the paper's abbreviation, with their twin family.
// Study data: the names are the families' registered names.
pub const FANG_TABLE_II: [(&str, &str); 14] = [
    ("BFS", "bfs"),
    ("Sobel", "sobel"),
    ("TranP", "transpose"),
    ("Reduce", "reduce"),
    ("FFT", "fft"),
    ("MD", "md"),
    ("SPMV", "spmv"),
    ("St2D", "stencil2d"),
    ("DXTC", "dxtc"),
    ("RdxS", "radix"),
    ("Scan", "scan"),
    ("STNW", "bitonic"),
    ("MxM", "sgemm"),
    ("FDTD", "stencil"),
];

/// Every other quoted result, by experiment id of [`crate::report::findings::experiments`].
// Study data: `experiment` names an experiment of the findings, not a family to switch on.
pub const QUOTES: &[Quote] = &[
    q(F, "eq1-similar", "Eq. 1 and Section III-A", "PR = perf(OpenCL) / perf(CUDA); if |1 - PR| < 0.1, CUDA and OpenCL have similar performance"),
    q(F, "table2-apps", "Table II and Fig. 3", "14 real-world applications in both APIs: BFS, Sobel, TranP, Reduce, FFT, DXTC, RdxS, Scan, STNW, MxM, SPMV, MD, St2D, FDTD"),
    q(F, "eq2-bandwidth", "Eq. 2 and Fig. 1", "OpenCL 8.5% (GTX 280) and 2.4% (GTX 480) faster; 68.6% and 87.7% of the Eq. 2 peaks of 141.7 and 177.4 GB/s"),
    q(F, "eq3-flops", "Eq. 3 and Fig. 2", "about equal in both APIs; 71.5% and 97.7% of the Eq. 3 peaks of 933.12 and 1344.96 GFLOP/s"),
    q(F, "fig3-unmodified", "Abstract and Fig. 3", "for most applications, CUDA performs at most 30% better than OpenCL; this difference is due to unfair comparisons"),
    q(F, "fig3-fair", "Abstract and Section V", "OpenCL can achieve similar performance to CUDA under a fair comparison"),
    FANG_SOBEL_CONSTANT_PR,
    FANG_TEXTURE,
    q(F, "fig5-spmv-texture", "Figs. 4 and 5", "without texture memory SPMV runs at 65.1% (GTX 280) and 44.3% (GTX 480) of its texture version; without texture in both APIs the PR is similar"),
    q(F, "fig6-fdtd-a", "Fig. 6", "CUDA without the pragma unroll at point a runs at 85.1% (GTX 280) and 82.6% (GTX 480) of CUDA with it"),
    q(F, "fig7-fdtd-b", "Fig. 7", "with point a removed from CUDA, OpenCL outperforms CUDA by 15.1% on the GTX 280 and is similar on the GTX 480"),
    q(F, "fig7-fdtd-ab", "Fig. 7", "with the pragma at point a added to OpenCL, OpenCL drops to 48.3% (GTX 280) and 66.1% (GTX 480) of CUDA"),
    q(F, "fig8-sobel-constant", "Fig. 8", "without constant memory Sobel's time grows fourfold on the GTX 280 and barely changes on the GTX 480 (its global-memory cache)"),
    q(F, "table-v-fft", "Table V", "OpenCL's PTX of the FFT forward kernel: 521 arithmetic, 163 logic/shift, 188 flow control instructions against CUDA's 220, 4 and 4"),
    q(F, "bfs-launch", "Section IV-B (BFS)", "OpenCL's kernel launch (queued to start) takes longer than CUDA's, by an amount that depends on the problem size"),
    q(F, "fig9-eight-steps", "Fig. 9 and Section V", "a comparison is fair when all eight development steps are held equal; a difference in any one of them can move the PR"),
    q(F, "table-vi-tranp", "Table VI", "on a CPU, TranP drops from 2.411 to 0.2150 GB/s with local memory"),
    q(F, "table-vi-spmv", "Table VI", "on a CPU, SPMV drops from 3.805 to 0.1247 GFLOP/s with its warp-oriented kernel"),
    q(W, "wp-table1", "Table 1", "Listings 2 to 7 at 60989 × 1100, work-group 256, 239 groups (Listing 2) and 60 (the others), GTX 285: 83.2, 82.2, 32.5, 12.1, 9.6 and 9.2 ms, each listing faster than the one before"),
    q(W, "wp-coalescing", "Table 1 (Listing 3 to Listing 4)", "coalesced reads make Listing 4 2.5× faster than Listing 3 (82.2 → 32.5 ms)"),
    q(W, "wp-bank-conflicts", "Table 1 (Listing 5 to Listing 6)", "the conflict-free reduction takes 9.6 ms against 12.1 ms"),
    q(W, "wp-warp-sync", "Table 1 (Listing 6 to Listing 7)", "warp-synchronous code: 9.6 → 9.2 ms, a modest gain"),
    q(W, "wp-racy-listing7", "Listing 7", "the last warp's reduction drops its barriers, relying on a warp's implicit synchronisation"),
    q(W, "wp-groups-per-sm", "Section 2.1 (execution configuration)", "a kernel must run over at least as many work-items as multiprocessors; in general, hundreds of work-items should be launched per multiprocessor"),
    q(W, "wp-multiple-32", "Section 2.1 (execution configuration)", "the number of work-items should be a multiple of the warp size (i.e. 32)"),
    q(W, "wp-constant-broadcast", "Section on constant memory", "constant memory is fast only when all threads of a warp read the same address"),
    q(W, "wp-vector-types", "Section 3 (scalar architecture)", "the CUDA architecture is a scalar architecture; therefore, there is no performance benefit from using vector types and instructions"),
    q(W, "wp-native-mad", "Section on instruction optimisations", "native_* functions and -cl-mad-enable give large gains where precision allows"),
    q(W, "wp-pinned", "Section 1 (data transfers)", "data allocated with CL_MEM_ALLOC_HOST_PTR (pinned) usually transfers at a higher throughput across the PCIe bus"),
    q(W, "wp-overlap", "Section 1 (data transfers)", "data transfers can overlap with kernel execution only for data allocated with CL_MEM_ALLOC_HOST_PTR"),
    q(W, "wp-int-division", "Section 3 (instruction throughput)", "integer division and modulo are expensive instructions that should be avoided or replaced with bitwise operations whenever possible"),
    q(W, "wp-divergence", "Section 3 (control flow)", "threads within the same warp should follow the same execution path; otherwise the different paths are serialized"),
    q(W, "fill-null", "Section 2.1 (execution configuration)", "applications should not rely on the OpenCL implementation to determine the work-group size (local_work_size NULL)"),
    q(A, "fill-cpu-2d", "summary table", "on the CPU, the 2D loop took 4.404 s for ten calls"),
    q(A, "fill-cpu-vector", "summary table", "on the CPU, the vectorised 1D loop took 0.521 s for ten calls, against 4.404 s for the 2D loop"),
    q(A, "fill-tail", "fill_vectorized_full", "the float4 kernel stores the count % 4 floats that remain one by one"),
];

const F: Source = Source::Fang2011;
const W: Source = Source::Whitepaper;
const A: Source = Source::FillArticle;

const fn q(
    source: Source,
    experiment: &'static str,
    place: &'static str,
    text: &'static str,
) -> Quote {
    Quote {
        experiment,
        source,
        place,
        text,
    }
}

/// A published run of another benchmark for our numbers to stand beside: not a seed, so no
/// rule holds ours against it.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Reference {
    pub tool: &'static str,
    pub source: &'static str,
    pub device: &'static str,
    pub setting: &'static str,
    /// The suite step whose comparisons stand beside it.
    #[serde(skip)]
    pub step: &'static str,
    /// Comparison id and the published figure in `unit`.
    #[serde(skip)]
    pub figures: &'static [(&'static str, f64)],
    pub unit: &'static str,
}

/// BabelStream 5.0 on a GH200, from its tracker: MBytes/s / 1000, at the `stream` study's
/// array size.
pub const BABELSTREAM_GH200: Reference = Reference {
    tool: "BabelStream 5.0",
    source: "https://github.com/UoB-HPC/BabelStream/issues/194",
    device: "GH200 120GB (a Hopper H100 GPU with 96 GB of HBM3)",
    setting: "its Julia CUDA implementation, double, 2^25 elements an array, 100 runs",
    step: "stream",
    figures: &[
        ("stream/copy", 2979.0),
        ("stream/mul", 2890.7),
        ("stream/add", 3301.4),
        ("stream/triad", 3314.9),
        ("stream/dot", 1837.7),
    ],
    unit: "GB/s",
};

pub const REFERENCES: &[Reference] = &[BABELSTREAM_GH200];

pub fn quotes(experiment: &str) -> impl Iterator<Item = &'static Quote> + '_ {
    QUOTES.iter().filter(move |q| q.experiment == experiment)
}

pub fn fill_quotes(experiment: &str) -> impl Iterator<Item = &'static FillQuote> + '_ {
    FILL_ARTICLE
        .iter()
        .filter(move |q| q.experiment == experiment)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each application has its twin registered, and a shipped study measures it.
    #[test]
    fn every_table_ii_application_has_a_family_a_study_measures() {
        for (app, family) in FANG_TABLE_II {
            assert!(crate::rows::FamilyId::parse(family).is_ok(), "{app}");
            let entry = format!("family = \"{family}\"");
            let measured = crate::study::BUILTIN
                .iter()
                .any(|(_, text)| text.contains(&entry));
            assert!(measured, "{app}: no shipped study compares family {family}");
        }
    }

    #[test]
    fn every_quote_names_where_it_is_printed() {
        for q in QUOTES {
            assert!(!q.place.is_empty() && !q.text.is_empty(), "{q:?}");
        }
    }
}
