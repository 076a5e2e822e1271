// Decode (docs/reference/planner.md §8.4): every DecodePlan row b writes input row b into state row writeLoc, then,
// when seqLen % cr == 0, pools the W elements of its ring (c4: pages readPage0 and readPage1, the overlap masked
// when seqLen <= 4; c128: page readPage1) into out row b.
//
// Work items are (row b, channel slice), dealt round-robin to a bounded grid (grid.h): c4 a warp per 128 channels,
// c128 a 256-thread block per 32 channels (pool.cuh). An item writes its own columns of row writeLoc (the slice's
// columns in every row block) and pools the same columns. The ring element that is row writeLoc is taken from the
// input row, rounded to the state dtype (the value the store leaves there), instead of being read back: so no
// thread reads a location this kernel writes, and the ring loads need not wait for the store.
#include <cuda_bf16.h>

#include "compress/compress_device.cuh"
#include "compress/compress_launch.h"
#include "compress/grid.h"
#include "compress/pool.cuh"

namespace dsv4kv {
namespace compress {
namespace {

struct DecodeRow {
  uint32_t seqLen;
  int32_t writeLoc;
  int32_t rp0;
  int32_t rp1;
};
__device__ __forceinline__ DecodeRow DecodeDecodeRow(uint4 w) {
  return DecodeRow{w.x, static_cast<int32_t>(w.y), static_cast<int32_t>(w.z), static_cast<int32_t>(w.w)};
}

// The device re-check of a valid DecodePlan row b (docs/reference/planner.md §8): kErrNone or the code, with
// `value` the offending field's value. Input row b is host-checked (inputRows >= batch) and re-checked here.
template <int CR>
__device__ __forceinline__ int32_t CheckDecodeRow(const DecodeRow& r, int64_t b, const DecodeParams& p,
                                                  int64_t& value) {
  if (r.seqLen == 0) return value = 0, kErrSeqLen;
  if (b >= p.inputRows) return value = b, kErrRaggedRow;
  if (r.writeLoc < 0 || r.writeLoc >= p.stateRows) return value = r.writeLoc, kErrWriteLoc;
  if (r.seqLen % CR != 0) return kErrNone;
  if (CR == 4) {
    if (r.seqLen > 4 && !RowsIn(static_cast<int64_t>(r.rp0) * 4, 4, p.stateRows)) return value = r.rp0, kErrRingRow;
    if (!RowsIn(static_cast<int64_t>(r.rp1) * 4, 4, p.stateRows)) return value = r.rp1, kErrRingRow;
  } else {
    if (!RowsIn(static_cast<int64_t>(r.rp1) * CR, CR, p.stateRows)) return value = r.rp1, kErrRingRow;
  }
  return kErrNone;
}

// The plan row of item k (or a padding row past the end): loaded one item ahead, so that an item's ring loads do not
// wait for its plan row.
template <int kSlices>
__device__ __forceinline__ uint4 PlanOfItem(const DecodeParams& p, int64_t k, int64_t items) {
  return k < items ? LoadPlan16(p.planD, k / kSlices) : make_uint4(kInvalidSeqLen, 0, 0, 0);
}
// Checks row b; false when the item has nothing to do (padding, or a bad row: reported by slice 0).
template <int CR>
__device__ __forceinline__ bool CheckedDecodeRow(const DecodeParams& p, uint4 w, int64_t b, int slice, bool reporter,
                                                 DecodeRow& r) {
  r = DecodeDecodeRow(w);
  if (r.seqLen == kInvalidSeqLen) return false;
  int64_t value = 0;
  const int32_t code = CheckDecodeRow<CR>(r, b, p, value);
  if (code == kErrNone) return true;
  if (slice == 0 && reporter) Report(p.err, code, b, value, kKDecode);
  return false;
}

// ---- c4: warp slots as in prefill_compress.cu; lane quad d = slice * 128 + 4 * lane ------------------------------
// Per item a lane loads its 4 input quads (one per row block) and 16 ring quads, then stores the input quads: 10 KB
// per warp item in flight (fp32, headDim 512).
constexpr int kC4Warps = 4;
template <typename T, int HD>
__global__ void __launch_bounds__(kC4Warps * 32) DecodeC4Kernel(const DecodeParams p, int32_t slots) {
  constexpr int kSlices = HD / kC4SliceCh;
  constexpr int kRowElems = RowBlocksOf(4) * HD;
  __shared__ float4 sApe[kC4Warps][8][32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int slot = warp * gridDim.x + blockIdx.x;
  const int64_t items = static_cast<int64_t>(p.batch) * kSlices;
  // While the previous kernel finishes: the slot's first plan row into L2 (a prefetch changes no value, so it is safe
  // before the wait; the row is read after it).
  if (lane == 0 && slot < slots && slot < items) PrefetchL2(p.planD + (slot / kSlices) * kDecodePlanBytes);
  PdlWait();  // launched as a programmatic dependent of whatever ran before (launch.cu)
  // The next kernel may launch now. Triggering before the wait let every later call of a CUDA graph launch and wait at
  // once: 0.2 to 1.1 µs more per call at B = 64 and 256 (same-run A/B, docs/benchmarks.md).
  PdlLaunchDependents();
  if (slot >= slots) return;
  bool staged = false;  // warp-uniform
  T* const state = static_cast<T*>(p.state);
  uint4 next = PlanOfItem<kSlices>(p, slot, items);
  for (int64_t k = slot; k < items; k += slots) {  // warp-uniform
    const uint4 w = next;
    next = PlanOfItem<kSlices>(p, k + slots, items);
    const int64_t b = k / kSlices;
    const int slice = static_cast<int>(k % kSlices);
    DecodeRow r;
    if (!CheckedDecodeRow<4>(p, w, b, slice, lane == 0, r)) continue;
    const int d = slice * kC4SliceCh + lane * 4;
    const float* in = p.input + b * kRowElems + d;
    float4 v[4];  // row blocks kv_overlap, kv, score_overlap, score
#pragma unroll
    for (int i = 0; i < 4; ++i) v[i] = LoadIn4(in + i * HD);
    T* dst = state + static_cast<int64_t>(r.writeLoc) * kRowElems + d;
    if (r.seqLen % 4 != 0) {
#pragma unroll
      for (int i = 0; i < 4; ++i) Vec4<T>::Store(dst + i * HD, v[i]);
      continue;
    }
    // Ring loads first (none reads row writeLoc), then the row store, then the math: one round trip per item.
    const int e0 = r.seqLen <= 4 ? 4 : 0;
    float4 kv[8], s[8];
    const auto load = [&](int e, float4& kvE, float4& sE) {
      const int64_t row = e < 4 ? static_cast<int64_t>(r.rp0) * 4 + e : static_cast<int64_t>(r.rp1) * 4 + e - 4;
      if (row == r.writeLoc) {  // warp-uniform
        kvE = RoundToState4<T>(v[e < 4 ? 0 : 1]);
        sE = RoundToState4<T>(v[e < 4 ? 2 : 3]);
      } else {
        const T* src = state + row * kRowElems + d;
        kvE = Vec4<T>::Load(src + (e < 4 ? 0 : HD));
        sE = Vec4<T>::Load(src + (e < 4 ? 2 * HD : 3 * HD));
      }
    };
    // The ape quads from shared memory: 0.3 µs faster than loading them with the elements at B = 256 although every
    // warp pools one item there (same run, docs/benchmarks.md), the opposite of the verify-sized prefill tables.
    if (!staged) StageC4Ape<HD>(sApe[warp], p.ape + d, lane), staged = true;  // slice == slot % kSlices
    LoadC4Window(e0, [&](int e) { return sApe[warp][e][lane]; }, load, kv, s);
#pragma unroll
    for (int i = 0; i < 4; ++i) Vec4<T>::Store(dst + i * HD, v[i]);
    StoreOut4(p.out + b * HD + d, PoolC4Window(e0, kv, s));
  }
}

// ---- c128: grid = slots blocks of kC128Threads; block b owns items b + n * gridDim.x -------------------------------
// Every thread loads its 4 ring elements (8 quads: 32 KB per block in flight), threads 0..15 write the slice's quads
// of row writeLoc (kv and score blocks), and the block pools the elements.
template <typename T, int HD>
__global__ void __launch_bounds__(kC128Threads, 4) DecodeC128Kernel(const DecodeParams p) {
  constexpr int kSlices = HD / kC128SliceCh;
  PdlLaunchDependents();  // a plain launch (launch.cu): a chained next kernel may start; it waits before any access
  constexpr int kRowElems = RowBlocksOf(128) * HD;
  __shared__ C128Scratch scratch;
  const int t = threadIdx.x;
  const int64_t items = static_cast<int64_t>(p.batch) * kSlices;
  T* const state = static_cast<T*>(p.state);
  uint4 next = PlanOfItem<kSlices>(p, blockIdx.x, items);
  for (int64_t k = blockIdx.x; k < items; k += gridDim.x) {  // block-uniform
    const uint4 w = next;
    next = PlanOfItem<kSlices>(p, k + gridDim.x, items);
    const int64_t b = k / kSlices;
    const int slice = static_cast<int>(k % kSlices);
    DecodeRow r;
    if (!CheckedDecodeRow<128>(p, w, b, slice, t == 0, r)) continue;
    const int d = slice * kC128SliceCh + (t & 7) * 4;
    const float* in = p.input + b * kRowElems + d;
    const bool compresses = r.seqLen % 128 == 0;
    float4 kv[kC128PerThread], s[kC128PerThread];
    if (compresses) {  // ring loads first (none reads row writeLoc), then the row store, then the reduction
      const auto load = [&](int e, float4& kvE, float4& sE) {
        const int64_t row = static_cast<int64_t>(r.rp1) * 128 + e;
        if (row == r.writeLoc) {
          kvE = RoundToState4<T>(LoadIn4(in));
          sE = RoundToState4<T>(LoadIn4(in + HD));
        } else {
          const T* src = state + row * kRowElems + d;
          kvE = Vec4<T>::Load(src);
          sE = Vec4<T>::Load(src + HD);
        }
      };
      LoadC128Elements(C128ApeWithElements<HD>(p.ape, d), load, kv, s);
    }
    if (t < 16) {
      const int col = (t >> 3) * HD;  // kv block, then score block
      Vec4<T>::Store(state + static_cast<int64_t>(r.writeLoc) * kRowElems + col + d, LoadIn4(in + col));
    }
    if (compresses) ReduceC128Block(scratch, kv, s, p.out + b * HD + d);
  }
}

// The launches DispatchRing (grid.h) picks from.
struct Launch {
  template <typename T, int HD>
  static cudaError_t C4(const DecodeParams& p, cudaStream_t s) {
    constexpr auto kKernel = DecodeC4Kernel<T, HD>;
    const int64_t items = static_cast<int64_t>(p.batch) * (HD / kC4SliceCh);
    const int32_t slots = WorkSlots<kKernel>(items, kC4Warps * 32, kC4Warps, HD / kC4SliceCh);
    return LaunchOn(kKernel, (slots + kC4Warps - 1) / kC4Warps, kC4Warps * 32, s, true, p, slots);
  }
  template <typename T, int HD>
  static cudaError_t C128(const DecodeParams& p, cudaStream_t s) {
    constexpr auto kKernel = DecodeC128Kernel<T, HD>;
    const int64_t items = static_cast<int64_t>(p.batch) * (HD / kC128SliceCh);
    // A plain launch and the ape loaded with the elements: 0.8 to 1.5 µs faster at B = 256 than chained with a staged
    // ape (same run, docs/benchmarks.md).
    return LaunchOn(kKernel, WorkSlots<kKernel>(items, kC128Threads, 1, HD / kC128SliceCh), kC128Threads, s, false, p);
  }
};
}  // namespace

cudaError_t LaunchDecodeRows(const DecodeParams& p, cudaStream_t s) { return DispatchRing<Launch>(p, s); }

}  // namespace compress
}  // namespace dsv4kv
