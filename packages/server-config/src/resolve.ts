/**
 * DSV4 defaults and overrides (docs/reference/startup-rules.md §2.1), speculative derivations
 * (docs/reference/startup-rules.md §3), derived values (docs/reference/startup-rules.md §4) and the server-arg and
 * configurator validation rules (docs/reference/startup-rules.md §5, §6). The resolution derives every value and
 * note first; the rules of the RULES table (rules.ts, one module per family in rules/) then read the result and
 * collect every problem as a `ConfigIssue`; nothing throws for a bad configuration.
 */
import { MemoryPoolError, compressStateRingSize, compressStateWritePad, type SizingConfig } from "@dsv4-kv/memory-pool";
import { stageFacts, type StageFacts } from "@dsv4-kv/memory-pool/internal";
import { type ModelPreset, requireModelPreset } from "./presets.js";
import { type ConfigIssue, evaluateResolveRules } from "./rules.js";
import { STATE_DTYPES } from "./rules/dtype.js";
import { SPECULATIVE_ALGORITHMS_ACCEPTED, type ServerArgs, requireServerArgs } from "./schema.js";

export { ringDraftIssue, type RingDraftParams } from "./rules/pools.js";

export interface ConfigNote {
  field: string;
  kind: "defaulted" | "corrected" | "forced";
  from: unknown;
  to: unknown;
  reason: string;
}

/** Built-in adaptive step ladder [ASSUMED: third-party docs give only its maximum, 7]. */
export const DEFAULT_ADAPTIVE_CANDIDATES: readonly number[] = [1, 3, 5, 7];

export const DSV4_DEFAULTS = {
  pageSizeCuda: 256,
  pageSizeNpu: 128,
  swaFullTokensRatio: 0.1,
  maxRunningRequests: 256,
  kvCacheDtype: "fp8_e4m3",
  hisparseHostToDeviceRatio: 2,
} as const;

export interface DerivedValues {
  effectivePageSize: number;
  isSpeculative: boolean;
  speculativeAlgorithm: "EAGLE" | "DSPARK" | null;
  speculativeNumSteps: number | null;
  speculativeEagleTopk: number | null;
  draftTokens: number;
  maxDraftTokens: number;
  adaptiveCandidates: number[] | null;
  /** Tokens allocated per request per decode step (docs/reference/startup-rules.md §3). */
  allocLenPerDecode: number;
  ringSizes: { c4: number | null; c128: number | null };
  writePads: { c4: number | null; c128: number | null };
  /** min over the rings in use of their write pad (c128 excluded when online). */
  maxDraftTokensServed: number | null;
  attnDpSize: number;
  mrrPerWorker: number;
  numReqSlots: number;
  swaRatio: number;
  stateDtypeBytes: 4 | 2;
  onlineC128: boolean;
  onlineC128Mtp: boolean;
  hisparseRatio: number;
  kvCacheDtype: string;
  contextLen: number;
  layers: { total: number; ratio0: number; ratio4: number; ratio128: number };
}

export interface ResolvedServerConfig {
  args: ServerArgs;
  model: ModelPreset;
  derived: DerivedValues;
  notes: ConfigNote[];
  issues: ConfigIssue[];
  /** The memory-pool sizing config of this resolution (mode filled by the caller). */
  sizing: SizingConfig;
}

type Note = (note: ConfigNote) => void;

