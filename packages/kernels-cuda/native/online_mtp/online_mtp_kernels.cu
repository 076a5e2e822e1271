// Online c128 + MTP CUDA kernels. See online_mtp_kernels.cuh for the parameter structs and the spec sections.
#include <cuda_bf16.h>

#include "online_mtp/online_mtp_kernels.cuh"

namespace dsv4kv {
namespace online_mtp {
namespace {

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
template <bool kFast>
__device__ __forceinline__ void Step4(float4& m, float4& sg, float4& n, float4 k, float4 s, int pos) {
  if (pos == 0) {  // uniform across the block: every thread of a request has the same S
    m = s;
    sg = make_float4(1.f, 1.f, 1.f, 1.f);
    n = k;
    return;
  }
  if (kFast) {
    StepFast(m.x, sg.x, n.x, k.x, s.x);
    StepFast(m.y, sg.y, n.y, k.y, s.y);
    StepFast(m.z, sg.z, n.z, k.z, s.z);
    StepFast(m.w, sg.w, n.w, k.w, s.w);
  } else {  // n holds the normalised acc here (kWpLegacy's math)
    Update(m.x, sg.x, n.x, k.x, s.x, pos);
    Update(m.y, sg.y, n.y, k.y, s.y, pos);
    Update(m.z, sg.z, n.z, k.z, s.z, pos);
    Update(m.w, sg.w, n.w, k.w, s.w, pos);
  }
}
template <bool kFast>
__device__ __forceinline__ float4 Acc4(float4 n, float4 sg) {
  if (!kFast) return n;
  // σ >= 1 after any update (the running max contributes e^0), or a finite stored σ: inside __fdividef's range.
  return make_float4(__fdividef(n.x, sg.x), __fdividef(n.y, sg.y), __fdividef(n.z, sg.z), __fdividef(n.w, sg.w));
}

// ---- writePrefix, kWpVec / kWpVecAccurate: grid = (batch, split), block = 128/split threads, 4 channels each ----
template <typename T, bool kFast>
__global__ void __launch_bounds__(kVecThreads) WritePrefixVecKernel(const WritePrefixParams p) {
  const int b = blockIdx.x;
  const int c = (blockIdx.y * blockDim.x + threadIdx.x) * 4;  // < split·(128/split)·4 = 512
  const int D = p.numVerify;
  const int32_t S = __ldg(p.seqLens + b);
  const int32_t r = __ldg(p.reqPoolIdx + b);
  // Input rows b·D + i < batch·D <= kv rows (host check) do not depend on S or r: issue all 2D loads now, so they
  // are in flight while the index loads resolve (the only dependent chain left is index → ape/bank-0 → math).
  float4 kv[kMaxVerify], sc[kMaxVerify];
  const float* in = p.kvScore + static_cast<int64_t>(b) * D * kKvScoreCols + c;
#pragma unroll
  for (int i = 0; i < kMaxVerify; ++i) {
    if (i < D) {
      kv[i] = LoadIn4(in + i * kKvScoreCols);
      sc[i] = LoadIn4(in + i * kKvScoreCols + kHeadDim);
    }
  }
  if (S < 0 || r < 0) return;  // padding rows are no-ops
  if (r >= p.numReqSlots) {
    if (blockIdx.y == 0 && threadIdx.x == 0) Report(p.err, kErrReqIndex, b, r, kKWritePrefix);
    return;
  }
  T* state = static_cast<T*>(p.state);
  const int start = S & (kChunk - 1);
  // Bank 0 (row r < N <= O: always exists) is loaded unconditionally and used only when start != 0 (S >= 0 and
  // S mod 128 != 0, so S > 0: it holds the open chunk); no branch between these loads and the ape loads.
  const T* row0 = state + static_cast<int64_t>(r) * kRowElems + c;
  const float4 m0 = Vec4IO<T>::load(row0), sg0 = Vec4IO<T>::load(row0 + kHeadDim),
               a0 = Vec4IO<T>::load(row0 + 2 * kHeadDim);
  float4 ap[kMaxVerify];
#pragma unroll
  for (int i = 0; i < kMaxVerify; ++i) {
    if (i < D) ap[i] = LoadIn4(p.ape + ((start + i) & (kChunk - 1)) * kHeadDim + c);  // row < 128
  }
#pragma unroll
  for (int i = 0; i < kMaxVerify; ++i) {
    if (i < D) sc[i] = Add4(sc[i], ap[i]);
  }
  float4 m = make_float4(0.f, 0.f, 0.f, 0.f), sg = m, n = m;
  if (start != 0) {
    m = m0;
    sg = sg0;
    n = kFast ? make_float4(a0.x * sg0.x, a0.y * sg0.y, a0.z * sg0.z, a0.w * sg0.w) : a0;
  }
  // Bank i+1 = row r + (i+1)·O <= (N−1) + D·O < O·(D+1) <= rows (host check); skipped when S+i+1 closes a chunk
  // exactly (the next token re-inits, the bank keeps its stale contents).
#pragma unroll
  for (int i = 0; i < kMaxVerify; ++i) {
    if (i < D) {
      Step4<kFast>(m, sg, n, kv[i], sc[i], (start + i) & (kChunk - 1));
      if (((S + i + 1) & (kChunk - 1)) != 0) {
        T* dst = state + (static_cast<int64_t>(r) + static_cast<int64_t>(i + 1) * p.bankStrideRows) * kRowElems + c;
        Vec4IO<T>::store(dst, m);
        Vec4IO<T>::store(dst + kHeadDim, sg);
        Vec4IO<T>::store(dst + 2 * kHeadDim, Acc4<kFast>(n, sg));
      }
    }
  }
}

// ---- writePrefix (docs/reference/online-mtp.md §8.1): grid = batch, block = kHeadDim (one thread per channel d) -----
template <typename T>
__global__ void __launch_bounds__(kHeadDim) WritePrefixKernel(const WritePrefixParams p) {
  const int b = blockIdx.x;
  const int d = threadIdx.x;
  const int32_t S = p.seqLens[b];
  const int32_t r = p.reqPoolIdx[b];
  if (S < 0 || r < 0) return;  // padding rows are no-ops
  if (r >= p.numReqSlots) {
    if (d == 0) Report(p.err, kErrReqIndex, b, r, kKWritePrefix);
    return;
  }
  T* state = static_cast<T*>(p.state);
  const int start = S & (kChunk - 1);
  const bool hasPartial = S > 0 && start != 0;
  const int D = p.numVerify;
  // Phase 1: issue every global load of the D steps (and bank 0) before the dependent recurrence, so the 2D+3
  // independent loads are in flight together. Row b*D + i < batch*D <= kv rows (host check).
  float kv[kMaxVerify], sc[kMaxVerify];
#pragma unroll
  for (int i = 0; i < kMaxVerify; ++i) {
    if (i < D) {
      const int pos = (start + i) & (kChunk - 1);
      const float* row = p.kvScore + (static_cast<int64_t>(b) * D + i) * kKvScoreCols;
      kv[i] = __ldg(row + d);
      sc[i] = __ldg(row + kHeadDim + d) + __ldg(p.ape + pos * kHeadDim + d);
    }
  }
  float m = 0.f, sg = 0.f, a = 0.f;
  if (hasPartial) {
    const T* row0 = state + static_cast<int64_t>(r) * kRowElems;
    m = StateIO<T>::load(row0 + d);
    sg = StateIO<T>::load(row0 + kHeadDim + d);
    a = StateIO<T>::load(row0 + 2 * kHeadDim + d);
  }
  // Phase 2: recurrence in registers; bank i+1 (row r + (i+1)·O < O·(D+1) <= rows, host check) is written unless
  // S+i+1 closes a chunk exactly (then the next token re-inits and the bank keeps its stale contents).
#pragma unroll
  for (int i = 0; i < kMaxVerify; ++i) {
    if (i < D) {
      const int pos = (start + i) & (kChunk - 1);
      Update(m, sg, a, kv[i], sc[i], pos);
      if (((S + i + 1) & (kChunk - 1)) != 0) {
        T* dst = state + (static_cast<int64_t>(r) + static_cast<int64_t>(i + 1) * p.bankStrideRows) * kRowElems;
        StateIO<T>::store(dst + d, m);
        StateIO<T>::store(dst + kHeadDim + d, sg);
        StateIO<T>::store(dst + 2 * kHeadDim + d, a);
      }
      if (pos == kChunk - 1) {
        m = 0.f;
        sg = 0.f;
        a = 0.f;
      }
    }
  }
}

// ---- writePrefix, kWpScalar: grid = (batch, split), block = 512/split threads, one channel per thread -----------
template <typename T>
__global__ void __launch_bounds__(kHeadDim) WritePrefixScalarKernel(const WritePrefixParams p) {
  const int b = blockIdx.x;
  const int d = blockIdx.y * blockDim.x + threadIdx.x;  // < split·(512/split) = 512
  const int D = p.numVerify;
  const int32_t S = __ldg(p.seqLens + b);
  const int32_t r = __ldg(p.reqPoolIdx + b);
  // Input rows b·D + i < batch·D <= kv rows (host check) do not depend on S or r: issued before they arrive.
  float kv[kMaxVerify], sc[kMaxVerify], ap[kMaxVerify];
  const float* in = p.kvScore + static_cast<int64_t>(b) * D * kKvScoreCols + d;
#pragma unroll
  for (int i = 0; i < kMaxVerify; ++i) {
    if (i < D) {
      kv[i] = __ldg(in + i * kKvScoreCols);
      sc[i] = __ldg(in + i * kKvScoreCols + kHeadDim);
    }
  }
  if (S < 0 || r < 0) return;  // padding rows are no-ops
  if (r >= p.numReqSlots) {
    if (blockIdx.y == 0 && threadIdx.x == 0) Report(p.err, kErrReqIndex, b, r, kKWritePrefix);
    return;
  }
  T* state = static_cast<T*>(p.state);
  const int start = S & (kChunk - 1);
  // Second (and last) dependent round: bank 0 of row r (< N <= O, always exists; used only when start != 0, which
  // with S >= 0 means S > 0 and an open chunk) and the D ape rows (< 128), all issued before any is used.
  const T* row0 = state + static_cast<int64_t>(r) * kRowElems + d;
  const float m0 = StateIO<T>::load(row0), sg0 = StateIO<T>::load(row0 + kHeadDim),
              a0 = StateIO<T>::load(row0 + 2 * kHeadDim);
#pragma unroll
  for (int i = 0; i < kMaxVerify; ++i) {
    if (i < D) ap[i] = __ldg(p.ape + ((start + i) & (kChunk - 1)) * kHeadDim + d);
  }
  float m = 0.f, sg = 0.f, n = 0.f;
  if (start != 0) {
    m = m0;
    sg = sg0;
    n = a0 * sg0;  // unnormalised accumulator n = acc·σ (see StepFast)
  }
  // Bank i+1 = row r + (i+1)·O <= (N−1) + D·O < O·(D+1) <= rows (host check); skipped when S+i+1 closes a chunk.
#pragma unroll
  for (int i = 0; i < kMaxVerify; ++i) {
    if (i < D) {
      const float s = sc[i] + ap[i];
      if (((start + i) & (kChunk - 1)) == 0) {  // uniform across the block
        m = s;
        sg = 1.f;
        n = kv[i];
      } else {
        StepFast(m, sg, n, kv[i], s);
      }
      if (((S + i + 1) & (kChunk - 1)) != 0) {
        T* dst = state + (static_cast<int64_t>(r) + static_cast<int64_t>(i + 1) * p.bankStrideRows) * kRowElems + d;
        StateIO<T>::store(dst, m);
        StateIO<T>::store(dst + kHeadDim, sg);
        StateIO<T>::store(dst + 2 * kHeadDim, __fdividef(n, sg));  // σ >= 1 after an update (the max term is e^0)
      }
    }
  }
}

// ---- markPending (docs/reference/online-mtp.md §8.2, hardened: no global reset unless clearAll) ---------------------
__global__ void ClearPendingKernel(int32_t* pend, int32_t* widths, int32_t n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    pend[i] = -1;
    widths[i] = 0;
  }
}
__global__ void MarkPendingKernel(const MarkPendingParams p) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= p.batch) return;
  const int32_t r = p.reqPoolIdx[i];
  if (r < 0 || r >= p.numReqSlots) return;
  const int32_t S = p.seqLens[i];
  p.pendingSeqLens[r] = S < 0 ? -1 : S;
  p.pendingWidths[r] = S < 0 ? 0 : p.numVerify;
}

