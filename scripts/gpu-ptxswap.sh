#!/usr/bin/env bash
# The PTX swap in one GPU visit with provenance (budget: under 150 s on an H100):
#   scripts/gpu-ptxswap.sh [BINARY] [OUTDIR]
# Each runtime runs the other front end's PTX for the open fair-PR cases (SGEMM tiled16 and
# blocked, precise exp, Listing 4, small and large reductions), then the PTX and SASS of both
# sides and the report with the 2x2 per kernel: gpu-session.sh with this study. No vendor
# baselines: the question is the two runtimes and the two front ends, not the libraries.
# Nothing here edits a number.
here="$(dirname "$0")"
STUDIES="$here/../harness/ptx-swap.toml" BASELINES=0 exec "$here/gpu-session.sh" ptxswap "$@"
