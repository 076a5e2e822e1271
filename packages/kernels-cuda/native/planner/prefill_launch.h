// The prefill kernel families' launchers (prefill_small.cu, prefill_general.cu) and the one list of the template
// instances they compile; launch.cu maps run-time parameters onto them. CUDA build only.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "planner/plan_kernels.cuh"

namespace dsv4kv {

// 1 <= batch <= kSmallBatch (one request per lane of a warp).
template <int CR, int MODE, typename LenT, int kMaps>
cudaError_t LaunchPrefillSmall(const PrefillParams& p, cudaStream_t stream, int sm_count);
// kSmallBatch < batch <= kMaxGpuBatch (the per-block shared scan holds 3 * (batch + 1) int32).
template <int CR, int MODE, typename LenT, int kMaps>
cudaError_t LaunchPrefillGeneral(const PrefillParams& p, cudaStream_t stream, int sm_count);

// Every (CR, MODE, LenT, kMaps) the dispatch reaches: c128 is always request-style (no paged c128), the table bits
// kMaps (bit 0 req_to_token, bit 1 full_to_state) vary only for the paged mode, and LenT is the int32 / int64 lengths.
// Each family instantiates all of them; a missing one is a link error in launch.cu.
// clang-format off
#define DSV4KV_PREFILL_INSTANCES_OF_LEN(X, LenT) \
  X(4, kLegacy, LenT, 0)                         \
  X(4, kReqRing, LenT, 0)                        \
  X(4, kPaged, LenT, 0)                          \
  X(4, kPaged, LenT, 1)                          \
  X(4, kPaged, LenT, 2)                          \
  X(4, kPaged, LenT, 3)                          \
  X(128, kLegacy, LenT, 0)                       \
  X(128, kReqRing, LenT, 0)
#define DSV4KV_PREFILL_INSTANCES(X) \
  DSV4KV_PREFILL_INSTANCES_OF_LEN(X, int32_t)  \
  DSV4KV_PREFILL_INSTANCES_OF_LEN(X, int64_t)
// clang-format on

}  // namespace dsv4kv
