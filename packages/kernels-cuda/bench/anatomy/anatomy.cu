// Anatomy of the small planner kernels and of writePrefix's byte mix: variant timings that each leave one cost out,
// so differences locate the time (results: docs/benchmarks.md, docs/decisions.md D17). Not part of the addon; built
// and run by bench/anatomy/run.sh or compare.sh (nvcc here, the binary runs on the GPU machine). `--ncu` only
// launches the kernels of interest a few times each, for Nsight Compute (ANATOMY_NCU_SMALL=1: only the four small
// planner kernels, as compare.sh profiles them). The calibration kernels (DecodeMin*) are upstream's shapes written
// from the spec, for same-run comparison.
// The planner kernels, one TU: the split sources, or a BEFORE revision's single plan_kernels.cu.
#if __has_include("planner/plan_kernels.cu")
#include "planner/plan_kernels.cu"
#else
#include "planner/prefill_small.cu"
#include "planner/prefill_general.cu"
#include "planner/decode.cu"
#include "planner/launch.cu"
#endif
// The bench build's harness and kernels (native/bench/), in this one translation unit.
#include "bench/bench_kernels.cu"
#include "bench/timing.cpp"
#include "online_mtp/online_mtp_kernels.cu"
#if DSV4KV_BENCH_VARIANTS
#include "bench/bench_variants.cu"
#endif
#include "bench_common.cuh"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace dsv4kv {
namespace anatomy {

// ---- decode variants (c128 request ring / c4 paged identity), same function as DecodeKernel ----------------------
// kStatus = false: no ballot, no status record (only the plan rows).
template <int CR, int MODE, bool kStatus>
__global__ void __launch_bounds__(256) DecodeVar(const DecodeParams p) {
  const int lane = threadIdx.x & 31;
  const int32_t tid = blockIdx.x * blockDim.x + threadIdx.x;
  const int32_t threads = gridDim.x * blockDim.x;
  LaneErr err{0, 0, 0, 0};
  for (int32_t i = tid; i < p.batch; i += threads) {
    const int64_t s64 = LoadLen<int32_t>(p.seq_lens, i);
    const int64_t rid64 = p.rids ? Ld64(p.rids + i) : i;
    const int32_t s = static_cast<int32_t>(s64);
    uint4 out = make_uint4(static_cast<uint32_t>(s), 0xffffffffu, 0xffffffffu, 0xffffffffu);
    if (s < 1) {
      Note(err, kErrDecodeSeq, i, s, 0);
    } else {
      LaneErr rerr{0, 0, 0, 0};
      const int32_t rid = CheckRid<MODE>(p.slot, rid64, i, rerr);
      if (rerr.code != kErrNone) {
        Note(err, rerr.code, rerr.index, rerr.value, rerr.aux);
      } else {
        const int32_t p1 = s - 1, p0 = max(p1 - CR, 0);
        const int32_t w = Slot<MODE>(p.slot, rid, i, p1, err);
        const int32_t r0 = Slot<MODE>(p.slot, rid, i, p0, err) / CR;
        out = make_uint4(static_cast<uint32_t>(s), static_cast<uint32_t>(w), static_cast<uint32_t>(r0),
                         static_cast<uint32_t>(w / CR));
      }
    }
    reinterpret_cast<uint4*>(p.plan_d)[i] = out;
  }
  if constexpr (kStatus) {
    const LaneErr werr = WarpErr(err);
    if (lane == 0) WriteRecord(p.status + (tid >> 5), werr, 0, 0, threads >> 5);
  } else {
    if (err.code != kErrNone) p.status->code = err.code;  // keep the checks live
  }
}

// Compact parameters (56 bytes: one constant-cache line) for the request ring.
struct DecodeLite {
  uint4* out;
  PlanStatus* status;
  const int32_t* seq;
  const int64_t* rids;
  int32_t batch;
  int32_t ring;
  FastDiv ring_div;
};
template <int CR, bool kStatus>
__global__ void __launch_bounds__(256) DecodeLiteKernel(const DecodeLite p) {
  const int lane = threadIdx.x & 31;
  const int32_t tid = blockIdx.x * blockDim.x + threadIdx.x;
  const int32_t threads = gridDim.x * blockDim.x;
  LaneErr err{0, 0, 0, 0};
  for (int32_t i = tid; i < p.batch; i += threads) {
    const int32_t s = Ld32(p.seq + i);
    const int64_t rid64 = p.rids ? Ld64(p.rids + i) : i;
    uint4 out = make_uint4(static_cast<uint32_t>(s), 0xffffffffu, 0xffffffffu, 0xffffffffu);
    if (s < 1) {
      Note(err, kErrDecodeSeq, i, s, 0);
    } else if (rid64 < 0 || rid64 > INT_MAX) {
      Note(err, kErrRidNeg, i, rid64, 0);
    } else {
      const int32_t rid = static_cast<int32_t>(rid64);
      const int32_t p1 = s - 1, p0 = max(p1 - CR, 0);
      const int64_t w64 = static_cast<int64_t>(rid) * p.ring + Rem(p.ring_div, p1);
      const int64_t r64 = static_cast<int64_t>(rid) * p.ring + Rem(p.ring_div, p0);
      if (w64 > INT_MAX) Note(err, kErrSlotOverflow, i, rid, p1);
      const int32_t w = w64 > INT_MAX ? 0 : static_cast<int32_t>(w64);
      const int32_t r0 = r64 > INT_MAX ? 0 : static_cast<int32_t>(r64);
      out = make_uint4(static_cast<uint32_t>(s), static_cast<uint32_t>(w), static_cast<uint32_t>(r0 / CR),
                       static_cast<uint32_t>(w / CR));
    }
    p.out[i] = out;
  }
  if constexpr (kStatus) {
    const LaneErr werr = WarpErr(err);
    if (lane == 0) WriteRecord(p.status + (tid >> 5), werr, 0, 0, threads >> 5);
  } else {
    if (err.code != kErrNone) p.status->code = err.code;
  }
}

// Upstream's shape (docs/reference/planner.md §6), written here: one thread per request, 256-thread blocks, no checks,
// no status.
__global__ void __launch_bounds__(256)
    DecodeMinKernel(uint4* out, const int64_t* seq, const int64_t* rids, int32_t batch, int32_t cr, int32_t ring) {
  const int32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= batch) return;
  const int64_t s = seq[i], rid = rids[i];
  const int64_t p1 = s - 1, p0 = p1 - cr > 0 ? p1 - cr : 0;
  const int32_t w = static_cast<int32_t>(rid * ring + p1 % ring);
  const int32_t r0 = static_cast<int32_t>(rid * ring + p0 % ring);
  out[i] = make_uint4(static_cast<uint32_t>(s), static_cast<uint32_t>(w), static_cast<uint32_t>(r0 / cr),
                      static_cast<uint32_t>(w / cr));
}

