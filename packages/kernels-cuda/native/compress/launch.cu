// LaunchPrefill / LaunchDecode (compress_kernels.cuh): parameter preconditions, then the kernels in order.
#include <cuda_runtime.h>

#include "compress/compress_kernels.cuh"
#include "compress/compress_launch.h"

namespace dsv4kv {
namespace compress {
namespace {

bool ValidShape(int32_t cr, int32_t headDim, int32_t stateType) {
  return (cr == 4 || cr == 128) && (headDim == 128 || headDim == 512) && (stateType == kF32 || stateType == kBF16);
}

// Each bound, derived:
//   * cr, headDim, stateType: the template instances that exist.
//   * counts >= 0 (0 skips that kernel); a count is a grid dimension (< 2^31) as int32.
//   * rows >= 0: the device re-check compares int64 row indices against them; a plan row index fits the int32 err.
//   * pointers: what a launch dereferences must be set; err is required (every bad row is reported there).
bool PrefillPrecondition(const PrefillParams& p) {
  if (!ValidShape(p.cr, p.headDim, p.stateType)) return false;
  if (p.numPlanC < 0 || p.numPlanW < 0 || p.stateRows < 0 || p.inputRows < 0) return false;
  if (p.err == nullptr || p.state == nullptr || p.input == nullptr || p.ape == nullptr) return false;
  if (p.numPlanC > 0 && (p.planC == nullptr || p.out == nullptr)) return false;
  if (p.numPlanW > 0 && p.planW == nullptr) return false;
  return true;
}
bool DecodePrecondition(const DecodeParams& p) {
  if (!ValidShape(p.cr, p.headDim, p.stateType)) return false;
  if (p.batch < 0 || p.stateRows < 0 || p.inputRows < 0) return false;
  if (p.err == nullptr || p.state == nullptr || p.input == nullptr || p.ape == nullptr) return false;
  if (p.batch > 0 && (p.planD == nullptr || p.out == nullptr)) return false;
  return true;
}

}  // namespace

// Compress, then write, on one stream: the write kernel is a programmatic dependent of the compress kernel; its
// griddepcontrol.wait returns only after the whole compress grid has completed and flushed, so every compression
// reads the pre-batch ring (docs/reference/planner.md §8.3). Stream capture records the edge as a programmatic one.
// Two kernels rather than one kernel whose blocks each own a column slice of every row (also legal: the hazard is
// per column): a slice must hold whole 32-byte sectors of each row block, so that kernel has at most 64 blocks at
// headDim 512 and would move a verify batch's 5 to 13 MB through half the SMs; the dependent launch already hides
// the write kernel's launch and its loads behind the compress kernel.
// The compress and decode kernels are themselves launched as programmatic dependents of whatever kernel precedes them
// on the stream, and execute griddepcontrol.wait before any memory access: the same order as a plain launch, but
// their launch overlaps the previous kernel's tail (the write and decode kernels let their dependents launch early).
// The write kernel reads its plan and input before its wait, so it is a programmatic dependent only of our compress
// kernel (which writes neither); with no compress rows it is launched plainly.
cudaError_t LaunchPrefill(const PrefillParams& p, cudaStream_t s) {
  if (!PrefillPrecondition(p)) return cudaErrorInvalidValue;
  if (p.numPlanC > 0) {
    const cudaError_t e = LaunchCompressRows(p, s);
    if (e != cudaSuccess) return e;
  }
  if (p.numPlanW > 0) return LaunchWriteRows(p, s, p.numPlanC > 0);
  return cudaSuccess;
}

cudaError_t LaunchDecode(const DecodeParams& p, cudaStream_t s) {
  if (!DecodePrecondition(p)) return cudaErrorInvalidValue;
  if (p.batch == 0) return cudaSuccess;
  return LaunchDecodeRows(p, s);
}

}  // namespace compress
}  // namespace dsv4kv
