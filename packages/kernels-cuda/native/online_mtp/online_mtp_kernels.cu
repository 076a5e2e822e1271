// Online c128 + MTP CUDA kernels, the launch shapes the bindings use by default (docs/decisions.md D14, D18, D23).
// The benchmark-only shapes are in native/bench/ (built with DSV4KV_BENCH_VARIANTS). See online_mtp_kernels.cuh
// for the parameter structs and the spec sections.
#include <cuda_bf16.h>

#include <cfloat>

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

// ---- online decode (docs/reference/online-mtp.md §5.1): grid = (batch, split), block = 512/split threads -----------
// writePrefix's D = 1 shape (D23): one channel per thread, the input row issued before the index loads resolve, the
// state row read unconditionally (row r + off < N + off <= rows always exists; used only when pos != 0), so the only
// dependent chain is index -> state / ape -> update -> store. The math is Update (expf, IEEE division): the same
// operations as the first decode kernel (kWpLegacy, now benchmark-only), so its results are unchanged.
template <typename T>
__global__ void __launch_bounds__(kHeadDim) DecodeKernel(const DecodeParams p) {
  const int b = blockIdx.x;
  const int d = blockIdx.y * blockDim.x + threadIdx.x;  // < split·(512/split) = 512
  {
    // While the previous kernel finishes (a chained launch; in a plain one the wait is a no-op): this thread's input, and the state row named by a pool index read early,
    // into L2. The index may be stale (the previous kernel may be writing it): it only aims prefetches, bound-checked
    // like the work's (SkipRequest), and is read again after the wait. A prefetch changes no value.
    const int32_t rEarly = LoadI32Early(p.reqPoolIdx + b);
    const float* inEarly = p.kvScore + static_cast<int64_t>(b) * kKvScoreCols + d;
    PrefetchL2(inEarly);
    PrefetchL2(inEarly + kHeadDim);
    if (rEarly >= 0 && rEarly < p.numReqSlots) {
      const T* rowEarly =
          static_cast<const T*>(p.state) + (static_cast<int64_t>(rEarly) + p.slotOffsetRows) * kRowElems + d;
      PrefetchL2(rowEarly);
      PrefetchL2(rowEarly + kHeadDim);
      PrefetchL2(rowEarly + 2 * kHeadDim);
    }
    PdlWait();
    PdlLaunchDependents();  // after the wait: a dependent that reads before its own wait finds all earlier work done
  }
  const int32_t L = __ldg(p.seqLens + b);
  const int32_t r = __ldg(p.reqPoolIdx + b);
  const float* in = p.kvScore + static_cast<int64_t>(b) * kKvScoreCols + d;  // row b < batch <= kv rows
  const float k = __ldg(in);
  const float sIn = __ldg(in + kHeadDim);
  if (SkipRequest<true>(p, L <= 0, b, r, kKDecode)) return;
  const int pos = (L - 1) & (kChunk - 1);
  T* row = static_cast<T*>(p.state) + (static_cast<int64_t>(r) + p.slotOffsetRows) * kRowElems + d;
  float m = StateIO<T>::load(row), sg = StateIO<T>::load(row + kHeadDim), a = StateIO<T>::load(row + 2 * kHeadDim);
  const float s = sIn + __ldg(p.ape + pos * kHeadDim + d);
  Update(m, sg, a, k, s, pos);  // pos == 0 ignores the loaded row
  if (pos == kChunk - 1) {
    p.out[static_cast<int64_t>(b) * kHeadDim + d] = a;
  } else {
    StateIO<T>::store(row, m);
    StateIO<T>::store(row + kHeadDim, sg);
    StateIO<T>::store(row + 2 * kHeadDim, a);
  }
}

