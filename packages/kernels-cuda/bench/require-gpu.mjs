// Shared by the benches of kernels-cuda and online-mtp-controller: load the bench build's addon (the released addon
// has no bench entry); the GPU gate and run metadata come from the package's ./testing entry (src/bench-run.ts),
// where the benches of the packages above import them by name.
import { useBenchAddon } from "../dist/internal.js";

export { requireGpu, runMeta } from "../dist/testing.js";

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
