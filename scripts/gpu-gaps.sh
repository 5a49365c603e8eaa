#!/usr/bin/env bash
# The one-step experiments of harness/gaps-swap.toml (Sobel literal-x4 and banded CSR-stream
# SpMV in the PTX 2x2, the blocked SGEMM with CUDA held to OpenCL's register count), and with
# INSPECT=1 (the default when run alone; gpu-visit.sh passes INSPECT=0 unless it is set)
# `inspect --sass` for every kernel's registers as each API's second stage reports them:
#   scripts/gpu-gaps.sh [BINARY] [OUTDIR]        (about 90 s on an H100 without inspect)
# Nothing here edits a number.
here="$(dirname "$0")"
SWAP_STUDY="$here/../harness/gaps-swap.toml" INSPECT="${INSPECT:-1}" exec "$here/gpu-ptxswap.sh" "$@"
