#!/usr/bin/env bash
# The tunes whose best lay at 256 work-items or above on either API, re-run now that the
# driver alone decides a work-group's size (OpenCL's local sizes above 256 are launched and
# the driver's verdict recorded): SGEMM's tiles, SpMV's work-group size, the reduction and
# matvec, each exhaustive on both APIs interleaved, each folder with its provenance.json:
#   scripts/gpu-tune-wg.sh BINARY OUTDIR
# OUTDIR is tarred after every target, so a run stopped at its limit keeps what finished.
set -uo pipefail
. "$(dirname "$0")/gpu-common.sh"
gpu_begin "tune-wg" "clvscu-results/tune-wg-$(date -u +%Y%m%d)" "$@"
pack() { tar -C "$(dirname "$OUT")" -czf "${TARBALL:-$OUT.tgz}" "$(basename "$OUT")"; }
for target in ${TARGETS:-sgemm/blocked spmv/vector-local reduce/tuned matvec/tuned}; do
  t0=$SECONDS
  tune_exhaustive "$target" > "$OUT/${target//\//-}.log" 2>&1
  echo "== $target: $((SECONDS - t0)) s"
  pack
done
gpu_end
pack
print_tune_answers
echo "== OpenCL points above 256 work-items: the driver's verdict"
for f in "$OUT"/*/exhaustive/evaluations.csv; do
  echo "-- $f"
  awk -F, 'NR>1 && $2=="OpenCL" && $5>256 {print $10}' "$f" | sort | uniq -c || true
done
