#!/usr/bin/env bash
# harness/row-multi-explain.toml: row-multi's fair PR with CUDA's L1 / shared-memory carveout
# set on the CUDA side (about 40 s on an H100). No vendor baselines, no inspect.
#   scripts/gpu-rowmulti.sh [BINARY] [OUTDIR]
# Nothing here edits a number.
here="$(dirname "$0")"
STUDIES="$here/../harness/row-multi-explain.toml" BASELINES=0 INSPECT=0 \
  exec "$here/gpu-session.sh" rowmulti "$@"
