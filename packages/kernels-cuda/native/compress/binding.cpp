// JS bindings of the ring compress kernels (exports.compress; native/compress/compress_kernels.cuh). Every call takes
// (ctx, args) where args is an object of DeviceBuffers and integers, read through one integer table and one buffer
// table per call (kPrefillKeys + kPrefillBuffers, kDecodeKeys + kDecodeBuffers; bench adds kBenchKeys +
// kBenchStringKeys to its op's tables; src/addon-types.ts lists the same keys, test/binding-keys.test.ts holds them
// equal): any other key is refused (ERR_DSV4KV_UNKNOWN_KEY). Every value is range-checked and every buffer's byte
// length checked against the rows the launch may touch before the context is touched, so a wrong call is a JS error
// naming the field, never a bad launch; the kernels re-check the device-resident plan rows against stateRows /
// inputRows and report a bad row in `err`. Launches are enqueued on ctx's stream without a sync (CUDA-graph
// capturable, as `bench` shows).
//
//   prefill(ctx, {state, input, ape, planC, planW, out, err, stateRows, inputRows, numPlanC, numPlanW, cr, headDim,
//                 stateType})
//   decode(ctx, {state, input, ape, planD, out, err, stateRows, inputRows, batch, cr, headDim, stateType})
//   bench(ctx, {...the prefill or decode args, op: "prefill" | "decode", graph, iters, reps, rotate})
//       -> {usPerCall, minUs, maxUs}
//   headDims: [128, 512]
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common.h"
#include "compress/compress.h"
#include "compress/compress_kernels.cuh"

