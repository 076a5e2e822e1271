// Global loads of the planner kernels: volatile inline PTX (ld.global.nc), and the request lengths in either dtype.
#pragma once
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>

namespace dsv4kv {
namespace {

// A length (S or E) of request i as int64: int32 inputs widen; int64 inputs (upstream's dtype) are returned as read
// and narrowed by the caller after the range check (kErrNarrow).
// Inputs are read with volatile inline PTX (ld.global.nc) so that S, E and the pool index go out together at the top
// of a kernel rather than one round trip each behind the checks; a load that must go early is also kept out of
// branches (DecodeRows, the small prefill kernel's clamped index). Why: docs/decisions.md D17.
__device__ __forceinline__ int64_t Ld64(const int64_t* ptr) {
  long long v;
  asm volatile("ld.global.nc.s64 %0, [%1];" : "=l"(v) : "l"(ptr));
  return v;
}
__device__ __forceinline__ int32_t Ld32(const int32_t* ptr) {
  int v;
  asm volatile("ld.global.nc.s32 %0, [%1];" : "=r"(v) : "l"(ptr));
  return v;
}
// Two loads predicated on `active` without a branch (when inactive nothing is read and both results are 0), so the
// small prefill kernel's table reads sit in the same basic block as the work scheduled under them.
__device__ __forceinline__ void Ld32PairIf(bool active, const int32_t* pa, const int32_t* pb, int32_t& a, int32_t& b) {
  int va = 0, vb = 0;
  asm volatile(
      "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %4, 0;\n\t@p ld.global.nc.s32 %0, [%2];\n\t@p ld.global.nc.s32 %1, "
      "[%3];\n\t}"
      : "+r"(va), "+r"(vb)
      : "l"(pa), "l"(pb), "r"(static_cast<int>(active)));
  a = va;
  b = vb;
}
template <typename LenT>
__device__ __forceinline__ int64_t LoadLen(const void* base, int32_t i) {
  if constexpr (sizeof(LenT) == 8)
    return Ld64(static_cast<const int64_t*>(base) + i);
  else
    return Ld32(static_cast<const int32_t*>(base) + i);
}
__device__ __forceinline__ bool NotInt32(int64_t v) { return v < INT_MIN || v > INT_MAX; }

}  // namespace
}  // namespace dsv4kv
