#!/usr/bin/env bash
# The open gaps of the shapes study, in one short GPU visit with provenance (about 3-4 minutes):
#   scripts/gpu-shapes-gaps.sh [BINARY] [OUTDIR]
# harness/shapes-gaps.toml (split-wide and row-slice against split-k and row-item, one-launch
# reductions at local 256 and with REQD_WG, one-step experiments on two PRs), cuBLAS SGEMV and
# the CUB-backed sum at its sizes, PTX/SASS of both sides (registers of the new kernels), and
# the report with ours / vendor beside each row. Nothing here edits a number.
set -uo pipefail
. "$(dirname "$0")/gpu-common.sh"
gpu_begin "shapes-gaps" "clvscu-results/shapes-gaps-$(date -u +%Y%m%d)" "$@"
"$BIN" devices > "$OUT/devices.txt" 2>&1
for study in shapes-gaps; do
  echo "== $study"
  "$BIN" run --study "$study" --out "$OUT/$study" --cl-device NVIDIA > "$OUT/$study.log" 2>&1
  echo "exit $?"; tail -n 2 "$OUT/$study.log" | head -n 1
done
echo "== baselines"
python3 "$(dirname "$0")/baselines.py" "$OUT/baselines.csv" "$(dirname "$0")/../harness/shapes-gaps.toml" \
  > "$OUT/baselines.log" 2>&1; echo "exit $?"
echo "== inspect --sass"
"$BIN" inspect --sass --out "$OUT/inspect" --cl-device NVIDIA > "$OUT/inspect.log" 2>&1; echo "exit $?"
echo "== report"
"$BIN" report "$OUT" > "$OUT/report.log" 2>&1; echo "exit $?"
gpu_end
echo "== done"
