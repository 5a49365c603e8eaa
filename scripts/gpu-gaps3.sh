#!/usr/bin/env bash
# harness/gaps3.toml through the PTX-swap runner (each NVRTC-PTX-on-OpenCL comparison in a
# process of its own), plus `inspect --sass`; about 2 minutes on an H100.
#   scripts/gpu-gaps3.sh [BINARY] [OUTDIR]
# Nothing here edits a number.
here="$(dirname "$0")"
SWAP_STUDY="$here/../harness/gaps3.toml" INSPECT=1 exec "$here/gpu-ptxswap.sh" "$@"
