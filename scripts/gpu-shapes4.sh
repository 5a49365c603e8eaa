#!/usr/bin/env bash
# The shapes below 0.9 x the read kernel, one step at a time (harness/shapes4.toml), with
# cuBLAS SGEMV at the shapes study's sizes (BASELINES_ONLY=shapes): gpu-session.sh with that
# study. About 2.5 minutes on an H100. Nothing here edits a number.
#   scripts/gpu-shapes4.sh [BINARY] [OUTDIR]
here="$(dirname "$0")"
STUDIES="$here/../harness/shapes4.toml" BASELINES_ONLY=shapes INSPECT="${INSPECT:-0}" \
  exec "$here/gpu-session.sh" shapes4 "$@"
