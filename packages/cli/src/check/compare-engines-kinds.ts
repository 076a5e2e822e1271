/**
 * The per-kind figures of `check --compare-engines` and the causes of each difference. A kind's bytes per token of
 * capacity are layers × held tokens per token × bytes per held token on either engine, so the difference splits
 * exactly into the page layout (bytes per held token), the layer count, and what each engine holds per token
 * (vLLM: context or window, tokens in flight, block rounding; SGLang: its pools' sizes). The causes sum to the
 * difference of the two engines' bytes per token (docs/reference/engines-compared.md §3).
 */
import type {
  CheckReport,
  EngineCacheKind,
  EngineCauseId,
  EnginesComparison,
  VllmKvPlan,
} from "@dsv4-kv/server-config";
import { UsageError } from "../commands/args.js";

export interface KindFigures {
  layers: number;
  bytesPerToken: number;
  bytesPerHeldToken: number;
  /** Per layer, averaged over the kind's layers. */
  heldTokensPerToken: number;
  /** vLLM only: held tokens per token of context split into context-or-window, in flight and rounding. */
  split?: { window: number; inFlight: number; rounding: number; sliding: boolean; tokensPerBlock: number };
  /** vLLM only: the page before and after alignment padding. */
  page?: { rawBytes: number; bytes: number };
}

/** SGLang's pools as the common kinds (the CUDA pools; other platforms' pools have no vLLM counterpart here). */
const SGLANG_POOL_KIND: Readonly<Record<string, EngineCacheKind>> = {
  "swa-kv": "swa",
  "c4-kv": "c4-main",
  "c4-indexer-k": "c4-indexer",
  "c4-attention-state": "c4-attention-state",
  "c4-indexer-state": "c4-indexer-state",
  "c128-kv": "c128-main",
  "c128-attention-state": "c128-state",
  "c128-online-state": "c128-state",
  "draft-swa-kv": "draft",
};

/** Per kind on SGLang (pipeline stage 0): a byte pool's row is a page of page-size tokens, a state pool's one row. */
export function sglangKinds(report: CheckReport): Map<EngineCacheKind, KindFigures> {
  const sizing = report.sizing!;
  const tokens = sizing.sizes.maxTotalNumTokens;
  const acc = new Map<EngineCacheKind, { layers: number; bytes: number; held: number }>();
  for (const pool of sizing.stages[0]!.pools) {
    const kind = SGLANG_POOL_KIND[pool.id];
    if (kind === undefined)
      throw new UsageError(
        "--compare-engines",
        true,
        `models the CUDA pools: SGLang's ${pool.id} pool has no vLLM twin`,
      );
    const rowTokens = pool.dtype === "uint8" ? sizing.pageSize : 1;
    const a = acc.get(kind) ?? { layers: 0, bytes: 0, held: 0 };
    acc.set(kind, {
      layers: a.layers + pool.layers,
      bytes: a.bytes + pool.totalBytes,
      held: a.held + pool.layers * (pool.shapePerLayer[0] as number) * rowTokens,
    });
  }
  const out = new Map<EngineCacheKind, KindFigures>();
  for (const [kind, a] of acc) {
    out.set(kind, {
      layers: a.layers,
      bytesPerToken: a.bytes / tokens,
      bytesPerHeldToken: a.bytes / a.held,
      heldTokensPerToken: a.held / a.layers / tokens,
    });
  }
  return out;
}

function vllmKindOf(kind: VllmKvPlan["specs"][number]["kind"], layer: number, targetLayers: number): EngineCacheKind {
  if (kind === "swa") return layer >= targetLayers ? "draft" : "swa";
  if (kind === "c4-attn-state") return "c4-attention-state";
  return kind;
}

/** Per kind on vLLM, per request of max_model_len divided by it: independent of the budget. */
export function vllmKinds(plan: VllmKvPlan, targetLayers: number): Map<EngineCacheKind, KindFigures> {
  const L = plan.input.maxModelLen;
  const { inFlightTokens, extraRetainedTokens } = plan.request;
  const out = new Map<EngineCacheKind, KindFigures>();
  plan.grouping.groups.forEach((g, i) => {
    const blocks = plan.blocksPerRequest.perGroup[i] as number;
    const b = g.blockSizeTokens;
    const held = blocks * b;
    const exact =
      g.type === "full" ? L : Math.min((g.slidingWindowTokens as number) - 1 + extraRetainedTokens + inFlightTokens, L);
    const window = g.type === "full" ? L : Math.min((g.slidingWindowTokens as number) - 1 + extraRetainedTokens, L);
    for (const spec of g.specs) {
      const kind = vllmKindOf(spec.kind, spec.layer, targetLayers);
      const f = out.get(kind);
      const split = f?.split ?? {
        window: 0,
        inFlight: 0,
        rounding: 0,
        sliding: g.type === "sliding",
        tokensPerBlock: b,
      };
      out.set(kind, {
        layers: (f?.layers ?? 0) + 1,
        bytesPerToken: (f?.bytesPerToken ?? 0) + (blocks * spec.pageBytes) / L,
        bytesPerHeldToken: spec.pageBytes / b,
        heldTokensPerToken: (f?.heldTokensPerToken ?? 0) + held / L,
        split: {
          ...split,
          window: split.window + window / L,
          inFlight: split.inFlight + (exact - window) / L,
          rounding: split.rounding + (held - exact) / L,
        },
        page: { rawBytes: spec.rawPageBytes, bytes: spec.pageBytes },
      });
    }
  });
  // Sums over layers become per-layer averages.
  for (const f of out.values()) {
    const n = f.layers;
    f.heldTokensPerToken /= n;
    const s = f.split!;
    f.split = { ...s, window: s.window / n, inFlight: s.inFlight / n, rounding: s.rounding / n };
  }
  return out;
}

