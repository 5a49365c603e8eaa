#!/usr/bin/env bash
# Every fair comparison of the everyday studies with the current binary (issue: each fair PR
# in [0.98, 1.02] or a one-step experiment that says why not): default, whitepaper-table1,
# modern, sweeps, peaks. No vendor baselines, no inspect. scripts/fair-gaps.py then lists
# every fair PR outside [0.98, 1.02] over all results with the experiment that explains it.
#   scripts/gpu-fairness.sh [BINARY] [OUTDIR]          (about 4 minutes on an H100)
# Nothing here edits a number.
here="$(dirname "$0")"
STUDIES="default whitepaper-table1 modern sweeps peaks" BASELINES=0 INSPECT=0 \
  exec "$here/gpu-session.sh" fairness "$@"