// Upstream's shape with int32 arithmetic (int64 inputs narrowed, hardware-free `%`), no checks, no status.
__global__ void __launch_bounds__(256)
    DecodeMin32Kernel(uint4* out, const int64_t* seq, const int64_t* rids, int32_t batch, int32_t cr, int32_t ring) {
  const int32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= batch) return;
  const int32_t s = static_cast<int32_t>(seq[i]), rid = static_cast<int32_t>(rids[i]);
  const int32_t p1 = s - 1, p0 = max(p1 - cr, 0);
  const int32_t w = rid * ring + p1 % ring;
  const int32_t r0 = rid * ring + p0 % ring;
  out[i] = make_uint4(static_cast<uint32_t>(s), static_cast<uint32_t>(w), static_cast<uint32_t>(r0 / cr),
                      static_cast<uint32_t>(w / cr));
}

// Upstream's shape for the paged c4 decode (docs/reference/planner.md §6): one thread per request, int64 S and pool
// index, both table reads of each position, int32 slot arithmetic with `/` and `%`, no checks, no status.
__global__ void __launch_bounds__(256)
    DecodeMinPagedKernel(uint4* out, const int64_t* seq, const int64_t* rids, const int32_t* r2t, const int32_t* f2s,
                         int32_t batch, int64_t stride, int32_t ring, int32_t sps) {
  const int32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= batch) return;
  const int64_t s = seq[i], rid = rids[i];
  const int64_t p1 = s - 1, p0 = p1 - 4 > 0 ? p1 - 4 : 0;
  const int32_t l1 = f2s[r2t[rid * stride + p1]], l0 = f2s[r2t[rid * stride + p0]];
  const int32_t w = (l1 / sps) * ring + l1 % ring, r0 = (l0 / sps) * ring + l0 % ring;
  out[i] = make_uint4(static_cast<uint32_t>(s), static_cast<uint32_t>(w), static_cast<uint32_t>(r0 / 4),
                      static_cast<uint32_t>(w / 4));
}

