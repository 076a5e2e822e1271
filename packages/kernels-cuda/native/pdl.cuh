// Device helpers for programmatic dependent launch (PDL, sm_90), shared by the compress and online-MTP kernels: the
// wait for the previous grid, the trigger that lets the next grid launch, and an L2 prefetch, the one thing a kernel
// does before its wait with memory the previous grid may still be writing (docs/decisions.md D28). Device code only.
#pragma once

namespace dsv4kv {
namespace {

// The dependent waits for the whole primary grid's completion and memory flush; the primary lets the dependent grid
// launch. Both are no-ops in a launch with no programmatic edge, and compiled out below sm_90 (whose kernels the host
// never launches chained).
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

}  // namespace
}  // namespace dsv4kv
