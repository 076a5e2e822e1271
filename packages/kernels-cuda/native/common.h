// dsv4-kv kernels-cuda: shared native helpers (errors, device buffers, contexts/streams).
//
// HOW TO USE (for every binding file in this addon, e.g. native/online_mtp/binding.cpp):
//   #include "common.h"
//   * Compile-time switch: DSV4KV_HAVE_CUDA is defined (=1) only in the CUDA build. In the CPU-only build no CUDA
//     header exists: guard every CUDA call with `#if DSV4KV_HAVE_CUDA` and throw dsv4kv::NoCuda(env, "what") in the
//     #else branch so both builds export the same functions.
//   * Errors: every throw carries structured properties that src/native-errors.ts turns into a KernelsCudaError
//     (no TS code reads the message). DSV4KV_CUDA_TRY(env, cudaMemcpyAsync(...)) throws code "ERR_DSV4KV_CUDA" with
//     err.cudaCall, err.cudaCode, err.cudaName and err.cudaMessage (ThrowCuda). Validation errors use
//     dsv4kv::ThrowField(env, "ERR_...", field, [value,] rule): err.field, err.value, err.rule. Never abort(); never
//     let a C++ exception other than Napi::Error escape (NAPI_CPP_EXCEPTIONS is on, so `throw Napi::Error` is fine).
//   * Params objects: one key table per call (IntKey / BufferKey rows, a KeyStyle naming the refusals), read with
//     ReadKeys then ReadBuffers (bottom of this file): unknown keys, missing, non-number and out-of-range values are
//     refused there, naming the key; src/addon-types.ts lists the same keys (test/binding-keys.test.ts).
//   * Device memory: JS `DeviceBuffer` objects (class registered by the addon's Init). From C++:
//       dsv4kv::DeviceBuffer* b = dsv4kv::DeviceBuffer::FromValue(env, info[0], "argName"); // throws if not one
//       void* p = b->data(); size_t n = b->bytes();  // b->RequireBytes(env, need, "argName") checks the size
//     JS side: new DeviceBuffer(bytes, ctx?) / buf.upload(typedArray, byteOffset?) / buf.download(typedArray,
//     byteOffset?) / buf.free(); a finalizer frees what a user forgot.
//   * Streams: JS `Context` objects own one device + one cudaStream_t. From C++:
//       dsv4kv::Context* c = dsv4kv::Context::FromValue(env, info[i], "ctx"); c->stream(); c->Activate(env);
//     Launch on c->stream(); check launch errors with DSV4KV_CUDA_TRY(env, cudaGetLastError()).
//   * Kernels: read device-resident inputs defensively and report through an int error flag in device memory
//     (never write out of bounds); validate host-side shapes before every launch.
#pragma once

#include <napi.h>

#include <algorithm>
#include <cmath>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#if defined(DSV4KV_HAVE_CUDA) && DSV4KV_HAVE_CUDA
#include <cuda_runtime.h>
#else
#undef DSV4KV_HAVE_CUDA
#define DSV4KV_HAVE_CUDA 0
#endif

