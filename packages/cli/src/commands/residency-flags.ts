/** The flag pieces `prove residency` and `simulate residency` share: the pad formula, the ratio, the ring's label. */
import type { PadFormula } from "@dsv4-kv/planner";
import { UsageError } from "./args.js";
import { choice } from "./flags.js";

const PAD_FORMULAS = ["derived", "pre-fix-device", "pre-fix-host"] as const satisfies readonly PadFormula[];

/** `--ratio` of the ring commands (required where the command needs it: spread and add `required: true`). */
export const RATIO_FLAG = {
  type: "int",
  min: 1,
  max: 2 ** 31 - 1,
  arg: "2|4|128",
  help: "compression ratio (2: DeepSeek-V4.1's pair-state ring)",
} as const;

/** `--pad-formula`, default derived. */
export const PAD_FORMULA_FLAG = choice(
  PAD_FORMULAS,
  "derived | pre-fix-device (min(ring - ratio, 4)) | pre-fix-host (no pad)",
  "derived",
);

/** --ratio: the flag table takes any positive integer, so the message names the two the planner knows. */
export function requireRatio(ratio: number): 4 | 128 {
  if (ratio !== 4 && ratio !== 128) throw new UsageError("--ratio", ratio, "must be 4 or 128");
  return ratio;
}

/** --pad forces the pad that --pad-formula would derive: one or the other. */
export function refusePadWithFormula(pad: number | undefined, padFormula: PadFormula | undefined): void {
  if (pad !== undefined && padFormula !== undefined)
    throw new UsageError("--pad", pad, "cannot be combined with --pad-formula: give one");
}

export interface RingGeometry {
  compressRatio: number;
  ringSize: number;
  swaPageSize: number;
  useReqRing?: boolean;
}

/** `c4 ring 16 (paged, SWA page 256)`, `c128 ring 256 (request ring)`: c128 rings are always request-scoped. */
export function ringLabel(ring: RingGeometry): string {
  const kind = ring.compressRatio === 128 || ring.useReqRing ? "request ring" : `paged, SWA page ${ring.swaPageSize}`;
  return `c${ring.compressRatio} ring ${ring.ringSize} (${kind})`;
}
