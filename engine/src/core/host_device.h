// Marks the small helpers that the CUDA kernels share with the host code (block layouts, the KV
// layout, RoPE's rates): device functions too when nvcc compiles them.
#pragma once

#ifdef __CUDACC__
#define LLAMADESK_HOST_DEVICE __host__ __device__
#else
#define LLAMADESK_HOST_DEVICE
#endif
