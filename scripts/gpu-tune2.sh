#!/usr/bin/env bash
# clvscu tune on one GPU, second part: sgemm/blocked (tile sizes, K-step, unroll of the K loop)
# and spmv/vector (read path, lanes per row, groups), each searched
# exhaustively on OpenCL and CUDA interleaved; the answers (best-vs-best and same-config PR,
# the configurations by name) and the vendor baselines (cuBLAS SGEMM at 4096^3, cuSPARSE SpMV
# on the tuned matrix) last. Tars nothing.
#
# Usage: scripts/gpu-tune2.sh BIN OUT
# Expected run time on an H100: about 3 minutes (at most ~200 s). SGEMM: 12 valid points (12
# programs) per API; SpMV: 18 points (9 programs) per API; 42 programs at ~3-4 s of compile
# each (~150-170 s), the runs ~10 per evaluation (verify, 2 warm-up, 7 timed) at ~3-6 ms
# (SGEMM, 24 evaluations) and ~1 ms (SpMV, 36 evaluations: ~1 GB of matrix uploaded each,
# ~50 ms), ~5 s per tune to generate the inputs, and the baselines (~15 s).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/gpu-common.sh
gpu_begin tune2 "clvscu-results/tune2-$(date -u +%Y%m%d)" "$@"

tune_exhaustive sgemm/blocked spmv/vector
gpu_end
echo "== vendor baselines (cuBLAS SGEMM, cuSPARSE SpMV) at the tuned sizes"
BASELINES_ONLY=sgemm,spmv python3 scripts/baselines.py "$OUT/baselines.csv" "$OUT"/*/exhaustive/tuned.toml || true

echo
print_tune_answers
