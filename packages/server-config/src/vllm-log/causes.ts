/**
 * Why a vLLM log's KV figures differ from ours, as a named cause. First the alternatives for inputs the log does not
 * state (each recomputes every figure; the first that reproduces them all is the cause): the batched-token budget
 * (vLLM's default depends on the device and the entry point), async scheduling, the FP4 indexer cache, and the
 * layer-tuple stride some builds used. Then, when none does, the reason nothing here sizes the log: a draft or
 * layout the model leaves out, a vLLM version older than the modelled sizing, or no known cause (with the residual).
 */
import { VLLM_DEFAULTS, type VllmKvInput } from "../vllm/inputs.js";
import type { ReadInputs } from "./args.js";
import type { StrideMode } from "./recompute.js";
import type { ParsedVllmLog, VllmFigureCause, VllmVersionUsed } from "./types.js";

export interface CauseEnv {
  id: string;
  text: string;
  input: Omit<VllmKvInput, "budget">;
  stride: StrideMode;
}

/** vLLM's default budgets of batched tokens across devices and entry points (docs/reference/vllm-kv-cache.md §8). */
const BATCHED_TOKEN_TIERS = [2048, 4096, 8192, 16384, 32768];

const stated = (read: ReadInputs, key: keyof ReadInputs["values"]) =>
  read.sources.some((s) => s.from !== "default" && s.field === key);

/** Alternatives for the inputs the log leaves unstated, single changes first, then pairs. */
export function alternatives(base: CauseEnv, read: ReadInputs, version: VllmVersionUsed): CauseEnv[] {
  const input = base.input;
  const t = input.maxNumBatchedTokens ?? VLLM_DEFAULTS.maxNumBatchedTokens;
  const async = input.asyncScheduling ?? VLLM_DEFAULTS.asyncScheduling;
  const singles: CauseEnv[] = [];
  const tiers = stated(read, "maxNumBatchedTokens") ? [] : BATCHED_TOKEN_TIERS.filter((x) => x !== t);
  for (const tier of tiers)
    singles.push({
      ...base,
      id: "unlogged-batched-tokens",
      text: `max_num_batched_tokens ${tier}: the log does not state it (vLLM's default depends on the device and the entry point; ours is ${t})`,
      input: { ...input, maxNumBatchedTokens: tier },
    });
  if (!stated(read, "asyncScheduling"))
    singles.push({
      ...base,
      id: "async-scheduling-unknown",
      text: `async scheduling ${async ? "off" : "on"}: the log does not say, and it sets the tokens in flight (${async ? "T, not 2T" : "2T, not T"})`,
      input: { ...input, asyncScheduling: !async },
    });
  if (!stated(read, "fp4IndexerCache"))
    singles.push({
      ...base,
      id: "fp4-indexer-unlogged",
      text: "the FP4 indexer cache (68 B keys): the log neither sets nor prints the indexer cache",
      input: { ...input, fp4IndexerCache: !input.fp4IndexerCache },
    });
  // A log that prints no version may come from a build with the other sliding reservation (vLLM before 0.26).
  if (version.from === "default") {
    const other = input.inFlightRule === "batchedTokens" ? "concurrentBatches" : "batchedTokens";
    const what =
      other === "batchedTokens"
        ? "max_num_batched_tokens alone (vLLM before 0.26)"
        : "every concurrent batch's tokens (vLLM 0.26 and later)";
    singles.push({
      ...base,
      id: "version-unlogged",
      text: `the sliding groups reserving ${what}: the log prints no vLLM version`,
      input: { ...input, inFlightRule: other },
    });
  }
  singles.push({
    ...base,
    id: "layer-tuple-stride",
    text: "a layer-tuple layout (blocks priced at tuples × tuple bytes, as the start-up check prices them), which some builds and forks used instead of the packed stride",
    stride: "layer-tuple",
  });
  const pairs: CauseEnv[] = [];
  for (const a of singles.filter((s) => s.id === "unlogged-batched-tokens"))
    for (const b of singles.filter((s) => s.id !== "unlogged-batched-tokens"))
      pairs.push({
        id: `${a.id}+${b.id}`,
        text: `${a.text}; and ${b.text}`,
        input: { ...a.input, ...pick(b, a) },
        stride: b.stride,
      });
  return [...singles, ...pairs];
}

/** What `b` changes relative to the base, laid over `a`'s input. */
function pick(b: CauseEnv, a: CauseEnv): Partial<CauseEnv["input"]> {
  return {
    asyncScheduling: b.input.asyncScheduling,
    fp4IndexerCache: b.input.fp4IndexerCache,
    inFlightRule: b.input.inFlightRule,
    maxNumBatchedTokens: a.input.maxNumBatchedTokens,
  };
}

/** The cause of a difference: the first alternative that reproduces every figure, else a named reason. */
export function findCause(
  base: CauseEnv,
  read: ReadInputs,
  parsed: ParsedVllmLog,
  version: VllmVersionUsed,
  reproduces: (env: CauseEnv) => boolean,
): VllmFigureCause {
  for (const env of alternatives(base, read, version))
    if (reproduces(env)) return { id: env.id, explained: true, text: `reproduced with ${env.text}` };
  const draft = read.notModelled.find((n) => n.name === "draft KV groups" || n.name === "speculative_config");
  if (draft)
    return {
      id: "draft-not-modelled",
      explained: false,
      text: `the draft's KV (${draft.name}: ${draft.value}) lives in groups the model does not build: no alternative reproduces the figures`,
    };
  const mention = parsed.layoutMentions[0];
  if (mention)
    return {
      id: "layout-not-modelled",
      explained: false,
      text: `line ${mention.line} names the ${mention.layout} layout (a community fork's 4-bit pages, not modelled; only fp8_ds_mla is): no alternative reproduces the figures`,
    };
  if (!version.behaviour.confirmed)
    return {
      id: "version-sizing",
      explained: false,
      text: `vLLM ${version.version} is sized as ${version.behaviour.id} (${version.behaviour.inFlight}), which no public log confirms: no alternative reproduces the figures`,
    };
  return {
    id: "unexplained",
    explained: false,
    text: "no alternative for the inputs the log leaves unstated reproduces the figures; the residual is the difference shown",
  };
}