// ---- commitPending (docs/reference/online-mtp.md §8.3): grid = batch, bitwise row copy with 16-byte vectors ---------
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

constexpr int kCommitThreads = 128;
template <int kRowBytes>
__global__ void __launch_bounds__(kCommitThreads) CommitPendingKernel(const CommitPendingParams p) {
  const int b = blockIdx.x;
  const int32_t r = p.reqPoolIdx[b];
  if (r < 0) return;
  if (r >= p.numReqSlots) {
    if (threadIdx.x == 0) Report(p.err, kErrReqIndex, b, r, kKCommit);
    return;
  }
  __shared__ int32_t srcBank;  // 0: no copy
  if (threadIdx.x == 0) {
    const int32_t cur = p.curSeqLens[b];
    srcBank = CommitBank(p, r, cur);
    CommitMarker(p, b, r, cur);
  }
  __syncthreads();
  const int32_t bank = srcBank;
  if (bank == 0) return;
  constexpr int kVecs = kRowBytes / 16;  // 6144 B (fp32) = 384 uint4; 3072 B (bf16) = 192 uint4
  const uint4* src = reinterpret_cast<const uint4*>(
      static_cast<const char*>(p.state) +
      (static_cast<int64_t>(r) + static_cast<int64_t>(bank) * p.bankStrideRows) * kRowBytes);
  uint4* dst = reinterpret_cast<uint4*>(static_cast<char*>(p.state) + static_cast<int64_t>(r) * kRowBytes);
#pragma unroll
  for (int i = threadIdx.x; i < kVecs; i += kCommitThreads) dst[i] = src[i];
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
  if (r < 0) return;
  if (r >= p.numReqSlots) {
    if (threadIdx.x == 0) Report(p.err, kErrReqIndex, b, r, kKCommit);
    return;
  }
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

// ---- resetSlots (docs/reference/online-mtp.md §9.5): grid = (count, Dmax+1) -----------------------------------------
template <typename T>
__global__ void ResetSlotsKernel(const ResetSlotsParams p) {
  const int32_t r = p.slots[blockIdx.x];
  if (r < 0 || r >= p.numReqSlots) {
    if (blockIdx.y == 0 && threadIdx.x == 0) Report(p.err, kErrSlotIndex, blockIdx.x, r, kKReset);
    return;
  }
  const int bank = blockIdx.y;
  T* row =
      static_cast<T*>(p.state) + (static_cast<int64_t>(r) + static_cast<int64_t>(bank) * p.bankStrideRows) * kRowElems;
  for (int e = threadIdx.x; e < kRowElems; e += blockDim.x) StateIO<T>::store(row + e, e < kHeadDim ? -INFINITY : 0.f);
  if (bank == 0 && threadIdx.x == 0 && p.pendingSeqLens != nullptr) {
    p.pendingSeqLens[r] = -1;
    p.pendingWidths[r] = 0;
  }
}

// ---- online decode (docs/reference/online-mtp.md §5.1): grid = batch, block = kHeadDim ------------------------------
template <typename T>
__global__ void __launch_bounds__(kHeadDim) DecodeKernel(const DecodeParams p) {
  const int b = blockIdx.x;
  const int d = threadIdx.x;
  const int32_t L = p.seqLens[b];
  const int32_t r = p.reqPoolIdx[b];
  if (L <= 0 || r < 0) return;
  if (r >= p.numReqSlots) {
    if (d == 0) Report(p.err, kErrReqIndex, b, r, kKDecode);
    return;
  }
  const int pos = (L - 1) & (kChunk - 1);
  T* row = static_cast<T*>(p.state) + (static_cast<int64_t>(r) + p.slotOffsetRows) * kRowElems;  // < N + off <= rows
  const float* in = p.kvScore + static_cast<int64_t>(b) * kKvScoreCols;
  const float k = __ldg(in + d);
  const float s = __ldg(in + kHeadDim + d) + __ldg(p.ape + pos * kHeadDim + d);
  float m = 0.f, sg = 0.f, a = 0.f;
  if (pos != 0) {
    m = StateIO<T>::load(row + d);
    sg = StateIO<T>::load(row + kHeadDim + d);
    a = StateIO<T>::load(row + 2 * kHeadDim + d);
  }
  Update(m, sg, a, k, s, pos);
  if (pos == kChunk - 1) {
    p.out[static_cast<int64_t>(b) * kHeadDim + d] = a;
  } else {
    StateIO<T>::store(row + d, m);
    StateIO<T>::store(row + kHeadDim + d, sg);
    StateIO<T>::store(row + 2 * kHeadDim + d, a);
  }
}

// kWpVec decode: grid = (batch, split), block = 128/split threads, 4 channels each; the input row is issued before
// the index loads resolve. kWpLegacy's math (expf, IEEE division) so decode keeps its rounding.
template <typename T>
__global__ void __launch_bounds__(kVecThreads) DecodeVecKernel(const DecodeParams p) {
  const int b = blockIdx.x;
  const int c = (blockIdx.y * blockDim.x + threadIdx.x) * 4;  // < 512
  const int32_t L = __ldg(p.seqLens + b);
  const int32_t r = __ldg(p.reqPoolIdx + b);
  const float* in = p.kvScore + static_cast<int64_t>(b) * kKvScoreCols + c;  // row b < batch <= kv rows
  const float4 k = LoadIn4(in);
  float4 s = LoadIn4(in + kHeadDim);
  if (L <= 0 || r < 0) return;
  if (r >= p.numReqSlots) {
    if (blockIdx.y == 0 && threadIdx.x == 0) Report(p.err, kErrReqIndex, b, r, kKDecode);
    return;
  }
  const int pos = (L - 1) & (kChunk - 1);
  T* row =
      static_cast<T*>(p.state) + (static_cast<int64_t>(r) + p.slotOffsetRows) * kRowElems + c;  // < N + off <= rows
  s = Add4(s, LoadIn4(p.ape + pos * kHeadDim + c));
  float4 m = make_float4(0.f, 0.f, 0.f, 0.f), sg = m, a = m;
  if (pos != 0) {
    m = Vec4IO<T>::load(row);
    sg = Vec4IO<T>::load(row + kHeadDim);
    a = Vec4IO<T>::load(row + 2 * kHeadDim);
  }
  Step4<false>(m, sg, a, k, s, pos);
  if (pos == kChunk - 1) {
    *reinterpret_cast<float4*>(p.out + static_cast<int64_t>(b) * kHeadDim + c) = a;
  } else {
    Vec4IO<T>::store(row, m);
    Vec4IO<T>::store(row + kHeadDim, sg);
    Vec4IO<T>::store(row + 2 * kHeadDim, a);
  }
}

// kWpScalar decode: grid = (batch, split), block = 512/split threads, one channel per thread; the input row is
// issued before the index loads resolve and the state row unconditionally before the ape load is consumed; fast
// exp / division (__expf, __fdividef) like kWpScalar writePrefix.
template <typename T>
__global__ void __launch_bounds__(kHeadDim) DecodeScalarKernel(const DecodeParams p) {
  const int b = blockIdx.x;
  const int d = blockIdx.y * blockDim.x + threadIdx.x;  // < 512
  const int32_t L = __ldg(p.seqLens + b);
  const int32_t r = __ldg(p.reqPoolIdx + b);
  const float* in = p.kvScore + static_cast<int64_t>(b) * kKvScoreCols + d;  // row b < batch <= kv rows
  const float k = __ldg(in);
  const float sIn = __ldg(in + kHeadDim);
  if (L <= 0 || r < 0) return;
  if (r >= p.numReqSlots) {
    if (blockIdx.y == 0 && threadIdx.x == 0) Report(p.err, kErrReqIndex, b, r, kKDecode);
    return;
  }
  const int pos = (L - 1) & (kChunk - 1);
  T* row =
      static_cast<T*>(p.state) + (static_cast<int64_t>(r) + p.slotOffsetRows) * kRowElems + d;  // < N + off <= rows
  const float m0 = StateIO<T>::load(row), sg0 = StateIO<T>::load(row + kHeadDim),
              a0 = StateIO<T>::load(row + 2 * kHeadDim);
  const float s = sIn + __ldg(p.ape + pos * kHeadDim + d);
  float m = s, sg = 1.f, a = k;
  if (pos != 0) {
    m = fmaxf(m0, s);
    const float al = sg0 * __expf(m0 - m);
    const float be = __expf(s - m);
    sg = al + be;
    a = __fdividef(a0 * al + k * be, sg);
  }
  if (pos == kChunk - 1) {
    p.out[static_cast<int64_t>(b) * kHeadDim + d] = a;
  } else {
    StateIO<T>::store(row, m);
    StateIO<T>::store(row + kHeadDim, sg);
    StateIO<T>::store(row + 2 * kHeadDim, a);
  }
}

// ---- online prefill (docs/reference/online-mtp.md §5.2): grid = numSegments, block = kHeadDim ---------------------
// Pass 0 = closing segments, 1 = trailing.
template <typename T>
__global__ void __launch_bounds__(kHeadDim) PrefillKernel(const PrefillParams p, int pass) {
  const int i = blockIdx.x;
  const int d = threadIdx.x;
  const int32_t* seg = p.segments + static_cast<int64_t>(i) * kSegmentFields;
  const int32_t seqLen = seg[0], lastRow = seg[1], len = seg[2], loadRow = seg[3], storeRow = seg[4];
  if (seqLen <= 0) return;  // invalid (padding) plan
  const int c1 = ((seqLen - 1) & (kChunk - 1)) + 1;
  const bool closes = c1 == kChunk;
  if ((pass == 0) != closes) return;
  const int c0 = c1 - len;
  const bool needLoad = c0 != 0 && loadRow >= 0;
  int32_t bad = kErrNone, badVal = 0;
  if (len < 1 || len > kChunk || c0 < 0)
    bad = kErrSegLen, badVal = len;
  else if (lastRow - len + 1 < 0 || lastRow >= p.kvRows)
    bad = kErrSegLastRow, badVal = lastRow;
  else if (needLoad && loadRow >= p.stateRows)
    bad = kErrSegLoadRow, badVal = loadRow;
  else if (!closes && (storeRow < 0 || storeRow >= p.stateRows))
    bad = kErrSegStoreRow, badVal = storeRow;
  if (bad != kErrNone) {
    if (d == 0 && atomicCAS(p.err, 0, bad) == 0) {
      p.err[1] = i;
      p.err[2] = badVal;
    }
    return;
  }
  const int first = lastRow - len + 1;
  float m2 = -INFINITY;
  for (int j = 0; j < len; ++j) {
    const float* row = p.kvScore + static_cast<int64_t>(first + j) * kKvScoreCols;
    m2 = fmaxf(m2, row[kHeadDim + d] + p.ape[(c0 + j) * kHeadDim + d]);
  }
  float sum = 0.f, num = 0.f;
  for (int j = 0; j < len; ++j) {
    const float* row = p.kvScore + static_cast<int64_t>(first + j) * kKvScoreCols;
    const float e = expf(row[kHeadDim + d] + p.ape[(c0 + j) * kHeadDim + d] - m2);
    sum += e;
    num += e * row[d];
  }
  float m = m2, sg = sum, a = num / sum;
  T* state = static_cast<T*>(p.state);
  if (needLoad) {
    const T* lr = state + static_cast<int64_t>(loadRow) * kRowElems;
    const float m1 = StateIO<T>::load(lr + d);
    const float mm = fmaxf(m1, m2);
    const float w1 = StateIO<T>::load(lr + kHeadDim + d) * expf(m1 - mm);
    const float w2 = sg * expf(m2 - mm);
    const float s = w1 + w2;
    a = (StateIO<T>::load(lr + 2 * kHeadDim + d) * w1 + a * w2) / s;
    m = mm;
    sg = s;
  }
  if (closes) {
    p.out[static_cast<int64_t>(i) * kHeadDim + d] = a;
  } else {
    T* sr = state + static_cast<int64_t>(storeRow) * kRowElems;
    StateIO<T>::store(sr + d, m);
    StateIO<T>::store(sr + kHeadDim + d, sg);
    StateIO<T>::store(sr + 2 * kHeadDim + d, a);
  }
}

__global__ void EmptyKernel() {}

__device__ __forceinline__ float HashUniform(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return (x >> 8) * (1.0f / 16777216.0f);
}
__global__ void FillRandomKernel(float* dst, int64_t n, uint32_t seed, float scale, float offset) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    dst[i] = (HashUniform(static_cast<uint32_t>(i) * 2654435761U + seed) - 0.5f) * scale + offset;
}
template <typename T>
__global__ void FillStateKernel(T* st, int64_t rows, uint32_t seed) {
  const int64_t n = rows * kRowElems;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int e = static_cast<int>(i % kRowElems);
    const float u = HashUniform(static_cast<uint32_t>(i) * 2654435761U + seed);
    StateIO<T>::store(st + i, e < kHeadDim ? u - 0.5f : (e < 2 * kHeadDim ? 1.f + 8.f * u : u - 0.5f));
  }
}

}  // namespace

