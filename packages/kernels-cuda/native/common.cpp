// Shared helpers: see the note at the top of common.h.
#include "common.h"

#include <cstring>

namespace dsv4kv {

void ThrowTyped(Napi::Env env, const char* code, const std::string& message) {
  Napi::Error e = Napi::Error::New(env, message);
  e.Set("code", Napi::String::New(env, code));
  throw e;
}

void NoCuda(Napi::Env env, const char* what) {
  ThrowTyped(env, "ERR_DSV4KV_NO_CUDA",
             std::string(what) + ": the addon was built without CUDA (nvcc not found at build time); " +
                 "rebuild with CUDACXX=/usr/local/cuda/bin/nvcc pnpm --filter @dsv4-kv/kernels-cuda build");
}

#if DSV4KV_HAVE_CUDA
void ThrowCuda(Napi::Env env, const char* call, cudaError_t err) {
  std::string msg = std::string(call) + " failed: " + cudaGetErrorString(err) + " (" + cudaGetErrorName(err) + " = " +
                    std::to_string(static_cast<int>(err)) + ")";
  Napi::Error e = Napi::Error::New(env, msg);
  e.Set("code", Napi::String::New(env, "ERR_DSV4KV_CUDA"));
  e.Set("cudaError", Napi::Number::New(env, static_cast<int>(err)));
  e.Set("call", Napi::String::New(env, call));
  throw e;
}
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
    ThrowTyped(env, "ERR_INVALID_ARG_TYPE", std::string(argName) + " must be a TypedArray, DataView or ArrayBuffer");
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

Context::Context(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Context>(info) {
  Napi::Env env = info.Env();
  int dev = 0;
  if (info.Length() > 0 && !info[0].IsUndefined()) {
    if (!info[0].IsNumber()) ThrowTyped(env, "ERR_INVALID_ARG_TYPE", "Context(device): device must be an integer");
    double d = info[0].As<Napi::Number>().DoubleValue();
    if (!(d >= 0 && d <= 1024 && d == static_cast<int>(d)))
      ThrowTyped(env, "ERR_OUT_OF_RANGE", "Context(device): device must be a non-negative integer");
    dev = static_cast<int>(d);
  }
  device_ = dev;
#if DSV4KV_HAVE_CUDA
  int count = 0;
  DSV4KV_CUDA_TRY(env, cudaGetDeviceCount(&count));
  if (dev >= count)
    ThrowTyped(
        env, "ERR_OUT_OF_RANGE",
        "Context(device): device " + std::to_string(dev) + " does not exist (" + std::to_string(count) + " device(s))");
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

Context* Context::FromValue(Napi::Env env, Napi::Value v, const char* argName) {
  if (!v.IsObject()) ThrowTyped(env, "ERR_INVALID_ARG_TYPE", std::string(argName) + " must be a Context");
  Napi::Object o = v.As<Napi::Object>();
  Context* c = nullptr;
  // InstanceOf would need the constructor; unwrap defensively instead (napi_unwrap fails on foreign objects).
  void* raw = nullptr;
  if (napi_unwrap(env, o, &raw) != napi_ok || raw == nullptr)
    ThrowTyped(env, "ERR_INVALID_ARG_TYPE", std::string(argName) + " must be a Context");
  c = Napi::ObjectWrap<Context>::Unwrap(o);
  if (!c || !c->alive_) ThrowTyped(env, "ERR_DSV4KV_CONTEXT", std::string(argName) + " was destroyed");
  return c;
}

void Context::Activate(Napi::Env env) const {
#if DSV4KV_HAVE_CUDA
  DSV4KV_CUDA_TRY(env, cudaSetDevice(device_));
#else
  NoCuda(env, "Context.activate");
#endif
}

void* Context::Workspace(Napi::Env env, size_t bytes) {
  if (!alive_) ThrowTyped(env, "ERR_DSV4KV_CONTEXT", "Context was destroyed");
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
  if (!alive_) ThrowTyped(env, "ERR_DSV4KV_CONTEXT", "Context was destroyed");
#if DSV4KV_HAVE_CUDA
  DSV4KV_CUDA_TRY(env, cudaSetDevice(device_));
  DSV4KV_CUDA_TRY(env, cudaStreamSynchronize(stream_));
#endif
  return env.Undefined();
}

Napi::Value Context::Destroy(const Napi::CallbackInfo& info) {
  const int pending = pendingAsync();
  if (pending > 0)
    ThrowTyped(info.Env(), "ERR_DSV4KV_CONTEXT",
               "Context.destroy(): " + std::to_string(pending) +
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

DeviceBuffer::DeviceBuffer(const Napi::CallbackInfo& info) : Napi::ObjectWrap<DeviceBuffer>(info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber())
    ThrowTyped(env, "ERR_INVALID_ARG_TYPE", "DeviceBuffer(byteLength): byteLength must be a number");
  double n = info[0].As<Napi::Number>().DoubleValue();
  // 2^40 bytes: far above any GPU's memory; rejects negative, NaN, fractional and absurd sizes up front.
  if (!(n >= 0 && n <= 1099511627776.0 && n == static_cast<double>(static_cast<uint64_t>(n))))
    ThrowTyped(env, "ERR_OUT_OF_RANGE", "DeviceBuffer(byteLength): byteLength must be an integer in [0, 2^40]");
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

DeviceBuffer* DeviceBuffer::FromValue(Napi::Env env, Napi::Value v, const char* argName) {
  if (!v.IsObject()) ThrowTyped(env, "ERR_INVALID_ARG_TYPE", std::string(argName) + " must be a DeviceBuffer");
  void* raw = nullptr;
  if (napi_unwrap(env, v, &raw) != napi_ok || raw == nullptr)
    ThrowTyped(env, "ERR_INVALID_ARG_TYPE", std::string(argName) + " must be a DeviceBuffer");
  return Napi::ObjectWrap<DeviceBuffer>::Unwrap(v.As<Napi::Object>());
}

void DeviceBuffer::RequireBytes(Napi::Env env, size_t need, const char* argName) const {
  if (bytes_ > 0 && ptr_ == nullptr)
    ThrowTyped(env, "ERR_DSV4KV_BUFFER", std::string(argName) + ": DeviceBuffer was freed");
  if (bytes_ < need)
    ThrowTyped(env, "ERR_DSV4KV_BUFFER",
               std::string(argName) + ": DeviceBuffer holds " + std::to_string(bytes_) + " bytes, needs " +
                   std::to_string(need));
}

static size_t OffsetArg(Napi::Env env, const Napi::CallbackInfo& info, size_t i, const char* what) {
  if (info.Length() <= i || info[i].IsUndefined()) return 0;
  if (!info[i].IsNumber()) ThrowTyped(env, "ERR_INVALID_ARG_TYPE", std::string(what) + " must be a number");
  double d = info[i].As<Napi::Number>().DoubleValue();
  if (!(d >= 0 && d == static_cast<double>(static_cast<uint64_t>(d))))
    ThrowTyped(env, "ERR_OUT_OF_RANGE", std::string(what) + " must be a non-negative integer");
  return static_cast<size_t>(d);
}

Napi::Value DeviceBuffer::Upload(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  HostView h = HostViewOf(env, info[0], "upload(view)");
  size_t off = OffsetArg(env, info, 1, "upload(view, byteOffset)");
  if (bytes_ > 0 && !ptr_) ThrowTyped(env, "ERR_DSV4KV_BUFFER", "upload: DeviceBuffer was freed");
  if (off > bytes_ || h.bytes > bytes_ - off)
    ThrowTyped(env, "ERR_OUT_OF_RANGE",
               "upload: " + std::to_string(h.bytes) + " bytes at offset " + std::to_string(off) +
                   " do not fit a buffer of " + std::to_string(bytes_));
#if DSV4KV_HAVE_CUDA
  if (h.bytes) {
    DSV4KV_CUDA_TRY(env, cudaSetDevice(device_));
    // Contexts launch on non-blocking streams, which do not order with the legacy stream cudaMemcpy uses, and a
    // pageable H2D cudaMemcpy may return before its DMA lands. Quiesce the device on both sides so an upload
    // never races a kernel still reading the buffer, nor a kernel launched right after it.
    DSV4KV_CUDA_TRY(env, cudaDeviceSynchronize());
    DSV4KV_CUDA_TRY(env, cudaMemcpy(static_cast<uint8_t*>(ptr_) + off, h.data, h.bytes, cudaMemcpyHostToDevice));
    DSV4KV_CUDA_TRY(env, cudaDeviceSynchronize());
  }
#endif
  return info.This();
}

Napi::Value DeviceBuffer::Download(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  HostView h = HostViewOf(env, info[0], "download(view)");
  size_t off = OffsetArg(env, info, 1, "download(view, byteOffset)");
  if (bytes_ > 0 && !ptr_) ThrowTyped(env, "ERR_DSV4KV_BUFFER", "download: DeviceBuffer was freed");
  if (off > bytes_ || h.bytes > bytes_ - off)
    ThrowTyped(env, "ERR_OUT_OF_RANGE",
               "download: " + std::to_string(h.bytes) + " bytes at offset " + std::to_string(off) +
                   " exceed a buffer of " + std::to_string(bytes_));
#if DSV4KV_HAVE_CUDA
  if (h.bytes) {
    DSV4KV_CUDA_TRY(env, cudaSetDevice(device_));
    // Wait for kernels on every stream (contexts use non-blocking streams) before reading the buffer back.
    DSV4KV_CUDA_TRY(env, cudaDeviceSynchronize());
    DSV4KV_CUDA_TRY(env, cudaMemcpy(h.data, static_cast<uint8_t*>(ptr_) + off, h.bytes, cudaMemcpyDeviceToHost));
  }
#endif
  return info[0];
}

Napi::Value DeviceBuffer::Fill(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int byte = 0;
  if (info.Length() > 0 && info[0].IsNumber()) byte = info[0].As<Napi::Number>().Int32Value() & 0xff;
  if (bytes_ > 0 && !ptr_) ThrowTyped(env, "ERR_DSV4KV_BUFFER", "fill: DeviceBuffer was freed");
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
