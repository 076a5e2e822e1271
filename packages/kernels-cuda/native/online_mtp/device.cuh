// Device helpers shared by the default kernels (online_mtp_kernels.cu) and the benchmark-only variants
// (bench_variants.cu): state element I/O, the single-token update in both arithmetic forms, the error word and the
// request skip, 16-byte vector I/O, and commitPending's marker logic and register-staged row copy. Device code only.
#pragma once
#include <cuda_bf16.h>

#include "online_mtp/online_mtp_kernels.cuh"
#include "pdl.cuh"

namespace dsv4kv {
namespace online_mtp {
namespace {

// An int32 read before PdlWait (pdl.cuh), only to aim prefetches: .cg keeps it out of L1, so the read after the wait
// cannot hit a stale L1 copy.
__device__ __forceinline__ int32_t LoadI32Early(const int32_t* a) {
#ifdef __CUDA_ARCH__
  int32_t v;
  asm volatile("ld.global.cg.s32 %0, [%1];" : "=r"(v) : "l"(a));
  return v;
#else
  return *a;
#endif
}

inline bool ValidSplit(int32_t split) { return split == 1 || split == 2 || split == 4 || split == 8 || split == 16; }

template <typename T>
struct StateIO;
template <>
struct StateIO<float> {
  static __device__ __forceinline__ float load(const float* p) { return *p; }
  static __device__ __forceinline__ void store(float* p, float v) { *p = v; }
};
template <>
struct StateIO<__nv_bfloat16> {
  static __device__ __forceinline__ float load(const __nv_bfloat16* p) { return __bfloat162float(*p); }
  static __device__ __forceinline__ void store(__nv_bfloat16* p, float v) { *p = __float2bfloat16_rn(v); }
};

// docs/reference/online-mtp.md §5.1 single-token update in fp32 registers. pos == 0 re-initializes.
__device__ __forceinline__ void Update(float& m, float& sg, float& a, float k, float s, int pos) {
  if (pos == 0) {
    m = s;
    sg = 1.f;
    a = k;
    return;
  }
  const float m2 = fmaxf(m, s);
  const float alpha = sg * expf(m - m2);
  const float beta = expf(s - m2);
  const float sg2 = alpha + beta;
  a = (a * alpha + k * beta) / sg2;
  m = m2;
  sg = sg2;
}

// Reports a bad device-resident value once per launch (first error wins); a null `err` means "skip silently".
__device__ __forceinline__ void Report(int32_t* err, int32_t code, int32_t index, int32_t value, int32_t kernel) {
  if (err != nullptr && atomicCAS(err, 0, code) == 0) {
    err[1] = index;
    err[2] = value;
    err[3] = kernel;
  }
}

// Whether request b is skipped (block-uniform): a padding row (`padding`, or r < 0) is a no-op; a pool index past the
// slot table is reported by thread 0 of the request's first block (kSplit: the request spans blockIdx.y) and skipped.
template <bool kSplit, typename P>
__device__ __forceinline__ bool SkipRequest(const P& p, bool padding, int b, int32_t r, int32_t kernel) {
  if (padding || r < 0) return true;
  if (r < p.numReqSlots) return false;
  if ((!kSplit || blockIdx.y == 0) && threadIdx.x == 0) Report(p.err, kErrReqIndex, b, r, kernel);
  return true;
}

// 4 consecutive channels as one access: 16 bytes for fp32, 8 bytes for bf16. Callers pass a channel index that is a
// multiple of 4 inside a row whose byte size (6144 / 3072 / 4096 / 2048) is a multiple of 16, on a cudaMalloc base
// (256-byte aligned, host-checked), so every access is naturally aligned.
template <typename T>
struct Vec4IO;
template <>
struct Vec4IO<float> {
  static __device__ __forceinline__ float4 load(const float* p) { return *reinterpret_cast<const float4*>(p); }
  // Inline PTX keeps each store one 16-byte st.global.v4: NVVM otherwise splits some into four 4-byte stores.
  static __device__ __forceinline__ void store(float* p, float4 v) {
    asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w)
                 : "memory");
  }
};
template <>
struct Vec4IO<__nv_bfloat16> {
  static __device__ __forceinline__ float4 load(const __nv_bfloat16* p) {
    const uint2 u = *reinterpret_cast<const uint2*>(p);  // element 0 in the low half of u.x (little-endian)
    return make_float4(__uint_as_float(u.x << 16), __uint_as_float(u.x & 0xffff0000u), __uint_as_float(u.y << 16),
                       __uint_as_float(u.y & 0xffff0000u));
  }
  static __device__ __forceinline__ uint32_t pack(float lo, float hi) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);  // .x = lo (low half), round to nearest even
    return *reinterpret_cast<const uint32_t*>(&h);
  }
  static __device__ __forceinline__ void store(__nv_bfloat16* p, float4 v) {
    asm volatile("st.global.v2.b32 [%0], {%1, %2};" ::"l"(p), "r"(pack(v.x, v.y)), "r"(pack(v.z, v.w)) : "memory");
  }
};
__device__ __forceinline__ float4 LoadIn4(const float* p) { return __ldg(reinterpret_cast<const float4*>(p)); }
__device__ __forceinline__ float4 Add4(float4 a, float4 b) {
  return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
}

