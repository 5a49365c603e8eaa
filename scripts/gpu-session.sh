#!/usr/bin/env bash
# One GPU visit that runs a list of studies, with provenance:
#   STUDIES="shapes texture ..." scripts/gpu-session.sh TITLE [BINARY] [OUTDIR]
# Each study (a built-in name or a TOML file) runs into OUTDIR/<study>, charts included; a
# study that fails keeps its log and the others still run. Then the vendor baselines at the
# sizes of those studies (BASELINES=0 skips them), after the PTX and SASS of both sides
# (INSPECT=0 skips it), and the report over the folders. Nothing here edits a number.
set -uo pipefail
here="$(dirname "$0")"
. "$here/gpu-common.sh"
title="${1:?usage: STUDIES=\"...\" gpu-session.sh TITLE [BINARY] [OUTDIR]}"
shift
gpu_begin "$title" "clvscu-results/$title-$(date -u +%Y%m%d)" "$@"
"$BIN" devices > "$OUT/devices.txt" 2>&1
files=()
for spec in ${STUDIES:?STUDIES names the studies to run}; do
  study="$(basename "$spec" .toml)"
  echo "== $study"
  "$BIN" run --study "$spec" --out "$OUT/$study" --cl-device NVIDIA --quiet > "$OUT/$study.log" 2>&1
  echo "exit $?"; grep -m1 "verified and timed" "$OUT/$study.log"
  if [ -f "$spec" ]; then files+=("$spec"); elif [ -f "$here/../harness/$study.toml" ]; then files+=("$here/../harness/$study.toml"); fi
done
# inspect first: a slow baseline must not cost the PTX evidence.
if [ "${INSPECT:-1}" = 1 ]; then
  echo "== inspect --sass"
  "$BIN" inspect --sass --out "$OUT/inspect" --cl-device NVIDIA > "$OUT/inspect.log" 2>&1; echo "exit $?"
fi
if [ "${BASELINES:-1}" = 1 ]; then
  echo "== baselines"
  python3 "$here/baselines.py" "$OUT/baselines.csv" "${files[@]}" > "$OUT/baselines.log" 2>&1
  echo "exit $?"; grep "failed" "$OUT/baselines.log" | head -n 5
fi
echo "== report"
"$BIN" report "$OUT" > "$OUT/report.log" 2>&1; echo "exit $?"
gpu_end
echo "== done"
