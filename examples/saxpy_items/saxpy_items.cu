/* SAXPY with ITEMS elements per work-item (saxpy_items.toml): the CUDA half. The grid stays
 * N work-items; the first ceil(N / ITEMS) each update ITEMS elements a stride apart (so
 * neighbouring work-items still touch neighbouring elements) and the rest return at once.
 * The result is the same for every ITEMS, which is what lets the tuner verify each point. */
#ifndef ITEMS
#define ITEMS 1
#endif

extern "C" __global__ void saxpy_items(const unsigned int n, const float a, const float *x, float *y)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int stride = (n + ITEMS - 1) / ITEMS;
    if (i >= stride) {
        return;
    }
    for (unsigned int k = 0; k < ITEMS; k++) {
        unsigned int j = i + k * stride;
        if (j < n) {
            y[j] = a * x[j] + y[j];
        }
    }
}
