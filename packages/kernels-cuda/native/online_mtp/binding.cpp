// JS bindings of the online c128 MTP kernels (exports.onlineMtp). Every call takes (ctx, args) where args is an
// object of DeviceBuffers and integers; every precondition is checked here before a launch (sizes derived from the
// buffers' byte lengths), so a wrong call is a JS error (code ERR_DSV4KV_ONLINE_MTP), never a bad launch. Launches
// are enqueued on ctx's stream without a sync (CUDA-graph capturable by `bench`).
//
//   writePrefix(ctx, {kvScore, seqLens, reqPoolIndices, ape, state, batch, numVerify, bankStrideRows, numReqSlots, stateType})
//   markPending(ctx, {seqLens, reqPoolIndices, pendingSeqLens, pendingWidths, batch, numVerify, numReqSlots, clearAll})
//   commitPending(ctx, {curSeqLens, reqPoolIndices, pendingSeqLens, pendingWidths, state, batch, maxDraftTokens,
//                       clampWidth, bankStrideRows, numReqSlots, consume, markSeqLens?, markWidth?, stateType})
//   resetSlots(ctx, {state, slots, pendingSeqLens?, pendingWidths?, count, bankStrideRows, maxDraftTokens, numReqSlots, stateType})
//   decode(ctx, {state, kvScore, ape, seqLens, reqPoolIndices, out, batch, slotOffsetRows, numReqSlots, stateType})
//   prefill(ctx, {state, kvScore, ape, segments, out, err, numSegments, stateType})
//   bench(ctx, {op, batch, numVerify, stateType, graph, rotate, iters, reps, copyBytes?}) -> {usPerCall, samples[]}
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common.h"
#include "online_mtp/online_mtp.h"
#include "online_mtp/online_mtp_kernels.cuh"

