// The scenario configurations the CPU and GPU scenario tests share.
import type { CompressScenarioOptions, RingCompressBackend } from "../src/index.js";
import { CpuCompressBackend } from "../src/cpu-backend.js";
import { scenarioStateRows } from "../src/scenario/run.js";

export interface RingCase {
  name: string;
  options: Pick<CompressScenarioOptions, "compressRatio" | "useReqRing" | "headDim">;
  /** The derived pad of the ring (c4 16: 10, c128 256: 130). */
  pad: number;
  /** Steps enough for verifies to close chunks (c128 chunks are 128 tokens long). */
  steps: number;
}

export const RINGS: readonly RingCase[] = [
  { name: "c4 paged (ring 16, SWA page 256)", options: { compressRatio: 4, headDim: 128 }, pad: 10, steps: 60 },
  {
    name: "c4 request ring 16",
    options: { compressRatio: 4, useReqRing: true, headDim: 128 },
    pad: 10,
    steps: 60,
  },
  { name: "c128 ring 256", options: { compressRatio: 128, headDim: 128 }, pad: 130, steps: 100 },
];

/** A backend sized for the scenario `options`. */
export function cpuBackendFor(options: CompressScenarioOptions): RingCompressBackend {
  return new CpuCompressBackend({
    compressRatio: options.compressRatio,
    headDim: options.headDim ?? 512,
    stateDtype: options.stateDtype ?? "fp32",
    stateRows: scenarioStateRows(options),
  });
}
