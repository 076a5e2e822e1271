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
// Two kernels rather than one fused kernel: a kernel whose thread-block clusters each own a channel slice of every row
// (the hazard is per column; a cluster barrier orders a slice's reads before its writes) was measured and was slower
// on every case, and so was a write kernel that stores the rows no compression reads without waiting
// (docs/decisions.md D27). The write kernel reads its plan and input before its wait, so it is a programmatic
// dependent only of our compress kernel, which writes neither and lets it launch only once everything before the
// compress kernel has completed; with no compress rows it is launched plainly. One thread of the write kernel always
// waits, so its grid never ends before the compress grid: a programmatic dependent of the write kernel (the c4 decode
// kernel, the next call's c4 compress kernel) waits for the write grid only. The c4 compress and c4 decode kernels
// are programmatic dependents of whatever precedes them (every thread executes griddepcontrol.wait before touching
// memory; the c4 compress kernel triggers the write kernel only after it), the c128 kernels are launched plainly:
// each choice is the faster one in a same-run A/B (docs/benchmarks.md, D27, D28).
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
