// What both prefill kernels share: a request's shape (closed forms, docs/reference/planner.md §3), its checks
// (docs/reference/planner.md §5.2) and the row emitters (EmitRow, EmitRowAny, EmitRowFast). Device code only.
#pragma once
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>

#include "planner/legacy.cuh"
#include "planner/loads.cuh"
#include "planner/plan_kernels.cuh"
#include "planner/slot_math.cuh"
#include "planner/status.cuh"

namespace dsv4kv {
namespace {

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

}  // namespace
}  // namespace dsv4kv