namespace dsv4kv {
namespace online_mtp {
namespace {

constexpr const char* kErr = "ERR_DSV4KV_ONLINE_MTP";

[[noreturn]] void Fail(Napi::Env env, const std::string& field, int64_t value, const std::string& rule) {
  ThrowTyped(env, kErr, field + " = " + std::to_string(value) + ": " + rule);
}

int32_t GetI32(Napi::Env env, Napi::Object o, const char* key, int64_t lo, int64_t hi) {
  Napi::Value v = o.Get(key);
  if (v.IsBoolean()) return v.As<Napi::Boolean>().Value() ? 1 : 0;
  if (!v.IsNumber()) ThrowTyped(env, kErr, std::string(key) + " must be a number");
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!(d >= static_cast<double>(lo) && d <= static_cast<double>(hi)) || d != static_cast<double>(static_cast<int64_t>(d)))
    Fail(env, key, static_cast<int64_t>(d), "must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return static_cast<int32_t>(d);
}

struct Buf {
  void* ptr = nullptr;
  size_t bytes = 0;
};
Buf GetBuf(Napi::Env env, Napi::Object o, const char* key, bool optional = false) {
  Napi::Value v = o.Get(key);
  if (optional && (v.IsUndefined() || v.IsNull())) return {};
  DeviceBuffer* b = DeviceBuffer::FromValue(env, v, key);
  b->RequireBytes(env, 0, key);
  return {b->data(), b->bytes()};
}

constexpr int64_t kI32Max = 0x7fffffff;
int64_t ElemBytes(int32_t stateType) { return stateType == kF32 ? 4 : 2; }

void Need(Napi::Env env, const char* field, const Buf& b, int64_t needBytes, const std::string& why) {
  if (static_cast<int64_t>(b.bytes) < needBytes)
    Fail(env, std::string(field) + ".byteLength", static_cast<int64_t>(b.bytes), "must be >= " + std::to_string(needBytes) + " (" + why + ")");
}

#if DSV4KV_HAVE_CUDA
cudaStream_t StreamOf(Napi::Env env, Napi::Value v) {
  Context* c = Context::FromValue(env, v, "ctx");
  c->Activate(env);
  return c->stream();
}
#endif

WritePrefixParams ParseWritePrefix(Napi::Env env, Napi::Object a) {
  WritePrefixParams p{};
  p.stateType = GetI32(env, a, "stateType", 0, 1);
  p.batch = GetI32(env, a, "batch", 0, kI32Max);
  p.numVerify = GetI32(env, a, "numVerify", 1, kMaxVerify);
  p.numReqSlots = GetI32(env, a, "numReqSlots", 1, kI32Max);
  p.bankStrideRows = GetI32(env, a, "bankStrideRows", p.numReqSlots, kI32Max);  // banks must not overlap: r < N <= O
  Buf kv = GetBuf(env, a, "kvScore"), seq = GetBuf(env, a, "seqLens"), rpi = GetBuf(env, a, "reqPoolIndices");
  Buf ape = GetBuf(env, a, "ape"), st = GetBuf(env, a, "state");
  // Highest input row read: batch·D − 1; highest state row written: (N−1) + D·O < O·(D+1).
  Need(env, "kvScore", kv, int64_t(p.batch) * p.numVerify * kKvScoreCols * 4, "batch·numVerify rows of 1024 fp32");
  Need(env, "seqLens", seq, int64_t(p.batch) * 4, "batch int32");
  Need(env, "reqPoolIndices", rpi, int64_t(p.batch) * 4, "batch int32");
  Need(env, "ape", ape, int64_t(kChunk) * kHeadDim * 4, "[128, 512] fp32");
  Need(env, "state", st, int64_t(p.bankStrideRows) * (p.numVerify + 1) * kRowElems * ElemBytes(p.stateType), "bankStrideRows·(numVerify+1) rows");
  p.kvScore = static_cast<const float*>(kv.ptr);
  p.seqLens = static_cast<const int32_t*>(seq.ptr);
  p.reqPoolIdx = static_cast<const int32_t*>(rpi.ptr);
  p.ape = static_cast<const float*>(ape.ptr);
  p.state = st.ptr;
  return p;
}

MarkPendingParams ParseMark(Napi::Env env, Napi::Object a) {
  MarkPendingParams p{};
  p.batch = GetI32(env, a, "batch", 0, kI32Max);
  p.numVerify = GetI32(env, a, "numVerify", 1, kMaxVerify);
  p.numReqSlots = GetI32(env, a, "numReqSlots", 1, kI32Max);
  p.clearAll = GetI32(env, a, "clearAll", 0, 1);
  Buf seq = GetBuf(env, a, "seqLens"), rpi = GetBuf(env, a, "reqPoolIndices");
  Buf pend = GetBuf(env, a, "pendingSeqLens"), wid = GetBuf(env, a, "pendingWidths");
  Need(env, "seqLens", seq, int64_t(p.batch) * 4, "batch int32");
  Need(env, "reqPoolIndices", rpi, int64_t(p.batch) * 4, "batch int32");
  Need(env, "pendingSeqLens", pend, int64_t(p.numReqSlots) * 4, "numReqSlots int32");
  Need(env, "pendingWidths", wid, int64_t(p.numReqSlots) * 4, "numReqSlots int32");
  p.seqLens = static_cast<const int32_t*>(seq.ptr);
  p.reqPoolIdx = static_cast<const int32_t*>(rpi.ptr);
  p.pendingSeqLens = static_cast<int32_t*>(pend.ptr);
  p.pendingWidths = static_cast<int32_t*>(wid.ptr);
  return p;
}

CommitPendingParams ParseCommit(Napi::Env env, Napi::Object a) {
  CommitPendingParams p{};
  p.stateType = GetI32(env, a, "stateType", 0, 1);
  p.batch = GetI32(env, a, "batch", 0, kI32Max);
  p.maxDraftTokens = GetI32(env, a, "maxDraftTokens", 1, kMaxVerify);
  p.clampWidth = GetI32(env, a, "clampWidth", 0, kMaxVerify);
  p.numReqSlots = GetI32(env, a, "numReqSlots", 1, kI32Max);
  p.bankStrideRows = GetI32(env, a, "bankStrideRows", p.numReqSlots, kI32Max);
  p.consume = GetI32(env, a, "consume", 0, 1);
  Buf cur = GetBuf(env, a, "curSeqLens"), rpi = GetBuf(env, a, "reqPoolIndices");
  Buf pend = GetBuf(env, a, "pendingSeqLens"), wid = GetBuf(env, a, "pendingWidths"), st = GetBuf(env, a, "state");
  Buf mark = GetBuf(env, a, "markSeqLens", true);
  Need(env, "curSeqLens", cur, int64_t(p.batch) * 4, "batch int32");
  Need(env, "reqPoolIndices", rpi, int64_t(p.batch) * 4, "batch int32");
  Need(env, "pendingSeqLens", pend, int64_t(p.numReqSlots) * 4, "numReqSlots int32");
  Need(env, "pendingWidths", wid, int64_t(p.numReqSlots) * 4, "numReqSlots int32");
  // The source bank a <= min(width, Dmax): highest row (N−1) + Dmax·O < O·(Dmax+1).
  Need(env, "state", st, int64_t(p.bankStrideRows) * (p.maxDraftTokens + 1) * kRowElems * ElemBytes(p.stateType), "bankStrideRows·(maxDraftTokens+1) rows");
  if (mark.ptr) {
    Need(env, "markSeqLens", mark, int64_t(p.batch) * 4, "batch int32");
    p.markWidth = GetI32(env, a, "markWidth", 1, std::min<int64_t>(kMaxVerify, p.maxDraftTokens));
  }
  p.curSeqLens = static_cast<const int32_t*>(cur.ptr);
  p.reqPoolIdx = static_cast<const int32_t*>(rpi.ptr);
  p.pendingSeqLens = static_cast<int32_t*>(pend.ptr);
  p.pendingWidths = static_cast<int32_t*>(wid.ptr);
  p.state = st.ptr;
  p.markSeqLens = static_cast<const int32_t*>(mark.ptr);
  return p;
}

ResetSlotsParams ParseReset(Napi::Env env, Napi::Object a) {
  ResetSlotsParams p{};
  p.stateType = GetI32(env, a, "stateType", 0, 1);
  p.count = GetI32(env, a, "count", 0, 65535);  // grid.x
  p.maxDraftTokens = GetI32(env, a, "maxDraftTokens", 0, kMaxVerify);
  p.numReqSlots = GetI32(env, a, "numReqSlots", 1, kI32Max);
  p.bankStrideRows = GetI32(env, a, "bankStrideRows", p.numReqSlots, kI32Max);
  Buf st = GetBuf(env, a, "state"), slots = GetBuf(env, a, "slots");
  Buf pend = GetBuf(env, a, "pendingSeqLens", true), wid = GetBuf(env, a, "pendingWidths", true);
  Need(env, "state", st, int64_t(p.bankStrideRows) * (p.maxDraftTokens + 1) * kRowElems * ElemBytes(p.stateType), "bankStrideRows·(maxDraftTokens+1) rows");
  Need(env, "slots", slots, int64_t(p.count) * 4, "count int32");
  if ((pend.ptr == nullptr) != (wid.ptr == nullptr)) ThrowTyped(env, kErr, "pendingSeqLens and pendingWidths: give both or neither");
  if (pend.ptr) {
    Need(env, "pendingSeqLens", pend, int64_t(p.numReqSlots) * 4, "numReqSlots int32");
    Need(env, "pendingWidths", wid, int64_t(p.numReqSlots) * 4, "numReqSlots int32");
  }
  p.state = st.ptr;
  p.slots = static_cast<const int32_t*>(slots.ptr);
  p.pendingSeqLens = static_cast<int32_t*>(pend.ptr);
  p.pendingWidths = static_cast<int32_t*>(wid.ptr);
  return p;
}

DecodeParams ParseDecode(Napi::Env env, Napi::Object a) {
  DecodeParams p{};
  p.stateType = GetI32(env, a, "stateType", 0, 1);
  p.batch = GetI32(env, a, "batch", 0, kI32Max);
  p.numReqSlots = GetI32(env, a, "numReqSlots", 1, kI32Max);
  p.slotOffsetRows = GetI32(env, a, "slotOffsetRows", 0, kI32Max);
  Buf st = GetBuf(env, a, "state"), kv = GetBuf(env, a, "kvScore"), ape = GetBuf(env, a, "ape");
  Buf seq = GetBuf(env, a, "seqLens"), rpi = GetBuf(env, a, "reqPoolIndices"), out = GetBuf(env, a, "out");
  // Highest state row touched: (N − 1) + slotOffsetRows.
  Need(env, "state", st, (int64_t(p.numReqSlots) + p.slotOffsetRows) * kRowElems * ElemBytes(p.stateType), "numReqSlots + slotOffsetRows rows");
  Need(env, "kvScore", kv, int64_t(p.batch) * kKvScoreCols * 4, "batch rows of 1024 fp32");
  Need(env, "ape", ape, int64_t(kChunk) * kHeadDim * 4, "[128, 512] fp32");
  Need(env, "seqLens", seq, int64_t(p.batch) * 4, "batch int32");
  Need(env, "reqPoolIndices", rpi, int64_t(p.batch) * 4, "batch int32");
  Need(env, "out", out, int64_t(p.batch) * kHeadDim * 4, "batch rows of 512 fp32");
  p.state = st.ptr;
  p.kvScore = static_cast<const float*>(kv.ptr);
  p.ape = static_cast<const float*>(ape.ptr);
  p.seqLens = static_cast<const int32_t*>(seq.ptr);
  p.reqPoolIdx = static_cast<const int32_t*>(rpi.ptr);
  p.out = static_cast<float*>(out.ptr);
  return p;
}

PrefillParams ParsePrefill(Napi::Env env, Napi::Object a) {
  PrefillParams p{};
  p.stateType = GetI32(env, a, "stateType", 0, 1);
  p.numSegments = GetI32(env, a, "numSegments", 0, kI32Max);
  Buf st = GetBuf(env, a, "state"), kv = GetBuf(env, a, "kvScore"), ape = GetBuf(env, a, "ape");
  Buf seg = GetBuf(env, a, "segments"), out = GetBuf(env, a, "out"), err = GetBuf(env, a, "err");
  Need(env, "segments", seg, int64_t(p.numSegments) * kSegmentFields * 4, "numSegments·5 int32");
  Need(env, "ape", ape, int64_t(kChunk) * kHeadDim * 4, "[128, 512] fp32");
  Need(env, "out", out, int64_t(p.numSegments) * kHeadDim * 4, "numSegments rows of 512 fp32");
  Need(env, "err", err, 16, "int32[4] error word");
  // Device-resident segment rows are checked in the kernel against these bounds (derived from the byte lengths).
  p.stateRows = static_cast<int64_t>(st.bytes) / (kRowElems * ElemBytes(p.stateType));
  p.kvRows = static_cast<int64_t>(kv.bytes) / (kKvScoreCols * 4);
  p.state = st.ptr;
  p.kvScore = static_cast<const float*>(kv.ptr);
  p.ape = static_cast<const float*>(ape.ptr);
  p.segments = static_cast<const int32_t*>(seg.ptr);
  p.out = static_cast<float*>(out.ptr);
  p.err = static_cast<int32_t*>(err.ptr);
  return p;
}

#define DSV4KV_ONLINE_MTP_ENTRY(NAME, PARSE, LAUNCH, EMPTY)                                \
  Napi::Value NAME(const Napi::CallbackInfo& info) {                                      \
    Napi::Env env = info.Env();                                                           \
    if (info.Length() < 2 || !info[1].IsObject()) ThrowTyped(env, kErr, #NAME "(ctx, args): args must be an object"); \
    auto p = PARSE(env, info[1].As<Napi::Object>());                                      \
    LAUNCH_OR_NOCUDA(NAME, LAUNCH, EMPTY)                                                 \
    return env.Undefined();                                                               \
  }
#if DSV4KV_HAVE_CUDA
#define LAUNCH_OR_NOCUDA(NAME, LAUNCH, EMPTY) \
  if (!(EMPTY)) {                             \
    cudaStream_t s = StreamOf(env, info[0]);  \
    DSV4KV_CUDA_TRY(env, LAUNCH(p, s));       \
  }
#else
#define LAUNCH_OR_NOCUDA(NAME, LAUNCH, EMPTY) \
  (void)p;                                    \
  NoCuda(env, "onlineMtp." #NAME);
#endif

DSV4KV_ONLINE_MTP_ENTRY(WritePrefix, ParseWritePrefix, LaunchWritePrefix, p.batch == 0)
DSV4KV_ONLINE_MTP_ENTRY(MarkPending, ParseMark, LaunchMarkPending, p.batch == 0 && !p.clearAll)
DSV4KV_ONLINE_MTP_ENTRY(CommitPending, ParseCommit, LaunchCommitPending, p.batch == 0)
DSV4KV_ONLINE_MTP_ENTRY(ResetSlots, ParseReset, LaunchResetSlots, p.count == 0)
DSV4KV_ONLINE_MTP_ENTRY(Decode, ParseDecode, LaunchDecode, p.batch == 0)
DSV4KV_ONLINE_MTP_ENTRY(Prefill, ParsePrefill, LaunchPrefill, p.numSegments == 0)

#if DSV4KV_HAVE_CUDA
// ---- benchmark: CUDA events, eager back-to-back and CUDA-graph replay, medians ----------------------------------
struct BenchSet {
  std::vector<void*> allocs;
  ~BenchSet() {
    for (void* p : allocs) cudaFree(p);
  }
  template <typename T>
  T* Alloc(Napi::Env env, size_t bytes) {
    void* p = nullptr;
    DSV4KV_CUDA_TRY(env, cudaMalloc(&p, std::max<size_t>(bytes, 16)));
    allocs.push_back(p);
    return static_cast<T*>(p);
  }
};

Napi::Value Bench(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object a = info[1].As<Napi::Object>();
  cudaStream_t s = StreamOf(env, info[0]);
  const std::string op = a.Get("op").As<Napi::String>().Utf8Value();
  const int32_t batch = GetI32(env, a, "batch", 1, 65535);
  const int32_t D = GetI32(env, a, "numVerify", 1, kMaxVerify);
  const int32_t stateType = GetI32(env, a, "stateType", 0, 1);
  const int32_t graph = GetI32(env, a, "graph", 0, 1);
  const int32_t rotate = GetI32(env, a, "rotate", 1, 4096);
  const int32_t iters = GetI32(env, a, "iters", 1, 10000);
  const int32_t reps = GetI32(env, a, "reps", 1, 1000);
  const int64_t copyBytes = a.Has("copyBytes") ? static_cast<int64_t>(a.Get("copyBytes").As<Napi::Number>().DoubleValue()) : 0;

  const int32_t N = batch + 1;           // slot 0 = dummy
  const int32_t O = N + 2;               // bank stride (§3.3)
  const int64_t rows = int64_t(O) * (D + 1);
  const int64_t eb = ElemBytes(stateType);
  BenchSet mem;
  std::vector<int32_t> hSeq(batch), hRpi(batch), hCur(batch);
  const int offsets[7] = {0, 1, 2, 63, 120, 126, 127};  // upstream make_seq_lens, base 8·128
  for (int b = 0; b < batch; ++b) {
    hSeq[b] = 1024 + offsets[b % 7];
    hRpi[b] = b + 1;
    hCur[b] = hSeq[b] + 1 + (b % D);
  }
  int32_t* seq = mem.Alloc<int32_t>(env, batch * 4);
  int32_t* rpi = mem.Alloc<int32_t>(env, batch * 4);
  int32_t* cur = mem.Alloc<int32_t>(env, batch * 4);
  DSV4KV_CUDA_TRY(env, cudaMemcpyAsync(seq, hSeq.data(), batch * 4, cudaMemcpyHostToDevice, s));
  DSV4KV_CUDA_TRY(env, cudaMemcpyAsync(rpi, hRpi.data(), batch * 4, cudaMemcpyHostToDevice, s));
  DSV4KV_CUDA_TRY(env, cudaMemcpyAsync(cur, hCur.data(), batch * 4, cudaMemcpyHostToDevice, s));
  float* ape = mem.Alloc<float>(env, kChunk * kHeadDim * 4);
  DSV4KV_CUDA_TRY(env, LaunchFillRandom(ape, kChunk * kHeadDim, 7, 2.f, 0.f, s));
  std::vector<float*> kv(rotate), out(rotate);
  std::vector<void*> state(rotate);
  std::vector<int32_t*> pend(rotate), wid(rotate);
  for (int i = 0; i < rotate; ++i) {
    kv[i] = mem.Alloc<float>(env, int64_t(batch) * D * kKvScoreCols * 4);
    DSV4KV_CUDA_TRY(env, LaunchFillRandom(kv[i], int64_t(batch) * D * kKvScoreCols, 11 + i, 4.f, 0.f, s));
    state[i] = mem.Alloc<char>(env, rows * kRowElems * eb);
    DSV4KV_CUDA_TRY(env, LaunchFillStateRandom(state[i], rows, stateType, 13 + i, s));
    out[i] = mem.Alloc<float>(env, int64_t(batch) * kHeadDim * 4);
    pend[i] = mem.Alloc<int32_t>(env, N * 4);
    wid[i] = mem.Alloc<int32_t>(env, N * 4);
  }
  char* cpySrc = nullptr;
  char* cpyDst = nullptr;
  if (op == "copy") {
    cpySrc = mem.Alloc<char>(env, copyBytes);
    cpyDst = mem.Alloc<char>(env, copyBytes);
  }
  auto launch = [&](int i) -> cudaError_t {
    const int k = i % rotate;
    if (op == "writePrefix") {
      WritePrefixParams p{kv[k], seq, rpi, ape, state[k], batch, D, O, N, stateType};
      return LaunchWritePrefix(p, s);
    }
    if (op == "mark" || op == "markUpstream") {
      MarkPendingParams p{seq, rpi, pend[k], wid[k], batch, D, N, op == "markUpstream" ? 1 : 0};
      return LaunchMarkPending(p, s);
    }
    if (op == "commit" || op == "commitMark") {
      // the pending markers are re-armed by the fused mark (same S every call), so every call commits
      // "commit": consume = 0 so the markers stay armed and every call really copies (upstream's commit also
      // leaves pending untouched); "commitMark": consume + fused re-mark of the same S, also copying every call.
      CommitPendingParams p{cur, rpi, pend[k], wid[k], state[k], batch, D, 0, O, N, op == "commitMark" ? 1 : 0,
                            op == "commitMark" ? seq : nullptr, D, stateType};
      return LaunchCommitPending(p, s);
    }
    if (op == "decode") {
      DecodeParams p{state[k], kv[k], ape, cur, rpi, out[k], batch, 0, N, stateType};
      return LaunchDecode(p, s);
    }
    if (op == "empty") return LaunchEmpty(s);
    if (op == "copy") return cudaMemcpyAsync(cpyDst, cpySrc, copyBytes, cudaMemcpyDeviceToDevice, s);
    return cudaErrorInvalidValue;
  };
  // markers armed for commit: pending = S, width D
  for (int i = 0; i < rotate; ++i) {
    MarkPendingParams p{seq, rpi, pend[i], wid[i], batch, D, N, 1};
    DSV4KV_CUDA_TRY(env, LaunchMarkPending(p, s));
  }
  for (int i = 0; i < 20; ++i) DSV4KV_CUDA_TRY(env, launch(i));  // warm-up
  cudaEvent_t e0, e1;
  DSV4KV_CUDA_TRY(env, cudaEventCreate(&e0));
  DSV4KV_CUDA_TRY(env, cudaEventCreate(&e1));
  std::vector<double> samples;
  cudaGraphExec_t exec = nullptr;
  cudaGraph_t g = nullptr;
  if (graph) {
    DSV4KV_CUDA_TRY(env, cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < iters; ++i) launch(i);
    DSV4KV_CUDA_TRY(env, cudaStreamEndCapture(s, &g));
    DSV4KV_CUDA_TRY(env, cudaGraphInstantiate(&exec, g, 0));
    for (int w = 0; w < 3; ++w) DSV4KV_CUDA_TRY(env, cudaGraphLaunch(exec, s));
  }
  for (int r = 0; r < reps; ++r) {
    DSV4KV_CUDA_TRY(env, cudaEventRecord(e0, s));
    if (graph) {
      DSV4KV_CUDA_TRY(env, cudaGraphLaunch(exec, s));
    } else {
      for (int i = 0; i < iters; ++i) DSV4KV_CUDA_TRY(env, launch(i));
    }
    DSV4KV_CUDA_TRY(env, cudaEventRecord(e1, s));
    DSV4KV_CUDA_TRY(env, cudaEventSynchronize(e1));
    float ms = 0.f;
    DSV4KV_CUDA_TRY(env, cudaEventElapsedTime(&ms, e0, e1));
    samples.push_back(ms * 1000.0 / iters);
  }
  if (exec) cudaGraphExecDestroy(exec);
  if (g) cudaGraphDestroy(g);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  DSV4KV_CUDA_TRY(env, cudaStreamSynchronize(s));
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  Napi::Object r = Napi::Object::New(env);
  r.Set("usPerCall", sorted[sorted.size() / 2]);
  r.Set("minUs", sorted.front());
  r.Set("maxUs", sorted.back());
  return r;
}
#else
Napi::Value Bench(const Napi::CallbackInfo& info) { NoCuda(info.Env(), "onlineMtp.bench"); }
#endif

}  // namespace
}  // namespace online_mtp
}  // namespace dsv4kv

void RegisterOnlineMtp(Napi::Env env, Napi::Object exports) {
  using namespace dsv4kv::online_mtp;
  Napi::Object o = Napi::Object::New(env);
  o.Set("writePrefix", Napi::Function::New(env, WritePrefix, "writePrefix"));
  o.Set("markPending", Napi::Function::New(env, MarkPending, "markPending"));
  o.Set("commitPending", Napi::Function::New(env, CommitPending, "commitPending"));
  o.Set("resetSlots", Napi::Function::New(env, ResetSlots, "resetSlots"));
  o.Set("decode", Napi::Function::New(env, Decode, "decode"));
  o.Set("prefill", Napi::Function::New(env, Prefill, "prefill"));
  o.Set("bench", Napi::Function::New(env, Bench, "bench"));
  o.Set("headDim", Napi::Number::New(env, kHeadDim));
  o.Set("maxVerifyTokens", Napi::Number::New(env, kMaxVerify));
  exports.Set("onlineMtp", o);
}
