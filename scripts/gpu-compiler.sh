#!/usr/bin/env bash
# The compiler as a fairness factor on one GPU, in one go, with provenance:
#   scripts/gpu-compiler.sh [BINARY] [OUTDIR]
# The default study (its fair PRs), the second stage (JIT options held equal and one-sided),
# the one-step experiments for fair PRs away from 1 (Listing 4's unroll at point B, the
# reductions across sizes), the FDTD3d unroll points (Figs. 6-7), the FFT at three index
# widths (Table V), the flag studies on compute-bound kernels with cuBLAS SGEMM beside them,
# and the inspection of PTX and SASS. STUDIES="..." replaces the list. Nothing here edits a
# number.
set -uo pipefail
. "$(dirname "$0")/gpu-common.sh"
gpu_begin "compiler" "clvscu-results/compiler-$(date -u +%Y%m%d)" "$@"
"$BIN" devices > "$OUT/devices.txt" 2>&1
for spec in ${STUDIES:-default second-stage listing4-unroll reduce-sizes fdtd-unroll fft harness/flags-compute.toml}; do
  study="$(basename "$spec" .toml)"
  echo "== $study"
  "$BIN" run --study "$spec" --out "$OUT/$study" --cl-device NVIDIA --no-plot > "$OUT/$study.log" 2>&1
  echo "exit $?"; tail -n 2 "$OUT/$study.log" | head -n 1
done
for study in fdtd-unroll listing4-unroll; do
  [ -d "$OUT/$study" ] && "$BIN" plot "$OUT/$study" --out "$OUT/$study/charts" > /dev/null 2>&1
done
echo "== baselines"
python3 "$(dirname "$0")/baselines.py" "$OUT/baselines.csv" > "$OUT/baselines.log" 2>&1; echo "exit $?"
echo "== inspect --sass"
"$BIN" inspect --sass --out "$OUT/inspect" --cl-device NVIDIA > "$OUT/inspect.log" 2>&1; echo "exit $?"
grep '^note' "$OUT/inspect.log" | head -n 10
gpu_end
echo "== done"
