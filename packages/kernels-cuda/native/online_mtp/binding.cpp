// JS bindings of the online c128 MTP kernels (exports.onlineMtp). Every call takes (ctx, args) where args is an
// object of DeviceBuffers and integers; every precondition is checked here before a launch (sizes derived from the
// buffers' byte lengths), so a wrong call is a JS error (code ERR_DSV4KV_ONLINE_MTP), never a bad launch. Launches
// are enqueued on ctx's stream without a sync (CUDA-graph capturable by `bench`).
//
//   writePrefix(ctx, {kvScore, seqLens, reqPoolIndices, ape, state, batch, numVerify, bankStrideRows, numReqSlots, stateType,
//                     variant?, split?, err?})
//   markPending(ctx, {seqLens, reqPoolIndices, pendingSeqLens, pendingWidths, batch, numVerify, numReqSlots, clearAll})
//   commitPending(ctx, {curSeqLens, reqPoolIndices, pendingSeqLens, pendingWidths, state, batch, maxDraftTokens,
//                       clampWidth, bankStrideRows, numReqSlots, consume, markSeqLens?, markWidth?, stateType, variant?, err?})
//   resetSlots(ctx, {state, slots, pendingSeqLens?, pendingWidths?, count, bankStrideRows, maxDraftTokens, numReqSlots, stateType, err?})
//   decode(ctx, {state, kvScore, ape, seqLens, reqPoolIndices, out, batch, slotOffsetRows, numReqSlots, stateType, variant?, split?, err?})
//   prefill(ctx, {state, kvScore, ape, segments, out, err, numSegments, stateType})
//   copyToDevice(ctx, buf, view, byteOffset?) / copyToHost(ctx, buf, view, byteOffset?) / fill(ctx, buf, byte):
//       copies and memset ordered on ctx's stream (no stream synchronisation needed around them; copyToHost returns
//       once the bytes are in `view`, after the work queued before it)
//   bench(ctx, {op, batch, numVerify, stateType, graph, rotate, iters, reps, copyBytes?, variant?, split?})
//       -> {usPerCall, minUs, maxUs, variant, split}
// `err` (optional int32[4] device buffer): a request / slot index >= numReqSlots is recorded there as
// [code, batch row, value, kernel] and the row skipped; without it such rows are skipped silently (the no-op rule of
// docs/reference/online-mtp.md §13). Negative request indices are padding and always skipped silently.
#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "common.h"
#include "online_mtp/online_mtp.h"
#include "online_mtp/online_mtp_kernels.cuh"

namespace dsv4kv {
namespace online_mtp {
namespace {

constexpr const char* kErr = "ERR_DSV4KV_ONLINE_MTP";

[[noreturn]] void Fail(Napi::Env env, const std::string& field, int64_t value, const std::string& rule) {
  ThrowField(env, kErr, field, static_cast<double>(value), rule);
}

int32_t GetI32(Napi::Env env, Napi::Object o, const char* key, int64_t lo, int64_t hi) {
  Napi::Value v = o.Get(key);
  // No coercion: a boolean is not 0/1 (the TS layer passes every flag as a number).
  if (!v.IsNumber())
    ThrowField(env, "ERR_INVALID_ARG_TYPE", key, v,
               "must be a number (an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "])");
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!(d >= static_cast<double>(lo) && d <= static_cast<double>(hi)) ||
      d != static_cast<double>(static_cast<int64_t>(d)))
    ThrowField(env, kErr, key, d, "must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return static_cast<int32_t>(d);
}

// An optional integer field: `def` when absent, else the same rule as GetI32.
int32_t GetI32Opt(Napi::Env env, Napi::Object o, const char* key, int64_t lo, int64_t hi, int32_t def) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined() || v.IsNull()) return def;
  return GetI32(env, o, key, lo, hi);
}

