// Addon entry point: probe(), Context, DeviceBuffer, the planner bindings, and the online-MTP and compress
// registration hooks; in the bench build (DSV4KV_BENCH) also the benchmark entries (native/bench/bench.h).
#include "common.h"
#if DSV4KV_BENCH
#include "bench/bench.h"
#endif
#include "compress/compress.h"
#include "online_mtp/online_mtp.h"
#include "planner/planner_binding.h"

namespace {

// probe() -> { compiledWithCuda, deviceCount, device?: {name, sm, memoryBytes}, ok, reason, runtimeVersion?,
// driverVersion? }. Touches CUDA only when called (never at load); never throws for a missing driver / device.
Napi::Value Probe(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object r = Napi::Object::New(env);
#if DSV4KV_HAVE_CUDA
  r.Set("compiledWithCuda", true);
  r.Set("runtimeVersion", CUDART_VERSION);
  int drv = 0;
  if (cudaDriverGetVersion(&drv) == cudaSuccess) r.Set("driverVersion", drv);
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();  // clear the sticky-free error so later calls start clean
    r.Set("deviceCount", 0);
    r.Set("ok", false);
    const char* kind = (e == cudaErrorNoDevice)             ? "no CUDA device"
                       : (e == cudaErrorInsufficientDriver) ? "no usable NVIDIA driver"
                                                            : "CUDA unavailable";
    r.Set("reason", std::string(kind) + ": cudaGetDeviceCount failed: " + cudaGetErrorString(e) + " (" +
                        cudaGetErrorName(e) + " = " + std::to_string(static_cast<int>(e)) + ")");
    return r;
  }
  r.Set("deviceCount", count);
  if (count == 0) {
    r.Set("ok", false);
    r.Set("reason", "no CUDA device: cudaGetDeviceCount returned 0");
    return r;
  }
  cudaDeviceProp p{};
  e = cudaGetDeviceProperties(&p, 0);
  if (e != cudaSuccess) {
    r.Set("ok", false);
    r.Set("reason", std::string("cudaGetDeviceProperties(0) failed: ") + cudaGetErrorString(e));
    return r;
  }
  Napi::Object d = Napi::Object::New(env);
  d.Set("name", p.name);
  d.Set("sm", p.major * 10 + p.minor);
  d.Set("memoryBytes", static_cast<double>(p.totalGlobalMem));
  d.Set("multiProcessorCount", p.multiProcessorCount);
  r.Set("device", d);
  // The fatbinary carries sm_90 SASS and compute_90 PTX: anything below sm_90 cannot run it.
  if (p.major * 10 + p.minor < 90) {
    r.Set("ok", false);
    r.Set("reason", std::string("device 0 (") + p.name + ") is sm_" + std::to_string(p.major * 10 + p.minor) +
                        "; the addon was built for sm_90 and newer (set DSV4KV_CUDA_ARCH and rebuild)");
    return r;
  }
  r.Set("ok", true);
  r.Set("reason", "");
#else
  r.Set("compiledWithCuda", false);
  r.Set("deviceCount", 0);
  r.Set("ok", false);
  r.Set("reason", "addon was built without CUDA (nvcc not found at build time)");
#endif
  return r;
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("probe", Napi::Function::New<Probe>(env, "probe"));
  exports.Set("compiledWithCuda", Napi::Boolean::New(env, DSV4KV_HAVE_CUDA != 0));
  exports.Set("Context", dsv4kv::Context::Define(env));
  exports.Set("DeviceBuffer", dsv4kv::DeviceBuffer::Define(env));
  RegisterPlanner(env, exports);
  RegisterOnlineMtp(env, exports);
  RegisterCompress(env, exports);
#if DSV4KV_BENCH
  dsv4kv::bench::RegisterBench(env, exports);
#endif
  return exports;
}

}  // namespace

NODE_API_MODULE(dsv4kv_kernels, Init)
