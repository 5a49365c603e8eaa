#!/usr/bin/env bash
# The whole GPU suite in one go, for anyone with an NVIDIA GPU (OpenCL + CUDA 13 driver):
#   scripts/gpu-suite.sh [BINARY] [OUTDIR]
# Runs every study twice (pass1/, pass2/) in both APIs, the vendor baselines (PyTorch), the
# compiler inspection, and records provenance. Nothing here edits a number.
set -uo pipefail
. "$(dirname "$0")/gpu-common.sh"
gpu_begin "GPU suite" "clvscu-results/gpu-$(date -u +%Y%m%d)" "$@"
"$BIN" devices | tee "$OUT/devices.txt"
CL="--cl-device NVIDIA"
for pass in pass1 pass2; do
  mkdir -p "$OUT/$pass"
  for study in whitepaper-table1 modern unfair peaks sweeps flags-compute; do
    echo "== $pass $study"
    "$BIN" run --study "$study" --out "$OUT/$pass/$study" $CL --no-plot > "$OUT/$pass/$study.log" 2>&1
    echo "exit $?"; tail -n 3 "$OUT/$pass/$study.log"
  done
done
echo "== baselines"
python3 "$(dirname "$0")/baselines.py" "$OUT/baselines.csv"
echo "== inspect"
"$BIN" inspect --out "$OUT/inspect" $CL > "$OUT/inspect.log" 2>&1; echo "exit $?"
gpu_end
echo "== done"
