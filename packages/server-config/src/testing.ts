// Test helpers for this package and the packages above it; not for production code.
/** A config.json a checkpoint of a preset ships, in either layout (fixtures for model-source tests). */
export { presetConfigJson } from "./model-config.js";
/** The DSV4 sizing lines a configurator generation logs for a report's budget (reconciliation fixtures). */
export { renderSglangSizingLog, type RenderLogOptions } from "./sglang-log/render-log.js";
