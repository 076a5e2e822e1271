// JS bindings of the online c128 MTP kernels (exports.onlineMtp). Every call takes (ctx, args) where args is an
// object of DeviceBuffers and integers, read through one key table per call (kWritePrefixKeys + kWritePrefixBuffers,
// ..., kBenchKeys + kBenchStringKeys; the TS interfaces in src/addon-types.ts list the same keys): any other key is
// refused (ERR_DSV4KV_UNKNOWN_KEY). Every precondition is checked here before a launch (sizes derived from the
// buffers' byte lengths), and before the context is touched, so a wrong call is a JS error (code
// ERR_DSV4KV_ONLINE_MTP), never a bad launch. Launches are enqueued on ctx's stream without a sync (CUDA-graph
// capturable by `bench`).
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
//   bench(ctx, {op, batch, numVerify, stateType, graph, rotate, iters, reps, copyBytes?, variant?, split?,
//               prefillCase?, chunkTokens?, chunkPrefix?})
//       -> {usPerCall, minUs, maxUs, variant, split, bytes? (op prefill: bytes per call), numSegments? (op prefill)}
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

// The refusals of one call's args (common.h ReadKeys): the fields are the bare keys (`numVerify`, `kvScore`), as the
// online-MTP bindings have always named them; `object` names the call in the unknown-key rule.
constexpr KeyStyle Style(const char* object) { return KeyStyle{object, "", kErr}; }

struct Buf {
  void* ptr = nullptr;
  size_t bytes = 0;
};
// A buffer ReadBuffers read (nullptr: an optional key left out).
Buf BufOf(const DeviceBuffer* b) { return b ? Buf{b->data(), b->bytes()} : Buf{}; }

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

// The optional int32[4] error word.
int32_t* ErrOf(Napi::Env env, const DeviceBuffer* b) {
  const Buf e = BufOf(b);
  if (e.ptr) Need(env, "err", e, 16, "int32[4] error word");
  return static_cast<int32_t*>(e.ptr);
}

// Banks must not overlap: a request's row r < numReqSlots <= bankStrideRows.
void CheckBankStride(Napi::Env env, int64_t bankStrideRows, int64_t numReqSlots) {
  if (bankStrideRows < numReqSlots)
    Fail(env, "bankStrideRows", bankStrideRows,
         "must be an integer in [" + std::to_string(numReqSlots) + ", " + std::to_string(kI32Max) + "]");
}

// `variant` (-1: left out, the call's default) in [0, maxVariant]. A binary built without DSV4KV_BENCH_VARIANTS holds
// only the default shape `shipped` (named `shippedName`); asking it for another is refused before any launch.
int32_t CheckVariant(Napi::Env env, int64_t v, int32_t maxVariant, int32_t shipped, const char* shippedName) {
  if (v > maxVariant) Fail(env, "variant", v, "must be an integer in [0, " + std::to_string(maxVariant) + "]");
  if (!kBenchVariants && v >= 0 && v != shipped)
    Fail(env, "variant", v,
         "must be " + std::to_string(shipped) + " (" + shippedName +
             ") in this build: the benchmark-only variants are built only with the CMake option "
             "DSV4KV_BENCH_VARIANTS=ON");
  return static_cast<int32_t>(v);
}
// decode has no vecAccurate shape.
void CheckDecodeVariant(Napi::Env env, int32_t v) {
  if (v == kWpVecAccurate) Fail(env, "variant", v, "must be 0 (legacy), 1 (vec) or 3 (scalar) for decode");
}
// `split` in [0, kMaxSplit] (the table), a power of two or 0 (auto).
int32_t CheckSplit(Napi::Env env, int64_t split) {
  if (split & (split - 1)) Fail(env, "split", split, "must be 0 (auto), 1, 2, 4, 8 or 16");
  return static_cast<int32_t>(split);
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
// decode's default shape is writePrefix's D = 1 kernel shape (one update per channel, then one row stored), so it takes
// that rule; the benchmark-only vec shape keeps D14's.
int32_t AutoDecodeSplit(int32_t variant, int32_t batch, int smCount) {
  return variant == kWpScalar ? AutoWritePrefixSplit(batch, 1, smCount) : AutoSplit(batch, smCount);
}

#if DSV4KV_HAVE_CUDA
Context* CtxOf(Napi::Env env, Napi::Value v) {
  Context* c = Context::FromValue(env, v, "ctx");
  c->Activate(env);
  return c;
}
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
  if (p.variant != kWpLegacy && p.split == 0) p.split = AutoDecodeSplit(p.variant, p.batch, sm);
}

// ---- the args of each call: one key table per call (addon-types.ts lists the same keys, test/binding-keys.test.ts
// holds them equal). Integer rows read first in their order, then the rules that tie keys together, then buffers.
constexpr int64_t kMaxD = kMaxVerify;
constexpr int64_t kMaxChunkTokens = int64_t{1} << 18;  // bench op prefill: 1 GiB of input rows per buffer set

