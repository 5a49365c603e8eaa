#!/usr/bin/env bash
# matvec/auto's measured rule (issue 33), one GPU visit:
#   scripts/gpu-shape-sweep.sh [BINARY] [OUTDIR]
# 1. the shape sweep (harness/shape-sweep.toml: every auto-eligible variant that can win at each
#    shape, and the read kernel) into OUTDIR/sweep/shape-sweep;
# 2. cuBLAS SGEMV (torch.mv) at every sweep shape into OUTDIR/sweep/baselines.csv, where python3
#    with torch is installed;
# 3. `clvscu shapes-rule` derives the GPU's table into OUTDIR/rules/;
# 4. matvec/auto at every sweep shape with that table (CLVSCU_MATVEC_RULES) into
#    OUTDIR/sweep/shape-sweep-auto, and with the binary's own rule into OUTDIR/auto-builtin
#    (the hand rule until a table for this GPU is built in; each row's flags say which);
# 5. `clvscu shapes-rule` again: the same table, and checks.md (auto against cuBLAS beyond the
#    L2 and against the read kernel at 2^28 floats).
# The checks read OUTDIR/sweep only. Commit OUTDIR as results/<gpu>-<date>-shape-sweep and OUTDIR/rules/matvec-auto-*.toml in
# harness/rules/. About 4-5 minutes on an H100. Nothing here edits a number.
set -uo pipefail
here="$(dirname "$0")"
. "$here/gpu-common.sh"
gpu_begin shape-sweep "clvscu-results/shape-sweep-$(date -u +%Y%m%d)" "$@"
"$BIN" devices > "$OUT/devices.txt" 2>&1
mkdir -p "$OUT/sweep"
run_study() { # run_study STUDY DIR
  echo "== $1 -> $2"
  local t0=$SECONDS
  "$BIN" run --study "$here/../harness/$1.toml" --out "$2" --cl-device NVIDIA --quiet \
    > "$2.log" 2>&1
  echo "exit $? after $((SECONDS - t0)) s"; grep -m1 "verified and timed" "$2.log"
}
run_study shape-sweep "$OUT/sweep/shape-sweep"
if python3 -c "import torch" 2>/dev/null; then
  echo "== baselines (cuBLAS SGEMV at every sweep shape)"
  t0=$SECONDS
  BASELINES_ONLY=shapes python3 "$here/baselines.py" "$OUT/sweep/baselines.csv" \
    "$here/../harness/shape-sweep.toml" > "$OUT/baselines.log" 2>&1
  echo "exit $? after $((SECONDS - t0)) s"; grep "failed" "$OUT/baselines.log" | head -n 5
else
  echo "== no python3 with torch: no cuBLAS baselines (the cuBLAS checks will say missing)"
fi
echo "== shapes-rule (table)"
"$BIN" shapes-rule "$OUT/sweep" --out "$OUT/rules" > "$OUT/shapes-rule.log" 2>&1; echo "exit $?"
table="$(ls "$OUT"/rules/matvec-auto-*.toml 2>/dev/null | head -n 1)"
if [ -n "$table" ]; then
  export CLVSCU_MATVEC_RULES="$table"
  run_study shape-sweep-auto "$OUT/sweep/shape-sweep-auto"
  unset CLVSCU_MATVEC_RULES
else
  echo "no table was derived: see $OUT/shapes-rule.log"
fi
run_study shape-sweep-auto "$OUT/auto-builtin"
echo "== shapes-rule (table and checks)"
"$BIN" shapes-rule "$OUT/sweep" --out "$OUT/rules" > "$OUT/shapes-rule.log" 2>&1; echo "exit $?"
cat "$OUT/rules/checks.md" 2>/dev/null
gpu_end
echo "== done"
