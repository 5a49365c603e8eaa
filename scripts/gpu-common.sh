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
