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

// §4.1 single-token update in fp32 registers. pos == 0 re-initializes.
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

// ---- writePrefix (§6.1): grid = batch, block = kHeadDim (one thread per channel d) ----------------------------
template <typename T>
__global__ void __launch_bounds__(kHeadDim) WritePrefixKernel(const WritePrefixParams p) {
  const int b = blockIdx.x;
  const int d = threadIdx.x;
  const int32_t S = p.seqLens[b];
  const int32_t r = p.reqPoolIdx[b];
  if (S < 0 || r < 0 || r >= p.numReqSlots) return;  // padding / invalid rows are no-ops
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

// ---- markPending (§6.2, hardened: no global reset unless clearAll) -------------------------------------------
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

// ---- commitPending (§6.3): grid = batch, bitwise row copy with 16-byte vectors --------------------------------
constexpr int kCommitThreads = 128;
template <int kRowBytes>
__global__ void __launch_bounds__(kCommitThreads) CommitPendingKernel(const CommitPendingParams p) {
  const int b = blockIdx.x;
  const int32_t r = p.reqPoolIdx[b];
  if (r < 0 || r >= p.numReqSlots) return;
  __shared__ int32_t srcBank;  // 0: no copy
  if (threadIdx.x == 0) {
    int32_t bank = 0;
    const int32_t S = p.pendingSeqLens[r];
    const int32_t cur = p.curSeqLens[b];
    if (S >= 0 && cur >= 0) {
      int32_t width = p.clampWidth > 0 ? p.clampWidth : p.pendingWidths[r];
      width = min(width, p.maxDraftTokens);  // bank index stays <= Dmax: row r + a·O < O·(Dmax+1) <= rows
      const int32_t delta = cur - S;
      const int32_t acc = delta < 0 ? 0 : min(delta, width);
      if (acc > 0 && ((S + acc) & (kChunk - 1)) != 0) bank = acc;
      if (p.consume) {
        p.pendingSeqLens[r] = -1;
        p.pendingWidths[r] = 0;
      }
    }
    if (p.markSeqLens != nullptr) {  // fused mark of this batch's verify (after the commit read the old marker)
      const int32_t Snew = p.markSeqLens[b];
      p.pendingSeqLens[r] = Snew < 0 ? -1 : Snew;
      p.pendingWidths[r] = Snew < 0 ? 0 : p.markWidth;
    }
    srcBank = bank;
  }
  __syncthreads();
  const int32_t bank = srcBank;
  if (bank == 0) return;
  constexpr int kVecs = kRowBytes / 16;  // 6144 B (fp32) = 384 uint4; 3072 B (bf16) = 192 uint4
  const uint4* src = reinterpret_cast<const uint4*>(static_cast<const char*>(p.state) +
                                                    (static_cast<int64_t>(r) + static_cast<int64_t>(bank) * p.bankStrideRows) * kRowBytes);
  uint4* dst = reinterpret_cast<uint4*>(static_cast<char*>(p.state) + static_cast<int64_t>(r) * kRowBytes);
#pragma unroll
  for (int i = threadIdx.x; i < kVecs; i += kCommitThreads) dst[i] = src[i];
}

// ---- resetSlots (§3.6): grid = (count, Dmax+1) -------------------------------------------------------------------
template <typename T>
__global__ void ResetSlotsKernel(const ResetSlotsParams p) {
  const int32_t r = p.slots[blockIdx.x];
  if (r < 0 || r >= p.numReqSlots) return;
  const int bank = blockIdx.y;
  T* row = static_cast<T*>(p.state) + (static_cast<int64_t>(r) + static_cast<int64_t>(bank) * p.bankStrideRows) * kRowElems;
  for (int e = threadIdx.x; e < kRowElems; e += blockDim.x) StateIO<T>::store(row + e, e < kHeadDim ? -INFINITY : 0.f);
  if (bank == 0 && threadIdx.x == 0 && p.pendingSeqLens != nullptr) {
    p.pendingSeqLens[r] = -1;
    p.pendingWidths[r] = 0;
  }
}

// ---- online decode (§4.1): grid = batch, block = kHeadDim --------------------------------------------------------
template <typename T>
__global__ void __launch_bounds__(kHeadDim) DecodeKernel(const DecodeParams p) {
  const int b = blockIdx.x;
  const int d = threadIdx.x;
  const int32_t L = p.seqLens[b];
  const int32_t r = p.reqPoolIdx[b];
  if (L <= 0 || r < 0 || r >= p.numReqSlots) return;
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

// ---- online prefill (§4.2): grid = numSegments, block = kHeadDim; pass 0 = closing segments, 1 = trailing -------
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
  if (len < 1 || len > kChunk || c0 < 0) bad = kErrSegLen, badVal = len;
  else if (lastRow - len + 1 < 0 || lastRow >= p.kvRows) bad = kErrSegLastRow, badVal = lastRow;
  else if (needLoad && loadRow >= p.stateRows) bad = kErrSegLoadRow, badVal = loadRow;
  else if (!closes && (storeRow < 0 || storeRow >= p.stateRows)) bad = kErrSegStoreRow, badVal = storeRow;
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
  x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU; x ^= x >> 16;
  return (x >> 8) * (1.0f / 16777216.0f);
}
__global__ void FillRandomKernel(float* dst, int64_t n, uint32_t seed, float scale, float offset) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n; i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    dst[i] = (HashUniform(static_cast<uint32_t>(i) * 2654435761U + seed) - 0.5f) * scale + offset;
}
template <typename T>
__global__ void FillStateKernel(T* st, int64_t rows, uint32_t seed) {
  const int64_t n = rows * kRowElems;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n; i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int e = static_cast<int>(i % kRowElems);
    const float u = HashUniform(static_cast<uint32_t>(i) * 2654435761U + seed);
    StateIO<T>::store(st + i, e < kHeadDim ? u - 0.5f : (e < 2 * kHeadDim ? 1.f + 8.f * u : u - 0.5f));
  }
}

}  // namespace

