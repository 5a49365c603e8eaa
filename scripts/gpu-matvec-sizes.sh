#!/usr/bin/env bash
# harness/matvec-sizes.toml: the default study's matvec kernels from 4096 to 262144 rows
# (about 40 s on an H100). No vendor baselines, no inspect.
#   scripts/gpu-matvec-sizes.sh [BINARY] [OUTDIR]
# Nothing here edits a number.
here="$(dirname "$0")"
STUDIES="$here/../harness/matvec-sizes.toml" BASELINES=0 INSPECT=0 \
  exec "$here/gpu-session.sh" matvec-sizes "$@"
