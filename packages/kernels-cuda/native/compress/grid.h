// Host-side grid sizing of the compress kernels: a bounded grid of at most the blocks that fit on the device at once
// (every block loops over its items), from the SM count and each kernel's occupancy, both cached after the first
// query (neither is a stream operation, so a launch inside stream capture stays capturable).
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

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

// min(items, resident capacity) work slots (blocks or warps), at least 1; `slotsPerBlock` = warps per block for warp
// kernels, 1 for block kernels.
template <auto Kernel>
int32_t WorkSlots(int64_t items, int threads, int slotsPerBlock) {
  const int64_t capacity = static_cast<int64_t>(SmCount()) * BlocksPerSm<Kernel>(threads) * slotsPerBlock;
  return static_cast<int32_t>(std::max<int64_t>(1, std::min(items, capacity)));
}

}  // namespace compress
}  // namespace dsv4kv
