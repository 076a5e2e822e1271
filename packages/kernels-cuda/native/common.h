// dsv4-kv kernels-cuda: shared native helpers (errors, device buffers, contexts/streams).
//
// HOW TO USE (for every binding file in this addon, e.g. native/online_mtp/binding.cpp):
//   #include "common.h"
//   * Compile-time switch: DSV4KV_HAVE_CUDA is defined (=1) only in the CUDA build. In the CPU-only build no CUDA
//     header exists: guard every CUDA call with `#if DSV4KV_HAVE_CUDA` and throw dsv4kv::NoCuda(env, "what") in the
//     #else branch so both builds export the same functions.
//   * Errors: DSV4KV_CUDA_TRY(env, cudaMemcpyAsync(...)) throws a JS Error (code "ERR_DSV4KV_CUDA") whose message
//     names the call and carries the CUDA message and number, e.g.
//       "cudaMemcpyAsync(...) failed: an illegal memory access was encountered (cudaErrorIllegalAddress = 700)".
//     Use dsv4kv::ThrowTyped(env, "ERR_...", msg) for validation errors (sets err.code). Never abort(); never let a
//     C++ exception other than Napi::Error escape (NAPI_CPP_EXCEPTIONS is on, so `throw Napi::Error` is fine).
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

// Throw a JS Error with err.code = code.
[[noreturn]] void ThrowTyped(Napi::Env env, const char* code, const std::string& message);
// Throw the "built without CUDA" error for a CUDA-only entry point in the CPU build.
[[noreturn]] void NoCuda(Napi::Env env, const char* what);

#if DSV4KV_HAVE_CUDA
[[noreturn]] void ThrowCuda(Napi::Env env, const char* call, cudaError_t err);
#define DSV4KV_CUDA_TRY(env, expr)                     \
  do {                                                 \
    cudaError_t dsv4kv_err__ = (expr);                 \
    if (dsv4kv_err__ != cudaSuccess) {                 \
      ::dsv4kv::ThrowCuda((env), #expr, dsv4kv_err__); \
    }                                                  \
  } while (0)
#endif

// A device (plus its stream) that kernels are launched on. JS: new Context(deviceOrdinal = 0); ctx.synchronize();
// ctx.destroy(). The default context (ordinal 0) is created lazily by the bindings when none is passed.
class Context : public Napi::ObjectWrap<Context> {
 public:
  static Napi::Function Define(Napi::Env env);
  explicit Context(const Napi::CallbackInfo& info);
  ~Context() override;
  static Context* FromValue(Napi::Env env, Napi::Value v, const char* argName);
  int device() const { return device_; }
  // Makes the context's device current for this thread (throws on failure).
  void Activate(Napi::Env env) const;
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
class DeviceBuffer : public Napi::ObjectWrap<DeviceBuffer> {
 public:
  static Napi::Function Define(Napi::Env env);
  explicit DeviceBuffer(const Napi::CallbackInfo& info);
  ~DeviceBuffer() override;
  static DeviceBuffer* FromValue(Napi::Env env, Napi::Value v, const char* argName);
  void* data() const { return ptr_; }
  size_t bytes() const { return bytes_; }
  int device() const { return device_; }
  // Throws ERR_DSV4KV_BUFFER unless the buffer is live and holds at least `need` bytes.
  void RequireBytes(Napi::Env env, size_t need, const char* argName) const;

 private:
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

// Host view helpers: the bytes of a TypedArray / DataView / Buffer argument.
struct HostView {
  uint8_t* data = nullptr;
  size_t bytes = 0;
};
HostView HostViewOf(Napi::Env env, Napi::Value v, const char* argName);

}  // namespace dsv4kv
