// Shared helpers: see the note at the top of common.h.
#include "common.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <vector>

namespace dsv4kv {

namespace {

std::string Num(double d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  return buf;
}

// How the raw message shows a JS value: strings quoted, numbers as %.17g.
std::string Shown(Napi::Value v) {
  if (v.IsUndefined()) return "undefined";
  if (v.IsString()) return "\"" + v.As<Napi::String>().Utf8Value() + "\"";
  if (v.IsNumber()) return Num(v.As<Napi::Number>().DoubleValue());
  return "a non-number";
}

[[noreturn]] void Throw(Napi::Env env, const char* code, const std::string& field, const Napi::Value* value,
                        const std::string& shown, const std::string& rule) {
  Napi::Error e = Napi::Error::New(env, value ? field + " = " + shown + ": " + rule : field + " " + rule);
  e.Set("code", Napi::String::New(env, code));
  e.Set("field", Napi::String::New(env, field));
  if (value) e.Set("value", *value);
  e.Set("rule", Napi::String::New(env, rule));
  throw e;
}

}  // namespace

void ThrowField(Napi::Env env, const char* code, const std::string& field, const std::string& rule) {
  Throw(env, code, field, nullptr, "", rule);
}

void ThrowField(Napi::Env env, const char* code, const std::string& field, double value, const std::string& rule) {
  const Napi::Value v = Napi::Number::New(env, value);
  Throw(env, code, field, &v, Num(value), rule);
}

void ThrowField(Napi::Env env, const char* code, const std::string& field, Napi::Value value, const std::string& rule) {
  Throw(env, code, field, &value, Shown(value), rule);
}

void ThrowUnknownKeyError(Napi::Env env, const std::string& field, const std::string& rule,
                          const std::string& suggestion) {
  std::string msg = field + " " + rule;
  if (!suggestion.empty()) msg += " (did you mean \"" + suggestion + "\"?)";
  Napi::Error e = Napi::Error::New(env, msg);
  e.Set("code", Napi::String::New(env, "ERR_DSV4KV_UNKNOWN_KEY"));
  e.Set("field", Napi::String::New(env, field));
  e.Set("rule", Napi::String::New(env, rule));
  if (!suggestion.empty()) e.Set("suggestion", Napi::String::New(env, suggestion));
  throw e;
}

namespace {

// Edit distance of two short keys (the unknown-key suggestion).
size_t Distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

[[noreturn]] void ThrowUnknownKey(Napi::Env env, const KeyStyle& style, const std::string& key,
                                  const std::vector<const char*>& known) {
  std::string best, list;
  size_t best_d = SIZE_MAX;
  for (const char* k : known) {
    const size_t d = Distance(key, k);
    if (d < best_d) best_d = d, best = k;
    list += list.empty() ? k : std::string(", ") + k;
  }
  // Suggest only a near miss (at most a third of the key's letters wrong), as closestMatch does in TS.
  ThrowUnknownKeyError(env, style.fieldPrefix + key, "is not a key of " + std::string(style.object) + " (" + list + ")",
                       best_d * 3 <= std::max(key.size(), best.size()) ? best : std::string());
}

}  // namespace

void RefuseUnknownKeys(Napi::Env env, Napi::Object o, const KeyStyle& style, const std::vector<const char*>& known) {
  const Napi::Array names = o.GetPropertyNames();
  for (uint32_t i = 0; i < names.Length(); ++i) {
    const std::string key = names.Get(i).ToString().Utf8Value();
    const bool listed = std::any_of(known.begin(), known.end(), [&](const char* k) { return key == k; });
    if (!listed && !o.Get(key).IsUndefined()) ThrowUnknownKey(env, style, key, known);
  }
}

double ReadWhole(Napi::Env env, Napi::Value v, const std::string& field, const WholeRule& rule) {
  if (!v.IsNumber()) ThrowField(env, "ERR_INVALID_ARG_TYPE", field, v, rule.typeRule);
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!(d >= rule.lo && d <= rule.hi && d == std::floor(d) && std::fabs(d) <= kMaxSafeInteger))
    ThrowField(env, rule.code, field, d, rule.rangeRule);
  return d;
}

