/* SAXPY, y = a * x + y: the CUDA half of the example kernel pair (saxpy.toml). */
extern "C" __global__ void saxpy(const unsigned int n, const float a, const float *x, float *y)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}