// writePrefix (WritePrefixArgs).
struct WritePrefixIn {
  int64_t stateType, batch, numVerify, numReqSlots, bankStrideRows, variant, split;
  DeviceBuffer *kvScore, *seqLens, *reqPoolIndices, *ape, *state, *err;
};
using WpI = WritePrefixIn;
const IntKey<WpI> kWritePrefixKeys[] = {
    {"stateType", &WpI::stateType, 0, 1, true, 0},
    {"batch", &WpI::batch, 0, kI32Max, true, 0},
    {"numVerify", &WpI::numVerify, 1, kMaxD, true, 0},
    {"numReqSlots", &WpI::numReqSlots, 1, kI32Max, true, 0},
    {"bankStrideRows", &WpI::bankStrideRows, 1, kI32Max, true, 0},  // >= numReqSlots (CheckBankStride)
    {"variant", &WpI::variant, 0, kWpScalar, false, -1},            // -1: the default (kWpScalar)
    {"split", &WpI::split, 0, kMaxSplit, false, 0},
};
const BufferKey<WpI> kWritePrefixBuffers[] = {
    {"kvScore", &WpI::kvScore, true}, {"seqLens", &WpI::seqLens, true}, {"reqPoolIndices", &WpI::reqPoolIndices, true},
    {"ape", &WpI::ape, true},         {"state", &WpI::state, true},     {"err", &WpI::err, false},
};

WritePrefixParams ParseWritePrefix(Napi::Env env, Napi::Object a) {
  constexpr KeyStyle kStyle = Style("writePrefix args");
  WritePrefixIn in = ReadKeys(env, a, kStyle, kWritePrefixKeys, kWritePrefixBuffers);
  WritePrefixParams p{};
  p.stateType = static_cast<int32_t>(in.stateType);
  p.batch = static_cast<int32_t>(in.batch);
  p.numVerify = static_cast<int32_t>(in.numVerify);
  p.numReqSlots = static_cast<int32_t>(in.numReqSlots);
  CheckBankStride(env, in.bankStrideRows, in.numReqSlots);
  p.bankStrideRows = static_cast<int32_t>(in.bankStrideRows);
  p.variant = CheckVariant(env, in.variant, kWpScalar, kWpScalar, "scalar");
  p.split = CheckSplit(env, in.split);
  ReadBuffers(env, a, kStyle, kWritePrefixBuffers, in);
  const Buf kv = BufOf(in.kvScore), seq = BufOf(in.seqLens), rpi = BufOf(in.reqPoolIndices);
  const Buf ape = BufOf(in.ape), st = BufOf(in.state);
  p.err = ErrOf(env, in.err);
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
  return p;
}

// markPending (MarkPendingArgs).
struct MarkIn {
  int64_t batch, numVerify, numReqSlots, clearAll;
  DeviceBuffer *seqLens, *reqPoolIndices, *pendingSeqLens, *pendingWidths;
};
const IntKey<MarkIn> kMarkKeys[] = {
    {"batch", &MarkIn::batch, 0, kI32Max, true, 0},
    {"numVerify", &MarkIn::numVerify, 1, kMaxD, true, 0},
    {"numReqSlots", &MarkIn::numReqSlots, 1, kI32Max, true, 0},
    {"clearAll", &MarkIn::clearAll, 0, 1, true, 0},
};
const BufferKey<MarkIn> kMarkBuffers[] = {
    {"seqLens", &MarkIn::seqLens, true},
    {"reqPoolIndices", &MarkIn::reqPoolIndices, true},
    {"pendingSeqLens", &MarkIn::pendingSeqLens, true},
    {"pendingWidths", &MarkIn::pendingWidths, true},
};

MarkPendingParams ParseMark(Napi::Env env, Napi::Object a) {
  constexpr KeyStyle kStyle = Style("markPending args");
  MarkIn in = ReadKeys(env, a, kStyle, kMarkKeys, kMarkBuffers);
  MarkPendingParams p{};
  p.batch = static_cast<int32_t>(in.batch);
  p.numVerify = static_cast<int32_t>(in.numVerify);
  p.numReqSlots = static_cast<int32_t>(in.numReqSlots);
  p.clearAll = static_cast<int32_t>(in.clearAll);
  ReadBuffers(env, a, kStyle, kMarkBuffers, in);
  p.seqLens = I32s(env, "seqLens", BufOf(in.seqLens), p.batch, "batch");
  p.reqPoolIdx = I32s(env, "reqPoolIndices", BufOf(in.reqPoolIndices), p.batch, "batch");
  std::tie(p.pendingSeqLens, p.pendingWidths) =
      Pending(env, BufOf(in.pendingSeqLens), BufOf(in.pendingWidths), p.numReqSlots);
  return p;
}

