// What the other packages of this repository share with this one. Released in step with them (one changesets
// fixed group, docs/decisions.md#d36-internal-subpaths-are-released-in-step); no promise to anyone else.
export { DEFAULT_MODEL } from "./presets.js";
export { fmtBytes } from "./check.js";
export { VLLM_DEFAULTS } from "./vllm/inputs.js";
