// What the anatomy harnesses (anatomy.cu, copy_floor.cu) share. Bench-only: not part of the addon.
#pragma once
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

// Exits the harness on a failed CUDA call, naming the call and where it is.
#define CK(x)                                                                                  \
  do {                                                                                         \
    cudaError_t e__ = (x);                                                                     \
    if (e__ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e__)); \
      std::exit(1);                                                                            \
    }                                                                                          \
  } while (0)
