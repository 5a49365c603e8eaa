#!/usr/bin/env bash
# Index width on one GPU, in one go: the index-width study (every kernel at u32/u32, u64/u64
# and native/native), the default and modern studies under the new default (u32 on both
# sides), and the compiler inspection, with provenance:
#   scripts/gpu-index.sh [BINARY] [OUTDIR]
# Nothing here edits a number; scripts/index-report.py turns the CSVs into the tables.
set -uo pipefail
BIN="${1:-./target/release/clvscu}"
OUT="${2:-clvscu-results/index-$(date -u +%Y%m%d)}"
mkdir -p "$OUT"
exec > >(tee "$OUT/run.log") 2>&1
echo "== clvscu index width $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "command: $0 $*"
Q="--query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,temperature.gpu,power.draw"
nvidia-smi "$Q" --format=csv | tee "$OUT/gpu-before.csv"
"$BIN" --version
"$BIN" devices > "$OUT/devices.txt" 2>&1
for study in index-width default modern; do
  echo "== $study"
  "$BIN" run --study "$study" --out "$OUT/$study" --cl-device NVIDIA --no-plot > "$OUT/$study.log" 2>&1
  echo "exit $?"; tail -n 2 "$OUT/$study.log"
done
echo "== inspect"
"$BIN" inspect --out "$OUT/inspect" --cl-device NVIDIA > "$OUT/inspect.log" 2>&1; echo "exit $?"
nvidia-smi "$Q" --format=csv | tee "$OUT/gpu-after.csv"
echo "== done"