// A required integer in [lo, hi] beyond int32 (byte counts).
int64_t GetI64(Napi::Env env, Napi::Object o, const char* key, int64_t lo, int64_t hi) {
  Napi::Value v = o.Get(key);
  const std::string range = "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  if (!v.IsNumber()) ThrowField(env, "ERR_INVALID_ARG_TYPE", key, v, "must be a number (" + range + ")");
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!(d >= static_cast<double>(lo) && d <= static_cast<double>(hi)) ||
      d != static_cast<double>(static_cast<int64_t>(d)))
    ThrowField(env, kErr, key, d, "must be " + range);
  return static_cast<int64_t>(d);
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
    Fail(env, std::string(field) + ".byteLength", static_cast<int64_t>(b.bytes),
         "must be >= " + std::to_string(needBytes) + " (" + why + ")");
}

// The vector kernels access 16 bytes (fp32) or 8 bytes (bf16 state) at a time from each buffer's base.
void NeedAligned(Napi::Env env, const char* field, const Buf& b) {
  const int64_t addr = static_cast<int64_t>(reinterpret_cast<uintptr_t>(b.ptr));
  if (addr % 16 != 0)
    Fail(env, std::string(field) + " device address mod 16", addr % 16, "must be 0 (16-byte vector access)");
}

// `b` as a T*, once it holds `needBytes` (Need).
template <typename T>
T* Sized(Napi::Env env, const char* field, const Buf& b, int64_t needBytes, const std::string& why) {
  Need(env, field, b, needBytes, why);
  return static_cast<T*>(b.ptr);
}
// An int32 vector of `count` entries (`countName` says which count, for the rule).
int32_t* I32s(Napi::Env env, const char* field, const Buf& b, int64_t count, const char* countName) {
  return Sized<int32_t>(env, field, b, count * 4, std::string(countName) + " int32");
}
// The pending markers: pendingSeqLens and pendingWidths, numReqSlots int32 each.
std::pair<int32_t*, int32_t*> Pending(Napi::Env env, const Buf& pend, const Buf& wid, int32_t numReqSlots) {
  int32_t* seq = I32s(env, "pendingSeqLens", pend, numReqSlots, "numReqSlots");
  return {seq, I32s(env, "pendingWidths", wid, numReqSlots, "numReqSlots")};
}
// The position embedding, [128, 512] fp32.
const float* ApeOf(Napi::Env env, const Buf& ape) {
  return Sized<const float>(env, "ape", ape, int64_t(kChunk) * kHeadDim * 4, "[128, 512] fp32");
}
// Bytes of `rows` state rows (`banks` banks of `strideRows` rows).
int64_t StateBytes(int64_t strideRows, int64_t banks, int32_t stateType) {
  return strideRows * banks * kRowElems * ElemBytes(stateType);
}

Buf GetErr(Napi::Env env, Napi::Object a) {
  Buf e = GetBuf(env, a, "err", true);
  if (e.ptr) Need(env, "err", e, 16, "int32[4] error word");
  return e;
}

// `variant` in [0, maxVariant], `def` when left out. A binary built without DSV4KV_BENCH_VARIANTS holds only the
// default shape `shipped` (named `shippedName`); asking it for another is refused before any launch.
int32_t GetVariant(Napi::Env env, Napi::Object a, int32_t maxVariant, int32_t def, int32_t shipped,
                   const char* shippedName) {
  const int32_t v = GetI32Opt(env, a, "variant", 0, maxVariant, def);
  if (!kBenchVariants && v >= 0 && v != shipped)
    Fail(env, "variant", v,
         "must be " + std::to_string(shipped) + " (" + shippedName +
             ") in this build: the benchmark-only variants are built only with the CMake option "
             "DSV4KV_BENCH_VARIANTS=ON");
  return v;
}
int32_t GetSplit(Napi::Env env, Napi::Object a) {
  const int32_t split = GetI32Opt(env, a, "split", 0, kMaxSplit, 0);
  if (split & (split - 1)) Fail(env, "split", split, "must be 0 (auto), 1, 2, 4, 8 or 16");
  return split;
}

