// Small-batch prefill (1 <= batch <= kSmallBatch = 32): one request per lane, everything in registers.
// Params: PrefillParams (plan_kernels.cuh). Preconditions: PrefillPrecondition (launch.cu, each bound derived there)
// and batch <= kSmallBatch (LaunchPrefill routes larger batches to prefill_general.cu): lane b holds request b.
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>

#include "planner/loads.cuh"
#include "planner/plan_kernels.cuh"
#include "planner/plan_launch.h"
#include "planner/prefill_launch.h"
#include "planner/prefill_rows.cuh"
#include "planner/slot_math.cuh"
#include "planner/status.cuh"

namespace dsv4kv {
namespace {

constexpr int kSmallThreads = 256;  // small-batch prefill block (at most; fewer when numQ needs fewer rows)

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

// A row's request and its first table reads. k < e_tot and a checked-index request keep every read in bounds:
// j = k - e_ex[b] < E_b (a clamped E_b is 65536 > any j), so q0 <= pos = prefix_b + j < S_b <= r2t_stride. The
// helpers below take the kernel's values by reference, as its lambdas did: the code stays the kernel's own.
struct RowStart {
  int32_t b, j, prefix, rid_flag;
  PairLookup look;
};
template <int CR, int MODE, int kMaps>
__device__ __forceinline__ RowStart StartRow(const PrefillParams& p, const int32_t& B, const int& top,
                                             const int32_t& e_ex, const int32_t& e_tot, const int32_t& prefix,
                                             const int32_t& rid_flag, int32_t k) {
  // Request of row k: the largest b < B with e_ex[b] <= k (zero-length requests are skipped; e_ex[0] = 0).
  int32_t b = 0;
  for (int step = top; step > 0; step >>= 1) {
    const int32_t cand = b + step;
    const int32_t v = __shfl_sync(kFull, e_ex, cand < B ? cand : 0);
    if (cand < B && v <= k) b = cand;
  }
  RowStart rs{b, k - __shfl_sync(kFull, e_ex, b), __shfl_sync(kFull, prefix, b), __shfl_sync(kFull, rid_flag, b),
              PairLookup{0, 0, 0, 0, true, true}};
  if constexpr (MODE == kPaged) {
    const int32_t pos = rs.prefix + rs.j;
    rs.look = PairR2t<kMaps>(p.slot, rs.rid_flag & 0x7fffffff, max(pos - CR, 0), pos, k < e_tot && rs.rid_flag < 0);
  }
  return rs;
}
// The row's shape from its request's lane (`r`: this lane's request shape, `cw_ex`: its packed first plan rows).
__device__ __forceinline__ ReqShape RowShape(const ReqShape& r, const uint32_t& cw_ex, const RowStart& rs,
                                             int32_t& c_base, int32_t& w_base) {
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
}

// Inclusive warp scan of E and of the packed counts nc | nw << 16. E is clamped to 65536: 32 clamped values sum
// to < 2^22 (exact in int32), and a clamped E means sum(E) > 65535 >= numQ, a refused batch. nc, nw <= E, so
// when the batch is accepted (sum(E) <= numQ <= 65535) every partial sum of nc and of nw is <= 65535: the low
// half never carries into the high half. Lanes >= B add 0. Out: the exclusive scans and the totals.
__device__ __forceinline__ void ScanRequests(const int32_t& e, const ReqShape& r, const int& lane, const int32_t& B,
                                             int32_t& e_ex, uint32_t& cw_ex, int32_t& e_tot, uint32_t& cw_tot) {
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
  e_tot = __shfl_sync(kFull, e_inc, B - 1);
  cw_tot = __shfl_sync(kFull, cw_inc, B - 1);
  e_ex = e_inc - ev;
  cw_ex = cw_inc - cw;
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
  int32_t e_ex, e_tot;
  uint32_t cw_ex, cw_tot;
  ScanRequests(e, r, lane, B, e_ex, cw_ex, e_tot, cw_tot);
  // Binary lifting over lanes [0, B): the largest step is the highest power of two <= B - 1.
  const int top = B > 1 ? 1 << (31 - __clz(B - 1)) : 0;

  auto start_row = [&](int32_t k) { return StartRow<CR, MODE, kMaps>(p, B, top, e_ex, e_tot, r.prefix, rid_flag, k); };
  auto row_shape = [&](const RowStart& rs, int32_t& c_base, int32_t& w_base) {
    return RowShape(r, cw_ex, rs, c_base, w_base);
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

}  // namespace

template <int CR, int MODE, typename LenT, int kMaps>
cudaError_t LaunchPrefillSmall(const PrefillParams& p, cudaStream_t stream, int sm_count) {
  const int32_t sm2 = 2 * std::max(1, sm_count);
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

#define DSV4KV_INSTANTIATE_SMALL(CR, MODE, LenT, kMaps) \
  template cudaError_t LaunchPrefillSmall<CR, MODE, LenT, kMaps>(const PrefillParams&, cudaStream_t, int);
DSV4KV_PREFILL_INSTANCES(DSV4KV_INSTANTIATE_SMALL)
#undef DSV4KV_INSTANTIATE_SMALL

}  // namespace dsv4kv
