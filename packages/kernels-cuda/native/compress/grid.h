// Host-side grid sizing and shape dispatch of the compress kernels (their launch: LaunchOn in pdl.cuh): a bounded grid of at most the blocks that fit on the
// device at once (every block loops over its items), from the SM count and each kernel's occupancy, both cached after
// the first query (neither is a stream operation, so a launch inside stream capture stays capturable).
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "compress/compress_kernels.cuh"
#include "pdl.cuh"

namespace dsv4kv {
namespace compress {

constexpr int kMaxDevices = 64;

inline int SmCount() {
  static std::atomic<int> cache[kMaxDevices];
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kMaxDevices) return 1;
  int n = cache[dev].load(std::memory_order_relaxed);
  if (n == 0) {
    if (cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || n < 1) n = 1;
    cache[dev].store(n, std::memory_order_relaxed);
  }
  return n;
}

// Resident blocks per SM of `Kernel` at `threads` threads (no dynamic shared memory), at least 1.
template <auto Kernel>
int BlocksPerSm(int threads) {
  static std::atomic<int> cache{0};
  int n = cache.load(std::memory_order_relaxed);
  if (n == 0) {
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, Kernel, threads, 0) != cudaSuccess || n < 1) n = 1;
    cache.store(n, std::memory_order_relaxed);
  }
  return n;
}

// min(items, resident capacity) work slots (blocks or warps), rounded down to a multiple of `slices` (at least
// `slices`): item k goes to slot k % slots, so a slot's items all have channel slice slot % slices (items are
// row * slices + slice) and a c4 kernel that stages ape stages that slice's once (pool.cuh). `slotsPerBlock` =
// warps per block for warp kernels, 1 for block kernels.
template <auto Kernel>
int32_t WorkSlots(int64_t items, int threads, int slotsPerBlock, int slices) {
  const int64_t capacity = static_cast<int64_t>(SmCount()) * BlocksPerSm<Kernel>(threads) * slotsPerBlock;
  const int64_t slots = std::min(items, capacity) / slices * slices;
  return static_cast<int32_t>(std::max<int64_t>(slices, slots));
}

// The template instance of a launch shape: fn(TypeTag<T>{}, IntTag<headDim>{}, IntTag<cr>{}) with T the state
// element type, for the values launch.cu has checked (ValidShape): one dispatch for every kernel file.
template <typename T>
struct TypeTag {
  using type = T;
};
template <int V>
using IntTag = std::integral_constant<int, V>;
template <typename Fn>
cudaError_t DispatchShape(int32_t stateType, int32_t headDim, int32_t cr, Fn&& fn) {
  const auto byCr = [&](auto t, auto hd) { return cr == 4 ? fn(t, hd, IntTag<4>{}) : fn(t, hd, IntTag<128>{}); };
  const auto byHd = [&](auto t) { return headDim == 128 ? byCr(t, IntTag<128>{}) : byCr(t, IntTag<512>{}); };
  return stateType == kF32 ? byHd(TypeTag<float>{}) : byHd(TypeTag<__nv_bfloat16>{});
}
// The ring kernels' launch for a shape: L::C4<T, headDim> for cr 4, L::C128<T, headDim> for cr 128 (decode.cu and
// prefill_compress.cu each define their L).
template <typename L, typename P>
cudaError_t DispatchRing(const P& p, cudaStream_t s) {
  return DispatchShape(p.stateType, p.headDim, p.cr, [&](auto t, auto hd, auto cr) {
    using T = typename decltype(t)::type;
    if constexpr (decltype(cr)::value == 4)
      return L::template C4<T, decltype(hd)::value>(p, s);
    else
      return L::template C128<T, decltype(hd)::value>(p, s);
  });
}

}  // namespace compress
}  // namespace dsv4kv