// Launch shape when `variant` / `split` are left out: the fastest on the H200 sweeps (docs/decisions.md D14, D23).
// writePrefix: D = 1 spreads a request over 4 blocks up to an eighth of the SM count, then 2; D >= 2 over 4 blocks
// up to half the SM count, then 8, and past the SM count 1 from kIndexFirstMinD on (L2-cold it streams best). The
// benchmark-only decode shapes keep D14's rule: 4 blocks up to the SM count, then 1.
int32_t AutoWritePrefixSplit(int32_t batch, int32_t numVerify, int smCount) {
  if (numVerify == 1) return int64_t(batch) * 8 <= smCount ? 4 : 2;
  if (int64_t(batch) * 2 <= smCount) return 4;
  return batch <= smCount || numVerify < kIndexFirstMinD ? 8 : 1;
}
int32_t AutoSplit(int32_t batch, int smCount) { return batch <= smCount ? 4 : 1; }

#if DSV4KV_HAVE_CUDA
Context* CtxOf(Napi::Env env, Napi::Value v) {
  Context* c = Context::FromValue(env, v, "ctx");
  c->Activate(env);
  return c;
}
cudaStream_t StreamOf(Napi::Env env, Napi::Value v) { return CtxOf(env, v)->stream(); }
#endif

// Host-resolved launch shape (auto split from the context's SM count); no-op for kernels without one.
template <typename P>
void Finalize(P&, int) {}
void Finalize(WritePrefixParams& p, int sm) {
  if (p.variant < 0) p.variant = kWpScalar;
  if (p.split == 0)
    p.split = p.variant == kWpScalar ? AutoWritePrefixSplit(p.batch, p.numVerify, sm) : AutoSplit(p.batch, sm);
}
void Finalize(DecodeParams& p, int sm) {
  if (p.variant != kWpLegacy && p.split == 0) p.split = AutoSplit(p.batch, sm);
}

// The fields every state kernel's arguments start with, in their validation order: stateType, then batch.
template <typename P>
P StateAndBatch(Napi::Env env, Napi::Object a) {
  P p{};
  p.stateType = GetI32(env, a, "stateType", 0, 1);
  p.batch = GetI32(env, a, "batch", 0, kI32Max);
  return p;
}

WritePrefixParams ParseWritePrefix(Napi::Env env, Napi::Object a) {
  auto p = StateAndBatch<WritePrefixParams>(env, a);
  p.numVerify = GetI32(env, a, "numVerify", 1, kMaxVerify);
  p.numReqSlots = GetI32(env, a, "numReqSlots", 1, kI32Max);
  p.bankStrideRows = GetI32(env, a, "bankStrideRows", p.numReqSlots, kI32Max);  // banks must not overlap: r < N <= O
  p.variant = GetVariant(env, a, kWpScalar, -1, kWpScalar, "scalar");           // -1: the default (kWpScalar)
  p.split = GetSplit(env, a);
  Buf kv = GetBuf(env, a, "kvScore"), seq = GetBuf(env, a, "seqLens"), rpi = GetBuf(env, a, "reqPoolIndices");
  Buf ape = GetBuf(env, a, "ape"), st = GetBuf(env, a, "state");
  Buf err = GetErr(env, a);
  for (auto [f, b] : {std::pair<const char*, const Buf*>{"kvScore", &kv}, {"ape", &ape}, {"state", &st}})
    NeedAligned(env, f, *b);
  // Highest input row read: batch·D − 1; highest state row written: (N−1) + D·O < O·(D+1).
  p.kvScore = Sized<const float>(env, "kvScore", kv, int64_t(p.batch) * p.numVerify * kKvScoreCols * 4,
                                 "batch·numVerify rows of 1024 fp32");
  p.seqLens = I32s(env, "seqLens", seq, p.batch, "batch");
  p.reqPoolIdx = I32s(env, "reqPoolIndices", rpi, p.batch, "batch");
  p.ape = ApeOf(env, ape);
  p.state = Sized<void>(env, "state", st, StateBytes(p.bankStrideRows, p.numVerify + 1, p.stateType),
                        "bankStrideRows·(numVerify+1) rows");
  p.err = static_cast<int32_t*>(err.ptr);
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
  p.seqLens = I32s(env, "seqLens", seq, p.batch, "batch");
  p.reqPoolIdx = I32s(env, "reqPoolIndices", rpi, p.batch, "batch");
  std::tie(p.pendingSeqLens, p.pendingWidths) = Pending(env, pend, wid, p.numReqSlots);
  return p;
}

