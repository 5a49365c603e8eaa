//! The metric a family is judged by.

crate::names::named_enum! {
    /// The performance metric a family is judged by (higher is better), written as its unit.
    pub enum Metric {
        /// Bytes moved per second, GB/s (1e9).
        #[strum(serialize = "GB/s")]
        Bandwidth,
        /// GFLOP/s (1e9).
        #[strum(serialize = "GFLOP/s")]
        Flops,
        /// Launches per second (1 / time), for the launch-overhead kernel.
        #[strum(serialize = "1/s")]
        Rate,
        /// G evaluations per second (1e9): chain steps of the math family (see `math`).
        #[strum(serialize = "Geval/s")]
        Evaluations,
        /// G 4-byte reads per second (1e9): the broadcast micro-kernel (see `constmem`).
        #[strum(serialize = "Gread/s")]
        Reads,
        /// G traversed edges per second (1e9), for BFS: the `flops` column counts edges.
        #[strum(serialize = "GTEPS")]
        Teps,
    }
}

impl Metric {
    pub fn unit(self) -> &'static str {
        self.into()
    }

    /// The work one run does in this metric's numerator: GB, GFLOP, or one launch.
    pub fn work(self, bytes: u64, flops: u64) -> f64 {
        match self {
            Metric::Bandwidth => bytes as f64 / 1e9,
            Metric::Flops => flops as f64 / 1e9,
            Metric::Rate => 1.0,
            // The math family counts 2 FLOP (a multiply-add) per evaluation.
            Metric::Evaluations => flops as f64 / 2e9,
            Metric::Reads => bytes as f64 / 4e9,
            Metric::Teps => flops as f64 / 1e9,
        }
    }
}
