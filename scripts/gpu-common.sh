# Sourced by the GPU scripts (gpu-suite.sh, gpu-followup.sh, gpu-index.sh): the binary and the
# output folder from the arguments, a log of everything in OUT/run.log, and the GPU's clocks,
# temperature and power before (gpu_begin) and after (gpu_end) the measurements.
GPU_QUERY="--query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,temperature.gpu,power.draw"

# gpu_begin TITLE DEFAULT_OUT [BINARY] [OUTDIR]: sets BIN and OUT, starts the log.
gpu_begin() {
  local title="$1" default_out="$2"
  shift 2
  BIN="${1:-./target/release/clvscu}"
  OUT="${2:-$default_out}"
  mkdir -p "$OUT"
  exec > >(tee "$OUT/run.log") 2>&1
  echo "== clvscu $title $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "command: $0 $*"
  nvidia-smi "$GPU_QUERY" --format=csv | tee "$OUT/gpu-before.csv"
  "$BIN" --version
}

gpu_end() {
  nvidia-smi "$GPU_QUERY" --format=csv | tee "$OUT/gpu-after.csv"
}

# tune_exhaustive TARGET...: each FAMILY/SPACE tuned exhaustively on both APIs into
# OUT/FAMILY-SPACE/exhaustive; every evaluation is cached in that folder as it finishes, so a
# second run on the same OUT measures only what is missing.
tune_exhaustive() {
  local target dir
  for target in "$@"; do
    dir="$OUT/${target//\//-}"
    mkdir -p "$dir"
    echo "== $target: exhaustive"
    "$BIN" tune "$target" --cl-device NVIDIA --strategy exhaustive \
      --cache "$dir/tune-cache.json" --out "$dir/exhaustive" || echo "tune $target failed: see above"
  done
}

# print_tune_answers: every exhaustive answer's space, the two bests and the PRs.
print_tune_answers() {
  local f
  echo "== best-vs-best and same-config PR (exhaustive), refused points by rule"
  for f in "$OUT"/*/exhaustive/answer.md; do
    echo "-- $f"
    grep -E '^(Space:|\| (OpenCL|CUDA) \||- )' "$f" || true
  done
}
