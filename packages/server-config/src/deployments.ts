/**
 * The deployment `dsv4-kv check` assumes when a flag leaves it open: one rank of an 8×H200 tensor-parallel server
 * running EAGLE (3 steps, top-k 1, 4 draft tokens). A preset, so the CLI holds no domain default: it applies the
 * fields the user did not give and reports each as defaulted with the reason here.
 */

/** A server flag (SGLang's primary spelling) and the value the preset gives it, with why. */
export interface DeploymentDefault {
  flag: string;
  value: number | string;
  reason: string;
}

export interface DeploymentPreset {
  name: string;
  /** Device memory free before load, GiB per GPU. */
  gpuMemoryGiB: number;
  gpuName: string;
  /** Defaults when no speculative algorithm is given. */
  speculative: readonly DeploymentDefault[];
  /** Defaults for EAGLE when the user gives the algorithm but neither steps nor draft tokens. */
  eagleSteps: readonly DeploymentDefault[];
  /** The tensor-parallel size (the checkpoint's weights are split this many ways). */
  tpSize: DeploymentDefault;
  /** How the budget assumption describes this deployment when tp is defaulted. */
  description: string;
}

const H200_GIB = 139;

export const H200_TP8_EAGLE: DeploymentPreset = {
  name: "h200-tp8-eagle",
  gpuMemoryGiB: H200_GIB,
  gpuName: "H200",
  speculative: [
    {
      flag: "speculative-algorithm",
      value: "EAGLE",
      reason: "check's default run (EAGLE 3 steps, top-k 1, 4 draft tokens)",
    },
    { flag: "speculative-eagle-topk", value: 1, reason: "check's default run; DSV4 requires top-k 1" },
    { flag: "speculative-num-steps", value: 3, reason: "check's default run" },
    { flag: "speculative-num-draft-tokens", value: 4, reason: "check's default run (steps + 1)" },
  ],
  eagleSteps: [
    { flag: "speculative-eagle-topk", value: 1, reason: "DSV4 requires EAGLE top-k 1" },
    { flag: "speculative-num-steps", value: 3, reason: "upstream auto-chooses (model-dependent); check assumes 3" },
    { flag: "speculative-num-draft-tokens", value: 4, reason: "steps + 1" },
  ],
  tpSize: { flag: "tp-size", value: 8, reason: "check's default: one rank of an 8×H200 tensor-parallel deployment" },
  description: "one rank of an 8×H200 tensor-parallel deployment (default)",
};

/** The preset `dsv4-kv check` applies. */
export const DEFAULT_DEPLOYMENT: DeploymentPreset = H200_TP8_EAGLE;
