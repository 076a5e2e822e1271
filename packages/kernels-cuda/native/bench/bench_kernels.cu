// The bench build's kernels (bench_kernels.cuh).
#include <cuda_bf16.h>

#include "bench/bench_kernels.cuh"
#include "online_mtp/device.cuh"
#include "online_mtp/online_mtp_kernels.cuh"

namespace dsv4kv {
namespace bench {
namespace {

using online_mtp::kF32;
using online_mtp::kHeadDim;
using online_mtp::kRowElems;
using online_mtp::StateIO;

__global__ void EmptyKernel() {}

__device__ __forceinline__ float HashUniform(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return (x >> 8) * (1.0f / 16777216.0f);
}
// The bench's byte floor (op copyKernel): a float4 copy, four independent 16-byte loads per thread in flight.
__global__ void __launch_bounds__(512)
    Copy4Kernel(const float4* __restrict__ src, float4* __restrict__ dst, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
    const float4 a = src[i], b = src[i + stride], c = src[i + 2 * stride], d = src[i + 3 * stride];
    dst[i] = a;
    dst[i + stride] = b;
    dst[i + 2 * stride] = c;
    dst[i + 3 * stride] = d;
  }
  for (; i < n; i += stride) dst[i] = src[i];
}
__global__ void FillRandomKernel(float* dst, int64_t n, uint32_t seed, float scale, float offset) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    dst[i] = (HashUniform(static_cast<uint32_t>(i) * 2654435761U + seed) - 0.5f) * scale + offset;
}
template <typename T>
__global__ void FillStateKernel(T* st, int64_t rows, uint32_t seed) {
  const int64_t n = rows * kRowElems;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int e = static_cast<int>(i % kRowElems);
    const float u = HashUniform(static_cast<uint32_t>(i) * 2654435761U + seed);
    StateIO<T>::store(st + i, e < kHeadDim ? u - 0.5f : (e < 2 * kHeadDim ? 1.f + 8.f * u : u - 0.5f));
  }
}

}  // namespace

cudaError_t LaunchEmpty(cudaStream_t s) {
  EmptyKernel<<<1, 32, 0, s>>>();
  return cudaGetLastError();
}

cudaError_t LaunchCopy4(const void* src, void* dst, int64_t bytes, int blocks, cudaStream_t s) {
  Copy4Kernel<<<blocks, 512, 0, s>>>(static_cast<const float4*>(src), static_cast<float4*>(dst), bytes / 16);
  return cudaGetLastError();
}

cudaError_t LaunchFillRandom(float* dst, int64_t n, uint32_t seed, float scale, float offset, cudaStream_t s) {
  FillRandomKernel<<<1024, 256, 0, s>>>(dst, n, seed, scale, offset);
  return cudaGetLastError();
}

cudaError_t LaunchFillStateRandom(void* state, int64_t rows, int32_t stateType, uint32_t seed, cudaStream_t s) {
  if (stateType == kF32)
    FillStateKernel<float><<<1024, 256, 0, s>>>(static_cast<float*>(state), rows, seed);
  else
    FillStateKernel<__nv_bfloat16><<<1024, 256, 0, s>>>(static_cast<__nv_bfloat16*>(state), rows, seed);
  return cudaGetLastError();
}

}  // namespace bench
}  // namespace dsv4kv
