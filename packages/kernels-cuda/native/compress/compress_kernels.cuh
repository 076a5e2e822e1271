// Ring compress kernels that consume the planner's records (docs/reference/compress-kernels.md):
// prefill compress over CompressPlan rows (c4 with its overlap half, c128), the prefill write over WritePlan rows,
// and decode (write, then compress when the window closes) over DecodePlan rows. One params struct per kernel
// family. The host (binding.cpp) checks sizes before a launch; the kernels re-check every plan value against the
// buffers, skip a bad row and record it in `err`, so a bad plan is an error, never an out-of-bounds access.
#pragma once

#include <cstdint>

#if DSV4KV_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace dsv4kv {
namespace compress {

// Record layouts (docs/reference/planner.md §2): little-endian, 16-byte CompressPlan and DecodePlan, 8-byte WritePlan.
constexpr int kCompressPlanBytes = 16;
constexpr int kWritePlanBytes = 8;
constexpr int kDecodePlanBytes = 16;
constexpr uint32_t kInvalidSeqLen = 0xFFFFFFFFu;    // CompressPlan / DecodePlan padding row
constexpr uint32_t kInvalidRaggedId = 0xFFFFFFFFu;  // WritePlan padding row

// Window W = cr * (cr == 4 ? 2 : 1); a state / input row holds (cr == 4 ? 4 : 2) * headDim floats:
// c4 `| kv_overlap | kv | score_overlap | score |`, c128 `| kv | score |`. ape is [W, headDim] fp32.
constexpr int WindowOf(int cr) { return cr == 4 ? 8 : cr; }
constexpr int RowBlocksOf(int cr) { return cr == 4 ? 4 : 2; }

enum StateType : int32_t { kF32 = 0, kBF16 = 1 };

// Device error word (int32[4]) = [code, row, value, kernel]; the first error wins (atomicCAS on word 0). The row is
// the plan row index; value is the offending field's value (truncated to int32).
enum ErrCode : int32_t {
  kErrNone = 0,
  kErrSeqLen = 1,       // CompressPlan seq_len is 0 or not a multiple of cr; DecodePlan seq_len is 0
  kErrBufferLen = 2,    // CompressPlan buffer_len > W
  kErrRaggedRow = 3,    // a ragged input row the compression reads is outside [0, inputRows)
  kErrRingRow = 4,      // a state row the compression reads is outside [0, stateRows)
  kErrWriteLoc = 5,     // WritePlan / DecodePlan write_loc outside [0, stateRows)
  kErrWriteRagged = 6,  // WritePlan ragged_id outside [0, inputRows)
};
enum KernelId : int32_t { kKPrefillCompress = 0, kKPrefillWrite = 1, kKDecode = 2 };

struct PrefillParams {
  void* state;  // [stateRows, RowBlocksOf(cr) * headDim] of StateType
  int64_t stateRows;
  const float* input;  // ragged input rows [inputRows, RowBlocksOf(cr) * headDim]
  int64_t inputRows;
  const float* ape;      // [WindowOf(cr), headDim]
  const uint8_t* planC;  // numPlanC CompressPlan rows
  int32_t numPlanC;
  const uint8_t* planW;  // numPlanW WritePlan rows
  int32_t numPlanW;
  float* out;       // [numPlanC, headDim]; row i = entry of plan row i (rows of padding / bad plan rows untouched)
  int32_t cr;       // 4 or 128
  int32_t headDim;  // 128 or 512
  int32_t stateType;
  int32_t* err;  // int32[4], required
};

struct DecodeParams {
  void* state;
  int64_t stateRows;
  const float* input;  // row b = the new token of batch row b
  int64_t inputRows;   // >= batch
  const float* ape;
  const uint8_t* planD;  // batch DecodePlan rows
  int32_t batch;
  float* out;  // [batch, headDim]; written only for rows with seq_len % cr == 0
  int32_t cr;
  int32_t headDim;
  int32_t stateType;
  int32_t* err;  // int32[4], required
};

#if DSV4KV_HAVE_CUDA
// Compress over every CompressPlan row, then write every WritePlan row, on stream `s`: a batch's compressions read
// the pre-batch ring (docs/reference/planner.md §8). Either part is skipped when its count is 0.
cudaError_t LaunchPrefill(const PrefillParams& p, cudaStream_t s);
cudaError_t LaunchDecode(const DecodeParams& p, cudaStream_t s);
#endif

}  // namespace compress
}  // namespace dsv4kv