type Cause = EnginesComparison["causes"][number];

export interface CauseInput {
  rows: EnginesComparison["kinds"];
  s: Map<EngineCacheKind, KindFigures>;
  v: Map<EngineCacheKind, KindFigures>;
  plan: VllmKvPlan;
  tokensS: number;
  strideBytesPerToken: number;
  /** vLLM's unused budget per token; null with no block. */
  unusedV: number | null;
  report: CheckReport;
}

const f2 = (x: number): string => x.toLocaleString("en-US", { maximumFractionDigits: 2 });
const f4 = (x: number): string => x.toLocaleString("en-US", { maximumFractionDigits: 4 });
const f6 = (x: number): string => x.toLocaleString("en-US", { maximumFractionDigits: 6 });
/** Differences below this (bytes per token) are rounding noise of doubles, not causes. */
const NOISE = 1e-9;

function kindCauses(kind: EngineCacheKind, s: KindFigures | undefined, v: KindFigures | undefined, plan: VllmKvPlan) {
  const out: Cause[] = [];
  const add = (id: EngineCauseId, bytesPerToken: number, text: string) => {
    if (Math.abs(bytesPerToken) > NOISE) out.push({ id, kind, bytesPerToken, text });
  };
  if (!s || !v) {
    const [n, who] = s ? [s.layers, "SGLang only"] : [v!.layers, "vLLM only"];
    add("layer-count", v ? v.bytesPerToken : -s!.bytesPerToken, `${n} ${kind} cache(s) on ${who}`);
    return out;
  }
  const sp = v.split!;
  const page = v.page!;
  add(
    "page-layout",
    v.layers * v.heldTokensPerToken * (v.bytesPerHeldToken - s.bytesPerHeldToken),
    `vLLM stores ${f4(v.bytesPerHeldToken)} B per token per layer (a ${f2(page.rawBytes)} B page of ` +
      `${sp.tokensPerBlock} padded to ${f2(page.bytes)} B), SGLang ${f4(s.bytesPerHeldToken)} B`,
  );
  add(
    "layer-count",
    (v.layers - s.layers) * v.heldTokensPerToken * s.bytesPerHeldToken,
    `vLLM registers ${v.layers} ${kind} caches, SGLang ${s.layers}`,
  );
  const scale = s.layers * s.bytesPerHeldToken;
  const L = plan.input.maxModelLen;
  if (sp.sliding) {
    add(
      "window-vs-pool",
      scale * (sp.window - s.heldTokensPerToken),
      `vLLM reserves the window (${f2(sp.window * L)} tokens) in every request, SGLang holds ` +
        `${f4(s.heldTokensPerToken)} per token of capacity in a pool sized by its own rule (SWA ratio, state rings)`,
    );
    add(
      "sliding-in-flight",
      scale * sp.inFlight,
      `vLLM keeps ${f2(sp.inFlight * L)} tokens in flight per request (max_concurrent_batches × ` +
        `--max-num-batched-tokens ${plan.input.maxNumBatchedTokens}): grows with that flag`,
    );
  } else {
    add(
      "sglang-page-rounding",
      scale * (1 - s.heldTokensPerToken),
      `SGLang holds ${f6(s.heldTokensPerToken)} tokens per token of capacity (its pool's spare pages)`,
    );
  }
  add(
    "block-rounding",
    scale * sp.rounding,
    `vLLM rounds each request up to whole ${sp.tokensPerBlock}-token blocks` +
      `${sp.sliding ? " plus one for a window off a block boundary" : ""}: ${f2(sp.rounding * L)} tokens per request`,
  );
  return out;
}

/** Every cause, per kind then for the pool as a whole; their sum is vLLM − SGLang bytes per token. */
export function engineCauses(c: CauseInput): Cause[] {
  const causes = c.rows.flatMap((r) => kindCauses(r.kind, c.s.get(r.kind), c.v.get(r.kind), c.plan));
  const stride = c.plan.grouping.blockStrideBytes;
  if (c.strideBytesPerToken > NOISE)
    causes.push({
      id: "page-stride",
      kind: null,
      bytesPerToken: c.strideBytesPerToken,
      text:
        `every vLLM block is the largest group's ${f2(stride)} B; the ${c.plan.grouping.groups.length - 1} smaller ` +
        `groups leave ${f2(c.strideBytesPerToken * c.plan.input.maxModelLen)} B of each request's blocks unused`,
    });
  const sizing = c.report.sizing!;
  if (c.unusedV !== null) {
    const unusedS = sizing.unusedBytes / c.tokensS;
    const leftV = c.plan.budget.availableBytes - c.plan.poolBytes;
    const delta = c.unusedV - unusedS;
    if (Math.abs(delta) > NOISE)
      causes.push({
        id: "unused-budget",
        kind: null,
        bytesPerToken: delta,
        text: `vLLM leaves ${f2(leftV)} B of its budget unallocated (under one block), SGLang ${f2(sizing.unusedBytes)} B`,
      });
  }
  return causes;
}
