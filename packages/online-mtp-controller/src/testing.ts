// Test helpers for this package and the packages above it; not for production code.
import { CpuBackend, type CpuFaults, injectCpuFaults } from "./cpu-backend.js";

export type { CpuFaults };

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
