// What other packages of this repository need from this one; not for users (no semver promise).
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
