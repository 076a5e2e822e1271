/**
 * What the tensor-parallel layout must divide for DeepSeek-V4 (V-TP1, V-TP2, V-TP3) and SGLang's int32 token
 * indices (V-I1); docs/reference/startup-rules.md §5.15-5.18 and docs/reference/sglang-parallel-rules.md give the
 * SGLang code each one follows.
 */
import type { ResolveContext, SizedContext } from "./context.js";
import { type ConfigIssue, issuesOf } from "./issue.js";

/** SGLang's request-to-token table (`req_to_token`) holds full-pool token indices as int32. */
export const INT32_MAX = 0x7fffffff;

/** The MoE a2a backends for which SGLang sets the expert-parallel size to the TP size. */
const EP_EQUALS_TP_BACKENDS = new Set(["deepep", "mooncake", "ascend_fuseep", "flashinfer", "mori"]);

/** Attention TP width: the TP ranks that split one attention DP rank's heads (tp / dp under DP attention). */
export function attentionTpSize(args: ResolveContext["args"]): number {
  return args.enableDpAttention ? args.tpSize / args.dpSize : args.tpSize;
}

/**
 * V-TP2 (SGLang's `_handle_data_parallelism` assertion): with attention DP the TP ranks are split into `dp`
 * groups, so `dp` must divide `tp`. Without it, SGLang stops at start-up on `assert tp_size % dp_size == 0`.
 */
export function dpDividesTpRule({ args }: ResolveContext): ConfigIssue[] {
  const { out, add } = issuesOf("V-TP2");
  if (!args.enableDpAttention || args.tpSize % args.dpSize === 0) return out;
  add(
    "error",
    "TP_DIVISIBILITY",
    "dpSize",
    args.dpSize,
    `--enable-dp-attention splits the --tp-size ${args.tpSize} ranks into --dp-size ${args.dpSize} attention groups, but ${args.dpSize} does not divide ${args.tpSize} (SGLang asserts tp_size % dp_size == 0 at start-up): use a --dp-size that divides ${args.tpSize} (${divisorsOf(args.tpSize).join(", ")})`,
    { tpSize: args.tpSize, dpSize: args.dpSize },
  );
  return out;
}

/**
 * V-TP1: DeepSeek-V4's attention (MQALayer) splits its query heads and its output groups (`o_groups`) over the
 * attention TP ranks: `n_heads // attn_tp` local heads, `o_groups // attn_tp` local groups, and the wq_b / wo_a
 * column-parallel weights are divided exactly (SGLang's `divide` asserts). A width that does not divide both fails
 * at weight loading or at the first forward's reshape.
 */
export function attentionHeadsRule({ args, model }: ResolveContext): ConfigIssue[] {
  const { out, add } = issuesOf("V-TP1");
  if (args.enableDpAttention && args.tpSize % args.dpSize !== 0) return out; // V-TP2 already refuses the layout
  const attnTp = attentionTpSize(args);
  const width = args.enableDpAttention
    ? `attention TP size ${attnTp} (--tp-size ${args.tpSize} / --dp-size ${args.dpSize})`
    : `--tp-size ${attnTp}`;
  const facts: Array<[string, string, number | null | undefined]> = [
    ["numAttentionHeads", "num_attention_heads", model.numAttentionHeads],
    ["oGroups", "o_groups", model.oGroups],
  ];
  for (const [field, key, count] of facts) {
    if (count == null || count % attnTp === 0) continue;
    add(
      "error",
      "TP_DIVISIBILITY",
      args.enableDpAttention ? "dpSize" : "tpSize",
      args.enableDpAttention ? args.dpSize : args.tpSize,
      `${width} does not divide ${model.name}'s ${count} ${key}: SGLang's DSV4 attention gives each rank ${count} / ${attnTp} of them and stops at weight loading or the first forward; use an attention TP size among ${divisorsOf(count).join(", ")}`,
      {
        attentionTpSize: attnTp,
        [field]: count,
        tpSize: args.tpSize,
        dpSize: args.enableDpAttention ? args.dpSize : 1,
      },
    );
  }
  return out;
}

