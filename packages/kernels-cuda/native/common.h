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

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#if defined(DSV4KV_HAVE_CUDA) && DSV4KV_HAVE_CUDA
#include <cuda_runtime.h>
#else
#undef DSV4KV_HAVE_CUDA
#define DSV4KV_HAVE_CUDA 0
#endif

namespace dsv4kv {

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

}  // namespace dsv4kv
