// Test helpers for this package and the packages above it; not for production code.
import type { CompressGeometry } from "./backend.js";
import { CpuCompressBackend, injectWritesFirst } from "./cpu-backend.js";

/**
 * A CPU backend with the launch order wrong: a prefill's writes land before its compressions, so a compression reads
 * the batch's own writes instead of the pre-batch ring (docs/reference/planner.md §8.3). Tests that must fail on it
 * show that they guard the order.
 */
export class WritesFirstCpuBackend extends CpuCompressBackend {
  constructor(geometry: CompressGeometry) {
    super(geometry);
    injectWritesFirst(this);
  }
}