// ---- online prefill (docs/reference/online-mtp.md §5.2, §6.2) -----------------------------------------------------
// Every load of a launch reads the pre-launch state: a trailing segment's store must not overtake a closing segment's
// load of the same row (a plain extend that starts inside a chunk and crosses a boundary: both use bank 0). The hazard
// is per channel, so a block may order it for its own channels. Two launch paths keep that order:
//   fused (the verify shape, tables of up to kMaxFusedSegments records): one kernel, a block per segment. A block
//     whose segment loads or stores state scans the table; a closing segment whose load row a trailing segment
//     stores is left to that trailing segment's block, which computes it (load, fold, emit) before its own store, in
//     program order. A verify batch (trailing parts into bank 1, loads from bank 0) has no such pair: one kernel, two
//     dependent global round trips (the record, then the rows with the scanned records) before the stores.
//   two-pass (long segments, where a pair's serial fold costs more than a second launch, and large tables, where the
//     scans would): pass 0 runs the closing segments, pass 1 the trailing ones as a programmatic dependent launch
//     (its blocks start while pass 0 runs, fold, and wait for pass 0 only before the state store: griddepcontrol.wait).
// Shape <kLanes, kGroups> (host-chosen from the mean segment length, LaunchPrefill): block = kLanes·kGroups threads,
// grid = (numSegments, 128 / kLanes); a block owns one segment and 4·kLanes channels; thread (lane, group) folds
// channels c..c+3 (float4 loads) of tokens j ≡ group (mod kGroups), kBatch tokens' loads in flight at a time, online
// softmax in fp32 (__expf, whose error docs/reference/online-mtp.md §5.4 budgets; IEEE division); the groups'
// partials merge through shared memory in a tree.
template <int kThreads>
__host__ __device__ constexpr int BatchOf() {
  return kThreads >= 512 ? 4 : 8;
}
template <int kThreads>
__host__ __device__ constexpr int
MinBlocksOf() {  // <= 64 registers at 512 threads, <= 128 at 256, <= 168 at 128 (no spills there)
  return kThreads >= 256 ? 2 : 3;
}
constexpr float kEmptyMax = -FLT_MAX;  // an empty partial (max, 0, 0): exp(kEmptyMax - m) = 0 for any real m
// The fused kernel's table limit (its hazard bitmap's bits): every block of it may scan the whole table.
constexpr int kMaxFusedSegments = 512;

struct SegmentInfo {
  int64_t first;  // input row of the segment's first token
  int32_t len, c0, loadRow, storeRow;
  bool closes, needLoad;
};
constexpr int32_t kSegPadding = -1;  // CheckSegment: a padding record (seqLen <= 0)

struct SegmentRecord {
  int32_t seqLen, lastRow, len, loadRow, storeRow;
};
__device__ __forceinline__ SegmentRecord LoadRecord(const PrefillParams& p, int i) {
  const int32_t* seg = p.segments + static_cast<int64_t>(i) * kSegmentFields;
  return {__ldg(seg), __ldg(seg + 1), __ldg(seg + 2), __ldg(seg + 3), __ldg(seg + 4)};
}
// Parses a record (docs/reference/online-mtp.md §6.2) into s; returns kErrNone, kSegPadding or the error code (bad
// value in badVal). No side effects: the table scans use it on other blocks' records.
__device__ __forceinline__ int32_t CheckSegment(const PrefillParams& p, const SegmentRecord& r, SegmentInfo& s,
                                                int32_t& badVal) {
  s.loadRow = r.loadRow;
  s.storeRow = r.storeRow;
  if (r.seqLen <= 0) return kSegPadding;
  const int c1 = ((r.seqLen - 1) & (kChunk - 1)) + 1;
  s.closes = c1 == kChunk;
  s.len = r.len;
  s.c0 = r.len >= 1 && r.len <= kChunk ? c1 - r.len : -1;  // no int32 overflow for a wild len
  s.first = static_cast<int64_t>(r.lastRow) - r.len + 1;
  s.needLoad = s.c0 != 0 && s.loadRow >= 0;
  if (s.c0 < 0) return badVal = r.len, kErrSegLen;
  if (s.first < 0 || r.lastRow >= p.kvRows) return badVal = r.lastRow, kErrSegLastRow;
  if (s.needLoad && s.loadRow >= p.stateRows) return badVal = s.loadRow, kErrSegLoadRow;
  if (!s.closes && (s.storeRow < 0 || s.storeRow >= p.stateRows)) return badVal = s.storeRow, kErrSegStoreRow;
  return kErrNone;
}

// Record i for this block. kPass 0: closing segments only, 1: trailing only, 2: both (fused). Returns false for
// padding, the other pass's segments, and bad rows (reported once, by thread 0 of the segment's first block, then
// skipped).
template <int kPass>
__device__ __forceinline__ bool ReadSegment(const PrefillParams& p, int i, SegmentInfo& s) {
  int32_t badVal = 0;
  const int32_t code = CheckSegment(p, LoadRecord(p, i), s, badVal);
  if (code == kSegPadding) return false;
  if (kPass != 2 && (kPass == 0) != s.closes) return false;
  if (code == kErrNone) return true;
  if (blockIdx.y == 0 && threadIdx.x == 0) Report(p.err, code, i, badVal, kKPrefill);
  return false;
}