namespace dsv4kv {

// Numbers from JS arrive as doubles. Every range check is done on the double, before any cast to an integer type:
// converting a double outside the target type's range (1e30, NaN) is undefined behaviour.
// 2^53 - 1: the largest integer below which every integer is exact as a double (Number.MAX_SAFE_INTEGER).
constexpr double kMaxSafeInteger = 9007199254740991.0;
// The largest device ordinal `new Context(device)` accepts (CUDA's count is far below; this bounds the cast).
constexpr int kMaxDeviceIndex = 1024;
// A non-negative whole number that is exact as a double: a byte offset, a length.
inline bool IsSafeIndex(double d) { return d >= 0 && d <= kMaxSafeInteger && d == std::floor(d); }

// Throw a validation error: err.code, err.field, err.rule and, when a value is given, err.value. The message is
// "field = value: rule" ("field rule" without a value), for callers of the raw addon.
[[noreturn]] void ThrowField(Napi::Env env, const char* code, const std::string& field, const std::string& rule);
[[noreturn]] void ThrowField(Napi::Env env, const char* code, const std::string& field, double value,
                             const std::string& rule);
[[noreturn]] void ThrowField(Napi::Env env, const char* code, const std::string& field, Napi::Value value,
                             const std::string& rule);
// Throw the unknown-key error of a params object: code ERR_DSV4KV_UNKNOWN_KEY, err.field = "object.key", err.rule, and
// err.suggestion (the closest known key; "" for none), which src/native-errors.ts carries as params.suggestion.
[[noreturn]] void ThrowUnknownKeyError(Napi::Env env, const std::string& field, const std::string& rule,
                                       const std::string& suggestion);
// Throw the "built without CUDA" error (code ERR_DSV4KV_NO_CUDA, err.field = what) for a CUDA-only entry point in the
// CPU build.
[[noreturn]] void NoCuda(Napi::Env env, const char* what);

#if DSV4KV_HAVE_CUDA
// The error a failed CUDA call becomes: code ERR_DSV4KV_CUDA, err.cudaCall, err.cudaCode (the cudaError_t number),
// err.cudaName, err.cudaMessage, and err.entry (the binding, "" when not given).
Napi::Error CudaError(Napi::Env env, const char* entry, const char* call, cudaError_t err);
[[noreturn]] void ThrowCuda(Napi::Env env, const char* call, cudaError_t err);
#define DSV4KV_CUDA_TRY(env, expr)                     \
  do {                                                 \
    cudaError_t dsv4kv_err__ = (expr);                 \
    if (dsv4kv_err__ != cudaSuccess) {                 \
      ::dsv4kv::ThrowCuda((env), #expr, dsv4kv_err__); \
    }                                                  \
  } while (0)

// Device allocations freed when the set goes out of scope, on every path (a bench's scratch buffers).
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
#endif

// Host view helpers: the bytes of a TypedArray / DataView / Buffer argument.
struct HostView {
  uint8_t* data = nullptr;
  size_t bytes = 0;
};
HostView HostViewOf(Napi::Env env, Napi::Value v, const char* argName);

// The base of the addon's JS classes. FromValue unwraps an argument, throwing ERR_INVALID_ARG_TYPE naming argName
// unless it is an object of this class (napi_unwrap fails on foreign objects; InstanceOf would need the constructor).
template <typename T>
class Wrapped : public Napi::ObjectWrap<T> {
 public:
  using Napi::ObjectWrap<T>::ObjectWrap;
  static T* FromValue(Napi::Env env, Napi::Value v, const char* argName);
  // What FromValue checks beyond the class (T hides this to refuse, e.g., a destroyed context).
  void CheckUsable(Napi::Env, const char*) const {}
};

// A device (plus its stream) that kernels are launched on. JS: new Context(deviceOrdinal = 0); ctx.synchronize();
// ctx.destroy(). The default context (ordinal 0) is created lazily by the bindings when none is passed.
class Context : public Wrapped<Context> {
 public:
  static Napi::Function Define(Napi::Env env);
  explicit Context(const Napi::CallbackInfo& info);
  ~Context() override;
  // Makes the context's device current for this thread (throws on failure).
  void Activate(Napi::Env env) const;
  // FromValue refuses a destroyed context (ERR_DSV4KV_CONTEXT).
  void CheckUsable(Napi::Env env, const char* argName) const;
  int device() const { return device_; }
#if DSV4KV_HAVE_CUDA
  cudaStream_t stream() const { return stream_; }
#endif
  bool alive() const { return alive_; }
  int smCount() const { return sm_count_; }
  // A grow-only device scratch buffer owned by the context (freed with it). Valid until the next call that asks for
  // more; use it only for work that is complete (synchronised) before returning to JS.
  void* Workspace(Napi::Env env, size_t bytes);
  // Asynchronous calls in flight on this context's stream (planner's PlanWorker): destroy() refuses while any is.
  void BeginAsync() { pending_.fetch_add(1, std::memory_order_relaxed); }
  void EndAsync() { pending_.fetch_sub(1, std::memory_order_relaxed); }
  int pendingAsync() const { return pending_.load(std::memory_order_relaxed); }

 private:
  Napi::Value Synchronize(const Napi::CallbackInfo& info);
  Napi::Value Destroy(const Napi::CallbackInfo& info);
  Napi::Value GetDevice(const Napi::CallbackInfo& info);
  void Release();
  int device_ = 0;
  bool alive_ = false;
  int sm_count_ = 0;
  void* ws_ = nullptr;
  size_t ws_bytes_ = 0;
  std::atomic<int> pending_{0};
#if DSV4KV_HAVE_CUDA
  cudaStream_t stream_ = nullptr;
#endif
};

// Device memory owned by a JS object. JS: new DeviceBuffer(byteLength, ctx?) ; .byteLength ; .upload(view, dstOff=0)
// ; .download(view, srcOff=0) ; .fill(byte) ; .free() ; .freed. Copies and fill are synchronous w.r.t. the host view
// and ordered with every stream of the device (they quiesce it before and after), so they never race a kernel.
class DeviceBuffer : public Wrapped<DeviceBuffer> {
 public:
  static Napi::Function Define(Napi::Env env);
  explicit DeviceBuffer(const Napi::CallbackInfo& info);
  ~DeviceBuffer() override;
  void* data() const { return ptr_; }
  size_t bytes() const { return bytes_; }
  int device() const { return device_; }
  // Throws ERR_DSV4KV_BUFFER unless the buffer is live and holds at least `need` bytes.
  void RequireBytes(Napi::Env env, size_t need, const char* argName) const;

 private:
  // The host view and device offset of upload / download, checked against this buffer.
  HostView CopyArgs(const Napi::CallbackInfo& info, const char* what, const char* overflow, size_t* offset) const;
  Napi::Value Copy(const Napi::CallbackInfo& info, bool upload);
  Napi::Value Upload(const Napi::CallbackInfo& info);
  Napi::Value Download(const Napi::CallbackInfo& info);
  Napi::Value Fill(const Napi::CallbackInfo& info);
  Napi::Value Free(const Napi::CallbackInfo& info);
  Napi::Value GetByteLength(const Napi::CallbackInfo& info);
  Napi::Value GetFreed(const Napi::CallbackInfo& info);
  void Release();
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
  int device_ = 0;
};

// A params object read through one key table per call (planner cfg, online-MTP args): each IntKey row names the key,
// the struct member it fills, its range and whether it may be absent (`def` then); each BufferKey row names a
// DeviceBuffer key. ReadKeys refuses, naming `<style.fieldPrefix><key>`: a key no table lists (ERR_DSV4KV_UNKNOWN_KEY,
// with the closest listed key as the suggestion), a required key that is absent or null (style.code), a value that is
// not a number (ERR_INVALID_ARG_TYPE: no coercion, a boolean is not 0/1) and one that is not an integer in [lo, hi]
// (style.code). It reads the integers only, so that the rules tying keys together come before ReadBuffers.
template <typename T>
struct IntKey {
  const char* key;
  int64_t T::* member;
  int64_t lo, hi;
  bool required;
  int64_t def;
};
template <typename T>
struct BufferKey {
  const char* key;
  DeviceBuffer* T::* member;
  bool required;
};
// How one binding names its refusals: `object` in the unknown-key rule ("cfg", "writePrefix args"), `fieldPrefix`
// before each key ("cfg." or "": the online-MTP fields are the bare keys), `code` of a missing or out-of-range value.
struct KeyStyle {
  const char* object;
  const char* fieldPrefix;
  const char* code;
};
// Refuses the first key of `o` (whose value is not undefined) that `known` does not list.
void RefuseUnknownKeys(Napi::Env env, Napi::Object o, const KeyStyle& style, const std::vector<const char*>& known);
// A number that is an integer in [lo, hi] (the IntKey rule), for a value read outside a table.
int64_t ReadInt(Napi::Env env, Napi::Value v, const KeyStyle& style, const std::string& field, int64_t lo, int64_t hi);
// The rules of one whole-number argument (a device index, a byte length, a byte offset, a fill byte): a value that is
// not a number is refused with ERR_INVALID_ARG_TYPE and `typeRule`, one outside [lo, hi] (or fractional) with `code`
// and `rangeRule`; both name `field`. lo and hi are at most 2^53 - 1 in magnitude, so the result casts exactly.
struct WholeRule {
  double lo, hi;
  const char* code;
  std::string rangeRule, typeRule;
};
// The value as a double, range-checked before any cast (converting 1e30 or NaN to an integer is undefined behaviour).
double ReadWhole(Napi::Env env, Napi::Value v, const std::string& field, const WholeRule& rule);
// info[i] as an object, else `code` naming `name` ("must be an object"): the params argument of every binding.
Napi::Object ArgObject(const Napi::CallbackInfo& info, size_t i, const char* name, const char* code = "ERR_DSV4KV_ARG");

// The integer keys of `ints` read from `o`, after refusing any key outside `ints` and `known`.
template <typename T, size_t N>
T ReadIntKeys(Napi::Env env, Napi::Object o, const KeyStyle& style, const IntKey<T> (&ints)[N],
              std::vector<const char*> known) {
  for (const IntKey<T>& k : ints) known.push_back(k.key);
  RefuseUnknownKeys(env, o, style, known);
  T out{};
  for (const IntKey<T>& k : ints) {
    const Napi::Value v = o.Get(k.key);
    const std::string field = std::string(style.fieldPrefix) + k.key;
    if (v.IsUndefined() || v.IsNull()) {
      if (k.required) ThrowField(env, style.code, field, "is required");
      out.*k.member = k.def;
    } else {
      out.*k.member = ReadInt(env, v, style, field, k.lo, k.hi);
    }
  }
  return out;
}
// An object of integer keys only.
template <typename T, size_t N>
T ReadKeys(Napi::Env env, Napi::Object o, const KeyStyle& style, const IntKey<T> (&ints)[N]) {
  return ReadIntKeys(env, o, style, ints, {});
}
// Integer keys plus DeviceBuffer keys (read afterwards with ReadBuffers).
template <typename T, size_t N, size_t M>
T ReadKeys(Napi::Env env, Napi::Object o, const KeyStyle& style, const IntKey<T> (&ints)[N],
           const BufferKey<T> (&bufs)[M]) {
  std::vector<const char*> known;
  for (const BufferKey<T>& k : bufs) known.push_back(k.key);
  return ReadIntKeys(env, o, style, ints, std::move(known));
}
// Integer keys plus keys of another kind the caller reads itself (a string such as bench's `op`).
template <typename T, size_t N, size_t M>
T ReadKeys(Napi::Env env, Napi::Object o, const KeyStyle& style, const IntKey<T> (&ints)[N],
           const char* const (&others)[M]) {
  return ReadIntKeys(env, o, style, ints, std::vector<const char*>(std::begin(others), std::end(others)));
}

// The DeviceBuffer keys of a table: a required one must be present (style.code); each present one must be a live
// DeviceBuffer (ERR_INVALID_ARG_TYPE, ERR_DSV4KV_BUFFER); an absent optional one is nullptr.
template <typename T, size_t M>
void ReadBuffers(Napi::Env env, Napi::Object o, const KeyStyle& style, const BufferKey<T> (&bufs)[M], T& out) {
  for (const BufferKey<T>& k : bufs) {
    const Napi::Value v = o.Get(k.key);
    const std::string field = std::string(style.fieldPrefix) + k.key;
    out.*k.member = nullptr;
    if (v.IsUndefined() || v.IsNull()) {
      if (k.required) ThrowField(env, style.code, field, "is required");
      continue;
    }
    DeviceBuffer* b = DeviceBuffer::FromValue(env, v, field.c_str());
    b->RequireBytes(env, 0, field.c_str());
    out.*k.member = b;
  }
}

}  // namespace dsv4kv
