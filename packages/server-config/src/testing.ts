// Test helpers for this package and the packages above it; not for production code.
/** A config.json a checkpoint of a preset ships, in either layout (fixtures for model-source tests). */
export { presetConfigJson } from "./model-config.js";
/** The DSV4 sizing lines a configurator generation logs for a report's budget (reconciliation fixtures). */
export { renderSglangSizingLog, type RenderLogOptions } from "./sglang-log/render-log.js";
/** V4.1-Flash with DSpark block 5 (6 draft tokens), P = 256, ratio-mode SWA 0.1: the V4.1 log tests' sizing config. */
export { v41FlashDsparkConfig } from "./v41/testing.js";
