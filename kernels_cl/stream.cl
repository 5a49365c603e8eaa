/* BabelStream's kernels (Deakin, Price, Martineau and McIntosh-Smith, "GPU-STREAM v2.0",
 * 2016): Copy, Mul, Add, Triad and Dot on arrays of doubles, with its start values and
 * scalar. kernels_cu/stream.cu is the CUDA twin: same names, parameters and algorithm text.
 *
 * One element per work-item with a bound check; Dot is a grid-stride loop over a fixed
 * number of work-groups, a tree in local memory per work-group (WG_SIZE a power of two),
 * then stream_dot_final sums the work-groups' partial sums in one work-group. stream_init
 * sets the arrays before timing, as BabelStream's init_arrays does. */

#define STREAM_SCALAR 0.4

__kernel void stream_init(__global double* a, __global double* b, __global double* c, const __global double* start, uint n)
{
    uint i = get_global_id(0);
    if (i < n) {
        a[i] = start[0];
        b[i] = start[1];
        c[i] = start[2];
    }
}

__kernel void stream_copy(const __global double* a, __global double* c, uint n)
{
    uint i = get_global_id(0);
    if (i < n)
        c[i] = a[i];
}

__kernel void stream_mul(__global double* b, const __global double* c, uint n)
{
    uint i = get_global_id(0);
    if (i < n)
        b[i] = STREAM_SCALAR * c[i];
}

__kernel void stream_add(const __global double* a, const __global double* b, __global double* c, uint n)
{
    uint i = get_global_id(0);
    if (i < n)
        c[i] = a[i] + b[i];
}

__kernel void stream_triad(__global double* a, const __global double* b, const __global double* c, uint n)
{
    uint i = get_global_id(0);
    if (i < n)
        a[i] = b[i] + STREAM_SCALAR * c[i];
}

__kernel void stream_dot(const __global double* a, const __global double* b, __global double* sums, uint n)
{
    __local double partial[WG_SIZE];
    uint lid = get_local_id(0);
    double sum = 0.0;
    for (uint i = get_global_id(0); i < n; i += get_global_size(0))
        sum += a[i] * b[i];
    partial[lid] = sum;
    for (uint offset = WG_SIZE / 2u; offset > 0u; offset >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < offset)
            partial[lid] += partial[lid + offset];
    }
    if (lid == 0u)
        sums[get_group_id(0)] = partial[0];
}

/* One work-group: the sum of the first `groups` partial sums into out[0]. */
__kernel void stream_dot_final(const __global double* sums, __global double* out, uint groups)
{
    __local double partial[WG_SIZE];
    uint lid = get_local_id(0);
    double sum = 0.0;
    for (uint g = lid; g < groups; g += WG_SIZE)
        sum += sums[g];
    partial[lid] = sum;
    for (uint offset = WG_SIZE / 2u; offset > 0u; offset >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < offset)
            partial[lid] += partial[lid + offset];
    }
    if (lid == 0u)
        out[0] = partial[0];
}
