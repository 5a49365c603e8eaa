#!/usr/bin/env bash
# Sobel with float4 rows against the device copy, and CSR-stream SpMV against cuSPARSE, on one
# GPU in one go (issue 15's targets), with provenance:
#   scripts/gpu-memspaces3.sh [BINARY] [OUTDIR]
# gpu-session.sh with harness/memspaces3.toml, the copy / cuDNN Sobel / cuSPARSE baselines only
# (BASELINES_ONLY, read by baselines.py) and no inspect (INSPECT=1 adds it, ~20 s); then the
# ratios the issue asks for, from the CSVs as written: each Sobel row's GB/s over the copy's
# (clvscu's copy of the same 1 GiB, and PyTorch's), each SpMV row's GFLOP/s over cuSPARSE's on
# its matrix, and the PR of every comparison. Nothing here edits a number.
# Estimated on an H100: 19 comparisons x (two compiles of 3-5 s + 0.1 s of timing + inputs)
# ~ 100 s, the three baseline matrices ~ 15 s, cuDNN and the copy ~ 5 s: about 120-140 s.
set -uo pipefail
here="$(dirname "$0")"
bin="${1:-./target/release/clvscu}"
out="${2:-clvscu-results/memspaces3-$(date -u +%Y%m%d)}"
export BASELINES_ONLY="${BASELINES_ONLY-copy,sobel,spmv}"
STUDIES="$here/../harness/memspaces3.toml" INSPECT="${INSPECT:-0}" \
  "$here/gpu-session.sh" memspaces3 "$bin" "$out"

m="$out/memspaces3/measurements.csv"
b="$out/baselines.csv"
[ -f "$m" ] || { echo "no $m"; exit 1; }
{
  echo "== Sobel GB/s / copy GB/s (clvscu copy of the same API; PyTorch copy of 2^28 floats)"
  awk -F, 'FNR == 1 { next }
    FILENAME ~ /baselines/ { if ($1 == "copy" && $3 == "268435456") torch = $8; next }
    $9 == "bandwidth" && $3 ~ /^copy@16384/ { copy[$4] = $30; next }
    $9 == "sobel" && $39 == "ok" { n++; name[n] = $3; api[n] = $4; gbs[n] = $30 }
    END { for (i = 1; i <= n; i++)
            printf "  %-40s %-7s %8.1f GB/s  x copy %.3f  x torch copy %s\n", name[i], api[i],
              gbs[i], copy[api[i]] ? gbs[i] / copy[api[i]] : 0,
              torch ? sprintf("%.3f", gbs[i] / torch) : "n/a" }' "$b" "$m"
  echo "== SpMV GFLOP/s / cuSPARSE GFLOP/s on the same matrix"
  awk -F, 'FNR == 1 { next }
    FILENAME ~ /baselines/ { if ($1 ~ /^spmv-/) { k = substr($1, 6); vendor[k] = $9 } next }
    $9 == "spmv" && $39 == "ok" { split($3, p, "/"); k = substr(p[1], 6);
      printf "  %-40s %-7s %7.1f GFLOP/s  x cuSPARSE %s\n", $3, $4, $30,
        vendor[k] ? sprintf("%.3f", $30 / vendor[k]) : "n/a" }' "$b" "$m"
  echo "== PRs (OpenCL / CUDA; fair = both sides the same)"
  awk -F, 'NR > 1 { printf "  %-40s PR %.3f [%.3f, %.3f] fair %s\n", $3, $16, $17, $18, $21 }' \
    "$out/memspaces3/prs.csv"
} | tee "$out/ratios.txt"
