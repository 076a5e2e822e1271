// compress.bench (bench build only): CUDA-event timings of the ring compress kernels on the caller's args, eager
// back-to-back or a CUDA graph of `iters` calls replayed, median of `reps` after warm-up, on `rotate` buffer sets
// (set 0 the caller's, the others device copies of its state and input). The args are the op's (compress/calls.h,
// refused by the same rules) plus kBenchKeys + kBenchStringKeys (src/addon-types.ts CompressBenchOptions).
//
//   bench(ctx, {...the prefill or decode args, op: "prefill" | "decode", graph, iters, reps, rotate})
//       -> {usPerCall, minUs, maxUs}
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench.h"
#include "common.h"
#include "compress/calls.h"
#if DSV4KV_HAVE_CUDA
#include "bench/timing.h"
#endif

namespace dsv4kv {
namespace bench {
namespace {

using namespace compress;  // NOLINT: the compress calls' params and rules, read throughout

// ---- the args (CompressBenchArgs): `op` is a string, read apart from the integer table -------------------------
struct BenchIn {
  int64_t graph, iters, reps, rotate;
};
const IntKey<BenchIn> kBenchKeys[] = {
    {"graph", &BenchIn::graph, 0, 1, true, 0},
    {"iters", &BenchIn::iters, 1, 10000, true, 0},
    {"reps", &BenchIn::reps, 1, 1000, true, 0},
    {"rotate", &BenchIn::rotate, 1, 4096, true, 0},  // buffer sets (state, input, out) cycled call by call
};
const char* const kBenchStringKeys[] = {"op"};

struct BenchCall {
  bool prefill;
  BenchIn b;
  PrefillCall pc;
  DecodeCall dc;
};

BenchCall ParseBench(Napi::Env env, Napi::Object a) {
  constexpr KeyStyle kStyle = Style("bench args");
  const Napi::Value opValue = a.Get("op");
  if (opValue.IsUndefined() || opValue.IsNull()) ThrowField(env, kErr, "op", "is required");
  if (!opValue.IsString()) ThrowField(env, "ERR_INVALID_ARG_TYPE", "op", opValue, "must be a string");
  const std::string op = opValue.As<Napi::String>().Utf8Value();
  if (op != "prefill" && op != "decode") ThrowField(env, kErr, "op", opValue, "must be \"prefill\" or \"decode\"");
  BenchCall c{};
  c.prefill = op == "prefill";
  // The bench table knows the op's keys and the op's tables know the bench keys: each refuses only other keys.
  std::vector<const char*> opKeys = CallKeys(c.prefill);
  opKeys.insert(opKeys.end(), std::begin(kBenchStringKeys), std::end(kBenchStringKeys));
  c.b = ReadIntKeys(env, a, kStyle, kBenchKeys, opKeys);
  std::vector<const char*> benchKeys(std::begin(kBenchStringKeys), std::end(kBenchStringKeys));
  for (const IntKey<BenchIn>& k : kBenchKeys) benchKeys.push_back(k.key);
  if (c.prefill)
    c.pc = ParsePrefill(env, a, kStyle, std::move(benchKeys));
  else
    c.dc = ParseDecode(env, a, kStyle, std::move(benchKeys));
  return c;
}

#if DSV4KV_HAVE_CUDA
// Bytes of state and input the launch may touch, and of its out.
struct Touched {
  size_t state, input, out;
};
template <typename P>
Touched TouchedBytes(const P& p, int64_t outRows) {
  const int64_t rowElems = int64_t{RowBlocksOf(p.cr)} * p.headDim;
  return {static_cast<size_t>(p.stateRows * rowElems * (p.stateType == kF32 ? 4 : 2)),
          static_cast<size_t>(p.inputRows * rowElems * 4), static_cast<size_t>(outRows * p.headDim * 4)};
}
int64_t OutRows(const PrefillParams& p) { return p.numPlanC; }
int64_t OutRows(const DecodeParams& p) { return p.batch; }

// Buffer set 0 is the caller's; sets 1..rotate-1 hold device-to-device copies of its state and input and an out of
// their own (ape, plans and err are shared).
template <typename P>
std::vector<P> BufferSets(Napi::Env env, const P& given, int64_t rotate, BenchSet& mem, cudaStream_t s) {
  const Touched t = TouchedBytes(given, OutRows(given));
  std::vector<P> sets{given};
  for (int64_t k = 1; k < rotate; ++k) {
    P p = given;
    void* state = mem.Alloc<char>(env, t.state);
    float* input = mem.Alloc<float>(env, t.input);
    if (t.state) DSV4KV_CUDA_TRY(env, cudaMemcpyAsync(state, given.state, t.state, cudaMemcpyDeviceToDevice, s));
    if (t.input) DSV4KV_CUDA_TRY(env, cudaMemcpyAsync(input, given.input, t.input, cudaMemcpyDeviceToDevice, s));
    p.state = state;
    p.input = input;
    p.out = mem.Alloc<float>(env, t.out);
    sets.push_back(p);
  }
  return sets;
}

template <typename P>
Napi::Value TimeCalls(Napi::Env env, const P& given, const BenchIn& b, cudaStream_t s) {
  BenchSet mem;
  const std::vector<P> sets = BufferSets(env, given, b.rotate, mem, s);
  const bool work = HasWork(given);
  const IndexedLaunch launch = [&](int64_t i) {
    return work ? Launch(sets[static_cast<size_t>(i % b.rotate)], s) : cudaSuccess;
  };
  // Warm-up: every buffer set once, and at least a few calls.
  for (int64_t i = 0; i < std::max<int64_t>(b.rotate, 3); ++i) DSV4KV_CUDA_TRY(env, launch(i));
  std::vector<double> us;
  DSV4KV_CUDA_TRY(env, TimeRounds(launch, s, Rounds{b.iters, b.reps, b.graph != 0, 3}, &us));
  DSV4KV_CUDA_TRY(env, cudaStreamSynchronize(s));
  const Spread r = SpreadOf(std::move(us));
  Napi::Object o = Napi::Object::New(env);
  o.Set("usPerCall", r.median);
  o.Set("minUs", r.min);
  o.Set("maxUs", r.max);
  return o;
}
#endif

Napi::Value Bench(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const BenchCall c = ParseBench(env, ArgObject(info, 1, "args", kErr));
#if DSV4KV_HAVE_CUDA
  if (c.prefill) {
    Context* ctx = ContextFor(env, info[0], c.pc);
    return TimeCalls(env, c.pc.p, c.b, ctx->stream());
  }
  Context* ctx = ContextFor(env, info[0], c.dc);
  return TimeCalls(env, c.dc.p, c.b, ctx->stream());
#else
  (void)c;
  NoCuda(env, "compress.bench");
#endif
}

}  // namespace

void RegisterCompressBench(Napi::Env env, Napi::Object compress) {
  compress.Set("bench", Napi::Function::New(env, Bench, "bench"));
}

}  // namespace bench
}  // namespace dsv4kv
