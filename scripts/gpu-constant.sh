#!/usr/bin/env bash
# Constant memory as a fairness factor on one GPU, in one go, with provenance:
#   scripts/gpu-constant.sh [BINARY] [OUTDIR]
# The `constant` study (Sobel's filter in constant memory, global memory and as literals on
# both sides; constant memory on the OpenCL side only; the copy beside it; the broadcast
# micro-kernel), its charts (the Fig. 8-style `constant` chart among them), the vendor
# baselines (cuDNN's 3x3 Sobel and the copy through PyTorch), and `inspect` for the ld.const /
# ld.global counts per side. A short table of PRs and GB/s comes last. Nothing here edits a
# number.
set -uo pipefail
. "$(dirname "$0")/gpu-common.sh"
gpu_begin "constant" "clvscu-results/constant-$(date -u +%Y%m%d)" "$@"
"$BIN" devices > "$OUT/devices.txt" 2>&1
echo "== constant"
"$BIN" run --study constant --out "$OUT/constant" --cl-device NVIDIA --no-plot > "$OUT/constant.log" 2>&1
echo "exit $?"; tail -n 2 "$OUT/constant.log" | head -n 1
"$BIN" plot "$OUT/constant" --out "$OUT/constant/charts" > "$OUT/plot.log" 2>&1; echo "plot exit $?"
# inspect before the baselines: a slow or failing baseline must not cost the PTX classes
# (ld.const / ld.global per side), which the broadcast finding needs.
echo "== inspect"
"$BIN" inspect --sass --out "$OUT/inspect" --cl-device NVIDIA > "$OUT/inspect.log" 2>&1; echo "exit $?"
grep -E '^\| (sobel|broadcast)/' "$OUT/inspect/ptx_classes.md" | grep -E '\| (OpenCL|CUDA) \|' | head -n 30
echo "== baselines"
timeout "${BASELINE_TIMEOUT:-600}" python3 "$(dirname "$0")/baselines.py" "$OUT/baselines.csv" > "$OUT/baselines.log" 2>&1; echo "exit $?"
gpu_end
echo "== PRs and metrics (summary of the run)"
cat "$OUT/constant/summary.md" 2>/dev/null | head -n 60
echo "== done"