CommitPendingParams ParseCommit(Napi::Env env, Napi::Object a) {
  auto p = StateAndBatch<CommitPendingParams>(env, a);
  p.maxDraftTokens = GetI32(env, a, "maxDraftTokens", 1, kMaxVerify);
  p.clampWidth = GetI32(env, a, "clampWidth", 0, kMaxVerify);
  p.numReqSlots = GetI32(env, a, "numReqSlots", 1, kI32Max);
  p.bankStrideRows = GetI32(env, a, "bankStrideRows", p.numReqSlots, kI32Max);
  p.consume = GetI32(env, a, "consume", 0, 1);
  p.variant = GetVariant(env, a, kCommitWide, kCommitRegs, kCommitRegs, "regs");
  Buf cur = GetBuf(env, a, "curSeqLens"), rpi = GetBuf(env, a, "reqPoolIndices");
  Buf pend = GetBuf(env, a, "pendingSeqLens"), wid = GetBuf(env, a, "pendingWidths"), st = GetBuf(env, a, "state");
  Buf mark = GetBuf(env, a, "markSeqLens", true);
  Buf err = GetErr(env, a);
  NeedAligned(env, "state", st);
  p.curSeqLens = I32s(env, "curSeqLens", cur, p.batch, "batch");
  p.reqPoolIdx = I32s(env, "reqPoolIndices", rpi, p.batch, "batch");
  std::tie(p.pendingSeqLens, p.pendingWidths) = Pending(env, pend, wid, p.numReqSlots);
  // The source bank a <= min(width, Dmax): highest row (N−1) + Dmax·O < O·(Dmax+1).
  p.state = Sized<void>(env, "state", st, StateBytes(p.bankStrideRows, p.maxDraftTokens + 1, p.stateType),
                        "bankStrideRows·(maxDraftTokens+1) rows");
  if (mark.ptr) {
    p.markSeqLens = I32s(env, "markSeqLens", mark, p.batch, "batch");
    p.markWidth = GetI32(env, a, "markWidth", 1, std::min<int64_t>(kMaxVerify, p.maxDraftTokens));
  }
  p.err = static_cast<int32_t*>(err.ptr);
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
  Buf err = GetErr(env, a);
  p.state = Sized<void>(env, "state", st, StateBytes(p.bankStrideRows, p.maxDraftTokens + 1, p.stateType),
                        "bankStrideRows·(maxDraftTokens+1) rows");
  p.slots = I32s(env, "slots", slots, p.count, "count");
  if ((pend.ptr == nullptr) != (wid.ptr == nullptr))
    ThrowField(env, kErr, "pendingWidths", "must be given together with pendingSeqLens (both or neither)");
  if (pend.ptr) std::tie(p.pendingSeqLens, p.pendingWidths) = Pending(env, pend, wid, p.numReqSlots);
  p.err = static_cast<int32_t*>(err.ptr);
  return p;
}

