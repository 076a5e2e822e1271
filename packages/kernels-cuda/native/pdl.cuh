// Programmatic dependent launch (PDL, sm_90), shared by the compress and online-MTP kernels (docs/decisions.md D28):
// on the device the wait for the previous grid, the trigger that lets the next grid launch, and an L2 prefetch (before
// its wait a kernel only prefetches, and reads values that only aim prefetches); on the host the one launch helper,
// which chains a kernel only where every architecture in the binary has the wait.
#pragma once
#include <cuda_runtime.h>

#include <utility>

namespace dsv4kv {
namespace {

// The dependent waits for the whole primary grid's completion and memory flush; the primary lets the dependent grid
// launch. Both are no-ops in a launch with no programmatic edge, and compiled out below sm_90: LaunchOn never chains a
// binary that holds such code (kPdl).
__device__ __forceinline__ void PdlWait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void PdlLaunchDependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Brings the line of `p` into L2 without reading it into registers. It changes no value, so it is safe before
// PdlWait on memory the previous kernel may still be writing: a later load reads L2, which every write reaches. `p`
// must lie inside an allocation (the callers bound-check it).
__device__ __forceinline__ void PrefetchL2(const void* p) {
#ifdef __CUDA_ARCH__
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
#endif
}

// Whether every architecture the binary is compiled for has griddepcontrol (sm_90): a kernel whose wait is compiled
// out must never be launched early.
#if defined(__CUDA_ARCH_LIST__)
constexpr int kArchList[] = {__CUDA_ARCH_LIST__};
constexpr bool MinArchAtLeast(int arch, int k = 0) {
  return k == static_cast<int>(sizeof(kArchList) / sizeof(kArchList[0]))
             ? true
             : kArchList[k] >= arch && MinArchAtLeast(arch, k + 1);
}
constexpr bool kPdl = MinArchAtLeast(900);
#else
constexpr bool kPdl = false;
#endif

// Launches `kernel` on `s`. `chained`: as a programmatic dependent of the previous kernel (it may start before that one
// ends; it executes griddepcontrol.wait before touching anything that kernel may write), where kPdl holds and the
// runtime accepts the attribute; otherwise, and with `chained` false, in plain stream order (the kernel's wait is then a
// no-op, so a kernel written for a chained launch is correct in a plain one).
template <typename... P, typename... A>
cudaError_t LaunchOn(void (*kernel)(P...), dim3 grid, dim3 block, cudaStream_t s, bool chained, A&&... args) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.stream = s;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = chained && kPdl ? 1 : 0;
  const cudaError_t e = cudaLaunchKernelEx(&cfg, kernel, args...);
  if (e != cudaErrorNotSupported || cfg.numAttrs == 0) return e;
  (void)cudaGetLastError();  // a runtime that refuses the attribute: launch in plain stream order
  cfg.numAttrs = 0;
  return cudaLaunchKernelEx(&cfg, kernel, std::forward<A>(args)...);
}

}  // namespace
}  // namespace dsv4kv
