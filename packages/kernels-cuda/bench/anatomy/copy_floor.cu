// The L2-cold copy floor of writePrefix batch 256, D 8, fp32: what a tuned copy of the same bytes
// (same read:write split, 64 rotating buffer sets, CUDA graph of 100 calls) takes on this GPU, against writePrefix
// itself, writePrefix with the copy's cache hints and TMA bulk copies, all in one process. Not part of the addon;
// build.sh builds it into .anatomy/copy-floor, which runs on the GPU machine as is (every sweep row to
// $OUT/copy-sweep.txt; `copy-floor tma` runs only the TMA rows beside the fastest ld/st shape). Results:
// docs/benchmarks.md, "L2-cold writePrefix against a tuned copy"; docs/decisions.md D23.
#include "online_mtp/online_mtp_kernels.cu"
// The bench build's kernels (native/bench/): the fills, the float4 copy and the empty kernel.
#include "bench/bench_kernels.cu"
#include "bench_common.cuh"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace dsv4kv {
namespace copyfloor {
namespace om = online_mtp;

// Load hints: 0 ld.global, 1 ld.global.nc, 2 .nc.L1::no_allocate, 3 .nc.L1::no_allocate.L2::256B,
// 4 .nc.L1::no_allocate + L2 evict_first policy. Store hints: 0 st.global, 1 st.global.cs, 2 L2 evict_first policy.
template <int LD>
__device__ __forceinline__ float4 Ld4(const float4* p, uint64_t pol) {
  float4 v;
  if constexpr (LD == 0)
    asm volatile("ld.global.v4.f32 {%0,%1,%2,%3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
  else if constexpr (LD == 1)
    asm volatile("ld.global.nc.v4.f32 {%0,%1,%2,%3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
  else if constexpr (LD == 2)
    asm volatile("ld.global.nc.L1::no_allocate.v4.f32 {%0,%1,%2,%3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "l"(p));
  else if constexpr (LD == 3)
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.f32 {%0,%1,%2,%3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "l"(p));
  else
    asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.f32 {%0,%1,%2,%3}, [%4], %5;"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "l"(p), "l"(pol));
  return v;
}
template <int ST>
__device__ __forceinline__ void St4(float4* p, float4 v, uint64_t pol) {
  if constexpr (ST == 0)
    asm volatile("st.global.v4.f32 [%0], {%1,%2,%3,%4};" ::"l"(p), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w) : "memory");
  else if constexpr (ST == 1)
    asm volatile("st.global.cs.v4.f32 [%0], {%1,%2,%3,%4};" ::"l"(p), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w)
                 : "memory");
  else
    asm volatile("st.global.L2::cache_hint.v4.f32 [%0], {%1,%2,%3,%4}, %5;" ::"l"(p), "f"(v.x), "f"(v.y), "f"(v.z),
                 "f"(v.w), "l"(pol)
                 : "memory");
}
__device__ __forceinline__ uint64_t EvictFirst() {
  uint64_t pol;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  return pol;
}

// Reads nr float4s and writes nw >= nr: a tile is blockDim·U consecutive write elements; each thread issues its U
// loads (those below nr) before its U stores. Persistent (grid-stride over tiles) or one tile per block.
template <int U, int LD, int ST>
__global__ void MixCopy(const float4* __restrict__ src, int64_t nr, float4* __restrict__ dst, int64_t nw) {
  const uint64_t pol = (LD == 4 || ST == 2) ? EvictFirst() : 0;
  const int64_t tile = static_cast<int64_t>(blockDim.x) * U;
  const int64_t tiles = (nw + tile - 1) / tile;
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const int64_t base = t * tile + threadIdx.x;
    float4 v[U];
#pragma unroll
    for (int j = 0; j < U; ++j) {
      const int64_t i = base + j * static_cast<int64_t>(blockDim.x);
      v[j] = i < nr ? Ld4<LD>(src + i, pol) : make_float4(1.f, 2.f, 3.f, static_cast<float>(j));
    }
#pragma unroll
    for (int j = 0; j < U; ++j) {
      const int64_t i = base + j * static_cast<int64_t>(blockDim.x);
      if (i < nw) St4<ST>(dst + i, v[j], pol);
    }
  }
}
// Read-only / write-only floors of the same bytes (U = 4, nc loads; the sum keeps the loads live).
__global__ void ReadOnly(const float4* __restrict__ src, int64_t n, float* sink) {
  float acc = 0.f;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
    const float4 a = Ld4<1>(src + i, 0), b = Ld4<1>(src + i + stride, 0), c = Ld4<1>(src + i + 2 * stride, 0),
                 d = Ld4<1>(src + i + 3 * stride, 0);
    acc += a.x + b.y + c.z + d.w;
  }
  for (; i < n; i += stride) acc += Ld4<1>(src + i, 0).x;
  if (acc == 1234.5f) *sink = acc;
}
__global__ void WriteOnly(float4* dst, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n; i += stride)
    St4<0>(dst + i, make_float4(1.f, 2.f, 3.f, 4.f), 0);
}

