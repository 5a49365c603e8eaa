#!/usr/bin/env bash
# The rule's choice after split-flat (harness/flat-auto.toml), no vendor baselines:
# gpu-session.sh with that study. Under a minute on an H100. Nothing here edits a number.
#   scripts/gpu-flat-auto.sh [BINARY] [OUTDIR]
here="$(dirname "$0")"
STUDIES="$here/../harness/flat-auto.toml" BASELINES=0 INSPECT="${INSPECT:-0}" \
  exec "$here/gpu-session.sh" flat-auto "$@"