/** DSV4 model overrides (they run before the speculative hook upstream): page size, backend, SWA ratio, mrr, dtype. */
function modelOverrides(args: ServerArgs, note: Note) {
  const effectivePageSize = args.platform === "npu" ? DSV4_DEFAULTS.pageSizeNpu : DSV4_DEFAULTS.pageSizeCuda;
  if (args.pageSize == null)
    note({
      field: "pageSize",
      kind: "defaulted",
      from: null,
      to: effectivePageSize,
      reason: `DSV4 uses page size ${effectivePageSize} on ${args.platform}`,
    });
  else if (args.pageSize !== effectivePageSize) {
    note({
      field: "pageSize",
      kind: "corrected",
      from: args.pageSize,
      to: effectivePageSize,
      reason: `the DSV4 model override always replaces --page-size with ${effectivePageSize} on ${args.platform} (upstream logs it; the pool asserts it)`,
    });
  }
  if (args.attentionBackend !== "dsv4") {
    note({
      field: "attentionBackend",
      kind: args.attentionBackend == null ? "defaulted" : "forced",
      from: args.attentionBackend,
      to: "dsv4",
      reason:
        args.attentionBackend === "compressed"
          ? "`compressed` is a deprecated alias of dsv4"
          : "DSV4 forces the dsv4 attention backend",
    });
  }
  const swaRatio = args.swaFullTokensRatio ?? DSV4_DEFAULTS.swaFullTokensRatio;
  if (args.swaFullTokensRatio == null)
    note({
      field: "swaFullTokensRatio",
      kind: "defaulted",
      from: null,
      to: swaRatio,
      reason: "DSV4 default SWA:full token ratio",
    });
  const maxRunningRequests = args.maxRunningRequests ?? DSV4_DEFAULTS.maxRunningRequests;
  if (args.maxRunningRequests == null) {
    note({
      field: "maxRunningRequests",
      kind: "defaulted",
      from: null,
      to: maxRunningRequests,
      reason: "DSV4 default (the model hook runs before the speculative hook, whose default would be 48)",
    });
  }
  let kvCacheDtype = args.kvCacheDtype;
  if (kvCacheDtype === "auto") {
    // The Ascend NPU pool keeps the model dtype (bf16); CUDA and ROCm store fp8_e4m3.
    kvCacheDtype = args.platform === "npu" ? "bfloat16" : DSV4_DEFAULTS.kvCacheDtype;
    note({
      field: "kvCacheDtype",
      kind: "defaulted",
      from: "auto",
      to: kvCacheDtype,
      reason: `auto resolves to ${kvCacheDtype} for DSV4 on ${args.platform}`,
    });
  }
  return { effectivePageSize, swaRatio, maxRunningRequests, kvCacheDtype };
}

/** Environment switches: the state dtype's bytes (undefined when unknown: V-D1) and online compress off on HIP. */
function environment(args: ServerArgs, note: Note) {
  const stateDtypeBytes = STATE_DTYPES[args.compressStateDtype.toLowerCase()];
  let onlineC128 = args.onlineCompress;
  if (onlineC128 && args.platform === "hip") {
    onlineC128 = false;
    note({
      field: "onlineCompress",
      kind: "forced",
      from: true,
      to: false,
      reason: "online compress is forced off on ROCm/HIP",
    });
  }
  return { stateDtypeBytes, onlineC128 };
}

interface Speculation {
  algorithm: "EAGLE" | "DSPARK" | null;
  steps: number | null;
  topk: number | null;
  draftTokens: number;
  maxDraftTokens: number;
  adaptiveCandidates: number[] | null;
}

/** EAGLE (docs/reference/startup-rules.md §3.1, §3.3): steps, draft tokens steps + 1, the adaptive ladder. */
function eagle(args: ServerArgs, note: Note, spec: Speculation): void {
  spec.topk = args.speculativeEagleTopk;
  if (args.speculativeAdaptive) {
    const candidates = [...(args.speculativeAdaptiveCandidates ?? DEFAULT_ADAPTIVE_CANDIDATES)].sort((a, b) => a - b);
    spec.adaptiveCandidates = candidates;
    const middle = candidates[Math.floor(candidates.length / 2)]!;
    spec.steps = args.speculativeNumSteps ?? middle;
    if (args.speculativeNumSteps == null)
      note({
        field: "speculativeNumSteps",
        kind: "defaulted",
        from: null,
        to: spec.steps,
        reason: "adaptive: the middle candidate",
      });
    spec.maxDraftTokens = Math.max(...candidates) + 1;
  } else {
    spec.steps = args.speculativeNumSteps;
    if (spec.steps == null && args.speculativeNumDraftTokens != null) {
      spec.steps = args.speculativeNumDraftTokens - 1;
      note({
        field: "speculativeNumSteps",
        kind: "defaulted",
        from: null,
        to: spec.steps,
        reason: "EAGLE topk 1: steps = draft tokens − 1 [ASSUMED; upstream auto-choice is model-dependent]",
      });
    }
  }
  const steps = spec.steps;
  if (steps == null || steps < 1) return; // V-S2 refuses it
  spec.draftTokens = steps + 1;
  const given = args.speculativeNumDraftTokens;
  if (given == null)
    note({
      field: "speculativeNumDraftTokens",
      kind: "defaulted",
      from: null,
      to: spec.draftTokens,
      reason: `EAGLE topk 1: steps + 1 = ${steps} + 1`,
    });
  else if (given !== spec.draftTokens && spec.topk === 1)
    note({
      field: "speculativeNumDraftTokens",
      kind: "corrected",
      from: given,
      to: spec.draftTokens,
      reason: `EAGLE topk 1 verifies steps + 1 = ${spec.draftTokens} tokens`,
    });
  else if (given !== spec.draftTokens) spec.draftTokens = given;
  if (!args.speculativeAdaptive) spec.maxDraftTokens = spec.draftTokens;
}

