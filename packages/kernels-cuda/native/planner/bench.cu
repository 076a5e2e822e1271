// The planner's timing harness (the addon's `bench` entry point): CUDA-event timings of back-to-back launches and of
// a CUDA graph of them replayed. Every event, graph and graph exec it creates is released on every path, errors
// included (the guards below).
#include <cuda_runtime.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "planner/plan_launch.h"

namespace dsv4kv {
namespace {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0.0 : (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]));
}

struct EventGuard {
  cudaEvent_t event = nullptr;
  EventGuard() = default;
  EventGuard(const EventGuard&) = delete;
  EventGuard& operator=(const EventGuard&) = delete;
  ~EventGuard() {
    if (event) cudaEventDestroy(event);
  }
};
struct GraphGuard {
  cudaGraph_t graph = nullptr;
  GraphGuard() = default;
  GraphGuard(const GraphGuard&) = delete;
  GraphGuard& operator=(const GraphGuard&) = delete;
  ~GraphGuard() {
    if (graph) cudaGraphDestroy(graph);
  }
};
struct GraphExecGuard {
  cudaGraphExec_t exec = nullptr;
  GraphExecGuard() = default;
  GraphExecGuard(const GraphExecGuard&) = delete;
  GraphExecGuard& operator=(const GraphExecGuard&) = delete;
  ~GraphExecGuard() {
    if (exec) cudaGraphExecDestroy(exec);
  }
};
// A stream capture that ends on every path: End() hands the graph to `out`; a capture still open when the guard goes
// (a launch failed mid-capture) is ended and its partial graph destroyed, so the stream is usable again.
class CaptureGuard {
 public:
  explicit CaptureGuard(cudaStream_t stream) : stream_(stream) {}
  CaptureGuard(const CaptureGuard&) = delete;
  CaptureGuard& operator=(const CaptureGuard&) = delete;
  cudaError_t Begin() {
    const cudaError_t e = cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal);
    open_ = e == cudaSuccess;
    return e;
  }
  cudaError_t End(GraphGuard& out) {
    open_ = false;
    return cudaStreamEndCapture(stream_, &out.graph);
  }
  ~CaptureGuard() {
    if (!open_) return;
    cudaGraph_t partial = nullptr;
    if (cudaStreamEndCapture(stream_, &partial) == cudaSuccess && partial) cudaGraphDestroy(partial);
  }

 private:
  cudaStream_t stream_;
  bool open_ = false;
};

#define DSV4KV_BENCH_TRY(x)             \
  do {                                  \
    const cudaError_t e__ = (x);        \
    if (e__ != cudaSuccess) return e__; \
  } while (0)

// Median microseconds per call of `reps` timed rounds of `round` (one round = `calls` calls).
template <typename Round>
cudaError_t TimeRounds(cudaStream_t stream, const EventGuard& a, const EventGuard& b, int reps, int calls, Round round,
                       double* median_us) {
  std::vector<double> us;
  for (int r = 0; r < reps; ++r) {
    DSV4KV_BENCH_TRY(cudaEventRecord(a.event, stream));
    DSV4KV_BENCH_TRY(round());
    DSV4KV_BENCH_TRY(cudaEventRecord(b.event, stream));
    DSV4KV_BENCH_TRY(cudaEventSynchronize(b.event));
    float ms = 0;
    DSV4KV_BENCH_TRY(cudaEventElapsedTime(&ms, a.event, b.event));
    us.push_back(1000.0 * ms / calls);
  }
  *median_us = Median(std::move(us));
  return cudaSuccess;
}

}  // namespace

cudaError_t BenchLaunch(const std::function<cudaError_t(cudaStream_t)>& launch, cudaStream_t stream, int warmup,
                        int reps, int calls, BenchResult* out) {
  EventGuard a, b;
  DSV4KV_BENCH_TRY(cudaEventCreate(&a.event));
  DSV4KV_BENCH_TRY(cudaEventCreate(&b.event));
  auto eager_round = [&]() -> cudaError_t {
    for (int i = 0; i < calls; ++i) DSV4KV_BENCH_TRY(launch(stream));
    return cudaSuccess;
  };
  for (int i = 0; i < warmup; ++i) DSV4KV_BENCH_TRY(launch(stream));
  DSV4KV_BENCH_TRY(cudaStreamSynchronize(stream));
  double eager_us = 0, graph_us = 0;
  DSV4KV_BENCH_TRY(TimeRounds(stream, a, b, reps, calls, eager_round, &eager_us));

  GraphGuard graph;
  {
    CaptureGuard capture(stream);
    DSV4KV_BENCH_TRY(capture.Begin());
    DSV4KV_BENCH_TRY(eager_round());  // captured, not run
    DSV4KV_BENCH_TRY(capture.End(graph));
  }
  GraphExecGuard exec;
  DSV4KV_BENCH_TRY(cudaGraphInstantiate(&exec.exec, graph.graph, 0));
  auto graph_round = [&]() { return cudaGraphLaunch(exec.exec, stream); };
  for (int i = 0; i < std::max(1, warmup / calls); ++i) DSV4KV_BENCH_TRY(graph_round());
  DSV4KV_BENCH_TRY(cudaStreamSynchronize(stream));
  DSV4KV_BENCH_TRY(TimeRounds(stream, a, b, reps, calls, graph_round, &graph_us));
  out->eager_us = eager_us;
  out->graph_us = graph_us;
  return cudaSuccess;
}

#undef DSV4KV_BENCH_TRY

}  // namespace dsv4kv
