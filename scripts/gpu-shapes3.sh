#!/usr/bin/env bash
# Issue 19's evidence in one short GPU visit (at most 4 minutes on an H100):
#   scripts/gpu-shapes3.sh [BINARY] [OUTDIR]
# harness/shapes3.toml (auto and the best candidates at every shape of the shapes study, the
# read kernel, reductions 2^22..2^30) and harness/reduce-launches.toml (each launch of the
# two-launch reduction timed alone at 2^16..2^20), then cuBLAS SGEMV and the CUB-backed sum at
# their sizes only (BASELINES_ONLY=shapes), and the report with ours / vendor beside each row:
# gpu-session.sh with these studies. INSPECT=1 adds the PTX and SASS of both sides (about a
# minute more: over the budget). Nothing here edits a number.
here="$(dirname "$0")"
STUDIES="$here/../harness/shapes3.toml $here/../harness/reduce-launches.toml" \
  BASELINES_ONLY=shapes INSPECT="${INSPECT:-0}" exec "$here/gpu-session.sh" shapes3 "$@"