// One channel of the kWpVec recurrence on (m, σ, n = acc·σ): m' = max(m, s), α = e^(m−m'), β = e^(s−m'),
// σ' = σα + β, n' = nα + kβ. The only dependent chain per step is max → exp → fma; acc = n/σ feeds the stores.
// A cleared row (−∞, 0, 0) gives α = e^(−∞) = 0, so it stays an identity.
__device__ __forceinline__ void StepFast(float& m, float& sg, float& n, float k, float s) {
  const float m2 = fmaxf(m, s);
  const float al = __expf(m - m2);
  const float be = __expf(s - m2);
  sg = fmaf(sg, al, be);
  n = fmaf(n, al, k * be);
  m = m2;
}

// ---- commitPending (docs/reference/online-mtp.md §8.3) -------------------------------------------------------------
// Which bank to copy (0: none) from the request's marker; also consumes / re-arms the marker when asked. Called by
// every thread that needs the answer; only thread 0 writes the marker (after a barrier, see the kernels).
__device__ __forceinline__ int32_t CommitBank(const CommitPendingParams& p, int32_t r, int32_t cur) {
  const int32_t S = p.pendingSeqLens[r];
  if (S < 0 || cur < 0) return 0;
  int32_t width = p.clampWidth > 0 ? p.clampWidth : p.pendingWidths[r];
  width = min(width, p.maxDraftTokens);  // bank index stays <= Dmax: row r + a·O < O·(Dmax+1) <= rows
  const int32_t delta = cur - S;
  const int32_t acc = delta < 0 ? 0 : min(delta, width);
  return (acc > 0 && ((S + acc) & (kChunk - 1)) != 0) ? acc : 0;
}
__device__ __forceinline__ void CommitMarker(const CommitPendingParams& p, int b, int32_t r, int32_t cur) {
  if (p.consume && p.pendingSeqLens[r] >= 0 && cur >= 0) {  // a marker read with a valid length is consumed
    p.pendingSeqLens[r] = -1;
    p.pendingWidths[r] = 0;
  }
  if (p.markSeqLens != nullptr) {  // fused mark of this batch's verify (after the commit read the old marker)
    const int32_t Snew = p.markSeqLens[b];
    p.pendingSeqLens[r] = Snew < 0 ? -1 : Snew;
    p.pendingWidths[r] = Snew < 0 ? 0 : p.markWidth;
  }
}

// kCommitRegs / kCommitWide: kVecs/kPerThread threads, each loads its kPerThread vectors into registers before the
// first store (src row r + a·O and dst row r never overlap: a >= 1 and O >= N > r). Every thread reads the indices
// and the marker itself (broadcast loads, no shared-memory hand-off); one barrier orders every thread's marker read
// before thread 0's marker write. Early exits are block-uniform (r is the same for the whole block).
template <int kRowBytes, int kPerThread>
__global__ void __launch_bounds__(kRowBytes / 16 / kPerThread) CommitRegsKernel(const CommitPendingParams p) {
  constexpr int kThreads = kRowBytes / 16 / kPerThread;
  const int b = blockIdx.x;
  const int32_t r = __ldg(p.reqPoolIdx + b);
  const int32_t cur = __ldg(p.curSeqLens + b);
  if (SkipRequest<false>(p, false, b, r, kKCommit)) return;
  const int32_t bank = CommitBank(p, r, cur);
  const char* base = static_cast<const char*>(p.state);
  uint4 v[kPerThread];
  if (bank != 0) {
    const uint4* src = reinterpret_cast<const uint4*>(
        base + (static_cast<int64_t>(r) + static_cast<int64_t>(bank) * p.bankStrideRows) * kRowBytes);
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) v[j] = src[threadIdx.x + j * kThreads];
  }
  __syncthreads();
  if (threadIdx.x == 0) CommitMarker(p, b, r, cur);
  if (bank == 0) return;
  uint4* dst = reinterpret_cast<uint4*>(static_cast<char*>(p.state) + static_cast<int64_t>(r) * kRowBytes);
#pragma unroll
  for (int j = 0; j < kPerThread; ++j) dst[threadIdx.x + j * kThreads] = v[j];
}

}  // namespace
}  // namespace online_mtp
}  // namespace dsv4kv
