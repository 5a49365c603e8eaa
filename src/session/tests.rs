//! Session tests on the fake backend: no OpenCL, no CUDA, no GPU.
