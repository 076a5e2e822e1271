/**
 * The errors of this package, on the shared model (@dsv4-kv/errors). `KernelsCudaError`: the addon or CUDA refused
 * or failed (code NATIVE with `params.cudaError` / `cudaName` / `cudaMessage` / `cudaCall`, or a validation code
 * with the field the addon names). `KernelsCudaUnavailableError`: no usable GPU (code GPU_UNAVAILABLE, the probe
 * result in `params.probe` and `probe`). Planning refusals are the planner's `PlannerError`.
 */
import { FieldError } from "@dsv4-kv/errors";
import { FORCE_CPU_ENV } from "./env.js";
import type { ProbeResult } from "./native.js";

export class KernelsCudaError extends FieldError {
  static override readonly kind: string = "KernelsCudaError";
}

/** What a consumer can do about each cause, in the order they are checked. */
export const UNAVAILABLE_FIXES: readonly string[] = [
  "Addon not built: in your project run `npm install --no-save cmake-js@8 node-addon-api@8`, then `npx cmake-js " +
    "rebuild` in node_modules/@dsv4-kv/kernels-cuda (needs cmake >= 3.18 and a C++17 compiler).",
  "Built without CUDA: put nvcc on PATH or set CUDACXX=/usr/local/cuda/bin/nvcc, then rebuild as above.",
  "No driver / no device: run on a machine with an NVIDIA driver >= the CUDA runtime and an sm_90+ GPU " +
    "(check `nvidia-smi`).",
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
    super("GPU_UNAVAILABLE", "", undefined, rule, { probe, reason: probe.reason, fixes: UNAVAILABLE_FIXES });
    this.probe = probe;
  }
}