__device__ __forceinline__ float4 Max4(float4 a, float4 b) {
  return make_float4(fmaxf(a.x, b.x), fmaxf(a.y, b.y), fmaxf(a.z, b.z), fmaxf(a.w, b.w));
}
__device__ __forceinline__ float4 Exp4(float4 a, float4 m) {  // e^(a - m) per channel (MUFU.EX2; -inf gives 0)
  return make_float4(__expf(a.x - m.x), __expf(a.y - m.y), __expf(a.z - m.z), __expf(a.w - m.w));
}
__device__ __forceinline__ float4 Mul4(float4 a, float4 b) {
  return make_float4(a.x * b.x, a.y * b.y, a.z * b.z, a.w * b.w);
}
__device__ __forceinline__ float4 Fma4(float4 a, float4 b, float4 c) {  // a·b + c
  return make_float4(fmaf(a.x, b.x, c.x), fmaf(a.y, b.y, c.y), fmaf(a.z, b.z, c.z), fmaf(a.w, b.w, c.w));
}
__device__ __forceinline__ float4 Div4(float4 a, float4 b) {
  return make_float4(a.x / b.x, a.y / b.y, a.z / b.z, a.w / b.w);
}

// A partial softmax over some tokens, per channel: max m, sum σ = Σ e^(s−m), unnormalised n = Σ e^(s−m)·kv.
struct Partial4 {
  float4 m, sg, n;
};
__device__ __forceinline__ Partial4 EmptyPartial() {
  const float4 z = make_float4(0.f, 0.f, 0.f, 0.f);
  return {make_float4(kEmptyMax, kEmptyMax, kEmptyMax, kEmptyMax), z, z};
}
__device__ __forceinline__ Partial4 Merge(const Partial4& a, const Partial4& b) {
  const float4 m = Max4(a.m, b.m);
  const float4 wa = Exp4(a.m, m), wb = Exp4(b.m, m);
  return {m, Fma4(a.sg, wa, Mul4(b.sg, wb)), Fma4(a.n, wa, Mul4(b.n, wb))};
}

// kBatch tokens j = base + t·kGroups of one thread: kv and s = score + ape.
template <int kBatch>
struct TokenBatch {
  float4 kv[kBatch], sc[kBatch];
};
template <int kGroups, int kBatch>
__device__ __forceinline__ void LoadBatch(const PrefillParams& p, const SegmentInfo& s, int base, int c,
                                          TokenBatch<kBatch>& b) {
#pragma unroll
  for (int t = 0; t < kBatch; ++t) {
    // Slots past the end load the segment's last token and are masked after the loads: no branch sits between a
    // batch's loads, so every one of them is in flight before the first use (a guarded load would end its basic
    // block with the add that waits for it, one round trip per token).
    const int j = base + t * kGroups;
    const int jj = min(j, s.len - 1);  // row first + jj <= lastRow < kvRows, ape row c0 + jj < 128 (CheckSegment)
    const float* row = p.kvScore + (s.first + jj) * kKvScoreCols + c;
    const float4 kv = LoadIn4(row);
    const float4 sc = Add4(LoadIn4(row + kHeadDim), LoadIn4(p.ape + (s.c0 + jj) * kHeadDim + c));
    const bool in = j < s.len;
    b.kv[t] = in ? kv : make_float4(0.f, 0.f, 0.f, 0.f);
    b.sc[t] = in ? sc : make_float4(kEmptyMax, kEmptyMax, kEmptyMax, kEmptyMax);
  }
}
template <int kBatch>
__device__ __forceinline__ Partial4 FoldBatch(const Partial4& acc, const TokenBatch<kBatch>& b) {
  float4 m = acc.m;
#pragma unroll
  for (int t = 0; t < kBatch; ++t) m = Max4(m, b.sc[t]);
  const float4 scale = Exp4(acc.m, m);
  float4 sg = Mul4(acc.sg, scale), n = Mul4(acc.n, scale);
#pragma unroll
  for (int t = 0; t < kBatch; ++t) {
    const float4 e = Exp4(b.sc[t], m);  // 0 for an empty slot
    sg = Add4(sg, e);
    n = Fma4(e, b.kv[t], n);
  }
  return {m, sg, n};
}

