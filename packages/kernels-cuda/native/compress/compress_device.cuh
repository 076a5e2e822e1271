// Device helpers shared by the compress kernels (prefill_compress.cu, prefill_write.cu, decode.cu): 4-channel state
// and input I/O for fp32 / bf16, plan-row decoding, the device re-check of a plan row against the buffers, the error
// word, and the two-pass softmax pooling of a channel quad (the PDL helpers are in pdl.cuh). Device code only.
#pragma once
#include <cuda_bf16.h>

#include <cstdint>

#include "compress/compress_kernels.cuh"
#include "pdl.cuh"

namespace dsv4kv {
namespace compress {
namespace {

constexpr unsigned kFullMask = 0xffffffffu;

// ---- 4 consecutive channels as one access ---------------------------------------------------------------------------
// fp32: 16 bytes, bf16: 8 bytes. Every caller passes a channel offset that is a multiple of 4 inside a row of
// RowBlocksOf(cr) * headDim elements (rows of 512 .. 8,192 bytes, multiples of 16), on cudaMalloc bases (256-byte
// aligned: DeviceBuffers are whole allocations, no offset views), so each access is naturally aligned.
template <typename T>
struct Vec4;
template <>
struct Vec4<float> {
  // Read-only path: only for buffers no thread of the kernel writes.
  static __device__ __forceinline__ float4 LoadRO(const float* p) { return __ldg(reinterpret_cast<const float4*>(p)); }
  // Coherent path: for state rows the same kernel writes (decode).
  static __device__ __forceinline__ float4 Load(const float* p) { return *reinterpret_cast<const float4*>(p); }
  // Inline PTX keeps the store one 16-byte st.global.v4 (NVVM may otherwise split it).
  static __device__ __forceinline__ void Store(float* p, float4 v) {
#ifdef __CUDA_ARCH__
    asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w)
                 : "memory");
#else  // host-compiled emulation (no PTX)
    *reinterpret_cast<float4*>(p) = v;
#endif
  }
};
__device__ __forceinline__ float4 WidenBf16x4(uint2 u) {  // element 0 in the low half of u.x (little-endian)
  return make_float4(__uint_as_float(u.x << 16), __uint_as_float(u.x & 0xffff0000u), __uint_as_float(u.y << 16),
                     __uint_as_float(u.y & 0xffff0000u));
}
__device__ __forceinline__ uint32_t PackBf16x2(float lo, float hi) {
  const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);  // .x = lo (low half), round to nearest even
  return *reinterpret_cast<const uint32_t*>(&h);
}
template <>
struct Vec4<__nv_bfloat16> {
  static __device__ __forceinline__ float4 LoadRO(const __nv_bfloat16* p) {
    return WidenBf16x4(__ldg(reinterpret_cast<const uint2*>(p)));
  }
  static __device__ __forceinline__ float4 Load(const __nv_bfloat16* p) {
    return WidenBf16x4(*reinterpret_cast<const uint2*>(p));
  }
  static __device__ __forceinline__ void Store(__nv_bfloat16* p, float4 v) {
#ifdef __CUDA_ARCH__
    asm volatile("st.global.v2.b32 [%0], {%1, %2};" ::"l"(p), "r"(PackBf16x2(v.x, v.y)), "r"(PackBf16x2(v.z, v.w))
                 : "memory");
#else
    *reinterpret_cast<uint2*>(p) = make_uint2(PackBf16x2(v.x, v.y), PackBf16x2(v.z, v.w));
#endif
  }
};
// An fp32 quad as the state stores it and reads it back: identity for fp32, bf16 round-to-nearest-even then widen.
template <typename T>
__device__ __forceinline__ float4 RoundToState4(float4 v);
template <>
__device__ __forceinline__ float4 RoundToState4<float>(float4 v) {
  return v;
}
template <>
__device__ __forceinline__ float4 RoundToState4<__nv_bfloat16>(float4 v) {
  return WidenBf16x4(make_uint2(PackBf16x2(v.x, v.y), PackBf16x2(v.z, v.w)));
}
__device__ __forceinline__ float4 LoadIn4(const float* p) { return __ldg(reinterpret_cast<const float4*>(p)); }
__device__ __forceinline__ void StoreOut4(float* p, float4 v) { Vec4<float>::Store(p, v); }
__device__ __forceinline__ float4 Add4(float4 a, float4 b) {
  return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
}

// ---- Error word (compress_kernels.cuh): first error wins -----------------------------------------------------------
__device__ __forceinline__ void Report(int32_t* err, int32_t code, int64_t row, int64_t value, int32_t kernel) {
  if (atomicCAS(err, 0, code) == 0) {
    err[1] = static_cast<int32_t>(row);
    err[2] = static_cast<int32_t>(value);
    err[3] = kernel;
  }
}

// ---- Plan rows (docs/reference/planner.md §2) -----------------------------------------------------------------------
struct CompressRow {
  uint32_t seqLen;     // q + 1
  uint32_t ragged;     // ragged row of the token at q (u16)
  uint32_t bufferLen;  // window elements read from the ring (u16)
  int32_t rp0;         // c4 overlap page
  int32_t rp1;         // main page
};
__device__ __forceinline__ CompressRow DecodeCompressRow(uint4 w) {
  return CompressRow{w.x, w.y & 0xffffu, w.y >> 16, static_cast<int32_t>(w.z), static_cast<int32_t>(w.w)};
}
// Rows are 16 bytes on a cudaMalloc base: one aligned 16-byte load.
__device__ __forceinline__ uint4 LoadPlan16(const uint8_t* plan, int64_t i) {
  return __ldg(reinterpret_cast<const uint4*>(plan) + i);
}
__device__ __forceinline__ uint2 LoadPlan8(const uint8_t* plan, int64_t i) {
  return __ldg(reinterpret_cast<const uint2*>(plan) + i);
}

