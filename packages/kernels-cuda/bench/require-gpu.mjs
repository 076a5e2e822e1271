// Shared by the benches of kernels-cuda and online-mtp-controller: load the bench build's addon (the released addon
// has no bench entry), stop when the probe says the GPU path is unusable, with exit code 0 (a skip) or 1 when
// BENCH_REQUIRE_GPU is set (a GPU machine that lost its GPU); the run metadata every bench JSON starts with.
import { execSync } from "node:child_process";
import { useBenchAddon } from "../dist/internal.js";

/**
 * The bench build's addon (native/bench/), made the addon of this process before anything loads one; exits 1 with
 * the reason and the build command when it is missing (DSV4KV_ADDON_PATH, when set, must name a bench build).
 */
export function requireBenchAddon() {
  const r = useBenchAddon();
  if (r.addon) {
    console.error(`bench: bench addon ${r.path}`);
    return r.addon;
  }
  console.error(`bench: ${r.reason}`);
  process.exit(1);
}

export function requireGpu(probeResult) {
  if (probeResult.ok) return;
  console.error(`bench skipped: GPU unavailable: ${probeResult.reason}`);
  process.exit(process.env.BENCH_REQUIRE_GPU ? 1 : 0);
}

/** The first line of `command`'s output, or "unknown" where it fails (no nvidia-smi, no git checkout). */
function firstLine(command) {
  try {
    return execSync(command, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] })
      .split("\n")[0]
      .trim();
  } catch {
    return "unknown";
  }
}

/** When and where a bench ran: the date, the device from the probe, the driver, Node and the commit. */
export function runMeta(probeResult) {
  return {
    date: new Date().toISOString(),
    gpu: probeResult.device?.name,
    sm: probeResult.device?.sm,
    multiProcessorCount: probeResult.device?.multiProcessorCount,
    memoryBytes: probeResult.device?.memoryBytes,
    driver: firstLine("nvidia-smi --query-gpu=driver_version --format=csv,noheader"),
    runtimeVersion: probeResult.runtimeVersion,
    driverVersion: probeResult.driverVersion,
    addon: probeResult.addon,
    node: process.version,
    commit: firstLine("git rev-parse HEAD"),
  };
}