DecodeParams ParseDecode(Napi::Env env, Napi::Object a) {
  auto p = StateAndBatch<DecodeParams>(env, a);
  p.numReqSlots = GetI32(env, a, "numReqSlots", 1, kI32Max);
  p.slotOffsetRows = GetI32(env, a, "slotOffsetRows", 0, kI32Max);
  p.variant = GetVariant(env, a, kWpScalar, kWpLegacy, kWpLegacy, "legacy");
  if (p.variant == kWpVecAccurate)
    Fail(env, "variant", p.variant, "must be 0 (legacy), 1 (vec) or 3 (scalar) for decode");
  p.split = GetSplit(env, a);
  Buf st = GetBuf(env, a, "state"), kv = GetBuf(env, a, "kvScore"), ape = GetBuf(env, a, "ape");
  Buf seq = GetBuf(env, a, "seqLens"), rpi = GetBuf(env, a, "reqPoolIndices"), out = GetBuf(env, a, "out");
  Buf err = GetErr(env, a);
  for (auto [f, b] : {std::pair<const char*, const Buf*>{"kvScore", &kv}, {"ape", &ape}, {"state", &st}, {"out", &out}})
    NeedAligned(env, f, *b);
  // Highest state row touched: (N − 1) + slotOffsetRows.
  p.state = Sized<void>(env, "state", st, StateBytes(int64_t(p.numReqSlots) + p.slotOffsetRows, 1, p.stateType),
                        "numReqSlots + slotOffsetRows rows");
  p.kvScore = Sized<const float>(env, "kvScore", kv, int64_t(p.batch) * kKvScoreCols * 4, "batch rows of 1024 fp32");
  p.ape = ApeOf(env, ape);
  p.seqLens = I32s(env, "seqLens", seq, p.batch, "batch");
  p.reqPoolIdx = I32s(env, "reqPoolIndices", rpi, p.batch, "batch");
  p.out = Sized<float>(env, "out", out, int64_t(p.batch) * kHeadDim * 4, "batch rows of 512 fp32");
  p.err = static_cast<int32_t*>(err.ptr);
  return p;
}

PrefillParams ParsePrefill(Napi::Env env, Napi::Object a) {
  PrefillParams p{};
  p.stateType = GetI32(env, a, "stateType", 0, 1);
  p.numSegments = GetI32(env, a, "numSegments", 0, kI32Max);
  Buf st = GetBuf(env, a, "state"), kv = GetBuf(env, a, "kvScore"), ape = GetBuf(env, a, "ape");
  Buf seg = GetBuf(env, a, "segments"), out = GetBuf(env, a, "out"), err = GetBuf(env, a, "err");
  p.segments =
      Sized<const int32_t>(env, "segments", seg, int64_t(p.numSegments) * kSegmentFields * 4, "numSegments·5 int32");
  p.ape = ApeOf(env, ape);
  p.out = Sized<float>(env, "out", out, int64_t(p.numSegments) * kHeadDim * 4, "numSegments rows of 512 fp32");
  p.err = Sized<int32_t>(env, "err", err, 16, "int32[4] error word");
  // Device-resident segment rows are checked in the kernel against these bounds (derived from the byte lengths).
  p.stateRows = static_cast<int64_t>(st.bytes) / (kRowElems * ElemBytes(p.stateType));
  p.kvRows = static_cast<int64_t>(kv.bytes) / (kKvScoreCols * 4);
  p.state = st.ptr;
  p.kvScore = static_cast<const float*>(kv.ptr);
  return p;
}

#define DSV4KV_ONLINE_MTP_ENTRY(NAME, PARSE, LAUNCH, EMPTY)                                              \
  Napi::Value NAME(const Napi::CallbackInfo& info) {                                                     \
    Napi::Env env = info.Env();                                                                          \
    if (info.Length() < 2 || !info[1].IsObject())                                                        \
      ThrowField(env, kErr, "args", info.Length() < 2 ? env.Undefined() : info[1], "must be an object"); \
    auto p = PARSE(env, info[1].As<Napi::Object>());                                                     \
    LAUNCH_OR_NOCUDA(NAME, LAUNCH, EMPTY)                                                                \
    return env.Undefined();                                                                              \
  }
