#!/usr/bin/env bash
# harness/gaps-registers.toml (Sobel literal-x4, banded CSR-stream SpMV and row-multi with both
# sides held to one register limit) and `inspect --sass` (each side's registers, PTX and SASS
# classes without a limit): gpu-session.sh with that study, no vendor baselines.
#   scripts/gpu-gaps2.sh [BINARY] [OUTDIR]          (about 2 minutes on an H100)
# Nothing here edits a number.
here="$(dirname "$0")"
STUDIES="$here/../harness/gaps-registers.toml" BASELINES=0 INSPECT=1 \
  exec "$here/gpu-session.sh" gaps2 "$@"
