#!/usr/bin/env bash
# The compiler as a fairness factor on one GPU, in one go: the second-stage study (JIT options
# held equal and one-sided), the one-step experiments for the fair PRs away from 1 (Listing 4's
# unroll at point B, the reductions across sizes), any further studies named in STUDIES, and
# the inspection of PTX and SASS, with provenance:
#   STUDIES="fdtd-unroll fft" scripts/gpu-compiler.sh [BINARY] [OUTDIR]
set -uo pipefail
. "$(dirname "$0")/gpu-common.sh"
gpu_begin "compiler" "clvscu-results/compiler-$(date -u +%Y%m%d)" "$@"
"$BIN" devices > "$OUT/devices.txt" 2>&1
for study in second-stage listing4-unroll reduce-sizes ${STUDIES:-}; do
  echo "== $study"
  "$BIN" run --study "$study" --out "$OUT/$study" --cl-device NVIDIA --no-plot > "$OUT/$study.log" 2>&1
  echo "exit $?"; tail -n 2 "$OUT/$study.log"
done
echo "== inspect --sass"
"$BIN" inspect --sass --out "$OUT/inspect" --cl-device NVIDIA > "$OUT/inspect.log" 2>&1; echo "exit $?"
grep '^note' "$OUT/inspect.log" | head -20
gpu_end
echo "== done"
