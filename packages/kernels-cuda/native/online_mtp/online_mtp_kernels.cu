// Online c128 + MTP CUDA kernels, the launch shapes the bindings use by default (docs/decisions.md D14, D18, D23).
// The benchmark-only shapes are in bench_variants.cu (built with DSV4KV_BENCH_VARIANTS). See online_mtp_kernels.cuh
// for the parameter structs and the spec sections.
#include <cuda_bf16.h>

#include "online_mtp/device.cuh"
#include "online_mtp/online_mtp_kernels.cuh"

namespace dsv4kv {
namespace online_mtp {
namespace {

// ---- writePrefix (docs/reference/online-mtp.md §8.1): grid = (batch, split), block = 512/split threads ------------
// One thread per channel (the recurrence is instruction-issue bound, so more warps with shorter streams win; D18), a
// request's 512 channels over `split` blocks, and D a template parameter: the loops unroll to exactly D steps, with
// no run-time D to predicate on (D23). Load order (D23): below kIndexFirstMinD the 2D input rows go out before the
// index loads resolve and bank 0 is read unconditionally from row r (it always exists; used only when start != 0),
// so no branch sits between the loads; from kIndexFirstMinD on, bank 0 goes first and the inputs after it, so the
// first steps start (and their bank rows are stored) while the later rows are still arriving.
template <int D>
__device__ __forceinline__ void LoadInputRows(const float* in, float (&kv)[D], float (&sc)[D]) {
#pragma unroll
  for (int i = 0; i < D; ++i) {
    kv[i] = __ldg(in + i * kKvScoreCols);
    sc[i] = __ldg(in + i * kKvScoreCols + kHeadDim);
  }
}
template <typename T, int D>
__global__ void __launch_bounds__(kHeadDim) WritePrefixKernel(const WritePrefixParams p) {
  constexpr bool kIndexFirst = D >= kIndexFirstMinD;
  const int b = blockIdx.x;
  const int d = blockIdx.y * blockDim.x + threadIdx.x;  // < split·(512/split) = 512
  const int32_t S = __ldg(p.seqLens + b);
  const int32_t r = __ldg(p.reqPoolIdx + b);
  // Input rows b·D + i < batch·D <= kv rows (host check) depend on neither S nor r.
  const float* in = p.kvScore + static_cast<int64_t>(b) * (D * kKvScoreCols) + d;
  float kv[D], sc[D], ap[D];
  if constexpr (!kIndexFirst) LoadInputRows<D>(in, kv, sc);
  if (SkipRequest<true>(p, S < 0, b, r, kKWritePrefix)) return;  // padding rows are no-ops
  T* state = static_cast<T*>(p.state);
  const int start = S & (kChunk - 1);
  // Bank 0 of row r (< N <= O) holds the open chunk when start != 0 (with S >= 0 that means S > 0).
  const T* row0 = state + static_cast<int64_t>(r) * kRowElems + d;
  float m0 = 0.f, sg0 = 0.f, a0 = 0.f;
  if (!kIndexFirst || start != 0) {
    m0 = StateIO<T>::load(row0);
    sg0 = StateIO<T>::load(row0 + kHeadDim);
    a0 = StateIO<T>::load(row0 + 2 * kHeadDim);
  }
  if constexpr (kIndexFirst) LoadInputRows<D>(in, kv, sc);
#pragma unroll
  for (int i = 0; i < D; ++i) ap[i] = __ldg(p.ape + ((start + i) & (kChunk - 1)) * kHeadDim + d);  // row < 128
  float m = 0.f, sg = 0.f, n = 0.f;
  if (start != 0) {
    m = m0;
    sg = sg0;
    n = a0 * sg0;  // unnormalised accumulator n = acc·σ (see StepFast)
  }
  // Bank i+1 = row r + (i+1)·O <= (N−1) + D·O < O·(D+1) <= rows (host check); skipped when S+i+1 closes a chunk
  // exactly (the next token re-inits, the bank keeps its stale contents).
#pragma unroll
  for (int i = 0; i < D; ++i) {
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
// The bench's byte floor (op copyKernel): a float4 copy, four independent 16-byte loads per thread in flight.
__global__ void __launch_bounds__(512)
    Copy4Kernel(const float4* __restrict__ src, float4* __restrict__ dst, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
    const float4 a = src[i], b = src[i + stride], c = src[i + 2 * stride], d = src[i + 3 * stride];
    dst[i] = a;
    dst[i + stride] = b;
    dst[i + 2 * stride] = c;
    dst[i + 3 * stride] = d;
  }
  for (; i < n; i += stride) dst[i] = src[i];
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

template <typename T>
cudaError_t LaunchWritePrefixOf(const WritePrefixParams& p, cudaStream_t s) {
  const dim3 grid(p.batch, p.split);  // batch <= 2^31 − 1 (grid.x limit), split <= 16
  const int threads = kHeadDim / p.split;
  switch (p.numVerify) {
    case 1:
      WritePrefixKernel<T, 1><<<grid, threads, 0, s>>>(p);
      break;
    case 2:
      WritePrefixKernel<T, 2><<<grid, threads, 0, s>>>(p);
      break;
    case 3:
      WritePrefixKernel<T, 3><<<grid, threads, 0, s>>>(p);
      break;
    case 4:
      WritePrefixKernel<T, 4><<<grid, threads, 0, s>>>(p);
      break;
    case 5:
      WritePrefixKernel<T, 5><<<grid, threads, 0, s>>>(p);
      break;
    case 6:
      WritePrefixKernel<T, 6><<<grid, threads, 0, s>>>(p);
      break;
    case 7:
      WritePrefixKernel<T, 7><<<grid, threads, 0, s>>>(p);
      break;
    case 8:
      WritePrefixKernel<T, 8><<<grid, threads, 0, s>>>(p);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchWritePrefix(const WritePrefixParams& p, cudaStream_t s) {
#if DSV4KV_BENCH_VARIANTS
  if (p.variant != kWpScalar) return LaunchWritePrefixVariant(p, s);
#endif
  if (p.variant != kWpScalar || !ValidSplit(p.split)) return cudaErrorInvalidValue;
  return p.stateType == kF32 ? LaunchWritePrefixOf<float>(p, s) : LaunchWritePrefixOf<__nv_bfloat16>(p, s);
}

cudaError_t LaunchMarkPending(const MarkPendingParams& p, cudaStream_t s) {
  if (p.clearAll)
    ClearPendingKernel<<<(p.numReqSlots + 255) / 256, 256, 0, s>>>(p.pendingSeqLens, p.pendingWidths, p.numReqSlots);
  MarkPendingKernel<<<(p.batch + 255) / 256, 256, 0, s>>>(p);
  return cudaGetLastError();
}

cudaError_t LaunchCommitPending(const CommitPendingParams& p, cudaStream_t s) {
#if DSV4KV_BENCH_VARIANTS
  if (p.variant != kCommitRegs) return LaunchCommitVariant(p, s);
#endif
  if (p.variant != kCommitRegs) return cudaErrorInvalidValue;
  constexpr int kF32Row = kRowElems * 4, kBf16Row = kRowElems * 2;  // 6144 B = 384 uint4, 3072 B = 192 uint4
  // 3 vectors per thread: 128 (fp32) / 64 (bf16) threads
  if (p.stateType == kF32)
    CommitRegsKernel<kF32Row, 3><<<p.batch, kF32Row / 16 / 3, 0, s>>>(p);
  else
    CommitRegsKernel<kBf16Row, 3><<<p.batch, kBf16Row / 16 / 3, 0, s>>>(p);
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
#if DSV4KV_BENCH_VARIANTS
  if (p.variant != kWpLegacy) return LaunchDecodeVariant(p, s);
#endif
  if (p.variant != kWpLegacy) return cudaErrorInvalidValue;
  if (p.stateType == kF32)
    DecodeKernel<float><<<p.batch, kHeadDim, 0, s>>>(p);
  else
    DecodeKernel<__nv_bfloat16><<<p.batch, kHeadDim, 0, s>>>(p);
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

cudaError_t LaunchCopy4(const void* src, void* dst, int64_t bytes, int blocks, cudaStream_t s) {
  Copy4Kernel<<<blocks, 512, 0, s>>>(static_cast<const float4*>(src), static_cast<float4*>(dst), bytes / 16);
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
