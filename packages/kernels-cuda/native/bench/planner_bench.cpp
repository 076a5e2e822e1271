// The planner's `bench` entry (bench build only): CUDA-event timings of the plan kernels on host inputs, launched
// back to back and as a CUDA graph of `calls` launches replayed, and of the empty kernel (launch overhead).
//
//   bench(ctx, kind: "prefill" | "decode" | "empty", cfg, inputs, { warmup, reps, calls }) -> { eagerUs, graphUs }
//
// cfg and inputs are those of planPrefill / planDecode (planner/host_plan.h), refused by the same rules; opts is
// read through kBenchKeys (src/addon-types.ts PlanBenchOptions lists the same keys).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/bench.h"
#include "common.h"
#include "planner/host_plan.h"
#if DSV4KV_HAVE_CUDA
#include "bench/bench_kernels.cuh"
#include "bench/timing.h"
#endif

namespace dsv4kv {
namespace bench {
namespace {

// bench opts (PlanBenchOptions).
struct BenchCfg {
  int64_t warmup, reps, calls;
};
const IntKey<BenchCfg> kBenchKeys[] = {
    {"warmup", &BenchCfg::warmup, 0, 1 << 20, true, 0},
    {"reps", &BenchCfg::reps, 1, 1 << 20, true, 0},
    {"calls", &BenchCfg::calls, 1, 10000, true, 0},
};
const KeyStyle kOptsStyle{"opts", "opts.", "ERR_DSV4KV_ARG"};

Napi::Value Bench(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
#if DSV4KV_HAVE_CUDA
  Context* ctx = Context::FromValue(env, info[0], "ctx");
  if (!info[1].IsString()) ThrowField(env, "ERR_DSV4KV_ARG", "kind", info[1], "must be a string");
  const std::string kind = info[1].As<Napi::String>().Utf8Value();
  const BenchCfg b = ReadKeys(env, ArgObject(info, 4, "opts"), kOptsStyle, kBenchKeys);
  ctx->Activate(env);
  cudaStream_t st = ctx->stream();
  EagerAndGraph r{};
  if (kind == "empty") {
    const LaunchOn empty = [](cudaStream_t s) { return LaunchEmpty(s); };
    DSV4KV_CUDA_TRY(env, TimeEagerAndGraph(empty, st, b.warmup, b.reps, b.calls, &r));
  } else if (kind == "prefill" || kind == "decode") {
    HostPlan h = PrepareHostPlan(env, kind == "prefill", ArgObject(info, 2, "cfg"), ArgObject(info, 3, "inputs"),
                                 ctx->smCount());
    uint8_t* ws = static_cast<uint8_t*>(ctx->Workspace(env, h.in_off + h.staged.host.size()));
    DSV4KV_CUDA_TRY(
        env, cudaMemcpyAsync(ws + h.in_off, h.staged.host.data(), h.staged.host.size(), cudaMemcpyHostToDevice, st));
    DSV4KV_CUDA_TRY(env, TimeEagerAndGraph(h.bind(ws), st, b.warmup, b.reps, b.calls, &r));
  } else {
    ThrowField(env, "ERR_DSV4KV_ARG", "kind", info[1], "must be prefill, decode or empty");
  }
  Napi::Object o = Napi::Object::New(env);
  o.Set("eagerUs", r.eager_us);
  o.Set("graphUs", r.graph_us);
  return o;
#else
  NoCuda(env, "bench");
#endif
}

}  // namespace

void RegisterPlannerBench(Napi::Env env, Napi::Object exports) {
  exports.Set("bench", Napi::Function::New<Bench>(env, "bench"));
}

}  // namespace bench
}  // namespace dsv4kv
