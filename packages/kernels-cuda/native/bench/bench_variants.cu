// Benchmark-only launch shapes of the online-MTP kernels (docs/decisions.md D18, D23): compiled only with
// DSV4KV_BENCH_VARIANTS (CMake option of the same name), so the shipped binary holds the default shapes alone
// (online_mtp_kernels.cu). They compute the same functions within fp32 rounding and are selected with `variant`:
//   writePrefix kWpLegacy (the first kernel: 512 threads per request, expf and IEEE division), kWpVec (4 channels
//   per thread, 16-byte accesses, fast math), kWpVecAccurate (kWpVec's shape with kWpLegacy's math);
//   commitPending kCommitLegacy (thread 0 decides, a copy loop), kCommitWide (one 16-byte vector per thread);
//   decode kWpLegacy (the first kernel: 512 threads per request, index loads first), kWpVec (4 channels per thread,
//   accurate math).
#if DSV4KV_BENCH_VARIANTS
#include <cuda_bf16.h>

#include "online_mtp/device.cuh"
#include "online_mtp/online_mtp_kernels.cuh"

namespace dsv4kv {
namespace online_mtp {
namespace {

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
  if (SkipRequest<true>(p, S < 0, b, r, kKWritePrefix)) return;  // padding rows are no-ops
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

// ---- writePrefix, kWpLegacy (the first kernel): grid = batch, block = kHeadDim (one thread per channel d) --------
template <typename T>
__global__ void __launch_bounds__(kHeadDim) WritePrefixLegacyKernel(const WritePrefixParams p) {
  const int b = blockIdx.x;
  const int d = threadIdx.x;
  const int32_t S = p.seqLens[b];
  const int32_t r = p.reqPoolIdx[b];
  if (SkipRequest<false>(p, S < 0, b, r, kKWritePrefix)) return;  // padding rows are no-ops
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

constexpr int kCommitThreads = 128;
template <int kRowBytes>
__global__ void __launch_bounds__(kCommitThreads) CommitLegacyKernel(const CommitPendingParams p) {
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
  if (SkipRequest<true>(p, L <= 0, b, r, kKDecode)) return;
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

// kWpLegacy decode (the first decode kernel, the default before D = 1's shape was promoted): grid = batch, block =
// kHeadDim, the index loads first, the state row only when pos != 0.
template <typename T>
__global__ void __launch_bounds__(kHeadDim) DecodeLegacyKernel(const DecodeParams p) {
  const int b = blockIdx.x;
  const int d = threadIdx.x;
  const int32_t L = p.seqLens[b];
  const int32_t r = p.reqPoolIdx[b];
  if (SkipRequest<false>(p, L <= 0, b, r, kKDecode)) return;
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

}  // namespace

cudaError_t LaunchWritePrefixVariant(const WritePrefixParams& p, cudaStream_t s) {
  const bool f32 = p.stateType == kF32;
  if (p.variant == kWpLegacy) {
    if (f32)
      WritePrefixLegacyKernel<float><<<p.batch, kHeadDim, 0, s>>>(p);
    else
      WritePrefixLegacyKernel<__nv_bfloat16><<<p.batch, kHeadDim, 0, s>>>(p);
    return cudaGetLastError();
  }
  if (!ValidSplit(p.split) || (p.variant != kWpVec && p.variant != kWpVecAccurate)) return cudaErrorInvalidValue;
  const dim3 grid(p.batch, p.split);
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

cudaError_t LaunchCommitVariant(const CommitPendingParams& p, cudaStream_t s) {
  const bool f32 = p.stateType == kF32;
  constexpr int kF32Row = kRowElems * 4, kBf16Row = kRowElems * 2;
  switch (p.variant) {
    case kCommitLegacy:
      if (f32)
        CommitLegacyKernel<kF32Row><<<p.batch, kCommitThreads, 0, s>>>(p);
      else
        CommitLegacyKernel<kBf16Row><<<p.batch, kCommitThreads, 0, s>>>(p);
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

cudaError_t LaunchDecodeVariant(const DecodeParams& p, cudaStream_t s) {
  const bool f32 = p.stateType == kF32;
  if (p.variant == kWpLegacy) {
    if (f32)
      DecodeLegacyKernel<float><<<p.batch, kHeadDim, 0, s>>>(p);
    else
      DecodeLegacyKernel<__nv_bfloat16><<<p.batch, kHeadDim, 0, s>>>(p);
    return cudaGetLastError();
  }
  if (p.variant != kWpVec || !ValidSplit(p.split)) return cudaErrorInvalidValue;
  const dim3 grid(p.batch, p.split);
  if (f32)
    DecodeVecKernel<float><<<grid, kVecThreads / p.split, 0, s>>>(p);
  else
    DecodeVecKernel<__nv_bfloat16><<<grid, kVecThreads / p.split, 0, s>>>(p);
  return cudaGetLastError();
}

}  // namespace online_mtp
}  // namespace dsv4kv
#endif  // DSV4KV_BENCH_VARIANTS