// Where do consecutive single-block launches run?
__global__ void SmidKernel(int32_t* trace, int32_t* counter) {
  unsigned smid;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  const int32_t k = atomicAdd(counter, 1);
  if (k < 4096) trace[k] = static_cast<int32_t>(smid);
}

// ---- L2-resident byte-mix kernels (writePrefix batch 256 D 8: reads R bytes, writes W bytes) ----------------------
__global__ void __launch_bounds__(512)
    MixKernel(const float4* __restrict__ src, int64_t n_read, float4* __restrict__ dst, int64_t n_write) {
  const int64_t tid = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  const int64_t threads = gridDim.x * static_cast<int64_t>(blockDim.x);
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
  for (int64_t i = tid; i < n_read; i += threads) {
    const float4 v = __ldg(src + i);
    acc.x += v.x;
    acc.y += v.y;
    acc.z += v.z;
    acc.w += v.w;
  }
  for (int64_t i = tid; i < n_write; i += threads) dst[i] = acc;
}
// Same bytes, 4-byte scalar accesses (writePrefix's scalar kernel's access width).
__global__ void __launch_bounds__(512)
    MixScalarKernel(const float* __restrict__ src, int64_t n_read, float* __restrict__ dst, int64_t n_write) {
  const int64_t tid = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  const int64_t threads = gridDim.x * static_cast<int64_t>(blockDim.x);
  float acc = 0.f;
  for (int64_t i = tid; i < n_read; i += threads) acc += __ldg(src + i);
  for (int64_t i = tid; i < n_write; i += threads) dst[i] = acc;
}

struct Row {
  std::string name;
  bench::EagerAndGraph r;
};
std::vector<Row> g_rows;

void Time(const std::string& name, const std::function<cudaError_t(cudaStream_t)>& f, cudaStream_t st) {
  bench::EagerAndGraph r{};
  CK(bench::TimeEagerAndGraph(f, st, 200, 30, 100, &r));
  g_rows.push_back({name, r});
  std::printf("%-64s eager %7.3f  graph %7.3f\n", name.c_str(), r.eager_us, r.graph_us);
  std::fflush(stdout);
}

#ifdef ANATOMY_BEFORE
// Revisions before DeriveSlot: only max_rid is derived.
inline void DeriveSlot(SlotParams& s) { s.max_rid = MaxFastRid(s.cr, s.ring, s.legacy, s.req_style); }
#endif

SlotParams IdentitySlot(int cr, int ring, int sps) {
  SlotParams s{};
  s.cr = cr;
  s.ring = ring;
  s.sps = sps;
  s.req_style = cr == 128 ? 1 : 0;
  s.legacy = 0;
  s.ring_div = MakeFastDiv(ring);
  s.sps_div = MakeFastDiv(sps);
  s.r2t = nullptr;
  s.r2t_stride = 65536;
  s.r2t_rows = INT_MAX / 65536;
  s.f2s = nullptr;
  s.f2s_len = 0;
  DeriveSlot(s);
  return s;
}

namespace om = online_mtp;

constexpr int kMaxBatch = 1024;
// Identity-valued req_to_token [1024, 2048] and full_to_state [2M] tables: the paged path's real reads.
constexpr int64_t kTabStride = 2048, kTabRows = 1024, kTabLen = kTabStride * kTabRows;
// writePrefix batch 256 D 8 (online-mtp-controller's bench/bench.mjs inputs).
constexpr int kWpBatch = 256, kWpVerify = 8, kWpSlots = kWpBatch + 1, kWpBankRows = kWpSlots + 2;

