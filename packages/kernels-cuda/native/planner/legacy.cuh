// The legacy layout's slots and pages (docs/reference/planner.md §4): fixed rings of 8 (c4) or 128 (c128) slots per
// request, no tables. Device code only.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace dsv4kv {
namespace {

template <int CR>
__device__ __forceinline__ int32_t LegacySlot(int32_t rid, int32_t p) {
  // rid <= (INT32_MAX - 127) / 128 was checked (CheckRid), so rid*128 + 127 and rid*8 + 7 fit int32.
  return CR == 4 ? rid * 8 + p % 8 : rid * 128 + p % 128;
}
template <int CR>
__device__ __forceinline__ int32_t LegacyPage(int32_t rid, int32_t p) {
  return CR == 4 ? rid * 2 + ((p / 4) & 1) : rid;
}

}  // namespace
}  // namespace dsv4kv