int64_t ReadInt(Napi::Env env, Napi::Value v, const KeyStyle& style, const std::string& field, int64_t lo, int64_t hi) {
  const std::string range = "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  const WholeRule rule{static_cast<double>(lo), static_cast<double>(hi), style.code, "must be " + range,
                       "must be a number (" + range + ")"};
  return static_cast<int64_t>(ReadWhole(env, v, field, rule));
}

Napi::Object ArgObject(const Napi::CallbackInfo& info, size_t i, const char* name, const char* code) {
  if (info.Length() <= i || !info[i].IsObject())
    ThrowField(info.Env(), code, name, info.Length() <= i ? info.Env().Undefined() : info[i], "must be an object");
  return info[i].As<Napi::Object>();
}

void NoCuda(Napi::Env env, const char* what) {
  ThrowField(env, "ERR_DSV4KV_NO_CUDA", what,
             "is unavailable: the addon was built without CUDA (no nvcc at build time); rebuild it with nvcc on PATH");
}

#if DSV4KV_HAVE_CUDA
Napi::Error CudaError(Napi::Env env, const char* entry, const char* call, cudaError_t err) {
  const std::string where = entry && *entry ? std::string(entry) + ": " : std::string();
  Napi::Error e =
      Napi::Error::New(env, where + call + " failed: " + cudaGetErrorString(err) + " (" + cudaGetErrorName(err) +
                                " = " + std::to_string(static_cast<int>(err)) + ")");
  e.Set("code", Napi::String::New(env, "ERR_DSV4KV_CUDA"));
  e.Set("entry", Napi::String::New(env, entry ? entry : ""));
  e.Set("cudaCall", Napi::String::New(env, call));
  e.Set("cudaCode", Napi::Number::New(env, static_cast<int>(err)));
  e.Set("cudaName", Napi::String::New(env, cudaGetErrorName(err)));
  e.Set("cudaMessage", Napi::String::New(env, cudaGetErrorString(err)));
  return e;
}

void ThrowCuda(Napi::Env env, const char* call, cudaError_t err) { throw CudaError(env, nullptr, call, err); }
#endif

HostView HostViewOf(Napi::Env env, Napi::Value v, const char* argName) {
  HostView h;
  if (v.IsTypedArray()) {
    Napi::TypedArray t = v.As<Napi::TypedArray>();
    Napi::ArrayBuffer ab = t.ArrayBuffer();
    h.data = static_cast<uint8_t*>(ab.Data()) + t.ByteOffset();
    h.bytes = t.ByteLength();
  } else if (v.IsDataView()) {
    Napi::DataView d = v.As<Napi::DataView>();
    h.data = static_cast<uint8_t*>(d.ArrayBuffer().Data()) + d.ByteOffset();
    h.bytes = d.ByteLength();
  } else if (v.IsArrayBuffer()) {
    Napi::ArrayBuffer ab = v.As<Napi::ArrayBuffer>();
    h.data = static_cast<uint8_t*>(ab.Data());
    h.bytes = ab.ByteLength();
  } else {
    ThrowField(env, "ERR_INVALID_ARG_TYPE", argName, v, "must be a TypedArray, DataView or ArrayBuffer");
  }
  return h;
}

// ---------------------------------------------------------------------------------------------------------------
// Context
Napi::Function Context::Define(Napi::Env env) {
  return DefineClass(env, "Context",
                     {InstanceMethod<&Context::Synchronize>("synchronize"),
                      InstanceMethod<&Context::Destroy>("destroy"), InstanceAccessor<&Context::GetDevice>("device")});
}

