#!/usr/bin/env bash
# One GPU visit that runs several GPU scripts, each under its own time limit, so a visit with
# a fixed budget always keeps what finished:
#   PARTS="bfs:200 ptxswap:150 memspaces3:180" scripts/gpu-visit.sh BINARY OUTDIR
# A part NAME runs scripts/gpu-NAME.sh BINARY OUTDIR/NAME; `bfs` (no script of its own) runs
# the bfs study through gpu-session.sh. A part past its limit gets Ctrl-C (clvscu keeps every
# finished comparison, exit 130), then a kill 15 s later. Nothing here edits a number.
set -uo pipefail
here="$(dirname "$0")"
bin="${1:?usage: PARTS=\"NAME:SECONDS ...\" gpu-visit.sh BINARY OUTDIR}"
out="${2:?usage: PARTS=\"NAME:SECONDS ...\" gpu-visit.sh BINARY OUTDIR}"
mkdir -p "$out"
for part in ${PARTS:?PARTS names the parts to run}; do
  name="${part%%:*}"
  limit="${part##*:}"
  echo "== $name (limit ${limit} s) $(date -u +%H:%M:%S)"
  start=$(date +%s)
  if [ "$name" = bfs ]; then
    STUDIES="$here/../harness/bfs.toml" BASELINES=0 INSPECT=0 \
      timeout -s INT -k 15 "$limit" "$here/gpu-session.sh" bfs "$bin" "$out/$name" \
      > "$out/$name.log" 2>&1
  else
    INSPECT="${INSPECT:-0}" timeout -s INT -k 15 "$limit" "$here/gpu-$name.sh" "$bin" "$out/$name" \
      > "$out/$name.log" 2>&1
  fi
  echo "exit $? after $(( $(date +%s) - start )) s"
  tail -n 4 "$out/$name.log"
done
