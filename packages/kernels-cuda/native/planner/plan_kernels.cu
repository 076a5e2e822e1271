// Compress-planner kernels; see plan_kernels.cuh for the design and the closed forms.
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <vector>

#include "planner/plan_kernels.cuh"
#include "planner/plan_launch.h"

namespace dsv4kv {
namespace {

constexpr int kThreads = 256;  // prefill block: 8 warps; the per-block scan handles ceil(B/256) requests per thread

// The block's error record lives in shared memory; thread 0 initialises it before any report (followed by a
// barrier) and writes it to the block's PlanStatus record after the last report (preceded by a barrier).
struct BlockErr {
  int32_t code;
  int32_t index;
  int64_t value;
  int64_t aux;
};

__device__ __forceinline__ void Report(BlockErr* st, int32_t code, int32_t index, int64_t value, int64_t aux) {
  if (atomicCAS(&st->code, 0, code) == 0) {  // first error of the block wins; only the winner fills the details
    st->index = index;
    st->value = value;
    st->aux = aux;
  }
}

__device__ __forceinline__ void WriteRecord(PlanStatus* out, const BlockErr& e, int32_t nc, int32_t nw) {
  PlanStatus r{};
  r.code = e.code;
  r.index = e.index;
  r.value = e.value;
  r.aux = e.aux;
  r.num_compress = nc;
  r.num_write = nw;
  r.grid = static_cast<int32_t>(gridDim.x);
  out[blockIdx.x] = r;
}

__device__ __forceinline__ int32_t LegacySlot(int32_t cr, int64_t rid, int32_t p) {
  // rid*128 + 127 <= INT32_MAX was checked by the caller, so both forms fit int32.
  return cr == 4 ? static_cast<int32_t>(rid * 8 + p % 8) : static_cast<int32_t>(rid * 128 + p % 128);
}
__device__ __forceinline__ int32_t LegacyPage(int32_t cr, int64_t rid, int32_t p) {
  return cr == 4 ? static_cast<int32_t>(rid * 2 + ((p / 4) & 1)) : static_cast<int32_t>(rid);
}

// Slot of position p (>= 0) of request-pool index rid (>= 0), §4. On a bad index it reports and returns 0 (a
// harmless in-range value): nothing is ever read or written out of bounds.
__device__ __forceinline__ int32_t Slot(const SlotParams& sp, int64_t rid, int32_t b, int32_t p, BlockErr* st) {
  if (sp.req_style) {
    // rid < 2^31 (checked), p % R < R < 2^31: the int64 product cannot overflow; refuse what int32 cannot hold.
    const int64_t s = rid * sp.ring + (p % sp.ring);
    if (s > INT_MAX) {
      Report(st, kErrSlotOverflow, b, rid, p);
      return 0;
    }
    return static_cast<int32_t>(s);
  }
  if (rid >= sp.r2t_rows) {
    Report(st, kErrRidRows, b, rid, sp.r2t_rows);
    return 0;
  }
  if (p >= sp.r2t_stride) {
    Report(st, kErrPosStride, static_cast<int32_t>(rid), p, sp.r2t_stride);
    return 0;
  }
  // rid < r2t_rows and p < r2t_stride: the index is inside the [rows, stride] matrix (identity: < INT32_MAX).
  const int64_t full = sp.r2t ? static_cast<int64_t>(sp.r2t[rid * sp.r2t_stride + p]) : rid * sp.r2t_stride + p;
  int64_t swa = full;
  if (sp.f2s) {
    if (full < 0 || full >= sp.f2s_len) {
      Report(st, kErrFullRange, static_cast<int32_t>(rid), full, p);
      return 0;
    }
    swa = sp.f2s[full];
  }
  if (swa < 0) {
    Report(st, kErrSwaNeg, static_cast<int32_t>(rid), swa, p);
    return 0;
  }
  // swa fits int32 (an int32 table entry or an identity location < INT32_MAX). Upstream computes
  // (swa/SPS)*R + swa%R in int32; the TS mirror wraps the same way (Math.imul, |0): unsigned arithmetic mod 2^32.
  const int32_t sw = static_cast<int32_t>(swa);
  const uint32_t v = static_cast<uint32_t>(sw / sp.sps) * static_cast<uint32_t>(sp.ring) + static_cast<uint32_t>(sw % sp.ring);
  return static_cast<int32_t>(v);
}

// Positions q < x (x >= 0) with q % SPS >= SPS - cr: the SWA-page tail clause, counted in closed form.
__device__ __forceinline__ int32_t TailBelow(int32_t x, int32_t sps, int32_t cr) {
  const int32_t r = x % sps - (sps - cr);
  return (x / sps) * cr + (r > 0 ? r : 0);
}

struct ReqShape {
  int32_t prefix, main_start, lim, nc, nw, tail_to_lim;
};

// Per-request closed forms (§3): firstWritePos = min(floor(S/cr)*cr - overlap, S - pad). S >= 0 and
// 0 <= pad <= INT32_MAX, so S - pad cannot overflow int32; floor(S/cr)*cr <= S.
__device__ __forceinline__ ReqShape Shape(int32_t s, int32_t e, const PrefillParams& p) {
  const int32_t cr = p.slot.cr;
  ReqShape r;
  r.prefix = s - e;
  const int32_t overlap = cr == 4 ? cr : 0;
  const int32_t first_w = min((s / cr) * cr - overlap, s - p.pad);
  r.main_start = max(first_w, r.prefix);
  r.lim = min(r.main_start, s);
  r.tail_to_lim = p.tail ? TailBelow(r.lim, p.slot.sps, cr) - TailBelow(r.prefix, p.slot.sps, cr) : 0;
  r.nc = s / cr - r.prefix / cr;
  r.nw = r.tail_to_lim + (s - r.main_start);
  return r;
}

__device__ __forceinline__ void StoreInvalidC(uint32_t* c, int32_t k) {
  reinterpret_cast<uint4*>(c)[k] = make_uint4(0xffffffffu, 0u, 0xffffffffu, 0xffffffffu);
}
__device__ __forceinline__ void StoreInvalidW(uint32_t* w, int32_t k) {
  reinterpret_cast<uint2*>(w)[k] = make_uint2(0xffffffffu, 0xffffffffu);
}

// Block-wide exclusive scan of three int64 values (thread sums); returns the exclusive prefixes, totals in tot[].
__device__ __forceinline__ void BlockScan3(int64_t v[3], int64_t* tot) {
  __shared__ int64_t warp_tot[3][kThreads / 32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  int64_t inc[3] = {v[0], v[1], v[2]};
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
#pragma unroll
    for (int c = 0; c < 3; ++c) {
      const int64_t o = __shfl_up_sync(0xffffffffu, inc[c], off);
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

__global__ void __launch_bounds__(kThreads) PrefillKernel(const PrefillParams p) {
  // Dynamic shared memory: three int32 arrays of batch+1 entries (exclusive scans of E, nc, nw).
  extern __shared__ int32_t smem[];
  __shared__ int64_t tot[3];
  __shared__ BlockErr err_rec;
  if (threadIdx.x == 0) err_rec = BlockErr{0, 0, 0, 0};
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
    const int32_t s = p.seq_lens[b];
    const int32_t e = p.extend_lens[b];
    int err = kErrNone;
    if (s < 0) err = kErrSeqNeg;
    else if (e < 0) err = kErrExtendNeg;
    else if (p.host_rules && e == 0) err = kErrExtendZero;
    else if (e > s) err = kErrExtendGtSeq;
    if (err != kErrNone) {
      Report(&err_rec, err, b, err == kErrSeqNeg ? s : e, s);
      bad = 1;
      e_off[b] = c_off[b] = w_off[b] = 0;
      continue;
    }
    const ReqShape r = Shape(s, e, p);
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
    // Refused input: every row becomes the invalid pattern (in bounds: k < num_q rows), counts stay 0.
    for (int32_t k = blockIdx.x * kThreads + threadIdx.x; k < p.num_q; k += stride) {
      StoreInvalidC(p.plan_c, k);
      StoreInvalidW(p.plan_w, k);
    }
    __syncthreads();
    if (threadIdx.x == 0) WriteRecord(p.status, err_rec, 0, 0);
    return;  // uniform across the block: `bad` came from __syncthreads_or / tot[] in shared memory
  }
  const int32_t nc_total = static_cast<int32_t>(tot[1]);
  const int32_t nw_total = static_cast<int32_t>(tot[2]);
  const int32_t cr = p.slot.cr;
  const int32_t window = cr == 4 ? 2 * cr : cr;
  const int32_t n_tok = static_cast<int32_t>(sum_e);  // <= num_q <= 65535

  // Phase 2: one ragged row per iteration. Row k of request b yields at most one compress row (at
  // c_off[b] + rankC < c_off[b] + nc_b) and one write row (at w_off[b] + rankW < w_off[b] + nw_b), so every
  // index in [0, nc_total) / [0, nw_total) is written exactly once; [total, num_q) get the invalid pattern.
  for (int32_t k = blockIdx.x * kThreads + threadIdx.x; k < p.num_q; k += stride) {
    if (k < n_tok) {
      // Largest b with e_off[b] <= k: that request has e_off[b] <= k < e_off[b+1] (zero-length ones are skipped).
      int32_t lo_b = 0, hi_b = B - 1;
      while (lo_b < hi_b) {
        const int32_t mid = (lo_b + hi_b + 1) >> 1;
        if (e_off[mid] <= k) lo_b = mid;
        else hi_b = mid - 1;
      }
      const int32_t b = lo_b;
      const int32_t s = p.seq_lens[b];
      const int32_t e = p.extend_lens[b];
      const ReqShape r = Shape(s, e, p);
      const int32_t j = k - e_off[b];
      const int32_t pos = r.prefix + j;
      int64_t rid = p.rids ? p.rids[b] : b;
      bool rid_ok = true;
      if (rid < 0) {
        Report(&err_rec, kErrRidNeg, b, rid, 0);
        rid_ok = false;
      } else if (p.slot.legacy && rid * 128 + 127 > INT_MAX) {
        Report(&err_rec, kErrSlotOverflow, b, rid, 0);
        rid_ok = false;
      } else if (rid > INT_MAX) {  // no slot function accepts it; the TS layer refuses it with the same error
        Report(&err_rec, p.slot.req_style ? kErrSlotOverflow : kErrRidRows, b, rid, p.slot.r2t_rows);
        rid_ok = false;
      }
      if (!rid_ok) rid = 0;
      if ((pos + 1) % cr == 0) {
        const int32_t row = c_off[b] + (pos / cr - r.prefix / cr);
        const int32_t buffer_len = window - min(j + 1, window);
        int32_t rp0 = -1, rp1 = b;  // buffer_len == 0: upstream stores nothing; the stage-0 (-1, b) pair stays
        const int32_t q = pos, q0 = max(q - cr, 0);
        if (p.slot.legacy) {
          rp0 = LegacyPage(cr, rid, q0);
          rp1 = LegacyPage(cr, rid, q);
        } else if (buffer_len > 0) {
          rp0 = Slot(p.slot, rid, b, q0, &err_rec) / cr;
          rp1 = Slot(p.slot, rid, b, q, &err_rec) / cr;
        }
        reinterpret_cast<uint4*>(p.plan_c)[row] =
            make_uint4(static_cast<uint32_t>(pos + 1), (static_cast<uint32_t>(k) & 0xffffu) | (static_cast<uint32_t>(buffer_len) << 16),
                       static_cast<uint32_t>(rp0), static_cast<uint32_t>(rp1));
      }
      const bool main = pos >= r.main_start;
      const bool tail = p.tail && pos < r.lim && (pos % p.slot.sps) >= p.slot.sps - cr;
      if (main || tail) {
        const int32_t rank = main ? r.tail_to_lim + (pos - r.main_start)
                                  : TailBelow(pos, p.slot.sps, cr) - TailBelow(r.prefix, p.slot.sps, cr);
        const int32_t loc = p.slot.legacy ? LegacySlot(cr, rid, pos) : Slot(p.slot, rid, b, pos, &err_rec);
        reinterpret_cast<uint2*>(p.plan_w)[w_off[b] + rank] = make_uint2(static_cast<uint32_t>(k), static_cast<uint32_t>(loc));
      }
    }
    if (k >= nc_total) StoreInvalidC(p.plan_c, k);
    if (k >= nw_total) StoreInvalidW(p.plan_w, k);
  }
  __syncthreads();
  if (threadIdx.x == 0) WriteRecord(p.status, err_rec, nc_total, nw_total);
}

__global__ void __launch_bounds__(256) DecodeKernel(const DecodeParams p) {
  __shared__ BlockErr err_rec;
  if (threadIdx.x == 0) err_rec = BlockErr{0, 0, 0, 0};
  __syncthreads();
  const int32_t cr = p.slot.cr;
  for (int32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < p.batch; i += gridDim.x * blockDim.x) {
    const int32_t s = p.seq_lens[i];
    int64_t rid = p.rids ? p.rids[i] : i;
    uint4 out = make_uint4(static_cast<uint32_t>(s), 0xffffffffu, 0xffffffffu, 0xffffffffu);
    if (s < 1) {
      Report(&err_rec, kErrDecodeSeq, i, s, 0);
    } else if (rid < 0) {
      Report(&err_rec, kErrRidNeg, i, rid, 0);
    } else if (p.slot.legacy ? rid * 128 + 127 > INT_MAX : rid > INT_MAX) {
      Report(&err_rec, p.slot.legacy || p.slot.req_style ? kErrSlotOverflow : kErrRidRows, i, rid, p.slot.r2t_rows);
    } else {
      const int32_t p1 = s - 1, p0 = max(p1 - cr, 0);
      if (p.slot.legacy) {
        out = make_uint4(static_cast<uint32_t>(s), static_cast<uint32_t>(LegacySlot(cr, rid, p1)),
                         static_cast<uint32_t>(LegacyPage(cr, rid, p0)), static_cast<uint32_t>(LegacyPage(cr, rid, p1)));
      } else {
        const int32_t w = Slot(p.slot, rid, i, p1, &err_rec);
        const int32_t r0 = Slot(p.slot, rid, i, p0, &err_rec) / cr;
        out = make_uint4(static_cast<uint32_t>(s), static_cast<uint32_t>(w), static_cast<uint32_t>(r0), static_cast<uint32_t>(w / cr));
      }
    }
    reinterpret_cast<uint4*>(p.plan_d)[i] = out;
  }
  __syncthreads();
  if (threadIdx.x == 0) WriteRecord(p.status, err_rec, 0, 0);
}

__global__ void EmptyKernel() {}

bool g_smem_set = false;

}  // namespace

size_t PrefillSmemBytes(int32_t batch) { return static_cast<size_t>(3) * (static_cast<size_t>(batch) + 1) * sizeof(int32_t); }

cudaError_t LaunchPrefill(const PrefillParams& p, cudaStream_t stream, int sm_count) {
  const size_t smem = PrefillSmemBytes(p.batch);
  if (!g_smem_set) {
    // kMaxGpuBatch = 16384 requests -> 3 * 16385 * 4 = 196,620 B, under the 227 KB opt-in limit of sm_90.
    cudaError_t e = cudaFuncSetAttribute(PrefillKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(PrefillSmemBytes(kMaxGpuBatch)));
    if (e != cudaSuccess) return e;
    g_smem_set = true;
  }
  // One thread per ragged row; at most 2 blocks per SM (each block rescans the batch, so more blocks only repeat
  // it) and at most kMaxStatusBlocks (one status record each).
  const int32_t want = (p.num_q + kThreads - 1) / kThreads;
  const int32_t blocks = std::max(1, std::min({want, 2 * std::max(1, sm_count), kMaxStatusBlocks}));
  PrefillKernel<<<blocks, kThreads, smem, stream>>>(p);
  return cudaGetLastError();
}

cudaError_t LaunchDecode(const DecodeParams& p, cudaStream_t stream) {
  const int32_t blocks = std::max(1, std::min((p.batch + 255) / 256, kMaxStatusBlocks));
  DecodeKernel<<<blocks, 256, 0, stream>>>(p);
  return cudaGetLastError();
}

cudaError_t LaunchEmpty(cudaStream_t stream) {
  EmptyKernel<<<1, 32, 0, stream>>>();
  return cudaGetLastError();
}

static double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0.0 : (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]));
}

