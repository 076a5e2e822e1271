// JS bindings of the compress planner. The TS layer (src/planner.ts) validates the options with the planner
// package's rules (PlannerError) before calling in; everything here is re-checked up front anyway, so a wrong call
// from JS becomes a JS error and never a launch with bad shapes.
//
//   planPrefill(ctx, cfg, inputs, out)         host arrays in, `out` (Uint8Array, numQ*24 + statusBytes) filled:
//                                              [CompressPlan numQ x 16][WritePlan numQ x 8][PlanStatus x 256 (48 B each)]
//   planPrefillDevice(ctx, cfg, bufs)          device-resident inputs/outputs; enqueues on ctx's stream, no sync
//                                              (CUDA-graph capturable); errors land in bufs.status (PlanStatus)
//   planDecode(ctx, cfg, inputs, out)          out: batch*16 + statusBytes: [DecodePlan batch x 16][PlanStatus x 256]
//   planDecodeDevice(ctx, cfg, bufs)
//   planPrefillAsync(ctx, cfg, inputs, out)    as planPrefill, but returns a Promise: the upload, the launch, the
//   planDecodeAsync(ctx, cfg, inputs, out)     download and the stream sync run on a libuv worker thread (the event
//                                              loop keeps running); scratch is stream-ordered (cudaMallocAsync)
//
// cfg: { batch, numQ, pad, tail, hostRules, cr, ring, sps, reqStyle, legacy, r2tStride, r2tRows, f2sLen, lens64? }
//   (decode: the slot keys, batch and lens64?), read through one key table per call (kPrefillKeys, kDecodeKeys;
//   the TS interfaces in src/addon-types.ts list the same keys); any other key is refused.
//   lens64 (device calls only; default 0): bufs.seqLens / bufs.extendLens hold int64 (upstream's dtype) instead of
//   int32; the kernel checks that each value fits int32 and reports kErrNarrow otherwise.
// inputs: { seqLens: Int32Array, extendLens?: Int32Array, rids?: BigInt64Array, r2t?: Int32Array, f2s?: Int32Array }
#include "planner/planner_binding.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common.h"
#include "planner/host_plan.h"
#if DSV4KV_HAVE_CUDA
#include "planner/plan_launch.h"
#else
#include "planner/plan_kernels.cuh"
#endif

