// Host-side launchers of the planner kernels (launch.cu, decode.cu, bench.cu; CUDA build only).
#pragma once
#include <cuda_runtime.h>

#include <functional>

#include "planner/plan_kernels.cuh"

namespace dsv4kv {

size_t PrefillSmemBytes(int32_t batch);
// The launchers' preconditions: nullptr when they hold, else the rule a parameter breaks (the launchers return
// cudaErrorInvalidValue then; the binding checks first and names the rule).
const char* PrefillPrecondition(const PrefillParams& p);
const char* DecodePrecondition(const DecodeParams& p);
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
