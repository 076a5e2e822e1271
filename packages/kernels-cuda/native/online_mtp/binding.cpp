// JS bindings of the online c128 MTP kernels (exports.onlineMtp). Every call takes (ctx, args) where args is an
// object of DeviceBuffers and integers, read through one key table per call (kWritePrefixKeys + kWritePrefixBuffers,
// ...; the TS interfaces in src/addon-types.ts list the same keys): any other key is refused (ERR_DSV4KV_UNKNOWN_KEY). Every precondition is checked here before a launch (sizes derived from the
// buffers' byte lengths), and before the context is touched, so a wrong call is a JS error (code
// ERR_DSV4KV_ONLINE_MTP), never a bad launch. Launches are enqueued on ctx's stream without a sync (CUDA-graph
// capturable; the bench build's onlineMtp.bench times them: native/bench/online_mtp_bench.cpp).
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
#include "online_mtp/binding_rules.h"
#include "online_mtp/online_mtp.h"
#include "online_mtp/online_mtp_kernels.cuh"

namespace dsv4kv {
namespace online_mtp {
namespace {

struct Buf {
  void* ptr = nullptr;
  size_t bytes = 0;
};
// A buffer ReadBuffers read (nullptr: an optional key left out).
Buf BufOf(const DeviceBuffer* b) { return b ? Buf{b->data(), b->bytes()} : Buf{}; }

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

#define DSV4KV_ONLINE_MTP_ENTRY(NAME, PARSE, LAUNCH, EMPTY) \
  Napi::Value NAME(const Napi::CallbackInfo& info) {        \
    Napi::Env env = info.Env();                             \
    auto p = PARSE(env, ArgObject(info, 1, "args", kErr));  \
    LAUNCH_OR_NOCUDA(NAME, LAUNCH, EMPTY)                   \
    return env.Undefined();                                 \
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
    const WholeRule rule{0, kMaxSafeInteger, kErr, "must be an integer in [0, 2^53 - 1]", "must be a number"};
    off = ReadWhole(env, info[3], "byteOffset", rule);
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
  o.Set("copyToDevice", Napi::Function::New(env, CopyToDevice, "copyToDevice"));
  o.Set("copyToHost", Napi::Function::New(env, CopyToHost, "copyToHost"));
  o.Set("fill", Napi::Function::New(env, Fill, "fill"));
  o.Set("headDim", Napi::Number::New(env, kHeadDim));
  o.Set("maxVerifyTokens", Napi::Number::New(env, kMaxVerify));
  exports.Set("onlineMtp", o);
}