/** DSpark (docs/reference/startup-rules.md §3.2): one step, top-k 1, verify width γ + 1. */
function dspark(args: ServerArgs, model: ModelPreset, note: Note, spec: Speculation): void {
  if (args.speculativeNumSteps != null && args.speculativeNumSteps !== 1)
    note({
      field: "speculativeNumSteps",
      kind: "forced",
      from: args.speculativeNumSteps,
      to: 1,
      reason: "DSpark drafts one block per step",
    });
  if (args.speculativeEagleTopk != null && args.speculativeEagleTopk !== 1)
    note({
      field: "speculativeEagleTopk",
      kind: "forced",
      from: args.speculativeEagleTopk,
      to: 1,
      reason: "DSpark uses topk 1",
    });
  spec.steps = 1;
  spec.topk = 1;
  const gamma = args.speculativeDsparkBlockSize ?? model.dsparkBlockSize;
  if (args.speculativeDsparkBlockSize == null && gamma != null)
    note({
      field: "speculativeDsparkBlockSize",
      kind: "defaulted",
      from: null,
      to: gamma,
      reason: `from the ${model.name} draft checkpoint (dspark_block_size)`,
    });
  if (gamma == null || gamma <= 0) return; // V-S1 refuses it
  spec.draftTokens = gamma + 1;
  spec.maxDraftTokens = spec.draftTokens;
  if (args.speculativeNumDraftTokens == null)
    note({
      field: "speculativeNumDraftTokens",
      kind: "defaulted",
      from: null,
      to: spec.draftTokens,
      reason: `DSpark verify window γ + 1 = ${gamma} + 1`,
    });
}

/** Speculative derivations, including the declared maximum (docs/reference/startup-rules.md §3, §3.4). */
function speculation(args: ServerArgs, model: ModelPreset, note: Note): Speculation {
  const raw = args.speculativeAlgorithm;
  const accepted = raw != null && (SPECULATIVE_ALGORITHMS_ACCEPTED as readonly string[]).includes(raw);
  const spec: Speculation = {
    algorithm: accepted ? (raw as "EAGLE" | "DSPARK") : null,
    steps: null,
    topk: null,
    draftTokens: 1,
    maxDraftTokens: 0,
    adaptiveCandidates: null,
  };
  if (spec.algorithm === "EAGLE") eagle(args, note, spec);
  else if (spec.algorithm === "DSPARK") dspark(args, model, note, spec);
  if (args.maxSpeculativeNumDraftTokens != null && spec.algorithm != null)
    spec.maxDraftTokens = Math.max(spec.maxDraftTokens, args.maxSpeculativeNumDraftTokens);
  return spec;
}

/** Layer counts, ring sizes and write pads from the pool's stages; a MemoryPoolError is kept for V-K1. */
function rings(sizing: SizingConfig, draftTokens: number) {
  const layers = { total: 0, ratio0: 0, ratio4: 0, ratio128: 0 };
  const ringSizes: DerivedValues["ringSizes"] = { c4: null, c128: null };
  const writePads: DerivedValues["writePads"] = { c4: null, c128: null };
  let maxDraftTokensServed: number | null = null;
  let stages: StageFacts[] | null = null;
  let poolError: MemoryPoolError | null = null;
  const { isSpeculative } = sizing;
  const onlineC128 = !!sizing.onlineC128;
  try {
    const built = stageFacts(sizing);
    for (const s of built) {
      layers.total += s.layers;
      layers.ratio4 += s.layersC4;
      layers.ratio128 += s.layersC128;
    }
    layers.ratio0 = layers.total - layers.ratio4 - layers.ratio128;
    const ringOptions = { isSpeculative, onlineC128, onlineC128Mtp: true, draftTokens };
    if (layers.ratio4 > 0) {
      ringSizes.c4 = compressStateRingSize(4, ringOptions);
      writePads.c4 = compressStateWritePad(4, ringSizes.c4);
    }
    if (layers.ratio128 > 0) {
      ringSizes.c128 = compressStateRingSize(128, ringOptions);
      writePads.c128 = compressStateWritePad(128, ringSizes.c128);
    }
    const served = [
      layers.ratio4 > 0 ? writePads.c4 : null,
      layers.ratio128 > 0 && !onlineC128 ? writePads.c128 : null,
    ].filter((v): v is number => v != null);
    maxDraftTokensServed = served.length ? Math.min(...served) : null;
    stages = built;
  } catch (e) {
    if (!MemoryPoolError.isInstance(e)) throw e;
    poolError = e as MemoryPoolError;
  }
  return { layers, ringSizes, writePads, maxDraftTokensServed, stages, poolError };
}

