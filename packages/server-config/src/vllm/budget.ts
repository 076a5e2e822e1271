/**
 * The bytes vLLM gives the KV cache on one rank (docs/reference/vllm-kv-cache.md §5): `--kv-cache-memory-bytes`
 * verbatim, a logged "Available KV cache memory", or the device's memory × `--gpu-memory-utilization` less what the
 * profile run measured (weights, activation peak, memory outside torch, the CUDA-graph estimate), each an explicit
 * input because no GPU is here to measure them.
 */
export type VllmBudgetInput =
  | { kind: "kvCacheMemoryBytes"; bytes: number }
  | { kind: "availableBytes"; bytes: number }
  | {
      kind: "gpu";
      /** Total device memory in bytes (an H200: 150,109,880,320). */
      totalDeviceBytes: number;
      /** `--gpu-memory-utilization`, default 0.92. */
      gpuMemoryUtilization?: number;
      /** Weights this rank loads ("Model loading took … GiB"). */
      weightsBytes: number;
      /** Peak activation memory of the profile run (torch peak increase). Default 0. */
      activationPeakBytes?: number;
      /** Memory allocated outside torch (NCCL, cuBLAS workspaces). Default 0. */
      nonTorchBytes?: number;
      /** The CUDA-graph memory estimate vLLM subtracts (0 with `--enforce-eager`). Default 0. */
      cudaGraphBytes?: number;
    };

export const DEFAULT_GPU_MEMORY_UTILIZATION = 0.92;

export interface VllmBudget {
  /** Bytes requested of the device: ceil(total × utilization), null when the budget was given directly. */
  requestedBytes: number | null;
  /** Bytes the profile terms take, null when the budget was given directly. */
  nonKvBytes: number | null;
  /** Bytes left for the KV cache (may be negative: vLLM then refuses to start). */
  availableBytes: number;
  source: VllmBudgetInput["kind"];
}

export function vllmBudget(input: VllmBudgetInput): VllmBudget {
  if (input.kind !== "gpu") {
    return { requestedBytes: null, nonKvBytes: null, availableBytes: input.bytes, source: input.kind };
  }
  const util = input.gpuMemoryUtilization ?? DEFAULT_GPU_MEMORY_UTILIZATION;
  const requestedBytes = Math.ceil(input.totalDeviceBytes * util);
  const nonKvBytes =
    input.weightsBytes + (input.activationPeakBytes ?? 0) + (input.nonTorchBytes ?? 0) + (input.cudaGraphBytes ?? 0);
  return { requestedBytes, nonKvBytes, availableBytes: requestedBytes - nonKvBytes, source: "gpu" };
}
