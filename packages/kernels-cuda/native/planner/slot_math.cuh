// Slot addressing of the planner kernels (docs/reference/planner.md §4, §7): run-time division (FastDiv), the pool
// index check, the per-position slot with every check, and the checked-index pair lookups. Device code only.
#pragma once
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>

#include "planner/loads.cuh"
#include "planner/plan_kernels.cuh"
#include "planner/status.cuh"

namespace dsv4kv {
namespace {

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

// The request-pool index of request b, checked for every slot function: a bad one is noted and replaced by 0 (a
// harmless in-range value), so nothing is ever read or written out of bounds.
// Addressing modes (docs/reference/planner.md §4, §7), a template parameter so each kernel holds only its own slot code
// and reads only the parameters that code needs: paged c4 (req_to_token / full_to_state), request ring (c128, or c4
// use_req_ring), legacy layout. The launcher maps SlotParams {legacy, req_style} to one of them.

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

}  // namespace
}  // namespace dsv4kv