// The stored partial of a segment (normalised acc), loaded by group 0 (the threads that merge and store).
struct Stored4 {
  float4 m, sg, a;
};
template <typename T>
__device__ __forceinline__ Stored4 LoadStored(const PrefillParams& p, const SegmentInfo& s, int group, int c) {
  Stored4 r{make_float4(0.f, 0.f, 0.f, 0.f), make_float4(0.f, 0.f, 0.f, 0.f), make_float4(0.f, 0.f, 0.f, 0.f)};
  if (s.needLoad && group == 0) {
    const T* lr = static_cast<const T*>(p.state) + static_cast<int64_t>(s.loadRow) * kRowElems + c;
    r.m = Vec4IO<T>::load(lr);
    r.sg = Vec4IO<T>::load(lr + kHeadDim);
    r.a = Vec4IO<T>::load(lr + 2 * kHeadDim);
  }
  return r;
}

// The segment's (max, sum, normalised acc) for channels c..c+3, valid in group 0; every thread of the block must call
// it (tree barriers). `first` holds the thread's first batch, already issued.
template <int kLanes, int kGroups, int kBatch>
__device__ __forceinline__ Stored4 FoldSegment(const PrefillParams& p, const SegmentInfo& s, int lane, int group, int c,
                                               const TokenBatch<kBatch>& first, const Stored4& st) {
  Partial4 acc = FoldBatch<kBatch>(EmptyPartial(), first);
  for (int base = group + kGroups * kBatch; base < s.len; base += kGroups * kBatch) {
    TokenBatch<kBatch> b;
    LoadBatch<kGroups, kBatch>(p, s, base, c, b);
    acc = FoldBatch<kBatch>(acc, b);
  }
  if constexpr (kGroups > 1) {
    __shared__ Partial4 part[kGroups][kLanes];
    part[group][lane] = acc;
    __syncthreads();
#pragma unroll
    for (int h = kGroups / 2; h >= 1; h /= 2) {
      if (group < h) {
        acc = Merge(acc, part[group + h][lane]);
        part[group][lane] = acc;
      }
      __syncthreads();  // also: every read of `part` is done before a later call writes it
    }
  }
  // acc covers every token (len >= 1: m finite, σ >= 1). Merge the stored partial: w1 = σ1·e^(m1−m), w2 = e^(m2−m).
  if (!s.needLoad) return {acc.m, acc.sg, Div4(acc.n, acc.sg)};
  const float4 m = Max4(st.m, acc.m);
  const float4 w1 = Mul4(st.sg, Exp4(st.m, m)), w2 = Exp4(acc.m, m);
  const float4 sg = Fma4(acc.sg, w2, w1);
  return {m, sg, Div4(Fma4(st.a, w1, Mul4(acc.n, w2)), sg)};
}

template <typename T>
__device__ __forceinline__ void EmitOrStore(const PrefillParams& p, int i, const SegmentInfo& s, int c,
                                            const Stored4& r) {
  if (s.closes) {
    *reinterpret_cast<float4*>(p.out + static_cast<int64_t>(i) * kHeadDim + c) = r.a;  // output row i < numSegments
    return;
  }
  T* sr = static_cast<T*>(p.state) + static_cast<int64_t>(s.storeRow) * kRowElems + c;
  Vec4IO<T>::store(sr, r.m);
  Vec4IO<T>::store(sr + kHeadDim, r.sg);
  Vec4IO<T>::store(sr + 2 * kHeadDim, r.a);
}

// Two-pass path: the stored partial and the first batch are issued before anything waits; pass 0 writes no state, so
// pass 1 may read before the grid-dependency wait.
template <typename T, int kLanes, int kGroups, int kPass>
__device__ __forceinline__ void PrefillSegment(const PrefillParams& p) {
  constexpr int kBatch = BatchOf<kLanes * kGroups>();
  const int i = blockIdx.x;
  const int lane = threadIdx.x % kLanes, group = threadIdx.x / kLanes;
  const int c = (blockIdx.y * kLanes + lane) * 4;  // < (128 / kLanes)·kLanes·4 = 512
  SegmentInfo s;
  if (!ReadSegment<kPass>(p, i, s)) return;  // block-uniform: before any barrier
  const Stored4 st = LoadStored<T>(p, s, group, c);
  TokenBatch<kBatch> first;
  LoadBatch<kGroups, kBatch>(p, s, group, c, first);
  const Stored4 r = FoldSegment<kLanes, kGroups, kBatch>(p, s, lane, group, c, first, st);
  if (group != 0) return;
  if constexpr (kPass == 1) PdlWait();  // pass 0 has read every row it loads
  EmitOrStore<T>(p, i, s, c, r);
}

