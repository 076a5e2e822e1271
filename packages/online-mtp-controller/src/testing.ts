// Test helpers for this package and the packages above it; not for production code.
import { CpuBackend, type CpuFaults, injectCpuFaults } from "./cpu-backend.js";

export type { CpuFaults };
/** The float64 chunk references and derived bf16 bounds (docs/reference/online-mtp.md §5.4), for oracles above. */
export { ChunkReference } from "./bf16-reference.js";

/**
 * A CPU backend with deliberately wrong kernel rules, for mutation tests: an invariant that still passes against
 * it does not guard the rule it names.
 */
export class FaultyCpuBackend extends CpuBackend {
  constructor(faults: CpuFaults) {
    super();
    injectCpuFaults(this, faults);
  }
}
