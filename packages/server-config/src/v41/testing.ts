/** Test oracles for the V4.1 code (exported on `./testing`). */
import type { V41SizingConfig } from "@dsv4-kv/memory-pool";
import { V41_MODEL_PRESETS } from "./presets.js";

/** V4.1-Flash with DSpark block 5 (6 draft tokens), P = 256, ratio-mode SWA 0.1, no request count or cap. */
export function v41FlashDsparkConfig(over: Partial<V41SizingConfig> = {}): V41SizingConfig {
  const model = V41_MODEL_PRESETS["DeepSeek-V4.1-Flash"]!;
  return {
    model,
    pageSize: 256,
    contextLen: model.contextLen,
    isSpeculative: true,
    draftTokens: 6,
    maxRunningRequests: null,
    swaCapTokens: null,
    swaFullTokensRatio: 0.1,
    ...over,
  };
}
