// The one timing harness of the bench build (planner `bench`, onlineMtp.bench, compress.bench): CUDA events around
// `iters` launches back to back, or around one replay of a CUDA graph of them; every event, graph, graph exec and
// stream capture it creates is released or ended on every path, errors included, so the stream stays usable.
#pragma once

#include "common.h"

#if DSV4KV_HAVE_CUDA
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

}  // namespace bench
}  // namespace dsv4kv
#endif
