// The one timing harness of the bench build (planner `bench`, onlineMtp.bench, compress.bench): CUDA events around
// `iters` launches back to back, or around one replay of a CUDA graph of them; every event, graph, graph exec and
// stream capture it creates is released or ended on every path, errors included, so the stream stays usable.
#pragma once

// CUDA only, no N-API: the anatomy programs (bench/anatomy/) are plain executables built with the same harness.
#if DSV4KV_HAVE_CUDA
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace dsv4kv {
namespace bench {

// Launch number i of a timed round (a benchmark cycles its buffer sets by i).
using IndexedLaunch = std::function<cudaError_t(int64_t i)>;

// What one benchmark times: `iters` launches per round, `reps` rounds; `graph`: the round is a CUDA graph of the
// launches (captured once) replayed, after `graphWarmups` replays; else the launches are enqueued eagerly.
struct Rounds {
  int64_t iters, reps;
  bool graph;
  int64_t graphWarmups;
};

// Microseconds per launch of every round, in round order (one sample per round).
cudaError_t TimeRounds(const IndexedLaunch& launch, cudaStream_t stream, const Rounds& rounds, std::vector<double>* us);

// The samples' order statistics: the upper median (the sorted sample at n / 2), the smallest and the largest.
struct Spread {
  double median, min, max;
};
Spread SpreadOf(std::vector<double> us);
// The median that averages the two middle samples of an even count (the planner bench's figure).
double MidMedian(std::vector<double> us);

// The planner bench's two figures (also the anatomy programs'): `warmup` eager launches, then `reps` rounds of
// `calls` launches back to back and as a CUDA graph of them replayed (max(1, warmup / calls) graph warmups), each
// the MidMedian microseconds per launch.
struct EagerAndGraph {
  double eager_us, graph_us;
};
cudaError_t TimeEagerAndGraph(const std::function<cudaError_t(cudaStream_t)>& launch, cudaStream_t stream,
                              int64_t warmup, int64_t reps, int64_t calls, EagerAndGraph* out);

}  // namespace bench
}  // namespace dsv4kv
#endif
