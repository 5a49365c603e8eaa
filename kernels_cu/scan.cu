/* Inclusive prefix sum (Scan) of unsigned 32-bit integers, work-efficient in three phases
 * (Blelloch 1990; Harris, Sengupta and Owens, GPU Gems 3, ch. 39). kernels_cl/scan.cl is the
 * OpenCL twin: same names, parameters and algorithm text.
 *
 * scan_blocks scans each work-group's block of 2 * WG_SIZE elements in local memory and
 * writes the block's total; the harness scans the totals with the same kernel, level after
 * level, and scan_add then adds each block's preceding total to its elements. The tree halves
 * and doubles strides, so WG_SIZE is a power of two (the harness refuses others). */

#define SCAN_BLOCK (2 * WG_SIZE)

extern "C" __global__ void scan_blocks(const uint* in, uint* out, uint* totals, uint n)
{
    __shared__ uint tree[SCAN_BLOCK];
    uint lid = threadIdx.x;
    uint base = blockIdx.x * SCAN_BLOCK;
    uint a = (base + lid < n) ? in[base + lid] : 0u;
    uint b = (base + lid + WG_SIZE < n) ? in[base + lid + WG_SIZE] : 0u;
    tree[lid] = a;
    tree[lid + WG_SIZE] = b;
    /* Up-sweep: after it, each node holds the sum of its subtree; the root the block's. */
    uint stride = 1;
    for (uint active = WG_SIZE; active > 0; active >>= 1) {
        __syncthreads();
        if (lid < active) {
            uint left = stride * (2 * lid + 1) - 1;
            uint right = stride * (2 * lid + 2) - 1;
            tree[right] += tree[left];
        }
        stride <<= 1;
    }
    __syncthreads();
    if (lid == 0) {
        totals[blockIdx.x] = tree[SCAN_BLOCK - 1];
        tree[SCAN_BLOCK - 1] = 0u;
    }
    /* Down-sweep: each node passes its prefix to its left child and prefix + left sum to its
     * right child, leaving the exclusive scan. */
    for (uint active = 1; active <= WG_SIZE; active <<= 1) {
        stride >>= 1;
        __syncthreads();
        if (lid < active) {
            uint left = stride * (2 * lid + 1) - 1;
            uint right = stride * (2 * lid + 2) - 1;
            uint t = tree[left];
            tree[left] = tree[right];
            tree[right] += t;
        }
    }
    __syncthreads();
    /* Inclusive: the exclusive prefix plus the element itself. */
    if (base + lid < n)
        out[base + lid] = tree[lid] + a;
    if (base + lid + WG_SIZE < n)
        out[base + lid + WG_SIZE] = tree[lid + WG_SIZE] + b;
}

/* Block g > 0 adds the scanned total of blocks 0..g-1 (scanned[g - 1]) to its elements. */
extern "C" __global__ void scan_add(uint* out, const uint* scanned, uint n)
{
    uint group = blockIdx.x;
    uint base = group * SCAN_BLOCK;
    if (group == 0 || base >= n)
        return;
    uint add = scanned[group - 1];
    uint i = base + threadIdx.x;
    if (i < n)
        out[i] += add;
    if (i + WG_SIZE < n)
        out[i + WG_SIZE] += add;
}
