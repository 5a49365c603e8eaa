#!/usr/bin/env bash
# The user's own kernel pair (examples/saxpy: SAXPY from saxpy.cl and saxpy.cu) on one GPU, in
# one folder: the study run, each API's work-group size tuned over the study's list, and the
# explain ladder, with provenance (about a minute on an H100):
#   scripts/gpu-userpair.sh [BINARY] [OUTDIR]
set -uo pipefail
. "$(dirname "$0")/gpu-common.sh"
gpu_begin "user kernel pair" "clvscu-results/saxpy-$(date -u +%Y%m%d)" "$@"
STUDY="$(dirname "$0")/../examples/saxpy/saxpy.toml"
echo "== run"
"$BIN" run --study "$STUDY" --out "$OUT/run" --cl-device NVIDIA --timeout 60 > "$OUT/run-study.log" 2>&1
echo "exit $?"; tail -n 4 "$OUT/run-study.log"
echo "== tune"
"$BIN" tune --study "$STUDY" --out "$OUT/tune" --cl-device NVIDIA --timeout 60 > "$OUT/tune.log" 2>&1
echo "exit $?"; tail -n 12 "$OUT/tune.log"
echo "== explain"
"$BIN" explain --study "$STUDY" --out "$OUT/explain" --cl-device NVIDIA --timeout 60 > "$OUT/explain.log" 2>&1
echo "exit $?"; tail -n 8 "$OUT/explain.log"
gpu_end
echo "== done"