namespace dsv4kv {
namespace {

// The params objects' integer keys, one table per call (DSV4KV_SLOT_KEYS + kPrefillKeys, kDecodeKeys), read by
// common.h ReadKeys: every refusal names `cfg.<key>`, an unlisted key as UNKNOWN_KEY.
const KeyStyle kCfgStyle{"cfg", "cfg.", "ERR_DSV4KV_ARG"};

// The slot-mapping keys of every plan call (addon-types.ts PlanSlotConfig).
struct SlotCfg {
  int64_t cr, ring, sps, reqStyle, legacy, r2tStride, r2tRows, f2sLen;
};
// planPrefill* cfg (PrefillPlanConfig). lens64 applies to device calls (CheckHostLens refuses it for host arrays).
struct PrefillCfg : SlotCfg {
  int64_t batch, numQ, pad, tail, hostRules, lens64;
};
// planDecode* cfg (DecodePlanConfig).
struct DecodeCfg : SlotCfg {
  int64_t batch, lens64;
};
constexpr int64_t kI32 = INT_MAX;
// cr is 4 or 128 and ring/sps divide as docs/reference/planner.md §5.2 says: checked across keys in ParseSlot.
#define DSV4KV_SLOT_KEYS(T)                                                                                  \
  {"cr", &T::cr, 4, 128, true, 0}, {"ring", &T::ring, 1, kI32, true, 0}, {"sps", &T::sps, 1, kI32, true, 0}, \
      {"reqStyle", &T::reqStyle, 0, 1, true, 0}, {"legacy", &T::legacy, 0, 1, true, 0},                      \
      {"r2tStride", &T::r2tStride, 1, kI32, true, 0}, {"r2tRows", &T::r2tRows, 0, kI32, true, 0},            \
      {"f2sLen", &T::f2sLen, 0, int64_t{1} << 40, true, 0}
const IntKey<PrefillCfg> kPrefillKeys[] = {
    DSV4KV_SLOT_KEYS(PrefillCfg),
    {"batch", &PrefillCfg::batch, 1, kMaxGpuBatch, true, 0},
    {"numQ", &PrefillCfg::numQ, 1, kMaxNumQ, true, 0},
    {"pad", &PrefillCfg::pad, 0, kI32, true, 0},
    {"tail", &PrefillCfg::tail, 0, 1, true, 0},
    {"hostRules", &PrefillCfg::hostRules, 0, 1, true, 0},
    {"lens64", &PrefillCfg::lens64, 0, 1, false, 0},
};
// Decode has no 16-bit field: one thread per request; 2^24 requests is far beyond any batch.
const IntKey<DecodeCfg> kDecodeKeys[] = {
    DSV4KV_SLOT_KEYS(DecodeCfg),
    {"batch", &DecodeCfg::batch, 1, 1 << 24, true, 0},
    {"lens64", &DecodeCfg::lens64, 0, 1, false, 0},
};
#undef DSV4KV_SLOT_KEYS
// The slot geometry of a read cfg, with the rules that tie its keys together.
SlotParams ParseSlot(Napi::Env env, const SlotCfg& c) {
  SlotParams s{};
  s.cr = static_cast<int32_t>(c.cr);
  if (s.cr != 4 && s.cr != 128) ThrowField(env, "ERR_DSV4KV_ARG", "cfg.cr", s.cr, "must be 4 or 128");
  s.legacy = static_cast<int32_t>(c.legacy);
  s.ring = static_cast<int32_t>(c.ring);
  s.sps = static_cast<int32_t>(c.sps);
  s.req_style = static_cast<int32_t>(c.reqStyle);
  // Ring geometry (docs/reference/planner.md §5.2): R % cr == 0 (a page is cr slots) and SPS % R == 0 (pages own whole
  // rings). The tail clause's closed form needs cr <= SPS, which follows: SPS >= R >= cr.
  if (!s.legacy && (s.ring % s.cr != 0 || s.sps % s.ring != 0))
    ThrowField(env, "ERR_DSV4KV_ARG", "cfg.ring", s.ring, "must be a multiple of cfg.cr and divide cfg.sps");
  // Fast division by ring and SPS: both are in [1, INT32_MAX] (the key table), the range MakeFastDiv serves.
  s.ring_div = MakeFastDiv(static_cast<uint32_t>(s.ring));
  s.sps_div = MakeFastDiv(static_cast<uint32_t>(s.sps));
  s.r2t_stride = c.r2tStride;
  s.r2t_rows = c.r2tRows;
  s.f2s_len = c.f2sLen;
  DeriveSlot(s);
  return s;
}

struct HostInput {
  const uint8_t* data = nullptr;
  size_t bytes = 0;
};

HostInput OptionalHost(Napi::Env env, Napi::Object o, const char* key, size_t need, const char* what) {
  HostInput h;
  Napi::Value v = o.Get(key);
  if (v.IsUndefined() || v.IsNull()) return h;
  HostView hv = HostViewOf(env, v, key);
  if (hv.bytes != need)
    ThrowField(env, "ERR_DSV4KV_ARG", std::string("inputs.") + key + ".byteLength", static_cast<double>(hv.bytes),
               std::string("must be exactly ") + std::to_string(need) + " (" + what + ")");
  h.data = hv.data;
  h.bytes = hv.bytes;
  return h;
}

size_t Align(size_t x, size_t a) { return (x + a - 1) / a * a; }

// Lays the host inputs out at offsets (relative to the input region) with 8-byte alignment.
Staged Stage(Napi::Env env, Napi::Object in, const SlotParams& sp, int32_t batch, bool want_ext) {
  Staged s;
  const size_t b4 = static_cast<size_t>(batch) * 4, b8 = static_cast<size_t>(batch) * 8;
  HostInput seq = OptionalHost(env, in, "seqLens", b4, "an Int32Array of batch entries");
  if (!seq.data && batch > 0) ThrowField(env, "ERR_DSV4KV_ARG", "inputs.seqLens", "is required");
  HostInput ext;
  if (want_ext) {
    ext = OptionalHost(env, in, "extendLens", b4, "an Int32Array of batch entries");
    if (!ext.data) ThrowField(env, "ERR_DSV4KV_ARG", "inputs.extendLens", "is required");
  }
  HostInput rids = OptionalHost(env, in, "rids", b8, "a BigInt64Array of batch entries");
  const size_t r2t_bytes = static_cast<size_t>(sp.r2t_rows) * static_cast<size_t>(sp.r2t_stride) * 4;
  HostInput r2t = OptionalHost(env, in, "r2t", r2t_bytes, "r2tRows*r2tStride int32 entries");
  HostInput f2s = OptionalHost(env, in, "f2s", static_cast<size_t>(sp.f2s_len) * 4, "f2sLen int32 entries");
  size_t off = 0;
  s.seq = off;
  off = Align(off + seq.bytes, 8);
  s.ext = off;
  off = Align(off + ext.bytes, 8);
  s.rids = off;
  off = Align(off + rids.bytes, 8);
  s.r2t = off;
  off = Align(off + r2t.bytes, 8);
  s.f2s = off;
  off = Align(off + f2s.bytes, 8);
  s.host.resize(off);
  if (seq.bytes) std::memcpy(s.host.data() + s.seq, seq.data, seq.bytes);
  if (ext.bytes) std::memcpy(s.host.data() + s.ext, ext.data, ext.bytes);
  if (rids.bytes) std::memcpy(s.host.data() + s.rids, rids.data, rids.bytes);
  if (r2t.bytes) std::memcpy(s.host.data() + s.r2t, r2t.data, r2t.bytes);
  if (f2s.bytes) std::memcpy(s.host.data() + s.f2s, f2s.data, f2s.bytes);
  s.has_ext = ext.data != nullptr;
  s.has_rids = rids.data != nullptr;
  s.has_r2t = r2t.data != nullptr;
  s.has_f2s = f2s.data != nullptr;
  return s;
}

PrefillParams ParsePrefill(Napi::Env env, Napi::Object cfg) {
  const PrefillCfg c = ReadKeys(env, cfg, kCfgStyle, kPrefillKeys);
  PrefillParams p{};
  p.slot = ParseSlot(env, c);
  p.num_q = static_cast<int32_t>(c.numQ);
  p.batch = static_cast<int32_t>(c.batch);
  if (p.batch > p.num_q)
    ThrowField(env, "ERR_DSV4KV_ARG", "cfg.batch", p.batch, "must be <= cfg.numQ = " + std::to_string(p.num_q));
  p.pad = static_cast<int32_t>(c.pad);
  p.tail = static_cast<int32_t>(c.tail);
  p.host_rules = static_cast<int32_t>(c.hostRules);
  p.lens64 = static_cast<int32_t>(c.lens64);
  if (p.slot.legacy && (p.tail || p.pad))
    ThrowField(env, "ERR_DSV4KV_ARG", "cfg.legacy", 1, "the legacy planner has no pad and no tail clause");
  if (p.tail && (p.slot.cr != 4 || p.slot.req_style))
    ThrowField(env, "ERR_DSV4KV_ARG", "cfg.tail", 1, "is a paged-c4 rule (cr 4 without reqStyle)");
  return p;
}

DecodeParams ParseDecode(Napi::Env env, Napi::Object cfg) {
  const DecodeCfg c = ReadKeys(env, cfg, kCfgStyle, kDecodeKeys);
  DecodeParams p{};
  p.slot = ParseSlot(env, c);
  p.batch = static_cast<int32_t>(c.batch);
  p.lens64 = static_cast<int32_t>(c.lens64);
  return p;
}

#if DSV4KV_HAVE_CUDA
// Binds staged inputs that live at `dev_in` into the params.
void BindPrefillInputs(PrefillParams& p, const Staged& s, uint8_t* dev_in) {
  p.seq_lens = dev_in + s.seq;  // staged host inputs are int32
  p.extend_lens = dev_in + s.ext;
  p.lens64 = 0;
  p.rids = s.has_rids ? reinterpret_cast<const int64_t*>(dev_in + s.rids) : nullptr;
  p.slot.r2t = s.has_r2t ? reinterpret_cast<const int32_t*>(dev_in + s.r2t) : nullptr;
  p.slot.f2s = s.has_f2s ? reinterpret_cast<const int32_t*>(dev_in + s.f2s) : nullptr;
}

void BindDecodeInputs(DecodeParams& p, const Staged& s, uint8_t* dev_in) {
  p.seq_lens = dev_in + s.seq;  // staged host inputs are int32
  p.lens64 = 0;
  p.rids = s.has_rids ? reinterpret_cast<const int64_t*>(dev_in + s.rids) : nullptr;
  p.slot.r2t = s.has_r2t ? reinterpret_cast<const int32_t*>(dev_in + s.r2t) : nullptr;
  p.slot.f2s = s.has_f2s ? reinterpret_cast<const int32_t*>(dev_in + s.f2s) : nullptr;
}

void CheckR2tF2sPresence(Napi::Env env, const SlotParams& sp, bool has_r2t, bool has_f2s) {
  // Identity maps: no table. A table without its size (or the reverse) is refused.
  if (!has_r2t && sp.r2t_rows > 0 && sp.r2t_rows * sp.r2t_stride > 0 && sp.r2t_rows != INT_MAX / sp.r2t_stride)
    ThrowField(env, "ERR_DSV4KV_ARG", "cfg.r2tRows", static_cast<double>(sp.r2t_rows),
               "must be floor(INT32_MAX / r2tStride) when no r2t table is given (identity)");
  if (!has_f2s && sp.f2s_len != 0)
    ThrowField(env, "ERR_DSV4KV_ARG", "cfg.f2sLen", static_cast<double>(sp.f2s_len),
               "must be 0 when no f2s table is given");
  (void)has_f2s;
}
#endif

// Host typed arrays are staged as int32 (the TS layer converts and range-checks them); int64 lengths are a
// device-buffer option only.
[[maybe_unused]] void CheckHostLens(Napi::Env env, int32_t lens64) {
  if (lens64)
    ThrowField(env, "ERR_DSV4KV_ARG", "cfg.lens64", 1,
               "applies to device buffers only; host inputs.seqLens / extendLens are Int32Array");
}

#if DSV4KV_HAVE_CUDA
// The staged host inputs of a parsed plan call, with the table-presence and host-lengths checks.
template <typename P>
Staged StageChecked(Napi::Env env, Napi::Object inputs, const P& p, bool want_ext) {
  Staged staged = Stage(env, inputs, p.slot, p.batch, want_ext);
  CheckR2tF2sPresence(env, p.slot, staged.has_r2t, staged.has_f2s);
  CheckHostLens(env, p.lens64);
  return staged;
}

}  // namespace

HostPlan PrepareHostPlan(Napi::Env env, bool prefill, Napi::Object cfg, Napi::Object inputs, int sm) {
  HostPlan h;
  if (prefill) {
    PrefillParams p = ParsePrefill(env, cfg);
    h.staged = StageChecked(env, inputs, p, true);
    h.out_bytes = static_cast<size_t>(p.num_q) * 24 + kStatusBytes;
    h.out_rule = "numQ*24 + statusBytes";
    h.in_off = Align(h.out_bytes, 256);
    h.bind = [p, offsets = h.staged.Offsets(), in_off = h.in_off, sm](uint8_t* dev) mutable -> LaunchOn {
      p.plan_c = reinterpret_cast<uint32_t*>(dev);
      p.plan_w = reinterpret_cast<uint32_t*>(dev + static_cast<size_t>(p.num_q) * 16);
      p.status = reinterpret_cast<PlanStatus*>(dev + static_cast<size_t>(p.num_q) * 24);
      BindPrefillInputs(p, offsets, dev + in_off);
      return [p, sm](cudaStream_t st) { return LaunchPrefill(p, st, sm); };
    };
  } else {
    DecodeParams p = ParseDecode(env, cfg);
    h.staged = StageChecked(env, inputs, p, false);
    h.out_bytes = static_cast<size_t>(p.batch) * 16 + kStatusBytes;
    h.out_rule = "batch*16 + statusBytes";
    h.in_off = Align(h.out_bytes, 256);
    h.bind = [p, offsets = h.staged.Offsets(), in_off = h.in_off](uint8_t* dev) mutable -> LaunchOn {
      p.plan_d = reinterpret_cast<uint32_t*>(dev);
      p.status = reinterpret_cast<PlanStatus*>(dev + static_cast<size_t>(p.batch) * 16);
      BindDecodeInputs(p, offsets, dev + in_off);
      return [p](cudaStream_t st) { return LaunchDecode(p, st); };
    };
  }
  return h;
}

namespace {

HostView CheckedOut(Napi::Env env, Napi::Value out_arg, const HostPlan& h) {
  HostView out = HostViewOf(env, out_arg, "out");
  if (out.bytes != h.out_bytes)
    ThrowField(env, "ERR_DSV4KV_ARG", "out.byteLength", static_cast<double>(out.bytes),
               "must be exactly " + h.out_rule + " = " + std::to_string(h.out_bytes));
  return out;
}

// planPrefill / planDecode: the context's workspace, one upload, the launch, one download, a stream sync.
Napi::Value PlanHostSync(const Napi::CallbackInfo& info, bool prefill) {
  Napi::Env env = info.Env();
  Context* ctx = Context::FromValue(env, info[0], "ctx");
  HostPlan h = PrepareHostPlan(env, prefill, ArgObject(info, 1, "cfg"), ArgObject(info, 2, "inputs"), ctx->smCount());
  HostView out = CheckedOut(env, info[3], h);
  uint8_t* ws = static_cast<uint8_t*>(ctx->Workspace(env, h.in_off + h.staged.host.size()));
  ctx->Activate(env);
  cudaStream_t st = ctx->stream();
  DSV4KV_CUDA_TRY(
      env, cudaMemcpyAsync(ws + h.in_off, h.staged.host.data(), h.staged.host.size(), cudaMemcpyHostToDevice, st));
  DSV4KV_CUDA_TRY(env, h.bind(ws)(st));
  DSV4KV_CUDA_TRY(env, cudaMemcpyAsync(out.data, ws, h.out_bytes, cudaMemcpyDeviceToHost, st));
  DSV4KV_CUDA_TRY(env, cudaStreamSynchronize(st));
  return env.Undefined();
}
#endif

#if DSV4KV_HAVE_CUDA
const void* DevIn(Napi::Env env, Napi::Object bufs, const char* key, size_t need, bool required) {
  Napi::Value v = bufs.Get(key);
  if (v.IsUndefined() || v.IsNull()) {
    if (required) ThrowField(env, "ERR_DSV4KV_ARG", std::string("bufs.") + key, "is required");
    return nullptr;
  }
  DeviceBuffer* b = DeviceBuffer::FromValue(env, v, key);
  b->RequireBytes(env, need, key);
  return b->data();
}

// The device buffers of planPrefillDevice / planDecodeDevice, one list per call (addon-types.ts
// PrefillPlanDeviceBuffers / DecodePlanDeviceBuffers list the same keys; test/binding-keys.test.ts holds them equal):
// the key, whether the call needs it, whether it is an output (read after the inputs' table-presence rule), its byte
// count from the parsed cfg, and the params field it fills (nullptr for an optional buffer left out).
template <typename P>
struct DevBuf {
  const char* key;
  bool required, output;
  size_t (*bytes)(const P&);
  void (*bind)(P&, void*);
};
template <typename P>
size_t LensBytes(const P& p) {
  return static_cast<size_t>(p.batch) * (p.lens64 ? 8 : 4);  // int64 or int32 per request
}
template <typename P>
size_t RidsBytes(const P& p) {
  return static_cast<size_t>(p.batch) * 8;
}
template <typename P>
size_t R2tBytes(const P& p) {
  return static_cast<size_t>(p.slot.r2t_rows * p.slot.r2t_stride) * 4;
}
template <typename P>
size_t F2sBytes(const P& p) {
  return static_cast<size_t>(p.slot.f2s_len) * 4;
}
template <typename P>
size_t StatusBytesOf(const P&) {
  return kStatusBytes;
}
#define DSV4KV_DEV_SEQ(P) {"seqLens", true, false, LensBytes<P>, [](P& p, void* d) { p.seq_lens = d; }}
#define DSV4KV_DEV_MAPS(P)                                                                                      \
  {"rids", false, false, RidsBytes<P>, [](P& p, void* d) { p.rids = static_cast<const int64_t*>(d); }},         \
      {"r2t", false, false, R2tBytes<P>, [](P& p, void* d) { p.slot.r2t = static_cast<const int32_t*>(d); }}, { \
    "f2s", false, false, F2sBytes<P>, [](P& p, void* d) { p.slot.f2s = static_cast<const int32_t*>(d); }        \
  }
#define DSV4KV_DEV_STATUS(P) \
  {"status", true, true, StatusBytesOf<P>, [](P& p, void* d) { p.status = static_cast<PlanStatus*>(d); }}
const DevBuf<PrefillParams> kPrefillDevBufs[] = {
    DSV4KV_DEV_SEQ(PrefillParams),
    {"extendLens", true, false, LensBytes<PrefillParams>, [](PrefillParams& p, void* d) { p.extend_lens = d; }},
    DSV4KV_DEV_MAPS(PrefillParams),
    {"planC", true, true, [](const PrefillParams& p) { return static_cast<size_t>(p.num_q) * 16; },
     [](PrefillParams& p, void* d) { p.plan_c = static_cast<uint32_t*>(d); }},
    {"planW", true, true, [](const PrefillParams& p) { return static_cast<size_t>(p.num_q) * 8; },
     [](PrefillParams& p, void* d) { p.plan_w = static_cast<uint32_t*>(d); }},
    DSV4KV_DEV_STATUS(PrefillParams),
};
const DevBuf<DecodeParams> kDecodeDevBufs[] = {
    DSV4KV_DEV_SEQ(DecodeParams),
    DSV4KV_DEV_MAPS(DecodeParams),
    {"planD", true, true, [](const DecodeParams& p) { return static_cast<size_t>(p.batch) * 16; },
     [](DecodeParams& p, void* d) { p.plan_d = static_cast<uint32_t*>(d); }},
    DSV4KV_DEV_STATUS(DecodeParams),
};
#undef DSV4KV_DEV_SEQ
#undef DSV4KV_DEV_MAPS
#undef DSV4KV_DEV_STATUS
template <bool kPrefill>
const auto& DevBufsOf() {
  if constexpr (kPrefill) {
    return kPrefillDevBufs;
  } else {
    return kDecodeDevBufs;
  }
}

// The table's inputs (outputs = false) or outputs, in table order, into the params.
template <typename P, size_t N>
void ReadDevBufs(Napi::Env env, Napi::Object bufs, const DevBuf<P> (&table)[N], bool outputs, P& p) {
  for (const DevBuf<P>& k : table)
    if (k.output == outputs) k.bind(p, const_cast<void*>(DevIn(env, bufs, k.key, k.bytes(p), k.required)));
}
#endif

// planPrefillDevice / planDecodeDevice: device-resident inputs and outputs, enqueued on ctx's stream (no sync).
template <bool kPrefill>
Napi::Value PlanDevice(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
#if DSV4KV_HAVE_CUDA
  // The cfg first: its checks need no device (test/binding-keys.test.ts runs them on a machine without one).
  Napi::Object cfg = ArgObject(info, 1, "cfg");
  std::conditional_t<kPrefill, PrefillParams, DecodeParams> p{};
  if constexpr (kPrefill) {
    p = ParsePrefill(env, cfg);
  } else {
    p = ParseDecode(env, cfg);
  }
  Context* ctx = Context::FromValue(env, info[0], "ctx");
  Napi::Object bufs = ArgObject(info, 2, "bufs");
  ReadDevBufs(env, bufs, DevBufsOf<kPrefill>(), false, p);
  CheckR2tF2sPresence(env, p.slot, p.slot.r2t != nullptr, p.slot.f2s != nullptr);
  ReadDevBufs(env, bufs, DevBufsOf<kPrefill>(), true, p);
  // What the launcher requires, named here rather than as cudaErrorInvalidValue (the parse above implies it).
  const char* why = nullptr;
  if constexpr (kPrefill) {
    why = PrefillPrecondition(p);
  } else {
    why = DecodePrecondition(p);
  }
  if (why) ThrowField(env, "ERR_DSV4KV_ARG", "cfg", why);
  ctx->Activate(env);
  if constexpr (kPrefill) {
    DSV4KV_CUDA_TRY(env, LaunchPrefill(p, ctx->stream(), ctx->smCount()));
  } else {
    DSV4KV_CUDA_TRY(env, LaunchDecode(p, ctx->stream()));
  }
  return env.Undefined();
#else
  NoCuda(env, kPrefill ? "planPrefillDevice" : "planDecodeDevice");
#endif
}

#if DSV4KV_HAVE_CUDA
// One asynchronous plan call. Constructed on the JS thread with everything validated and the inputs staged (a
// private copy); Execute() runs on a libuv worker thread and touches no JS: it allocates stream-ordered scratch
// (cudaMallocAsync, so no other call's workspace is shared and nothing synchronises the device), uploads, launches,
// downloads into `out` (kept alive by a reference) and waits for the stream. The promise settles on the JS thread.
// The context's pending count keeps destroy() from tearing the stream down while a call is in flight, and the
// reference to the context object keeps its finalizer from running.
class PlanWorker : public Napi::AsyncWorker {
 public:
  using LaunchFn = std::function<cudaError_t(uint8_t* dev, cudaStream_t stream)>;
  PlanWorker(Napi::Env env, const char* what, Context* ctx, Napi::Object ctx_obj, Napi::Object out_obj, HostView out,
             std::vector<uint8_t> host_in, size_t in_off, LaunchFn launch)
      : Napi::AsyncWorker(env, what),
        deferred_(Napi::Promise::Deferred::New(env)),
        what_(what),
        ctx_(ctx),
        device_(ctx->device()),
        stream_(ctx->stream()),
        out_data_(out.data),
        out_bytes_(out.bytes),
        host_in_(std::move(host_in)),
        in_off_(in_off),
        launch_(std::move(launch)) {
    ctx_ref_ = Napi::Persistent(ctx_obj);
    out_ref_ = Napi::Persistent(out_obj);
    ctx_->BeginAsync();
  }
  Napi::Promise Promise() const { return deferred_.Promise(); }

