#!/usr/bin/env bash
# The open gaps of the shapes study, in one short GPU visit with provenance (about 3-4 minutes):
#   scripts/gpu-shapes-gaps.sh [BINARY] [OUTDIR]
# harness/shapes-gaps.toml (split-wide and row-slice against split-k and row-item, one-launch
# reductions at local 256 and with REQD_WG, one-step experiments on two PRs), cuBLAS SGEMV and
# the CUB-backed sum at its sizes, PTX/SASS of both sides (registers of the new kernels), and
# the report with ours / vendor beside each row: gpu-session.sh with this study. Nothing here
# edits a number.
STUDIES="shapes-gaps" exec "$(dirname "$0")/gpu-session.sh" shapes-gaps "$@"