export function resolveServerConfig(args: ServerArgs, model: ModelPreset): ResolvedServerConfig {
  args = requireServerArgs(args);
  requireModelPreset(model);
  const notes: ConfigNote[] = [];
  const note: Note = (n) => notes.push(n);
  const overrides = modelOverrides(args, note);
  const { stateDtypeBytes, onlineC128 } = environment(args, note);
  const spec = speculation(args, model, note);
  // An algorithm that fails V-A1 still counts as speculative: the pools are sized as upstream would try to.
  const isSpeculative = args.speculativeAlgorithm != null;
  const draftTokens = spec.algorithm == null ? 1 : spec.draftTokens;
  const maxDraftTokens = spec.algorithm == null ? 0 : spec.maxDraftTokens;
  const hisparseRatio = args.enableHisparse
    ? (args.hisparseHostToDeviceRatio ?? DSV4_DEFAULTS.hisparseHostToDeviceRatio)
    : 1;
  const attnDpSize = args.enableDpAttention ? args.dpSize : 1;
  const mrrPerWorker = Math.floor(overrides.maxRunningRequests / attnDpSize);
  const extraSlots = args.disaggregationMode === "decode" ? args.disaggregationDecodeExtraSlots : 0;
  const sizing: SizingConfig = {
    model,
    pageSize: overrides.effectivePageSize,
    swaFullTokensRatio: overrides.swaRatio,
    isSpeculative,
    maxDraftTokens,
    maxRunningRequests: overrides.maxRunningRequests,
    attnDpSize,
    ppSize: args.ppSize,
    disaggregationMode: args.disaggregationMode,
    disaggregationDecodeExtraSlots: args.disaggregationDecodeExtraSlots,
    hisparseRatio: Math.max(hisparseRatio, 1),
    onlineC128,
    // V-S6 already reports online + speculation without the switch; sizing proceeds so the report shows pools.
    onlineC128Mtp: true,
    stateDtypeBytes: stateDtypeBytes ?? 4,
    indexerFp4: args.enableDeepseekV4Fp4Indexer && args.platform === "hip",
    maxTotalTokens: args.maxTotalTokens,
    platform: args.platform,
  };
  const built = rings(sizing, draftTokens);
  const { steps, topk } = spec;
  const contextLen = args.contextLength ?? model.contextLen;
  const derived: DerivedValues = {
    effectivePageSize: overrides.effectivePageSize,
    isSpeculative,
    speculativeAlgorithm: spec.algorithm,
    speculativeNumSteps: steps,
    speculativeEagleTopk: topk,
    draftTokens,
    maxDraftTokens,
    adaptiveCandidates: spec.adaptiveCandidates,
    allocLenPerDecode: isSpeculative && steps != null && topk != null ? Math.max(steps * topk, maxDraftTokens) : 1,
    ringSizes: built.ringSizes,
    writePads: built.writePads,
    maxDraftTokensServed: built.maxDraftTokensServed,
    attnDpSize,
    mrrPerWorker,
    numReqSlots: mrrPerWorker + extraSlots + 1,
    swaRatio: overrides.swaRatio,
    stateDtypeBytes: stateDtypeBytes ?? 4,
    onlineC128,
    onlineC128Mtp: args.onlineC128Mtp,
    hisparseRatio,
    kvCacheDtype: overrides.kvCacheDtype,
    contextLen,
    layers: built.layers,
  };
  const facts = {
    rawAlgorithm: args.speculativeAlgorithm,
    maxRunningRequests: overrides.maxRunningRequests,
    stages: built.stages,
    poolError: built.poolError,
  };
  const issues = evaluateResolveRules({ args, model, derived, facts });
  return {
    args,
    model: { ...model, contextLen },
    derived,
    notes,
    issues,
    sizing: { ...sizing, model: { ...model, contextLen } },
  };
}
