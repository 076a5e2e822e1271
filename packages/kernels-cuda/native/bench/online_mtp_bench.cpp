// onlineMtp.bench (bench build only): CUDA-event timings of the online c128 MTP kernels, eager back-to-back or a
// CUDA graph of `iters` calls replayed, median of `reps` after warm-up, on `rotate` buffer sets it allocates and
// fills itself; plus the floors (op empty: the empty kernel; op copy / copyKernel: cudaMemcpyAsync and a float4 copy
// kernel of copyBytes). The args are read through kBenchKeys + kBenchStringKeys (src/addon-types.ts
// OnlineMtpBenchArgs lists the same keys) and checked before any device work, in both builds.
//
//   bench(ctx, {op, batch, numVerify, stateType, graph, rotate, iters, reps, copyBytes?, variant?, split?,
//               prefillCase?, chunkTokens?, chunkPrefix?})
//       -> {usPerCall, minUs, maxUs, variant, split, bytes? (op prefill: bytes per call), numSegments? (op prefill)}
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/bench.h"
#include "common.h"
#include "online_mtp/binding_rules.h"
#include "online_mtp/online_mtp_kernels.cuh"
#if DSV4KV_HAVE_CUDA
#include "bench/bench_kernels.cuh"
#include "bench/timing.h"
#endif