cudaError_t BenchLaunch(const std::function<cudaError_t(cudaStream_t)>& launch, cudaStream_t stream, int warmup, int reps,
                        int calls, BenchResult* out) {
#define DSV4KV_B(x)                     \
  do {                                  \
    cudaError_t e__ = (x);              \
    if (e__ != cudaSuccess) return e__; \
  } while (0)
  cudaEvent_t a, b;
  DSV4KV_B(cudaEventCreate(&a));
  DSV4KV_B(cudaEventCreate(&b));
  for (int i = 0; i < warmup; ++i) DSV4KV_B(launch(stream));
  DSV4KV_B(cudaStreamSynchronize(stream));
  std::vector<double> eager, graph;
  for (int r = 0; r < reps; ++r) {
    DSV4KV_B(cudaEventRecord(a, stream));
    for (int i = 0; i < calls; ++i) DSV4KV_B(launch(stream));
    DSV4KV_B(cudaEventRecord(b, stream));
    DSV4KV_B(cudaEventSynchronize(b));
    float ms = 0;
    DSV4KV_B(cudaEventElapsedTime(&ms, a, b));
    eager.push_back(1000.0 * ms / calls);
  }
  cudaGraph_t g;
  cudaGraphExec_t ge;
  DSV4KV_B(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < calls; ++i) {
    cudaError_t e = launch(stream);
    if (e != cudaSuccess) {
      cudaStreamEndCapture(stream, &g);
      return e;
    }
  }
  DSV4KV_B(cudaStreamEndCapture(stream, &g));
  DSV4KV_B(cudaGraphInstantiate(&ge, g, 0));
  for (int i = 0; i < std::max(1, warmup / calls); ++i) DSV4KV_B(cudaGraphLaunch(ge, stream));
  DSV4KV_B(cudaStreamSynchronize(stream));
  for (int r = 0; r < reps; ++r) {
    DSV4KV_B(cudaEventRecord(a, stream));
    DSV4KV_B(cudaGraphLaunch(ge, stream));
    DSV4KV_B(cudaEventRecord(b, stream));
    DSV4KV_B(cudaEventSynchronize(b));
    float ms = 0;
    DSV4KV_B(cudaEventElapsedTime(&ms, a, b));
    graph.push_back(1000.0 * ms / calls);
  }
  cudaGraphExecDestroy(ge);
  cudaGraphDestroy(g);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  out->eager_us = Median(eager);
  out->graph_us = Median(graph);
  return cudaSuccess;
#undef DSV4KV_B
}

}  // namespace dsv4kv
