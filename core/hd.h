#pragma once
// EMBER_HD marks math that both backends compile: host code on the CPU, device
// code under nvcc. Per-element formulas live in such functions so CPU and CUDA
// cannot drift apart.
#if defined(__CUDACC__)
#define EMBER_HD __host__ __device__ __forceinline__
#else
#define EMBER_HD inline
#endif
