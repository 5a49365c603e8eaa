#!/usr/bin/env bash
# The PTX swap in one GPU visit with provenance (under 150 s on an H100):
#   [SWAP_STUDY=harness/NAME.toml] scripts/gpu-ptxswap.sh [BINARY] [OUTDIR]
# Each runtime runs the other front end's PTX for the open fair-PR cases (harness/ptx-swap.toml,
# or SWAP_STUDY: any study whose comparison names end in /own..., /opencl-ptx... or /nvrtc-ptx).
# NVIDIA's OpenCL can fail a launch of NVRTC's PTX in a way that breaks its context (every later
# OpenCL call then answers UNKNOWN_ERROR), so the comparisons that give OpenCL NVRTC's PTX run
# last, each in a process of its own (`--only NAME`, each into a folder of its own under
# OUTDIR/ptx-swap): one broken context costs only its own comparison. No vendor baselines.
# Nothing here edits a number.
set -uo pipefail
here="$(dirname "$0")"
. "$here/gpu-common.sh"
gpu_begin ptxswap "clvscu-results/ptxswap-$(date -u +%Y%m%d)" "$@"
study="${SWAP_STUDY:-$here/../harness/ptx-swap.toml}"
dir="$OUT/$(basename "$study" .toml)"
run() {
  "$BIN" run --study "$study" --out "$dir/$(echo "$1" | tr -c 'A-Za-z0-9.^\n-' '_')" \
    --cl-device NVIDIA --quiet --only "$1" >> "$OUT/swap.log" 2>&1
  echo "$1: exit $?"
}
run /own
run /opencl-ptx
for name in $(grep -o '^name = "[^"]*/nvrtc-ptx"' "$study" | cut -d'"' -f2); do
  run "$name"
done
grep "verified and timed" "$OUT/swap.log"
if [ "${INSPECT:-0}" = 1 ]; then
  "$BIN" inspect --sass --out "$OUT/inspect" --cl-device NVIDIA > "$OUT/inspect.log" 2>&1
  echo "inspect: exit $?"
fi
"$BIN" report "$OUT" > "$OUT/report.log" 2>&1; echo "report: exit $?"
gpu_end
echo "== done"