cudaError_t LaunchWritePrefix(const WritePrefixParams& p, cudaStream_t s) {
  if (p.stateType == kF32) WritePrefixKernel<float><<<p.batch, kHeadDim, 0, s>>>(p);
  else WritePrefixKernel<__nv_bfloat16><<<p.batch, kHeadDim, 0, s>>>(p);
  return cudaGetLastError();
}

cudaError_t LaunchMarkPending(const MarkPendingParams& p, cudaStream_t s) {
  if (p.clearAll) ClearPendingKernel<<<(p.numReqSlots + 255) / 256, 256, 0, s>>>(p.pendingSeqLens, p.pendingWidths, p.numReqSlots);
  MarkPendingKernel<<<(p.batch + 255) / 256, 256, 0, s>>>(p);
  return cudaGetLastError();
}

cudaError_t LaunchCommitPending(const CommitPendingParams& p, cudaStream_t s) {
  if (p.stateType == kF32) CommitPendingKernel<kRowElems * 4><<<p.batch, kCommitThreads, 0, s>>>(p);
  else CommitPendingKernel<kRowElems * 2><<<p.batch, kCommitThreads, 0, s>>>(p);
  return cudaGetLastError();
}

cudaError_t LaunchResetSlots(const ResetSlotsParams& p, cudaStream_t s) {
  dim3 grid(p.count, p.maxDraftTokens + 1);
  if (p.stateType == kF32) ResetSlotsKernel<float><<<grid, 256, 0, s>>>(p);
  else ResetSlotsKernel<__nv_bfloat16><<<grid, 256, 0, s>>>(p);
  return cudaGetLastError();
}

cudaError_t LaunchDecode(const DecodeParams& p, cudaStream_t s) {
  if (p.stateType == kF32) DecodeKernel<float><<<p.batch, kHeadDim, 0, s>>>(p);
  else DecodeKernel<__nv_bfloat16><<<p.batch, kHeadDim, 0, s>>>(p);
  return cudaGetLastError();
}

cudaError_t LaunchPrefill(const PrefillParams& p, cudaStream_t s) {
  // Two launches in stream order: closing segments only read state; trailing segments then read + write (§4.2).
  for (int pass = 0; pass < 2; ++pass) {
    if (p.stateType == kF32) PrefillKernel<float><<<p.numSegments, kHeadDim, 0, s>>>(p, pass);
    else PrefillKernel<__nv_bfloat16><<<p.numSegments, kHeadDim, 0, s>>>(p, pass);
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
  if (stateType == kF32) FillStateKernel<float><<<1024, 256, 0, s>>>(static_cast<float*>(state), rows, seed);
  else FillStateKernel<__nv_bfloat16><<<1024, 256, 0, s>>>(static_cast<__nv_bfloat16*>(state), rows, seed);
  return cudaGetLastError();
}

}  // namespace online_mtp
}  // namespace dsv4kv