Context::Context(const Napi::CallbackInfo& info) : Wrapped<Context>(info) {
  Napi::Env env = info.Env();
  int dev = 0;
  if (info.Length() > 0 && !info[0].IsUndefined()) {
    const WholeRule rule{0, kMaxDeviceIndex, "ERR_OUT_OF_RANGE",
                         "must be a device index: an integer in [0, " + std::to_string(kMaxDeviceIndex) + "]",
                         "must be an integer"};
    dev = static_cast<int>(ReadWhole(env, info[0], "device", rule));
  }
  device_ = dev;
#if DSV4KV_HAVE_CUDA
  int count = 0;
  DSV4KV_CUDA_TRY(env, cudaGetDeviceCount(&count));
  if (dev >= count)
    ThrowField(env, "ERR_OUT_OF_RANGE", "device", dev,
               "does not exist (" + std::to_string(count) + " device(s) visible)");
  DSV4KV_CUDA_TRY(env, cudaSetDevice(dev));
  DSV4KV_CUDA_TRY(env, cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, dev));
  DSV4KV_CUDA_TRY(env, cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  alive_ = true;
#else
  NoCuda(env, "new Context()");
#endif
}

void Context::Release() {
#if DSV4KV_HAVE_CUDA
  if (alive_ && stream_) {
    cudaSetDevice(device_);
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
    if (ws_) cudaFree(ws_);
  }
  stream_ = nullptr;
  ws_ = nullptr;
  ws_bytes_ = 0;
#endif
  alive_ = false;
}

Context::~Context() { Release(); }

void Context::CheckUsable(Napi::Env env, const char* argName) const {
  if (!alive_) ThrowField(env, "ERR_DSV4KV_CONTEXT", argName, "was destroyed (Context.destroy())");
}

void Context::Activate(Napi::Env env) const {
#if DSV4KV_HAVE_CUDA
  DSV4KV_CUDA_TRY(env, cudaSetDevice(device_));
#else
  NoCuda(env, "Context.activate");
#endif
}

void* Context::Workspace(Napi::Env env, size_t bytes) {
  CheckUsable(env, "ctx");
#if DSV4KV_HAVE_CUDA
  if (bytes > ws_bytes_) {
    DSV4KV_CUDA_TRY(env, cudaSetDevice(device_));
    DSV4KV_CUDA_TRY(env, cudaStreamSynchronize(stream_));
    if (ws_) {
      void* old = ws_;
      ws_ = nullptr;
      ws_bytes_ = 0;
      DSV4KV_CUDA_TRY(env, cudaFree(old));
    }
    size_t want = bytes < 4096 ? 4096 : bytes + bytes / 2;  // grow geometrically, never shrink
    DSV4KV_CUDA_TRY(env, cudaMalloc(&ws_, want));
    ws_bytes_ = want;
  }
  return ws_;
#else
  (void)bytes;
  NoCuda(env, "Context.workspace");
#endif
}

Napi::Value Context::Synchronize(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  CheckUsable(env, "ctx");
#if DSV4KV_HAVE_CUDA
  DSV4KV_CUDA_TRY(env, cudaSetDevice(device_));
  DSV4KV_CUDA_TRY(env, cudaStreamSynchronize(stream_));
#endif
  return env.Undefined();
}

Napi::Value Context::Destroy(const Napi::CallbackInfo& info) {
  const int pending = pendingAsync();
  if (pending > 0)
    ThrowField(info.Env(), "ERR_DSV4KV_CONTEXT", "Context.destroy()",
               "refused: " + std::to_string(pending) +
                   " asynchronous call(s) still in flight on this context; await them first");
  Release();
  return info.Env().Undefined();
}

Napi::Value Context::GetDevice(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), device_); }

// ---------------------------------------------------------------------------------------------------------------
// DeviceBuffer
Napi::Function DeviceBuffer::Define(Napi::Env env) {
  return DefineClass(
      env, "DeviceBuffer",
      {InstanceMethod<&DeviceBuffer::Upload>("upload"), InstanceMethod<&DeviceBuffer::Download>("download"),
       InstanceMethod<&DeviceBuffer::Fill>("fill"), InstanceMethod<&DeviceBuffer::Free>("free"),
       InstanceAccessor<&DeviceBuffer::GetByteLength>("byteLength"),
       InstanceAccessor<&DeviceBuffer::GetFreed>("freed")});
}