// writePrefix D 8 fp32 split 1 (the L2-cold row's shape), the shipped kernel's code with the copy's hints:
// kLd: input rows and bank 0 through ld.global.nc.L1::no_allocate(.L2::256B: kLd 2); kSt: bank stores .cs.
template <int kLd>
__device__ __forceinline__ float LdIn(const float* p) {
  float v;
  if constexpr (kLd == 0)
    v = __ldg(p);
  else if constexpr (kLd == 1)
    asm volatile("ld.global.nc.L1::no_allocate.f32 %0, [%1];" : "=f"(v) : "l"(p));
  else
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.f32 %0, [%1];" : "=f"(v) : "l"(p));
  return v;
}
template <int kSt>
__device__ __forceinline__ void StOut(float* p, float v) {
  if constexpr (kSt == 0)
    *p = v;
  else
    asm volatile("st.global.cs.f32 [%0], %1;" ::"l"(p), "f"(v) : "memory");
}
template <int kLd, int kSt, bool kIndexFirst>
__global__ void __launch_bounds__(om::kHeadDim) WpHint(const om::WritePrefixParams p) {
  constexpr int D = 8;
  using om::kChunk;
  using om::kHeadDim;
  using om::kKvScoreCols;
  using om::kRowElems;
  const int b = blockIdx.x;
  const int d = blockIdx.y * blockDim.x + threadIdx.x;
  const int32_t S = __ldg(p.seqLens + b);
  const int32_t r = __ldg(p.reqPoolIdx + b);
  const float* in = p.kvScore + static_cast<int64_t>(b) * (D * kKvScoreCols) + d;
  float kv[D], sc[D], ap[D];
  auto loadIn = [&]() {
#pragma unroll
    for (int i = 0; i < D; ++i) {
      kv[i] = LdIn<kLd>(in + i * kKvScoreCols);
      sc[i] = LdIn<kLd>(in + i * kKvScoreCols + kHeadDim);
    }
  };
  if constexpr (!kIndexFirst) loadIn();
  if (S < 0 || r < 0) return;
  if (r >= p.numReqSlots) return;
  float* state = static_cast<float*>(p.state);
  const int start = S & (kChunk - 1);
  const float* row0 = state + static_cast<int64_t>(r) * kRowElems + d;
  float m0 = 0.f, sg0 = 0.f, a0 = 0.f;
  if (!kIndexFirst || start != 0) {
    m0 = LdIn<kLd>(row0);
    sg0 = LdIn<kLd>(row0 + kHeadDim);
    a0 = LdIn<kLd>(row0 + 2 * kHeadDim);
  }
  if constexpr (kIndexFirst) loadIn();
#pragma unroll
  for (int i = 0; i < D; ++i) ap[i] = __ldg(p.ape + ((start + i) & (kChunk - 1)) * kHeadDim + d);
  float m = 0.f, sg = 0.f, n = 0.f;
  if (start != 0) {
    m = m0;
    sg = sg0;
    n = a0 * sg0;
  }
#pragma unroll
  for (int i = 0; i < D; ++i) {
    const float s = sc[i] + ap[i];
    if (((start + i) & (kChunk - 1)) == 0) {
      m = s;
      sg = 1.f;
      n = kv[i];
    } else {
      om::StepFast(m, sg, n, kv[i], s);
    }
    if (((S + i + 1) & (kChunk - 1)) != 0) {
      float* dst = state + (static_cast<int64_t>(r) + static_cast<int64_t>(i + 1) * p.bankStrideRows) * kRowElems + d;
      StOut<kSt>(dst, m);
      StOut<kSt>(dst + kHeadDim, sg);
      StOut<kSt>(dst + 2 * kHeadDim, __fdividef(n, sg));
    }
  }
}

// ---- TMA bulk copies (cp.async.bulk, no tensor map): global -> shared completing on an mbarrier, shared -> global
// in bulk groups. Same bytes as MixCopy: the read bytes copied, the write bytes beyond them stored from a pattern.
__device__ __forceinline__ uint32_t SmemAddr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void MbarInit(uint64_t* bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(SmemAddr(bar)) : "memory");
}
__device__ __forceinline__ void MbarWait(uint64_t* bar, uint32_t parity) {
  asm volatile(
      "{\n .reg .pred p;\n WAIT:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n @p bra DONE;\n bra WAIT;\n"
      " DONE:\n}" ::"r"(SmemAddr(bar)),
      "r"(parity)
      : "memory");
}
// kHint: both directions with an L2 evict_first policy.
template <bool kHint>
__device__ __forceinline__ void BulkLoad(void* smem, const void* gmem, uint32_t bytes, uint64_t* bar, uint64_t pol) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(SmemAddr(bar)), "r"(bytes) : "memory");
  if constexpr (kHint)
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;" ::
            "r"(SmemAddr(smem)),
        "l"(gmem), "r"(bytes), "r"(SmemAddr(bar)), "l"(pol)
        : "memory");
  else
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(SmemAddr(smem)),
        "l"(gmem), "r"(bytes), "r"(SmemAddr(bar))
        : "memory");
}
template <bool kHint>
__device__ __forceinline__ void BulkStore(void* gmem, const void* smem, uint32_t bytes, uint64_t pol) {
  if constexpr (kHint)
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint [%0], [%1], %2, %3;" ::"l"(gmem),
                 "r"(SmemAddr(smem)), "r"(bytes), "l"(pol)
                 : "memory");
  else
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(gmem), "r"(SmemAddr(smem)),
                 "r"(bytes)
                 : "memory");
}
__device__ __forceinline__ void BulkCommit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
// Waits until all but the newest N bulk groups have finished reading shared memory.
template <int N>
__device__ __forceinline__ void BulkWaitRead() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}
__device__ __forceinline__ float4 FillPattern() { return make_float4(1.f, 2.f, 3.f, 4.f); }
// Generic-proxy writes to shared memory that a bulk copy reads next.
__device__ __forceinline__ void FenceProxyAsync() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

