// Online c128 compression + MTP kernels (docs/reference/online-mtp.md §5, §8). One params struct per kernel; the host
// side (binding.cpp) checks every precondition before a launch, and the kernels re-check device-resident values
// (request indices, lengths, segment rows) so a bad value is skipped or reported through `err`, never an
// out-of-bounds access.
#pragma once

#include <cstdint>

#if DSV4KV_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace dsv4kv {
namespace online_mtp {

constexpr int kHeadDim = 512;               // H: channels per state sub-vector (docs/reference/online-mtp.md §4.1)
constexpr int kRowElems = 3 * kHeadDim;     // [max | sum | acc]
constexpr int kKvScoreCols = 2 * kHeadDim;  // [kv | score] per input row (docs/reference/online-mtp.md §2)
constexpr int kChunk = 128;                 // tokens per compressed entry
constexpr int kMaxVerify = 8;               // kMaxVerifyTokens (docs/reference/online-mtp.md §3)
constexpr int kSegmentFields = 5;           // [seqLen, lastRow, len, loadRow, storeRow]

// Device error word layout (int32[4]): [code, index (segment or batch row), value, kernel]. First error wins
// (atomicCAS on word 0). Kernels given a null `err` skip the bad row silently (the no-op rule of
// docs/reference/online-mtp.md §13).
enum ErrCode : int32_t {
  kErrNone = 0,
  kErrSegLen = 1,
  kErrSegLastRow = 2,
  kErrSegLoadRow = 3,
  kErrSegStoreRow = 4,
  kErrReqIndex = 5,   // request slot r >= numReqSlots (r < 0 is padding: a silent no-op everywhere)
  kErrSlotIndex = 6,  // resetSlots: slot outside [0, numReqSlots)
};
enum KernelId : int32_t { kKPrefill = 0, kKWritePrefix = 1, kKCommit = 2, kKDecode = 3, kKReset = 4 };

// Kernel shapes (the `variant` field; every shape computes the same function within fp32 rounding). The shipped
// binary holds the default of each kernel; the others exist only in a build with DSV4KV_BENCH_VARIANTS
// (bench_variants.cu; docs/decisions.md D23 says when to build one):
//   writePrefix: kWpScalar (default) = one thread per channel, `split` blocks of 512/split threads per request,
//                D a template parameter, fast math on an unnormalised accumulator (online_mtp_kernels.cu);
//                kWpLegacy, kWpVec, kWpVecAccurate: benchmark-only (bench_variants.cu).
//   decode:      kWpScalar (default) = writePrefix's D = 1 shape: one thread per channel, `split` blocks of
//                512/split threads per request, inputs first, expf and IEEE division (online_mtp_kernels.cu);
//                kWpLegacy (one 512-thread block per request), kWpVec: benchmark-only.
//   prefill:     no variant; the launch picks a shape from the mean segment length (online_mtp_kernels.cu).
//   commit:      kCommitRegs (default) = every vector loaded into registers before the first store;
//                kCommitLegacy, kCommitWide: benchmark-only.
enum WritePrefixVariant : int32_t { kWpLegacy = 0, kWpVec = 1, kWpVecAccurate = 2, kWpScalar = 3 };
constexpr int kMaxSplit = 16;              // blocks per request: 512/16 = 32 threads (one warp) at the finest
constexpr int kVecThreads = kHeadDim / 4;  // 128 threads cover one 512-channel row with 4 channels each
// writePrefix from this D on issues bank 0 before the input rows (docs/decisions.md D23).
constexpr int kIndexFirstMinD = 6;
enum CommitVariant : int32_t { kCommitLegacy = 0, kCommitRegs = 1, kCommitWide = 2 };
#if DSV4KV_BENCH_VARIANTS
constexpr bool kBenchVariants = true;
#else
constexpr bool kBenchVariants = false;
#endif

enum StateType : int32_t { kF32 = 0, kBF16 = 1 };

struct WritePrefixParams {
  const float* kvScore;       // [>= batch*D, kKvScoreCols]
  const int32_t* seqLens;     // [>= batch] pre-verify committed length S
  const int32_t* reqPoolIdx;  // [>= batch]
  const float* ape;           // [kChunk, kHeadDim]
  void* state;                // [rows, kRowElems] of StateType
  int32_t batch;
  int32_t numVerify;       // D in [1, 8]
  int32_t bankStrideRows;  // O >= numReqSlots
  int32_t numReqSlots;     // N
  int32_t stateType;
  int32_t variant;  // WritePrefixVariant
  int32_t split;    // blocks per request, 1, 2, 4, 8 or 16 (kWpScalar: 512/split threads each, kWpVec*:
                    // 128/split, so 8 threads at 16); host-resolved; ignored by kWpLegacy
  int32_t* err;     // optional int32[4]: r >= N reported (kErrReqIndex) instead of silently skipped
};

struct MarkPendingParams {
  const int32_t* seqLens;
  const int32_t* reqPoolIdx;
  int32_t* pendingSeqLens;  // [>= N]
  int32_t* pendingWidths;   // [>= N]
  int32_t batch;
  int32_t numVerify;
  int32_t numReqSlots;
  int32_t clearAll;  // 1: upstream's global reset first
};

struct CommitPendingParams {
  const int32_t* curSeqLens;
  const int32_t* reqPoolIdx;
  int32_t* pendingSeqLens;
  int32_t* pendingWidths;
  void* state;
  int32_t batch;
  int32_t maxDraftTokens;  // Dmax: banks allocated
  int32_t clampWidth;      // > 0: clamp accept by this width; 0: by the recorded width
  int32_t bankStrideRows;
  int32_t numReqSlots;
  int32_t consume;             // clear the marker after reading it
  const int32_t* markSeqLens;  // optional: fused mark of the same batch (nullptr: none)
  int32_t markWidth;
  int32_t stateType;
  int32_t variant;  // CommitVariant
  int32_t* err;     // optional int32[4]: r >= N reported (kErrReqIndex)
};

struct ResetSlotsParams {
  void* state;
  const int32_t* slots;
  int32_t* pendingSeqLens;  // optional
  int32_t* pendingWidths;   // optional
  int32_t count;
  int32_t bankStrideRows;
  int32_t maxDraftTokens;
  int32_t numReqSlots;
  int32_t stateType;
  int32_t* err;  // optional int32[4]: slot outside [0, N) reported (kErrSlotIndex)
};

struct DecodeParams {
  void* state;
  const float* kvScore;  // [>= batch, kKvScoreCols]
  const float* ape;
  const int32_t* seqLens;  // length INCLUDING the new token
  const int32_t* reqPoolIdx;
  float* out;  // [>= batch, kHeadDim]
  int32_t batch;
  int32_t slotOffsetRows;
  int32_t numReqSlots;
  int32_t stateType;
  int32_t variant;  // kWpScalar (default), kWpLegacy or kWpVec (4 channels per thread); `split` blocks per request
  int32_t split;
  int32_t* err;  // optional int32[4]: r >= N reported (kErrReqIndex)
};

struct PrefillParams {
  void* state;
  int64_t stateRows;
  const float* kvScore;
  int64_t kvRows;  // also picks the launch shape: kvRows / numSegments = the mean segment length
  const float* ape;
  const int32_t* segments;  // [numSegments, 5] (docs/reference/online-mtp.md §6.2)
  float* out;               // [>= numSegments, kHeadDim]
  int32_t numSegments;
  int32_t stateType;
  int32_t* err;  // int32[4]
};

#if DSV4KV_HAVE_CUDA
cudaError_t LaunchWritePrefix(const WritePrefixParams& p, cudaStream_t s);
cudaError_t LaunchMarkPending(const MarkPendingParams& p, cudaStream_t s);
cudaError_t LaunchCommitPending(const CommitPendingParams& p, cudaStream_t s);
cudaError_t LaunchResetSlots(const ResetSlotsParams& p, cudaStream_t s);
cudaError_t LaunchDecode(const DecodeParams& p, cudaStream_t s);
cudaError_t LaunchPrefill(const PrefillParams& p, cudaStream_t s);
#if DSV4KV_BENCH_VARIANTS
// The benchmark-only shapes (native/bench/bench_variants.cu); the Launch* functions above hand them any non-default variant.
cudaError_t LaunchWritePrefixVariant(const WritePrefixParams& p, cudaStream_t s);
cudaError_t LaunchCommitVariant(const CommitPendingParams& p, cudaStream_t s);
cudaError_t LaunchDecodeVariant(const DecodeParams& p, cudaStream_t s);
#endif
#endif

}  // namespace online_mtp
}  // namespace dsv4kv