static bool ValidSplit(int32_t split) { return split == 1 || split == 2 || split == 4 || split == 8 || split == 16; }

cudaError_t LaunchWritePrefix(const WritePrefixParams& p, cudaStream_t s) {
  const bool f32 = p.stateType == kF32;
  if (p.variant == kWpLegacy) {
    if (f32)
      WritePrefixKernel<float><<<p.batch, kHeadDim, 0, s>>>(p);
    else
      WritePrefixKernel<__nv_bfloat16><<<p.batch, kHeadDim, 0, s>>>(p);
    return cudaGetLastError();
  }
  if (!ValidSplit(p.split)) return cudaErrorInvalidValue;
  const dim3 grid(p.batch, p.split);  // batch <= 2^31 − 1 (grid.x limit), split <= 16
  if (p.variant == kWpScalar) {
    if (f32)
      WritePrefixScalarKernel<float><<<grid, kHeadDim / p.split, 0, s>>>(p);
    else
      WritePrefixScalarKernel<__nv_bfloat16><<<grid, kHeadDim / p.split, 0, s>>>(p);
    return cudaGetLastError();
  }
  if (p.variant != kWpVec && p.variant != kWpVecAccurate) return cudaErrorInvalidValue;
  const int threads = kVecThreads / p.split;
  if (p.variant == kWpVec) {
    if (f32)
      WritePrefixVecKernel<float, true><<<grid, threads, 0, s>>>(p);
    else
      WritePrefixVecKernel<__nv_bfloat16, true><<<grid, threads, 0, s>>>(p);
  } else {
    if (f32)
      WritePrefixVecKernel<float, false><<<grid, threads, 0, s>>>(p);
    else
      WritePrefixVecKernel<__nv_bfloat16, false><<<grid, threads, 0, s>>>(p);
  }
  return cudaGetLastError();
}