// Persistent: block b takes tiles b, b + grid, ...; thread 0 keeps S tiles' loads in flight (stage j % S), stores
// each tile once loaded, and reloads a stage once the store from it has read shared memory. The write bytes past the
// read bytes come from a pattern tile (shared memory after the S stages).
template <int S, bool kHint>
__global__ void __launch_bounds__(32)
    TmaCopy(const char* __restrict__ src, int64_t readB, char* __restrict__ dst, int64_t writeB, int tileB) {
  extern __shared__ __align__(128) char sm[];
  __shared__ __align__(8) uint64_t bar[S];
  char* fill = sm + static_cast<int64_t>(S) * tileB;
  for (int i = threadIdx.x; i < tileB / 16; i += blockDim.x) reinterpret_cast<float4*>(fill)[i] = FillPattern();
  FenceProxyAsync();
  if (threadIdx.x == 0) {
    for (int k = 0; k < S; ++k) MbarInit(&bar[k]);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  const uint64_t pol = kHint ? EvictFirst() : 0;
  const int64_t tiles = (writeB + tileB - 1) / tileB;
  const int64_t mine = tiles > blockIdx.x ? (tiles - 1 - blockIdx.x) / gridDim.x + 1 : 0;
  auto off = [&](int64_t j) { return (blockIdx.x + j * gridDim.x) * static_cast<int64_t>(tileB); };
  auto readBytes = [&](int64_t j) {
    const int64_t o = off(j);
    return static_cast<uint32_t>(o >= readB ? 0 : (readB - o < tileB ? readB - o : tileB));
  };
  auto issue = [&](int64_t j) {
    const uint32_t rb = readBytes(j);
    if (rb) BulkLoad<kHint>(sm + (j % S) * tileB, src + off(j), rb, &bar[j % S], pol);
  };
  for (int64_t j = 0; j < S && j < mine; ++j) issue(j);
  for (int64_t j = 0; j < mine; ++j) {
    const int64_t o = off(j);
    const uint32_t rb = readBytes(j);
    const uint32_t tb = static_cast<uint32_t>(writeB - o < tileB ? writeB - o : tileB);
    // Tiles with read bytes come first in j, so a stage's barrier completes once per earlier use: parity j / S.
    if (rb) {
      MbarWait(&bar[j % S], static_cast<uint32_t>((j / S) & 1));
      BulkStore<kHint>(dst + o, sm + (j % S) * tileB, rb, pol);
    }
    if (tb > rb) BulkStore<kHint>(dst + o + rb, fill, tb - rb, pol);
    BulkCommit();
    if constexpr (S == 1) {
      BulkWaitRead<0>();
      if (j + 1 < mine) issue(j + 1);
    } else {
      BulkWaitRead<1>();  // tile j - 1's store has read its stage
      if (j >= 1 && j - 1 + S < mine) issue(j - 1 + S);
    }
  }
  BulkWaitRead<0>();
}
// One tile per block: thread 0 loads the tile's read bytes while the warp writes the pattern past them (disjoint
// bytes), then one store of the whole tile.
template <bool kHint>
__global__ void __launch_bounds__(32)
    TmaTile(const char* __restrict__ src, int64_t readB, char* __restrict__ dst, int64_t writeB, int tileB) {
  extern __shared__ __align__(128) char sm[];
  __shared__ __align__(8) uint64_t bar;
  const int64_t o = blockIdx.x * static_cast<int64_t>(tileB);
  const uint32_t rb = static_cast<uint32_t>(o >= readB ? 0 : (readB - o < tileB ? readB - o : tileB));
  const uint32_t tb = static_cast<uint32_t>(writeB - o < tileB ? writeB - o : tileB);
  const uint64_t pol = kHint ? EvictFirst() : 0;
  if (threadIdx.x == 0 && rb) {
    MbarInit(&bar);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    BulkLoad<kHint>(sm, src + o, rb, &bar, pol);
  }
  if (tb > rb) {
    for (uint32_t i = rb / 16 + threadIdx.x; i < tb / 16; i += blockDim.x)
      reinterpret_cast<float4*>(sm)[i] = FillPattern();
    FenceProxyAsync();
    __syncthreads();
  }
  if (threadIdx.x != 0) return;
  if (rb) MbarWait(&bar, 0);
  BulkStore<kHint>(dst + o, sm, tb, pol);
  BulkCommit();
  BulkWaitRead<0>();
}

// ---- timing: eager (100 launches back to back) and graph (100 captured, replayed); median per call -------------
constexpr int kCalls = 100, kRot = 64;
struct Res {
  double eager, graph;
};
double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
Res Time(const std::function<void(int, cudaStream_t)>& launch, cudaStream_t s, bool eager, int reps = 15) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int i = 0; i < 20; ++i) launch(i, s);
  CK(cudaGetLastError());
  auto rounds = [&](const std::function<void()>& round) {
    std::vector<double> us;
    for (int r = 0; r < reps; ++r) {
      CK(cudaEventRecord(a, s));
      round();
      CK(cudaEventRecord(b, s));
      CK(cudaEventSynchronize(b));
      float ms = 0.f;
      CK(cudaEventElapsedTime(&ms, a, b));
      us.push_back(ms * 1000.0 / kCalls);
    }
    return Median(us);
  };
  Res r{0, 0};
  if (eager)
    r.eager = rounds([&]() {
      for (int i = 0; i < kCalls; ++i) launch(i, s);
    });
  cudaGraph_t g;
  cudaGraphExec_t x;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < kCalls; ++i) launch(i, s);
  CK(cudaStreamEndCapture(s, &g));
  CK(cudaGraphInstantiate(&x, g, 0));
  for (int w = 0; w < 3; ++w) CK(cudaGraphLaunch(x, s));
  r.graph = rounds([&]() { CK(cudaGraphLaunch(x, s)); });
  CK(cudaGetLastError());
  CK(cudaGraphExecDestroy(x));
  CK(cudaGraphDestroy(g));
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  return r;
}

struct Row {
  std::string name;
  double us, gbs;
};
std::vector<Row> g_rows;
FILE* g_all = nullptr;
void Report(const std::string& name, Res r, double bytes, bool eager) {
  const double gbs = bytes / (r.graph * 1e3);
  g_rows.push_back({name, r.graph, gbs});
  if (eager)
    std::printf("%-62s eager %6.2f  graph %6.2f us  %6.0f GB/s\n", name.c_str(), r.eager, r.graph, gbs);
  else if (g_all)
    std::fprintf(g_all, "%-62s graph %6.2f us  %6.0f GB/s\n", name.c_str(), r.graph, gbs);
}

