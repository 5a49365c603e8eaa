#!/usr/bin/env bash
# Index width on one GPU, in one go: the index-width study (every kernel at u32/u32, u64/u64
# and native/native), the default and modern studies under the new default (u32 on both
# sides), and the compiler inspection, with provenance:
#   scripts/gpu-index.sh [BINARY] [OUTDIR]
# Nothing here edits a number; scripts/index-report.py turns the CSVs into the tables.
set -uo pipefail
. "$(dirname "$0")/gpu-common.sh"
gpu_begin "index width" "clvscu-results/index-$(date -u +%Y%m%d)" "$@"
"$BIN" devices > "$OUT/devices.txt" 2>&1
for study in index-width default modern; do
  echo "== $study"
  "$BIN" run --study "$study" --out "$OUT/$study" --cl-device NVIDIA --no-plot > "$OUT/$study.log" 2>&1
  echo "exit $?"; tail -n 2 "$OUT/$study.log"
done
echo "== inspect"
"$BIN" inspect --out "$OUT/inspect" --cl-device NVIDIA > "$OUT/inspect.log" 2>&1; echo "exit $?"
gpu_end
echo "== done"
