// Prefill compress (docs/reference/planner.md §8.1, §8.2): every valid CompressPlan row i pools its W window
// elements (ring rows of the pre-batch state for e < bufferLen, ragged input rows otherwise) into out row i.
//
// Work items are (plan row, channel slice): c4 a warp per 128 channels (32 KB of reads per row at headDim 512),
// c128 a 256-thread block per 32 channels (512 KB per row, so 16 blocks share one row). Items k = row * slices +
// slice are dealt round-robin to a bounded grid (grid.h) and found by one parallel load per thread of the plan rows
// of that thread's items: padding costs a 16-byte load, never a launched block or a serial chain of loads, and the
// valid items of a padded table (valid rows first) spread evenly over every SM whatever their count.
#include <cuda_bf16.h>

#include "compress/compress_device.cuh"
#include "compress/compress_launch.h"
#include "compress/grid.h"
#include "compress/pool.cuh"

namespace dsv4kv {
namespace compress {
namespace {

// Element e of a checked row at channel offset d (docs/reference/planner.md §8.1, §8.2). The state is read-only in
// this kernel (the write kernel waits for it, and every load here comes after the kernel's own wait), so both sources
// use the read-only path.
template <int CR, typename T, int HD>
__device__ __forceinline__ void LoadPrefillElement(const PrefillParams& p, const CompressRow& c, int e, int d,
                                                   float4& kv, float4& s) {
  constexpr int W = WindowOf(CR);
  constexpr int kRowElems = RowBlocksOf(CR) * HD;
  const int kvCol = (CR == 4 && e >= 4 ? HD : 0) + d;
  const int sCol = (CR == 4 ? (e >= 4 ? 3 * HD : 2 * HD) : HD) + d;
  if (e < static_cast<int>(c.bufferLen)) {
    const int64_t row = CR == 4
                            ? (e < 4 ? static_cast<int64_t>(c.rp0) * 4 + e : static_cast<int64_t>(c.rp1) * 4 + e - 4)
                            : static_cast<int64_t>(c.rp1) * CR + e;
    const T* src = static_cast<const T*>(p.state) + row * kRowElems;
    kv = Vec4<T>::LoadRO(src + kvCol);
    s = Vec4<T>::LoadRO(src + sCol);
  } else {
    const float* src = p.input + (static_cast<int64_t>(c.ragged) - (W - 1) + e) * kRowElems;
    kv = LoadIn4(src + kvCol);
    s = LoadIn4(src + sCol);
  }
}

// The row's re-check; a bad row is reported once (by its slice-0 item) and skipped by every item.
template <int CR>
__device__ __forceinline__ bool RowOk(const PrefillParams& p, const CompressRow& c, int64_t row, int slice,
                                      bool reporter) {
  int64_t value = 0;
  const int32_t code = CheckCompressRow<CR>(c, p.stateRows, p.inputRows, value);
  if (code == kErrNone) return true;
  if (slice == 0 && reporter) Report(p.err, code, row, value, kKPrefillCompress);
  return false;
}

// ---- c4: grid = ceil(slots / kC4Warps) blocks of kC4Warps warps; warp slot o = warp * gridDim.x + block ----------
// Lane j of slot o checks item o + (pass * 32 + j) * slots, so consecutive items (the slices of one row) land in
// consecutive blocks, i.e. on different SMs. Per item a lane issues 16 loads of 16 bytes (8 elements x kv, score)
// before its first use: 8 KB in flight per warp, and the grid holds every resident warp. The 8 ape quads of its
// channels are loaded with them when every slot takes at most one item (a verify table), and staged in shared memory
// once per slot otherwise (a long extend, pool.cuh): the faster choice for each in a same-run A/B (docs/benchmarks.md).
constexpr int kC4Warps = 4;
template <typename T, int HD>
__global__ void __launch_bounds__(kC4Warps * 32) CompressC4Kernel(const PrefillParams p, int32_t slots, bool stageApe) {
  // Launched as a programmatic dependent of the previous kernel (launch.cu): every thread waits for that grid before
  // anything else, and only then lets the write kernel launch, which reads its plan and input before its own wait
  // (so everything before this kernel on the stream must be complete by then).
  PdlWait();
  PdlLaunchDependents();
  constexpr int kSlices = HD / kC4SliceCh;
  __shared__ float4 sApe[kC4Warps][8][32];
  bool staged = false;  // warp-uniform
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int slot = warp * gridDim.x + blockIdx.x;
  if (slot >= slots) return;
  const int64_t items = static_cast<int64_t>(p.numPlanC) * kSlices;
  for (int64_t base = slot; base < items; base += static_cast<int64_t>(slots) * 32) {
    const int64_t k = base + static_cast<int64_t>(lane) * slots;
    uint4 w = make_uint4(kInvalidSeqLen, 0, 0, 0);
    if (k < items) w = LoadPlan16(p.planC, k / kSlices);
    unsigned valid = __ballot_sync(kFullMask, w.x != kInvalidSeqLen);
    while (valid != 0) {  // warp-uniform
      const int src = __ffs(valid) - 1;
      valid &= valid - 1;
      const CompressRow c = DecodeCompressRow(Shfl4(w, src));
      const int64_t item = base + static_cast<int64_t>(src) * slots;
      const int64_t row = item / kSlices;
      const int slice = static_cast<int>(item % kSlices);
      if (!RowOk<4>(p, c, row, slice, lane == 0)) continue;
      const int d = slice * kC4SliceCh + lane * 4;
      const auto load = [&](int e, float4& kv, float4& s) { LoadPrefillElement<4, T, HD>(p, c, e, d, kv, s); };
      float4 entry;
      if (stageApe) {                                                             // grid-uniform
        if (!staged) StageC4Ape<HD>(sApe[warp], p.ape + d, lane), staged = true;  // slice == slot % kSlices
        entry = PoolC4Warp(MaskedPrefix<4>(c.seqLen), [&](int e) { return sApe[warp][e][lane]; }, load);
      } else {
        entry = PoolC4Warp(MaskedPrefix<4>(c.seqLen), [&](int e) { return LoadIn4(p.ape + e * HD + d); }, load);
      }
      StoreOut4(p.out + row * HD + d, entry);
    }
  }
}

// ---- c128: grid = slots blocks of kC128Threads; block b owns items b + n * gridDim.x ------------------------------
// Thread t checks item b + (pass * kC128Threads + t) * gridDim.x; the valid ones are compacted in shared memory (in
// item order) and pooled one after the other by the whole block. Per item a thread issues 8 loads of 16 bytes
// (4 elements x kv, score) and 4 of ape: 32 KB in flight per block. Four resident blocks per SM (64 registers) put the
// 512 items of a 4,096-token chunk (32 events x 16 slices) in flight at once on 132 SMs; at three they would take two
// rounds. (A shared-memory ape stage cost 1.1 µs on that chunk, where every block pools one item: docs/benchmarks.md.)
template <typename T, int HD>
__global__ void __launch_bounds__(kC128Threads, 4) CompressC128Kernel(const PrefillParams p) {
  // A plain launch (it starts after everything before it has completed), so the write kernel may launch at once.
  PdlLaunchDependents();
  constexpr int kSlices = HD / kC128SliceCh;
  __shared__ uint4 sRow[kC128Threads];
  __shared__ int64_t sItem[kC128Threads];
  __shared__ int sWarpValid[kC128Threads / 32];
  __shared__ C128Scratch scratch;
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  const int64_t items = static_cast<int64_t>(p.numPlanC) * kSlices;
  const int64_t stride = gridDim.x;
  for (int64_t base = blockIdx.x; base < items; base += stride * kC128Threads) {
    const int64_t k = base + t * stride;
    uint4 w = make_uint4(kInvalidSeqLen, 0, 0, 0);
    if (k < items) w = LoadPlan16(p.planC, k / kSlices);
    const bool valid = w.x != kInvalidSeqLen;
    const unsigned ballot = __ballot_sync(kFullMask, valid);
    if (lane == 0) sWarpValid[warp] = __popc(ballot);
    __syncthreads();
    int offset = 0, count = 0;
#pragma unroll
    for (int i = 0; i < kC128Threads / 32; ++i) {
      const int n = sWarpValid[i];
      offset += i < warp ? n : 0;
      count += n;
    }
    if (valid) {
      const int at = offset + __popc(ballot & ((1u << lane) - 1u));
      sRow[at] = w;
      sItem[at] = k;
    }
    __syncthreads();
    for (int n = 0; n < count; ++n) {  // block-uniform
      const CompressRow c = DecodeCompressRow(sRow[n]);
      const int64_t row = sItem[n] / kSlices;
      const int slice = static_cast<int>(sItem[n] % kSlices);
      if (!RowOk<128>(p, c, row, slice, t == 0)) continue;
      const int d = slice * kC128SliceCh + (t & 7) * 4;
      PoolC128Block(scratch, C128ApeWithElements<HD>(p.ape, d), p.out + row * HD + d,
                    [&](int e, float4& kv, float4& s) { LoadPrefillElement<128, T, HD>(p, c, e, d, kv, s); });
    }
    __syncthreads();  // sRow / sItem / sWarpValid are rewritten by the next pass
  }
}

// The launches DispatchRing (grid.h) picks from.
struct Launch {
  template <typename T, int HD>
  static cudaError_t C4(const PrefillParams& p, cudaStream_t s) {
    constexpr auto kKernel = CompressC4Kernel<T, HD>;
    const int64_t items = static_cast<int64_t>(p.numPlanC) * (HD / kC4SliceCh);
    const int32_t slots = WorkSlots<kKernel>(items, kC4Warps * 32, kC4Warps, HD / kC4SliceCh);
    // Chained, waiting before it triggers: faster than a plain launch on the c4 chunk and equal on the verify tables in a
    // same-run A/B, where the earlier chained form (trigger first) was slower than plain (docs/benchmarks.md, D28).
    return LaunchOn(kKernel, (slots + kC4Warps - 1) / kC4Warps, kC4Warps * 32, s, true, p, slots, items > slots);
  }
  template <typename T, int HD>
  static cudaError_t C128(const PrefillParams& p, cudaStream_t s) {
    constexpr auto kKernel = CompressC128Kernel<T, HD>;
    const int64_t items = static_cast<int64_t>(p.numPlanC) * (HD / kC128SliceCh);
    // A plain launch: chained to the previous kernel it was slower on every c128 case (same run, docs/benchmarks.md).
    return LaunchOn(kKernel, WorkSlots<kKernel>(items, kC128Threads, 1, HD / kC128SliceCh), kC128Threads, s, false, p);
  }
};
}  // namespace

cudaError_t LaunchCompressRows(const PrefillParams& p, cudaStream_t s) { return DispatchRing<Launch>(p, s); }

}  // namespace compress
}  // namespace dsv4kv
