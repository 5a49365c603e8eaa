#!/usr/bin/env bash
# Writes kernel directories for --kernels-dir that each change ONE thing on BOTH sides, to find
# why a fair PR is not 1 (run from the repository root):
#   scripts/experiment-kernels.sh OUTDIR
#   base         the kernels as they are
#   u32          OpenCL's work-item functions narrowed to 32-bit uint, the type of CUDA's
#                built-in index variables (a no-op on the CUDA side)
#   wgconst      the work-group size read as the compile-time WG_SIZE on both sides instead of
#                get_local_size(0) / blockDim.x (the launch must equal WG_SIZE anyway)
#   u32-wgconst  both changes
set -euo pipefail
OUT="${1:?usage: scripts/experiment-kernels.sh OUTDIR}"
for d in base u32 wgconst u32-wgconst; do
  mkdir -p "$OUT/$d/kernels_cl" "$OUT/$d/kernels_cu"
  cp kernels_cl/*.cl "$OUT/$d/kernels_cl/"
  cp kernels_cu/*.cu "$OUT/$d/kernels_cu/"
done
for d in u32 u32-wgconst; do
  cat >> "$OUT/$d/kernels_cl/prelude.cl" <<'CL'

/* experiment u32: OpenCL's work-item functions return size_t (64 bits); CUDA's built-in
 * variables are 32-bit unsigned. Narrowed here so both sides do 32-bit index arithmetic. */
#define get_global_id(d) ((uint)get_global_id(d))
#define get_local_id(d) ((uint)get_local_id(d))
#define get_group_id(d) ((uint)get_group_id(d))
#define get_local_size(d) ((uint)get_local_size(d))
#define get_num_groups(d) ((uint)get_num_groups(d))
#define get_global_size(d) ((uint)get_global_size(d))
CL
done
for d in wgconst u32-wgconst; do
  sed -i 's/get_local_size(0)/WG_SIZE/g' "$OUT/$d/kernels_cl/matvec.cl" "$OUT/$d/kernels_cl/reduce.cl"
  sed -i 's/blockDim\.x/WG_SIZE/g' "$OUT/$d/kernels_cu/matvec.cu" "$OUT/$d/kernels_cu/reduce.cu"
done
echo "experiment kernel directories in $OUT: base u32 wgconst u32-wgconst"
