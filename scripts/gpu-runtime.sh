#!/usr/bin/env bash
# The runtime on one GPU, measured as a plain program measures it, in one go with provenance:
#   scripts/gpu-runtime.sh BINARY OUTDIR
# `clvscu calibrate` (the harness's launch path against a plain loop of each API's driver
# calls: 1 x 1 and a grid sweep, one at a time and 1000 back to back, every wait mode), then
# the launch study, the two-launch reductions on the host clock, host transfers, and BFS per
# level on the layered uniform graphs (each run starts with the quick calibration). OUTDIR is
# tarred after every step, so a run stopped at its limit keeps what finished. A short table
# last. Nothing here edits a number.
set -uo pipefail
. "$(dirname "$0")/gpu-common.sh"
gpu_begin "runtime" "clvscu-results/runtime-$(date -u +%Y%m%d)" "$@"
CL="--cl-device NVIDIA"
pack() { tar -C "$(dirname "$OUT")" -czf "${TARBALL:-$OUT.tgz}" "$(basename "$OUT")"; }
"$BIN" devices > "$OUT/devices.txt" 2>&1
step() {
  local name="$1"; shift
  echo "== $name: $*"
  local t0=$SECONDS
  "$BIN" "$@" > "$OUT/$name.log" 2>&1
  echo "exit $? after $((SECONDS - t0)) s"; tail -n 2 "$OUT/$name.log" | head -n 1
  pack
}
step calibrate calibrate $CL --out "$OUT/calibrate"
step launch run --study launch $CL --no-plot --out "$OUT/launch"
step reduce-host run reduce/tuned --size 2^16,2^18,2^20 --timer wall-clock $CL --no-plot --out "$OUT/reduce-host"
step transfers run --study transfers $CL --no-plot --out "$OUT/transfers"
step bfs run --study bfs --only /uniform $CL --no-plot --out "$OUT/bfs"
gpu_end
pack
echo "== calibration checks"
sed -n '/## Checks/,$p' "$OUT/calibrate/calibration.md"
echo "== launch PR, harness vs plain (finish, 1x1 and back to back)"
grep -E '^\| 1x1 \| (1|1000) \|' "$OUT/calibrate/calibration.md" || true
echo "== done"