template <int U, int LD, int ST>
void LaunchMix(int grid, int threads, const float4* src, int64_t nr, float4* dst, int64_t nw, cudaStream_t s) {
  MixCopy<U, LD, ST><<<grid, threads, 0, s>>>(src, nr, dst, nw);
}
using MixLaunch = void (*)(int, int, const float4*, int64_t, float4*, int64_t, cudaStream_t);
template <int U>
MixLaunch PickHint(int ld, int st) {
  constexpr MixLaunch t[5][3] = {
      {LaunchMix<U, 0, 0>, LaunchMix<U, 0, 1>, LaunchMix<U, 0, 2>},
      {LaunchMix<U, 1, 0>, LaunchMix<U, 1, 1>, LaunchMix<U, 1, 2>},
      {LaunchMix<U, 2, 0>, LaunchMix<U, 2, 1>, LaunchMix<U, 2, 2>},
      {LaunchMix<U, 3, 0>, LaunchMix<U, 3, 1>, LaunchMix<U, 3, 2>},
      {LaunchMix<U, 4, 0>, LaunchMix<U, 4, 1>, LaunchMix<U, 4, 2>},
  };
  return t[ld][st];
}
MixLaunch Pick(int u, int ld, int st) {
  switch (u) {
    case 1:
      return PickHint<1>(ld, st);
    case 2:
      return PickHint<2>(ld, st);
    case 4:
      return PickHint<4>(ld, st);
    default:
      return PickHint<8>(ld, st);
  }
}
const char* kLdName[] = {"ld", "ld.nc", "nc.L1::no_alloc", "nc.noalloc.L2::256B", "nc.noalloc.L2evict_first"};
const char* kStName[] = {"st", "st.cs", "st.L2evict_first"};

using TmaLaunch = void (*)(int, int, const char*, int64_t, char*, int64_t, int, cudaStream_t);
template <int S, bool H>
void LaunchTmaCopy(int grid, int smem, const char* src, int64_t rb, char* dst, int64_t wb, int tile, cudaStream_t s) {
  TmaCopy<S, H><<<grid, 32, smem, s>>>(src, rb, dst, wb, tile);
}
template <bool H>
void LaunchTmaTile(int grid, int smem, const char* src, int64_t rb, char* dst, int64_t wb, int tile, cudaStream_t s) {
  TmaTile<H><<<grid, 32, smem, s>>>(src, rb, dst, wb, tile);
}
struct TmaKernel {
  TmaLaunch launch;
  const void* fn;
};
template <bool H>
TmaKernel TileKernel() {
  return {LaunchTmaTile<H>, reinterpret_cast<const void*>(TmaTile<H>)};
}
template <int kStages, bool H>
TmaKernel CopyKernel() {
  return {LaunchTmaCopy<kStages, H>, reinterpret_cast<const void*>(TmaCopy<kStages, H>)};
}
// stages 0: one tile per block; 1..4: the pipelined copy.
TmaKernel PickTma(int stages, bool hint) {
  const TmaKernel kernels[] = {TileKernel<false>(),    TileKernel<true>(),     CopyKernel<1, false>(),
                               CopyKernel<1, true>(),  CopyKernel<2, false>(), CopyKernel<2, true>(),
                               CopyKernel<3, false>(), CopyKernel<3, true>(),  CopyKernel<4, false>(),
                               CopyKernel<4, true>()};
  const int i = stages * 2 + (hint ? 1 : 0);
  return kernels[i >= 0 && i < 9 ? i : 9];
}

struct TmaShape {
  std::string name;
  int stages, tile, grid, smem;
  bool hint;
  double us;
  const char* ok;
};

// What the TMA rows share: the stream, the buffers (rotated as in the sweep), the bytes per call, the opt-in shared
// memory size and the host copies the checks compare.
struct TmaRun {
  cudaStream_t s;
  int sms;
  const std::function<const float4*(int, int)>& src;
  const std::function<float4*(int, int)>& dst;
  int64_t readB, writeB, totalB;
  int optin;
  std::vector<char> hSrc, hDst;

  // One call into a NaN-poisoned destination: the read bytes must equal the source, the rest the pattern.
  const char* Check(const std::function<void(cudaStream_t)>& once, bool pattern) {
    char* d = reinterpret_cast<char*>(dst(0, 1));
    CK(cudaMemsetAsync(d, 0xff, writeB, s));  // NaN poison
    once(s);
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(s));
    CK(cudaMemcpy(hDst.data(), d, writeB, cudaMemcpyDeviceToHost));
    if (std::memcmp(hDst.data(), hSrc.data(), readB) != 0) return "READ BYTES DIFFER";
    const float want[4] = {1.f, 2.f, 3.f, 4.f};
    for (int64_t o = readB; o < writeB; o += 16)
      if (std::memcmp(hDst.data() + o, pattern ? static_cast<const void*>(want) : hDst.data() + o, 16) != 0 ||
          (!pattern && std::memcmp(hDst.data() + o, "\xff\xff\xff\xff", 4) == 0))
        return "WRITE BYTES DIFFER";
    return "correct";
  }
  // The fastest ld/st shape of the sweep (U 4, 128 threads, one tile per block, ld / st), checked and timed.
  void LdstRow(const char* when) {
    const int64_t nr = readB / 16, nw = writeB / 16;
    MixLaunch ldst = Pick(4, 0, 0);
    const int ldstGrid = static_cast<int>((nw + 511) / 512);
    std::printf("check mix U4 128thr tile(%d) ld st: %s\n", ldstGrid,
                Check([&](cudaStream_t q) { ldst(ldstGrid, 128, src(0, 1), nr, dst(0, 1), nw, q); }, false));
    Res r = Time([&](int i, cudaStream_t q) { ldst(ldstGrid, 128, src(i % kRot, 1), nr, dst(i % kRot, 1), nw, q); }, s,
                 true);
    Report(std::string("mix U4 128thr tile(") + std::to_string(ldstGrid) + ") ld st, " + when, r, totalB, true);
  }
  void Launch(const TmaShape& sh, int scale, int k, cudaStream_t q) const {
    const int64_t wb = writeB * scale;
    const int grid = sh.stages == 0 ? static_cast<int>((wb + sh.tile - 1) / sh.tile) : sh.grid;
    PickTma(sh.stages, sh.hint)
        .launch(grid, sh.smem, reinterpret_cast<const char*>(src(k, scale)), readB * scale,
                reinterpret_cast<char*>(dst(k, scale)), wb, sh.tile, q);
  }
};

