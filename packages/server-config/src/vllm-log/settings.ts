/**
 * The log's lines that are not sized from the budget: the budget itself and the weights (inputs, listed), and the
 * settings vLLM echoes (the block size it set, the KV format, the indexer cache, async scheduling, the batched-token
 * budget, the max model len), each an input when the log's arguments left it to that line, else compared with the
 * input the recomputation used.
 */
import { VLLM_DEFAULTS, type VllmKvInput } from "../vllm/inputs.js";
import { type ReadInputs, destOf } from "./args.js";
import type { ParsedVllmLog, VllmFigureComparison, VllmLoggedLine } from "./types.js";

interface SettingsCtx {
  parsed: ParsedVllmLog;
  read: ReadInputs;
  base: { input: Omit<VllmKvInput, "budget"> };
  anchorLine: VllmLoggedLine | null;
  out: VllmFigureComparison[];
}

function input(ctx: SettingsCtx, line: VllmLoggedLine, name: string, logged: string, why: string) {
  ctx.out.push({
    name,
    line: line.line,
    source: line.source,
    logged,
    computed: null,
    role: "input",
    verdict: null,
    why,
  });
}

export function inputFigures(ctx: SettingsCtx): void {
  const exact = ctx.read.values.kvCacheMemoryBytes !== undefined;
  for (const line of ctx.parsed.figures) {
    const n = line.numbers;
    if (line.kind === "available-kv-gib" && !exact) {
      const why =
        line === ctx.anchorLine
          ? "the budget: every KV figure is computed from it (the smallest rank's, as vLLM takes the smallest block count)"
          : "another rank's available memory; the smallest is the budget";
      input(ctx, line, "availableKvGiB", n.availableKvGiB!.text, why);
    } else if (line.kind === "weights-gib")
      input(ctx, line, "weightsGiB", n.weightsGiB!.text, "not used: the available KV memory is the budget");
    else if (line.kind === "cuda-graph-estimate")
      input(ctx, line, "cudaGraphGiB", n.cudaGraphGiB!.text, "not used: already subtracted in the available memory");
    else if (line.kind === "kv-cache-tokens" && line === ctx.anchorLine)
      input(
        ctx,
        line,
        "kvCacheTokens",
        n.kvCacheTokens!.text,
        "the anchor: no budget is logged, so the blocks are solved from it",
      );
    else if (line.kind === "refusal" && line === ctx.anchorLine)
      input(ctx, line, "refusal.availableKvGiB", n.availableKvGiB!.text, "the budget the refusal names");
    else if (line.kind === "independent-draft-groups")
      ctx.out.push({
        name: "draftKvGroups",
        line: line.line,
        source: line.source,
        logged: `${n.draftLayers!.text} ${line.text.method} layers in ${n.groups!.text} groups`,
        computed: null,
        role: "not-computed",
        verdict: null,
        why: "a draft whose KV layers keep their own cache groups: the model does not build them",
      });
  }
}

type Field =
  | "blockSize"
  | "kvCacheDtype"
  | "fp4IndexerCache"
  | "asyncScheduling"
  | "maxNumBatchedTokens"
  | "maxModelLen";

const setting = (field: Field, logged: string, ours: string, name: string = destOf(field)) => ({
  field,
  name,
  logged,
  ours,
});

/** The input a setting line echoes, as the model holds it (vLLM's default when no input states it). */
function settingOf(line: VllmLoggedLine, base: Omit<VllmKvInput, "budget">) {
  const n = line.numbers;
  const v = { ...VLLM_DEFAULTS, ...Object.fromEntries(Object.entries(base).filter(([, x]) => x !== undefined)) };
  switch (line.kind) {
    case "block-size":
      return setting("blockSize", String(n.blockSize!.value), String(v.blockSize));
    case "kv-format":
      return setting("kvCacheDtype", line.text.layout!, "fp8_ds_mla", "kv cache format");
    case "indexer-cache":
      return setting("fp4IndexerCache", line.text.indexer!, v.fp4IndexerCache ? "FP4" : "FP8", "use_fp4_indexer_cache");
    case "async-scheduling":
      return setting("asyncScheduling", line.text.state!, v.asyncScheduling ? "enabled" : "disabled");
    case "chunked-prefill":
      return setting("maxNumBatchedTokens", String(n.maxNumBatchedTokens!.value), String(v.maxNumBatchedTokens));
    case "max-model-len":
    case "max-concurrency":
      return setting("maxModelLen", String(n.maxModelLen!.value), String(base.maxModelLen));
    default:
      return null;
  }
}

export function settingFigures(ctx: SettingsCtx): void {
  for (const line of ctx.parsed.figures) {
    const s = settingOf(line, ctx.base.input);
    if (s === null) continue;
    const name = line.kind === "max-concurrency" ? "maxConcurrency.maxModelLen" : s.name;
    const fromLine = ctx.read.sources.some(
      (src) => src.from === "log-line" && src.line === line.line && src.field === s.field,
    );
    if (fromLine) {
      input(ctx, line, name, s.logged, "read from this line: the arguments do not state it");
      continue;
    }
    const same =
      s.logged.toLowerCase() === s.ours.toLowerCase() ||
      (s.name === "use_fp4_indexer_cache" && /FP4/i.test(s.logged) === /FP4/i.test(s.ours));
    ctx.out.push({
      name,
      line: line.line,
      source: line.source,
      logged: s.logged,
      computed: s.ours,
      role: "compared",
      verdict: same ? "equal" : "different",
      why: "the setting the recomputation used (the arguments', the flags' or vLLM's default)",
      ...(same
        ? {}
        : {
            cause: {
              id: "setting-differs",
              explained: true,
              text: `the log's line says ${s.logged} where the inputs say ${s.ours}: pass the log's value as a flag to recompute with it`,
            },
          }),
    });
  }
}
