/**
 * The figures vLLM prints, recomputed from an anchor under one set of inputs: the block counts the anchor allows
 * (a logged "X GiB" is a range of bytes, so a range of blocks), and for each the tokens and concurrency vLLM would
 * print; the refusal's needed GiB and estimate. `stride` "packed" is vLLM's layout (docs/reference/vllm-kv-cache.md,
 * "Groups and the page stride"); "layer-tuple" prices a block at tuples × tuple bytes, as the start-up check does and
 * a layer-tuple planner did.
 */
import { admissionBytesNeeded, admissionBytesPerBlock, estimatedMaxModelLen } from "../vllm/admission.js";
import type { VllmKvInput } from "../vllm/inputs.js";
import { planVllmKvCache } from "../vllm/model.js";
import { printedFigures, pythonRound2 } from "../vllm/printed.js";

export const GIB = 2 ** 30;

/** Bytes a logged GiB figure stands for: [x − ½ ulp, x + ½ ulp) of its printed decimals. */
export function gibRange(value: number, decimals: number): { lo: number; hi: number } {
  const half = 0.5 * 10 ** -decimals;
  return { lo: Math.max(0, Math.ceil((value - half) * GIB)), hi: Math.floor((value + half) * GIB) };
}

export type StrideMode = "packed" | "layer-tuple";

/** What bounds the blocks: a byte range (a budget), or the printed tokens (no budget logged). */
export type Anchor = { kind: "bytes"; lo: number; hi: number } | { kind: "tokens"; tokens: number };

export interface Recomputed {
  strideBytes: number;
  blocksPerRequest: number;
  /** Block counts the anchor allows (empty: none prints the anchor's tokens). */
  blocks: number[];
  tokens: number[];
  concurrency: string[];
  /** With bytes known exactly: vLLM's print of them. */
  availableText: string | null;
}

/** The plan's shape without a budget (groups, blocks per request, the check's price per block). */
export function shapeOf(input: Omit<VllmKvInput, "budget">) {
  return planVllmKvCache({ ...input, budget: { kind: "availableBytes", bytes: 0 } });
}

export function recompute(input: Omit<VllmKvInput, "budget">, anchor: Anchor, stride: StrideMode): Recomputed {
  const plan = shapeOf(input);
  const strideBytes = stride === "packed" ? plan.grouping.blockStrideBytes : admissionBytesPerBlock(plan.grouping);
  const bpr = plan.blocksPerRequest.total;
  const len = plan.input.maxModelLen;
  let blocks: number[];
  if (input.numGpuBlocksOverride) blocks = [input.numGpuBlocksOverride];
  else if (anchor.kind === "bytes") {
    blocks = [];
    for (let nb = Math.floor(anchor.lo / strideBytes); nb <= Math.floor(anchor.hi / strideBytes); nb++) blocks.push(nb);
  } else {
    const guess = Math.round((anchor.tokens / len) * bpr);
    blocks = [guess - 2, guess - 1, guess, guess + 1, guess + 2].filter(
      (nb) => nb > 0 && printedFigures(nb, bpr, len).kvCacheSizeTokens === anchor.tokens,
    );
  }
  const printed = blocks.map((nb) => printedFigures(nb, bpr, len));
  const exact = anchor.kind === "bytes" && anchor.lo === anchor.hi;
  return {
    strideBytes,
    blocksPerRequest: bpr,
    blocks,
    tokens: [...new Set(printed.map((p) => p.kvCacheSizeTokens))],
    concurrency: [...new Set(printed.map((p) => p.maxConcurrencyText))],
    availableText: exact ? pythonRound2(anchor.lo / GIB) : null,
  };
}

/** The refusal's figures for a request of `maxModelLen` with `available` bytes (a range). */
export function recomputeRefusal(input: Omit<VllmKvInput, "budget">, available: { lo: number; hi: number }) {
  const plan = shapeOf(input);
  const needed = admissionBytesNeeded(plan.grouping, plan.request);
  const estimate = (bytes: number) =>
    needed <= bytes ? null : estimatedMaxModelLen(plan.grouping, plan.request, bytes);
  const lo = estimate(available.lo);
  const hi = estimate(available.hi);
  return { neededText: pythonRound2(needed / GIB), neededBytes: needed, estimates: [lo, hi] };
}