// Every TMA shape: one tile per block, then the pipelined copy where its grid of k/SM is resident at once.
std::vector<TmaShape> TmaShapes(const TmaRun& run) {
  std::vector<TmaShape> shapes;
  for (int tileK : {2, 4, 8, 16, 32})
    for (bool h : {false, true}) {
      const int tile = tileK * 1024;
      shapes.push_back({"", 0, tile, static_cast<int>((run.writeB + tile - 1) / tile), tile, h, 0, ""});
    }
  for (int tileK : {4, 8, 16, 32})
    for (int st = 1; st <= 4; ++st)
      for (int k : {1, 2, 4, 8})
        for (bool h : {false, true}) {
          const int tile = tileK * 1024, smem = (st + 1) * tile;
          if (smem > run.optin - 1024) continue;
          int resident = 0;
          CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, PickTma(st, h).fn, 32, smem));
          if (resident < k) continue;  // a grid of k/SM would not be resident at once
          shapes.push_back({"", st, tile, k * run.sms, smem, h, 0, ""});
        }
  return shapes;
}

// Names, checks and times (graph, first pass) every shape, one row each.
void TimeTmaShapes(TmaRun& run, std::vector<TmaShape>& shapes) {
  for (TmaShape& sh : shapes) {
    char nm[160];
    if (sh.stages == 0)
      std::snprintf(nm, sizeof nm, "tma %2d KiB/op, tile per block (%d)%s", sh.tile / 1024, sh.grid,
                    sh.hint ? ", evict_first" : "");
    else
      std::snprintf(nm, sizeof nm, "tma %2d KiB/op, %d stages, %d/SM%s", sh.tile / 1024, sh.stages, sh.grid / run.sms,
                    sh.hint ? ", evict_first" : "");
    sh.name = nm;
    sh.ok = run.Check([&](cudaStream_t q) { run.Launch(sh, 1, 0, q); }, true);
    sh.us = Time([&](int i, cudaStream_t q) { run.Launch(sh, 1, i % kRot, q); }, run.s, false, 9).graph;
    std::printf("%-62s graph %6.2f us  %6.0f GB/s  %s\n", sh.name.c_str(), sh.us, run.totalB / (sh.us * 1e3), sh.ok);
  }
}

// The fastest 15 shapes, then the best per bytes per op, per stage count and per hint.
void PrintTmaBest(const std::vector<TmaShape>& sorted, int64_t totalB) {
  std::printf("fastest 15 of %zu TMA shapes (graph, first pass):\n", sorted.size());
  for (int i = 0; i < 15 && i < static_cast<int>(sorted.size()); ++i)
    std::printf("  %-62s %6.2f us  %6.0f GB/s  %s\n", sorted[i].name.c_str(), sorted[i].us,
                totalB / (sorted[i].us * 1e3), sorted[i].ok);
  auto bestWhere = [&](const std::string& label, const std::function<bool(const TmaShape&)>& pred) {
    for (const TmaShape& b : sorted)
      if (pred(b)) {
        std::printf("  best %-18s %-62s %6.2f us\n", label.c_str(), b.name.c_str(), b.us);
        return;
      }
  };
  for (int tileK : {2, 4, 8, 16, 32})
    bestWhere(std::to_string(tileK) + " KiB/op", [=](const TmaShape& b) { return b.tile == tileK * 1024; });
  for (int st = 0; st <= 4; ++st)
    bestWhere(st == 0 ? std::string("tile per block") : std::to_string(st) + " stages",
              [=](const TmaShape& b) { return b.stages == st; });
  bestWhere("no hint", [](const TmaShape& b) { return !b.hint; });
  bestWhere("evict_first", [](const TmaShape& b) { return b.hint; });
}

// The 5 fastest shapes re-timed twice (eager, graph), the fastest at 2x / 4x / 8x the bytes.
void RetimeTma(const TmaRun& run, const std::vector<TmaShape>& sorted) {
  std::printf("TMA re-timed (eager, graph), the 5 fastest twice, the fastest scaled:\n");
  for (int i = 0; i < 5 && i < static_cast<int>(sorted.size()); ++i)
    for (int rep = 0; rep < 2; ++rep) {
      const TmaShape& sh = sorted[i];
      Report(sh.name, Time([&](int k, cudaStream_t q) { run.Launch(sh, 1, k % kRot, q); }, run.s, true), run.totalB,
             true);
    }
  if (!sorted.empty())
    for (int scale : {2, 4, 8}) {
      const TmaShape& sh = sorted[0];
      Report(sh.name + " x" + std::to_string(scale),
             Time([&](int k, cudaStream_t q) { run.Launch(sh, scale, k % kRot, q); }, run.s, true),
             double(run.totalB) * scale, true);
    }
}

// TMA bulk-copy rows (the same read and write bytes, rotation and timing as the sweep), each checked after one call
// (destination poisoned first: the read bytes equal the source, the rest the pattern), beside the fastest ld/st
// shape of the sweep (U 4, 128 threads, one tile per block, ld / st), timed at the start and at the end.
void TmaRows(cudaStream_t s, int sms, const std::function<const float4*(int, int)>& src,
             const std::function<float4*(int, int)>& dst, int64_t readB, int64_t writeB, int64_t totalB,
             const std::function<void(int, cudaStream_t)>& writePrefix) {
  int dev = 0, optin = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  for (int st = 0; st <= 4; ++st)
    for (bool h : {false, true})
      CK(cudaFuncSetAttribute(PickTma(st, h).fn, cudaFuncAttributeMaxDynamicSharedMemorySize, optin - 1024));
  TmaRun run{s, sms, src, dst, readB, writeB, totalB, optin, std::vector<char>(readB), std::vector<char>(writeB)};
  CK(cudaMemcpy(run.hSrc.data(), src(0, 1), readB, cudaMemcpyDeviceToHost));
  run.LdstRow("before the TMA rows");
  Report("writePrefix shipped, split 1 (before the TMA rows)", Time(writePrefix, s, true), totalB, true);
  std::vector<TmaShape> shapes = TmaShapes(run);
  std::printf("TMA bulk copies: read %lld B, write %lld B per call; %zu shapes\n", (long long)readB, (long long)writeB,
              shapes.size());
  TimeTmaShapes(run, shapes);
  std::vector<TmaShape> sorted = shapes;
  std::sort(sorted.begin(), sorted.end(), [](const TmaShape& a, const TmaShape& b) { return a.us < b.us; });
  PrintTmaBest(sorted, totalB);
  RetimeTma(run, sorted);
  run.LdstRow("after the TMA rows");
}

