// Host-side entry points of the compress kernel files, used by launch.cu (LaunchPrefill / LaunchDecode). Each takes
// parameters that launch.cu has already checked (PrefillPrecondition / DecodePrecondition).
#pragma once
#include <cuda_runtime.h>

#include "compress/compress_kernels.cuh"

namespace dsv4kv {
namespace compress {

// prefill_compress.cu: every CompressPlan row into `out` (numPlanC >= 1).
cudaError_t LaunchCompressRows(const PrefillParams& p, cudaStream_t s);
// prefill_write.cu: every WritePlan row into the state (numPlanW >= 1); `afterCompress`: launched as a programmatic
// dependent of the compress kernel just launched on `s`.
cudaError_t LaunchWriteRows(const PrefillParams& p, cudaStream_t s, bool afterCompress);
// decode.cu: every DecodePlan row (batch >= 1).
cudaError_t LaunchDecodeRows(const DecodeParams& p, cudaStream_t s);

}  // namespace compress
}  // namespace dsv4kv
