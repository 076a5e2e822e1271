// The bench build's entry points (CMake option DSV4KV_BENCH; docs/decisions.md D32): the addon's Init calls
// RegisterBench after the kernels' registration, and only in that build, so the released addon exports kernels only.
//   exports.bench                    planner kernels (planner_bench.cpp)
//   exports.onlineMtp.bench          online c128 MTP kernels and the copy floor (online_mtp_bench.cpp)
//   exports.onlineMtp.benchVariants  whether the benchmark-only kernel shapes are built in (DSV4KV_BENCH_VARIANTS)
//   exports.compress.bench           ring compress kernels (compress_bench.cpp)
#pragma once

#include <napi.h>

namespace dsv4kv {
namespace bench {

void RegisterPlannerBench(Napi::Env env, Napi::Object exports);
void RegisterOnlineMtpBench(Napi::Env env, Napi::Object onlineMtp);
void RegisterCompressBench(Napi::Env env, Napi::Object compress);

// All of the above, onto the addon's exports (exports.onlineMtp and exports.compress must be set already).
inline void RegisterBench(Napi::Env env, Napi::Object exports) {
  RegisterPlannerBench(env, exports);
  RegisterOnlineMtpBench(env, exports.Get("onlineMtp").As<Napi::Object>());
  RegisterCompressBench(env, exports.Get("compress").As<Napi::Object>());
}

}  // namespace bench
}  // namespace dsv4kv
