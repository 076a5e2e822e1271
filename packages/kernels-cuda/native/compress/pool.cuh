// The pooling of one compression's window for a channel slice, shared by prefill and decode:
//   * PoolC4Warp: a c4 window (8 elements) for 128 channels, one warp, each lane a channel quad with all 8 elements
//     in registers (no shared memory, no barrier);
//   * PoolC128Block: a c128 window (128 elements) for kC128SliceCh = 32 channels, one block of kC128Threads: lane
//     quad q = t % 8 holds 4 channels, group g = t / 8 holds elements g + 32 m (m < 4); the exact window max and
//     then the sums are combined by shuffles inside a warp and shared memory across warps.
// Both use the exact max of the window (no rescaled partials), so entry[d] = Σ exp(s_e − m)·kv_e / Σ exp(s_e − m)
// differs from the fp32 reference only in the order of summation. `load(e, kv, s)` yields element e's quads, `ape`
// the positional bias quad of an element, added here.
#pragma once

#include "compress/compress_device.cuh"

namespace dsv4kv {
namespace compress {
namespace {

constexpr int kC4SliceCh = 128;                           // 32 lanes x 4 channels
constexpr int kC128SliceCh = 32;                          // 8 quads: one 128-byte fp32 segment of each element row
constexpr int kC128Threads = 256;                         // 32 element groups x 8 quads
constexpr int kC128PerThread = 128 / (kC128Threads / 8);  // 4 elements

// The positional bias of a c4 work slot's channel slice, staged in shared memory by the slot's first pooled item (c4
// decode, and c4 prefill when a slot takes several items; the other kernels load ape with the elements,
// docs/benchmarks.md): a slot keeps one channel slice for all its items (the host makes the slot count a multiple of
// the slices per row). The stage is a cp.async issued before the item's loads and waited for after them (in
// LoadC4Window), so it adds no round trip; each lane stages and reads back only its own quads, [warp][e][lane] (16 KB
// per 4-warp block), so no barrier is needed. A slot with no valid item stages nothing.
template <int HD>
__device__ __forceinline__ void StageC4Ape(float4 (*apeW)[32], const float* apeD, int lane) {
#pragma unroll
  for (int e = 0; e < 8; ++e) CpAsync16(&apeW[e][lane], apeD + e * HD);
}

// Elements [e0, 8) (e0 = 4 when the c4 overlap is masked); ape(e) = this lane's ape quad of element e (staged in
// shared memory, or loaded here with the elements). Split in a load phase and a math phase so that a caller can issue
// other work (decode's row store) between them.
template <typename ApeFn, typename LoadFn>
__device__ __forceinline__ void LoadC4Window(int e0, ApeFn ape, LoadFn load, float4 (&kv)[8], float4 (&s)[8]) {
#pragma unroll
  for (int e = 0; e < 8; ++e)
    if (e >= e0) load(e, kv[e], s[e]);
  CpAsyncWaitAll();  // the stage (first item only; a no-op after)
#pragma unroll
  for (int e = 0; e < 8; ++e)
    if (e >= e0) s[e] = Add4(s[e], ape(e));
}
__device__ __forceinline__ float4 PoolC4Window(int e0, const float4 (&kv)[8], const float4 (&s)[8]) {
  float4 m = kNegInf4;
#pragma unroll
  for (int e = 0; e < 8; ++e)
    if (e >= e0) m = Max4(m, s[e]);
  float4 sum = kZero4, acc = kZero4;
#pragma unroll
  for (int e = 0; e < 8; ++e)
    if (e >= e0) Accumulate4(sum, acc, s[e], kv[e], m);
  return Div4(acc, sum);
}
template <typename ApeFn, typename LoadFn>
__device__ __forceinline__ float4 PoolC4Warp(int e0, ApeFn ape, LoadFn load) {
  float4 kv[8], s[8];
  LoadC4Window(e0, ape, load, kv, s);
  return PoolC4Window(e0, kv, s);
}

// Cross-warp partials of PoolC128Block, [warp][quad]. Reuse across calls is safe: a call's last reads of `m` come
// before its second barrier, its last reads of `sum` / `acc` (threads 0..7) before the next call's first barrier.
struct C128Scratch {
  float4 m[kC128Threads / 32][8];
  float4 sum[kC128Threads / 32][8];
  float4 acc[kC128Threads / 32][8];
};

// ape(i) = this thread's ape quad of element g + 32 i, loaded with the elements.
template <typename ApeFn, typename LoadFn>
__device__ __forceinline__ void LoadC128Elements(ApeFn ape, LoadFn load, float4 (&kv)[kC128PerThread],
                                                 float4 (&s)[kC128PerThread]) {
  const int t = threadIdx.x, g = t >> 3;
#pragma unroll
  for (int i = 0; i < kC128PerThread; ++i) load(g + i * (kC128Threads / 8), kv[i], s[i]);
#pragma unroll
  for (int i = 0; i < kC128PerThread; ++i) s[i] = Add4(s[i], ape(i));
}
// The ape source of the c128 kernels (prefill and decode): this thread's quad of element g + 32 i, loaded from global
// memory with the elements (a shared-memory stage was slower on both, docs/benchmarks.md). d = slice + 4 q.
template <int HD>
__device__ __forceinline__ auto C128ApeWithElements(const float* ape, int d) {
  const float* apeD = ape + (threadIdx.x >> 3) * HD + d;
  return [apeD](int i) { return LoadIn4(apeD + i * (kC128Threads / 8) * HD); };
}

// Every thread of the block must call it (two barriers). outD = out row + this thread's channel offset (slice + 4 q);
// threads 0..7 (g = 0) store the entry quad.
__device__ __forceinline__ void ReduceC128Block(C128Scratch& sh, const float4 (&kv)[kC128PerThread],
                                                const float4 (&s)[kC128PerThread], float* outD) {
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5, q = t & 7;
  float4 m = s[0];
#pragma unroll
  for (int i = 1; i < kC128PerThread; ++i) m = Max4(m, s[i]);
  m = Max4(m, Shfl4Xor(m, 8));  // lanes q, q+8, q+16, q+24 hold the same quad
  m = Max4(m, Shfl4Xor(m, 16));
  if (lane < 8) sh.m[warp][q] = m;
  __syncthreads();
  m = sh.m[0][q];
#pragma unroll
  for (int w = 1; w < kC128Threads / 32; ++w) m = Max4(m, sh.m[w][q]);
  float4 sum = kZero4, acc = kZero4;
#pragma unroll
  for (int i = 0; i < kC128PerThread; ++i) Accumulate4(sum, acc, s[i], kv[i], m);
  sum = Add4(sum, Shfl4Xor(sum, 8));
  acc = Add4(acc, Shfl4Xor(acc, 8));
  sum = Add4(sum, Shfl4Xor(sum, 16));
  acc = Add4(acc, Shfl4Xor(acc, 16));
  if (lane < 8) {
    sh.sum[warp][q] = sum;
    sh.acc[warp][q] = acc;
  }
  __syncthreads();
  if (t < 8) {
    sum = sh.sum[0][q];
    acc = sh.acc[0][q];
#pragma unroll
    for (int w = 1; w < kC128Threads / 32; ++w) {
      sum = Add4(sum, sh.sum[w][q]);
      acc = Add4(acc, sh.acc[w][q]);
    }
    StoreOut4(outD, Div4(acc, sum));
  }
}
template <typename ApeFn, typename LoadFn>
__device__ __forceinline__ void PoolC128Block(C128Scratch& sh, ApeFn ape, float* outD, LoadFn load) {
  float4 kv[kC128PerThread], s[kC128PerThread];
  LoadC128Elements(ape, load, kv, s);
  ReduceC128Block(sh, kv, s, outD);
}

}  // namespace
}  // namespace compress
}  // namespace dsv4kv
