#!/usr/bin/env bash
# Follow-up of the fair PRs that are not 1 (Listings 4 and 5, tuned matvec) and of the launch
# PR that moved between passes, for anyone with an NVIDIA GPU (run from the repository root):
#   scripts/gpu-followup.sh [BINARY] [OUTDIR]
# 1. inspect with each experiment kernel directory: PTX, and registers as NVIDIA's OpenCL
#    compiler reports them (-cl-nv-verbose) next to the CUDA driver's count;
# 2. study followup-index with each directory, two passes in one process;
# 3. the launch-overhead comparisons five times in one process.
set -uo pipefail
. "$(dirname "$0")/gpu-common.sh"
gpu_begin "GPU follow-up" "clvscu-results/followup-$(date -u +%Y%m%d)" "$@"
CL="--cl-device NVIDIA"
"$(dirname "$0")/experiment-kernels.sh" "$OUT/kernels"
for d in base u32 wgconst u32-wgconst; do
  mkdir -p "$OUT/$d"
  echo "== inspect $d"
  "$BIN" inspect --kernels-dir "$OUT/kernels/$d" --out "$OUT/$d/inspect" $CL > "$OUT/$d/inspect.log" 2>&1; echo "exit $?"
  echo "== followup-index $d"
  "$BIN" run --study harness/followup-index.toml --kernels-dir "$OUT/kernels/$d" --passes 2 \
    --out "$OUT/$d/run" $CL --no-plot > "$OUT/$d/run.log" 2>&1
  echo "exit $?"; tail -n 1 "$OUT/$d/run.log"
done
echo "== launch x5"
"$BIN" run --study peaks --only launch --passes 5 --out "$OUT/launch" $CL --no-plot > "$OUT/launch.log" 2>&1
echo "exit $?"; tail -n 1 "$OUT/launch.log"
gpu_end
echo "== PR per experiment (pass1 / pass2)"
for d in base u32 wgconst u32-wgconst; do
  awk -F, -v d="$d" 'NR>1 {printf "%-12s %-28s PR %.3f\n", d, $3, $16}' "$OUT/$d/run/prs.csv"
done
echo "== registers (OpenCL -cl-nv-verbose / CUDA), max work-group"
awk -F, 'NR>1 && ($1 ~ /matvec|reduce\/multi/) {print $1, $2, "regs", $4, "maxWG", $7}' "$OUT/base/inspect/ptx_resources.csv"
echo "== launch"
awk -F, 'NR>1 {printf "%-28s PR %.3f\n", $3, $16}' "$OUT/launch/prs.csv"
echo "== done"