// What every measured group reads: the stream, the SM count and the device inputs, set up once.
struct Harness {
  cudaStream_t st;
  int sms = 0;
  int32_t *d_seq32, *d_ext32, *d_pseq;
  int64_t *d_seq64, *d_rids;
  uint4* d_out;
  uint32_t *d_pc, *d_pw;
  PlanStatus* d_status;
  int32_t *d_r2t, *d_f2s;
  float *d_kv, *d_ape;
  void* d_state;
  int32_t *d_wseq, *d_widx;
  int64_t readBytes = 0, writeBytes = 0;  // the byte mix of writePrefix b256 D8 fp32
  float *d_src, *d_dst;
};

// Shared planner buffers and the decode / prefill inputs.
void SetupPlanner(Harness& h) {
  const int maxB = kMaxBatch;
  CK(cudaMalloc(&h.d_seq32, maxB * 4));
  CK(cudaMalloc(&h.d_ext32, maxB * 4));
  CK(cudaMalloc(&h.d_seq64, maxB * 8));
  CK(cudaMalloc(&h.d_rids, maxB * 8));
  CK(cudaMalloc(&h.d_out, maxB * 16));
  CK(cudaMalloc(&h.d_pc, 65536 * 16));
  CK(cudaMalloc(&h.d_pw, 65536 * 8));
  CK(cudaMalloc(&h.d_status, kStatusBytes));
  std::vector<int32_t> seq(maxB), ext(maxB, 6);
  std::vector<int64_t> seq64(maxB), rids(maxB);
  for (int i = 0; i < maxB; ++i) {
    seq[i] = 1000 + i;
    seq64[i] = seq[i];
    rids[i] = i;
  }
  CK(cudaMemcpy(h.d_seq32, seq.data(), maxB * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(h.d_seq64, seq64.data(), maxB * 8, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(h.d_rids, rids.data(), maxB * 8, cudaMemcpyHostToDevice));
  // Prefill uniform inputs (as planner's bench/gpu-kernels.bench.mjs: S = 512 + i%7 + E, E = 6).
  std::vector<int32_t> pseq(maxB);
  for (int i = 0; i < maxB; ++i) pseq[i] = 512 + (i % 7) + 6;
  CK(cudaMalloc(&h.d_pseq, maxB * 4));
  CK(cudaMemcpy(h.d_pseq, pseq.data(), maxB * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(h.d_ext32, ext.data(), maxB * 4, cudaMemcpyHostToDevice));
}

void SetupTables(Harness& h) {
  CK(cudaMalloc(&h.d_r2t, kTabLen * 4));
  CK(cudaMalloc(&h.d_f2s, kTabLen * 4));
  std::vector<int32_t> t(kTabLen);
  for (int64_t i = 0; i < kTabLen; ++i) t[i] = static_cast<int32_t>(i);
  CK(cudaMemcpy(h.d_r2t, t.data(), kTabLen * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(h.d_f2s, t.data(), kTabLen * 4, cudaMemcpyHostToDevice));
}

void SetupWritePrefix(Harness& h) {
  const int wB = kWpBatch, wD = kWpVerify;
  CK(cudaMalloc(&h.d_kv, static_cast<size_t>(wB) * wD * om::kKvScoreCols * 4));
  CK(cudaMalloc(&h.d_ape, static_cast<size_t>(om::kChunk) * om::kHeadDim * 4));
  const int64_t stateRows = static_cast<int64_t>(kWpBankRows) * (wD + 1);
  CK(cudaMalloc(&h.d_state, stateRows * om::kRowElems * 4));
  CK(cudaMalloc(&h.d_wseq, wB * 4));
  CK(cudaMalloc(&h.d_widx, wB * 4));
  std::vector<int32_t> s(wB), r(wB);
  const int extra[7] = {0, 1, 2, 63, 120, 126, 127};
  for (int i = 0; i < wB; ++i) {
    s[i] = 1024 + extra[i % 7];
    r[i] = i;
  }
  CK(cudaMemcpy(h.d_wseq, s.data(), wB * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(h.d_widx, r.data(), wB * 4, cudaMemcpyHostToDevice));
  CK(bench::LaunchFillRandom(h.d_kv, static_cast<int64_t>(wB) * wD * om::kKvScoreCols, 1, 2.f, -1.f, h.st));
  CK(bench::LaunchFillRandom(h.d_ape, om::kChunk * om::kHeadDim, 2, 0.5f, -0.25f, h.st));
  CK(bench::LaunchFillStateRandom(h.d_state, stateRows, om::kF32, 3, h.st));
  CK(cudaStreamSynchronize(h.st));
}

// Byte mix of writePrefix b256 D8 fp32: reads = 6/7 of bank-0 rows + D input rows; writes = D bank rows.
void SetupMix(Harness& h) {
  const int wB = kWpBatch, wD = kWpVerify;
  h.readBytes =
      static_cast<int64_t>(wB) * wD * om::kKvScoreCols * 4 + static_cast<int64_t>(wB) * 6 / 7 * om::kRowElems * 4;
  h.writeBytes = static_cast<int64_t>(wB) * wD * om::kRowElems * 4;
  CK(cudaMalloc(&h.d_src, h.readBytes + h.writeBytes));
  CK(cudaMalloc(&h.d_dst, h.readBytes + h.writeBytes));
  CK(bench::LaunchFillRandom(h.d_src, (h.readBytes + h.writeBytes) / 4, 4, 1.f, 0.f, h.st));
  CK(cudaStreamSynchronize(h.st));
}

SlotParams WithTables(const Harness& h, SlotParams sp) {
  sp.r2t = h.d_r2t;
  sp.r2t_stride = kTabStride;
  sp.r2t_rows = kTabRows;
  sp.f2s = h.d_f2s;
  sp.f2s_len = kTabLen;
  DeriveSlot(sp);
  return sp;
}

DecodeParams DecodeParamsFor(const Harness& h, int cr, int ring, int B) {
  DecodeParams p{};
  p.plan_d = reinterpret_cast<uint32_t*>(h.d_out);
  p.status = h.d_status;
  p.seq_lens = h.d_seq32;
  p.rids = h.d_rids;  // as gpu-kernels.bench.mjs (and upstream): pool indices read from memory
  p.lens64 = 0;
  p.batch = B;
  p.slot = IdentitySlot(cr, ring, 256);
  return p;
}

PrefillParams PrefillParamsFor(const Harness& h, int cr, int ring, int B = 8) {
  PrefillParams p{};
  p.plan_c = h.d_pc;
  p.plan_w = h.d_pw;
  p.status = h.d_status;
  p.seq_lens = h.d_pseq;
  p.extend_lens = h.d_ext32;
  p.rids = h.d_rids;  // as gpu-kernels.bench.mjs
  p.lens64 = 0;
  p.batch = B;
  p.num_q = 6 * B;
  p.pad =
      ring > (cr == 4 ? 8 : 128) ? ring - (cr == 4 ? 8 : 128) + 2 : 0;  // the planner's writePad (for the bench only)
  p.tail = cr == 4 ? 1 : 0;
  p.host_rules = 0;
  p.slot = IdentitySlot(cr, ring, 256);
  return p;
}

om::WritePrefixParams WpParams(const Harness& h, int variant, int split) {
  om::WritePrefixParams p{};
  p.kvScore = h.d_kv;
  p.seqLens = h.d_wseq;
  p.reqPoolIdx = h.d_widx;
  p.ape = h.d_ape;
  p.state = h.d_state;
  p.batch = kWpBatch;
  p.numVerify = kWpVerify;
  p.bankStrideRows = kWpBankRows;
  p.numReqSlots = kWpSlots;
  p.stateType = om::kF32;
  p.variant = variant;
  p.split = split;
  p.err = nullptr;
  return p;
}

// The four small planner kernels of interest, 20 rounds: c4 prefill B=8 D=6 identity, the same with tables,
// c4 decode B=8 with tables, c128 decode B=8.
void RunNcuSmall(const Harness& h) {
  PrefillParams pt = PrefillParamsFor(h, 4, 16);
  pt.slot = WithTables(h, pt.slot);
  DecodeParams dt = DecodeParamsFor(h, 4, 16, 8);
  dt.slot = WithTables(h, dt.slot);
  for (int i = 0; i < 20; ++i) {
    CK(LaunchPrefill(PrefillParamsFor(h, 4, 16), h.st, h.sms));
    CK(LaunchPrefill(pt, h.st, h.sms));
    CK(LaunchDecode(dt, h.st));
    CK(LaunchDecode(DecodeParamsFor(h, 128, 256, 8), h.st));
  }
  CK(cudaStreamSynchronize(h.st));
  std::printf("ncu small mode done\n");
}

void RunNcu(const Harness& h) {
  const cudaStream_t st = h.st;
  const int sms = h.sms;
  for (int i = 0; i < 20; ++i) {
    CK(LaunchDecode(DecodeParamsFor(h, 128, 256, 8), st));
    CK(LaunchDecode(DecodeParamsFor(h, 4, 16, 8), st));
    DecodeMinKernel<<<1, 256, 0, st>>>(h.d_out, h.d_seq64, h.d_rids, 8, 128, 256);
    CK(LaunchPrefill(PrefillParamsFor(h, 4, 16), st, sms));
    CK(LaunchPrefill(PrefillParamsFor(h, 128, 256), st, sms));
    CK(om::LaunchWritePrefix(WpParams(h, om::kWpScalar, 1), st));
    MixKernel<<<2 * sms, 512, 0, st>>>(reinterpret_cast<const float4*>(h.d_src), h.readBytes / 16,
                                       reinterpret_cast<float4*>(h.d_dst), h.writeBytes / 16);
    CK(bench::LaunchEmpty(st));
  }
  CK(cudaStreamSynchronize(st));
  std::printf("ncu mode done\n");
}

// c128 decode at batch B: the addon kernel, upstream's shape, then the variants that each leave one cost out.
void TimeDecodeC128(const Harness& h, int B, const DecodeParams& dp, const std::string& tag) {
  const int ring = 256;
  const int threads = B <= 32 ? 32 : 128;
  const int blocks = (B + threads - 1) / threads;
  Time(
      tag + "upstream shape, int32 math, 256 thr",
      [&](cudaStream_t s) {
        DecodeMin32Kernel<<<(B + 255) / 256, 256, 0, s>>>(h.d_out, h.d_seq64, h.d_rids, B, 128, ring);
        return cudaGetLastError();
      },
      h.st);
  if (getenv("ANATOMY_PLANNER_ONLY")) return;
  Time(
      tag + "same code, 256-thread blocks",
      [&](cudaStream_t s) {
        DecodeVar<128, kReqRing, true><<<(B + 255) / 256, 256, 0, s>>>(dp);
        return cudaGetLastError();
      },
      h.st);
  Time(
      tag + "same code, no ballot/status",
      [&](cudaStream_t s) {
        DecodeVar<128, kReqRing, false><<<blocks, threads, 0, s>>>(dp);
        return cudaGetLastError();
      },
      h.st);
  DecodeLite lp{h.d_out, h.d_status, h.d_seq32, nullptr, B, ring, MakeFastDiv(ring)};
  Time(
      tag + "56-byte params + status",
      [&](cudaStream_t s) {
        DecodeLiteKernel<128, true><<<blocks, threads, 0, s>>>(lp);
        return cudaGetLastError();
      },
      h.st);
  Time(
      tag + "56-byte params, no status",
      [&](cudaStream_t s) {
        DecodeLiteKernel<128, false><<<blocks, threads, 0, s>>>(lp);
        return cudaGetLastError();
      },
      h.st);
  DecodeLite lr = lp;
  lr.rids = h.d_rids;
  Time(
      tag + "56-byte params + status + rids",
      [&](cudaStream_t s) {
        DecodeLiteKernel<128, true><<<blocks, threads, 0, s>>>(lr);
        return cudaGetLastError();
      },
      h.st);
  Time(
      tag + "upstream shape (int64 S/rid, %), 256 thr",
      [&](cudaStream_t s) {
        DecodeMinKernel<<<(B + 255) / 256, 256, 0, s>>>(h.d_out, h.d_seq64, h.d_rids, B, 128, ring);
        return cudaGetLastError();
      },
      h.st);
}

// c4 (paged) decode at batch B: with the r2t/f2s tables, upstream's paged shape, no ballot/status.
void TimeDecodeC4(const Harness& h, int B, const DecodeParams& dp, const std::string& tag) {
  const int ring = 16;
  const int threads = B <= 32 ? 32 : 128;
  const int blocks = (B + threads - 1) / threads;
  DecodeParams dt = dp;
  dt.slot = WithTables(h, dp.slot);
  Time(tag + "addon kernel, r2t/f2s tables", [&](cudaStream_t s) { return LaunchDecode(dt, s); }, h.st);
  Time(
      tag + "upstream shape paged, tables, 256 thr",
      [&](cudaStream_t s) {
        DecodeMinPagedKernel<<<(B + 255) / 256, 256, 0, s>>>(h.d_out, h.d_seq64, h.d_rids, h.d_r2t, h.d_f2s, B,
                                                             kTabStride, ring, 256);
        return cudaGetLastError();
      },
      h.st);
  if (getenv("ANATOMY_PLANNER_ONLY")) return;
  Time(
      tag + "same code, no ballot/status",
      [&](cudaStream_t s) {
        DecodeVar<4, kPaged, false><<<blocks, threads, 0, s>>>(dp);
        return cudaGetLastError();
      },
      h.st);
}

void TimeDecode(const Harness& h) {
  for (int B : {8, 256, 1024}) {
    for (int cr : {128, 4}) {
      const int ring = cr == 4 ? 16 : 256;
      const DecodeParams dp = DecodeParamsFor(h, cr, ring, B);
      const std::string tag = "decode c" + std::to_string(cr) + " B=" + std::to_string(B) + " ";
      Time(tag + "addon kernel", [&](cudaStream_t s) { return LaunchDecode(dp, s); }, h.st);
      if (cr == 128)
        TimeDecodeC128(h, B, dp, tag);
      else
        TimeDecodeC4(h, B, dp, tag);
    }
  }
}

void TimePrefillUniform(const Harness& h) {
  for (int B : {8, 32, 256}) {
    for (int cr : {4, 128}) {
      const PrefillParams pp = PrefillParamsFor(h, cr, cr == 4 ? 16 : 256, B);
      Time(
          "prefill B=" + std::to_string(B) + " D=6 c" + std::to_string(cr) + " addon kernel",
          [&](cudaStream_t s) { return LaunchPrefill(pp, s, h.sms); }, h.st);
      if (cr == 4) {
        PrefillParams pt = pp;
        pt.slot = WithTables(h, pp.slot);
        Time(
            "prefill B=" + std::to_string(B) + " D=6 c4 addon kernel, r2t/f2s tables",
            [&](cudaStream_t s) { return LaunchPrefill(pt, s, h.sms); }, h.st);
      }
    }
  }
}

// General small batches as gpu-kernels.bench.mjs (prefixes 512-518, identity maps): B=16 E=4095 and B=1 E=8192.
void TimePrefillGeneral(const Harness& h) {
  int32_t *d_gseq, *d_gext;
  CK(cudaMalloc(&d_gseq, 16 * 4));
  CK(cudaMalloc(&d_gext, 16 * 4));
  const int cases[2][2] = {{16, 4095}, {1, 8192}};
  for (const auto& c : cases) {
    const int B = c[0], E = c[1];
    std::vector<int32_t> gs(B), ge(B, E);
    for (int i = 0; i < B; ++i) gs[i] = 512 + i % 7 + E;
    CK(cudaMemcpy(d_gseq, gs.data(), B * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_gext, ge.data(), B * 4, cudaMemcpyHostToDevice));
    for (int cr : {4, 128}) {
      PrefillParams pg = PrefillParamsFor(h, cr, cr == 4 ? 16 : 256, B);
      pg.seq_lens = d_gseq;
      pg.extend_lens = d_gext;
      pg.num_q = B * E;
      Time(
          "prefill B=" + std::to_string(B) + " E=" + std::to_string(E) + " c" + std::to_string(cr) + " addon kernel",
          [&](cudaStream_t s) { return LaunchPrefill(pg, s, h.sms); }, h.st);
    }
  }
}

void TimeWritePrefix(const Harness& h) {
  for (int split : {1, 2, 4}) {
    const om::WritePrefixParams wp = WpParams(h, om::kWpScalar, split);
    Time(
        "writePrefix b256 D8 fp32 scalar split " + std::to_string(split),
        [&](cudaStream_t s) { return om::LaunchWritePrefix(wp, s); }, h.st);
  }
#if DSV4KV_BENCH_VARIANTS  // the vec shape is benchmark-only (online_mtp/bench_variants.cu)
  {
    const om::WritePrefixParams wp = WpParams(h, om::kWpVec, 1);
    Time("writePrefix b256 D8 fp32 vec split 1", [&](cudaStream_t s) { return om::LaunchWritePrefix(wp, s); }, h.st);
  }
#endif
}

// The byte-mix ceilings: writePrefix's read and write bytes as plain L2 traffic.
void TimeByteMix(const Harness& h) {
  const int64_t readBytes = h.readBytes, writeBytes = h.writeBytes;
  const auto* src = reinterpret_cast<const float4*>(h.d_src);
  auto* dst = reinterpret_cast<float4*>(h.d_dst);
  std::printf("byte mix: read %.2f MiB, write %.2f MiB\n", readBytes / 1048576.0, writeBytes / 1048576.0);
  for (int bps : {1, 2, 4, 8}) {
    const int blocks = bps * h.sms;
    Time(
        "L2 mix float4, " + std::to_string(blocks) + " blocks x 512",
        [&](cudaStream_t s) {
          MixKernel<<<blocks, 512, 0, s>>>(src, readBytes / 16, dst, writeBytes / 16);
          return cudaGetLastError();
        },
        h.st);
  }
  for (int bps : {2, 4}) {
    const int blocks = bps * h.sms;
    Time(
        "L2 mix scalar, " + std::to_string(blocks) + " blocks x 512",
        [&](cudaStream_t s) {
          MixScalarKernel<<<blocks, 512, 0, s>>>(h.d_src, readBytes / 4, h.d_dst, writeBytes / 4);
          return cudaGetLastError();
        },
        h.st);
  }
  Time(
      "L2 read only (mix read bytes), 4/SM",
      [&](cudaStream_t s) {
        MixKernel<<<4 * h.sms, 512, 0, s>>>(src, readBytes / 16, dst, 0);
        return cudaGetLastError();
      },
      h.st);
  Time(
      "L2 write only (mix write bytes), 4/SM",
      [&](cudaStream_t s) {
        MixKernel<<<4 * h.sms, 512, 0, s>>>(src, 0, dst, writeBytes / 16);
        return cudaGetLastError();
      },
      h.st);
}

// SM placement of consecutive one-block launches (eager and graph).
void TraceSmid(const Harness& h) {
  int32_t *d_trace, *d_cnt;
  CK(cudaMalloc(&d_trace, 4096 * 4));
  CK(cudaMalloc(&d_cnt, 4));
  CK(cudaMemset(d_cnt, 0, 4));
  for (int i = 0; i < 100; ++i) SmidKernel<<<1, 32, 0, h.st>>>(d_trace, d_cnt);
  CK(cudaStreamSynchronize(h.st));
  std::vector<int32_t> tr(100);
  CK(cudaMemcpy(tr.data(), d_trace, 400, cudaMemcpyDeviceToHost));
  std::printf("smid of 100 eager one-block launches:");
  for (int v : tr) std::printf(" %d", v);
  std::printf("\n");
}

int Main(int argc, char** argv) {
  const bool ncu = argc > 1 && std::strcmp(argv[1], "--ncu") == 0;
  Harness h;
  CK(cudaStreamCreateWithFlags(&h.st, cudaStreamNonBlocking));
  int dev = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&h.sms, cudaDevAttrMultiProcessorCount, dev));
  SetupPlanner(h);
  SetupTables(h);
  SetupWritePrefix(h);
  SetupMix(h);
  if (ncu && getenv("ANATOMY_NCU_SMALL")) {
    RunNcuSmall(h);
    return 0;
  }
  if (ncu) {
    RunNcu(h);
    return 0;
  }
  Time("empty kernel", [&](cudaStream_t s) { return bench::LaunchEmpty(s); }, h.st);
  TimeDecode(h);
  TimePrefillUniform(h);
  TimePrefillGeneral(h);
  if (getenv("ANATOMY_PLANNER_ONLY")) return 0;
  TimeWritePrefix(h);
  TimeByteMix(h);
  TraceSmid(h);
  return 0;
}

}  // namespace anatomy
}  // namespace dsv4kv

int main(int argc, char** argv) { return dsv4kv::anatomy::Main(argc, argv); }
