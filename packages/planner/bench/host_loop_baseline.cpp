// C++ baseline for the planner's host-loop benchmark: the same stage-0 loop as packages/planner/src/prefill.ts
// (`stage0Into`, range-based), plus upstream's token-by-token loop for reference. Compiled with -O2.
// Usage: host_loop_baseline <case> where case is "c4-16x4095" or "c4-1024req"; prints JSON.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

struct CaseInput {
  std::vector<int32_t> seq, ext;
  int numQ = 0;
};

static CaseInput make_case(const char* name) {
  CaseInput c;
  if (std::strcmp(name, "c4-16x4095") == 0) {
    for (int i = 0; i < 16; i++) {
      c.seq.push_back(4095);
      c.ext.push_back(4095);
    }
    c.seq.push_back(15);
    c.ext.push_back(15);
  } else {
    for (int i = 0; i < 1023; i++) {
      c.seq.push_back(64);
      c.ext.push_back(64);
    }
    c.seq.push_back(63);
    c.ext.push_back(63);
  }
  for (int e : c.ext) c.numQ += e;
  return c;
}

// Same as stage0Into in prefill.ts: per-row work, ranges instead of per-token tests; rows with bufferLen > 0
// first, then the steady rows on a precomputed trip count (the TS version unrolls that loop by two, which a C++
// compiler does on its own).
static void stage0_ranges(int cr, int sps, int pad, bool tail, const CaseInput& in, uint32_t* cw, int32_t* cs,
                          uint32_t* ww, int32_t* ws, int& ncOut, int& nwOut) {
  const int window = cr * (cr == 4 ? 2 : 1);
  const int overlap = cr == 4 ? cr : 0;
  int nc = 0, nw = 0, base = 0;
  const int batch = (int)in.seq.size();
  for (int b = 0; b < batch; b++) {
    const int s = in.seq[b], e = in.ext[b], prefix = s - e;
    const int firstW = std::min((s / cr) * cr - overlap, s - pad);
    const int rem = (prefix + 1) % cr;
    int q = rem == 0 ? prefix : prefix + cr - rem;
    int j = q - prefix;
    int i = nc * 4;
    for (; q < s && j + 1 < window; q += cr, j += cr) {
      cw[i] = (uint32_t)(q + 1);
      cw[i + 1] = (uint32_t)(((base + j) & 0xffff) | ((window - j - 1) << 16));
      cs[i + 2] = -1;
      cs[i + 3] = b;
      i += 4;
    }
    const int steadyRows = q < s ? (s - 1 - q) / cr + 1 : 0;
    const int end = i + steadyRows * 4;
    int seqLenOut = q + 1, ragged = base + j;
    for (; i < end; i += 4, seqLenOut += cr, ragged += cr) {
      cw[i] = (uint32_t)seqLenOut;
      cw[i + 1] = (uint32_t)(ragged & 0xffff);
      cs[i + 2] = -1;
      cs[i + 3] = b;
    }
    nc = i / 4;
    const uint32_t packedBatch = (uint32_t)(b & 0xffff) << 16;
    const int mainStart = std::max(firstW, prefix);
    if (tail) {
      const int limit = std::min(mainStart, s);
      for (int t = (prefix / sps) * sps + sps - cr; t < limit; t += sps) {
        const int lo = std::max(t, prefix), hi = std::min(t + cr, limit);
        for (int p = lo; p < hi; p++) {
          ww[nw * 2] = (uint32_t)(base + p - prefix) | packedBatch;
          ws[nw * 2 + 1] = p + 1;
          nw++;
        }
      }
    }
    for (int p = mainStart; p < s; p++) {
      ww[nw * 2] = (uint32_t)(base + p - prefix) | packedBatch;
      ws[nw * 2 + 1] = p + 1;
      nw++;
    }
    base += e;
  }
  ncOut = nc;
  nwOut = nw;
}

// Upstream's host loop shape: every token tested for compress and write.
static void stage0_per_token(int cr, int sps, int pad, bool tail, const CaseInput& in, uint32_t* cw, int32_t* cs,
                             uint32_t* ww, int32_t* ws, int& ncOut, int& nwOut) {
  const int window = cr * (cr == 4 ? 2 : 1);
  int nc = 0, nw = 0, counter = 0;
  const int batch = (int)in.seq.size();
  for (int b = 0; b < batch; b++) {
    const int s = in.seq[b], e = in.ext[b], prefix = s - e;
    const int firstW = std::min((s / cr) * cr - (cr == 4 ? cr : 0), s - pad);
    for (int j = 0; j < e; j++) {
      const int p = prefix + j, rag = counter + j;
      if ((p + 1) % cr == 0) {
        cw[nc * 4] = (uint32_t)(p + 1);
        cw[nc * 4 + 1] = (uint32_t)((rag & 0xffff) | ((window - std::min(j + 1, window)) << 16));
        cs[nc * 4 + 2] = -1;
        cs[nc * 4 + 3] = b;
        nc++;
      }
      if (p >= firstW || (tail && (p % sps) >= sps - cr)) {
        ww[nw * 2] = (uint32_t)rag | ((uint32_t)b << 16);
        ws[nw * 2 + 1] = p + 1;
        nw++;
      }
    }
    counter += e;
  }
  ncOut = nc;
  nwOut = nw;
}

template <typename F>
static double median_ns_per_call(F&& f, int warm, int samples, int reps) {
  for (int i = 0; i < warm; i++) f();
  std::vector<double> t;
  for (int s = 0; s < samples; s++) {
    auto a = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; r++) f();
    auto z = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double, std::nano>(z - a).count() / reps);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main(int argc, char** argv) {
  const char* name = argc > 1 ? argv[1] : "c4-16x4095";
  CaseInput in = make_case(name);
  const int cr = 4, sps = 256, pad = 10;  // c4 ring 16: writePad(4, 16) = 16 - 8 + 2
  std::vector<uint32_t> c(in.numQ * 4), w(in.numQ * 2);
  int nc = 0, nw = 0;
  volatile int sink = 0;
  auto ranges = [&] {
    stage0_ranges(cr, sps, pad, true, in, c.data(), (int32_t*)c.data(), w.data(), (int32_t*)w.data(), nc, nw);
    sink = sink + nc + nw;
  };
  auto perToken = [&] {
    stage0_per_token(cr, sps, pad, true, in, c.data(), (int32_t*)c.data(), w.data(), (int32_t*)w.data(), nc, nw);
    sink = sink + nc + nw;
  };
  double rangesNs = median_ns_per_call(ranges, 200, 31, 100);
  int nc1 = nc, nw1 = nw;
  double perTokenNs = median_ns_per_call(perToken, 200, 31, 100);
  std::printf(
      "{\"case\":\"%s\",\"tokens\":%d,\"rows\":{\"compress\":%d,\"write\":%d},\"rangesNsPerCall\":%.1f,"
      "\"perTokenNsPerCall\":%.1f,\"rowsAgree\":%s}\n",
      name, in.numQ, nc1, nw1, rangesNs, perTokenNs, (nc1 == nc && nw1 == nw) ? "true" : "false");
  return 0;
}