namespace dsv4kv {
namespace compress {
namespace {

constexpr const char* kErr = "ERR_DSV4KV_ARG";

// The fields are the bare keys (`stateRows`, `planC`), as the online-MTP bindings name theirs.
constexpr KeyStyle Style(const char* object) { return KeyStyle{object, "", kErr}; }

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

// prefill (CompressPrefillArgs).
struct PrefillIn {
  int64_t stateRows, inputRows, numPlanC, numPlanW, cr, headDim, stateType;
  DeviceBuffer *state, *input, *ape, *planC, *planW, *out, *err;
};
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

// decode (CompressDecodeArgs).
struct DecodeIn {
  int64_t stateRows, inputRows, batch, cr, headDim, stateType;
  DeviceBuffer *state, *input, *ape, *planD, *out, *err;
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

template <typename In, typename P>
struct Call {
  In in;  // what was read (its buffers for the device check)
  P p;    // the launch
};
using PrefillCall = Call<PrefillIn, PrefillParams>;
using DecodeCall = Call<DecodeIn, DecodeParams>;

// `extra`: keys of `a` read elsewhere (bench's own), known to the unknown-key check.
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

Napi::Object ArgsOf(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[1].IsObject())
    ThrowField(env, kErr, "args", info.Length() < 2 ? env.Undefined() : info[1], "must be an object");
  return info[1].As<Napi::Object>();
}

// ---- bench (CompressBenchArgs): `op` is a string, read apart from the integer table ----------------------------
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
  std::vector<const char*> opKeys =
      c.prefill ? KeysOf(kPrefillKeys, kPrefillBuffers) : KeysOf(kDecodeKeys, kDecodeBuffers);
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
// The context of a call, made current, once every buffer of the call lives on its device.
template <typename In, size_t M>
Context* ContextFor(Napi::Env env, Napi::Value v, const BufferKey<In> (&bufs)[M], const In& in) {
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

cudaError_t Launch(const PrefillParams& p, cudaStream_t s) { return LaunchPrefill(p, s); }
cudaError_t Launch(const DecodeParams& p, cudaStream_t s) { return LaunchDecode(p, s); }
// Whether a launch has rows to visit (a zero-row call enqueues nothing).
bool HasWork(const PrefillParams& p) { return p.numPlanC > 0 || p.numPlanW > 0; }
bool HasWork(const DecodeParams& p) { return p.batch > 0; }

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

// ---- benchmark: CUDA events, eager back-to-back or CUDA-graph replay, medians; every resource released on every
// path (a throw included), and a capture left open by a throw ended so the stream stays usable.
struct Events {
  cudaEvent_t start = nullptr, stop = nullptr;
  ~Events() {
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
  }
};
struct Graph {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ~Graph() {
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
  }
};
struct OpenCapture {
  cudaStream_t stream;
  bool open = true;
  ~OpenCapture() {
    if (!open) return;
    cudaGraph_t g = nullptr;
    cudaStreamEndCapture(stream, &g);
    if (g) cudaGraphDestroy(g);
    cudaGetLastError();  // the failed capture's error is the one already thrown
  }
};

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
  auto launch = [&](int64_t i) { return work ? Launch(sets[static_cast<size_t>(i % b.rotate)], s) : cudaSuccess; };
  // Warm-up: every buffer set once, and at least a few calls.
  for (int64_t i = 0; i < std::max<int64_t>(b.rotate, 3); ++i) DSV4KV_CUDA_TRY(env, launch(i));
  Events ev;
  DSV4KV_CUDA_TRY(env, cudaEventCreate(&ev.start));
  DSV4KV_CUDA_TRY(env, cudaEventCreate(&ev.stop));
  Graph g;
  if (b.graph) {
    DSV4KV_CUDA_TRY(env, cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    OpenCapture capture{s};
    for (int64_t i = 0; i < b.iters; ++i) DSV4KV_CUDA_TRY(env, launch(i));
    capture.open = false;
    DSV4KV_CUDA_TRY(env, cudaStreamEndCapture(s, &g.graph));
    DSV4KV_CUDA_TRY(env, cudaGraphInstantiate(&g.exec, g.graph, 0));
    for (int w = 0; w < 3; ++w) DSV4KV_CUDA_TRY(env, cudaGraphLaunch(g.exec, s));
  }
  std::vector<double> us;
  for (int64_t r = 0; r < b.reps; ++r) {
    DSV4KV_CUDA_TRY(env, cudaEventRecord(ev.start, s));
    if (b.graph) {
      DSV4KV_CUDA_TRY(env, cudaGraphLaunch(g.exec, s));
    } else {
      for (int64_t i = 0; i < b.iters; ++i) DSV4KV_CUDA_TRY(env, launch(i));
    }
    DSV4KV_CUDA_TRY(env, cudaEventRecord(ev.stop, s));
    DSV4KV_CUDA_TRY(env, cudaEventSynchronize(ev.stop));
    float ms = 0.f;
    DSV4KV_CUDA_TRY(env, cudaEventElapsedTime(&ms, ev.start, ev.stop));
    us.push_back(ms * 1000.0 / static_cast<double>(b.iters));
  }
  DSV4KV_CUDA_TRY(env, cudaStreamSynchronize(s));
  std::sort(us.begin(), us.end());
  Napi::Object r = Napi::Object::New(env);
  r.Set("usPerCall", us[us.size() / 2]);
  r.Set("minUs", us.front());
  r.Set("maxUs", us.back());
  return r;
}
#endif

// ---- entry points: the args are checked in both builds, before the context; the CPU-only build then refuses.
Napi::Value Prefill(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const PrefillCall c = ParsePrefill(env, ArgsOf(info), Style("prefill args"), {});
#if DSV4KV_HAVE_CUDA
  Context* ctx = ContextFor(env, info[0], kPrefillBuffers, c.in);
  if (HasWork(c.p)) DSV4KV_CUDA_TRY(env, LaunchPrefill(c.p, ctx->stream()));
  return env.Undefined();
#else
  (void)c;
  NoCuda(env, "compress.prefill");
#endif
}

Napi::Value Decode(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const DecodeCall c = ParseDecode(env, ArgsOf(info), Style("decode args"), {});
#if DSV4KV_HAVE_CUDA
  Context* ctx = ContextFor(env, info[0], kDecodeBuffers, c.in);
  if (HasWork(c.p)) DSV4KV_CUDA_TRY(env, LaunchDecode(c.p, ctx->stream()));
  return env.Undefined();
#else
  (void)c;
  NoCuda(env, "compress.decode");
#endif
}

Napi::Value Bench(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const BenchCall c = ParseBench(env, ArgsOf(info));
#if DSV4KV_HAVE_CUDA
  if (c.prefill) {
    Context* ctx = ContextFor(env, info[0], kPrefillBuffers, c.pc.in);
    return TimeCalls(env, c.pc.p, c.b, ctx->stream());
  }
  Context* ctx = ContextFor(env, info[0], kDecodeBuffers, c.dc.in);
  return TimeCalls(env, c.dc.p, c.b, ctx->stream());
#else
  (void)c;
  NoCuda(env, "compress.bench");
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
  o.Set("bench", Napi::Function::New(env, Bench, "bench"));
  Napi::Array headDims = Napi::Array::New(env, 2);
  headDims.Set(0u, Napi::Number::New(env, 128));
  headDims.Set(1u, Napi::Number::New(env, 512));
  o.Set("headDims", headDims);
  exports.Set("compress", o);
}
