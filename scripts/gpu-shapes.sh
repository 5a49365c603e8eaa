#!/usr/bin/env bash
# Fast at every shape, in one GPU visit with provenance:
#   scripts/gpu-shapes.sh [BINARY] [OUTDIR]
# The shapes study (matvec at every aspect ratio, the read kernel, reductions 2^10..2^30), the
# one-step experiments at 256x262144 (shapes-explain), cuBLAS SGEMV and the CUB-backed sum at
# the studies' sizes, PTX/SASS of both sides, and the report with ours / vendor beside each
# row: gpu-session.sh with these studies. Nothing here edits a number.
STUDIES="shapes shapes-explain" exec "$(dirname "$0")/gpu-session.sh" shapes "$@"