// writePrefix batch 256 D 8 fp32 as the addon's bench sets it up (binding.cpp Bench): N = 257, O = 259.
constexpr int kBatch = 256, kVerify = 8;
constexpr int32_t kSlots = kBatch + 1, kBankRows = kSlots + 2;

// What Main's measured groups share: the stream, the SM count, writePrefix's bytes and inputs (kRot state and
// input sets) and the copy pool (kRot sets of up to 8x the bytes).
struct Floor {
  cudaStream_t s;
  int sms = 0;
  int64_t rows = 0, readB = 0, writeB = 0, totalB = 0;
  int32_t *seq, *rpi;
  float* ape;
  std::vector<float*> kv, st;
  int64_t nr = 0, nw = 0, setBytes = 0, half = 0;
  char* pool;
  float* sink;

  const float4* src(int k, int) const { return reinterpret_cast<const float4*>(pool + k * setBytes); }
  float4* dst(int k, int scale) const {  // after the scaled read block
    return reinterpret_cast<float4*>(pool + k * setBytes + scale * readB);
  }
  char* hsrc(int k) const { return pool + k * setBytes; }
  char* hdst(int k, int scale) const { return pool + k * setBytes + scale * half; }
  om::WritePrefixParams WpParams(int k, int split) const {
    om::WritePrefixParams p{};
    p.kvScore = kv[k], p.seqLens = seq, p.reqPoolIdx = rpi, p.ape = ape, p.state = st[k];
    p.batch = kBatch, p.numVerify = kVerify, p.bankStrideRows = kBankRows, p.numReqSlots = kSlots,
    p.stateType = om::kF32;
    p.variant = om::kWpScalar, p.split = split;
    return p;
  }
};

// The stream, the device line, L2 persistence off and the sweep file.
void SetupDevice(Floor& f) {
  CK(cudaStreamCreateWithFlags(&f.s, cudaStreamNonBlocking));
  int dev = 0, l2 = 0, persistMax = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&f.sms, cudaDevAttrMultiProcessorCount, dev));
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  CK(cudaDeviceGetAttribute(&persistMax, cudaDevAttrMaxPersistingL2CacheSize, dev));
  size_t persist = 1;
  CK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0));  // L2 persistence off (its default)
  CK(cudaDeviceGetLimit(&persist, cudaLimitPersistingL2CacheSize));
  CK(cudaCtxResetPersistingL2Cache());
  std::printf("SMs %d, L2 %d B, persisting-L2 limit %zu B (max %d)\n", f.sms, l2, persist, persistMax);
  g_all = std::fopen(
      std::getenv("OUT") ? (std::string(std::getenv("OUT")) + "/copy-sweep.txt").c_str() : "copy-sweep.txt", "w");
}

