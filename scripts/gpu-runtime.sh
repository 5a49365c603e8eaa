#!/usr/bin/env bash
# The runtime as a fairness factor on one GPU, in one go, with provenance:
#   scripts/gpu-runtime.sh [BINARY] [OUTDIR]
# The launch study (a 1 x 1 launch in the three host wait modes side by side, one-sided waits,
# back-to-back launches, the grid-size sweep with OpenCL's queue intervals), the transfer study
# (pageable and pinned, 4 KiB to 1 GiB, transfer/kernel overlap), the old peaks study for its
# `launch/empty-wall` row, the vendor baselines (PyTorch copies, a CuPy launch), and a short
# table last. Nothing here edits a number.
set -uo pipefail
. "$(dirname "$0")/gpu-common.sh"
gpu_begin "runtime" "clvscu-results/runtime-$(date -u +%Y%m%d)" "$@"
"$BIN" devices > "$OUT/devices.txt" 2>&1
for study in ${STUDIES:-launch transfers peaks}; do
  echo "== $study"
  "$BIN" run --study "$study" --out "$OUT/$study" --cl-device NVIDIA --no-plot > "$OUT/$study.log" 2>&1
  echo "exit $?"; tail -n 2 "$OUT/$study.log" | head -n 1
done
echo "== baselines"
python3 "$(dirname "$0")/baselines.py" "$OUT/baselines.csv" > "$OUT/baselines.log" 2>&1; echo "exit $?"
grep -E '^(launch|h2d|d2h)' "$OUT/baselines.log"
gpu_end
echo "== runtime report"
python3 "$(dirname "$0")/runtime-report.py" "$OUT" | tee "$OUT/runtime-report.md"
echo "== done"