// commitPending (CommitPendingArgs). markWidth is checked whenever given and required with markSeqLens.
struct CommitIn {
  int64_t stateType, batch, maxDraftTokens, clampWidth, numReqSlots, bankStrideRows, consume, variant, markWidth;
  DeviceBuffer *curSeqLens, *reqPoolIndices, *pendingSeqLens, *pendingWidths, *state, *markSeqLens, *err;
};
const IntKey<CommitIn> kCommitKeys[] = {
    {"stateType", &CommitIn::stateType, 0, 1, true, 0},
    {"batch", &CommitIn::batch, 0, kI32Max, true, 0},
    {"maxDraftTokens", &CommitIn::maxDraftTokens, 1, kMaxD, true, 0},
    {"clampWidth", &CommitIn::clampWidth, 0, kMaxD, true, 0},
    {"numReqSlots", &CommitIn::numReqSlots, 1, kI32Max, true, 0},
    {"bankStrideRows", &CommitIn::bankStrideRows, 1, kI32Max, true, 0},
    {"consume", &CommitIn::consume, 0, 1, true, 0},
    {"variant", &CommitIn::variant, 0, kCommitWide, false, kCommitRegs},
    {"markWidth", &CommitIn::markWidth, 1, kMaxD, false, 0},  // <= maxDraftTokens, with markSeqLens
};
const BufferKey<CommitIn> kCommitBuffers[] = {
    {"curSeqLens", &CommitIn::curSeqLens, true},
    {"reqPoolIndices", &CommitIn::reqPoolIndices, true},
    {"pendingSeqLens", &CommitIn::pendingSeqLens, true},
    {"pendingWidths", &CommitIn::pendingWidths, true},
    {"state", &CommitIn::state, true},
    {"markSeqLens", &CommitIn::markSeqLens, false},
    {"err", &CommitIn::err, false},
};

CommitPendingParams ParseCommit(Napi::Env env, Napi::Object a) {
  constexpr KeyStyle kStyle = Style("commitPending args");
  CommitIn in = ReadKeys(env, a, kStyle, kCommitKeys, kCommitBuffers);
  CommitPendingParams p{};
  p.stateType = static_cast<int32_t>(in.stateType);
  p.batch = static_cast<int32_t>(in.batch);
  p.maxDraftTokens = static_cast<int32_t>(in.maxDraftTokens);
  p.clampWidth = static_cast<int32_t>(in.clampWidth);
  p.numReqSlots = static_cast<int32_t>(in.numReqSlots);
  CheckBankStride(env, in.bankStrideRows, in.numReqSlots);
  p.bankStrideRows = static_cast<int32_t>(in.bankStrideRows);
  p.consume = static_cast<int32_t>(in.consume);
  p.variant = CheckVariant(env, in.variant, kCommitWide, kCommitRegs, "regs");
  ReadBuffers(env, a, kStyle, kCommitBuffers, in);
  const Buf st = BufOf(in.state), mark = BufOf(in.markSeqLens);
  p.err = ErrOf(env, in.err);
  NeedAligned(env, "state", st);
  p.curSeqLens = I32s(env, "curSeqLens", BufOf(in.curSeqLens), p.batch, "batch");
  p.reqPoolIdx = I32s(env, "reqPoolIndices", BufOf(in.reqPoolIndices), p.batch, "batch");
  std::tie(p.pendingSeqLens, p.pendingWidths) =
      Pending(env, BufOf(in.pendingSeqLens), BufOf(in.pendingWidths), p.numReqSlots);
  // The source bank a <= min(width, Dmax): highest row (N−1) + Dmax·O < O·(Dmax+1).
  p.state = Sized<void>(env, "state", st, StateBytes(p.bankStrideRows, p.maxDraftTokens + 1, p.stateType),
                        "bankStrideRows·(maxDraftTokens+1) rows");
  if (mark.ptr) {
    p.markSeqLens = I32s(env, "markSeqLens", mark, p.batch, "batch");
    const int64_t hi = std::min<int64_t>(kMaxVerify, p.maxDraftTokens);
    if (in.markWidth == 0) ThrowField(env, kErr, "markWidth", "is required with markSeqLens");
    if (in.markWidth > hi)
      Fail(env, "markWidth", in.markWidth, "must be an integer in [1, " + std::to_string(hi) + "]");
    p.markWidth = static_cast<int32_t>(in.markWidth);
  }
  return p;
}

