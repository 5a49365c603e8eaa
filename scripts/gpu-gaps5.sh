#!/usr/bin/env bash
# harness/gaps5.toml (banded CSR-stream SpMV through texture, CUDA's carveout set on the CUDA
# side); about 40 s on an H100. No vendor baselines, no inspect.
#   scripts/gpu-gaps5.sh [BINARY] [OUTDIR]
# Nothing here edits a number.
here="$(dirname "$0")"
STUDIES="$here/../harness/gaps5.toml" BASELINES=0 INSPECT=0 exec "$here/gpu-session.sh" gaps5 "$@"
