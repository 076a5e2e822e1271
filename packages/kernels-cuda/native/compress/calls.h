// The compress bindings' parsed calls (native/compress/binding.cpp), shared with the bench build's compress.bench
// (native/bench/compress_bench.cpp): each args object read into what was read (its buffers) and the launch params.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common.h"
#include "compress/compress_kernels.cuh"

namespace dsv4kv {
namespace compress {

constexpr const char* kErr = "ERR_DSV4KV_ARG";

// The fields are the bare keys (`stateRows`, `planC`), as the online-MTP bindings name theirs.
constexpr KeyStyle Style(const char* object) { return KeyStyle{object, "", kErr}; }

// prefill (CompressPrefillArgs).
struct PrefillIn {
  int64_t stateRows, inputRows, numPlanC, numPlanW, cr, headDim, stateType;
  DeviceBuffer *state, *input, *ape, *planC, *planW, *out, *err;
};
// decode (CompressDecodeArgs).
struct DecodeIn {
  int64_t stateRows, inputRows, batch, cr, headDim, stateType;
  DeviceBuffer *state, *input, *ape, *planD, *out, *err;
};
template <typename In, typename P>
struct Call {
  In in;  // what was read (its buffers for the device check)
  P p;    // the launch
};
using PrefillCall = Call<PrefillIn, PrefillParams>;
using DecodeCall = Call<DecodeIn, DecodeParams>;

// The args of a prefill / decode call, checked; `extra`: keys of `a` read elsewhere (bench's own), known to the
// unknown-key check.
PrefillCall ParsePrefill(Napi::Env env, Napi::Object a, const KeyStyle& style, std::vector<const char*> extra);
DecodeCall ParseDecode(Napi::Env env, Napi::Object a, const KeyStyle& style, std::vector<const char*> extra);
// The keys of the prefill (or decode) call's tables, for another table's unknown-key check (bench).
std::vector<const char*> CallKeys(bool prefill);

#if DSV4KV_HAVE_CUDA
// The context of a call, made current, once every buffer of the call lives on its device.
Context* ContextFor(Napi::Env env, Napi::Value v, const PrefillCall& c);
Context* ContextFor(Napi::Env env, Napi::Value v, const DecodeCall& c);

inline cudaError_t Launch(const PrefillParams& p, cudaStream_t s) { return LaunchPrefill(p, s); }
inline cudaError_t Launch(const DecodeParams& p, cudaStream_t s) { return LaunchDecode(p, s); }
// Whether a launch has rows to visit (a zero-row call enqueues nothing).
inline bool HasWork(const PrefillParams& p) { return p.numPlanC > 0 || p.numPlanW > 0; }
inline bool HasWork(const DecodeParams& p) { return p.batch > 0; }

#endif

}  // namespace compress
}  // namespace dsv4kv