namespace dsv4kv {
namespace bench {
namespace {

using namespace online_mtp;  // NOLINT: the kernels' params and rules, read throughout

constexpr int64_t kMaxChunkTokens = int64_t{1} << 18;  // bench op prefill: 1 GiB of input rows per buffer set
// ---- the args (OnlineMtpBenchArgs): `op` is a string, read apart from the integer table ------------------------
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
  Napi::Object a = ArgObject(info, 1, "args", kErr);
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

// The launch shape of the op: the variant asked for or the op's default, and the split asked for or the automatic one.
struct Shape {
  int32_t wpVariant, decodeVariant, split;
};
Shape ShapeOf(const BenchArgs& a, int sm) {
  Shape s{a.variant >= 0 ? a.variant : kWpScalar, a.variant >= 0 ? a.variant : kWpScalar, a.split};
  if (s.split == 0)
    s.split = a.op == "writePrefix" && s.wpVariant == kWpScalar ? AutoWritePrefixSplit(a.batch, a.numVerify, sm)
              : a.op == "decode"                                ? AutoDecodeSplit(s.decodeVariant, a.batch, sm)
                                                                : AutoSplit(a.batch, sm);
  return s;
}

// The device data of one bench run: `batch` requests in slots 1..batch (slot 0 a dummy), their lengths, ape, and
// `rotate` buffer sets (inputs, state banks, outputs, pending markers) cycled call by call.
struct Data {
  int32_t N = 0, O = 0;  // request slots and the bank stride (docs/reference/online-mtp.md §7.2)
  int64_t rows = 0;      // state rows: O·(D + 1)
  std::vector<int32_t> hostSeq;
  int32_t *seq = nullptr, *rpi = nullptr, *cur = nullptr;
  float* ape = nullptr;
  std::vector<float*> kv, out;
  std::vector<void*> state;
  std::vector<int32_t*> pend, wid;
  PrefillCase pc;  // op prefill: its segment table, input rows and entries per set, and the error word
  int32_t *segs = nullptr, *perr = nullptr;
  std::vector<float*> pkv, pout;
  std::vector<char*> cpySrc, cpyDst;  // the copy ops
};

template <typename T>
T* Upload(Napi::Env env, BenchSet& mem, const std::vector<T>& host, cudaStream_t s) {
  T* d = mem.Alloc<T>(env, host.size() * sizeof(T));
  DSV4KV_CUDA_TRY(env, cudaMemcpyAsync(d, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice, s));
  return d;
}

// Request b: pre-verify length 1024 + {0, 1, 2, 63, 120, 126, 127}[b % 7] (upstream make_seq_lens, base 8·128),
// slot b + 1, length after its verify S_b + 1 + (b mod D).
void AllocRequests(Napi::Env env, const BenchArgs& a, BenchSet& mem, Data& d, cudaStream_t s) {
  std::vector<int32_t> rpi(a.batch), cur(a.batch);
  d.hostSeq.resize(a.batch);
  const int offsets[7] = {0, 1, 2, 63, 120, 126, 127};
  for (int b = 0; b < a.batch; ++b) {
    d.hostSeq[b] = 1024 + offsets[b % 7];
    rpi[b] = b + 1;
    cur[b] = d.hostSeq[b] + 1 + (b % a.numVerify);
  }
  d.seq = Upload(env, mem, d.hostSeq, s);
  d.rpi = Upload(env, mem, rpi, s);
  d.cur = Upload(env, mem, cur, s);
  d.ape = mem.Alloc<float>(env, kChunk * kHeadDim * 4);
  DSV4KV_CUDA_TRY(env, LaunchFillRandom(d.ape, kChunk * kHeadDim, 7, 2.f, 0.f, s));
}

void AllocSets(Napi::Env env, const BenchArgs& a, BenchSet& mem, Data& d, cudaStream_t s) {
  const int64_t kvElems = int64_t(a.batch) * a.numVerify * kKvScoreCols;
  for (int i = 0; i < a.rotate; ++i) {
    d.kv.push_back(mem.Alloc<float>(env, kvElems * 4));
    DSV4KV_CUDA_TRY(env, LaunchFillRandom(d.kv.back(), kvElems, 11 + i, 4.f, 0.f, s));
    d.state.push_back(mem.Alloc<char>(env, d.rows * kRowElems * ElemBytes(a.stateType)));
    DSV4KV_CUDA_TRY(env, LaunchFillStateRandom(d.state.back(), d.rows, a.stateType, 13 + i, s));
    d.out.push_back(mem.Alloc<float>(env, int64_t(a.batch) * kHeadDim * 4));
    d.pend.push_back(mem.Alloc<int32_t>(env, d.N * 4));
    d.wid.push_back(mem.Alloc<int32_t>(env, d.N * 4));
  }
}

void AllocPrefill(Napi::Env env, const BenchArgs& a, BenchSet& mem, Data& d, cudaStream_t s) {
  d.pc = PrefillCaseSegments(a, d.hostSeq, d.O, kRowElems * ElemBytes(a.stateType));
  d.segs = Upload(env, mem, d.pc.segments, s);
  d.perr = mem.Alloc<int32_t>(env, 16);
  DSV4KV_CUDA_TRY(env, cudaMemsetAsync(d.perr, 0, 16, s));
  for (int i = 0; i < a.rotate; ++i) {
    d.pkv.push_back(mem.Alloc<float>(env, d.pc.kvRows * kKvScoreCols * 4));
    DSV4KV_CUDA_TRY(env, LaunchFillRandom(d.pkv.back(), d.pc.kvRows * kKvScoreCols, 19 + i, 4.f, 0.f, s));
    d.pout.push_back(mem.Alloc<float>(env, int64_t(d.pc.numSegments) * kHeadDim * 4));
  }
}

void AllocCopy(Napi::Env env, const BenchArgs& a, BenchSet& mem, Data& d, cudaStream_t s) {
  for (int i = 0; i < a.rotate; ++i) {
    d.cpySrc.push_back(mem.Alloc<char>(env, a.copyBytes));
    d.cpyDst.push_back(mem.Alloc<char>(env, a.copyBytes));
    DSV4KV_CUDA_TRY(env,
                    LaunchFillRandom(reinterpret_cast<float*>(d.cpySrc.back()), a.copyBytes / 4, 17 + i, 2.f, 0.f, s));
  }
}

// markPending of buffer set k: pending = S, width D (clearAll: upstream's full clear first, op markUpstream).
MarkPendingParams MarkOf(const BenchArgs& a, const Data& d, int k, bool clearAll) {
  MarkPendingParams p{};
  p.seqLens = d.seq, p.reqPoolIdx = d.rpi, p.pendingSeqLens = d.pend[k], p.pendingWidths = d.wid[k];
  p.batch = a.batch, p.numVerify = a.numVerify, p.numReqSlots = d.N, p.clearAll = clearAll ? 1 : 0;
  return p;
}

// The markers stay armed (pending = S, width D), so every call commits and copies: "commit" with consume = 0 (as
// upstream's commit leaves pending untouched), "commitMark" consuming and re-marking the same S in the fused mark.
CommitPendingParams CommitOf(const BenchArgs& a, const Data& d, int k) {
  const bool mark = a.op == "commitMark";
  CommitPendingParams p{};
  p.curSeqLens = d.cur, p.reqPoolIdx = d.rpi, p.pendingSeqLens = d.pend[k], p.pendingWidths = d.wid[k];
  p.state = d.state[k];
  p.batch = a.batch, p.maxDraftTokens = a.numVerify, p.clampWidth = 0, p.bankStrideRows = d.O, p.numReqSlots = d.N;
  p.consume = mark ? 1 : 0, p.markSeqLens = mark ? d.seq : nullptr, p.markWidth = a.numVerify;
  p.stateType = a.stateType, p.variant = a.variant < 0 ? kCommitRegs : a.variant;
  return p;
}

WritePrefixParams WritePrefixOf(const BenchArgs& a, const Shape& sh, const Data& d, int k) {
  WritePrefixParams p{};
  p.kvScore = d.kv[k], p.seqLens = d.seq, p.reqPoolIdx = d.rpi, p.ape = d.ape, p.state = d.state[k];
  p.batch = a.batch, p.numVerify = a.numVerify, p.bankStrideRows = d.O, p.numReqSlots = d.N;
  p.stateType = a.stateType, p.variant = sh.wpVariant, p.split = sh.split;
  return p;
}

DecodeParams DecodeOf(const BenchArgs& a, const Shape& sh, const Data& d, int k) {
  DecodeParams p{};
  p.state = d.state[k], p.kvScore = d.kv[k], p.ape = d.ape, p.seqLens = d.cur, p.reqPoolIdx = d.rpi, p.out = d.out[k];
  p.batch = a.batch, p.slotOffsetRows = 0, p.numReqSlots = d.N, p.stateType = a.stateType;
  p.variant = sh.decodeVariant, p.split = sh.split;
  return p;
}

PrefillParams PrefillOf(const BenchArgs& a, const Data& d, int k) {
  PrefillParams p{};
  p.state = d.state[k], p.stateRows = d.rows, p.kvScore = d.pkv[k], p.kvRows = d.pc.kvRows, p.ape = d.ape;
  p.segments = d.segs, p.out = d.pout[k], p.numSegments = d.pc.numSegments, p.stateType = a.stateType;
  p.err = d.perr;
  return p;
}

// Call i of the op, on buffer set i mod rotate.
cudaError_t LaunchOp(const BenchArgs& a, const Shape& sh, const Data& d, int64_t i, int sm, cudaStream_t s) {
  const int k = static_cast<int>(i % a.rotate);
  const std::string& op = a.op;
  if (op == "writePrefix") return LaunchWritePrefix(WritePrefixOf(a, sh, d, k), s);
  if (op == "mark" || op == "markUpstream") return LaunchMarkPending(MarkOf(a, d, k, op == "markUpstream"), s);
  if (op == "commit" || op == "commitMark") return LaunchCommitPending(CommitOf(a, d, k), s);
  if (op == "decode") return LaunchDecode(DecodeOf(a, sh, d, k), s);
  if (op == "prefill") return LaunchPrefill(PrefillOf(a, d, k), s);
  if (op == "empty") return LaunchEmpty(s);
  if (op == "copy") return cudaMemcpyAsync(d.cpyDst[k], d.cpySrc[k], a.copyBytes, cudaMemcpyDeviceToDevice, s);
  if (op == "copyKernel") return LaunchCopy4(d.cpySrc[k], d.cpyDst[k], a.copyBytes, 4 * sm, s);
  return cudaErrorInvalidValue;
}

// The timings and what ran; op prefill adds the bytes of one call and the table's rows, after checking that no
// segment was refused (a skipped segment would make the figure time another case).
Napi::Object Result(Napi::Env env, const BenchArgs& a, const Shape& sh, const Data& d, const Spread& us) {
  Napi::Object r = Napi::Object::New(env);
  r.Set("usPerCall", us.median);
  r.Set("minUs", us.min);
  r.Set("maxUs", us.max);
  r.Set("variant", a.op == "writePrefix" ? sh.wpVariant : a.op == "decode" ? sh.decodeVariant : a.variant);
  r.Set("split", a.op == "prefill" ? 0 : sh.split);
  if (a.op == "prefill") {
    int32_t e[4] = {0, 0, 0, 0};
    DSV4KV_CUDA_TRY(env, cudaMemcpy(e, d.perr, 16, cudaMemcpyDeviceToHost));
    if (e[0] != 0)
      Fail(env, "segments[" + std::to_string(e[1]) + "]", e[0], "must be a valid record (the bench's own table)");
    r.Set("bytes", d.pc.bytes);
    r.Set("numSegments", d.pc.numSegments);
  }
  return r;
}

Napi::Value RunBench(const Napi::CallbackInfo& info, const BenchArgs& a) {
  Napi::Env env = info.Env();
  Context* ctx = CtxOf(env, info[0]);
  cudaStream_t s = ctx->stream();
  const int sm = ctx->smCount();
  const Shape sh = ShapeOf(a, sm);
  BenchSet mem;
  Data d;
  d.N = a.batch + 1;
  d.O = d.N + 2;
  d.rows = int64_t(d.O) * (a.numVerify + 1);
  AllocRequests(env, a, mem, d, s);
  AllocSets(env, a, mem, d, s);
  if (a.op == "prefill") AllocPrefill(env, a, mem, d, s);
  if (a.op == "copy" || a.op == "copyKernel") AllocCopy(env, a, mem, d, s);
  for (int k = 0; k < a.rotate; ++k) DSV4KV_CUDA_TRY(env, LaunchMarkPending(MarkOf(a, d, k, true), s));
  const IndexedLaunch launch = [&](int64_t i) { return LaunchOp(a, sh, d, i, sm, s); };
  for (int i = 0; i < 20; ++i) DSV4KV_CUDA_TRY(env, launch(i));  // warm-up
  std::vector<double> us;
  DSV4KV_CUDA_TRY(env, TimeRounds(launch, s, Rounds{a.iters, a.reps, a.graph != 0, 3}, &us));
  DSV4KV_CUDA_TRY(env, cudaStreamSynchronize(s));
  return Result(env, a, sh, d, SpreadOf(us));
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

void RegisterOnlineMtpBench(Napi::Env env, Napi::Object onlineMtp) {
  onlineMtp.Set("bench", Napi::Function::New(env, Bench, "bench"));
  // Whether the benchmark-only kernel shapes were built in (DSV4KV_BENCH_VARIANTS; docs/decisions.md D23).
  onlineMtp.Set("benchVariants", Napi::Boolean::New(env, online_mtp::kBenchVariants));
}

}  // namespace bench
}  // namespace dsv4kv
