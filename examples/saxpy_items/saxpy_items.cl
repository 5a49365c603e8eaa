/* SAXPY with ITEMS elements per work-item (saxpy_items.toml): the OpenCL half. The grid stays
 * N work-items; the first ceil(N / ITEMS) each update ITEMS elements a stride apart (so
 * neighbouring work-items still touch neighbouring elements) and the rest return at once.
 * The result is the same for every ITEMS, which is what lets the tuner verify each point. */
#ifndef ITEMS
#define ITEMS 1
#endif

__kernel void saxpy_items(const uint n, const float a, __global const float *x, __global float *y)
{
    uint i = get_global_id(0);
    uint stride = (n + ITEMS - 1) / ITEMS;
    if (i >= stride) {
        return;
    }
    for (uint k = 0; k < ITEMS; k++) {
        uint j = i + k * stride;
        if (j < n) {
            y[j] = a * x[j] + y[j];
        }
    }
}
