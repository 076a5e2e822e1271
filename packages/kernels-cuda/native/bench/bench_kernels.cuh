// The bench build's own kernels: the empty kernel (launch overhead), a float4 copy (the byte floor of op copyKernel)
// and the fills that give a benchmark's inputs and state their values. CUDA build only.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace dsv4kv {
namespace bench {

cudaError_t LaunchEmpty(cudaStream_t s);
// bytes / 16 float4 from src to dst (16-byte aligned), `blocks` blocks of 512 threads.
cudaError_t LaunchCopy4(const void* src, void* dst, int64_t bytes, int blocks, cudaStream_t s);
// n floats of (uniform − 0.5)·scale + offset, a hash of (index, seed).
cudaError_t LaunchFillRandom(float* dst, int64_t n, uint32_t seed, float scale, float offset, cudaStream_t s);
// `rows` online-MTP state rows (fp32 or bf16) of plausible values: max and acc near 0, the sum in [1, 9].
cudaError_t LaunchFillStateRandom(void* state, int64_t rows, int32_t stateType, uint32_t seed, cudaStream_t s);

}  // namespace bench
}  // namespace dsv4kv