 protected:
  void Execute() override {
    const char* call = nullptr;
    cudaError_t e = cudaSuccess;
    auto step = [&](cudaError_t r, const char* name) {
      if (e == cudaSuccess && r != cudaSuccess) {
        e = r;
        call = name;
      }
    };
    step(cudaSetDevice(device_), "cudaSetDevice");
    uint8_t* dev = nullptr;
    if (e == cudaSuccess)
      step(cudaMallocAsync(reinterpret_cast<void**>(&dev), in_off_ + host_in_.size(), stream_), "cudaMallocAsync");
    if (e == cudaSuccess && !host_in_.empty())
      step(cudaMemcpyAsync(dev + in_off_, host_in_.data(), host_in_.size(), cudaMemcpyHostToDevice, stream_),
           "cudaMemcpyAsync(inputs)");
    if (e == cudaSuccess) step(launch_(dev, stream_), "kernel launch");
    if (e == cudaSuccess)
      step(cudaMemcpyAsync(out_data_, dev, out_bytes_, cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync(out)");
    if (dev) step(cudaFreeAsync(dev, stream_), "cudaFreeAsync");
    step(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    if (e != cudaSuccess) {
      err_ = e;
      call_ = call;
      SetError(call);  // OnError builds the JS error from err_ and call_
    }
  }
  void OnOK() override {
    ctx_->EndAsync();
    deferred_.Resolve(Env().Undefined());
  }
  void OnError(const Napi::Error& error) override {
    ctx_->EndAsync();
    (void)error;
    deferred_.Reject(CudaError(Env(), what_, call_ ? call_ : "", err_).Value());
  }

 private:
  Napi::Promise::Deferred deferred_;
  const char* what_;
  Context* ctx_;
  int device_;
  cudaStream_t stream_;
  Napi::ObjectReference ctx_ref_, out_ref_;
  uint8_t* out_data_;
  size_t out_bytes_;
  std::vector<uint8_t> host_in_;
  size_t in_off_;
  LaunchFn launch_;
  cudaError_t err_ = cudaSuccess;
  const char* call_ = nullptr;
};

Napi::Object OutObject(const Napi::CallbackInfo& info, size_t i) {
  if (info.Length() <= i || !info[i].IsTypedArray())
    ThrowField(info.Env(), "ERR_DSV4KV_ARG", "out", "must be a Uint8Array");
  return info[i].As<Napi::Object>();
}
#endif

#if DSV4KV_HAVE_CUDA
// planPrefillAsync / planDecodeAsync: the same preparation; the upload, launch, download and wait run on a worker.
Napi::Value PlanHostAsync(const Napi::CallbackInfo& info, bool prefill, const char* what) {
  Napi::Env env = info.Env();
  Context* ctx = Context::FromValue(env, info[0], "ctx");
  HostPlan h = PrepareHostPlan(env, prefill, ArgObject(info, 1, "cfg"), ArgObject(info, 2, "inputs"), ctx->smCount());
  Napi::Object out_obj = OutObject(info, 3);
  HostView out = CheckedOut(env, out_obj, h);
  auto launch = [bind = std::move(h.bind)](uint8_t* dev, cudaStream_t st) { return bind(dev)(st); };
  auto* w = new PlanWorker(env, what, ctx, info[0].As<Napi::Object>(), out_obj, out, std::move(h.staged.host), h.in_off,
                           launch);
  Napi::Promise promise = w->Promise();
  w->Queue();
  return promise;
}
#endif

// planPrefill / planDecode / planPrefillAsync / planDecodeAsync: host arrays in, `out` filled (see the top).
template <bool kPrefill, bool kAsync>
Napi::Value PlanHost(const Napi::CallbackInfo& info) {
  constexpr const char* kName =
      kPrefill ? (kAsync ? "planPrefillAsync" : "planPrefill") : (kAsync ? "planDecodeAsync" : "planDecode");
#if DSV4KV_HAVE_CUDA
  return kAsync ? PlanHostAsync(info, kPrefill, kName) : PlanHostSync(info, kPrefill);
#else
  NoCuda(info.Env(), kName);
#endif
}

}  // namespace
}  // namespace dsv4kv

void RegisterPlanner(Napi::Env env, Napi::Object exports) {
  using namespace dsv4kv;
  exports.Set("planPrefill", Napi::Function::New<PlanHost<true, false>>(env, "planPrefill"));
  exports.Set("planPrefillDevice", Napi::Function::New<PlanDevice<true>>(env, "planPrefillDevice"));
  exports.Set("planDecode", Napi::Function::New<PlanHost<false, false>>(env, "planDecode"));
  exports.Set("planDecodeDevice", Napi::Function::New<PlanDevice<false>>(env, "planDecodeDevice"));
  exports.Set("planPrefillAsync", Napi::Function::New<PlanHost<true, true>>(env, "planPrefillAsync"));
  exports.Set("planDecodeAsync", Napi::Function::New<PlanHost<false, true>>(env, "planDecodeAsync"));
  exports.Set("maxGpuBatch", Napi::Number::New(env, kMaxGpuBatch));
  exports.Set("planStatusBytes", Napi::Number::New(env, static_cast<double>(kStatusBytes)));
}