DeviceBuffer::DeviceBuffer(const Napi::CallbackInfo& info) : Wrapped<DeviceBuffer>(info) {
  Napi::Env env = info.Env();
  // 2^40 bytes: far above any GPU's memory; rejects negative, NaN, fractional and absurd sizes up front.
  const WholeRule rule{0, 1099511627776.0, "ERR_OUT_OF_RANGE", "must be an integer in [0, 2^40]", "must be a number"};
  const double n = ReadWhole(env, info.Length() < 1 ? env.Undefined() : info[0], "byteLength", rule);
  bytes_ = static_cast<size_t>(n);
#if DSV4KV_HAVE_CUDA
  if (info.Length() > 1 && !info[1].IsUndefined()) {
    Context* c = Context::FromValue(env, info[1], "ctx");
    device_ = c->device();
  }
  DSV4KV_CUDA_TRY(env, cudaSetDevice(device_));
  if (bytes_ > 0) {
    DSV4KV_CUDA_TRY(env, cudaMalloc(&ptr_, bytes_));
    Napi::MemoryManagement::AdjustExternalMemory(env, static_cast<int64_t>(bytes_));
  }
#else
  NoCuda(env, "new DeviceBuffer()");
#endif
}

void DeviceBuffer::Release() {
#if DSV4KV_HAVE_CUDA
  if (ptr_) {
    cudaSetDevice(device_);
    cudaFree(ptr_);  // finalizer path: no JS to report to; cudaFree synchronises the device.
  }
#endif
  ptr_ = nullptr;
}

DeviceBuffer::~DeviceBuffer() { Release(); }

template <typename T>
T* Wrapped<T>::FromValue(Napi::Env env, Napi::Value v, const char* argName) {
  const char* rule = std::is_same_v<T, Context> ? "must be a Context" : "must be a DeviceBuffer";
  void* raw = nullptr;
  if (!v.IsObject() || napi_unwrap(env, v, &raw) != napi_ok || raw == nullptr)
    ThrowField(env, "ERR_INVALID_ARG_TYPE", argName, v, rule);
  T* t = Napi::ObjectWrap<T>::Unwrap(v.As<Napi::Object>());
  t->CheckUsable(env, argName);
  return t;
}
template Context* Wrapped<Context>::FromValue(Napi::Env, Napi::Value, const char*);
template DeviceBuffer* Wrapped<DeviceBuffer>::FromValue(Napi::Env, Napi::Value, const char*);

void DeviceBuffer::RequireBytes(Napi::Env env, size_t need, const char* argName) const {
  if (bytes_ > 0 && ptr_ == nullptr) ThrowField(env, "ERR_DSV4KV_BUFFER", argName, "was freed (DeviceBuffer.free())");
  if (bytes_ < need)
    ThrowField(env, "ERR_DSV4KV_BUFFER", std::string(argName) + ".byteLength", static_cast<double>(bytes_),
               "needs at least " + std::to_string(need) + " bytes");
}

static size_t OffsetArg(Napi::Env env, const Napi::CallbackInfo& info, size_t i, const char* what) {
  if (info.Length() <= i || info[i].IsUndefined()) return 0;
  const WholeRule rule{0, kMaxSafeInteger, "ERR_OUT_OF_RANGE", "must be an integer in [0, 2^53 - 1]",
                       "must be a number"};
  return static_cast<size_t>(ReadWhole(env, info[i], what, rule));
}

HostView DeviceBuffer::CopyArgs(const Napi::CallbackInfo& info, const char* what, const char* overflow,
                                size_t* offset) const {
  Napi::Env env = info.Env();
  const std::string call(what);
  HostView h = HostViewOf(env, info[0], (call + "(view)").c_str());
  const size_t off = OffsetArg(env, info, 1, (call + "(view, byteOffset)").c_str());
  if (bytes_ > 0 && !ptr_) ThrowField(env, "ERR_DSV4KV_BUFFER", call, "DeviceBuffer was freed");
  if (off > bytes_ || h.bytes > bytes_ - off)
    ThrowField(
        env, "ERR_OUT_OF_RANGE", call + "(view, byteOffset).byteOffset", static_cast<double>(off),
        std::to_string(h.bytes) + " bytes at this offset " + overflow + " a buffer of " + std::to_string(bytes_));
  *offset = off;
  return h;
}