// resetSlots (ResetSlotsArgs): the pending markers are both given or both left out.
struct ResetIn {
  int64_t stateType, count, maxDraftTokens, numReqSlots, bankStrideRows;
  DeviceBuffer *state, *slots, *pendingSeqLens, *pendingWidths, *err;
};
const IntKey<ResetIn> kResetKeys[] = {
    {"stateType", &ResetIn::stateType, 0, 1, true, 0},
    {"count", &ResetIn::count, 0, 65535, true, 0},  // grid.x
    {"maxDraftTokens", &ResetIn::maxDraftTokens, 0, kMaxD, true, 0},
    {"numReqSlots", &ResetIn::numReqSlots, 1, kI32Max, true, 0},
    {"bankStrideRows", &ResetIn::bankStrideRows, 1, kI32Max, true, 0},
};
const BufferKey<ResetIn> kResetBuffers[] = {
    {"state", &ResetIn::state, true},
    {"slots", &ResetIn::slots, true},
    {"pendingSeqLens", &ResetIn::pendingSeqLens, false},
    {"pendingWidths", &ResetIn::pendingWidths, false},
    {"err", &ResetIn::err, false},
};

ResetSlotsParams ParseReset(Napi::Env env, Napi::Object a) {
  constexpr KeyStyle kStyle = Style("resetSlots args");
  ResetIn in = ReadKeys(env, a, kStyle, kResetKeys, kResetBuffers);
  ResetSlotsParams p{};
  p.stateType = static_cast<int32_t>(in.stateType);
  p.count = static_cast<int32_t>(in.count);
  p.maxDraftTokens = static_cast<int32_t>(in.maxDraftTokens);
  p.numReqSlots = static_cast<int32_t>(in.numReqSlots);
  CheckBankStride(env, in.bankStrideRows, in.numReqSlots);
  p.bankStrideRows = static_cast<int32_t>(in.bankStrideRows);
  ReadBuffers(env, a, kStyle, kResetBuffers, in);
  const Buf pend = BufOf(in.pendingSeqLens), wid = BufOf(in.pendingWidths);
  p.err = ErrOf(env, in.err);
  p.state = Sized<void>(env, "state", BufOf(in.state), StateBytes(p.bankStrideRows, p.maxDraftTokens + 1, p.stateType),
                        "bankStrideRows·(maxDraftTokens+1) rows");
  p.slots = I32s(env, "slots", BufOf(in.slots), p.count, "count");
  if ((pend.ptr == nullptr) != (wid.ptr == nullptr))
    ThrowField(env, kErr, "pendingWidths", "must be given together with pendingSeqLens (both or neither)");
  if (pend.ptr) std::tie(p.pendingSeqLens, p.pendingWidths) = Pending(env, pend, wid, p.numReqSlots);
  return p;
}

// decode (OnlineDecodeArgs).
struct DecodeIn {
  int64_t stateType, batch, numReqSlots, slotOffsetRows, variant, split;
  DeviceBuffer *state, *kvScore, *ape, *seqLens, *reqPoolIndices, *out, *err;
};
const IntKey<DecodeIn> kDecodeKeys[] = {
    {"stateType", &DecodeIn::stateType, 0, 1, true, 0},
    {"batch", &DecodeIn::batch, 0, kI32Max, true, 0},
    {"numReqSlots", &DecodeIn::numReqSlots, 1, kI32Max, true, 0},
    {"slotOffsetRows", &DecodeIn::slotOffsetRows, 0, kI32Max, true, 0},
    {"variant", &DecodeIn::variant, 0, kWpScalar, false, kWpScalar},
    {"split", &DecodeIn::split, 0, kMaxSplit, false, 0},
};
const BufferKey<DecodeIn> kDecodeBuffers[] = {
    {"state", &DecodeIn::state, true},
    {"kvScore", &DecodeIn::kvScore, true},
    {"ape", &DecodeIn::ape, true},
    {"seqLens", &DecodeIn::seqLens, true},
    {"reqPoolIndices", &DecodeIn::reqPoolIndices, true},
    {"out", &DecodeIn::out, true},
    {"err", &DecodeIn::err, false},
};

DecodeParams ParseDecode(Napi::Env env, Napi::Object a) {
  constexpr KeyStyle kStyle = Style("decode args");
  DecodeIn in = ReadKeys(env, a, kStyle, kDecodeKeys, kDecodeBuffers);
  DecodeParams p{};
  p.stateType = static_cast<int32_t>(in.stateType);
  p.batch = static_cast<int32_t>(in.batch);
  p.numReqSlots = static_cast<int32_t>(in.numReqSlots);
  p.slotOffsetRows = static_cast<int32_t>(in.slotOffsetRows);
  p.variant = CheckVariant(env, in.variant, kWpScalar, kWpScalar, "scalar");
  CheckDecodeVariant(env, p.variant);
  p.split = CheckSplit(env, in.split);
  ReadBuffers(env, a, kStyle, kDecodeBuffers, in);
  const Buf st = BufOf(in.state), kv = BufOf(in.kvScore), ape = BufOf(in.ape), out = BufOf(in.out);
  p.err = ErrOf(env, in.err);
  for (auto [f, b] : {std::pair<const char*, const Buf*>{"kvScore", &kv}, {"ape", &ape}, {"state", &st}, {"out", &out}})
    NeedAligned(env, f, *b);
  // Highest state row touched: (N − 1) + slotOffsetRows.
  p.state = Sized<void>(env, "state", st, StateBytes(int64_t(p.numReqSlots) + p.slotOffsetRows, 1, p.stateType),
                        "numReqSlots + slotOffsetRows rows");
  p.kvScore = Sized<const float>(env, "kvScore", kv, int64_t(p.batch) * kKvScoreCols * 4, "batch rows of 1024 fp32");
  p.ape = ApeOf(env, ape);
  p.seqLens = I32s(env, "seqLens", BufOf(in.seqLens), p.batch, "batch");
  p.reqPoolIdx = I32s(env, "reqPoolIndices", BufOf(in.reqPoolIndices), p.batch, "batch");
  p.out = Sized<float>(env, "out", out, int64_t(p.batch) * kHeadDim * 4, "batch rows of 512 fp32");
  return p;
}

