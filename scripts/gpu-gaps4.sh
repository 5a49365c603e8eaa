#!/usr/bin/env bash
# harness/gaps4.toml (banded CSR-stream SpMV, read-only and texture paths, both sides held to 32
# registers); about 40 s on an H100. No vendor baselines, no inspect.
#   scripts/gpu-gaps4.sh [BINARY] [OUTDIR]
# Nothing here edits a number.
here="$(dirname "$0")"
STUDIES="$here/../harness/gaps4.toml" BASELINES=0 INSPECT=0 exec "$here/gpu-session.sh" gaps4 "$@"
