#!/usr/bin/env bash
# The PTX swap of harness/swap2.toml (row-multi and row-item), each NVRTC-PTX-on-OpenCL
# comparison in a process of its own (scripts/gpu-ptxswap.sh); about 60 s on an H100.
#   scripts/gpu-swap2.sh [BINARY] [OUTDIR]
# Nothing here edits a number.
here="$(dirname "$0")"
SWAP_STUDY="$here/../harness/swap2.toml" exec "$here/gpu-ptxswap.sh" "$@"
