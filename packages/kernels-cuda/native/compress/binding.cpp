// JS bindings of the ring compress kernels (exports.compress; native/compress/compress_kernels.cuh). Every call takes
// (ctx, args) where args is an object of DeviceBuffers and integers, read through one integer table and one buffer
// table per call (kPrefillKeys + kPrefillBuffers, kDecodeKeys + kDecodeBuffers; src/addon-types.ts lists the same
// keys, test/binding-keys.test.ts holds them equal): any other key is refused (ERR_DSV4KV_UNKNOWN_KEY). Every value is range-checked and every buffer's byte
// length checked against the rows the launch may touch before the context is touched, so a wrong call is a JS error
// naming the field, never a bad launch; the kernels re-check the device-resident plan rows against stateRows /
// inputRows and report a bad row in `err`. Launches are enqueued on ctx's stream without a sync (CUDA-graph
// capturable, as the bench build's compress.bench shows: native/bench/compress_bench.cpp).
//
//   prefill(ctx, {state, input, ape, planC, planW, out, err, stateRows, inputRows, numPlanC, numPlanW, cr, headDim,
//                 stateType})
//   decode(ctx, {state, input, ape, planD, out, err, stateRows, inputRows, batch, cr, headDim, stateType})
//   headDims: [128, 512]
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common.h"
#include "compress/calls.h"
#include "compress/compress.h"
#include "compress/compress_kernels.cuh"

