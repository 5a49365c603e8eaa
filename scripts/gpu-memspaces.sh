#!/usr/bin/env bash
# The memory-space studies on one GPU, in one go, with provenance:
#   scripts/gpu-memspaces.sh [BINARY] [OUTDIR]
# texture (SpMV and MD through plain, read-only and texture reads), texture-explain (the
# one-step experiments for the scalar SpMV's texture PR), constant (Sobel, the copy beside it,
# the broadcast rule), each with its charts; then `inspect` (both sides' PTX, and per kernel
# the memory-space counts: ld.const, ld.global, ld.global.nc, tex, tex at float coordinates,
# suld/sust) before the vendor baselines, so that a slow baseline never costs the PTX
# evidence; then cuSPARSE, cuDNN's Sobel and the copy through PyTorch on the studies'
# matrices and images (bounded by BASELINE_TIMEOUT seconds, default 600), and the report.
# Nothing here edits a number.
set -uo pipefail
here="$(dirname "$0")"
. "$here/gpu-common.sh"
gpu_begin "memspaces" "clvscu-results/memspaces-$(date -u +%Y%m%d)" "$@"
"$BIN" devices > "$OUT/devices.txt" 2>&1
for study in texture texture-explain constant; do
  echo "== $study"
  start=$(date +%s)
  "$BIN" run --study "$study" --out "$OUT/$study" --cl-device NVIDIA --quiet > "$OUT/$study.log" 2>&1
  echo "exit $? after $(( $(date +%s) - start )) s"; grep -m1 "verified and timed" "$OUT/$study.log"
  "$BIN" plot "$OUT/$study" --out "$OUT/$study/charts" > "$OUT/$study.plot.log" 2>&1
done

echo "== inspect --sass"
"$BIN" inspect --sass --out "$OUT/inspect" --cl-device NVIDIA > "$OUT/inspect.log" 2>&1; echo "exit $?"
spaces="$OUT/inspect/memory_spaces.csv"
if [ -f "$spaces" ]; then
  echo "memory spaces per kernel and side (PTX instructions):"
  # One line per (pair, api): space=count for the non-zero spaces.
  awk -F, 'NR > 1 && $1 ~ /^(spmv|md|sobel|broadcast)\// && $5 != 0 {
             k = $1 " " $3; if (!(k in row)) order[n++] = k; row[k] = row[k] " " $4 "=" $5 }
           END { for (i = 0; i < n; i++) printf "  %-34s%s\n", order[i], row[order[i]] }' "$spaces"
fi
# The scalar SpMV's texture kernel as each compiler wrote it (the loop's tex count is its
# unroll factor), and the broadcast kernels (ld.const or ld.global for the divergent table).
for side in opencl cuda; do
  for pair in spmv:spmv_csr_scalar_tex constant:broadcast_constant_divergent; do
    stem="${pair%%:*}"; kernel="${pair#*:}"
    ptx="$OUT/inspect/$stem.$side.ptx"
    [ -f "$ptx" ] || continue
    awk -v k="$kernel" '$0 ~ "\\.entry " k "\\(" { on = 1 } on { print } on && /^}/ { exit }' \
      "$ptx" > "$OUT/inspect/$kernel.$side.ptx"
    echo "  $kernel ($side): $(grep -cE '^\s*tex\.' "$OUT/inspect/$kernel.$side.ptx") tex," \
      "$(grep -cE '^\s*ld\.const' "$OUT/inspect/$kernel.$side.ptx") ld.const," \
      "$(grep -cE '^\s*ld\.global' "$OUT/inspect/$kernel.$side.ptx") ld.global*," \
      "$(grep -cE '^\s*(suld|sust)' "$OUT/inspect/$kernel.$side.ptx") suld/sust;" \
      "tex forms: $(grep -oE 'tex\.[a-z0-9.]+' "$OUT/inspect/$kernel.$side.ptx" | sort -u | tr '\n' ' ')"
  done
done

echo "== baselines"
start=$(date +%s)
timeout "${BASELINE_TIMEOUT:-600}" python3 "$here/baselines.py" "$OUT/baselines.csv" \
  "$here/../harness/texture.toml" "$here/../harness/texture-explain.toml" \
  > "$OUT/baselines.log" 2>&1
echo "exit $? after $(( $(date +%s) - start )) s"
grep -E "failed|generated" "$OUT/baselines.log" | head -n 10
grep -E "^(spmv|sobel|copy)" "$OUT/baselines.log"

echo "== report"
"$BIN" report "$OUT" > "$OUT/report.log" 2>&1; echo "exit $?"
gpu_end
for study in texture-explain constant; do
  echo "== PRs: $study"
  sed -n '/^## Performance Ratio/,/^## /p' "$OUT/$study/summary.md" 2>/dev/null | head -n 30
done
echo "== done"
