/* Two pieces of guidance of NVIDIA's "OpenCL Programming for the CUDA Architecture" as
 * one-step experiments: the same kernel text with one macro switch each, so that a study can
 * flip the switch on one side, on both, or on neither. kernels_cl/guidance.cl is the OpenCL
 * twin: same names, parameters and algorithm text.
 *
 * Both kernels compute unsigned 32-bit integers (wrapping) from the work-item's index alone:
 * no input, one output word per work-item, and the result is exact. */

/* Integer division and modulo against shifts and masks ("integer division and modulo ... are
 * expensive instructions that should be avoided or replaced with bitwise operations whenever
 * possible"). Each work-item visits INDEX_STEPS flattened indices k of a grid `width` wide
 * (a power of two, passed at run time so no compiler can see it) and adds up 3 * row + col.
 * INDEX_SHIFT 0: row = k / width, col = k % width; 1: row = k >> log2_width,
 * col = k & (width - 1). The same numbers either way. */
#ifndef INDEX_SHIFT
#define INDEX_SHIFT 0
#endif
#define INDEX_STEPS 64

extern "C" __global__ void guidance_index(uint* out, uint n, uint width, uint log2_width)
{
    uint i = (blockIdx.x * blockDim.x + threadIdx.x);
    if (i >= n)
        return;
    uint acc = 0u;
    for (uint j = 0u; j < INDEX_STEPS; j++) {
        uint k = i + j * n;
#if INDEX_SHIFT
        uint row = k >> log2_width;
        uint col = k & (width - 1u);
#else
        uint row = k / width;
        uint col = k % width;
#endif
        acc += 3u * row + col;
    }
    out[i] = acc;
}

/* Branch divergence within a warp ("threads within the same warp should follow the same
 * execution path as much as possible"). Half the work-items run one chain of BRANCH_STEPS
 * steps, half another of the same length. BRANCH_BY_WARP 0: the branch is on i % 2, so both
 * paths run in every warp, one after the other; 1: on (i / WARP_SIZE) % 2, so each warp runs
 * one path. The same work either way; which work-item runs which chain differs, and the
 * harness accepts either assignment, each checked exactly. */
#ifndef BRANCH_BY_WARP
#define BRANCH_BY_WARP 0
#endif
#define BRANCH_STEPS 256

extern "C" __global__ void guidance_branch(uint* out, uint n)
{
    uint i = (blockIdx.x * blockDim.x + threadIdx.x);
    if (i >= n)
        return;
#if BRANCH_BY_WARP
    uint second = (i / WARP_SIZE) % 2u;
#else
    uint second = i % 2u;
#endif
    uint acc = i;
    if (second) {
        for (uint j = 0u; j < BRANCH_STEPS; j++)
            acc = (acc ^ (acc >> 15)) * 2246822519u;
    } else {
        for (uint j = 0u; j < BRANCH_STEPS; j++)
            acc = acc * 1664525u + 1013904223u;
    }
    out[i] = acc;
}