template <typename T, int kLanes, int kGroups, int kPass>
__global__ void __launch_bounds__(kLanes* kGroups, MinBlocksOf<kLanes * kGroups>())
    PrefillKernel(const PrefillParams p) {
  if constexpr (kPass == 0) PdlLaunchDependents();  // pass 1 may start now; its state stores still wait for us
  PrefillSegment<T, kLanes, kGroups, kPass>(p);
  // One thread of pass 1 always waits, so pass 1 never completes before pass 0 (what follows in the stream waits for
  // pass 1 only), even when no block of it stores.
  if constexpr (kPass == 1)
    if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0) PdlWait();
}

// Fused path (numSegments <= kMaxFusedSegments, host-checked). The scan's loads go out behind the segment's own first
// batch, so the verify shape waits for one round trip of rows and records together.
template <typename T, int kLanes, int kGroups>
__global__ void __launch_bounds__(kLanes* kGroups, MinBlocksOf<kLanes * kGroups>())
    PrefillFusedKernel(const PrefillParams p) {
  constexpr int kThreads = kLanes * kGroups, kBatch = BatchOf<kThreads>(), kWords = kMaxFusedSegments / 32;
  const int i = blockIdx.x;
  {  // the segment's record into L2 while the previous kernel finishes (see DecodeKernel)
    if (threadIdx.x == 0) PrefetchL2(p.segments + static_cast<int64_t>(i) * 5);
    PdlWait();
    PdlLaunchDependents();
  }
  const int lane = threadIdx.x % kLanes, group = threadIdx.x / kLanes;
  const int c = (blockIdx.y * kLanes + lane) * 4;
  SegmentInfo s;
  if (!ReadSegment<2>(p, i, s)) return;  // block-uniform
  const Stored4 st = LoadStored<T>(p, s, group, c);
  TokenBatch<kBatch> first;
  LoadBatch<kGroups, kBatch>(p, s, group, c, first);
  // Closing segments that load the row this trailing segment stores (bit j of `lent`, one warp's ballot per word), or,
  // for a closing segment with a load, whether a trailing segment stores its load row (then that block computes this
  // one). No barrier before the scan's loads, so they go out behind the first batch.
  __shared__ uint32_t lent[kWords];
  bool pair = false;
  if (!s.closes || s.needLoad) {  // block-uniform
    // Every record this thread scans is loaded before the first is checked (a clamped index past the end).
    constexpr int kScan = kMaxFusedSegments / kThreads;
    SegmentRecord rec[kScan];
#pragma unroll
    for (int k = 0; k < kScan; ++k)
      rec[k] = LoadRecord(p, min(k * kThreads + static_cast<int>(threadIdx.x), p.numSegments - 1));
    int found = 0;
#pragma unroll
    for (int k = 0; k < kScan; ++k) {
      const int j = k * kThreads + static_cast<int>(threadIdx.x);
      SegmentInfo o;
      int32_t badVal = 0;
      bool hit = false;
      if (j < p.numSegments && j != i && CheckSegment(p, rec[k], o, badVal) == kErrNone)
        hit = s.closes ? !o.closes && o.storeRow == s.loadRow : o.closes && o.needLoad && o.loadRow == s.storeRow;
      found |= hit;
      const uint32_t word = __ballot_sync(0xffffffffu, hit);
      const int w0 = k * kThreads + static_cast<int>(threadIdx.x & ~31u);  // this warp's first j
      if (!s.closes && (threadIdx.x & 31) == 0 && w0 < p.numSegments) lent[w0 / 32] = word;
    }
    pair = __syncthreads_or(found) != 0;  // block-uniform; also orders the `lent` writes before the reads
  }
  if (s.closes && pair) return;  // the trailing segment's block emits this one
  if (pair) {
    // The closing segments reading our store row: computed here, before our store (same threads, program order).
    for (int w = 0; w * 32 < p.numSegments; ++w) {
      for (uint32_t bits = lent[w]; bits != 0; bits &= bits - 1) {
        const int j = w * 32 + __ffs(bits) - 1;
        SegmentInfo o;
        int32_t badVal = 0;
        CheckSegment(p, LoadRecord(p, j), o, badVal);  // kErrNone (the scan)
        const Stored4 ost = LoadStored<T>(p, o, group, c);
        TokenBatch<kBatch> ofirst;
        LoadBatch<kGroups, kBatch>(p, o, group, c, ofirst);
        const Stored4 r = FoldSegment<kLanes, kGroups, kBatch>(p, o, lane, group, c, ofirst, ost);
        if (group == 0) EmitOrStore<T>(p, j, o, c, r);
      }
    }
    LoadBatch<kGroups, kBatch>(p, s, group, c, first);  // again: the first issue's registers were not kept live
  }
  const Stored4 r = FoldSegment<kLanes, kGroups, kBatch>(p, s, lane, group, c, first, st);
  if (group == 0) EmitOrStore<T>(p, i, s, c, r);
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
  if (p.variant != kWpScalar) return LaunchDecodeVariant(p, s);
#endif
  if (p.variant != kWpScalar || !ValidSplit(p.split)) return cudaErrorInvalidValue;
  const dim3 grid(p.batch, p.split), block(kHeadDim / p.split);  // batch <= 2^31 − 1, split <= 16
  // Chained, with its loads aimed into L2 before the wait: 0.3 to 0.6 µs faster than a plain launch (same run,
  // docs/benchmarks.md, D28).
  return p.stateType == kF32 ? LaunchOn(DecodeKernel<float>, grid, block, s, true, p)
                             : LaunchOn(DecodeKernel<__nv_bfloat16>, grid, block, s, true, p);
}