/**
 * V-TP3: the routed experts are split over the expert-parallel ranks and each expert's intermediate width over
 * the MoE TP ranks (`tp / ep`): SGLang's FusedMoE asserts `num_experts % ep_size == 0` and
 * `intermediate_size % moe_tp_size == 0`, and the MoE TP size only exists when `ep` divides `tp`.
 */
export function moeSplitRule({ args, model }: ResolveContext): ConfigIssue[] {
  const { out, add } = issuesOf("V-TP3");
  const epForced = EP_EQUALS_TP_BACKENDS.has(args.moeA2aBackend);
  const ep = epForced ? args.tpSize : args.epSize;
  const epText = epForced
    ? `expert-parallel size ${ep} (--moe-a2a-backend ${args.moeA2aBackend} sets it to --tp-size)`
    : `--ep-size ${ep}`;
  const field = epForced ? "tpSize" : "epSize";
  const params = { tpSize: args.tpSize, epSize: ep };
  if (args.tpSize % ep !== 0) {
    add(
      "error",
      "TP_DIVISIBILITY",
      field,
      ep,
      `${epText} does not divide --tp-size ${args.tpSize}: SGLang's MoE TP size is tp_size / ep_size; use an --ep-size among ${divisorsOf(args.tpSize).join(", ")}`,
      params,
    );
    return out;
  }
  const experts = model.nRoutedExperts;
  if (experts != null && experts % ep !== 0)
    add(
      "error",
      "TP_DIVISIBILITY",
      field,
      ep,
      `${epText} does not divide ${model.name}'s ${experts} routed experts (n_routed_experts): SGLang's FusedMoE asserts num_experts % ep_size == 0; use an expert-parallel size among ${divisorsOf(experts).join(", ")}`,
      { ...params, nRoutedExperts: experts },
    );
  const moeTp = args.tpSize / ep;
  const width = model.moeIntermediateSize;
  if (width != null && width % moeTp !== 0)
    add(
      "error",
      "TP_DIVISIBILITY",
      "tpSize",
      args.tpSize,
      `the MoE TP size ${moeTp} (--tp-size ${args.tpSize} / ${epText}) does not divide ${model.name}'s moe_intermediate_size ${width}: SGLang's FusedMoE asserts intermediate_size % moe_tp_size == 0; use a --tp-size / --ep-size ratio among ${divisorsOf(
        width,
      )
        .filter((d) => d <= 64)
        .join(", ")}`,
      { ...params, moeTpSize: moeTp, moeIntermediateSize: width },
    );
  return out;
}

/**
 * V-I1: SGLang keeps token indices as int32 (`req_to_token`, the attention page tables): the full pool hands out
 * indices up to F + page size − 1 (slot 0 is a null slot and the pool holds a page beyond F). A budget
 * that sizes more full tokens gives indices that wrap.
 */
export function tokenIndexRangeRule({ sizing }: SizedContext): ConfigIssue[] {
  const { out, add } = issuesOf("V-I1");
  const tokens = sizing.sizes.maxTotalNumTokens;
  const lastIndex = tokens + sizing.pageSize - 1;
  if (lastIndex <= INT32_MAX) return out;
  const most = INT32_MAX + 1 - sizing.pageSize;
  add(
    "error",
    "INT32_OVERFLOW",
    "maxTotalTokens",
    tokens,
    `the budget sizes ${tokens} full tokens (max_total_num_tokens), so the pool's token indices reach ${lastIndex}, past int32's ${INT32_MAX}: SGLang stores token indices in int32 (req_to_token) and they would wrap; cap the pool with --max-total-tokens ${most} or less, or give a smaller budget`,
    { maxTotalNumTokens: tokens, lastIndex, int32Max: INT32_MAX, maxTokens: most },
  );
  return out;
}

function divisorsOf(n: number): number[] {
  const out: number[] = [];
  for (let d = 1; d <= n && out.length < 12; d++) if (n % d === 0) out.push(d);
  return out;
}
