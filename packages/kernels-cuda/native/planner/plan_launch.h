// Host-side launchers of the planner kernels (defined in plan_kernels.cu; CUDA build only).
#pragma once
#include <cuda_runtime.h>

#include <functional>

#include "planner/plan_kernels.cuh"

namespace dsv4kv {

// Most requests one GPU prefill plan serves (upstream: 1024, one block of 1024 threads). Bounded by the per-block
// shared scan: 3 int32 arrays of batch+1 entries must fit the 227 KB sm_90 opt-in (16384 -> 196,620 B).
constexpr int32_t kMaxGpuBatch = 16384;
// Batches of at most this many requests take the small-batch kernel: one request per lane of a warp, so 32.
constexpr int32_t kSmallBatch = 32;

size_t PrefillSmemBytes(int32_t batch);
cudaError_t LaunchPrefill(const PrefillParams& p, cudaStream_t stream, int sm_count);
cudaError_t LaunchDecode(const DecodeParams& p, cudaStream_t stream);
cudaError_t LaunchEmpty(cudaStream_t stream);

struct BenchResult {
  double eager_us;  // median per call, `calls` launches back to back
  double graph_us;  // median per call, a CUDA graph of `calls` launches replayed
};
cudaError_t BenchLaunch(const std::function<cudaError_t(cudaStream_t)>& launch, cudaStream_t stream, int warmup,
                        int reps, int calls, BenchResult* out);

}  // namespace dsv4kv
