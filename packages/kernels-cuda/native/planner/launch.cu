// Host dispatch of the planner kernels: run-time parameters to template instances (prefill_launch.h lists them).
#include <cuda_runtime.h>

#include <cstdint>

#include "planner/plan_kernels.cuh"
#include "planner/plan_launch.h"
#include "planner/prefill_launch.h"

namespace dsv4kv {
namespace {

// The small kernel up to kSmallBatch requests (one per lane), the general one beyond.
template <int CR, int MODE, typename LenT, int kMaps>
cudaError_t LaunchPrefillT(const PrefillParams& p, cudaStream_t stream, int sm_count) {
  if (p.batch <= kSmallBatch) return LaunchPrefillSmall<CR, MODE, LenT, kMaps>(p, stream, sm_count);
  return LaunchPrefillGeneral<CR, MODE, LenT, kMaps>(p, stream, sm_count);
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

}  // namespace

// Each bound, derived:
//   * 1 <= batch: the small kernel's idle lanes read request 0; batch <= kMaxGpuBatch: the general kernel's shared scan
//     is 3 * (batch + 1) int32, 196,620 B at 16,384, under sm_90's 227 KB opt-in.
//   * batch <= num_q <= kMaxNumQ (65,535): ragged ids are 16 bits in CompressPlan; every request owns a row.
//   * 0 <= pad: firstWritePos = min(floor(S/cr)*cr - overlap, S - pad) cannot overflow int32 for S, pad >= 0.
//   * cr in {4, 128}, ring and sps >= 1 (FastDiv serves divisors in [1, 2^31)); outside the legacy layout
//     ring % cr == 0 and sps % ring == 0, hence cr <= sps, which TailBelow's closed form needs.
//   * the tail clause is a paged-c4 rule; the legacy layout has neither pad nor tail.
//   * r2t_stride >= 1, r2t_rows >= 0 (DeriveSlot clamps the 32-bit copies to these).
const char* PrefillPrecondition(const PrefillParams& p) {
  if (!p.seq_lens || !p.extend_lens || !p.plan_c || !p.plan_w || !p.status)
    return "every input, plan and status pointer must be set";
  if (p.batch < 1 || p.batch > kMaxGpuBatch) return "batch must be in [1, kMaxGpuBatch]";
  if (p.num_q < p.batch || p.num_q > kMaxNumQ) return "numQ must be in [batch, 65535]";
  if (p.pad < 0) return "pad must be >= 0";
  if ((p.lens64 | p.tail | p.host_rules | p.slot.legacy | p.slot.req_style) & ~1) return "flags must be 0 or 1";
  const SlotParams& s = p.slot;
  if (s.cr != 4 && s.cr != 128) return "cr must be 4 or 128";
  if (s.ring < 1 || s.sps < 1) return "ring and sps must be >= 1";
  if (!s.legacy && (s.ring % s.cr != 0 || s.sps % s.ring != 0)) return "ring must be a multiple of cr and divide sps";
  if (p.tail && (s.cr != 4 || s.req_style || s.legacy)) return "the tail clause is a paged-c4 rule";
  if (s.legacy && (p.pad || p.tail)) return "the legacy layout has no pad and no tail clause";
  if (s.r2t_stride < 1 || s.r2t_rows < 0) return "r2tStride must be >= 1 and r2tRows >= 0";
  return nullptr;
}

cudaError_t LaunchPrefill(const PrefillParams& p, cudaStream_t stream, int sm_count) {
  if (PrefillPrecondition(p)) return cudaErrorInvalidValue;
  // c128 is always request-style (docs/reference/planner.md §4): no paged c128 kernel exists.
  if (p.slot.cr == 4) {
    if (p.slot.legacy) return LaunchPrefillM<4, kLegacy>(p, stream, sm_count);
    return p.slot.req_style ? LaunchPrefillM<4, kReqRing>(p, stream, sm_count)
                            : LaunchPrefillM<4, kPaged>(p, stream, sm_count);
  }
  return p.slot.legacy ? LaunchPrefillM<128, kLegacy>(p, stream, sm_count)
                       : LaunchPrefillM<128, kReqRing>(p, stream, sm_count);
}

}  // namespace dsv4kv