// prefill (OnlinePrefillArgs): the error word is required (segment rows are checked on the device).
struct PrefillIn {
  int64_t stateType, numSegments;
  DeviceBuffer *state, *kvScore, *ape, *segments, *out, *err;
};
const IntKey<PrefillIn> kPrefillKeys[] = {
    {"stateType", &PrefillIn::stateType, 0, 1, true, 0},
    {"numSegments", &PrefillIn::numSegments, 0, kI32Max, true, 0},
};
const BufferKey<PrefillIn> kPrefillBuffers[] = {
    {"state", &PrefillIn::state, true},       {"kvScore", &PrefillIn::kvScore, true}, {"ape", &PrefillIn::ape, true},
    {"segments", &PrefillIn::segments, true}, {"out", &PrefillIn::out, true},         {"err", &PrefillIn::err, true},
};

PrefillParams ParsePrefill(Napi::Env env, Napi::Object a) {
  constexpr KeyStyle kStyle = Style("prefill args");
  PrefillIn in = ReadKeys(env, a, kStyle, kPrefillKeys, kPrefillBuffers);
  PrefillParams p{};
  p.stateType = static_cast<int32_t>(in.stateType);
  p.numSegments = static_cast<int32_t>(in.numSegments);
  ReadBuffers(env, a, kStyle, kPrefillBuffers, in);
  const Buf st = BufOf(in.state), kv = BufOf(in.kvScore), ape = BufOf(in.ape), out = BufOf(in.out);
  for (auto [f, b] : {std::pair<const char*, const Buf*>{"kvScore", &kv}, {"ape", &ape}, {"state", &st}, {"out", &out}})
    NeedAligned(env, f, *b);
  p.segments = Sized<const int32_t>(env, "segments", BufOf(in.segments), int64_t(p.numSegments) * kSegmentFields * 4,
                                    "numSegments·5 int32");
  p.ape = ApeOf(env, ape);
  p.out = Sized<float>(env, "out", out, int64_t(p.numSegments) * kHeadDim * 4, "numSegments rows of 512 fp32");
  p.err = Sized<int32_t>(env, "err", BufOf(in.err), 16, "int32[4] error word");
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
  // byteOffset first, as a double: no context or buffer is needed to refuse 1e30 or -1, and nothing casts it before
  // its range is known (casting 1e30 to an integer was undefined behaviour).
  double off = 0;
  if (info.Length() > 3 && !info[3].IsUndefined()) {
    if (!info[3].IsNumber()) ThrowField(env, "ERR_INVALID_ARG_TYPE", "byteOffset", info[3], "must be a number");
    off = info[3].As<Napi::Number>().DoubleValue();
    if (!IsSafeIndex(off)) ThrowField(env, kErr, "byteOffset", off, "must be an integer in [0, 2^53 - 1]");
  }
  CopyArgs c{};
  c.ctx = CtxOf(env, info[0]);
  c.buf = DeviceBuffer::FromValue(env, info[1], "buf");
  c.buf->RequireBytes(env, 0, "buf");
  if (c.buf->device() != c.ctx->device())
    Fail(env, "buf.device", c.buf->device(), "must be ctx.device = " + std::to_string(c.ctx->device()));
  c.view = HostViewOf(env, info[2], "view");
  const double room = static_cast<double>(c.buf->bytes()) - static_cast<double>(c.view.bytes);
  if (off > room)
    ThrowField(env, kErr, "byteOffset", off,
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
  const int32_t byte = static_cast<int32_t>(ReadInt(env, info[2], Style("fill"), "byte", 0, 255));
  if (b->bytes()) DSV4KV_CUDA_TRY(env, cudaMemsetAsync(b->data(), byte, b->bytes(), ctx->stream()));
  return info[1];
}
#else
Napi::Value CopyToDevice(const Napi::CallbackInfo& info) { NoCuda(info.Env(), "onlineMtp.copyToDevice"); }
Napi::Value CopyToHost(const Napi::CallbackInfo& info) { NoCuda(info.Env(), "onlineMtp.copyToHost"); }
Napi::Value Fill(const Napi::CallbackInfo& info) { NoCuda(info.Env(), "onlineMtp.fill"); }
#endif

// ---- bench (OnlineMtpBenchArgs): `op` is a string, read apart from the integer table --------------------------
struct BenchIn {
  int64_t batch, numVerify, stateType, graph, rotate, iters, reps, copyBytes, variant, split, chunkTokens, chunkPrefix;
};
const IntKey<BenchIn> kBenchKeys[] = {
    {"batch", &BenchIn::batch, 1, 65535, true, 0},
    {"numVerify", &BenchIn::numVerify, 1, kMaxD, true, 0},
    {"stateType", &BenchIn::stateType, 0, 1, true, 0},
    {"graph", &BenchIn::graph, 0, 1, true, 0},
    {"rotate", &BenchIn::rotate, 1, 4096, true, 0},
    {"iters", &BenchIn::iters, 1, 10000, true, 0},
    {"reps", &BenchIn::reps, 1, 1000, true, 0},
    // The copy ops' size: 1 byte to 16 GiB (required by them; no other op reads it).
    {"copyBytes", &BenchIn::copyBytes, 1, int64_t{1} << 34, false, 0},
    {"variant", &BenchIn::variant, 0, kWpScalar, false, -1},  // -1: the op's default
    {"split", &BenchIn::split, 0, kMaxSplit, false, 0},
    // op prefill, prefillCase chunk: the chunk's tokens (required) and the committed length before it (default 0).
    {"chunkTokens", &BenchIn::chunkTokens, 1, kMaxChunkTokens, false, 0},
    {"chunkPrefix", &BenchIn::chunkPrefix, 0, kMaxChunkTokens, false, -1},
};
// op prefill's case: "verify" or "chunk" (PrefillCaseSegments).
const char* const kBenchStringKeys[] = {"op", "prefillCase"};

struct BenchArgs {
  std::string op;
  int32_t batch, numVerify, stateType, graph, rotate, iters, reps, variant, split;
  int64_t copyBytes;
  std::string prefillCase;  // op prefill: "verify" or "chunk"
  int32_t chunkTokens, chunkPrefix;
};

// op prefill's keys: prefillCase only with op prefill (required there), chunkTokens / chunkPrefix only with its chunk
// case (chunkTokens required there).
void ParsePrefillCase(Napi::Env env, Napi::Object a, const BenchIn& in, BenchArgs& b) {
  const Napi::Value v = a.Get("prefillCase");
  const bool given = !v.IsUndefined() && !v.IsNull();
  if (b.op != "prefill") {
    if (given) ThrowField(env, kErr, "prefillCase", v, "applies only to op prefill");
    if (in.chunkTokens != 0) Fail(env, "chunkTokens", in.chunkTokens, "applies only to op prefill");
    if (in.chunkPrefix >= 0) Fail(env, "chunkPrefix", in.chunkPrefix, "applies only to op prefill");
    return;
  }
  if (in.variant >= 0) Fail(env, "variant", in.variant, "does not apply to op prefill (its launch picks the shape)");
  if (in.split != 0) Fail(env, "split", in.split, "does not apply to op prefill (its launch picks the shape)");
  if (!given) ThrowField(env, kErr, "prefillCase", "is required by op prefill");
  if (!v.IsString()) ThrowField(env, "ERR_INVALID_ARG_TYPE", "prefillCase", v, "must be a string");
  b.prefillCase = v.As<Napi::String>().Utf8Value();
  if (b.prefillCase != "verify" && b.prefillCase != "chunk")
    ThrowField(env, kErr, "prefillCase", v, "must be one of verify, chunk");
  if (b.prefillCase == "verify") {
    if (in.chunkTokens != 0) Fail(env, "chunkTokens", in.chunkTokens, "applies only to prefillCase chunk");
    if (in.chunkPrefix >= 0) Fail(env, "chunkPrefix", in.chunkPrefix, "applies only to prefillCase chunk");
    return;
  }
  if (in.chunkTokens == 0) ThrowField(env, kErr, "chunkTokens", "is required by prefillCase chunk");
  b.chunkTokens = static_cast<int32_t>(in.chunkTokens);
  b.chunkPrefix = static_cast<int32_t>(std::max<int64_t>(in.chunkPrefix, 0));
}

BenchArgs ParseBench(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[1].IsObject())
    ThrowField(env, kErr, "args", info.Length() < 2 ? env.Undefined() : info[1], "must be an object");
  Napi::Object a = info[1].As<Napi::Object>();
  const BenchIn in = ReadKeys(env, a, Style("bench args"), kBenchKeys, kBenchStringKeys);
  BenchArgs b{};
  const Napi::Value opValue = a.Get("op");
  if (opValue.IsUndefined() || opValue.IsNull()) ThrowField(env, kErr, "op", "is required");
  if (!opValue.IsString()) ThrowField(env, "ERR_INVALID_ARG_TYPE", "op", opValue, "must be a string");
  b.op = opValue.As<Napi::String>().Utf8Value();
  static const char* const kOps[] = {"writePrefix", "mark",    "markUpstream", "commit", "commitMark",
                                     "decode",      "prefill", "empty",        "copy",   "copyKernel"};
  if (std::none_of(std::begin(kOps), std::end(kOps), [&](const char* o) { return b.op == o; }))
    ThrowField(env, kErr, "op", opValue,
               "must be one of writePrefix, mark, markUpstream, commit, commitMark, decode, prefill, empty, copy, "
               "copyKernel");
  b.batch = static_cast<int32_t>(in.batch);
  b.numVerify = static_cast<int32_t>(in.numVerify);
  b.stateType = static_cast<int32_t>(in.stateType);
  b.graph = static_cast<int32_t>(in.graph);
  b.rotate = static_cast<int32_t>(in.rotate);
  b.iters = static_cast<int32_t>(in.iters);
  b.reps = static_cast<int32_t>(in.reps);
  // Only writePrefix, commit and decode launch a shape; each takes its own (commit: 0..2; decode: not 2).
  const bool commitOp = b.op == "commit" || b.op == "commitMark";
  b.variant = b.op == "writePrefix" ? CheckVariant(env, in.variant, kWpScalar, kWpScalar, "scalar")
              : commitOp            ? CheckVariant(env, in.variant, kCommitWide, kCommitRegs, "regs")
              : b.op == "decode"    ? CheckVariant(env, in.variant, kWpScalar, kWpScalar, "scalar")
                                    : static_cast<int32_t>(in.variant);
  if (b.op == "decode") CheckDecodeVariant(env, b.variant);
  b.split = CheckSplit(env, in.split);
  // copyKernel (a float4 copy kernel, 4 blocks of 512 per SM) moves the bytes rounded down to 16.
  const bool copyOp = b.op == "copy" || b.op == "copyKernel";
  if (copyOp && in.copyBytes == 0) ThrowField(env, kErr, "copyBytes", "is required by the copy and copyKernel ops");
  b.copyBytes = copyOp ? in.copyBytes : 0;
  ParsePrefillCase(env, a, in, b);
  return b;
}

