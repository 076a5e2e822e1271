/**
 * What every GPU bench of the repository starts with: the bench build's addon (exit 1 without it), stop when the
 * probe says the GPU path is unusable, with exit code 0 (a skip) or 1 when BENCH_REQUIRE_GPU is set (a GPU machine
 * that lost its GPU); and the run metadata every bench JSON begins with.
 */
import { execSync } from "node:child_process";
import { type BenchAddon, useBenchAddon } from "./bench-addon.js";
import type { ProbeResult } from "./native.js";

/** Exits the process unless `probeResult` is usable (see the file comment). */
export function requireGpu(probeResult: Pick<ProbeResult, "ok" | "reason">): void {
  if (probeResult.ok) return;
  console.error(`bench skipped: GPU unavailable: ${probeResult.reason}`);
  process.exit(process.env.BENCH_REQUIRE_GPU ? 1 : 0);
}

/**
 * The bench build's addon (native/bench/), made the addon of this process before anything loads one (useBenchAddon);
 * exits 1 with the reason and the build command when it is missing (DSV4KV_ADDON_PATH, when set, must name a bench
 * build).
 */
export function requireBenchAddon(): BenchAddon {
  const r = useBenchAddon();
  if (r.addon) {
    console.error(`bench: bench addon ${r.path}`);
    return r.addon;
  }
  console.error(`bench: ${r.reason}`);
  process.exit(1);
}

/** The first line of `command`'s output, or "unknown" where it fails (no nvidia-smi, no git checkout). */
function firstLine(command: string): string {
  try {
    return execSync(command, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] })
      .split("\n")[0]!
      .trim();
  } catch {
    return "unknown";
  }
}

/** When and where a bench ran: the date, the device from the probe, the driver, Node and the commit. */
export function runMeta(probeResult: ProbeResult) {
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
