// Device side of the planner's status protocol (PlanStatus in plan_kernels.cuh): a lane's first error, the warp's
// and the block's, and the record stores. Device code only; every kernel family includes it.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "planner/plan_kernels.cuh"

namespace dsv4kv {
namespace {

constexpr unsigned kFull = 0xffffffffu;

// One thread's first error (registers); combined per warp by ballot (lowest lane wins), then per block.
struct LaneErr {
  int32_t code;
  int32_t index;
  int64_t value;
  int64_t aux;
};
__device__ __forceinline__ void Note(LaneErr& e, int32_t code, int32_t index, int64_t value, int64_t aux) {
  if (e.code == kErrNone) e = LaneErr{code, index, value, aux};
}
__device__ __forceinline__ LaneErr ShflErr(const LaneErr& e, int src) {
  return LaneErr{__shfl_sync(kFull, e.code, src), __shfl_sync(kFull, e.index, src),
                 static_cast<int64_t>(__shfl_sync(kFull, static_cast<long long>(e.value), src)),
                 static_cast<int64_t>(__shfl_sync(kFull, static_cast<long long>(e.aux), src))};
}
// The warp's error: the lowest lane's. Every lane of the warp must call it (full-mask ballot).
__device__ __forceinline__ LaneErr WarpErr(const LaneErr& e) {
  const unsigned m = __ballot_sync(kFull, e.code != kErrNone);
  return m ? ShflErr(e, __ffs(m) - 1) : LaneErr{0, 0, 0, 0};
}

// The general kernel's block error lives in shared memory; thread 0 initialises it before any report (followed
// by a barrier) and writes it to the block's PlanStatus record after the last report (preceded by a barrier).
__device__ __forceinline__ void Report(LaneErr* st, int32_t code, int32_t index, int64_t value, int64_t aux) {
  if (atomicCAS(&st->code, 0, code) == 0) {  // first error of the block wins; only the winner fills the details
    st->index = index;
    st->value = value;
    st->aux = aux;
  }
}

__device__ __forceinline__ void WriteRecord(PlanStatus* out, const LaneErr& e, int32_t nc, int32_t nw,
                                            int32_t records) {
  PlanStatus r{};
  r.code = e.code;
  r.index = e.index;
  r.value = e.value;
  r.aux = e.aux;
  r.num_compress = nc;
  r.num_write = nw;
  r.grid = records;
  *out = r;
}

// A clean record: code 0, the counts and `grid` (index, value and aux are defined only when code != 0), in three
// stores instead of WriteRecord's six. Records are only 8-byte aligned (the host-array entry points place the status
// after the plan rows, at numQ * 24 or batch * 16 bytes), so the counts share one 8-byte store, not a 16-byte one.
__device__ __forceinline__ void WriteCleanRecord(PlanStatus* out, int32_t nc, int32_t nw, int32_t records) {
  out->code = kErrNone;
  *reinterpret_cast<int2*>(&out->num_compress) = make_int2(nc, nw);
  out->grid = records;
}
static_assert(offsetof(PlanStatus, num_compress) % 8 == 0 &&
                  offsetof(PlanStatus, num_write) == offsetof(PlanStatus, num_compress) + 4,
              "num_compress and num_write share one 8-byte store");

}  // namespace
}  // namespace dsv4kv