#if DSV4KV_HAVE_CUDA
// ---- benchmark: CUDA events, eager back-to-back and CUDA-graph replay, medians ----------------------------------
// op prefill's segment table (docs/reference/online-mtp.md §6.2), built on the host and uploaded once, and the bytes
// one call moves: per valid segment its input rows (4 KiB each), the stored partial when it loads one, the entry it
// emits (2 KiB) or the row it stores, and its 20-byte record; plus every ape row some segment reads (2 KiB each).
//   verify: `batch` requests (slot b + 1, pre-verify length S_b = 1024 + {0, 1, 2, 63, 120, 126, 127}[b % 7], as the
//           writePrefix op), numVerify = D tokens each on input rows b·D + i; segments as the target verify cuts them
//           (online-mtp-controller's simulate.ts): a chunk closed inside the verify (S_b mod 128 > 128 − D) loads
//           bank 0 (row r) and emits, the trailing part loads bank 0 and stores bank 1 (row r + O); the table is
//           padded with seqLen-0 rows to batch·D records, the token count a CUDA graph is captured for.
//   chunk:  one request (slot 1), chunkTokens tokens after chunkPrefix committed ones, input rows 0.., cut at
//           128-aligned positions; every segment loads and stores bank 0 (row 1), as a plain extend.
struct PrefillCase {
  std::vector<int32_t> segments;
  int32_t numSegments = 0;
  int64_t kvRows = 0;
  double bytes = 0;
};
PrefillCase PrefillCaseSegments(const BenchArgs& a, const std::vector<int32_t>& seq, int32_t O, int64_t rowBytes) {
  PrefillCase c;
  std::vector<bool> apeRows(kChunk, false);
  // Tokens at positions [from, to) on input rows row0.. of request slot r; trailing store row storeRow.
  auto cut = [&](int64_t from, int64_t to, int64_t row0, int32_t r, int32_t storeRow) {
    for (int64_t p = from; p < to;) {
      const int64_t end = std::min(to, (p / kChunk + 1) * kChunk);
      const int32_t len = static_cast<int32_t>(end - p), c0 = static_cast<int32_t>(p % kChunk);
      const bool closes = end % kChunk == 0;
      c.segments.insert(c.segments.end(),
                        {static_cast<int32_t>(end), static_cast<int32_t>(row0 + (end - 1 - from)), len, r, storeRow});
      c.bytes += double(len) * kKvScoreCols * 4 + (c0 != 0 ? rowBytes : 0) + (closes ? kHeadDim * 4 : rowBytes) +
                 kSegmentFields * 4;
      for (int j = c0; j < c0 + len; ++j) apeRows[j] = true;
      p = end;
    }
  };
  if (a.prefillCase == "verify") {
    for (int b = 0; b < a.batch; ++b)
      cut(seq[b], int64_t(seq[b]) + a.numVerify, int64_t(b) * a.numVerify, b + 1, b + 1 + O);
    c.kvRows = int64_t(a.batch) * a.numVerify;
    c.numSegments = static_cast<int32_t>(c.kvRows);  // the segments found (<= 2 per request <= D) + padding
    c.segments.resize(size_t(c.numSegments) * kSegmentFields, 0);
  } else {
    cut(a.chunkPrefix, int64_t(a.chunkPrefix) + a.chunkTokens, 0, 1, 1);
    c.kvRows = a.chunkTokens;
    c.numSegments = static_cast<int32_t>(c.segments.size() / kSegmentFields);
  }
  for (bool used : apeRows) c.bytes += used ? kHeadDim * 4 : 0;
  return c;
}

