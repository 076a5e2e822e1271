// What the other packages of this repository share with this one. Released in step with them (one changesets
// fixed group, docs/decisions.md#d36-internal-subpaths-are-released-in-step); no promise to anyone else.
export {
  INT32_MAX,
  PLAN_OPTION_KEYS,
  requireInteger,
  requireOptionKeys,
  requireOptionsObject,
  toIntArray,
} from "./inputs.js";
export {
  reqToTokenElementError,
  reqToTokenInt32,
  requireLegacyRid,
  type SlotMapGeometry,
  SlotResolver,
  slotMapGeometry,
} from "./addressing.js";
export { devicePathOf, type NormalizedPrefillOptions, normalizePrefillOptions, stage0Into } from "./prefill.js";
export { SeededRandom } from "./random.js";
export { validateDecodeInputs, validateLegacyDecode } from "./decode.js";
export { ResidencyScenarioRun } from "./residency.js";
export { type ResidencyProofEstimate, estimateResidencyProof } from "./prove/estimate.js";
export { describeBatches } from "./prove/replay.js";
