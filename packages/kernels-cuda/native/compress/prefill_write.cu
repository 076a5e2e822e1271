// Prefill write (docs/reference/planner.md §3.2, §8.3): every valid WritePlan row copies ragged input row raggedId
// into state row writeLoc (all columns, rounded to the state dtype), after the batch's compressions.
//
// Launched as a programmatic dependent of the compress kernel (launch.cu): a warp finds its items and loads their
// input into registers while the compress kernel still runs, then griddepcontrol.wait (the whole compress grid has
// completed and flushed: every compression read the pre-batch ring), then stores. Work items are (write row, chunk
// of kItemElems floats); item k = row * chunks + chunk, dealt round-robin to warp slots as in prefill_compress.cu.
#include <cuda_bf16.h>

#include "compress/compress_device.cuh"
#include "compress/compress_launch.h"
#include "compress/grid.h"

namespace dsv4kv {
namespace compress {
namespace {

constexpr int kWriteWarps = 4;

// One item of a warp, taken from the lowest set bit of `pending` (warp-uniform): its row's check and, when the row
// is good, this lane's kVec input quads (loaded here) and destination.
template <typename T>
struct WriteJob {
  int32_t code;  // kErrNone, or the error to report after the wait (chunk 0 only: one report per row)
  int32_t row;
  int32_t value;
  T* dst;  // nullptr: nothing to store
};
template <typename T, int kRowElems, int kVec>
__device__ __forceinline__ WriteJob<T> TakeItem(const PrefillParams& p, unsigned& pending, uint2 w, int64_t base,
                                                int32_t slots, int lane, float4 (&v)[kVec]) {
  constexpr int kItemElems = 128 * kVec;
  constexpr int kChunks = kRowElems / kItemElems;
  WriteJob<T> job{kErrNone, 0, 0, nullptr};
  if (pending == 0) return job;
  const int from = __ffs(pending) - 1;
  pending &= pending - 1;
  const int64_t ragged = __shfl_sync(kFullMask, w.x, from);
  const int64_t loc = static_cast<int32_t>(__shfl_sync(kFullMask, w.y, from));
  const int64_t item = base + static_cast<int64_t>(from) * slots;
  const int chunk = static_cast<int>(item % kChunks);
  job.row = static_cast<int32_t>(item / kChunks);
  if (ragged >= p.inputRows) {
    if (chunk == 0) job.code = kErrWriteRagged, job.value = static_cast<int32_t>(ragged);
    return job;
  }
  if (loc < 0 || loc >= p.stateRows) {
    if (chunk == 0) job.code = kErrWriteLoc, job.value = static_cast<int32_t>(loc);
    return job;
  }
  const int64_t col = static_cast<int64_t>(chunk) * kItemElems + lane * 4;
  const float* src = p.input + ragged * kRowElems + col;
#pragma unroll
  for (int i = 0; i < kVec; ++i) v[i] = LoadIn4(src + i * 128);
  job.dst = static_cast<T*>(p.state) + loc * kRowElems + col;
  return job;
}
template <typename T, int kVec>
__device__ __forceinline__ void FinishItem(const PrefillParams& p, const WriteJob<T>& job, int lane,
                                           const float4 (&v)[kVec]) {
  if (job.code != kErrNone && lane == 0) Report(p.err, job.code, job.row, job.value, kKPrefillWrite);
  if (job.dst == nullptr) return;
#pragma unroll
  for (int i = 0; i < kVec; ++i) Vec4<T>::Store(job.dst + i * 128, v[i]);
}

// kVec quads per lane per item (16 B each, consecutive lanes on consecutive quads): an item is 128 * kVec floats,
// 2 KB (kVec 4) for rows of >= 512 floats, 1 KB for the 256-float row (c128, headDim 128). A warp stages two items
// (2 * kVec quads, 32 registers) before the wait; a verify batch's writes (64 x D rows) come to about two items per
// warp of the grid.
template <typename T, int kRowElems>
__global__ void __launch_bounds__(kWriteWarps * 32) WriteRowsKernel(const PrefillParams p, int32_t slots) {
  constexpr int kVec = kRowElems >= 512 ? 4 : 2;
  constexpr int kChunks = kRowElems / (128 * kVec);
  PdlLaunchDependents();  // the next call's compress kernel may launch; it waits for this grid before any access
  const int lane = threadIdx.x & 31;
  const int slot = (threadIdx.x >> 5) * gridDim.x + blockIdx.x;
  if (slot >= slots) return;
  const int64_t items = static_cast<int64_t>(p.numPlanW) * kChunks;
  for (int64_t base = slot; base < items; base += static_cast<int64_t>(slots) * 32) {
    const int64_t k = base + static_cast<int64_t>(lane) * slots;
    uint2 w = make_uint2(kInvalidRaggedId, 0);
    if (k < items) w = LoadPlan8(p.planW, k / kChunks);
    unsigned pending = __ballot_sync(kFullMask, w.x != kInvalidRaggedId);

    while (pending != 0) {  // warp-uniform
      float4 a[kVec], b[kVec];
      const WriteJob<T> ja = TakeItem<T, kRowElems, kVec>(p, pending, w, base, slots, lane, a);
      const WriteJob<T> jb = TakeItem<T, kRowElems, kVec>(p, pending, w, base, slots, lane, b);
      PdlWait();  // no state store before the compress grid is done (a no-op after the first, or without PDL)
      FinishItem<T, kVec>(p, ja, lane, a);
      FinishItem<T, kVec>(p, jb, lane, b);
    }
  }
  // One thread always waits, so this grid never completes before the compress grid, even when no warp of it has a
  // valid row: a programmatic dependent of this kernel waits for this grid only.
  if (blockIdx.x == 0 && threadIdx.x == 0) PdlWait();
}

template <typename T, int kRowElems>
cudaError_t Launch(const PrefillParams& p, cudaStream_t s, bool afterCompress) {
  constexpr auto kKernel = WriteRowsKernel<T, kRowElems>;
  constexpr int kChunks = kRowElems / (128 * (kRowElems >= 512 ? 4 : 2));
  const int32_t slots =
      WorkSlots<kKernel>(static_cast<int64_t>(p.numPlanW) * kChunks, kWriteWarps * 32, kWriteWarps, 1);
  return LaunchOn(kKernel, (slots + kWriteWarps - 1) / kWriteWarps, kWriteWarps * 32, s, afterCompress, p, slots);
}
}  // namespace

cudaError_t LaunchWriteRows(const PrefillParams& p, cudaStream_t s, bool afterCompress) {
  return DispatchShape(p.stateType, p.headDim, p.cr, [&](auto t, auto hd, auto cr) {
    using T = typename decltype(t)::type;
    return Launch<T, RowBlocksOf(decltype(cr)::value) * decltype(hd)::value>(p, s, afterCompress);
  });
}

}  // namespace compress
}  // namespace dsv4kv
