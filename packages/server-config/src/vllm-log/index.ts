// vLLM start-up logs of DeepSeek-V4 (docs/reference/vllm-kv-cache.md §15-16): read, reconcile with planVllmKvCache.
export type * from "./types.js";
export { MAX_VLLM_LOG_CHARS, type ParseVllmLogOptions, parseVllmLog } from "./parse.js";
export { type VllmLogInputs, type VllmLogOverrides, inputsFromArgs, readLogInputs } from "./args.js";
export { type VllmReconcileOptions, reconcileVllmLog } from "./reconcile.js";
export { MODELLED_FROM_VERSION } from "../vllm/versions.js";
export { type LaunchArgs, launchArgs } from "./launch-args.js";