namespace dsv4kv {
namespace compress {
namespace {

constexpr int64_t kI32Max = 0x7fffffff;
// A DeviceBuffer holds at most 2^40 bytes (common.cpp), so no larger row count passes the size checks; the bound
// keeps rows · rowElems · 4 far inside int64. At least one row: the state and input pointers are never null.
constexpr int64_t kMaxRows = int64_t{1} << 40;

// The launch geometry the integer keys give: cr 4 or 128, headDim 128 or 512, stateType 0 (fp32) or 1 (bf16).
struct Geometry {
  int32_t cr, headDim, stateType;
  int64_t rowElems, elemBytes, window;
};
Geometry CheckGeometry(Napi::Env env, int64_t cr, int64_t headDim, int64_t stateType) {
  if (cr != 4 && cr != 128) ThrowField(env, kErr, "cr", static_cast<double>(cr), "must be 4 or 128");
  if (headDim != 128 && headDim != 512)
    ThrowField(env, kErr, "headDim", static_cast<double>(headDim), "must be 128 or 512");
  Geometry g{};
  g.cr = static_cast<int32_t>(cr);
  g.headDim = static_cast<int32_t>(headDim);
  g.stateType = static_cast<int32_t>(stateType);
  g.rowElems = int64_t{RowBlocksOf(g.cr)} * g.headDim;
  g.elemBytes = g.stateType == kF32 ? 4 : 2;
  g.window = WindowOf(g.cr);
  return g;
}

// The device pointer of a buffer ReadBuffers read, once it holds `needBytes` (ERR_DSV4KV_BUFFER naming
// `<field>.byteLength` otherwise).
template <typename T>
T* Sized(Napi::Env env, const char* field, const DeviceBuffer* b, int64_t needBytes) {
  b->RequireBytes(env, static_cast<size_t>(needBytes), field);
  return static_cast<T*>(b->data());
}

// ---- the args of each call: one key table per call (addon-types.ts lists the same keys). Integer rows are read
// first, then the rules that tie keys together, then the buffers and their sizes.

const IntKey<PrefillIn> kPrefillKeys[] = {
    {"stateRows", &PrefillIn::stateRows, 1, kMaxRows, true, 0},
    {"inputRows", &PrefillIn::inputRows, 1, kMaxRows, true, 0},
    {"numPlanC", &PrefillIn::numPlanC, 0, kI32Max, true, 0},
    {"numPlanW", &PrefillIn::numPlanW, 0, kI32Max, true, 0},
    {"cr", &PrefillIn::cr, 4, 128, true, 0},              // 4 or 128 (CheckGeometry)
    {"headDim", &PrefillIn::headDim, 128, 512, true, 0},  // 128 or 512 (CheckGeometry)
    {"stateType", &PrefillIn::stateType, 0, 1, true, 0},
};
const BufferKey<PrefillIn> kPrefillBuffers[] = {
    {"state", &PrefillIn::state, true}, {"input", &PrefillIn::input, true}, {"ape", &PrefillIn::ape, true},
    {"planC", &PrefillIn::planC, true}, {"planW", &PrefillIn::planW, true}, {"out", &PrefillIn::out, true},
    {"err", &PrefillIn::err, true},
};

const IntKey<DecodeIn> kDecodeKeys[] = {
    {"stateRows", &DecodeIn::stateRows, 1, kMaxRows, true, 0},
    {"inputRows", &DecodeIn::inputRows, 1, kMaxRows, true, 0},  // >= batch
    {"batch", &DecodeIn::batch, 0, kI32Max, true, 0},
    {"cr", &DecodeIn::cr, 4, 128, true, 0},
    {"headDim", &DecodeIn::headDim, 128, 512, true, 0},
    {"stateType", &DecodeIn::stateType, 0, 1, true, 0},
};
const BufferKey<DecodeIn> kDecodeBuffers[] = {
    {"state", &DecodeIn::state, true}, {"input", &DecodeIn::input, true}, {"ape", &DecodeIn::ape, true},
    {"planD", &DecodeIn::planD, true}, {"out", &DecodeIn::out, true},     {"err", &DecodeIn::err, true},
};

// The keys of an integer table and a buffer table, for another table's unknown-key check (bench).
template <typename T, size_t N, size_t M>
std::vector<const char*> KeysOf(const IntKey<T> (&ints)[N], const BufferKey<T> (&bufs)[M]) {
  std::vector<const char*> keys;
  for (const IntKey<T>& k : ints) keys.push_back(k.key);
  for (const BufferKey<T>& k : bufs) keys.push_back(k.key);
  return keys;
}

}  // namespace

PrefillCall ParsePrefill(Napi::Env env, Napi::Object a, const KeyStyle& style, std::vector<const char*> extra) {
  for (const BufferKey<PrefillIn>& k : kPrefillBuffers) extra.push_back(k.key);
  PrefillCall c{ReadIntKeys(env, a, style, kPrefillKeys, std::move(extra)), {}};
  const PrefillIn& in = c.in;
  const Geometry g = CheckGeometry(env, in.cr, in.headDim, in.stateType);
  ReadBuffers(env, a, style, kPrefillBuffers, c.in);
  PrefillParams& p = c.p;
  p.state = Sized<void>(env, "state", in.state, in.stateRows * g.rowElems * g.elemBytes);
  p.stateRows = in.stateRows;
  p.input = Sized<const float>(env, "input", in.input, in.inputRows * g.rowElems * 4);
  p.inputRows = in.inputRows;
  p.ape = Sized<const float>(env, "ape", in.ape, g.window * g.headDim * 4);
  p.planC = Sized<const uint8_t>(env, "planC", in.planC, in.numPlanC * kCompressPlanBytes);
  p.numPlanC = static_cast<int32_t>(in.numPlanC);
  p.planW = Sized<const uint8_t>(env, "planW", in.planW, in.numPlanW * kWritePlanBytes);
  p.numPlanW = static_cast<int32_t>(in.numPlanW);
  p.out = Sized<float>(env, "out", in.out, in.numPlanC * g.headDim * 4);
  p.cr = g.cr;
  p.headDim = g.headDim;
  p.stateType = g.stateType;
  p.err = Sized<int32_t>(env, "err", in.err, 16);
  return c;
}

DecodeCall ParseDecode(Napi::Env env, Napi::Object a, const KeyStyle& style, std::vector<const char*> extra) {
  for (const BufferKey<DecodeIn>& k : kDecodeBuffers) extra.push_back(k.key);
  DecodeCall c{ReadIntKeys(env, a, style, kDecodeKeys, std::move(extra)), {}};
  const DecodeIn& in = c.in;
  const Geometry g = CheckGeometry(env, in.cr, in.headDim, in.stateType);
  if (in.inputRows < in.batch)
    ThrowField(env, kErr, "inputRows", static_cast<double>(in.inputRows),
               "must be >= batch = " + std::to_string(in.batch) + " (input row b is batch row b's token)");
  ReadBuffers(env, a, style, kDecodeBuffers, c.in);
  DecodeParams& p = c.p;
  p.state = Sized<void>(env, "state", in.state, in.stateRows * g.rowElems * g.elemBytes);
  p.stateRows = in.stateRows;
  p.input = Sized<const float>(env, "input", in.input, in.inputRows * g.rowElems * 4);
  p.inputRows = in.inputRows;
  p.ape = Sized<const float>(env, "ape", in.ape, g.window * g.headDim * 4);
  p.planD = Sized<const uint8_t>(env, "planD", in.planD, in.batch * kDecodePlanBytes);
  p.batch = static_cast<int32_t>(in.batch);
  p.out = Sized<float>(env, "out", in.out, in.batch * g.headDim * 4);
  p.cr = g.cr;
  p.headDim = g.headDim;
  p.stateType = g.stateType;
  p.err = Sized<int32_t>(env, "err", in.err, 16);
  return c;
}

std::vector<const char*> CallKeys(bool prefill) {
  return prefill ? KeysOf(kPrefillKeys, kPrefillBuffers) : KeysOf(kDecodeKeys, kDecodeBuffers);
}

namespace {

#if DSV4KV_HAVE_CUDA
template <typename In, size_t M>
Context* ContextOn(Napi::Env env, Napi::Value v, const BufferKey<In> (&bufs)[M], const In& in) {
  Context* c = Context::FromValue(env, v, "ctx");
  for (const BufferKey<In>& k : bufs) {
    const DeviceBuffer* b = in.*k.member;
    if (b && b->device() != c->device())
      ThrowField(env, kErr, std::string(k.key) + ".device", b->device(),
                 "must be ctx.device = " + std::to_string(c->device()) + " (a buffer of another device)");
  }
  c->Activate(env);
  return c;
}

}  // namespace

Context* ContextFor(Napi::Env env, Napi::Value v, const PrefillCall& c) {
  return ContextOn(env, v, kPrefillBuffers, c.in);
}
Context* ContextFor(Napi::Env env, Napi::Value v, const DecodeCall& c) {
  return ContextOn(env, v, kDecodeBuffers, c.in);
}

namespace {
#endif

// ---- entry points: the args are checked in both builds, before the context; the CPU-only build then refuses.
Napi::Value Prefill(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const PrefillCall c = ParsePrefill(env, ArgObject(info, 1, "args", kErr), Style("prefill args"), {});
#if DSV4KV_HAVE_CUDA
  Context* ctx = ContextFor(env, info[0], c);
  if (HasWork(c.p)) DSV4KV_CUDA_TRY(env, LaunchPrefill(c.p, ctx->stream()));
  return env.Undefined();
#else
  (void)c;
  NoCuda(env, "compress.prefill");
#endif
}

Napi::Value Decode(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const DecodeCall c = ParseDecode(env, ArgObject(info, 1, "args", kErr), Style("decode args"), {});
#if DSV4KV_HAVE_CUDA
  Context* ctx = ContextFor(env, info[0], c);
  if (HasWork(c.p)) DSV4KV_CUDA_TRY(env, LaunchDecode(c.p, ctx->stream()));
  return env.Undefined();
#else
  (void)c;
  NoCuda(env, "compress.decode");
#endif
}

}  // namespace
}  // namespace compress
}  // namespace dsv4kv

void RegisterCompress(Napi::Env env, Napi::Object exports) {
  using namespace dsv4kv::compress;
  Napi::Object o = Napi::Object::New(env);
  o.Set("prefill", Napi::Function::New(env, Prefill, "prefill"));
  o.Set("decode", Napi::Function::New(env, Decode, "decode"));
  Napi::Array headDims = Napi::Array::New(env, 2);
  headDims.Set(0u, Napi::Number::New(env, 128));
  headDims.Set(1u, Napi::Number::New(env, 512));
  o.Set("headDims", headDims);
  exports.Set("compress", o);
}