Napi::Value RunBench(const Napi::CallbackInfo& info, const BenchArgs& args) {
  Napi::Env env = info.Env();
  const std::string& op = args.op;
  const int32_t batch = args.batch, D = args.numVerify, stateType = args.stateType, graph = args.graph,
                rotate = args.rotate;
  const int32_t iters = args.iters, reps = args.reps, variant = args.variant;
  const int64_t copyBytes = args.copyBytes;
  const bool copyOp = op == "copy" || op == "copyKernel";
  Context* ctx = CtxOf(env, info[0]);
  cudaStream_t s = ctx->stream();
  const int sm = ctx->smCount();
  const int32_t wpVariant = variant >= 0 ? variant : kWpScalar;
  int32_t split = args.split;
  const int32_t decodeVariant = variant >= 0 ? variant : kWpScalar;
  if (split == 0)
    split = op == "writePrefix" && wpVariant == kWpScalar ? AutoWritePrefixSplit(batch, D, sm)
            : op == "decode"                              ? AutoDecodeSplit(decodeVariant, batch, sm)
                                                          : AutoSplit(batch, sm);

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
  // op prefill: the case's segment table (shared by the buffer sets), input rows and entries per set.
  const bool prefillOp = op == "prefill";
  PrefillCase pc;
  if (prefillOp) pc = PrefillCaseSegments(args, hSeq, O, kRowElems * eb);
  int32_t* segs = nullptr;
  int32_t* perr = nullptr;
  std::vector<float*> pkv, pout;
  if (prefillOp) {
    segs = mem.Alloc<int32_t>(env, pc.segments.size() * 4);
    DSV4KV_CUDA_TRY(env, cudaMemcpyAsync(segs, pc.segments.data(), pc.segments.size() * 4, cudaMemcpyHostToDevice, s));
    perr = mem.Alloc<int32_t>(env, 16);
    DSV4KV_CUDA_TRY(env, cudaMemsetAsync(perr, 0, 16, s));
    for (int i = 0; i < rotate; ++i) {
      pkv.push_back(mem.Alloc<float>(env, pc.kvRows * kKvScoreCols * 4));
      DSV4KV_CUDA_TRY(env, LaunchFillRandom(pkv.back(), pc.kvRows * kKvScoreCols, 19 + i, 4.f, 0.f, s));
      pout.push_back(mem.Alloc<float>(env, int64_t(pc.numSegments) * kHeadDim * 4));
    }
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
      p.variant = decodeVariant, p.split = split;
      return LaunchDecode(p, s);
    }
    if (prefillOp) {
      PrefillParams p{};
      p.state = state[k], p.stateRows = rows, p.kvScore = pkv[k], p.kvRows = pc.kvRows, p.ape = ape;
      p.segments = segs, p.out = pout[k], p.numSegments = pc.numSegments, p.stateType = stateType, p.err = perr;
      return LaunchPrefill(p, s);
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
  r.Set("variant", op == "writePrefix" ? wpVariant : op == "decode" ? decodeVariant : variant);
  r.Set("split", prefillOp ? 0 : split);
  if (prefillOp) {
    // A bad segment would have been skipped: the figure would not time the case.
    int32_t e[4] = {0, 0, 0, 0};
    DSV4KV_CUDA_TRY(env, cudaMemcpy(e, perr, 16, cudaMemcpyDeviceToHost));
    if (e[0] != 0)
      Fail(env, "segments[" + std::to_string(e[1]) + "]", e[0], "must be a valid record (the bench's own table)");
    r.Set("bytes", pc.bytes);
    r.Set("numSegments", pc.numSegments);
  }
  return r;
}
#endif

// The args are checked in both builds, before any device work; the CPU-only build then refuses the run.
Napi::Value Bench(const Napi::CallbackInfo& info) {
  const BenchArgs b = ParseBench(info);
#if DSV4KV_HAVE_CUDA
  return RunBench(info, b);
#else
  (void)b;
  NoCuda(info.Env(), "onlineMtp.bench");
#endif
}

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