// writePrefix's bytes per call and its inputs.
void SetupWritePrefix(Floor& f) {
  constexpr int B = kBatch, D = kVerify;
  f.rows = int64_t(kBankRows) * (D + 1);
  const int offsets[7] = {0, 1, 2, 63, 120, 126, 127};
  std::vector<int32_t> hSeq(B), hRpi(B);
  for (int b = 0; b < B; ++b) {
    hSeq[b] = 1024 + offsets[b % 7];
    hRpi[b] = b + 1;
    f.readB += D * om::kKvScoreCols * 4 + ((hSeq[b] & 127) != 0 ? om::kRowElems * 4 : 0);
    for (int i = 0; i < D; ++i) f.writeB += ((hSeq[b] + i + 1) & 127) != 0 ? om::kRowElems * 4 : 0;
  }
  f.totalB = f.readB + f.writeB;
  std::printf(
      "writePrefix b256 D8 fp32 bytes: read %lld, write %lld, total %lld (ape 256 KiB, L2-resident, not counted)\n",
      (long long)f.readB, (long long)f.writeB, (long long)f.totalB);
  CK(cudaMalloc(&f.seq, B * 4));
  CK(cudaMalloc(&f.rpi, B * 4));
  CK(cudaMalloc(&f.ape, om::kChunk * om::kHeadDim * 4));
  CK(cudaMemcpy(f.seq, hSeq.data(), B * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(f.rpi, hRpi.data(), B * 4, cudaMemcpyHostToDevice));
  CK(bench::LaunchFillRandom(f.ape, om::kChunk * om::kHeadDim, 7, 2.f, 0.f, f.s));
  f.kv.resize(kRot);
  f.st.resize(kRot);
  const int64_t kvElems = int64_t(B) * D * om::kKvScoreCols;
  for (int i = 0; i < kRot; ++i) {
    CK(cudaMalloc(&f.kv[i], kvElems * 4));
    CK(cudaMalloc(&f.st[i], f.rows * om::kRowElems * 4));
    CK(bench::LaunchFillRandom(f.kv[i], kvElems, 11 + i, 4.f, 0.f, f.s));
    CK(bench::LaunchFillStateRandom(f.st[i], f.rows, om::kF32, 13 + i, f.s));
  }
}

// Copy buffers: one pool, 64 sets of up to 8x the bytes (scale sweep), source filled with random floats.
void SetupPool(Floor& f) {
  f.nr = f.readB / 16, f.nw = f.writeB / 16;
  f.setBytes = 8 * f.totalB;
  CK(cudaMalloc(&f.pool, f.setBytes * kRot));
  CK(bench::LaunchFillRandom(reinterpret_cast<float*>(f.pool), f.setBytes * kRot / 4, 17, 2.f, 0.f, f.s));
  f.half = (f.totalB / 2) / 16 * 16;  // the same bytes as a plain copy: half read, half written
  CK(cudaMalloc(&f.sink, 4));
  CK(cudaStreamSynchronize(f.s));
}

// Floors that need no tuning (after the empty kernel): 1 GiB copies, then the same bytes as plain copies.
void TimePlainFloors(const Floor& f) {
  const cudaStream_t s = f.s;
  const int sms = f.sms;
  {
    const int64_t big = int64_t(1) << 30;
    char *a, *b;
    CK(cudaMalloc(&a, big));
    CK(cudaMalloc(&b, big));
    CK(cudaMemset(a, 1, big));
    Res r = Time([&](int, cudaStream_t q) { cudaMemcpyAsync(b, a, big, cudaMemcpyDeviceToDevice, q); }, s, false, 5);
    Report("1 GiB cudaMemcpyAsync D2D (read+write)", r, 2.0 * big, true);
    r = Time([&](int, cudaStream_t q) { bench::LaunchCopy4(a, b, big, 4 * sms, q); }, s, false, 5);
    Report("1 GiB Copy4Kernel 4x512/SM (read+write)", r, 2.0 * big, true);
    CK(cudaFree(a));
    CK(cudaFree(b));
  }
  Report("same bytes, cudaMemcpyAsync half/half (rotating)",
         Time(
             [&](int i, cudaStream_t q) {
               cudaMemcpyAsync(f.hdst(i % kRot, 1), f.hsrc(i % kRot), f.half, cudaMemcpyDeviceToDevice, q);
             },
             s, true),
         2.0 * f.half, true);
  Report("same bytes, Copy4Kernel 4x512/SM half/half (rotating)",
         Time([&](int i,
                  cudaStream_t q) { bench::LaunchCopy4(f.hsrc(i % kRot), f.hdst(i % kRot, 1), f.half, 4 * sms, q); },
              s, true),
         2.0 * f.half, true);
  Report(
      "same bytes, read only (nc, 4x512/SM)",
      Time([&](int i, cudaStream_t q) { ReadOnly<<<4 * sms, 512, 0, q>>>(f.src(i % kRot, 1), f.totalB / 16, f.sink); },
           s, true),
      f.totalB, true);
  Report("same bytes, write only (4x512/SM)",
         Time([&](int i, cudaStream_t q) { WriteOnly<<<4 * sms, 512, 0, q>>>(f.dst(i % kRot, 1), f.totalB / 16); }, s,
              true),
         f.totalB, true);
}

using WpFn = void (*)(const om::WritePrefixParams);
struct WpV {
  const char* name;
  WpFn fn;
};
// writePrefix with the copy's hints.
const WpV kWpHints[] = {
    {"writePrefix harness copy (ldg, st, bank0 first)", WpHint<0, 0, true>},
    {"writePrefix ld.nc.noalloc, st", WpHint<1, 0, true>},
    {"writePrefix ld.nc.noalloc.L2::256B, st", WpHint<2, 0, true>},
    {"writePrefix ldg, st.cs", WpHint<0, 1, true>},
    {"writePrefix ld.nc.noalloc, st.cs", WpHint<1, 1, true>},
    {"writePrefix ld.nc.noalloc.L2::256B, st.cs", WpHint<2, 1, true>},
    {"writePrefix ld.nc.noalloc.L2::256B, st, inputs first", WpHint<2, 0, false>},
};

// Same results: each hint variant's state after one call, bitwise against the shipped kernel's.
void CheckWpHints(const Floor& f) {
  const cudaStream_t s = f.s;
  const size_t sb = f.rows * om::kRowElems * 4;
  float *ref, *tst;
  CK(cudaMalloc(&ref, sb));
  CK(cudaMalloc(&tst, sb));
  std::vector<char> h0(sb), h1(sb);
  CK(bench::LaunchFillStateRandom(ref, f.rows, om::kF32, 99, s));
  om::WritePrefixParams p = f.WpParams(0, 1);
  p.state = ref;
  CK(om::LaunchWritePrefix(p, s));
  CK(cudaMemcpyAsync(h0.data(), ref, sb, cudaMemcpyDeviceToHost, s));
  CK(cudaStreamSynchronize(s));
  for (const WpV& v : kWpHints) {
    CK(bench::LaunchFillStateRandom(tst, f.rows, om::kF32, 99, s));
    p.state = tst;
    v.fn<<<dim3(kBatch, 1), 512, 0, s>>>(p);
    CK(cudaGetLastError());
    CK(cudaMemcpyAsync(h1.data(), tst, sb, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    std::printf("check %-55s %s\n", v.name, std::memcmp(h0.data(), h1.data(), sb) == 0 ? "bitwise equal" : "DIFFERS");
  }
  CK(cudaFree(ref));
  CK(cudaFree(tst));
}

// writePrefix itself (shipped kernel, splits 1/2/4) and with the copy's hints, L2-cold.
void TimeWritePrefix(const Floor& f) {
  for (int split : {1, 2, 4}) {
    Res r = Time([&](int i, cudaStream_t q) { om::LaunchWritePrefix(f.WpParams(i % kRot, split), q); }, f.s, true);
    Report("writePrefix shipped, split " + std::to_string(split), r, f.totalB, true);
  }
  CheckWpHints(f);
  for (const WpV& v : kWpHints) {
    Res r =
        Time([&](int i, cudaStream_t q) { v.fn<<<dim3(kBatch, 1), 512, 0, q>>>(f.WpParams(i % kRot, 1)); }, f.s, true);
    Report(v.name, r, f.totalB, true);
  }
}

struct SweepShape {
  std::string name;
  double us;
  int u, th, grid, ld, stv;
};
bool Persistent(const SweepShape& b, int sms) { return b.grid % sms == 0 && b.grid <= 16 * sms; }

// Copy sweep, writePrefix's read:write split: U float4 loads in flight per thread, threads, grid (k/SM
// persistent, or one tile per block), load / store hints. Every row to copy-sweep.txt; sorted fastest first.
std::vector<SweepShape> CopySweep(const Floor& f) {
  std::printf("copy sweep: read %lld B, write %lld B per call\n", (long long)f.readB, (long long)f.writeB);
  std::vector<SweepShape> all;
  for (int u : {1, 2, 4, 8})
    for (int th : {128, 256, 512})
      for (int k : {0, 1, 2, 4, 8, 16}) {
        if (k * th > 2048) continue;
        const int64_t tile = int64_t(th) * u;
        const int grid = k == 0 ? static_cast<int>((f.nw + tile - 1) / tile) : k * f.sms;
        for (int ld = 0; ld < 5; ++ld)
          for (int stv = 0; stv < 3; ++stv) {
            if (ld == 4 && stv != 2 && stv != 0) continue;
            MixLaunch fn = Pick(u, ld, stv);
            Res r = Time(
                [&](int i, cudaStream_t q) { fn(grid, th, f.src(i % kRot, 1), f.nr, f.dst(i % kRot, 1), f.nw, q); },
                f.s, false, 9);
            char nm[160];
            std::snprintf(nm, sizeof nm, "mix U%d %dthr %s %s %s", u, th,
                          k == 0 ? ("tile(" + std::to_string(grid) + ")").c_str() : (std::to_string(k) + "/SM").c_str(),
                          kLdName[ld], kStName[stv]);
            Report(nm, r, f.totalB, false);
            all.push_back({nm, r.graph, u, th, grid, ld, stv});
          }
      }
  std::sort(all.begin(), all.end(), [](const SweepShape& a, const SweepShape& b) { return a.us < b.us; });
  return all;
}

// The fastest 12 of the sweep, then the best per loads-in-flight, per grid kind, per hint pair.
void PrintSweepBest(const Floor& f, const std::vector<SweepShape>& all) {
  const int sms = f.sms;
  std::printf("fastest 12 of %zu copy shapes (graph, first sweep):\n", all.size());
  for (int i = 0; i < 12 && i < static_cast<int>(all.size()); ++i)
    std::printf("  %-62s %6.2f us  %6.0f GB/s\n", all[i].name.c_str(), all[i].us, f.totalB / (all[i].us * 1e3));
  auto bestWhere = [&](const char* label, const std::function<bool(const SweepShape&)>& pred) {
    for (const SweepShape& b : all)
      if (pred(b)) {
        std::printf("  best %-22s %-62s %6.2f us\n", label, b.name.c_str(), b.us);
        return;
      }
  };
  for (int u : {1, 2, 4, 8})
    bestWhere(("U" + std::to_string(u)).c_str(), [u](const SweepShape& b) { return b.u == u; });
  bestWhere("persistent", [&](const SweepShape& b) { return Persistent(b, sms); });
  bestWhere("tile per block", [&](const SweepShape& b) { return !Persistent(b, sms); });
  for (int ld = 0; ld < 5; ++ld)
    for (int stv = 0; stv < 3; ++stv)
      bestWhere((std::string(kLdName[ld]).substr(0, 10) + "/" + kStName[stv]).c_str(),
                [=](const SweepShape& b) { return b.ld == ld && b.stv == stv; });
}

// The 5 fastest again, eager and graph, twice (spread), and at 2x / 4x / 8x the bytes (fixed cost vs slope); then
// Copy4Kernel half/half at the same scales.
void RetimeSweep(const Floor& f, const std::vector<SweepShape>& all) {
  std::printf("re-timed (eager, graph) and scaled:\n");
  for (int i = 0; i < 5 && i < static_cast<int>(all.size()); ++i) {
    const SweepShape& b = all[i];
    MixLaunch fn = Pick(b.u, b.ld, b.stv);
    const int64_t tile = int64_t(b.th) * b.u;
    for (int scale : {1, 1, 2, 4, 8}) {
      const bool tileGrid = !Persistent(b, f.sms);
      const int grid = tileGrid ? static_cast<int>((f.nw * scale + tile - 1) / tile) : b.grid;
      Res r = Time(
          [&](int k, cudaStream_t q) {
            fn(grid, b.th, f.src(k % kRot, scale), f.nr * scale, f.dst(k % kRot, scale), f.nw * scale, q);
          },
          f.s, true);
      Report(b.name + " x" + std::to_string(scale), r, double(f.totalB) * scale, true);
    }
  }
  for (int scale : {2, 4, 8}) {
    Res r = Time(
        [&](int i, cudaStream_t q) {
          bench::LaunchCopy4(f.hsrc(i % kRot), f.hdst(i % kRot, scale), f.half * scale, 4 * f.sms, q);
        },
        f.s, true);
    Report("Copy4Kernel half/half x" + std::to_string(scale), r, 2.0 * f.half * scale, true);
  }
}

void Teardown(Floor& f) {
  CK(cudaDeviceSynchronize());
  if (g_all) std::fclose(g_all);
  for (int i = 0; i < kRot; ++i) {
    CK(cudaFree(f.kv[i]));
    CK(cudaFree(f.st[i]));
  }
  for (void* p : {static_cast<void*>(f.pool), static_cast<void*>(f.sink), static_cast<void*>(f.seq),
                  static_cast<void*>(f.rpi), static_cast<void*>(f.ape)})
    CK(cudaFree(p));
  CK(cudaStreamDestroy(f.s));
}

int Main(bool tmaOnly) {
  Floor f;
  SetupDevice(f);
  SetupWritePrefix(f);
  SetupPool(f);
  Report("empty kernel <<<1,32>>>", Time([&](int, cudaStream_t q) { bench::LaunchEmpty(q); }, f.s, true), 0, true);
  if (!tmaOnly) {
    TimePlainFloors(f);
    TimeWritePrefix(f);
    const std::vector<SweepShape> all = CopySweep(f);
    PrintSweepBest(f, all);
    RetimeSweep(f, all);
  }
  TmaRows(
      f.s, f.sms, [&](int k, int scale) { return f.src(k, scale); }, [&](int k, int scale) { return f.dst(k, scale); },
      f.readB, f.writeB, f.totalB, [&](int i, cudaStream_t q) { om::LaunchWritePrefix(f.WpParams(i % kRot, 1), q); });
  // writePrefix shipped again at the end (drift).
  Report("writePrefix shipped, split 1 (again)",
         Time([&](int i, cudaStream_t q) { om::LaunchWritePrefix(f.WpParams(i % kRot, 1), q); }, f.s, true), f.totalB,
         true);
  Teardown(f);
  return 0;
}

}  // namespace copyfloor
}  // namespace dsv4kv

// `copy-floor tma` (or COPY_FLOOR=tma): only the empty-kernel floor, writePrefix, the fastest ld/st shape and the
// TMA rows.
int main(int argc, char** argv) {
  const char* env = std::getenv("COPY_FLOOR");
  const bool tmaOnly = (argc > 1 && std::strcmp(argv[1], "tma") == 0) || (env && std::strcmp(env, "tma") == 0);
  return dsv4kv::copyfloor::Main(tmaOnly);
}
