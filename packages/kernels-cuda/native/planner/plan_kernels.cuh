// Compress-planner kernels (docs/reference/planner.md §5.4, §5.5, §6, §7), multi-block and deterministic.
//
// Design (differs from upstream's single-block kernel0, keeps its byte contract):
//   Every quantity a row needs has a closed form per request, so no atomics and no cross-block sync are needed:
//     nc_b = floor(S/cr) - floor(P/cr)                                   (events: (p+1) % cr == 0, p in [P, S))
//     nw_b = tail(P, lim) + (S - mainStart)                               (writes, docs/reference/planner.md §3)
//     rankC(p) = floor(p/cr) - floor(P/cr)                                 (events before p in [P, p))
//     rankW(p) = p >= mainStart ? tail(P, lim) + (p - mainStart) : tail(P, p)
//   with tail(a, x) = F(x) - F(a), F(x) = floor(x/SPS)*cr + max(0, x%SPS - (SPS-cr)) (positions q < x with
//   q % SPS >= SPS - cr), mainStart = max(firstWritePos, P), lim = min(mainStart, S).
//   Two kernels share these forms (the launcher picks one by batch size):
//   * small batches (B <= 32, kSmallBatch): every warp loads the whole batch (lane b = request b), validates it and
//     scans (E, nc, nw) with warp shuffles; each row finds its request by a shuffle binary search and reads the
//     request's shape from that lane. No shared-memory scan, no block barrier before the rows, no second global
//     read of the inputs.
//   * larger batches: each block scans (E, nc, nw) over the batch into shared memory, then handles a grid-stride
//     slice of the num_q ragged rows (binary search of the E scan).
//   Either way row k of request b puts its compress row at cOff[b] + rankC and its write row at wOff[b] + rankW.
//   Each output index is written by exactly one thread, so the order is the host loop's (batch-major, position
//   ascending) on every run: no shared-memory atomics, no race. Stage 1 (location finalisation) is fused.
// The write pad arrives in the params (computed by @dsv4-kv/planner's writePad in TS); it is never derived here.
//
// Sources, one concern each (device helpers in headers, one kernel family per .cu):
//   plan_kernels.cuh  params, status record, error codes, FastDiv and slot geometry (host and device)
//   status.cuh        a lane's / warp's / block's first error and the record stores
//   loads.cuh         inline-PTX global loads, request lengths in either dtype
//   slot_math.cuh     run-time division, pool-index checks, slots and the checked-index pair lookups
//   legacy.cuh        the legacy layout's slots and pages
//   prefill_rows.cuh  a request's shape and checks, the row emitters both prefill kernels share
//   prefill_small.cu, prefill_general.cu, decode.cu  the kernel families and their launchers
//   prefill_launch.h  the prefill template instances; launch.cu maps run-time parameters onto them
//   plan_launch.h     the host API (launchers, preconditions, bench); bench.cu the timing harness
#pragma once
#include <cstddef>
#include <cstdint>