#if DSV4KV_HAVE_CUDA
#define LAUNCH_OR_NOCUDA(NAME, LAUNCH, EMPTY)     \
  if (!(EMPTY)) {                                 \
    Context* c = CtxOf(env, info[0]);             \
    Finalize(p, c->smCount());                    \
    DSV4KV_CUDA_TRY(env, LAUNCH(p, c->stream())); \
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
// ---- stream-ordered host <-> device copies and fill ------------------------------------------------------------
// The DeviceBuffer methods (common.cpp) use cudaMemcpy / cudaMemset on the legacy default stream, which is not
// ordered with the context's non-blocking stream, so a caller had to synchronise the stream around every copy.
// These run on ctx's stream instead: an upload is ordered after the kernels queued before it (no write-after-read
// race on a buffer a queued kernel still reads) and before the kernels queued after it. Host views are pageable
// (Node's ArrayBuffers are never page-locked by this addon), so cudaMemcpyAsync stages an upload before returning
// (the view may change right after) and a download returns once its bytes have arrived.
struct CopyArgs {
  Context* ctx;
  DeviceBuffer* buf;
  HostView view;
  size_t offset;
};
CopyArgs ParseCopy(const Napi::CallbackInfo& info, const char* what) {
  Napi::Env env = info.Env();
  if (info.Length() < 3)
    ThrowField(env, kErr, "arguments.length", info.Length(),
               std::string(what) + "(ctx, buf, view, byteOffset?) needs 3");
  CopyArgs c{};
  c.ctx = CtxOf(env, info[0]);
  c.buf = DeviceBuffer::FromValue(env, info[1], "buf");
  c.buf->RequireBytes(env, 0, "buf");
  if (c.buf->device() != c.ctx->device())
    Fail(env, "buf.device", c.buf->device(), "must be ctx.device = " + std::to_string(c.ctx->device()));
  c.view = HostViewOf(env, info[2], "view");
  double off = 0;
  if (info.Length() > 3 && !info[3].IsUndefined()) {
    if (!info[3].IsNumber()) ThrowField(env, kErr, "byteOffset", info[3], "must be a number");
    off = info[3].As<Napi::Number>().DoubleValue();
  }
  const double room = static_cast<double>(c.buf->bytes()) - static_cast<double>(c.view.bytes);
  if (!(off >= 0 && off == static_cast<double>(static_cast<int64_t>(off)) && off <= room))
    Fail(env, "byteOffset", static_cast<int64_t>(off),
         "must be an integer in [0, buf.byteLength − view.byteLength] = [0, " +
             std::to_string(static_cast<int64_t>(room)) + "]");
  c.offset = static_cast<size_t>(off);
  return c;
}
Napi::Value CopyToDevice(const Napi::CallbackInfo& info) {
  CopyArgs c = ParseCopy(info, "copyToDevice");
  if (c.view.bytes)
    DSV4KV_CUDA_TRY(info.Env(), cudaMemcpyAsync(static_cast<uint8_t*>(c.buf->data()) + c.offset, c.view.data,
                                                c.view.bytes, cudaMemcpyHostToDevice, c.ctx->stream()));
  return info.Env().Undefined();
}
Napi::Value CopyToHost(const Napi::CallbackInfo& info) {
  CopyArgs c = ParseCopy(info, "copyToHost");
  if (c.view.bytes) {
    DSV4KV_CUDA_TRY(info.Env(), cudaMemcpyAsync(c.view.data, static_cast<const uint8_t*>(c.buf->data()) + c.offset,
                                                c.view.bytes, cudaMemcpyDeviceToHost, c.ctx->stream()));
    // Pageable destination: the copy has completed already; the wait below only matters for a page-locked view.
    DSV4KV_CUDA_TRY(info.Env(), cudaStreamSynchronize(c.ctx->stream()));
  }
  return info[2];
}
Napi::Value Fill(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 3) ThrowField(env, kErr, "arguments.length", info.Length(), "fill(ctx, buf, byte) needs 3");
  Context* ctx = CtxOf(env, info[0]);
  DeviceBuffer* b = DeviceBuffer::FromValue(env, info[1], "buf");
  b->RequireBytes(env, 0, "buf");
  if (b->device() != ctx->device())
    Fail(env, "buf.device", b->device(), "must be ctx.device = " + std::to_string(ctx->device()));
  Napi::Object o = Napi::Object::New(env);
  o.Set("byte", info[2]);
  const int32_t byte = GetI32(env, o, "byte", 0, 255);
  if (b->bytes()) DSV4KV_CUDA_TRY(env, cudaMemsetAsync(b->data(), byte, b->bytes(), ctx->stream()));
  return info[1];
}
#else
Napi::Value CopyToDevice(const Napi::CallbackInfo& info) { NoCuda(info.Env(), "onlineMtp.copyToDevice"); }
Napi::Value CopyToHost(const Napi::CallbackInfo& info) { NoCuda(info.Env(), "onlineMtp.copyToHost"); }
Napi::Value Fill(const Napi::CallbackInfo& info) { NoCuda(info.Env(), "onlineMtp.fill"); }
#endif

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
  if (info.Length() < 2 || !info[1].IsObject())
    ThrowField(env, kErr, "args", info.Length() < 2 ? env.Undefined() : info[1], "must be an object");
  Napi::Object a = info[1].As<Napi::Object>();
  cudaStream_t s = StreamOf(env, info[0]);
  if (!a.Get("op").IsString()) ThrowField(env, kErr, "op", a.Get("op"), "must be a string");
  const std::string op = a.Get("op").As<Napi::String>().Utf8Value();
  static const char* const kOps[] = {"writePrefix", "mark",  "markUpstream", "commit",    "commitMark",
                                     "decode",      "empty", "copy",         "copyKernel"};
  if (std::none_of(std::begin(kOps), std::end(kOps), [&](const char* o) { return op == o; }))
    ThrowField(env, kErr, "op", a.Get("op"),
               "must be one of writePrefix, mark, markUpstream, commit, commitMark, decode, empty, copy, copyKernel");
  const int32_t batch = GetI32(env, a, "batch", 1, 65535);
  const int32_t D = GetI32(env, a, "numVerify", 1, kMaxVerify);
  const int32_t stateType = GetI32(env, a, "stateType", 0, 1);
  const int32_t graph = GetI32(env, a, "graph", 0, 1);
  const int32_t rotate = GetI32(env, a, "rotate", 1, 4096);
  const int32_t iters = GetI32(env, a, "iters", 1, 10000);
  const int32_t reps = GetI32(env, a, "reps", 1, 1000);
  const bool commitOp = op == "commit" || op == "commitMark";
  // -1: each op's default. Only writePrefix, commit and decode launch a shape; each takes its own (commit: 0..2;
  // decode: not 2).
  const int32_t variant = op == "writePrefix" ? GetVariant(env, a, kWpScalar, -1, kWpScalar, "scalar")
                          : commitOp          ? GetVariant(env, a, kCommitWide, -1, kCommitRegs, "regs")
                          : op == "decode"    ? GetVariant(env, a, kWpScalar, -1, kWpLegacy, "legacy")
                                              : GetI32Opt(env, a, "variant", 0, kWpScalar, -1);
  if (op == "decode" && variant == kWpVecAccurate)
    Fail(env, "variant", variant, "must be 0 (legacy), 1 (vec) or 3 (scalar) for decode");
  int32_t split = GetSplit(env, a);
  const int sm = CtxOf(env, info[0])->smCount();
  const int32_t wpVariant = variant >= 0 ? variant : kWpScalar;
  if (split == 0)
    split = op == "writePrefix" && wpVariant == kWpScalar ? AutoWritePrefixSplit(batch, D, sm) : AutoSplit(batch, sm);
  // The copy ops' size: 1 byte to 16 GiB, an integer (no other op reads it); `rotate` source / destination pairs.
  // copyKernel (a float4 copy kernel, 4 blocks of 512 per SM) moves the bytes rounded down to 16.
  const bool copyOp = op == "copy" || op == "copyKernel";
  const int64_t copyBytes = copyOp ? GetI64(env, a, "copyBytes", 1, int64_t{1} << 34) : 0;

  const int32_t N = batch + 1;  // slot 0 = dummy
  const int32_t O = N + 2;      // bank stride (docs/reference/online-mtp.md §7.2)
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
  std::vector<char*> cpySrc, cpyDst;
  for (int i = 0; copyOp && i < rotate; ++i) {
    cpySrc.push_back(mem.Alloc<char>(env, copyBytes));
    cpyDst.push_back(mem.Alloc<char>(env, copyBytes));
    DSV4KV_CUDA_TRY(env, LaunchFillRandom(reinterpret_cast<float*>(cpySrc.back()), copyBytes / 4, 17 + i, 2.f, 0.f, s));
  }
  auto launch = [&](int i) -> cudaError_t {
    const int k = i % rotate;
    if (op == "writePrefix") {
      WritePrefixParams p{};
      p.kvScore = kv[k], p.seqLens = seq, p.reqPoolIdx = rpi, p.ape = ape, p.state = state[k];
      p.batch = batch, p.numVerify = D, p.bankStrideRows = O, p.numReqSlots = N, p.stateType = stateType;
      p.variant = wpVariant, p.split = split;
      return LaunchWritePrefix(p, s);
    }
    if (op == "mark" || op == "markUpstream") {
      MarkPendingParams p{};
      p.seqLens = seq, p.reqPoolIdx = rpi, p.pendingSeqLens = pend[k], p.pendingWidths = wid[k];
      p.batch = batch, p.numVerify = D, p.numReqSlots = N, p.clearAll = op == "markUpstream" ? 1 : 0;
      return LaunchMarkPending(p, s);
    }
    if (op == "commit" || op == "commitMark") {
      // the pending markers are re-armed by the fused mark (same S every call), so every call commits
      // "commit": consume = 0 so the markers stay armed and every call really copies (upstream's commit also
      // leaves pending untouched); "commitMark": consume + fused re-mark of the same S, also copying every call.
      CommitPendingParams p{};
      p.curSeqLens = cur, p.reqPoolIdx = rpi, p.pendingSeqLens = pend[k], p.pendingWidths = wid[k], p.state = state[k];
      p.batch = batch, p.maxDraftTokens = D, p.clampWidth = 0, p.bankStrideRows = O, p.numReqSlots = N;
      p.consume = op == "commitMark" ? 1 : 0, p.markSeqLens = op == "commitMark" ? seq : nullptr, p.markWidth = D;
      p.stateType = stateType, p.variant = variant < 0 ? kCommitRegs : variant;
      return LaunchCommitPending(p, s);
    }
    if (op == "decode") {
      DecodeParams p{};
      p.state = state[k], p.kvScore = kv[k], p.ape = ape, p.seqLens = cur, p.reqPoolIdx = rpi, p.out = out[k];
      p.batch = batch, p.slotOffsetRows = 0, p.numReqSlots = N, p.stateType = stateType;
      p.variant = variant < 0 ? kWpLegacy : variant, p.split = split;
      return LaunchDecode(p, s);
    }
    if (op == "empty") return LaunchEmpty(s);
    if (op == "copy") return cudaMemcpyAsync(cpyDst[k], cpySrc[k], copyBytes, cudaMemcpyDeviceToDevice, s);
    if (op == "copyKernel") return LaunchCopy4(cpySrc[k], cpyDst[k], copyBytes, 4 * sm, s);
    return cudaErrorInvalidValue;
  };
  // markers armed for commit: pending = S, width D
  for (int i = 0; i < rotate; ++i) {
    MarkPendingParams p{};
    p.seqLens = seq, p.reqPoolIdx = rpi, p.pendingSeqLens = pend[i], p.pendingWidths = wid[i];
    p.batch = batch, p.numVerify = D, p.numReqSlots = N, p.clearAll = 1;
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
  r.Set("variant", op == "writePrefix" ? wpVariant : variant);
  r.Set("split", split);
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
  o.Set("copyToDevice", Napi::Function::New(env, CopyToDevice, "copyToDevice"));
  o.Set("copyToHost", Napi::Function::New(env, CopyToHost, "copyToHost"));
  o.Set("fill", Napi::Function::New(env, Fill, "fill"));
  o.Set("headDim", Napi::Number::New(env, kHeadDim));
  o.Set("maxVerifyTokens", Napi::Number::New(env, kMaxVerify));
  // Whether the benchmark-only kernel shapes were built in (DSV4KV_BENCH_VARIANTS; docs/decisions.md D23).
  o.Set("benchVariants", Napi::Boolean::New(env, kBenchVariants));
  exports.Set("onlineMtp", o);
}
