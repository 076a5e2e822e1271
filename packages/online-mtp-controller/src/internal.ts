// What the other packages of this repository share with this one. Released in step with them (one changesets
// fixed group, docs/decisions.md#d36-internal-subpaths-are-released-in-step); no promise to anyone else.
// Unchecked bf16 steps (@dsv4-kv/compress's CPU backend converts whole rows after validating them).
export { bf16BitsOf, bf16ValueOf, toBf16Bits, STATE_TOLERANCE } from "./math.js";
export { SEGMENT_FIELDS } from "./backend.js";
