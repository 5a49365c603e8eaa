#!/usr/bin/env bash
# clvscu tune on one GPU, third part: the stencil's tile (stencil/fdtd3d: tile width x height
# x unroll of the z loop), matvec's vector width (matvec/tuned-vec: float/float2/float4 loads x
# work-group size x groups) and SpMV's work-group size (spmv/vector-local: 64..512 x lanes x
# groups), each searched exhaustively on OpenCL and CUDA interleaved; the answers
# (best-vs-best and same-config PR, the configurations by name, refused points by rule) last.
# Tars nothing; runs as a part of gpu-visit.sh (PARTS="tune3:200").
#
# Usage: scripts/gpu-tune3.sh BIN OUT
# Expected run time on an H100: about 2 minutes (estimated ~110-150 s; not yet measured).
# Programs per API: matvec 6, SpMV 8, stencil 18 (the 512/1024-work-item tiles may be refused
# by NVIDIA's OpenCL at build or launch: recorded, not run): 64 builds at ~0.5-1.5 s;
# evaluations (verify, 2 warm-up, 7 timed): 18 matvec at ~0.3 s (a 268 MB matrix uploaded),
# 32 SpMV at ~0.3 s (~1 GB of matrix), 36 stencil at ~0.4 s (a 226 MB grid uploaded and
# checked on the host); inputs ~5-10 s per target (the SpMV matrix, the stencil's f64
# reference).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/gpu-common.sh
gpu_begin tune3 "clvscu-results/tune3-$(date -u +%Y%m%d)" "$@"

# Cheapest and surest first, so a part stopped at its limit keeps the most finished targets;
# the stencil (the most builds) last. Every evaluation is cached as it finishes: running the
# script again on the same OUT measures only what is missing.
tune_exhaustive matvec/tuned-vec spmv/vector-local stencil/fdtd3d
gpu_end

echo
print_tune_answers
echo
echo "== points the device refused (build-failed / launch-failed), by configuration"
for f in "$OUT"/*/exhaustive/evaluations.csv; do
  echo "-- $f"
  grep -E ',(build-failed|launch-failed|verify-failed),' "$f" | cut -d, -f2,5,7,9,10 || echo "none"
done