namespace dsv4kv {

// Error codes written to PlanStatus::code by the kernels (first error wins through atomicCAS). This enum is the one
// source: scripts/plan-err.mjs generates src/plan-err.ts from it (test/plan-err.test.ts fails when that is stale),
// and src/plan-status.ts maps each name to the CPU planner's PlannerError (test/plan-status.test.ts checks each).
enum PlanErr : int32_t {
  kErrNone = 0,
  kErrSeqNeg = 1,         // S_b < 0                          index=b value=S
  kErrExtendNeg = 2,      // E_b < 0 (or < 1 on host rules)   index=b value=E
  kErrExtendGtSeq = 3,    // E_b > S_b                        index=b value=E aux=S
  kErrExtendSum = 4,      // sum(E) > num_q (device) / != num_q (host rules)  value=sum
  kErrRidNeg = 5,         // rid < 0                          index=b value=rid
  kErrRidRows = 6,        // rid >= rows of req_to_token      index=b value=rid aux=rows
  kErrPosStride = 7,      // p >= req_to_token row length     index=rid value=p aux=stride
  kErrFullRange = 8,      // full-pool loc outside full_to_state  index=rid value=full aux=p
  kErrSwaNeg = 9,         // SWA location < 0                 index=rid value=swa aux=p
  kErrSlotOverflow = 10,  // rid*R + p%R > INT32_MAX          index=b value=rid
  kErrDecodeSeq = 11,     // decode S < 1                     index=i value=S
  kErrExtendZero = 12,    // host rules: E_b == 0             index=b value=E
  kErrNarrow = 13,        // int64 length outside int32       index=b value=v aux=0 seqLens / 1 extendLens
};

// Status: 48-byte records, kMaxStatusBlocks of them. Every launch rewrites records [0, n) (code 0 when clean; one
// record per block for prefill, one per warp for decode), so the status needs no zeroing between calls (no memset
// node in a CUDA graph, no cross-block ordering). Record 0 also carries the counts and n (field `grid`); a reader
// looks at records [0, grid) and takes the first non-zero code.
struct PlanStatus {
  int32_t code;  // PlanErr (first error seen by this block)
  // index, value, aux: the error's details, defined only when code != 0 (a clean record leaves them as they were)
  int32_t index;
  int64_t value;
  int64_t aux;
  int32_t num_compress;  // record 0: valid CompressPlan rows (prefill)
  int32_t num_write;     // record 0: valid WritePlan rows (prefill)
  int32_t grid;          // record 0: records this launch wrote (to read)
  int32_t reserved[3];
};
static_assert(sizeof(PlanStatus) == 48, "PlanStatus is 48 bytes");
// Records (= prefill blocks, decode warps) are capped at this many (grid-stride loops cover the rest). The prefill
// grid is min(ceil(numQ/threads), 2*SMs, 256): 2 x 132 SMs of an H200 is 264, so on an H200 the cap is 256.
constexpr int32_t kMaxStatusBlocks = 256;
constexpr size_t kStatusBytes = sizeof(PlanStatus) * kMaxStatusBlocks;
// Most requests one GPU prefill plan serves (upstream: 1024, one block of 1024 threads). Bounded by the per-block
// shared scan: 3 int32 arrays of batch+1 entries must fit the 227 KB sm_90 opt-in (16384 -> 196,620 B).
constexpr int32_t kMaxGpuBatch = 16384;
// Batches of at most this many requests take the small-batch kernel: one request per lane of a warp, so 32.
constexpr int32_t kSmallBatch = 32;
// Rows of one prefill plan: ragged ids are 16-bit in CompressPlan and in the stage-0 WritePlan packing.
constexpr int32_t kMaxNumQ = 65535;

// Division by a run-time divisor d in [1, 2^31) of a numerator n in [0, 2^31), branch-free: with l = ceil(log2 d)
// and m = floor(2^32 (2^l - d) / d) + 1, t = umulhi(n, m) and q = (t + n) >> l (Granlund-Montgomery 1994, Fig. 4.1,
// whose q = (t + ((n - t) >> 1)) >> (l - 1) equals (t + n) >> l because floor(floor(x/2)/2^(l-1)) = floor(x/2^l); we
// may add directly since t <= n < 2^31, so t + n < 2^32). 0 <= 2^l - d < d gives m <= 2^32 - 1. d = 1 (l = 0) and
// powers of two (m = 1, t = 0) need no special case, so the device code has no select and no predicated load
// (docs/decisions.md D17). Built on the host (MakeFastDiv), checked by scripts/check-fastdiv.cpp.
struct FastDiv {
  uint32_t d;
  uint32_t mul;  // m
  uint32_t shr;  // l
};
inline FastDiv MakeFastDiv(uint32_t d) {
  uint32_t l = 0;
  while ((uint64_t{1} << l) < d) ++l;                                           // ceil(log2 d), 0..31
  const uint64_t m = ((uint64_t{1} << 32) * ((uint64_t{1} << l) - d)) / d + 1;  // (2^l - d) < 2^31: no overflow
  return FastDiv{d, static_cast<uint32_t>(m), l};
}

// Slot addressing shared by prefill stage 1 and decode (docs/reference/planner.md §4, §7).
struct SlotParams {
  int32_t cr;          // 4 or 128
  int32_t ring;        // R: slots per ring
  int32_t sps;         // SWA page size
  int32_t req_style;   // cr == 128 || use_req_ring: rid*R + p%R
  int32_t legacy;      // legacy layout (c4 rid*8+p%8 / page rid*2+(p/4)&1; c128 rid*128+p%128 / page rid)
  FastDiv ring_div;    // MakeFastDiv(ring)
  FastDiv sps_div;     // MakeFastDiv(sps)
  int32_t max_rid;     // MaxFastRid: the largest pool index all of whose slots fit int32 (request ring / legacy)
  const int32_t* r2t;  // req_to_token, row-major [r2t_rows, r2t_stride]; nullptr = identity r*stride+p
  int64_t r2t_stride;  // tokens per request row (positions must be < this)
  int64_t r2t_rows;    // rows (identity: floor(INT32_MAX / stride), so r*stride+p never exceeds int32)
  const int32_t* f2s;  // full_to_state; nullptr = identity
  int64_t f2s_len;
  // 32-bit copies for the kernels' checked-index tests and table reads (DeriveSlot): one compare each instead of an
  // int64 pair, and 32 x 32 -> 64-bit row offsets. The binding's ranges make them exact: r2t_stride in [1, INT32_MAX],
  // r2t_rows in [0, INT32_MAX]; f2s_len is clamped to 2^31, above which no int32 location can be out of range.
  int32_t r2t_stride32;
  int32_t r2t_rows32;
  uint32_t f2s_len32;
};

// The largest pool index rid for which every slot of the mode fits int32, so the kernels' fast path can use int32
// arithmetic with no per-slot overflow check (larger indices take the checked path, which reports kErrSlotOverflow).
//   request ring: rid*R + p%R <= rid*R + (R-1) <= INT32_MAX  <=>  rid <= (INT32_MAX - (R-1)) / R;
//   legacy: the largest slot is rid*128 + 127 (c128; c4's rid*8 + 7 and pages rid*2 + 1 are smaller), so
//           rid <= (INT32_MAX - 127) / 128 (the same bound CheckRid enforces for legacy);
//   paged c4: slots come from the tables, nothing to bound here (0).
// Called by DeriveSlot.
inline int32_t MaxFastRid(int32_t cr, int32_t ring, int32_t legacy, int32_t req_style) {
  constexpr int64_t kMax = 2147483647;
  if (legacy) return static_cast<int32_t>((kMax - 127) / 128);
  if ((req_style || cr == 128) && ring >= 1)
    return  // c128 is always a request ring (docs/reference/planner.md §4)
        static_cast<int32_t>((kMax - (ring - 1)) / ring);
  return 0;
}

// The fields of SlotParams derived from the others (max_rid and the 32-bit copies); call after setting cr, ring,
// legacy, req_style, r2t_stride, r2t_rows and f2s_len, wherever SlotParams are filled.
inline void DeriveSlot(SlotParams& s) {
  s.max_rid = MaxFastRid(s.cr, s.ring, s.legacy, s.req_style);
  s.r2t_stride32 = static_cast<int32_t>(s.r2t_stride < 0 ? 0 : (s.r2t_stride > 2147483647 ? 2147483647 : s.r2t_stride));
  s.r2t_rows32 = static_cast<int32_t>(s.r2t_rows < 0 ? 0 : (s.r2t_rows > 2147483647 ? 2147483647 : s.r2t_rows));
  s.f2s_len32 =
      static_cast<uint32_t>(s.f2s_len < 0 ? 0 : (s.f2s_len > (int64_t{1} << 31) ? (int64_t{1} << 31) : s.f2s_len));
}

// Addressing modes (docs/reference/planner.md §4, §7), a template parameter of the prefill kernels so each holds only
// its own slot code and reads only the parameters that code needs: paged c4 (req_to_token / full_to_state), request
// ring (c128, or c4 use_req_ring), legacy layout. The launcher maps SlotParams {legacy, req_style} to one of them.
enum Mode : int { kPaged = 0, kReqRing = 1, kLegacy = 2 };

// One params struct per kernel (SGLang c_plan.cuh style).
// Field order: what the kernels read first (inputs, scalars) fills the first 48 bytes, so the early code touches one
// 64-byte constant-cache line of the parameter bank; slot geometry next, output pointers last (read at the rows).
struct PrefillParams {
  const void* seq_lens;     // [batch] S, int32 (lens64 == 0) or int64 (lens64 == 1, narrowing checked)
  const void* extend_lens;  // [batch] E, same type as seq_lens
  const int64_t* rids;      // [batch] request-pool index; nullptr = b
  int32_t lens64;           // 1: seq_lens / extend_lens are int64 (upstream's dtype), 0: int32
  int32_t batch;            // 1 <= batch <= num_q (checked on the host)
  int32_t num_q;            // rows of both tables, <= 65535 (ragged ids are 16-bit)
  int32_t pad;              // write pad, from @dsv4-kv/planner writePad (or legacy 0)
  int32_t tail;             // paged c4 SWA-page tail clause
  int32_t host_rules;       // host path: E >= 1 and sum(E) == num_q; device path: E >= 0, sum(E) <= num_q
  SlotParams slot;
  uint32_t* plan_c;    // [num_q][4] words, 16-byte rows
  uint32_t* plan_w;    // [num_q][2] words, 8-byte rows
  PlanStatus* status;  // kMaxStatusBlocks records (see PlanStatus)
};

struct DecodeParams {
  uint32_t* plan_d;  // [batch][4] words
  PlanStatus* status;
  const void* seq_lens;  // [batch] S (>= 1), int32 or int64 (lens64)
  const int64_t* rids;   // nullptr = i
  int32_t lens64;
  int32_t batch;
  SlotParams slot;
};

}  // namespace dsv4kv
