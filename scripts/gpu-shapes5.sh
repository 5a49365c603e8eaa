#!/usr/bin/env bash
# split-flat beside split-one's best at the five wide shapes (harness/shapes5.toml), with
# cuBLAS SGEMV at the study's shapes (BASELINES_ONLY=shapes): gpu-session.sh with that study.
# About 2 minutes on an H100. Nothing here edits a number.
#   scripts/gpu-shapes5.sh [BINARY] [OUTDIR]
here="$(dirname "$0")"
STUDIES="$here/../harness/shapes5.toml" BASELINES_ONLY=shapes INSPECT="${INSPECT:-0}" \
  exec "$here/gpu-session.sh" shapes5 "$@"
