/**
 * The errors of this package, on the shared model (@dsv4-kv/errors). `KernelsCudaError`: the addon or CUDA refused
 * or failed (code NATIVE with `params.cudaError` / `cudaName` / `cudaMessage` / `cudaCall`, or a validation code
 * with the field the addon names). `KernelsCudaUnavailableError`: no usable GPU (code GPU_UNAVAILABLE, the probe
 * result in `params.probe` and `probe`, its cause in `params.noGpu`). Planning refusals are the planner's `PlannerError`.
 */
import { FieldError } from "@dsv4-kv/errors/internal";
import { FORCE_CPU_ENV } from "./env.js";
import type { ProbeResult } from "./native.js";

export class KernelsCudaError extends FieldError {
  static override readonly kind: string = "KernelsCudaError";
}

/** The command that builds the addon from this package's sources in a consumer's project (bin of this package). */
export const SOURCE_BUILD_COMMAND = "npx dsv4-kv-kernels-build";

/** What a consumer can do about each cause (probe().noGpu), in the order they are checked; commands a consumer has. */
export const UNAVAILABLE_FIXES: readonly string[] = [
  "No addon loaded (probe().rejected says why each candidate was refused): on Linux x64 (glibc) run " +
    "`npm install @dsv4-kv/kernels-cuda-linux-x64` (the prebuilt binaries; skipped when optional dependencies " +
    `are omitted); elsewhere, or to build from source, run \`${SOURCE_BUILD_COMMAND}\` in your project ` +
    "(needs cmake >= 3.18 and a C++17 compiler; nvcc for the CUDA build).",
  "Only the CPU-only binary loaded: if the prebuilt CUDA binary was rejected (probe().rejected), check the driver " +
    `and glibc minima in its dist/manifest.json; or put nvcc on PATH (or set CUDACXX) and run \`${SOURCE_BUILD_COMMAND}\`.`,
  "No driver / driver too old: install an NVIDIA driver new enough for the binary's CUDA version (CUDA 13 needs " +
    ">= 580; check `nvidia-smi`).",
  "No device / unsupported device: run on a machine with an sm_90 or newer GPU.",
  `${FORCE_CPU_ENV} is set: unset it to allow the GPU path.`,
  "Otherwise use the CPU planner (@dsv4-kv/planner, or `dsv4-kv plan --path cpu`), which produces the same bytes.",
];

/** The GPU path is unavailable: the probe's reason and every possible cause with its fix (sharp style). */
export class KernelsCudaUnavailableError extends KernelsCudaError {
  static override readonly kind: string = "KernelsCudaUnavailableError";
  readonly probe: ProbeResult;

  constructor(probe: ProbeResult) {
    const rule = [
      `Could not use the @dsv4-kv/kernels-cuda GPU planner: ${probe.reason}`,
      "Possible causes and solutions:",
      ...UNAVAILABLE_FIXES.map((fix) => `- ${fix}`),
    ].join("\n");
    super("GPU_UNAVAILABLE", "", undefined, rule, {
      probe,
      reason: probe.reason,
      noGpu: probe.noGpu,
      fixes: UNAVAILABLE_FIXES,
    });
    this.probe = probe;
  }
}
