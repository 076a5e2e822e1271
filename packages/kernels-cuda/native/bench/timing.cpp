// The timing harness (timing.h).
#include "bench/timing.h"

#if DSV4KV_HAVE_CUDA
#include <algorithm>
#include <utility>

namespace dsv4kv {
namespace bench {
namespace {

struct Events {
  cudaEvent_t start = nullptr, stop = nullptr;
  Events() = default;
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  ~Events() {
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
  }
};
struct Graph {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  ~Graph() {
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
  }
};
// A stream capture that ends on every path: a capture still open when the guard goes (a launch failed mid-capture)
// is ended and its partial graph destroyed.
class Capture {
 public:
  explicit Capture(cudaStream_t stream) : stream_(stream) {}
  Capture(const Capture&) = delete;
  Capture& operator=(const Capture&) = delete;
  cudaError_t Begin() {
    const cudaError_t e = cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal);
    open_ = e == cudaSuccess;
    return e;
  }
  cudaError_t End(cudaGraph_t* out) {
    open_ = false;
    return cudaStreamEndCapture(stream_, out);
  }
  ~Capture() {
    if (!open_) return;
    cudaGraph_t partial = nullptr;
    if (cudaStreamEndCapture(stream_, &partial) == cudaSuccess && partial) cudaGraphDestroy(partial);
    cudaGetLastError();  // the failed capture's error is the one already returned
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

cudaError_t EagerRound(const IndexedLaunch& launch, int64_t iters) {
  for (int64_t i = 0; i < iters; ++i) DSV4KV_BENCH_TRY(launch(i));
  return cudaSuccess;
}

// The round as a CUDA graph, instantiated and replayed `warmups` times.
cudaError_t BuildGraph(const IndexedLaunch& launch, cudaStream_t stream, const Rounds& r, Graph* g) {
  {
    Capture capture(stream);
    DSV4KV_BENCH_TRY(capture.Begin());
    DSV4KV_BENCH_TRY(EagerRound(launch, r.iters));  // captured, not run
    DSV4KV_BENCH_TRY(capture.End(&g->graph));
  }
  DSV4KV_BENCH_TRY(cudaGraphInstantiate(&g->exec, g->graph, 0));
  for (int64_t w = 0; w < r.graphWarmups; ++w) DSV4KV_BENCH_TRY(cudaGraphLaunch(g->exec, stream));
  return cudaStreamSynchronize(stream);
}

}  // namespace

cudaError_t TimeRounds(const IndexedLaunch& launch, cudaStream_t stream, const Rounds& rounds,
                       std::vector<double>* us) {
  Events ev;
  DSV4KV_BENCH_TRY(cudaEventCreate(&ev.start));
  DSV4KV_BENCH_TRY(cudaEventCreate(&ev.stop));
  Graph g;
  if (rounds.graph) DSV4KV_BENCH_TRY(BuildGraph(launch, stream, rounds, &g));
  us->clear();
  for (int64_t r = 0; r < rounds.reps; ++r) {
    DSV4KV_BENCH_TRY(cudaEventRecord(ev.start, stream));
    DSV4KV_BENCH_TRY(rounds.graph ? cudaGraphLaunch(g.exec, stream) : EagerRound(launch, rounds.iters));
    DSV4KV_BENCH_TRY(cudaEventRecord(ev.stop, stream));
    DSV4KV_BENCH_TRY(cudaEventSynchronize(ev.stop));
    float ms = 0.f;
    DSV4KV_BENCH_TRY(cudaEventElapsedTime(&ms, ev.start, ev.stop));
    us->push_back(1000.0 * ms / static_cast<double>(rounds.iters));
  }
  return cudaSuccess;
}

#undef DSV4KV_BENCH_TRY

Spread SpreadOf(std::vector<double> us) {
  std::sort(us.begin(), us.end());
  if (us.empty()) return {0, 0, 0};
  return {us[us.size() / 2], us.front(), us.back()};
}

double MidMedian(std::vector<double> us) {
  std::sort(us.begin(), us.end());
  const size_t n = us.size();
  return n == 0 ? 0.0 : (n % 2 ? us[n / 2] : 0.5 * (us[n / 2 - 1] + us[n / 2]));
}

cudaError_t TimeEagerAndGraph(const std::function<cudaError_t(cudaStream_t)>& launch, cudaStream_t stream,
                              int64_t warmup, int64_t reps, int64_t calls, EagerAndGraph* out) {
  const IndexedLaunch indexed = [&](int64_t) { return launch(stream); };
  for (int64_t i = 0; i < warmup; ++i) {
    const cudaError_t e = launch(stream);
    if (e != cudaSuccess) return e;
  }
  cudaError_t e = cudaStreamSynchronize(stream);
  std::vector<double> us;
  if (e == cudaSuccess) e = TimeRounds(indexed, stream, Rounds{calls, reps, false, 0}, &us);
  out->eager_us = MidMedian(us);
  const int64_t graphWarmups = std::max<int64_t>(1, warmup / calls);
  if (e == cudaSuccess) e = TimeRounds(indexed, stream, Rounds{calls, reps, true, graphWarmups}, &us);
  out->graph_us = MidMedian(us);
  return e;
}

}  // namespace bench
}  // namespace dsv4kv
#endif
