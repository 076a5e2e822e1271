// General prefill (batch > kSmallBatch): each block scans the batch in shared memory, then plans a grid-stride slice
// of the ragged rows.
// Params: PrefillParams (plan_kernels.cuh). Preconditions: PrefillPrecondition (launch.cu, each bound derived there);
// the dynamic shared scan is PrefillSmemBytes(batch) = 3 * (batch + 1) int32, so batch <= kMaxGpuBatch keeps it
// (196,620 B at 16,384) under the opt-in AllowSmem sets once per instance.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>

#include "planner/loads.cuh"
#include "planner/plan_kernels.cuh"
#include "planner/plan_launch.h"
#include "planner/prefill_launch.h"
#include "planner/prefill_rows.cuh"
#include "planner/slot_math.cuh"
#include "planner/status.cuh"

namespace dsv4kv {
namespace {

constexpr int kThreads = 256;  // general prefill block: 8 warps; the per-block scan handles ceil(B/256) requests each

// Block-wide exclusive scan of three int64 values (thread sums); returns the exclusive prefixes, totals in tot[].
__device__ __forceinline__ void BlockScan3(int64_t v[3], int64_t* tot) {
  __shared__ int64_t warp_tot[3][kThreads / 32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  int64_t inc[3] = {v[0], v[1], v[2]};
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
#pragma unroll
    for (int c = 0; c < 3; ++c) {
      const int64_t o = __shfl_up_sync(kFull, inc[c], off);
      if (lane >= off) inc[c] += o;
    }
  }
  if (lane == 31) {
#pragma unroll
    for (int c = 0; c < 3; ++c) warp_tot[c][warp] = inc[c];
  }
  __syncthreads();
  if (threadIdx.x == 0) {  // 8 warps: a serial scan of 8 values is cheaper than another shuffle round
#pragma unroll
    for (int c = 0; c < 3; ++c) {
      int64_t run = 0;
      for (int w = 0; w < kThreads / 32; ++w) {
        const int64_t t = warp_tot[c][w];
        warp_tot[c][w] = run;
        run += t;
      }
      tot[c] = run;
    }
  }
  __syncthreads();
#pragma unroll
  for (int c = 0; c < 3; ++c) v[c] = warp_tot[c][warp] + inc[c] - v[c];
}

// A refused batch: every row becomes the invalid pattern (in bounds: k < num_q rows), counts stay 0, and the block's
// record carries the first error its threads reported.
template <bool kLoop>
__device__ __forceinline__ void RefuseBlock(const PrefillParams& p, const LaneErr& err_rec, const int32_t& stride) {
  for (int32_t k = blockIdx.x * kThreads + threadIdx.x; k < p.num_q; k += stride) {
    StoreInvalidC(p.plan_c, k);
    StoreInvalidW(p.plan_w, k);
    if constexpr (!kLoop) break;
  }
  __syncthreads();
  if (threadIdx.x == 0) WriteRecord(p.status + blockIdx.x, err_rec, 0, 0, gridDim.x);
}

// The request of ragged row k: the largest b with e_off[b] <= k, so e_off[b] <= k < e_off[b+1] (zero-length
// requests are skipped).
__device__ __forceinline__ int32_t RequestOfRow(const int32_t* e_off, int32_t B, int32_t k) {
  int32_t lo_b = 0, hi_b = B - 1;
  while (lo_b < hi_b) {
    const int32_t mid = (lo_b + hi_b + 1) >> 1;
    if (e_off[mid] <= k)
      lo_b = mid;
    else
      hi_b = mid - 1;
  }
  return lo_b;
}

// The block's record: the first error any thread reported (rows included), else the clean counts.
__device__ __forceinline__ void FinishBlock(const PrefillParams& p, LaneErr& err_rec, const LaneErr& err,
                                            const int32_t& nc_total, const int32_t& nw_total) {
  if (err.code != kErrNone) Report(&err_rec, err.code, err.index, err.value, err.aux);
  __syncthreads();
  if (threadIdx.x == 0) WriteRecord(p.status + blockIdx.x, err_rec, nc_total, nw_total, gridDim.x);
}

template <int CR, int MODE, typename LenT, bool kLoop, int kMaps>
__global__ void __launch_bounds__(kThreads) PrefillKernel(const PrefillParams p) {
  // Dynamic shared memory: three int32 arrays of batch+1 entries (exclusive scans of E, nc, nw).
  extern __shared__ int32_t smem[];
  __shared__ int64_t tot[3];
  __shared__ LaneErr err_rec;
  if (threadIdx.x == 0) err_rec = LaneErr{0, 0, 0, 0};
  __syncthreads();
  const int32_t B = p.batch;
  int32_t* e_off = smem;
  int32_t* c_off = smem + (B + 1);
  int32_t* w_off = smem + 2 * (B + 1);

  // Phase 1: each thread owns a contiguous chunk of requests: validate, shape, thread sums.
  const int32_t per = (B + kThreads - 1) / kThreads;
  const int32_t lo = min(B, static_cast<int32_t>(threadIdx.x) * per);
  const int32_t hi = min(B, lo + per);
  int64_t sums[3] = {0, 0, 0};
  int bad = 0;
  for (int32_t b = lo; b < hi; ++b) {
    const int64_t s64 = LoadLen<LenT>(p.seq_lens, b);
    const int64_t e64 = LoadLen<LenT>(p.extend_lens, b);
    int64_t v, a;
    const int32_t err = CheckReq<LenT>(p, s64, e64, v, a);
    if (err != kErrNone) {
      Report(&err_rec, err, b, v, a);
      bad = 1;
      e_off[b] = c_off[b] = w_off[b] = 0;
      continue;
    }
    const int32_t s = static_cast<int32_t>(s64), e = static_cast<int32_t>(e64);
    const ReqShape r = Shape<CR>(s, e, p);
    e_off[b] = e;
    c_off[b] = r.nc;  // 0 <= nc, nw <= e: each position yields at most one event and one write
    w_off[b] = r.nw;
    sums[0] += e;
    sums[1] += r.nc;
    sums[2] += r.nw;
  }
  int64_t pre[3] = {sums[0], sums[1], sums[2]};
  BlockScan3(pre, tot);
  // Sums are int64: B <= 16384 requests of E < 2^31 cannot overflow. Turn the chunk into exclusive offsets.
  {
    int64_t run[3] = {pre[0], pre[1], pre[2]};
    for (int32_t b = lo; b < hi; ++b) {
      const int32_t e = e_off[b], c = c_off[b], w = w_off[b];
      // Offsets are only used when tot[0] <= num_q <= 65535 (checked below), so they fit int32 then.
      e_off[b] = static_cast<int32_t>(min(run[0], static_cast<int64_t>(INT_MAX)));
      c_off[b] = static_cast<int32_t>(min(run[1], static_cast<int64_t>(INT_MAX)));
      w_off[b] = static_cast<int32_t>(min(run[2], static_cast<int64_t>(INT_MAX)));
      run[0] += e;
      run[1] += c;
      run[2] += w;
    }
  }
  if (threadIdx.x == 0) e_off[B] = static_cast<int32_t>(min(tot[0], static_cast<int64_t>(INT_MAX)));
  bad = __syncthreads_or(bad);
  const int64_t sum_e = tot[0];
  if (!bad && (p.host_rules ? sum_e != p.num_q : sum_e > p.num_q)) {
    if (threadIdx.x == 0) Report(&err_rec, kErrExtendSum, -1, sum_e, p.num_q);
    bad = 1;
  }
  const int32_t stride = gridDim.x * kThreads;
  if (bad) {
    RefuseBlock<kLoop>(p, err_rec, stride);
    return;  // uniform across the block: `bad` came from __syncthreads_or / tot[] in shared memory
  }
  const int32_t nc_total = static_cast<int32_t>(tot[1]);
  const int32_t nw_total = static_cast<int32_t>(tot[2]);
  const int32_t n_tok = static_cast<int32_t>(sum_e);  // <= num_q <= 65535

  // Phase 2: one ragged row per iteration. Row k of request b yields at most one compress row (at
  // c_off[b] + rankC < c_off[b] + nc_b) and one write row (at w_off[b] + rankW < w_off[b] + nw_b), so every
  // index in [0, nc_total) / [0, nw_total) is written exactly once; [total, num_q) get the invalid pattern.
  LaneErr err{0, 0, 0, 0};
  for (int32_t k = blockIdx.x * kThreads + threadIdx.x; k < p.num_q; k += stride) {
    if (k < n_tok) {
      const int32_t b = RequestOfRow(e_off, B, k);
      // Validated in phase 1 (0 <= E <= S <= INT32_MAX), so the narrowing is exact.
      const int32_t s = static_cast<int32_t>(LoadLen<LenT>(p.seq_lens, b));
      const int32_t e = static_cast<int32_t>(LoadLen<LenT>(p.extend_lens, b));
      const ReqShape r = Shape<CR>(s, e, p);
      LaneErr rerr{0, 0, 0, 0};
      const int32_t rid = CheckRid<MODE>(p.slot, p.rids ? p.rids[b] : b, b, rerr);
      if (rerr.code != kErrNone) Note(err, rerr.code, rerr.index, rerr.value, rerr.aux);
      EmitRowAny<CR, MODE, kMaps>(rerr.code == kErrNone && IndexChecked<MODE, kMaps>(p.slot, rid, s), p, k, b,
                                  k - e_off[b], r, rid, c_off[b], w_off[b], err);
    }
    if (k >= nc_total) StoreInvalidC(p.plan_c, k);
    if (k >= nw_total) StoreInvalidW(p.plan_w, k);
    if constexpr (!kLoop) break;
  }
  FinishBlock(p, err_rec, err, nc_total, nw_total);
}

template <typename K>
cudaError_t AllowSmem(K kernel, std::atomic<bool>& done) {
  if (done.load(std::memory_order_acquire)) return cudaSuccess;
  // kMaxGpuBatch = 16384 requests -> 3 * 16385 * 4 = 196,620 B, under the 227 KB opt-in limit of sm_90.
  const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(PrefillSmemBytes(kMaxGpuBatch)));
  if (e == cudaSuccess) done.store(true, std::memory_order_release);
  return e;
}

}  // namespace

