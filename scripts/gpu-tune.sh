#!/usr/bin/env bash
# clvscu tune on one GPU: exhaustive, then random and anneal against the cached exhaustive
# results, for matvec/tuned and reduce/tuned (OpenCL and CUDA interleaved), with charts, a
# tuned study re-measured by `clvscu run`, and a short table last. Tars nothing.
#
# Usage: scripts/gpu-tune.sh BIN OUT
# Expected run time on an H100/H200: about 8-12 minutes (two spaces of 612 and 600 points x
# 2 APIs, ~0.2-0.4 s an evaluation dominated by uploads and NVRTC/OpenCL builds; the random
# and anneal passes are cache hits; the tuned studies about 1 minute).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/gpu-common.sh
gpu_begin tune "clvscu-results/tune-$(date -u +%Y%m%d)" "$@"
CL="--cl-device NVIDIA"
SEEDS="1 2 3"

for target in matvec/tuned reduce/tuned; do
  dir="$OUT/${target//\//-}"
  mkdir -p "$dir"
  cache="$dir/tune-cache.json"
  echo "== $target: exhaustive"
  "$BIN" tune "$target" $CL --strategy exhaustive --cache "$cache" --out "$dir/exhaustive"
  for seed in $SEEDS; do
    echo "== $target: random and anneal against the cache, seed $seed"
    "$BIN" tune "$target" $CL --strategy random,anneal --seed "$seed" --cache "$cache" \
      --out "$dir/search-seed$seed"
  done
  echo "== $target: the tuned study, re-measured"
  "$BIN" run --study "$dir/exhaustive/tuned.toml" $CL --out "$dir/tuned-run" || true
done
gpu_end
echo "== vendor baselines (cuBLAS SGEMV, CUB sum) at the tuned sizes"
python3 scripts/baselines.py "$OUT/baselines.csv" "$OUT"/*/exhaustive/tuned.toml || true

echo
echo "== strategies against the exhaustive best (evaluations asked, cache hits counted)"
for f in "$OUT"/*/search-seed*/answer.md; do
  echo "-- $f"
  grep -E '^\| (random|anneal) ' "$f" || true
done
echo
print_tune_answers
