#!/usr/bin/env bash
# Fast at every shape, in one GPU visit with provenance:
#   scripts/gpu-shapes.sh [BINARY] [OUTDIR]
# The shapes study (matvec at every aspect ratio, the read kernel, reductions 2^10..2^30), the
# one-step experiments at 256x262144 (shapes-explain), cuBLAS SGEMV and the CUB-backed sum at
# the shapes study's sizes (baselines.py with the study file), PTX/SASS of both sides, and the
# report with ours / vendor beside each row. Nothing here edits a number.
set -uo pipefail
. "$(dirname "$0")/gpu-common.sh"
gpu_begin "shapes" "clvscu-results/shapes-$(date -u +%Y%m%d)" "$@"
"$BIN" devices > "$OUT/devices.txt" 2>&1
for study in shapes shapes-explain; do
  echo "== $study"
  "$BIN" run --study "$study" --out "$OUT/$study" --cl-device NVIDIA > "$OUT/$study.log" 2>&1
  echo "exit $?"; tail -n 2 "$OUT/$study.log" | head -n 1
done
echo "== baselines"
python3 "$(dirname "$0")/baselines.py" "$OUT/baselines.csv" "$(dirname "$0")/../harness/shapes.toml" \
  > "$OUT/baselines.log" 2>&1; echo "exit $?"
echo "== inspect --sass"
"$BIN" inspect --sass --out "$OUT/inspect" --cl-device NVIDIA > "$OUT/inspect.log" 2>&1; echo "exit $?"
echo "== report"
"$BIN" report "$OUT" > "$OUT/report.log" 2>&1; echo "exit $?"
gpu_end
echo "== done"