size_t PrefillSmemBytes(int32_t batch) {
  return static_cast<size_t>(3) * (static_cast<size_t>(batch) + 1) * sizeof(int32_t);
}

template <int CR, int MODE, typename LenT, int kMaps>
cudaError_t LaunchPrefillGeneral(const PrefillParams& p, cudaStream_t stream, int sm_count) {
  const int32_t sm2 = 2 * std::max(1, sm_count);
  static std::atomic<bool> smem_set_loop{false}, smem_set_once{false};
  // One thread per ragged row; at most 2 blocks per SM (each block rescans the batch, so more blocks only repeat
  // it) and at most kMaxStatusBlocks (one status record each).
  const int32_t want = (p.num_q + kThreads - 1) / kThreads;
  const int32_t blocks = std::max(1, std::min({want, sm2, kMaxStatusBlocks}));
  const bool loop = static_cast<int64_t>(blocks) * kThreads < p.num_q;
  cudaError_t e = loop ? AllowSmem(PrefillKernel<CR, MODE, LenT, true, kMaps>, smem_set_loop)
                       : AllowSmem(PrefillKernel<CR, MODE, LenT, false, kMaps>, smem_set_once);
  if (e != cudaSuccess) return e;
  if (loop)
    PrefillKernel<CR, MODE, LenT, true, kMaps><<<blocks, kThreads, PrefillSmemBytes(p.batch), stream>>>(p);
  else
    PrefillKernel<CR, MODE, LenT, false, kMaps><<<blocks, kThreads, PrefillSmemBytes(p.batch), stream>>>(p);
  return cudaGetLastError();
}

#define DSV4KV_INSTANTIATE_GENERAL(CR, MODE, LenT, kMaps) \
  template cudaError_t LaunchPrefillGeneral<CR, MODE, LenT, kMaps>(const PrefillParams&, cudaStream_t, int);
DSV4KV_PREFILL_INSTANCES(DSV4KV_INSTANTIATE_GENERAL)
#undef DSV4KV_INSTANTIATE_GENERAL

}  // namespace dsv4kv