cudaError_t LaunchMarkPending(const MarkPendingParams& p, cudaStream_t s) {
  if (p.clearAll)
    ClearPendingKernel<<<(p.numReqSlots + 255) / 256, 256, 0, s>>>(p.pendingSeqLens, p.pendingWidths, p.numReqSlots);
  MarkPendingKernel<<<(p.batch + 255) / 256, 256, 0, s>>>(p);
  return cudaGetLastError();
}

cudaError_t LaunchCommitPending(const CommitPendingParams& p, cudaStream_t s) {
  const bool f32 = p.stateType == kF32;
  constexpr int kF32Row = kRowElems * 4, kBf16Row = kRowElems * 2;  // 6144 B = 384 uint4, 3072 B = 192 uint4
  switch (p.variant) {
    case kCommitLegacy:
      if (f32)
        CommitPendingKernel<kF32Row><<<p.batch, kCommitThreads, 0, s>>>(p);
      else
        CommitPendingKernel<kBf16Row><<<p.batch, kCommitThreads, 0, s>>>(p);
      break;
    case kCommitRegs:  // 3 vectors per thread: 128 (fp32) / 64 (bf16) threads
      if (f32)
        CommitRegsKernel<kF32Row, 3><<<p.batch, kF32Row / 16 / 3, 0, s>>>(p);
      else
        CommitRegsKernel<kBf16Row, 3><<<p.batch, kBf16Row / 16 / 3, 0, s>>>(p);
      break;
    case kCommitWide:  // 1 vector per thread: 384 (fp32) / 192 (bf16) threads
      if (f32)
        CommitRegsKernel<kF32Row, 1><<<p.batch, kF32Row / 16, 0, s>>>(p);
      else
        CommitRegsKernel<kBf16Row, 1><<<p.batch, kBf16Row / 16, 0, s>>>(p);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t LaunchResetSlots(const ResetSlotsParams& p, cudaStream_t s) {
  dim3 grid(p.count, p.maxDraftTokens + 1);
  if (p.stateType == kF32)
    ResetSlotsKernel<float><<<grid, 256, 0, s>>>(p);
  else
    ResetSlotsKernel<__nv_bfloat16><<<grid, 256, 0, s>>>(p);
  return cudaGetLastError();
}

cudaError_t LaunchDecode(const DecodeParams& p, cudaStream_t s) {
  const bool f32 = p.stateType == kF32;
  if (p.variant == kWpLegacy) {
    if (f32)
      DecodeKernel<float><<<p.batch, kHeadDim, 0, s>>>(p);
    else
      DecodeKernel<__nv_bfloat16><<<p.batch, kHeadDim, 0, s>>>(p);
    return cudaGetLastError();
  }
  if (!ValidSplit(p.split)) return cudaErrorInvalidValue;
  const dim3 grid(p.batch, p.split);
  if (p.variant == kWpScalar) {
    if (f32)
      DecodeScalarKernel<float><<<grid, kHeadDim / p.split, 0, s>>>(p);
    else
      DecodeScalarKernel<__nv_bfloat16><<<grid, kHeadDim / p.split, 0, s>>>(p);
    return cudaGetLastError();
  }
  if (p.variant != kWpVec) return cudaErrorInvalidValue;
  if (f32)
    DecodeVecKernel<float><<<grid, kVecThreads / p.split, 0, s>>>(p);
  else
    DecodeVecKernel<__nv_bfloat16><<<grid, kVecThreads / p.split, 0, s>>>(p);
  return cudaGetLastError();
}

cudaError_t LaunchPrefill(const PrefillParams& p, cudaStream_t s) {
  // Two launches in stream order: closing segments only read state; trailing segments then read + write
  // (docs/reference/online-mtp.md §5.2).
  for (int pass = 0; pass < 2; ++pass) {
    if (p.stateType == kF32)
      PrefillKernel<float><<<p.numSegments, kHeadDim, 0, s>>>(p, pass);
    else
      PrefillKernel<__nv_bfloat16><<<p.numSegments, kHeadDim, 0, s>>>(p, pass);
  }
  return cudaGetLastError();
}

cudaError_t LaunchEmpty(cudaStream_t s) {
  EmptyKernel<<<1, 32, 0, s>>>();
  return cudaGetLastError();
}

cudaError_t LaunchFillRandom(float* dst, int64_t n, uint32_t seed, float scale, float offset, cudaStream_t s) {
  FillRandomKernel<<<1024, 256, 0, s>>>(dst, n, seed, scale, offset);
  return cudaGetLastError();
}

cudaError_t LaunchFillStateRandom(void* state, int64_t rows, int32_t stateType, uint32_t seed, cudaStream_t s) {
  if (stateType == kF32)
    FillStateKernel<float><<<1024, 256, 0, s>>>(static_cast<float*>(state), rows, seed);
  else
    FillStateKernel<__nv_bfloat16><<<1024, 256, 0, s>>>(static_cast<__nv_bfloat16*>(state), rows, seed);
  return cudaGetLastError();
}

}  // namespace online_mtp
}  // namespace dsv4kv
