// Compress-planner kernels; see plan_kernels.cuh for the design and the closed forms.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstddef>
#include <type_traits>
#include <vector>

#include "planner/plan_kernels.cuh"
#include "planner/plan_launch.h"

namespace dsv4kv {
namespace {

constexpr int kThreads =
    256;  // general prefill block: 8 warps; the per-block scan handles ceil(B/256) requests per thread
constexpr int kSmallThreads = 256;   // small-batch prefill block (at most; fewer when numQ needs fewer rows)
constexpr int kDecodeThreads = 128;  // decode block (32 when B <= 32): one warp record each, no block barrier
constexpr unsigned kFull = 0xffffffffu;

// One thread's first error (registers); combined per warp by ballot (lowest lane wins), then per block.
struct LaneErr {
  int32_t code;
  int32_t index;
  int64_t value;
  int64_t aux;
};
__device__ __forceinline__ void Note(LaneErr& e, int32_t code, int32_t index, int64_t value, int64_t aux) {
  if (e.code == kErrNone) e = LaneErr{code, index, value, aux};
}
__device__ __forceinline__ LaneErr ShflErr(const LaneErr& e, int src) {
  return LaneErr{__shfl_sync(kFull, e.code, src), __shfl_sync(kFull, e.index, src),
                 static_cast<int64_t>(__shfl_sync(kFull, static_cast<long long>(e.value), src)),
                 static_cast<int64_t>(__shfl_sync(kFull, static_cast<long long>(e.aux), src))};
}
// The warp's error: the lowest lane's. Every lane of the warp must call it (full-mask ballot).
__device__ __forceinline__ LaneErr WarpErr(const LaneErr& e) {
  const unsigned m = __ballot_sync(kFull, e.code != kErrNone);
  return m ? ShflErr(e, __ffs(m) - 1) : LaneErr{0, 0, 0, 0};
}

// The general kernel's block error lives in shared memory; thread 0 initialises it before any report (followed
// by a barrier) and writes it to the block's PlanStatus record after the last report (preceded by a barrier).
__device__ __forceinline__ void Report(LaneErr* st, int32_t code, int32_t index, int64_t value, int64_t aux) {
  if (atomicCAS(&st->code, 0, code) == 0) {  // first error of the block wins; only the winner fills the details
    st->index = index;
    st->value = value;
    st->aux = aux;
  }
}

__device__ __forceinline__ void WriteRecord(PlanStatus* out, const LaneErr& e, int32_t nc, int32_t nw,
                                            int32_t records) {
  PlanStatus r{};
  r.code = e.code;
  r.index = e.index;
  r.value = e.value;
  r.aux = e.aux;
  r.num_compress = nc;
  r.num_write = nw;
  r.grid = records;
  *out = r;
}

// A clean record: code 0, the counts and `grid` (index, value and aux are defined only when code != 0), in three
// stores instead of WriteRecord's six. Records are only 8-byte aligned (the host-array entry points place the status
// after the plan rows, at numQ * 24 or batch * 16 bytes), so the counts share one 8-byte store, not a 16-byte one.
__device__ __forceinline__ void WriteCleanRecord(PlanStatus* out, int32_t nc, int32_t nw, int32_t records) {
  out->code = kErrNone;
  *reinterpret_cast<int2*>(&out->num_compress) = make_int2(nc, nw);
  out->grid = records;
}
static_assert(offsetof(PlanStatus, num_compress) % 8 == 0 &&
                  offsetof(PlanStatus, num_write) == offsetof(PlanStatus, num_compress) + 4,
              "num_compress and num_write share one 8-byte store");

// Run-time division of 0 <= n < 2^31 (FastDiv in plan_kernels.cuh): multiply-high, add, shift; no branch.
__device__ __forceinline__ int32_t Quo(const FastDiv& f, int32_t n) {
  return static_cast<int32_t>((__umulhi(static_cast<uint32_t>(n), f.mul) + static_cast<uint32_t>(n)) >> f.shr);
}
__device__ __forceinline__ int32_t Rem(const FastDiv& f, int32_t n) {
  return n - Quo(f, n) * static_cast<int32_t>(f.d);
}
// n >= 0 divided by the compile-time ratio (a shift).
template <int CR>
__device__ __forceinline__ int32_t DivCr(int32_t n) {
  return static_cast<int32_t>(static_cast<uint32_t>(n) / CR);
}

// A length (S or E) of request i as int64: int32 inputs widen; int64 inputs (upstream's dtype) are returned as read
// and narrowed by the caller after the range check (kErrNarrow).
// Inputs are read with volatile inline PTX (ld.global.nc): the front end cannot sink a volatile asm into the branch
// that first uses its value, so S, E and the pool index go out together at the top of the kernel, not one dependent
// round trip each behind the checks. The assembler may still move a load into a conditional block after it, so a
// load that must go early is also kept out of branches (DecodeRows, the small prefill kernel's clamped index).
// History: docs/decisions.md D17.
__device__ __forceinline__ int64_t Ld64(const int64_t* ptr) {
  long long v;
  asm volatile("ld.global.nc.s64 %0, [%1];" : "=l"(v) : "l"(ptr));
  return v;
}
__device__ __forceinline__ int32_t Ld32(const int32_t* ptr) {
  int v;
  asm volatile("ld.global.nc.s32 %0, [%1];" : "=r"(v) : "l"(ptr));
  return v;
}
// Two loads predicated on `active` without a branch (when inactive nothing is read and both results are 0), so the
// small prefill kernel's table reads sit in the same basic block as the work scheduled under them.
__device__ __forceinline__ void Ld32PairIf(bool active, const int32_t* pa, const int32_t* pb, int32_t& a, int32_t& b) {
  int va = 0, vb = 0;
  asm volatile(
      "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %4, 0;\n\t@p ld.global.nc.s32 %0, [%2];\n\t@p ld.global.nc.s32 %1, "
      "[%3];\n\t}"
      : "+r"(va), "+r"(vb)
      : "l"(pa), "l"(pb), "r"(static_cast<int>(active)));
  a = va;
  b = vb;
}
template <typename LenT>
__device__ __forceinline__ int64_t LoadLen(const void* base, int32_t i) {
  if constexpr (sizeof(LenT) == 8)
    return Ld64(static_cast<const int64_t*>(base) + i);
  else
    return Ld32(static_cast<const int32_t*>(base) + i);
}
__device__ __forceinline__ bool NotInt32(int64_t v) { return v < INT_MIN || v > INT_MAX; }

template <int CR>
__device__ __forceinline__ int32_t LegacySlot(int32_t rid, int32_t p) {
  // rid <= (INT32_MAX - 127) / 128 was checked (CheckRid), so rid*128 + 127 and rid*8 + 7 fit int32.
  return CR == 4 ? rid * 8 + p % 8 : rid * 128 + p % 128;
}
template <int CR>
__device__ __forceinline__ int32_t LegacyPage(int32_t rid, int32_t p) {
  return CR == 4 ? rid * 2 + ((p / 4) & 1) : rid;
}

// The request-pool index of request b, checked for every slot function: a bad one is noted and replaced by 0 (a
// harmless in-range value), so nothing is ever read or written out of bounds.
// Addressing modes (docs/reference/planner.md §4, §7), a template parameter so each kernel holds only its own slot code
// and reads only the parameters that code needs: paged c4 (req_to_token / full_to_state), request ring (c128, or c4
// use_req_ring), legacy layout. The launcher maps SlotParams {legacy, req_style} to one of them.
enum Mode : int { kPaged = 0, kReqRing = 1, kLegacy = 2 };

template <int MODE>
__device__ __forceinline__ int32_t CheckRid(const SlotParams& sp, int64_t rid, int32_t b, LaneErr& err) {
  // One branch for the common valid case; the refusals below in their order.
  if (rid >= 0 && rid <= (MODE == kLegacy ? (INT_MAX - 127) / 128 : INT_MAX)) return static_cast<int32_t>(rid);
  if (rid < 0) {
    Note(err, kErrRidNeg, b, rid, 0);
    return 0;
  }
  // Legacy slots are rid*128 + p%128 (c128) or rid*8 + p%8 (c4): both fit int32 iff rid*128 + 127 <= INT32_MAX,
  // i.e. rid <= (INT32_MAX - 127) / 128 (written as a quotient so a huge rid cannot overflow the product).
  if (MODE == kLegacy && rid > (INT_MAX - 127) / 128) {
    Note(err, kErrSlotOverflow, b, rid, 0);
    return 0;
  }
  if (rid > INT_MAX) {  // no slot function accepts it; the TS layer refuses it with the same error
    Note(err, MODE != kPaged ? kErrSlotOverflow : kErrRidRows, b, rid, sp.r2t_rows);
    return 0;
  }
  return static_cast<int32_t>(rid);
}

// The paged slot of a SWA location 0 <= swa <= INT32_MAX (docs/reference/planner.md §4): (swa/SPS)*R + swa%R. Upstream
// computes it in int32; the TS mirror wraps the same way (Math.imul, |0): unsigned arithmetic mod 2^32. One formula for
// Slot, PairFinish and PairSlotsFast.
__device__ __forceinline__ int32_t PagedSlot(const SlotParams& sp, int32_t swa) {
  return static_cast<int32_t>(static_cast<uint32_t>(Quo(sp.sps_div, swa)) * static_cast<uint32_t>(sp.ring) +
                              static_cast<uint32_t>(Rem(sp.ring_div, swa)));
}

// Slot of position p (>= 0) of request-pool index rid (0 <= rid <= INT32_MAX), docs/reference/planner.md §4, with every
// check: the path of a request that IndexChecked refuses (the others take SlotPairChecked). On a bad index it notes the
// error and returns 0 (a harmless in-range value): nothing is ever read or written out of bounds.
template <int MODE>
__device__ __forceinline__ int32_t Slot(const SlotParams& sp, int32_t rid, int32_t b, int32_t p, LaneErr& err) {
  if constexpr (MODE != kPaged) {  // request ring (legacy callers use LegacySlot / LegacyPage instead)
    // rid < 2^31, p % R < R < 2^31: the int64 product cannot overflow; refuse what int32 cannot hold.
    const int64_t s = static_cast<int64_t>(rid) * sp.ring + Rem(sp.ring_div, p);
    if (s > INT_MAX) {
      Note(err, kErrSlotOverflow, b, rid, p);
      return 0;
    }
    return static_cast<int32_t>(s);
  } else {
    if (rid >= sp.r2t_rows) {
      Note(err, kErrRidRows, b, rid, sp.r2t_rows);
      return 0;
    }
    if (p >= sp.r2t_stride) {
      Note(err, kErrPosStride, rid, p, sp.r2t_stride);
      return 0;
    }
    // rid < r2t_rows and p < r2t_stride: the index is inside the [rows, stride] matrix (identity: < INT32_MAX).
    const int64_t idx = rid * sp.r2t_stride + p;
    const int64_t full = sp.r2t ? static_cast<int64_t>(Ld32(sp.r2t + idx)) : idx;
    int64_t swa = full;
    if (sp.f2s) {
      if (full < 0 || full >= sp.f2s_len) {
        Note(err, kErrFullRange, rid, full, p);
        return 0;
      }
      swa = sp.f2s[full];
    }
    if (swa < 0) {
      Note(err, kErrSwaNeg, rid, swa, p);
      return 0;
    }
    // swa fits int32 (an int32 table entry or an identity location < INT32_MAX) and is >= 0, so the fast division
    // applies. Upstream computes (swa/SPS)*R + swa%R in int32; the TS mirror wraps the same way (Math.imul, |0):
    // unsigned arithmetic mod 2^32.
    return PagedSlot(sp, static_cast<int32_t>(swa));
  }
}

// Whether request (rid, S) may take the checked-index path (SlotPairChecked): its index checks
// hold for every position it looks up (positions are < S), and a full_to_state table has an entry 0 (SlotPairChecked
// reads entry 0 in place of an out-of-range one). rid is already CheckRid'ed (0 <= rid <= INT32_MAX). kMaps as in
// PairR2t (-1: the tables present are decided at run time).
template <int MODE, int kMaps = -1>
__device__ __forceinline__ bool IndexChecked(const SlotParams& sp, int32_t rid, int32_t s) {
  if constexpr (MODE == kPaged) {
    const bool has_f2s = kMaps < 0 ? sp.f2s != nullptr : (kMaps & 2) != 0;
    return rid < sp.r2t_rows32 && s <= sp.r2t_stride32 && (!has_f2s || sp.f2s_len32 > 0);
  } else {
    return rid <= sp.max_rid;
  }
}

// A paged pair lookup of an IndexChecked request in its three steps, so that a kernel can issue the table reads as
// soon as it knows a row's request and finish the slots later: PrefillSmallKernel issues the req_to_token reads before
// its per-request work and the full_to_state reads before its row shape, so the two dependent round trips overlap
// that work instead of following it. Both reads of each level are issued together.
// kMaps: which tables the launch has, bit 0 req_to_token, bit 1 full_to_state, as a template parameter so that the
// kernel holds only the reads it does (-1: decided at run time).
// Locations are kept as int32 (table entries are int32; an identity location row*stride + p is < r2t_rows*stride <=
// INT32_MAX) and widened only where compared: a sign extension right after a load consumes it, and the warp would
// stall there instead of overlapping the round trip with other work.
struct PairLookup {
  int32_t full_a, full_b;  // full-pool locations (req_to_token entries, or identity row*stride + p)
  int32_t swa_a, swa_b;    // SWA locations (full_to_state entries, or the full locations)
  bool range_a, range_b;   // the full locations are inside full_to_state
};
// active = false: nothing is read (the lookup is not used).
template <int kMaps>
__device__ __forceinline__ PairLookup PairR2t(const SlotParams& sp, int32_t rid, int32_t pa, int32_t pb,
                                              bool active = true) {
  const bool has_r2t = kMaps < 0 ? sp.r2t != nullptr : (kMaps & 1) != 0;
  // 0 <= rid < r2t_rows and 0 <= pa, pb < S <= r2t_stride, all < 2^31: unsigned 32 x 32 -> 64-bit offsets.
  const uint64_t row = static_cast<uint64_t>(static_cast<uint32_t>(rid)) * static_cast<uint32_t>(sp.r2t_stride32);
  const uint64_t ia = row + static_cast<uint32_t>(pa), ib = row + static_cast<uint32_t>(pb);
  PairLookup l{0, 0, 0, 0, true, true};
  if (has_r2t) {
    Ld32PairIf(active, sp.r2t + ia, sp.r2t + ib, l.full_a, l.full_b);
  } else {  // identity: row + p < r2t_rows * r2t_stride <= INT32_MAX (the binding's identity rows)
    l.full_a = static_cast<int32_t>(ia);
    l.full_b = static_cast<int32_t>(ib);
  }
  return l;
}
template <int kMaps>
__device__ __forceinline__ void PairF2s(const SlotParams& sp, PairLookup& l, bool active = true) {
  const bool has_f2s = kMaps < 0 ? sp.f2s != nullptr : (kMaps & 2) != 0;
  l.swa_a = l.full_a;
  l.swa_b = l.full_b;
  if (has_f2s) {
    // As unsigned, a negative location is >= 2^31 >= f2s_len32: one compare each.
    l.range_a = static_cast<uint32_t>(l.full_a) < sp.f2s_len32;
    l.range_b = static_cast<uint32_t>(l.full_b) < sp.f2s_len32;
    // An out-of-range location reads entry 0 instead (IndexChecked: f2s_len > 0) and is reported by PairFinish.
    Ld32PairIf(active, sp.f2s + (l.range_a ? l.full_a : 0), sp.f2s + (l.range_b ? l.full_b : 0), l.swa_a, l.swa_b);
  }
}
// Slots of the looked-up pair, as Slot(pa) then Slot(pb) would give them (errors noted for pa first, and only when
// want_a): wrapping int32 arithmetic on a location in [0, INT32_MAX]; a refused location gives slot 0.
__device__ __forceinline__ void PairFinish(const SlotParams& sp, const PairLookup& l, int32_t rid, int32_t pa,
                                           int32_t pb, bool want_a, LaneErr& err, int32_t& sa, int32_t& sb) {
  if (want_a) {
    if (!l.range_a)
      Note(err, kErrFullRange, rid, l.full_a, pa);
    else if (l.swa_a < 0)
      Note(err, kErrSwaNeg, rid, l.swa_a, pa);
  }
  if (!l.range_b)
    Note(err, kErrFullRange, rid, l.full_b, pb);
  else if (l.swa_b < 0)
    Note(err, kErrSwaNeg, rid, l.swa_b, pb);
  const int32_t swa = l.range_a && l.swa_a >= 0 ? l.swa_a : -1;
  const int32_t swb = l.range_b && l.swa_b >= 0 ? l.swa_b : -1;
  sa = swa < 0 ? 0 : PagedSlot(sp, swa);
  sb = swb < 0 ? 0 : PagedSlot(sp, swb);
}

// PairFinish's slots without its error details: whether it would note an error (the small kernel's common path
// keeps one flag per thread and recomputes the details only when a flag is set, see PrefillSmallKernel).
// Branch-free: the slot arithmetic runs on location 0 for a refused location and the result is discarded, so the
// row stays one basic block and its other work can be scheduled under the full_to_state round trip.
__device__ __forceinline__ bool PairSlotsFast(const SlotParams& sp, const PairLookup& l, bool want_a, int32_t& sa,
                                              int32_t& sb) {
  const bool ok_a = l.range_a && l.swa_a >= 0, ok_b = l.range_b && l.swa_b >= 0;
  const int32_t va = ok_a ? l.swa_a : 0, vb = ok_b ? l.swa_b : 0;
  const int32_t slot_a = PagedSlot(sp, va);
  const int32_t slot_b = PagedSlot(sp, vb);
  sa = ok_a ? slot_a : 0;
  sb = ok_b ? slot_b : 0;
  return (want_a && !ok_a) || !ok_b;
}

// Slots of positions pa and pb (both < S) of an IndexChecked request, as Slot(pa) then Slot(pb) would give them
// (errors noted for pa first, and only when want_a), without Slot's index checks (they hold by IndexChecked) and,
// paged, with both table reads of each level issued together, so a paged lookup costs two dependent memory round
// trips for the pair instead of four. pa is always a valid position, so reading it when !want_a is safe.
template <int MODE, int kMaps = -1>
__device__ __forceinline__ void SlotPairChecked(const SlotParams& sp, int32_t rid, int32_t b, int32_t pa, int32_t pb,
                                                bool want_a, LaneErr& err, int32_t& sa, int32_t& sb) {
  (void)b;
  if constexpr (MODE != kPaged) {
    (void)want_a;
    (void)err;
    const int32_t base = rid * sp.ring;  // rid <= max_rid: base + p%R <= INT32_MAX
    sa = base + Rem(sp.ring_div, pa);
    sb = base + Rem(sp.ring_div, pb);
  } else {
    PairLookup l = PairR2t<kMaps>(sp, rid, pa, pb);
    PairF2s<kMaps>(sp, l);
    PairFinish(sp, l, rid, pa, pb, want_a, err, sa, sb);
  }
}

// Positions q < x (x >= 0) with q % SPS >= SPS - cr: the SWA-page tail clause, counted in closed form.
// (x/SPS)*cr <= x because cr <= SPS (SPS % R == 0, R % cr == 0), so nothing overflows.
template <int CR>
__device__ __forceinline__ int32_t TailBelow(int32_t x, const FastDiv& sps) {
  const int32_t q = Quo(sps, x);
  const int32_t r = (x - q * static_cast<int32_t>(sps.d)) - (static_cast<int32_t>(sps.d) - CR);
  return q * CR + (r > 0 ? r : 0);
}

struct ReqShape {
  int32_t prefix, main_start, lim, nc, nw, tail_to_lim, tail_prefix;
};

// Per-request closed forms (docs/reference/planner.md §3): firstWritePos = min(floor(S/cr)*cr - overlap, S - pad). 0 <=
// E <= S and 0 <= pad <= INT32_MAX, so S - pad cannot overflow int32; floor(S/cr)*cr <= S; prefix <= mainStart <= S.
template <int CR>
__device__ __forceinline__ ReqShape Shape(int32_t s, int32_t e, const PrefillParams& p) {
  ReqShape r;
  r.prefix = s - e;
  constexpr int32_t overlap = CR == 4 ? CR : 0;
  const int32_t first_w = min(DivCr<CR>(s) * CR - overlap, s - p.pad);
  r.main_start = max(first_w, r.prefix);
  r.lim = min(r.main_start, s);
  r.tail_prefix = p.tail ? TailBelow<CR>(r.prefix, p.slot.sps_div) : 0;
  r.tail_to_lim = p.tail ? TailBelow<CR>(r.lim, p.slot.sps_div) - r.tail_prefix : 0;
  r.nc = DivCr<CR>(s) - DivCr<CR>(r.prefix);
  r.nw = r.tail_to_lim + (s - r.main_start);
  return r;
}

// The docs/reference/planner.md §5.2 per-request checks in the CPU planner's order (plus the int64 narrowing check
// first for each field). Returns the error code (0 when the request is valid) with its value and aux.
// The accepted case is one predicate (e >= host_rules covers E >= 1 / E >= 0, and 0 <= E <= S implies S >= 0), so
// the common path has no branch chain; int32 lengths need no narrowing check.
template <typename LenT>
__device__ __forceinline__ int32_t CheckReq(const PrefillParams& p, int64_t s, int64_t e, int64_t& value,
                                            int64_t& aux) {
  aux = s;
  value = e;
  constexpr bool k32 = sizeof(LenT) == 4;
  if ((k32 || (!NotInt32(s) && !NotInt32(e))) && e >= p.host_rules && e <= s) return kErrNone;
  if (!k32 && NotInt32(s)) {
    value = s;
    aux = 0;
    return kErrNarrow;
  }
  if (s < 0) {
    value = s;
    return kErrSeqNeg;
  }
  if (!k32 && NotInt32(e)) {
    value = e;
    aux = 1;
    return kErrNarrow;
  }
  value = e;
  if (e < 0) return kErrExtendNeg;
  if (p.host_rules && e == 0) return kErrExtendZero;
  if (e > s) return kErrExtendGtSeq;
  return kErrNone;
}

__device__ __forceinline__ void StoreInvalidC(uint32_t* c, int32_t k) {
  reinterpret_cast<uint4*>(c)[k] = make_uint4(0xffffffffu, 0u, 0xffffffffu, 0xffffffffu);
}
__device__ __forceinline__ void StoreInvalidW(uint32_t* w, int32_t k) {
  reinterpret_cast<uint2*>(w)[k] = make_uint2(0xffffffffu, 0xffffffffu);
}

// Row k (position prefix + j of request b, pool index rid already checked) of the plan: its compress row at
// c_base + rankC when position+1 is a multiple of cr, its write row at w_base + rankW when it is written.
// Each slot is looked up once: slot(max(pos-cr, 0)) for a compress row with buffer_len > 0, then slot(pos), shared by
// that compress row (rp1) and the write row (the first error noted is the same as looking them up per use).
// pre (paged, checked-index rows only): the row's pair (q0, pos) already looked up by PairR2t + PairF2s; nullptr: look
// it up here.
// kDetail: note the first error with its details in err (as the host loop reports it); otherwise (the small kernel's
// common path) only return whether the row saw an error, and err is untouched: a caller that gets true re-runs the row
// with kDetail (the same lookups, the same bytes) to learn the details.
template <int CR, int MODE, bool kIdx, int kMaps, bool kDetail = true>
__device__ __forceinline__ bool EmitRow(const PrefillParams& p, int32_t k, int32_t b, int32_t j, const ReqShape& r,
                                        int32_t rid, int32_t c_base, int32_t w_base, LaneErr& err,
                                        const PairLookup* pre) {
  bool row_err = false;
  const int32_t pos = r.prefix + j;               // < S <= INT32_MAX, so pos + 1 does not overflow
  const bool is_c = ((pos + 1) & (CR - 1)) == 0;  // cr is a power of two (4 or 128)
  constexpr int32_t window = CR == 4 ? 2 * CR : CR;
  const int32_t buffer_len = window - min(j + 1, window);
  const bool main = pos >= r.main_start;
  // The tail clause is a paged-c4 rule (the host refuses cfg.tail otherwise).
  const bool tail = MODE == kPaged && p.tail && pos < r.lim &&
                    Rem(p.slot.sps_div, pos) >= static_cast<int32_t>(p.slot.sps_div.d) - CR;
  const bool is_w = main || tail;
  const int32_t q0 = max(pos - CR, 0);
  int32_t rp0 = -1, rp1 = b, loc = 0;  // buffer_len == 0: upstream stores nothing; the stage-0 (-1, b) pair stays
  if constexpr (MODE == kLegacy) {
    rp0 = LegacyPage<CR>(rid, q0);
    rp1 = LegacyPage<CR>(rid, pos);
    loc = LegacySlot<CR>(rid, pos);
  } else {
    const bool lookup_c = is_c && buffer_len > 0;
    int32_t slot_q0 = 0, slot_pos = 0;
    if constexpr (kIdx) {
      if (lookup_c || is_w) {
        if (MODE == kPaged && pre != nullptr) {
          if constexpr (kDetail)
            PairFinish(p.slot, *pre, rid, q0, pos, lookup_c, err, slot_q0, slot_pos);
          else
            row_err = PairSlotsFast(p.slot, *pre, lookup_c, slot_q0, slot_pos);
        } else {
          SlotPairChecked<MODE, kMaps>(p.slot, rid, b, q0, pos, lookup_c, err, slot_q0,
                                       slot_pos);  // no error (ring) or detailed
        }
      }
    } else {
      LaneErr local{0, 0, 0, 0};
      LaneErr& e = kDetail ? err : local;
      if (lookup_c) slot_q0 = Slot<MODE>(p.slot, rid, b, q0, e);
      if (lookup_c || is_w) slot_pos = Slot<MODE>(p.slot, rid, b, pos, e);
      if constexpr (!kDetail) row_err = local.code != kErrNone;
    }
    if (lookup_c) {
      // Slot values may be negative (upstream's int32 wrap); signed division truncates as upstream's does.
      rp0 = slot_q0 / CR;
      rp1 = slot_pos / CR;
    }
    loc = slot_pos;
  }
  if (is_c) {
    const int32_t row = c_base + (DivCr<CR>(pos) - DivCr<CR>(r.prefix));
    reinterpret_cast<uint4*>(p.plan_c)[row] =
        make_uint4(static_cast<uint32_t>(pos + 1),
                   (static_cast<uint32_t>(k) & 0xffffu) | (static_cast<uint32_t>(buffer_len) << 16),
                   static_cast<uint32_t>(rp0), static_cast<uint32_t>(rp1));
  }
  if (is_w) {
    const int32_t rank =
        main ? r.tail_to_lim + (pos - r.main_start) : TailBelow<CR>(pos, p.slot.sps_div) - r.tail_prefix;
    reinterpret_cast<uint2*>(p.plan_w)[w_base + rank] =
        make_uint2(static_cast<uint32_t>(k), static_cast<uint32_t>(loc));
  }
  return row_err;
}
template <int CR, int MODE, int kMaps, bool kDetail = true>
__device__ __forceinline__ bool EmitRowAny(bool idx_checked, const PrefillParams& p, int32_t k, int32_t b, int32_t j,
                                           const ReqShape& r, int32_t rid, int32_t c_base, int32_t w_base, LaneErr& err,
                                           const PairLookup* pre = nullptr) {
  if (MODE != kLegacy && idx_checked)
    return EmitRow<CR, MODE, true, kMaps, kDetail>(p, k, b, j, r, rid, c_base, w_base, err, pre);
  return EmitRow<CR, MODE, false, kMaps, kDetail>(p, k, b, j, r, rid, c_base, w_base, err, nullptr);
}

// EmitRow<kIdx = true, kDetail = false> as one basic block (selects and predicated stores instead of branches), for
// the small kernel's checked-index rows: the row indices and everything else that does not need the slots can then be
// scheduled under the full_to_state round trip. Returns whether the row saw an error (as EmitRow<kDetail = false>).
// Not for the legacy layout (its rows take EmitRow).
template <int CR, int MODE, int kMaps>
__device__ __forceinline__ bool EmitRowFast(const PrefillParams& p, int32_t k, int32_t b, int32_t j, const ReqShape& r,
                                            int32_t rid, int32_t c_base, int32_t w_base, const PairLookup& pre) {
  static_assert(MODE != kLegacy, "legacy rows take EmitRow");
  const int32_t pos = r.prefix + j;
  const bool is_c = ((pos + 1) & (CR - 1)) == 0;
  constexpr int32_t window = CR == 4 ? 2 * CR : CR;
  const int32_t buffer_len = window - min(j + 1, window);
  const bool main = pos >= r.main_start;
  const bool tail = MODE == kPaged && p.tail && pos < r.lim &&
                    Rem(p.slot.sps_div, pos) >= static_cast<int32_t>(p.slot.sps_div.d) - CR;
  const bool is_w = main || tail;
  const bool lookup_c = is_c && buffer_len > 0;
  const int32_t q0 = max(pos - CR, 0);
  const int32_t c_row = c_base + (DivCr<CR>(pos) - DivCr<CR>(r.prefix));
  const int32_t w_row =
      w_base + (main ? r.tail_to_lim + (pos - r.main_start) : TailBelow<CR>(pos, p.slot.sps_div) - r.tail_prefix);
  int32_t slot_q0, slot_pos;
  bool bad = false;
  if constexpr (MODE == kPaged) {
    bad = PairSlotsFast(p.slot, pre, lookup_c, slot_q0, slot_pos);
  } else {
    LaneErr none{0, 0, 0, 0};  // the request ring notes nothing on the checked-index path
    SlotPairChecked<MODE, kMaps>(p.slot, rid, b, q0, pos, lookup_c, none, slot_q0, slot_pos);
  }
  // Slot values may be negative (upstream's int32 wrap); signed division truncates as upstream's does.
  const int32_t rp0 = lookup_c ? slot_q0 / CR : -1, rp1 = lookup_c ? slot_pos / CR : b;
  if (is_c) {
    reinterpret_cast<uint4*>(p.plan_c)[c_row] =
        make_uint4(static_cast<uint32_t>(pos + 1),
                   (static_cast<uint32_t>(k) & 0xffffu) | (static_cast<uint32_t>(buffer_len) << 16),
                   static_cast<uint32_t>(rp0), static_cast<uint32_t>(rp1));
  }
  if (is_w)
    reinterpret_cast<uint2*>(p.plan_w)[w_row] = make_uint2(static_cast<uint32_t>(k), static_cast<uint32_t>(slot_pos));
  return (lookup_c || is_w) && bad;
}

// ---------------------------------------------------------------------------------------------------------------
// Small batches (1 <= B <= kSmallBatch = 32): one request per lane, everything in registers.
// kLoop (here and in the other kernels): the grid does not cover every row / request, so threads loop over a grid
// stride; without it each thread has at most one and no loop control sits on the chain.
//
// A small plan is one dependent chain per warp, so the kernel is laid out to keep the chain short (docs/decisions.md
// D8, D17):
// * Errors cost one flag on the common path. Requests, pool indices and rows only say whether they saw an error; when
//   some flag is set (one vote at the end), the warp recomputes the details in the host loop's order (CheckReq, the
//   sum, CheckRid, then every row again with EmitRow<kDetail>, which does the same lookups and rewrites the same
//   bytes).
// * Table reads start early: the req_to_token reads go out as soon as a row knows its request (after the scans and the
//   binary lifting) and overlap the batch checks and the status record; the full_to_state reads overlap the row's
//   shape shuffles. Both are guarded by the checked-index conditions (IndexChecked), so they are in bounds whatever
//   the batch turns out to be; a refused batch discards them.
template <int CR, int MODE, typename LenT>
__device__ __forceinline__ bool ReqOk(const PrefillParams& p, int64_t s, int64_t e) {
  // CheckReq's accepting predicate (0 <= host_rules <= E <= S, both int32): false exactly when CheckReq reports.
  if constexpr (sizeof(LenT) == 4) {
    const int32_t s32 = static_cast<int32_t>(s), e32 = static_cast<int32_t>(e);
    return e32 >= p.host_rules && e32 <= s32;
  } else {
    return !NotInt32(s) && !NotInt32(e) && e >= p.host_rules && e <= s;
  }
}

template <int CR, int MODE, typename LenT, bool kLoop, int kMaps>
__global__ void __launch_bounds__(kSmallThreads) PrefillSmallKernel(const PrefillParams p) {
  __shared__ LaneErr warp_err[kSmallThreads / 32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int32_t B = p.batch;  // 1..32 (the launcher picks this kernel only then)
  const bool have = lane < B;
  // One round of independent loads: S, E and the pool index of request `lane`. Lanes >= B read request 0's entries
  // (B >= 1) and ignore them, so the loads need no branch.
  const int32_t li = have ? lane : 0;
  const int64_t s64 = LoadLen<LenT>(p.seq_lens, li);
  const int64_t e64 = LoadLen<LenT>(p.extend_lens, li);
  const int64_t rid64 = p.rids ? Ld64(p.rids + li) : li;
  const bool ok = have && ReqOk<CR, MODE, LenT>(p, s64, e64);
  const int32_t s = ok ? static_cast<int32_t>(s64) : 0;
  const int32_t e = ok ? static_cast<int32_t>(e64) : 0;
  // The pool index as CheckRid returns it (0 when it refuses it) and whether the request's rows take the
  // checked-index path. rid <= INT32_MAX, so bit 31 carries the flag in the same shuffle.
  const bool rid_in =
      static_cast<uint64_t>(rid64) <= static_cast<uint64_t>(MODE == kLegacy ? (INT_MAX - 127) / 128 : INT_MAX);
  const int32_t rid = rid_in ? static_cast<int32_t>(rid64) : 0;
  const bool idx_checked = ok && rid_in && IndexChecked<MODE, kMaps>(p.slot, rid, s);
  const int32_t rid_flag =
      static_cast<int32_t>(static_cast<uint32_t>(rid) | (static_cast<uint32_t>(idx_checked) << 31));
  // Unconditional (no branch): a refused or absent request has s = e = 0, whose shape is all zeros.
  const ReqShape r = Shape<CR>(s, e, p);
  // Inclusive warp scan of E and of the packed counts nc | nw << 16. E is clamped to 65536: 32 clamped values sum
  // to < 2^22 (exact in int32), and a clamped E means sum(E) > 65535 >= numQ, a refused batch. nc, nw <= E, so
  // when the batch is accepted (sum(E) <= numQ <= 65535) every partial sum of nc and of nw is <= 65535: the low
  // half never carries into the high half. Lanes >= B add 0.
  const int32_t ev = min(e, 65536);
  const uint32_t cw = static_cast<uint32_t>(min(r.nc, 65535)) | (static_cast<uint32_t>(min(r.nw, 65535)) << 16);
  int32_t e_inc = ev;
  uint32_t cw_inc = cw;
  for (int off = 1; off < B; off <<= 1) {  // B is uniform: every lane runs the same rounds
    const int32_t oe = __shfl_up_sync(kFull, e_inc, off);
    const uint32_t oc = __shfl_up_sync(kFull, cw_inc, off);
    if (lane >= off) {
      e_inc += oe;
      cw_inc += oc;
    }
  }
  const int32_t e_tot = __shfl_sync(kFull, e_inc, B - 1);
  const uint32_t cw_tot = __shfl_sync(kFull, cw_inc, B - 1);
  const int32_t e_ex = e_inc - ev;
  const uint32_t cw_ex = cw_inc - cw;
  // Binary lifting over lanes [0, B): the largest step is the highest power of two <= B - 1.
  const int top = B > 1 ? 1 << (31 - __clz(B - 1)) : 0;

  // A row's request and its first table reads. k < e_tot and a checked-index request keep every read in bounds:
  // j = k - e_ex[b] < E_b (a clamped E_b is 65536 > any j), so q0 <= pos = prefix_b + j < S_b <= r2t_stride.
  struct RowStart {
    int32_t b, j, prefix, rid_flag;
    PairLookup look;
  };
  auto start_row = [&](int32_t k) {
    // Request of row k: the largest b < B with e_ex[b] <= k (zero-length requests are skipped; e_ex[0] = 0).
    int32_t b = 0;
    for (int step = top; step > 0; step >>= 1) {
      const int32_t cand = b + step;
      const int32_t v = __shfl_sync(kFull, e_ex, cand < B ? cand : 0);
      if (cand < B && v <= k) b = cand;
    }
    RowStart rs{b, k - __shfl_sync(kFull, e_ex, b), __shfl_sync(kFull, r.prefix, b), __shfl_sync(kFull, rid_flag, b),
                PairLookup{0, 0, 0, 0, true, true}};
    if constexpr (MODE == kPaged) {
      const int32_t pos = rs.prefix + rs.j;
      rs.look = PairR2t<kMaps>(p.slot, rs.rid_flag & 0x7fffffff, max(pos - CR, 0), pos, k < e_tot && rs.rid_flag < 0);
    }
    return rs;
  };
  // The row's shape from its request's lane.
  auto row_shape = [&](const RowStart& rs, int32_t& c_base, int32_t& w_base) {
    ReqShape rb{0, 0, 0, 0, 0, 0, 0};
    rb.prefix = rs.prefix;
    rb.main_start = __shfl_sync(kFull, r.main_start, rs.b);
    rb.lim = __shfl_sync(kFull, r.lim, rs.b);
    rb.tail_to_lim = __shfl_sync(kFull, r.tail_to_lim, rs.b);
    rb.tail_prefix = __shfl_sync(kFull, r.tail_prefix, rs.b);
    const uint32_t cwb = __shfl_sync(kFull, cw_ex, rs.b);
    c_base = static_cast<int32_t>(cwb & 0xffffu);
    w_base = static_cast<int32_t>(cwb >> 16);
    return rb;
  };
  const int32_t base0 = blockIdx.x * blockDim.x + warp * 32;  // warp-uniform, so every shuffle has all 32 lanes
  const int32_t stride = gridDim.x * blockDim.x;
  RowStart row = start_row(base0 + lane);

  // A refused request, or a sum(E) the rules refuse (in int32 on the clamped sum: a clamped E makes e_tot > 65535 >=
  // numQ, refused either way): the batch is refused.
  const bool bad = __any_sync(kFull, have && !ok) || (p.host_rules ? e_tot != p.num_q : e_tot > p.num_q);
  const int32_t n_tok = e_tot;  // <= numQ when !bad
  const int32_t nc_total = static_cast<int32_t>(cw_tot & 0xffffu);
  const int32_t nw_total = static_cast<int32_t>(cw_tot >> 16);
  // The clean record goes out now, before the rows (its stores overlap them); a block that sees an error overwrites
  // it at the end from the same thread, so program order keeps the error record.
  if (threadIdx.x == 0 && !bad) WriteCleanRecord(p.status + blockIdx.x, nc_total, nw_total, gridDim.x);
  bool row_err = false;
  LaneErr unused{0, 0, 0, 0};
  for (int32_t base = base0; base < p.num_q; base += stride) {
    const int32_t k = base + lane;
    if (bad) {  // refused input: every row becomes the invalid pattern (in bounds: k < num_q), counts stay 0
      if (k < p.num_q) {
        StoreInvalidC(p.plan_c, k);
        StoreInvalidW(p.plan_w, k);
      }
      if constexpr (!kLoop) break;
      continue;
    }
    if constexpr (kLoop) {
      if (base != base0) row = start_row(k);
    }
    if constexpr (MODE == kPaged) PairF2s<kMaps>(p.slot, row.look, k < n_tok && row.rid_flag < 0);
    int32_t c_base, w_base;
    const ReqShape rb = row_shape(row, c_base, w_base);
    if (k < n_tok) {
      if (MODE != kLegacy && row.rid_flag < 0) {
        // Paged rows (c4): the straight-line row, so the row's other work runs under the full_to_state round trip.
        // Request-ring rows read no table, so they have no round trip to hide and keep the branches (docs/decisions.md
        // D17).
        if constexpr (MODE == kPaged)
          row_err |=
              EmitRowFast<CR, MODE, kMaps>(p, k, row.b, row.j, rb, row.rid_flag & 0x7fffffff, c_base, w_base, row.look);
        else
          row_err |= EmitRowAny<CR, MODE, kMaps, false>(true, p, k, row.b, row.j, rb, row.rid_flag & 0x7fffffff, c_base,
                                                        w_base, unused, &row.look);
      } else {
        row_err |= EmitRowAny<CR, MODE, kMaps, false>(false, p, k, row.b, row.j, rb, row.rid_flag & 0x7fffffff, c_base,
                                                      w_base, unused);
      }
    }
    if (k < p.num_q) {
      if (k >= nc_total) StoreInvalidC(p.plan_c, k);
      if (k >= nw_total) StoreInvalidW(p.plan_w, k);
    }
    if constexpr (!kLoop) break;
  }
  // One vote for the common clean case. Otherwise the details, in the host loop's order: a refused request (the
  // lowest), then the sum; for an accepted batch, a bad pool index (its rows used index 0), then what the rows' slot
  // lookups found (each thread's first, the lowest lane's).
  const bool rid_err = ok && e > 0 && !rid_in;
  LaneErr werr{0, 0, 0, 0};
  if (__any_sync(kFull, bad || rid_err || row_err)) {
    if (bad) {
      LaneErr verr{0, 0, 0, 0};
      if (have) {
        int64_t v, a;
        const int32_t code = CheckReq<LenT>(p, s64, e64, v, a);
        if (code != kErrNone) verr = LaneErr{code, lane, v, a};
      }
      werr = WarpErr(verr);
      if (werr.code == kErrNone) {
        long long x = e;  // the exact sum, for the message only
        for (int off = 16; off > 0; off >>= 1) x += __shfl_xor_sync(kFull, x, off);
        werr = LaneErr{kErrExtendSum, -1, static_cast<int64_t>(x), p.num_q};
      }
    } else {
      LaneErr rerr{0, 0, 0, 0};
      if (rid_err) (void)CheckRid<MODE>(p.slot, rid64, lane, rerr);
      werr = WarpErr(rerr);
      if (werr.code == kErrNone) {
        LaneErr rowerr{0, 0, 0, 0};
        for (int32_t base = base0; base < p.num_q; base += stride) {  // the same rows, with details
          const int32_t k = base + lane;
          RowStart rs = start_row(k);
          int32_t c_base, w_base;
          const ReqShape rb = row_shape(rs, c_base, w_base);
          if (k < n_tok) {
            (void)EmitRowAny<CR, MODE, kMaps, true>(rs.rid_flag < 0, p, k, rs.b, rs.j, rb, rs.rid_flag & 0x7fffffff,
                                                    c_base, w_base, rowerr, nullptr);
          }
          if constexpr (!kLoop) break;
        }
        werr = WarpErr(rowerr);
      }
    }
  }
  if (blockDim.x == 32) {
    if (lane == 0 && werr.code != kErrNone)
      WriteRecord(p.status + blockIdx.x, werr, bad ? 0 : nc_total, bad ? 0 : nw_total, gridDim.x);
    return;
  }
  const int32_t nc_out = bad ? 0 : nc_total, nw_out = bad ? 0 : nw_total;
  if (lane == 0) warp_err[warp] = werr;
  // blockDim is uniform: every thread of the block reaches this barrier. A clean block is done (its record is out).
  if (!__syncthreads_or(werr.code != kErrNone)) return;
  if (threadIdx.x == 0) {
    LaneErr first{0, 0, 0, 0};
    for (int w = 0; w < static_cast<int>(blockDim.x >> 5); ++w) {
      if (first.code == kErrNone) first = warp_err[w];
    }
    WriteRecord(p.status + blockIdx.x, first, nc_out, nw_out, gridDim.x);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// General batches: per-block scan in shared memory.

// Block-wide exclusive scan of three int64 values (thread sums); returns the exclusive prefixes, totals in tot[].
__device__ __forceinline__ void BlockScan3(int64_t v[3], int64_t* tot) {
  __shared__ int64_t warp_tot[3][kThreads / 32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  int64_t inc[3] = {v[0], v[1], v[2]};
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
#pragma unroll
    for (int c = 0; c < 3; ++c) {
      const int64_t o = __shfl_up_sync(kFull, inc[c], off);
      if (lane >= off) inc[c] += o;
    }
  }
  if (lane == 31) {
#pragma unroll
    for (int c = 0; c < 3; ++c) warp_tot[c][warp] = inc[c];
  }
  __syncthreads();
  if (threadIdx.x == 0) {  // 8 warps: a serial scan of 8 values is cheaper than another shuffle round
#pragma unroll
    for (int c = 0; c < 3; ++c) {
      int64_t run = 0;
      for (int w = 0; w < kThreads / 32; ++w) {
        const int64_t t = warp_tot[c][w];
        warp_tot[c][w] = run;
        run += t;
      }
      tot[c] = run;
    }
  }
  __syncthreads();
#pragma unroll
  for (int c = 0; c < 3; ++c) v[c] = warp_tot[c][warp] + inc[c] - v[c];
}

template <int CR, int MODE, typename LenT, bool kLoop, int kMaps>
__global__ void __launch_bounds__(kThreads) PrefillKernel(const PrefillParams p) {
  // Dynamic shared memory: three int32 arrays of batch+1 entries (exclusive scans of E, nc, nw).
  extern __shared__ int32_t smem[];
  __shared__ int64_t tot[3];
  __shared__ LaneErr err_rec;
  if (threadIdx.x == 0) err_rec = LaneErr{0, 0, 0, 0};
  __syncthreads();
  const int32_t B = p.batch;
  int32_t* e_off = smem;
  int32_t* c_off = smem + (B + 1);
  int32_t* w_off = smem + 2 * (B + 1);

  // Phase 1: each thread owns a contiguous chunk of requests: validate, shape, thread sums.
  const int32_t per = (B + kThreads - 1) / kThreads;
  const int32_t lo = min(B, static_cast<int32_t>(threadIdx.x) * per);
  const int32_t hi = min(B, lo + per);
  int64_t sums[3] = {0, 0, 0};
  int bad = 0;
  for (int32_t b = lo; b < hi; ++b) {
    const int64_t s64 = LoadLen<LenT>(p.seq_lens, b);
    const int64_t e64 = LoadLen<LenT>(p.extend_lens, b);
    int64_t v, a;
    const int32_t err = CheckReq<LenT>(p, s64, e64, v, a);
    if (err != kErrNone) {
      Report(&err_rec, err, b, v, a);
      bad = 1;
      e_off[b] = c_off[b] = w_off[b] = 0;
      continue;
    }
    const int32_t s = static_cast<int32_t>(s64), e = static_cast<int32_t>(e64);
    const ReqShape r = Shape<CR>(s, e, p);
    e_off[b] = e;
    c_off[b] = r.nc;  // 0 <= nc, nw <= e: each position yields at most one event and one write
    w_off[b] = r.nw;
    sums[0] += e;
    sums[1] += r.nc;
    sums[2] += r.nw;
  }
  int64_t pre[3] = {sums[0], sums[1], sums[2]};
  BlockScan3(pre, tot);
  // Sums are int64: B <= 16384 requests of E < 2^31 cannot overflow. Turn the chunk into exclusive offsets.
  {
    int64_t run[3] = {pre[0], pre[1], pre[2]};
    for (int32_t b = lo; b < hi; ++b) {
      const int32_t e = e_off[b], c = c_off[b], w = w_off[b];
      // Offsets are only used when tot[0] <= num_q <= 65535 (checked below), so they fit int32 then.
      e_off[b] = static_cast<int32_t>(min(run[0], static_cast<int64_t>(INT_MAX)));
      c_off[b] = static_cast<int32_t>(min(run[1], static_cast<int64_t>(INT_MAX)));
      w_off[b] = static_cast<int32_t>(min(run[2], static_cast<int64_t>(INT_MAX)));
      run[0] += e;
      run[1] += c;
      run[2] += w;
    }
  }
  if (threadIdx.x == 0) e_off[B] = static_cast<int32_t>(min(tot[0], static_cast<int64_t>(INT_MAX)));
  bad = __syncthreads_or(bad);
  const int64_t sum_e = tot[0];
  if (!bad && (p.host_rules ? sum_e != p.num_q : sum_e > p.num_q)) {
    if (threadIdx.x == 0) Report(&err_rec, kErrExtendSum, -1, sum_e, p.num_q);
    bad = 1;
  }
  const int32_t stride = gridDim.x * kThreads;
  if (bad) {
    // Refused input: every row becomes the invalid pattern (in bounds: k < num_q rows), counts stay 0.
    for (int32_t k = blockIdx.x * kThreads + threadIdx.x; k < p.num_q; k += stride) {
      StoreInvalidC(p.plan_c, k);
      StoreInvalidW(p.plan_w, k);
      if constexpr (!kLoop) break;
    }
    __syncthreads();
    if (threadIdx.x == 0) WriteRecord(p.status + blockIdx.x, err_rec, 0, 0, gridDim.x);
    return;  // uniform across the block: `bad` came from __syncthreads_or / tot[] in shared memory
  }
  const int32_t nc_total = static_cast<int32_t>(tot[1]);
  const int32_t nw_total = static_cast<int32_t>(tot[2]);
  const int32_t n_tok = static_cast<int32_t>(sum_e);  // <= num_q <= 65535

  // Phase 2: one ragged row per iteration. Row k of request b yields at most one compress row (at
  // c_off[b] + rankC < c_off[b] + nc_b) and one write row (at w_off[b] + rankW < w_off[b] + nw_b), so every
  // index in [0, nc_total) / [0, nw_total) is written exactly once; [total, num_q) get the invalid pattern.
  LaneErr err{0, 0, 0, 0};
  for (int32_t k = blockIdx.x * kThreads + threadIdx.x; k < p.num_q; k += stride) {
    if (k < n_tok) {
      // Largest b with e_off[b] <= k: that request has e_off[b] <= k < e_off[b+1] (zero-length ones are skipped).
      int32_t lo_b = 0, hi_b = B - 1;
      while (lo_b < hi_b) {
        const int32_t mid = (lo_b + hi_b + 1) >> 1;
        if (e_off[mid] <= k)
          lo_b = mid;
        else
          hi_b = mid - 1;
      }
      const int32_t b = lo_b;
      // Validated in phase 1 (0 <= E <= S <= INT32_MAX), so the narrowing is exact.
      const int32_t s = static_cast<int32_t>(LoadLen<LenT>(p.seq_lens, b));
      const int32_t e = static_cast<int32_t>(LoadLen<LenT>(p.extend_lens, b));
      const ReqShape r = Shape<CR>(s, e, p);
      LaneErr rerr{0, 0, 0, 0};
      const int32_t rid = CheckRid<MODE>(p.slot, p.rids ? p.rids[b] : b, b, rerr);
      if (rerr.code != kErrNone) Note(err, rerr.code, rerr.index, rerr.value, rerr.aux);
      EmitRowAny<CR, MODE, kMaps>(rerr.code == kErrNone && IndexChecked<MODE, kMaps>(p.slot, rid, s), p, k, b,
                                  k - e_off[b], r, rid, c_off[b], w_off[b], err);
    }
    if (k >= nc_total) StoreInvalidC(p.plan_c, k);
    if (k >= nw_total) StoreInvalidW(p.plan_w, k);
    if constexpr (!kLoop) break;
  }
  if (err.code != kErrNone) Report(&err_rec, err.code, err.index, err.value, err.aux);
  __syncthreads();
  if (threadIdx.x == 0) WriteRecord(p.status + blockIdx.x, err_rec, nc_total, nw_total, gridDim.x);
}

// ---------------------------------------------------------------------------------------------------------------
// Decode: one thread per request, one status record per warp (records [0, warps)), no shared memory, no barrier.

// A warp's status record, in two steps so that the clean case costs no store after the rows: lane 0 writes the clean
// record first (DecodeStatusClean; the stores overlap the loads), and a warp that saw an error overwrites it at the
// end (DecodeRows; same thread, so program order makes the error record the one that stays). The clean record writes
// the fields a clean record defines: `code`, the counts (0 for decode) and `grid`; index, value and aux mean
// something only when code != 0 (PlanStatus; docs/decisions.md D6).
// The clean record in three stores: code, {num_compress, num_write} as one 8-byte store, grid (WriteCleanRecord).
// The compiler may issue them before the row's loads; pinning them after the loads was slower (docs/decisions.md D17).
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
    // int64 offsets and range checks on purpose: with 32-bit forms the assembler issued the second read of each pair
    // after the first one's dependent read, one round trip more (docs/decisions.md D17).
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

__global__ void EmptyKernel() {}

template <typename K>
cudaError_t AllowSmem(K kernel, std::atomic<bool>& done) {
  if (done.load(std::memory_order_acquire)) return cudaSuccess;
  // kMaxGpuBatch = 16384 requests -> 3 * 16385 * 4 = 196,620 B, under the 227 KB opt-in limit of sm_90.
  const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(PrefillSmemBytes(kMaxGpuBatch)));
  if (e == cudaSuccess) done.store(true, std::memory_order_release);
  return e;
}

template <int CR, int MODE, typename LenT, int kMaps>
cudaError_t LaunchPrefillT(const PrefillParams& p, cudaStream_t stream, int sm_count) {
  const int32_t sm2 = 2 * std::max(1, sm_count);
  if (p.batch <= kSmallBatch) {
    // One thread per row. Up to kMaxStatusBlocks warps' worth of rows (8,192), one-warp blocks: every warp redoes the
    // per-request phase anyway, and a one-warp block needs no shared memory and no barrier for its status record.
    // Beyond that, blocks of up to 256; at most 2 blocks per SM and kMaxStatusBlocks blocks (one status record
    // each); grid-stride loops cover the rest.
    const int32_t threads = p.num_q <= 32 * kMaxStatusBlocks ? 32 : std::min(kSmallThreads, (p.num_q + 31) / 32 * 32);
    const int32_t want = (p.num_q + threads - 1) / threads;
    const int32_t blocks = std::max(1, std::min({want, sm2, kMaxStatusBlocks}));
    if (static_cast<int64_t>(blocks) * threads < p.num_q)
      PrefillSmallKernel<CR, MODE, LenT, true, kMaps><<<blocks, threads, 0, stream>>>(p);
    else
      PrefillSmallKernel<CR, MODE, LenT, false, kMaps><<<blocks, threads, 0, stream>>>(p);
    return cudaGetLastError();
  }
  static std::atomic<bool> smem_set_loop{false}, smem_set_once{false};
  // One thread per ragged row; at most 2 blocks per SM (each block rescans the batch, so more blocks only repeat
  // it) and at most kMaxStatusBlocks (one status record each).
  const int32_t want = (p.num_q + kThreads - 1) / kThreads;
  const int32_t blocks = std::max(1, std::min({want, sm2, kMaxStatusBlocks}));
  const bool loop = static_cast<int64_t>(blocks) * kThreads < p.num_q;
  cudaError_t e = loop ? AllowSmem(PrefillKernel<CR, MODE, LenT, true, kMaps>, smem_set_loop)
                       : AllowSmem(PrefillKernel<CR, MODE, LenT, false, kMaps>, smem_set_once);
  if (e != cudaSuccess) return e;
  if (loop)
    PrefillKernel<CR, MODE, LenT, true, kMaps><<<blocks, kThreads, PrefillSmemBytes(p.batch), stream>>>(p);
  else
    PrefillKernel<CR, MODE, LenT, false, kMaps><<<blocks, kThreads, PrefillSmemBytes(p.batch), stream>>>(p);
  return cudaGetLastError();
}

}  // namespace

size_t PrefillSmemBytes(int32_t batch) {
  return static_cast<size_t>(3) * (static_cast<size_t>(batch) + 1) * sizeof(int32_t);
}

template <int CR, int MODE, int kMaps>
cudaError_t LaunchPrefillL(const PrefillParams& p, cudaStream_t stream, int sm_count) {
  return p.lens64 ? LaunchPrefillT<CR, MODE, int64_t, kMaps>(p, stream, sm_count)
                  : LaunchPrefillT<CR, MODE, int32_t, kMaps>(p, stream, sm_count);
}
template <int CR, int MODE>
cudaError_t LaunchPrefillM(const PrefillParams& p, cudaStream_t stream, int sm_count) {
  if constexpr (MODE != kPaged) {
    return LaunchPrefillL<CR, MODE, 0>(p, stream, sm_count);  // no tables read
  } else {
    switch ((p.slot.r2t ? 1 : 0) | (p.slot.f2s ? 2 : 0)) {
      case 0:
        return LaunchPrefillL<CR, MODE, 0>(p, stream, sm_count);
      case 1:
        return LaunchPrefillL<CR, MODE, 1>(p, stream, sm_count);
      case 2:
        return LaunchPrefillL<CR, MODE, 2>(p, stream, sm_count);
      default:
        return LaunchPrefillL<CR, MODE, 3>(p, stream, sm_count);
    }
  }
}

cudaError_t LaunchPrefill(const PrefillParams& p, cudaStream_t stream, int sm_count) {
  // c128 is always request-style (docs/reference/planner.md §4): no paged c128 kernel exists.
  if (p.slot.cr == 4) {
    if (p.slot.legacy) return LaunchPrefillM<4, kLegacy>(p, stream, sm_count);
    return p.slot.req_style ? LaunchPrefillM<4, kReqRing>(p, stream, sm_count)
                            : LaunchPrefillM<4, kPaged>(p, stream, sm_count);
  }
  return p.slot.legacy ? LaunchPrefillM<128, kLegacy>(p, stream, sm_count)
                       : LaunchPrefillM<128, kReqRing>(p, stream, sm_count);
}

cudaError_t LaunchDecode(const DecodeParams& p, cudaStream_t stream) {
  if (p.batch < 1) return cudaErrorInvalidValue;  // the kernels read request batch - 1 (the binding requires >= 1)
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

cudaError_t LaunchEmpty(cudaStream_t stream) {
  EmptyKernel<<<1, 32, 0, stream>>>();
  return cudaGetLastError();
}

static double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0.0 : (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]));
}

cudaError_t BenchLaunch(const std::function<cudaError_t(cudaStream_t)>& launch, cudaStream_t stream, int warmup,
                        int reps, int calls, BenchResult* out) {
#define DSV4KV_B(x)                     \
  do {                                  \
    cudaError_t e__ = (x);              \
    if (e__ != cudaSuccess) return e__; \
  } while (0)
  cudaEvent_t a, b;
  DSV4KV_B(cudaEventCreate(&a));
  DSV4KV_B(cudaEventCreate(&b));
  for (int i = 0; i < warmup; ++i) DSV4KV_B(launch(stream));
  DSV4KV_B(cudaStreamSynchronize(stream));
  std::vector<double> eager, graph;
  for (int r = 0; r < reps; ++r) {
    DSV4KV_B(cudaEventRecord(a, stream));
    for (int i = 0; i < calls; ++i) DSV4KV_B(launch(stream));
    DSV4KV_B(cudaEventRecord(b, stream));
    DSV4KV_B(cudaEventSynchronize(b));
    float ms = 0;
    DSV4KV_B(cudaEventElapsedTime(&ms, a, b));
    eager.push_back(1000.0 * ms / calls);
  }
  cudaGraph_t g;
  cudaGraphExec_t ge;
  DSV4KV_B(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < calls; ++i) {
    cudaError_t e = launch(stream);
    if (e != cudaSuccess) {
      cudaStreamEndCapture(stream, &g);
      return e;
    }
  }
  DSV4KV_B(cudaStreamEndCapture(stream, &g));
  DSV4KV_B(cudaGraphInstantiate(&ge, g, 0));
  for (int i = 0; i < std::max(1, warmup / calls); ++i) DSV4KV_B(cudaGraphLaunch(ge, stream));
  DSV4KV_B(cudaStreamSynchronize(stream));
  for (int r = 0; r < reps; ++r) {
    DSV4KV_B(cudaEventRecord(a, stream));
    DSV4KV_B(cudaGraphLaunch(ge, stream));
    DSV4KV_B(cudaEventRecord(b, stream));
    DSV4KV_B(cudaEventSynchronize(b));
    float ms = 0;
    DSV4KV_B(cudaEventElapsedTime(&ms, a, b));
    graph.push_back(1000.0 * ms / calls);
  }
  cudaGraphExecDestroy(ge);
  cudaGraphDestroy(g);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  out->eager_us = Median(eager);
  out->graph_us = Median(graph);
  return cudaSuccess;
#undef DSV4KV_B
}

}  // namespace dsv4kv
