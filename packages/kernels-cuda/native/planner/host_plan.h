// A host-array plan call, parsed, checked and staged on the JS thread: what planPrefill / planDecode (sync and async,
// native/planner/binding.cpp) and the bench build's planner `bench` (native/bench/planner_bench.cpp) share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common.h"

namespace dsv4kv {

// The host inputs at their offsets in the input region (8-byte aligned), uploaded in one copy.
struct Staged {
  std::vector<uint8_t> host;
  size_t seq = 0, ext = 0, rids = 0, r2t = 0, f2s = 0;
  bool has_ext = false, has_rids = false, has_r2t = false, has_f2s = false;
  // The layout alone (no bytes), for a launch closure to keep.
  Staged Offsets() const { return Staged{{}, seq, ext, rids, r2t, f2s, has_ext, has_rids, has_r2t, has_f2s}; }
};

#if DSV4KV_HAVE_CUDA
// A host-array plan call. Device layout: [plan tables + status records: out_bytes, copied back into `out`][pad to
// 256][staged inputs]. `bind(dev)` points the kernel's params at a device region of that layout and returns the
// launch; the entry points differ only in where that region lives and what surrounds the launch.
using LaunchOn = std::function<cudaError_t(cudaStream_t)>;
struct HostPlan {
  Staged staged;
  size_t out_bytes = 0;
  size_t in_off = 0;
  std::string out_rule;  // what out_bytes is, for the size message
  std::function<LaunchOn(uint8_t* dev)> bind;
};

// The call's cfg and inputs (refusals name cfg.<key> and inputs.<key>); `sm`: the context's SM count.
HostPlan PrepareHostPlan(Napi::Env env, bool prefill, Napi::Object cfg, Napi::Object inputs, int sm);
#endif

}  // namespace dsv4kv
