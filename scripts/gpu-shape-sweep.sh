#!/usr/bin/env bash
# matvec/auto's measured rule (issue 33), one GPU visit, self-contained:
#   scripts/gpu-shape-sweep.sh [BINARY] [OUTDIR]
# (BINARY defaults to ./target/release/clvscu, OUTDIR to clvscu-results/shape-sweep-<date>.)
# 1. the shape sweep (harness/shape-sweep.toml: every auto-eligible variant that can win at each
#    shape, and the read kernel) into OUTDIR/sweep/shape-sweep;
# 2. cuBLAS SGEMV (torch.mv) at every sweep shape into OUTDIR/sweep/baselines.csv, where python3
#    with torch is installed;
# 3. `clvscu shapes-rule` derives the GPU's table into OUTDIR/rules/;
# 4. matvec/auto at every sweep shape with that table (CLVSCU_MATVEC_RULES) into
#    OUTDIR/sweep/shape-sweep-auto, and with the binary's own rule into OUTDIR/auto-builtin
#    (the table built into the binary for this GPU, if any, else the hand rule; each row's flags
#    say which);
# 5. `clvscu shapes-rule` again: the same table, and checks.md (auto against cuBLAS beyond the
#    L2 and against the read kernel at 2^28 floats).
# Everything goes under OUTDIR (a log of it all in OUTDIR/run.log, the GPU's clocks, temperature
# and power before and after in gpu-before.csv / gpu-after.csv); no charts; raw samples gzipped.
# The checks read OUTDIR/sweep only. Commit OUTDIR as results/<gpu>-<date>-shape-sweep and
# OUTDIR/rules/matvec-auto-*.toml in harness/rules/ (tests/shape_sweep.rs holds the newest sweep
# of each GPU to the table and the bars). About one minute on an H100. Nothing here edits a number.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
harness="$here/../harness"
BIN="${1:-./target/release/clvscu}"
OUT="${2:-clvscu-results/shape-sweep-$(date -u +%Y%m%d)}"
if [ ! -x "$BIN" ]; then
  echo "no clvscu binary at $BIN (give it as the first argument)" >&2
  exit 2
fi
mkdir -p "$OUT/sweep" || exit 2
exec > >(tee "$OUT/run.log") 2>&1
GPU_QUERY="--query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,temperature.gpu,power.draw"
gpu_state() { # gpu_state FILE: the GPU's clocks, temperature and power, where nvidia-smi exists
  if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi "$GPU_QUERY" --format=csv | tee "$1"
  else
    echo "no nvidia-smi: no $1"
  fi
}
echo "== clvscu shape-sweep $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "command: $0 $*"
gpu_state "$OUT/gpu-before.csv"
"$BIN" --version
"$BIN" devices > "$OUT/devices.txt" 2>&1

run_study() { # run_study STUDY DIR
  echo "== $1 -> $2"
  local t0=$SECONDS
  "$BIN" run --study "$harness/$1.toml" --out "$2" --cl-device NVIDIA --quiet --no-plot \
    > "$2.log" 2>&1
  echo "exit $? after $((SECONDS - t0)) s"; grep -m1 "verified and timed" "$2.log"
}
derive() { # derive: the table (and checks) from OUT/sweep into OUT/rules
  "$BIN" shapes-rule "$OUT/sweep" --out "$OUT/rules" > "$OUT/shapes-rule.log" 2>&1
  echo "exit $?"
}

run_study shape-sweep "$OUT/sweep/shape-sweep"
if python3 -c "import torch" 2>/dev/null; then
  echo "== baselines (cuBLAS SGEMV at every sweep shape)"
  t0=$SECONDS
  BASELINES_ONLY=shapes python3 "$here/baselines.py" "$OUT/sweep/baselines.csv" \
    "$harness/shape-sweep.toml" > "$OUT/baselines.log" 2>&1
  echo "exit $? after $((SECONDS - t0)) s"; grep "failed" "$OUT/baselines.log" | head -n 5
else
  echo "== no python3 with torch: no cuBLAS baselines (the cuBLAS checks will say missing)"
fi
echo "== shapes-rule (table)"
derive
table="$(ls "$OUT"/rules/matvec-auto-*.toml 2>/dev/null | head -n 1)"
if [ -n "$table" ]; then
  CLVSCU_MATVEC_RULES="$table" run_study experiments/shape-sweep-auto "$OUT/sweep/shape-sweep-auto"
else
  echo "no table was derived: see $OUT/shapes-rule.log"
fi
run_study experiments/shape-sweep-auto "$OUT/auto-builtin"
echo "== shapes-rule (table and checks)"
derive
cat "$OUT/rules/checks.md" 2>/dev/null
find "$OUT" -name samples.csv -type f -exec gzip -f {} \;
gpu_state "$OUT/gpu-after.csv"
echo "== done"