// [first, first + n) inside [0, rows): int64, so no plan value can wrap.
__device__ __forceinline__ bool RowsIn(int64_t first, int64_t n, int64_t rows) {
  return first >= 0 && first + n <= rows;
}

// Which window elements of a prefill row come from where (docs/reference/planner.md §8.1, §8.2): masked elements
// [0, eMask) (c4 overlap at q = 3), ring elements [eMask, L), ragged elements [max(L, eMask), W).
template <int CR>
__device__ __forceinline__ int MaskedPrefix(uint32_t seqLen) {
  return (CR == 4 && seqLen <= 4) ? 4 : 0;
}

// The device re-check of a valid (non-padding) CompressPlan row, in the order of the plan checks
// (docs/reference/planner.md §8; ErrCode in compress_kernels.cuh). Returns kErrNone or the code, with `value` the
// offending field's value (seqLen, bufferLen, readPage0 / readPage1, raggedId).
template <int CR>
__device__ __forceinline__ int32_t CheckCompressRow(const CompressRow& c, int64_t stateRows, int64_t inputRows,
                                                    int64_t& value) {
  constexpr int W = WindowOf(CR);
  if (c.seqLen == 0 || c.seqLen % CR != 0) return value = c.seqLen, kErrSeqLen;
  if (c.bufferLen > W) return value = c.bufferLen, kErrBufferLen;
  const int L = static_cast<int>(c.bufferLen);
  const int eMask = MaskedPrefix<CR>(c.seqLen);
  if (CR == 4) {
    const int n0 = min(L, 4) - eMask;  // ring elements of the overlap page: [eMask, min(L, 4))
    if (n0 > 0 && !RowsIn(static_cast<int64_t>(c.rp0) * 4 + eMask, n0, stateRows)) return value = c.rp0, kErrRingRow;
    const int n1 = L - 4;  // ring elements of the main page: [4, L)
    if (n1 > 0 && !RowsIn(static_cast<int64_t>(c.rp1) * 4, n1, stateRows)) return value = c.rp1, kErrRingRow;
  } else {
    if (L > 0 && !RowsIn(static_cast<int64_t>(c.rp1) * CR, L, stateRows)) return value = c.rp1, kErrRingRow;
  }
  const int eIn = max(L, eMask);  // ragged elements [eIn, W): input rows ragged - (W - 1) + e
  if (eIn < W && !RowsIn(static_cast<int64_t>(c.ragged) - (W - 1) + eIn, W - eIn, inputRows))
    return value = c.ragged, kErrRaggedRow;
  return kErrNone;
}

// ---- Pooling of a channel quad over window elements (two passes, exact max) ----------------------------------------
// entry[d] = Σ_e exp(s_e − m)·kv_e / Σ_e exp(s_e − m), m = max_e s_e: accurate expf and IEEE division (no fast
// math), so the only difference from the fp32 CPU reference is the order of summation.
__device__ __forceinline__ float4 Max4(float4 a, float4 b) {
  return make_float4(fmaxf(a.x, b.x), fmaxf(a.y, b.y), fmaxf(a.z, b.z), fmaxf(a.w, b.w));
}
// (sum, acc) += (w, w·kv) with w = exp(s − m), per channel.
__device__ __forceinline__ void Accumulate4(float4& sum, float4& acc, float4 s, float4 kv, float4 m) {
  const float wx = expf(s.x - m.x), wy = expf(s.y - m.y), wz = expf(s.z - m.z), ww = expf(s.w - m.w);
  sum.x += wx;
  sum.y += wy;
  sum.z += wz;
  sum.w += ww;
  acc.x = fmaf(wx, kv.x, acc.x);
  acc.y = fmaf(wy, kv.y, acc.y);
  acc.z = fmaf(wz, kv.z, acc.z);
  acc.w = fmaf(ww, kv.w, acc.w);
}
__device__ __forceinline__ float4 Div4(float4 a, float4 b) {
  return make_float4(a.x / b.x, a.y / b.y, a.z / b.z, a.w / b.w);
}
__device__ __forceinline__ float4 Shfl4Xor(float4 v, int mask) {
  return make_float4(__shfl_xor_sync(kFullMask, v.x, mask), __shfl_xor_sync(kFullMask, v.y, mask),
                     __shfl_xor_sync(kFullMask, v.z, mask), __shfl_xor_sync(kFullMask, v.w, mask));
}
__device__ __forceinline__ uint4 Shfl4(uint4 v, int src) {
  return make_uint4(__shfl_sync(kFullMask, v.x, src), __shfl_sync(kFullMask, v.y, src),
                    __shfl_sync(kFullMask, v.z, src), __shfl_sync(kFullMask, v.w, src));
}
constexpr float4 kNegInf4 = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
constexpr float4 kZero4 = {0.f, 0.f, 0.f, 0.f};

// 16 bytes global -> shared without a register round trip (cp.async, sm_80+): the copy overlaps the loads issued
// after it; CpAsyncWaitAll makes the thread's own copies visible to it. Both addresses 16-byte aligned.
__device__ __forceinline__ void CpAsync16(void* smem, const void* gmem) {
#ifdef __CUDA_ARCH__
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" ::"r"(s), "l"(gmem) : "memory");
#else  // host-compiled emulation
  *static_cast<float4*>(smem) = *static_cast<const float4*>(gmem);
#endif
}
__device__ __forceinline__ void CpAsyncWaitAll() {
#ifdef __CUDA_ARCH__
  asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}

}  // namespace
}  // namespace compress
}  // namespace dsv4kv
