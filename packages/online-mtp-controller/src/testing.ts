// Test helpers for this package and the packages above it; not for production code.
import { CpuBackend, type CpuFaults, injectCpuFaults } from "./cpu-backend.js";

export type { CpuFaults };
/** The float64 chunk references and derived bf16 bounds (docs/reference/online-mtp.md §5.4), for oracles above. */
export { ChunkReference } from "./bf16-reference.js";
/** The reference math of the state rows (fp32 steps as the kernels take them), for oracles in tests. */
export {
  type Precision,
  type TokenInput,
  type ErrorStats,
  clearedRow,
  updateRow,
  foldRow,
  segmentStats,
  mergeRows,
  offlinePool,
  chunkPos,
  fromBf16Bits,
  roundBf16,
  compareRows,
} from "./math.js";
export { bankRow } from "./layout.js";
/** Upstream's lifecycle (it loses commits the other controller keeps), to compare the two in tests. */
export { UpstreamOnlineMtpController } from "./controller.js";

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
