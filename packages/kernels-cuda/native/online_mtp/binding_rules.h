// The rules the online-MTP bindings share with their benchmark (native/bench/online_mtp_bench.cpp): the error code
// and field style, the variant and split checks, the automatic launch shape, the context of a call.
#pragma once

#include <cstdint>
#include <string>

#include "common.h"
#include "online_mtp/online_mtp_kernels.cuh"

namespace dsv4kv {
namespace online_mtp {

constexpr const char* kErr = "ERR_DSV4KV_ONLINE_MTP";

[[noreturn]] inline void Fail(Napi::Env env, const std::string& field, int64_t value, const std::string& rule) {
  ThrowField(env, kErr, field, static_cast<double>(value), rule);
}

// The refusals of one call's args (common.h ReadKeys): the fields are the bare keys (`numVerify`, `kvScore`), as the
// online-MTP bindings have always named them; `object` names the call in the unknown-key rule.
constexpr KeyStyle Style(const char* object) { return KeyStyle{object, "", kErr}; }

constexpr int64_t kI32Max = 0x7fffffff;
inline int64_t ElemBytes(int32_t stateType) { return stateType == kF32 ? 4 : 2; }

// `variant` (-1: left out, the call's default) in [0, maxVariant]. A binary built without DSV4KV_BENCH_VARIANTS holds
// only the default shape `shipped` (named `shippedName`); asking it for another is refused before any launch.
inline int32_t CheckVariant(Napi::Env env, int64_t v, int32_t maxVariant, int32_t shipped, const char* shippedName) {
  if (v > maxVariant) Fail(env, "variant", v, "must be an integer in [0, " + std::to_string(maxVariant) + "]");
  if (!kBenchVariants && v >= 0 && v != shipped)
    Fail(env, "variant", v,
         "must be " + std::to_string(shipped) + " (" + shippedName +
             ") in this build: the benchmark-only variants are built only with the CMake option "
             "DSV4KV_BENCH_VARIANTS=ON");
  return static_cast<int32_t>(v);
}
// decode has no vecAccurate shape.
inline void CheckDecodeVariant(Napi::Env env, int32_t v) {
  if (v == kWpVecAccurate) Fail(env, "variant", v, "must be 0 (legacy), 1 (vec) or 3 (scalar) for decode");
}
// `split` in [0, kMaxSplit] (the table), a power of two or 0 (auto).
inline int32_t CheckSplit(Napi::Env env, int64_t split) {
  if (split & (split - 1)) Fail(env, "split", split, "must be 0 (auto), 1, 2, 4, 8 or 16");
  return static_cast<int32_t>(split);
}

// Launch shape when `variant` / `split` are left out: the fastest on the H200 sweeps (docs/decisions.md D14, D23).
// writePrefix: D = 1 spreads a request over 4 blocks up to an eighth of the SM count, then 2; D >= 2 over 4 blocks
// up to half the SM count, then 8, and past the SM count 1 from kIndexFirstMinD on (L2-cold it streams best). The
// benchmark-only decode shapes keep D14's rule: 4 blocks up to the SM count, then 1.
inline int32_t AutoWritePrefixSplit(int32_t batch, int32_t numVerify, int smCount) {
  if (numVerify == 1) return int64_t(batch) * 8 <= smCount ? 4 : 2;
  if (int64_t(batch) * 2 <= smCount) return 4;
  return batch <= smCount || numVerify < kIndexFirstMinD ? 8 : 1;
}
inline int32_t AutoSplit(int32_t batch, int smCount) { return batch <= smCount ? 4 : 1; }
// decode's default shape is writePrefix's D = 1 kernel shape (one update per channel, then one row stored), so it takes
// that rule; the benchmark-only vec shape keeps D14's.
inline int32_t AutoDecodeSplit(int32_t variant, int32_t batch, int smCount) {
  return variant == kWpScalar ? AutoWritePrefixSplit(batch, 1, smCount) : AutoSplit(batch, smCount);
}

#if DSV4KV_HAVE_CUDA
inline Context* CtxOf(Napi::Env env, Napi::Value v) {
  Context* c = Context::FromValue(env, v, "ctx");
  c->Activate(env);
  return c;
}
#endif

// Most verify tokens of a call (the kernels' template range).
constexpr int64_t kMaxD = kMaxVerify;

}  // namespace online_mtp
}  // namespace dsv4kv
