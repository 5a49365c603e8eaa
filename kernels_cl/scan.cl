/* Inclusive prefix sum (Scan) of unsigned 32-bit integers, work-efficient in three phases
 * (Blelloch 1990; Harris, Sengupta and Owens, GPU Gems 3, ch. 39). kernels_cu/scan.cu is the
 * CUDA twin: same names, parameters and algorithm text.
 *
 * scan_blocks scans each work-group's block of 2 * WG_SIZE elements in local memory and
 * writes the block's total; the harness scans the totals with the same kernel, level after
 * level, and scan_add then adds each block's preceding total to its elements. The tree halves
 * and doubles strides, so WG_SIZE is a power of two (the harness refuses others). */

#define SCAN_BLOCK (2 * WG_SIZE)

__kernel void scan_blocks(const __global uint* in, __global uint* out, __global uint* totals, uint n)
{
    __local uint tree[SCAN_BLOCK];
    uint lid = get_local_id(0);
    uint base = get_group_id(0) * SCAN_BLOCK;
    uint a = (base + lid < n) ? in[base + lid] : 0u;
    uint b = (base + lid + WG_SIZE < n) ? in[base + lid + WG_SIZE] : 0u;
    tree[lid] = a;
    tree[lid + WG_SIZE] = b;
    /* Up-sweep: after it, each node holds the sum of its subtree; the root the block's. */
    uint stride = 1;
    for (uint active = WG_SIZE; active > 0; active >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < active) {
            uint left = stride * (2 * lid + 1) - 1;
            uint right = stride * (2 * lid + 2) - 1;
            tree[right] += tree[left];
        }
        stride <<= 1;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        totals[get_group_id(0)] = tree[SCAN_BLOCK - 1];
        tree[SCAN_BLOCK - 1] = 0u;
    }
    /* Down-sweep: each node passes its prefix to its left child and prefix + left sum to its
     * right child, leaving the exclusive scan. */
    for (uint active = 1; active <= WG_SIZE; active <<= 1) {
        stride >>= 1;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < active) {
            uint left = stride * (2 * lid + 1) - 1;
            uint right = stride * (2 * lid + 2) - 1;
            uint t = tree[left];
            tree[left] = tree[right];
            tree[right] += t;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* Inclusive: the exclusive prefix plus the element itself. */
    if (base + lid < n)
        out[base + lid] = tree[lid] + a;
    if (base + lid + WG_SIZE < n)
        out[base + lid + WG_SIZE] = tree[lid + WG_SIZE] + b;
}

/* Block g > 0 adds the scanned total of blocks 0..g-1 (scanned[g - 1]) to its elements. */
__kernel void scan_add(__global uint* out, const __global uint* scanned, uint n)
{
    uint group = get_group_id(0);
    uint base = group * SCAN_BLOCK;
    if (group == 0 || base >= n)
        return;
    uint add = scanned[group - 1];
    uint i = base + get_local_id(0);
    if (i < n)
        out[i] += add;
    if (i + WG_SIZE < n)
        out[i + WG_SIZE] += add;
}

/* Radix sort (RdxS) of unsigned 32-bit keys, least significant digit first, RADIX_BITS bits
 * per pass; it shares this file to scan its digit counts with scan_blocks and scan_add. Each
 * pass: radix_histogram counts each work-group's keys per digit into counts, digit-major
 * (counts[digit * groups + group]); the harness scans counts inclusively into offsets; then
 * radix_scatter moves each key to the slots of its (digit, group), in input order within
 * them, which keeps the sort stable. Both kernels take one key per work-item and need
 * WG_SIZE >= RADIX (the harness refuses smaller work-groups). */

#define RADIX_BITS 4u
#define RADIX (1u << RADIX_BITS)

__kernel void radix_histogram(const __global uint* keys, __global uint* counts, uint n, uint shift)
{
    __local uint count[RADIX];
    uint lid = get_local_id(0);
    uint i = get_group_id(0) * WG_SIZE + lid;
    if (lid < RADIX)
        count[lid] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (i < n)
        ATOMIC_ADD_U32(&count[(keys[i] >> shift) & (RADIX - 1u)], 1u);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < RADIX)
        counts[lid * get_num_groups(0) + get_group_id(0)] = count[lid];
}

__kernel void radix_scatter(const __global uint* keys, __global uint* out, const __global uint* counts, const __global uint* offsets, uint n, uint shift)
{
    __local uint digits[WG_SIZE];
    uint lid = get_local_id(0);
    uint group = get_group_id(0);
    uint i = group * WG_SIZE + lid;
    uint key = (i < n) ? keys[i] : 0u;
    uint digit = (i < n) ? ((key >> shift) & (RADIX - 1u)) : RADIX;
    digits[lid] = digit;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (i < n) {
        /* The keys of this digit before this one in the work-group go first. */
        uint rank = 0u;
        for (uint t = 0u; t < lid; ++t)
            rank += (digits[t] == digit) ? 1u : 0u;
        /* offsets is inclusive: minus its own count, the keys of every earlier slot. */
        uint slot = digit * get_num_groups(0) + group;
        out[offsets[slot] - counts[slot] + rank] = key;
    }
}
