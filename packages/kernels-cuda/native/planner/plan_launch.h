// Host-side launchers of the planner kernels (launch.cu, decode.cu; CUDA build only).
#pragma once
#include <cuda_runtime.h>

#include "planner/plan_kernels.cuh"

namespace dsv4kv {

size_t PrefillSmemBytes(int32_t batch);
// The launchers' preconditions: nullptr when they hold, else the rule a parameter breaks (the launchers return
// cudaErrorInvalidValue then; the binding checks first and names the rule).
const char* PrefillPrecondition(const PrefillParams& p);
const char* DecodePrecondition(const DecodeParams& p);
cudaError_t LaunchPrefill(const PrefillParams& p, cudaStream_t stream, int sm_count);
cudaError_t LaunchDecode(const DecodeParams& p, cudaStream_t stream);

}  // namespace dsv4kv