Napi::Value DeviceBuffer::Copy(const Napi::CallbackInfo& info, bool upload) {
  Napi::Env env = info.Env();
  size_t off = 0;
  HostView h = CopyArgs(info, upload ? "upload" : "download", upload ? "do not fit" : "exceed", &off);
#if DSV4KV_HAVE_CUDA
  if (h.bytes) {
    uint8_t* dev = static_cast<uint8_t*>(ptr_) + off;
    DSV4KV_CUDA_TRY(env, cudaSetDevice(device_));
    // Contexts launch on non-blocking streams, which do not order with the legacy stream cudaMemcpy uses, and a
    // pageable H2D cudaMemcpy may return before its DMA lands. Quiesce the device before either copy (so neither
    // races a kernel on the buffer) and after an upload (so no kernel launched right after it reads stale bytes).
    DSV4KV_CUDA_TRY(env, cudaDeviceSynchronize());
    if (upload) {
      DSV4KV_CUDA_TRY(env, cudaMemcpy(dev, h.data, h.bytes, cudaMemcpyHostToDevice));
      DSV4KV_CUDA_TRY(env, cudaDeviceSynchronize());
    } else {
      DSV4KV_CUDA_TRY(env, cudaMemcpy(h.data, dev, h.bytes, cudaMemcpyDeviceToHost));
    }
  }
#endif
  return upload ? info.This() : info[0];
}

Napi::Value DeviceBuffer::Upload(const Napi::CallbackInfo& info) { return Copy(info, true); }
Napi::Value DeviceBuffer::Download(const Napi::CallbackInfo& info) { return Copy(info, false); }

Napi::Value DeviceBuffer::Fill(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int byte = 0;
  if (info.Length() > 0 && !info[0].IsUndefined()) {
    // A byte value, never wrapped (256 is not 0) nor coerced.
    const WholeRule rule{0, 255, "ERR_OUT_OF_RANGE", "must be an integer in [0, 255]",
                         "must be an integer in [0, 255]"};
    byte = static_cast<int>(ReadWhole(env, info[0], "byte", rule));
  }
  if (bytes_ > 0 && !ptr_) ThrowField(env, "ERR_DSV4KV_BUFFER", "fill", "DeviceBuffer was freed");
#if DSV4KV_HAVE_CUDA
  if (bytes_) {
    DSV4KV_CUDA_TRY(env, cudaSetDevice(device_));
    // Same ordering rule as upload: cudaMemset runs on the legacy stream, unordered with the contexts' streams.
    DSV4KV_CUDA_TRY(env, cudaDeviceSynchronize());
    DSV4KV_CUDA_TRY(env, cudaMemset(ptr_, byte, bytes_));
    DSV4KV_CUDA_TRY(env, cudaDeviceSynchronize());
  }
#else
  (void)byte;
#endif
  return info.This();
}

Napi::Value DeviceBuffer::Free(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
#if DSV4KV_HAVE_CUDA
  if (ptr_) {
    DSV4KV_CUDA_TRY(env, cudaSetDevice(device_));
    void* p = ptr_;
    ptr_ = nullptr;
    Napi::MemoryManagement::AdjustExternalMemory(env, -static_cast<int64_t>(bytes_));
    DSV4KV_CUDA_TRY(env, cudaFree(p));
  }
#endif
  return env.Undefined();
}

Napi::Value DeviceBuffer::GetByteLength(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(bytes_));
}
Napi::Value DeviceBuffer::GetFreed(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), bytes_ > 0 && ptr_ == nullptr);
}

}  // namespace dsv4kv
