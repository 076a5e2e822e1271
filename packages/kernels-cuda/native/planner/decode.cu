// Decode plans (docs/reference/planner.md §6): one thread per request, one status record per warp.
// Params: DecodeParams (plan_kernels.cuh), repacked by LaunchDecode into the compact DecodeRingArgs / DecodePagedArgs
// the kernels read. Preconditions: DecodePrecondition (below, each bound derived there).
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <type_traits>

#include "planner/legacy.cuh"
#include "planner/loads.cuh"
#include "planner/plan_kernels.cuh"
#include "planner/plan_launch.h"
#include "planner/slot_math.cuh"
#include "planner/status.cuh"

namespace dsv4kv {
namespace {

constexpr int kDecodeThreads = 128;  // decode block (32 when B <= 32): one warp record each, no block barrier

// One thread per request, one status record per warp (records [0, warps)), no shared memory, no barrier.

// A warp's status record, in two steps so that the clean case costs no store after the rows: lane 0 writes the clean
// record first (DecodeStatusClean; the stores overlap the loads), and a warp that saw an error overwrites it at the
// end (DecodeRows; same thread, so program order makes the error record the one that stays). The clean record writes
// the fields a clean record defines: `code`, the counts (0 for decode) and `grid`; index, value and aux mean
// something only when code != 0 (PlanStatus; docs/decisions.md D6).
// The clean record is three stores (WriteCleanRecord), left for the compiler to place (docs/decisions.md D17).
__device__ __forceinline__ void DecodeStatusClean(PlanStatus* rec, int lane, int32_t records) {
  if (lane == 0) WriteCleanRecord(rec, 0, 0, records);
}

// What every decode kernel does around its rows: one thread per request (a grid-stride loop only when kLoop), S and
// the pool index loaded together, the status protocol above. `fast(s64, rid64, out)` computes the common row and
// returns false when its conditions do not hold; then `slow(i, s64, rid64, err)` computes the row with every check
// and notes the first error in `err`. Errors cost the common path one flag: the LaneErr exists only on the slow path,
// and the warp's record is written only when some lane noted one (one vote).
// Without kLoop the loads go first and take no branch: a thread past the batch (batch >= 1, the launcher's check)
// repeats the last request's loads and stores nothing.
template <typename LenT, bool kLoop, typename FastFn, typename SlowFn>
__device__ __forceinline__ void DecodeRows(uint32_t* plan_d, PlanStatus* status, const void* seq_lens,
                                           const int64_t* rids, int32_t batch, int32_t records, FastFn fast,
                                           SlowFn slow) {
  const int lane = threadIdx.x & 31;
  const int32_t tid = blockIdx.x * blockDim.x + threadIdx.x;
  PlanStatus* const rec = status + (tid >> 5);
  bool noted = false;
  LaneErr err;
  // The fast row is computed whether or not the thread has a request (`has`), so no branch precedes the loads and
  // the assembler cannot sink the S load into the `has` branch, behind the status stores.
  auto one = [&](int32_t i, int64_t s64, int64_t rid64, bool has) {
    uint4 out;
    if (!fast(s64, rid64, out) && has) {
      if (!noted) err = LaneErr{0, 0, 0, 0};
      out = slow(i, s64, rid64, err);  // notes only the thread's first error
      noted = err.code != kErrNone;
    }
    return out;
  };
  if constexpr (!kLoop) {
    const bool has = tid < batch;
    const int32_t i = has ? tid : batch - 1;
    const int64_t s64 = LoadLen<LenT>(seq_lens, i);  // independent loads: S and the pool index
    const int64_t rid64 = rids ? Ld64(rids + i) : i;
    DecodeStatusClean(rec, lane, records);
    const uint4 out = one(i, s64, rid64, has);
    if (has) reinterpret_cast<uint4*>(plan_d)[i] = out;
  } else {
    DecodeStatusClean(rec, lane, records);
    for (int32_t i = tid; i < batch; i += gridDim.x * blockDim.x) {
      const int64_t s64 = LoadLen<LenT>(seq_lens, i);
      const int64_t rid64 = rids ? Ld64(rids + i) : i;
      reinterpret_cast<uint4*>(plan_d)[i] = one(i, s64, rid64, true);
    }
  }
  if (__any_sync(kFull, noted)) {  // every lane votes (blockDim is a multiple of 32)
    const LaneErr w = WarpErr(noted ? err : LaneErr{0, 0, 0, 0});
    if (lane == 0) WriteRecord(rec, w, 0, 0, records);
  }
}

// The checked decode rows' first rule (docs/reference/planner.md §6): S must be an int32 and >= 1; notes the error
// otherwise.
__device__ __forceinline__ bool DecodeSeqOk(int32_t i, int64_t s64, LaneErr& err) {
  if (NotInt32(s64)) {
    Note(err, kErrNarrow, i, s64, 0);
    return false;
  }
  if (s64 < 1) {
    Note(err, kErrDecodeSeq, i, s64, 0);
    return false;
  }
  return true;
}

// Request-ring and legacy decode read only these: 56 bytes, one 64-byte constant-cache line, where DecodeParams is
// 168 bytes over three, so the kernel's parameters cost one constant-cache fetch. Built from DecodeParams by
// LaunchDecode.
struct DecodeRingArgs {
  uint32_t* plan_d;
  PlanStatus* status;
  const void* seq_lens;
  const int64_t* rids;
  int32_t batch;
  int32_t ring;  // R (request ring; unused by legacy)
  FastDiv ring_div;
  int32_t max_rid;  // SlotParams::max_rid
  int32_t records;  // status records this launch writes (warps), from the launcher
};
static_assert(sizeof(DecodeRingArgs) <= 64, "one constant-cache line");

// The docs/reference/planner.md §6 row of request i with every check, for the rare request the fast path does not take;
// notes the first error and returns the row upstream's kernel would write ({S, -1, -1, -1} for a refused request).
template <int CR, bool kLegacy>
__device__ __forceinline__ uint4 DecodeRingChecked(const DecodeRingArgs a, int32_t i, int64_t s64, int64_t rid64,
                                                   LaneErr& err) {
  const int32_t s = static_cast<int32_t>(s64);
  const uint4 out = make_uint4(static_cast<uint32_t>(s), 0xffffffffu, 0xffffffffu, 0xffffffffu);
  if (!DecodeSeqOk(i, s64, err)) return out;
  if (rid64 < 0) {
    Note(err, kErrRidNeg, i, rid64, 0);
    return out;
  }
  if (rid64 > a.max_rid && (kLegacy || rid64 > INT_MAX)) {  // legacy: CheckRid's bound; ring: no slot fits int32
    Note(err, kErrSlotOverflow, i, rid64, 0);
    return out;
  }
  const int32_t rid = static_cast<int32_t>(rid64), p1 = s - 1, p0 = max(p1 - CR, 0);
  if constexpr (kLegacy) {
    return make_uint4(static_cast<uint32_t>(s), static_cast<uint32_t>(LegacySlot<CR>(rid, p1)),
                      static_cast<uint32_t>(LegacyPage<CR>(rid, p0)), static_cast<uint32_t>(LegacyPage<CR>(rid, p1)));
  }
  // rid > max_rid: a slot may or may not fit int32 depending on p % R; check each (write slot first, as
  // docs/reference/planner.md §6 orders).
  const int64_t w64 = static_cast<int64_t>(rid) * a.ring + Rem(a.ring_div, p1);
  const int64_t r64 = static_cast<int64_t>(rid) * a.ring + Rem(a.ring_div, p0);
  if (w64 > INT_MAX) Note(err, kErrSlotOverflow, i, rid, p1);
  if (r64 > INT_MAX) Note(err, kErrSlotOverflow, i, rid, p0);
  const int32_t w = w64 > INT_MAX ? 0 : static_cast<int32_t>(w64);
  const int32_t r0 = r64 > INT_MAX ? 0 : static_cast<int32_t>(r64);
  return make_uint4(static_cast<uint32_t>(s), static_cast<uint32_t>(w), static_cast<uint32_t>(r0 / CR),
                    static_cast<uint32_t>(w / CR));
}

template <int CR, bool kLegacy, typename LenT, bool kLoop>
__global__ void __launch_bounds__(kDecodeThreads) DecodeRingKernel(const DecodeRingArgs a) {
  auto fast = [&](int64_t s64, int64_t rid64, uint4& out) {
    if (!(s64 >= 1 && (sizeof(LenT) == 4 || s64 <= INT_MAX) && rid64 >= 0 && rid64 <= a.max_rid)) return false;
    // 1 <= S <= INT32_MAX and rid <= max_rid: every slot fits int32, so int32 arithmetic is exact, and the slots
    // are >= 0, so /cr is a shift.
    const int32_t s = static_cast<int32_t>(s64), rid = static_cast<int32_t>(rid64), p1 = s - 1, p0 = max(p1 - CR, 0);
    if constexpr (kLegacy) {
      out = make_uint4(static_cast<uint32_t>(s), static_cast<uint32_t>(LegacySlot<CR>(rid, p1)),
                       static_cast<uint32_t>(LegacyPage<CR>(rid, p0)), static_cast<uint32_t>(LegacyPage<CR>(rid, p1)));
    } else {
      const uint32_t base = static_cast<uint32_t>(rid) * static_cast<uint32_t>(a.ring);
      const uint32_t w = base + static_cast<uint32_t>(Rem(a.ring_div, p1));
      const uint32_t r0 = base + static_cast<uint32_t>(Rem(a.ring_div, p0));
      out = make_uint4(static_cast<uint32_t>(s), w, r0 / CR, w / CR);
    }
    return true;
  };
  auto slow = [&](int32_t i, int64_t s64, int64_t rid64, LaneErr& err) {
    return DecodeRingChecked<CR, kLegacy>(a, i, s64, rid64, err);
  };
  DecodeRows<LenT, kLoop>(a.plan_d, a.status, a.seq_lens, a.rids, a.batch, a.records, fast, slow);
}

// Paged c4 decode reads these: everything the loads need (inputs, tables and their bounds) in the first 48 bytes, one
// 64-byte constant-cache line, the slot arithmetic and the outputs after it (88 bytes; DecodeParams is 168). Built
// from DecodeParams by LaunchDecode.
struct DecodePagedArgs {
  const void* seq_lens;
  const int64_t* rids;
  const int32_t* r2t;  // nullptr = identity
  const int32_t* f2s;  // nullptr = identity
  int32_t batch;
  int32_t r2t_stride;  // <= INT32_MAX (the binding's range)
  int32_t r2t_rows;    // <= INT32_MAX
  uint32_t f2s_len;    // min(f2s_len, 2^31): locations are int32, so above 2^31 entries every location >= 0 is in range
  FastDiv ring_div;
  FastDiv sps_div;
  uint32_t* plan_d;
  PlanStatus* status;
  int32_t records;  // status records this launch writes (warps), from the launcher
};

// The docs/reference/planner.md §6 paged row with every check (the original order: S, pool index, then slot(p1),
// slot(p0)), for the rare request the fast path does not take.
template <int CR, typename LenT>
__device__ __forceinline__ uint4 DecodePagedChecked(const DecodePagedArgs& a, int32_t i, int64_t s64, int64_t rid64,
                                                    LaneErr& err) {
  const int32_t s = static_cast<int32_t>(s64);
  const uint4 out = make_uint4(static_cast<uint32_t>(s), 0xffffffffu, 0xffffffffu, 0xffffffffu);
  if (!DecodeSeqOk(i, s64, err)) return out;
  SlotParams sp{};
  sp.cr = CR;
  sp.ring = static_cast<int32_t>(a.ring_div.d);
  sp.sps = static_cast<int32_t>(a.sps_div.d);
  sp.ring_div = a.ring_div;
  sp.sps_div = a.sps_div;
  sp.r2t = a.r2t;
  sp.r2t_stride = a.r2t_stride;
  sp.r2t_rows = a.r2t_rows;
  sp.f2s = a.f2s;
  sp.f2s_len = a.f2s_len;
  sp.r2t_stride32 = a.r2t_stride;
  sp.r2t_rows32 = a.r2t_rows;
  sp.f2s_len32 = a.f2s_len;
  LaneErr rerr{0, 0, 0, 0};
  const int32_t rid = CheckRid<kPaged>(sp, rid64, i, rerr);
  if (rerr.code != kErrNone) {
    Note(err, rerr.code, rerr.index, rerr.value, rerr.aux);
    return out;
  }
  const int32_t p1 = s - 1, p0 = max(p1 - CR, 0);
  const int32_t w = Slot<kPaged>(sp, rid, i, p1, err);
  const int32_t r0 = Slot<kPaged>(sp, rid, i, p0, err) / CR;
  return make_uint4(static_cast<uint32_t>(s), static_cast<uint32_t>(w), static_cast<uint32_t>(r0),
                    static_cast<uint32_t>(w / CR));
}

// The paged slot of a location (as Slot: wrapping int32 arithmetic on a location in [0, INT32_MAX]).
__device__ __forceinline__ int32_t PagedSlotOf(const DecodePagedArgs& a, int32_t swa) {
  return static_cast<int32_t>(static_cast<uint32_t>(Quo(a.sps_div, swa)) * a.ring_div.d +
                              static_cast<uint32_t>(Rem(a.ring_div, swa)));
}

template <int CR, typename LenT, bool kLoop, int kMaps>  // kMaps: bit 0 req_to_token, bit 1 full_to_state present
__global__ void __launch_bounds__(kDecodeThreads) DecodePagedKernel(const DecodePagedArgs a) {
  constexpr bool kR2t = (kMaps & 1) != 0, kF2s = (kMaps & 2) != 0;
  auto fast = [&](int64_t s64, int64_t rid64, uint4& out) {
    // Fast path: S in [1, r2t_stride] and rid in [0, r2t_rows), so both positions p0 <= p1 < S index the table row;
    // the table values are checked below and any failure falls back to the checked path, which reports it.
    // int64 offsets and range checks on purpose: they keep both reads of each pair in flight (docs/decisions.md D17).
    if (s64 >= 1 && s64 <= a.r2t_stride && rid64 >= 0 && rid64 < a.r2t_rows && (!kF2s || a.f2s_len > 0)) {
      const int32_t s = static_cast<int32_t>(s64), p1 = s - 1, p0 = max(p1 - CR, 0);
      const int64_t row = rid64 * a.r2t_stride;
      int64_t f1 = row + p1, f0 = row + p0;
      if constexpr (kR2t) {  // both req_to_token reads in flight together
        const int32_t l1 = Ld32(a.r2t + f1), l0 = Ld32(a.r2t + f0);
        f1 = l1;
        f0 = l0;
      }
      bool ok;
      if constexpr (
          kF2s) {  // both full_to_state reads in flight together; an out-of-range location reads entry 0 instead
        const bool in1 = static_cast<uint64_t>(f1) < a.f2s_len, in0 = static_cast<uint64_t>(f0) < a.f2s_len;
        const int32_t v1 = Ld32(a.f2s + (in1 ? f1 : 0)), v0 = Ld32(a.f2s + (in0 ? f0 : 0));
        ok = in1 && in0 && v1 >= 0 && v0 >= 0;
        f1 = v1;
        f0 = v0;
      } else {
        ok = f1 >= 0 && f0 >= 0;
      }
      if (ok) {  // 0 <= locations <= INT32_MAX (int32 table entries, or identity < rows*stride)
        const int32_t w = PagedSlotOf(a, static_cast<int32_t>(f1)), s0 = PagedSlotOf(a, static_cast<int32_t>(f0));
        out = make_uint4(static_cast<uint32_t>(s), static_cast<uint32_t>(w), static_cast<uint32_t>(s0 / CR),
                         static_cast<uint32_t>(w / CR));
        return true;
      }
    }
    return false;
  };
  auto slow = [&](int32_t i, int64_t s64, int64_t rid64, LaneErr& err) {
    return DecodePagedChecked<CR, LenT>(a, i, s64, rid64, err);
  };
  DecodeRows<LenT, kLoop>(a.plan_d, a.status, a.seq_lens, a.rids, a.batch, a.records, fast, slow);
}

}  // namespace

// Each bound, derived:
//   * 1 <= batch: without the grid-stride loop a thread past the batch repeats request batch - 1's loads; batch has no
//     16-bit field and the records are warps capped by the grid-stride loop, so the binding's 2^24 is a sanity bound.
//   * cr in {4, 128}, ring and sps >= 1 (FastDiv serves divisors in [1, 2^31)).
//   * r2t_stride >= 1, r2t_rows >= 0 (DeriveSlot clamps the 32-bit copies to these).
const char* DecodePrecondition(const DecodeParams& p) {
  if (!p.seq_lens || !p.plan_d || !p.status) return "seqLens, plan and status pointers must be set";
  if (p.batch < 1 || p.batch > (1 << 24)) return "batch must be in [1, 2^24]";
  if ((p.lens64 | p.slot.legacy | p.slot.req_style) & ~1) return "flags must be 0 or 1";
  if (p.slot.cr != 4 && p.slot.cr != 128) return "cr must be 4 or 128";
  if (p.slot.ring < 1 || p.slot.sps < 1) return "ring and sps must be >= 1";
  if (p.slot.r2t_stride < 1 || p.slot.r2t_rows < 0) return "r2tStride must be >= 1 and r2tRows >= 0";
  return nullptr;
}

cudaError_t LaunchDecode(const DecodeParams& p, cudaStream_t stream) {
  if (DecodePrecondition(p)) return cudaErrorInvalidValue;
  // One thread per request: one warp for B <= 32, else blocks of 128; records are warps, capped at
  // kMaxStatusBlocks = 256 warps (8,192 threads); a grid-stride loop covers larger batches.
  const int32_t threads = p.batch <= 32 ? 32 : kDecodeThreads;
  const int32_t blocks = std::max(1, std::min((p.batch + threads - 1) / threads, kMaxStatusBlocks * 32 / threads));
  const int32_t records = blocks * threads / 32;  // one per warp, <= kMaxStatusBlocks
  auto go = [&](auto kernel, const auto& args) {
    kernel<<<blocks, threads, 0, stream>>>(args);
    return cudaGetLastError();
  };
  // c128 is always request-style (docs/reference/planner.md §4): no paged c128 kernel exists.
  const bool loop = static_cast<int64_t>(blocks) * threads < p.batch;
  if (p.slot.cr == 4 && !p.slot.legacy && !p.slot.req_style) {
    // The 32-bit copies of the table geometry (DeriveSlot).
    const DecodePagedArgs pa{p.seq_lens,
                             p.rids,
                             p.slot.r2t,
                             p.slot.f2s,
                             p.batch,
                             p.slot.r2t_stride32,
                             p.slot.r2t_rows32,
                             p.slot.f2s_len32,
                             p.slot.ring_div,
                             p.slot.sps_div,
                             p.plan_d,
                             p.status,
                             records};
    auto paged = [&](auto maps_tag) {
      constexpr int kMaps = decltype(maps_tag)::value;
      if (p.lens64)
        return loop ? go(DecodePagedKernel<4, int64_t, true, kMaps>, pa)
                    : go(DecodePagedKernel<4, int64_t, false, kMaps>, pa);
      return loop ? go(DecodePagedKernel<4, int32_t, true, kMaps>, pa)
                  : go(DecodePagedKernel<4, int32_t, false, kMaps>, pa);
    };
    switch ((p.slot.r2t ? 1 : 0) | (p.slot.f2s ? 2 : 0)) {
      case 0:
        return paged(std::integral_constant<int, 0>{});
      case 1:
        return paged(std::integral_constant<int, 1>{});
      case 2:
        return paged(std::integral_constant<int, 2>{});
      default:
        return paged(std::integral_constant<int, 3>{});
    }
  }
  const DecodeRingArgs a{p.plan_d,    p.status,        p.seq_lens,     p.rids, p.batch,
                         p.slot.ring, p.slot.ring_div, p.slot.max_rid, records};
  auto ring = [&](auto cr_tag, auto legacy_tag) {
    constexpr int CR = decltype(cr_tag)::value;
    constexpr bool kLegacy = decltype(legacy_tag)::value;
    if (p.lens64)
      return loop ? go(DecodeRingKernel<CR, kLegacy, int64_t, true>, a)
                  : go(DecodeRingKernel<CR, kLegacy, int64_t, false>, a);
    return loop ? go(DecodeRingKernel<CR, kLegacy, int32_t, true>, a)
                : go(DecodeRingKernel<CR, kLegacy, int32_t, false>, a);
  };
  using C4 = std::integral_constant<int, 4>;
  using C128 = std::integral_constant<int, 128>;
  if (p.slot.cr == 4) return p.slot.legacy ? ring(C4{}, std::true_type{}) : ring(C4{}, std::false_type{});
  return p.slot.legacy ? ring(C128{}, std::true_type{}) : ring(C128{}, std::false_type{});
}

}  // namespace dsv4kv