namespace {

template <typename T, int kLanes, int kGroups>
cudaError_t LaunchPrefillShape(const PrefillParams& p, cudaStream_t s) {
  const dim3 grid(p.numSegments, kHeadDim / 4 / kLanes), block(kLanes * kGroups);
  PrefillKernel<T, kLanes, kGroups, 0><<<grid, block, 0, s>>>(p);
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return e;
  return LaunchOn(PrefillKernel<T, kLanes, kGroups, 1>, grid, block, s, true, p);
}

// The fused single kernel (the verify shape; docs/reference/online-mtp.md §6.2 tables of up to kMaxFusedSegments).
cudaError_t LaunchPrefillFused(const PrefillParams& p, cudaStream_t s) {
  const dim3 grid(p.numSegments, 1), block(128);
  // Chained, its record prefetched before the wait: 0.1 µs faster on the verify rows (same run, docs/benchmarks.md).
  return p.stateType == kF32 ? LaunchOn(PrefillFusedKernel<float, 128, 1>, grid, block, s, true, p)
                             : LaunchOn(PrefillFusedKernel<__nv_bfloat16, 128, 1>, grid, block, s, true, p);
}

// Shape by the mean tokens per segment (input rows / segments: the lengths themselves are on the device). A verify
// batch (<= 8 tokens per segment, tables padded to the token count) takes one 128-thread block per segment, each
// thread 4 channels of all its tokens, in the fused kernel up to kMaxFusedSegments records (its table scans grow with
// the table's square); a prompt cut into whole chunks 8 blocks of 256 threads per segment (16 token groups x 16
// lanes, 8 tokens of a thread in flight: 128 tokens in one round, a 4,096-token chunk in 256 blocks, two per SM);
// between them 2 blocks of 256. Any shape computes every segment (a long segment in the verify shape loops).
template <typename T>
cudaError_t LaunchPrefillOf(const PrefillParams& p, cudaStream_t s) {
  const int64_t meanTokens = p.kvRows / p.numSegments;
  if (meanTokens < 12)
    return p.numSegments <= kMaxFusedSegments ? LaunchPrefillFused(p, s) : LaunchPrefillShape<T, 128, 1>(p, s);
  if (meanTokens < 48) return LaunchPrefillShape<T, 64, 4>(p, s);
  return LaunchPrefillShape<T, 16, 16>(p, s);
}
}  // namespace

cudaError_t LaunchPrefill(const PrefillParams& p, cudaStream_t s) {
  if (p.numSegments <= 0) return cudaSuccess;
  return p.stateType == kF32 ? LaunchPrefillOf<float>(p, s) : LaunchPrefillOf<__nv_bfloat16>(p, s);
}

}  // namespace online_mtp
}  // namespace dsv4kv
