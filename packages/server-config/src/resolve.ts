/**
 * DSV4 defaults and overrides (docs/reference/startup-rules.md §2.1), speculative derivations
 * (docs/reference/startup-rules.md §3), derived values (docs/reference/startup-rules.md §4) and the server-arg and
 * configurator validation rules (docs/reference/startup-rules.md §5, §6). Every problem is collected as a
 * `ConfigIssue`; nothing throws for a bad configuration.
 */
import type { ErrorCode } from "@dsv4-kv/errors";
import {
  MemoryPoolError,
  compressStateRingSize,
  compressStateWritePad,
  ringDraftViolations,
  stageFacts,
  type SizingConfig,
} from "@dsv4-kv/memory-pool";
import type { ModelPreset } from "./presets.js";
import { type ConfigIssue, type RuleRaising, makeIssue } from "./rules.js";
import { SPECULATIVE_ALGORITHMS_ACCEPTED, type ServerArgs } from "./schema.js";

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
  numDraftTokens: number;
  maxSpeculativeNumDraftTokens: number;
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

const STATE_DTYPES: Record<string, 4 | 2> = { float32: 4, fp32: 4, bfloat16: 2, bf16: 2 };

export function resolveServerConfig(args: ServerArgs, model: ModelPreset): ResolvedServerConfig {
  const notes: ConfigNote[] = [];
  const issues: ConfigIssue[] = [];
  type Params = Record<string, unknown>;
  const error = (
    rule: RuleRaising<"error">,
    code: ErrorCode,
    field: string,
    value: unknown,
    text: string,
    params?: Params,
  ) => issues.push(makeIssue({ rule, severity: "error", code, field, value, text, params }));
  const warn = (
    rule: RuleRaising<"warning">,
    code: ErrorCode,
    field: string,
    value: unknown,
    text: string,
    params?: Params,
  ) => issues.push(makeIssue({ rule, severity: "warning", code, field, value, text, params }));
  const arch = "DeepseekV4ForCausalLM";

  // --- Model overrides (run before the speculative hook upstream) ---
  const effectivePageSize = args.platform === "npu" ? DSV4_DEFAULTS.pageSizeNpu : DSV4_DEFAULTS.pageSizeCuda;
  if (args.pageSize == null)
    notes.push({
      field: "pageSize",
      kind: "defaulted",
      from: null,
      to: effectivePageSize,
      reason: `DSV4 uses page size ${effectivePageSize} on ${args.platform}`,
    });
  else if (args.pageSize !== effectivePageSize) {
    notes.push({
      field: "pageSize",
      kind: "corrected",
      from: args.pageSize,
      to: effectivePageSize,
      reason: `the DSV4 model override always replaces --page-size with ${effectivePageSize} on ${args.platform} (upstream logs it; the pool asserts it)`,
    });
  }
  if (args.attentionBackend !== "dsv4") {
    notes.push({
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
    notes.push({
      field: "swaFullTokensRatio",
      kind: "defaulted",
      from: null,
      to: swaRatio,
      reason: "DSV4 default SWA:full token ratio",
    });
  const maxRunningRequests = args.maxRunningRequests ?? DSV4_DEFAULTS.maxRunningRequests;
  if (args.maxRunningRequests == null) {
    notes.push({
      field: "maxRunningRequests",
      kind: "defaulted",
      from: null,
      to: maxRunningRequests,
      reason: "DSV4 default (the model hook runs before the speculative hook, whose default would be 48)",
    });
  }
  let kvCacheDtype = args.kvCacheDtype;
  if (kvCacheDtype === "auto") {
    kvCacheDtype = DSV4_DEFAULTS.kvCacheDtype;
    notes.push({
      field: "kvCacheDtype",
      kind: "defaulted",
      from: "auto",
      to: kvCacheDtype,
      reason: "auto resolves to fp8_e4m3 for DSV4",
    });
  } else if (kvCacheDtype !== "fp8_e4m3") {
    error(
      "V-A3",
      "UNSUPPORTED_ARGUMENT",
      "kvCacheDtype",
      kvCacheDtype,
      `--kv-cache-dtype ${kvCacheDtype} is not supported for ${arch}: the DSV4 pools store fp8_e4m3 KV; use --kv-cache-dtype fp8_e4m3 (or auto)`,
      { kvCacheDtype, supported: ["fp8_e4m3", "auto"] },
    );
  }
  const contextLen = args.contextLength ?? model.contextLen;

  // --- Environment switches ---
  const stateDtypeBytes = STATE_DTYPES[args.compressStateDtype.toLowerCase()];
  if (stateDtypeBytes === undefined) {
    error(
      "V-D1",
      "STATE_DTYPE",
      "compressStateDtype",
      args.compressStateDtype,
      `Unsupported SGLANG_DSV4_COMPRESS_STATE_DTYPE=${args.compressStateDtype}. Expected one of: float32, fp32, bfloat16, bf16.`,
      { compressStateDtype: args.compressStateDtype, allowed: Object.keys(STATE_DTYPES) },
    );
  }
  let onlineC128 = args.onlineCompress;
  if (onlineC128 && args.platform === "hip") {
    onlineC128 = false;
    notes.push({
      field: "onlineCompress",
      kind: "forced",
      from: true,
      to: false,
      reason: "online compress is forced off on ROCm/HIP",
    });
  }
  if (onlineC128 && stateDtypeBytes === 2) {
    error(
      "V-D1",
      "STATE_DTYPE",
      "compressStateDtype",
      args.compressStateDtype,
      "bf16 is not supported when SGLANG_OPT_USE_ONLINE_COMPRESS=1; online c128 state must stay float32 (use --compress-state-dtype float32 or turn online compress off)",
      { compressStateDtype: args.compressStateDtype, onlineCompress: true },
    );
  }

  // --- Speculative decoding (docs/reference/startup-rules.md §3) ---
  const rawAlgorithm = args.speculativeAlgorithm;
  let algorithm: "EAGLE" | "DSPARK" | null = null;
  let steps: number | null = null;
  let topk: number | null = null;
  let numDraftTokens = 1;
  let maxDraft = 0;
  let adaptiveCandidates: number[] | null = null;
  if (rawAlgorithm != null) {
    if (!(SPECULATIVE_ALGORITHMS_ACCEPTED as readonly string[]).includes(rawAlgorithm)) {
      const hint =
        rawAlgorithm.toUpperCase() === "NEXTN" || rawAlgorithm.toUpperCase() === "EAGLE"
          ? "use --speculative-algorithm EAGLE (the DSV4 check runs before NEXTN aliasing and upper-casing)"
          : "use --speculative-algorithm EAGLE or DSPARK, or drop speculative decoding";
      error(
        "V-A1",
        "UNSUPPORTED_ARGUMENT",
        "speculativeAlgorithm",
        rawAlgorithm,
        `Only EAGLE (and DSPARK) speculative algorithms are supported for ${arch} (got --speculative-algorithm ${rawAlgorithm}); ${hint}`,
        { speculativeAlgorithm: rawAlgorithm, supported: [...SPECULATIVE_ALGORITHMS_ACCEPTED] },
      );
    } else algorithm = rawAlgorithm as "EAGLE" | "DSPARK";
  } else {
    for (const field of [
      "speculativeNumSteps",
      "speculativeEagleTopk",
      "speculativeNumDraftTokens",
      "speculativeDsparkBlockSize",
    ] as const) {
      if (args[field] != null)
        warn(
          "V-S0",
          "IGNORED_ARGUMENT",
          field,
          args[field],
          `${field} = ${args[field]} is ignored: no --speculative-algorithm is set`,
        );
    }
  }
  if (algorithm === "EAGLE") {
    topk = args.speculativeEagleTopk;
    if (topk !== 1) {
      error(
        "V-A2",
        "UNSUPPORTED_ARGUMENT",
        "speculativeEagleTopk",
        topk,
        `Only EAGLE with topk == 1 is supported for ${arch}; --speculative-eagle-topk is ${topk ?? "unset"}: set --speculative-eagle-topk 1`,
        { speculativeEagleTopk: topk, required: 1 },
      );
    }
    if (args.speculativeAdaptive) {
      adaptiveCandidates = [...(args.speculativeAdaptiveCandidates ?? DEFAULT_ADAPTIVE_CANDIDATES)].sort(
        (a, b) => a - b,
      );
      const middle = adaptiveCandidates[Math.floor(adaptiveCandidates.length / 2)]!;
      steps = args.speculativeNumSteps ?? middle;
      if (args.speculativeNumSteps == null)
        notes.push({
          field: "speculativeNumSteps",
          kind: "defaulted",
          from: null,
          to: steps,
          reason: "adaptive: the middle candidate",
        });
      if (!adaptiveCandidates.includes(steps)) {
        error(
          "V-S3",
          "SPECULATIVE_ARGUMENTS",
          "speculativeNumSteps",
          steps,
          `adaptive speculative decoding: --speculative-num-steps ${steps} is not one of the candidate steps [${adaptiveCandidates.join(", ")}]; pick one of them`,
          { speculativeNumSteps: steps, candidates: adaptiveCandidates },
        );
      }
      maxDraft = Math.max(...adaptiveCandidates) + 1;
    } else {
      steps = args.speculativeNumSteps;
      if (steps == null && args.speculativeNumDraftTokens != null) {
        steps = args.speculativeNumDraftTokens - 1;
        notes.push({
          field: "speculativeNumSteps",
          kind: "defaulted",
          from: null,
          to: steps,
          reason: "EAGLE topk 1: steps = draft tokens − 1 [ASSUMED; upstream auto-choice is model-dependent]",
        });
      }
      if (steps == null || steps < 1) {
        error(
          "V-S2",
          "SPECULATIVE_ARGUMENTS",
          "speculativeNumSteps",
          steps,
          "EAGLE needs --speculative-num-steps (≥ 1); with topk 1 the verify window is steps + 1 draft tokens, e.g. --speculative-num-steps 3",
          { speculativeNumSteps: steps },
        );
        steps = steps ?? null;
      }
    }
    if (steps != null && steps >= 1) {
      numDraftTokens = steps + 1;
      const given = args.speculativeNumDraftTokens;
      if (given == null)
        notes.push({
          field: "speculativeNumDraftTokens",
          kind: "defaulted",
          from: null,
          to: numDraftTokens,
          reason: `EAGLE topk 1: steps + 1 = ${steps} + 1`,
        });
      else if (given !== numDraftTokens && topk === 1) {
        notes.push({
          field: "speculativeNumDraftTokens",
          kind: "corrected",
          from: given,
          to: numDraftTokens,
          reason: `EAGLE topk 1 verifies steps + 1 = ${numDraftTokens} tokens`,
        });
        warn(
          "V-S2",
          "CORRECTED_ARGUMENT",
          "speculativeNumDraftTokens",
          given,
          `--speculative-num-draft-tokens ${given} was corrected to ${numDraftTokens} = --speculative-num-steps ${steps} + 1 (EAGLE with topk 1); to verify ${given} tokens set --speculative-num-steps ${given - 1}`,
          { given, corrected: numDraftTokens, speculativeNumSteps: steps },
        );
      } else if (given !== numDraftTokens) numDraftTokens = given;
      if (!args.speculativeAdaptive) maxDraft = numDraftTokens;
    }
  } else if (algorithm === "DSPARK") {
    if (args.speculativeNumSteps != null && args.speculativeNumSteps !== 1)
      notes.push({
        field: "speculativeNumSteps",
        kind: "forced",
        from: args.speculativeNumSteps,
        to: 1,
        reason: "DSpark drafts one block per step",
      });
    if (args.speculativeEagleTopk != null && args.speculativeEagleTopk !== 1)
      notes.push({
        field: "speculativeEagleTopk",
        kind: "forced",
        from: args.speculativeEagleTopk,
        to: 1,
        reason: "DSpark uses topk 1",
      });
    steps = 1;
    topk = 1;
    const gamma = args.speculativeDsparkBlockSize ?? model.dsparkBlockSize;
    if (args.speculativeDsparkBlockSize == null && gamma != null)
      notes.push({
        field: "speculativeDsparkBlockSize",
        kind: "defaulted",
        from: null,
        to: gamma,
        reason: `from the ${model.name} draft checkpoint (dspark_block_size)`,
      });
    if (gamma == null) {
      error(
        "V-S1",
        "SPECULATIVE_ARGUMENTS",
        "speculativeDsparkBlockSize",
        null,
        `DSpark cannot resolve its verify width: ${model.name} declares no dspark_block_size; pass --speculative-dspark-block-size (γ; the verify window is γ + 1)`,
        { model: model.name },
      );
    } else if (gamma <= 0) {
      error(
        "V-S1",
        "SPECULATIVE_ARGUMENTS",
        "speculativeDsparkBlockSize",
        gamma,
        `--speculative-dspark-block-size ${gamma}: γ must be ≥ 1 (the verify window γ + 1 must be at least 2)`,
        { gamma },
      );
    } else {
      numDraftTokens = gamma + 1;
      maxDraft = numDraftTokens;
      const given = args.speculativeNumDraftTokens;
      if (given != null && given !== numDraftTokens) {
        error(
          "V-S1",
          "SPECULATIVE_ARGUMENTS",
          "speculativeNumDraftTokens",
          given,
          `DSpark verify width --speculative-num-draft-tokens ${given} must equal gamma + 1 (= ${numDraftTokens} for gamma=${gamma}); drop the flag or set it to ${numDraftTokens}`,
          { given, required: numDraftTokens, gamma },
        );
      } else if (given == null)
        notes.push({
          field: "speculativeNumDraftTokens",
          kind: "defaulted",
          from: null,
          to: numDraftTokens,
          reason: `DSpark verify window γ + 1 = ${gamma} + 1`,
        });
    }
  }
  const isSpeculative = algorithm != null || (rawAlgorithm != null && issues.some((i) => i.rule === "V-A1"));
  if (args.maxSpeculativeNumDraftTokens != null && algorithm != null) {
    if (args.maxSpeculativeNumDraftTokens < numDraftTokens) {
      error(
        "V-S5",
        "SPECULATIVE_ARGUMENTS",
        "maxSpeculativeNumDraftTokens",
        args.maxSpeculativeNumDraftTokens,
        `The speculative algorithm declared max_speculative_num_draft_tokens=${args.maxSpeculativeNumDraftTokens}, below the configured speculative_num_draft_tokens=${numDraftTokens}; raise the declared maximum to at least ${numDraftTokens}`,
        { declared: args.maxSpeculativeNumDraftTokens, numDraftTokens },
      );
    }
    maxDraft = Math.max(maxDraft, args.maxSpeculativeNumDraftTokens);
  }
  if (algorithm == null) {
    numDraftTokens = 1;
    maxDraft = 0;
  }

  // --- Online compress + speculation (V-S6, V-S7, V-S9) ---
  if (onlineC128 && isSpeculative) {
    if (!(args.onlineC128Mtp && algorithm === "EAGLE")) {
      error(
        "V-S6",
        "ONLINE_C128_MTP",
        "onlineCompress",
        true,
        `SGLANG_OPT_USE_ONLINE_COMPRESS does not support speculative decode (MTP) yet, except the experimental EAGLE topk=1 path gated by SGLANG_EXPERIMENTAL_ONLINE_C128_MTP=1 (algorithm ${rawAlgorithm}${args.onlineC128Mtp ? "" : ", experimental switch off"}); turn --online-compress off${algorithm === "EAGLE" ? " or add --online-c128-mtp" : ""}${args.onlineC128Mtp ? "" : " (V-S9: online c128 does not support MTP)"}`,
        { algorithm: rawAlgorithm, onlineC128Mtp: args.onlineC128Mtp },
      );
    } else if (!maxDraft) {
      error(
        "V-S7",
        "SPECULATIVE_ARGUMENTS",
        "maxSpeculativeNumDraftTokens",
        maxDraft,
        "SGLANG_EXPERIMENTAL_ONLINE_C128_MTP requires speculative_num_draft_tokens to be set (set --speculative-num-steps / --speculative-num-draft-tokens)",
        { maxSpeculativeNumDraftTokens: maxDraft },
      );
    } else {
      warn(
        "V-S7",
        "EXPERIMENTAL",
        "onlineC128Mtp",
        true,
        `experimental online c128 MTP is on (${maxDraft} draft banks): validate correctness carefully`,
        { draftBanks: maxDraft },
      );
    }
  }

  // --- HiSparse (V-H1) and the trtllm backend (V-A4) ---
  const hisparseRatio = args.enableHisparse
    ? (args.hisparseHostToDeviceRatio ?? DSV4_DEFAULTS.hisparseHostToDeviceRatio)
    : 1;
  if (args.enableHisparse && !(hisparseRatio >= 1)) {
    error(
      "V-H1",
      "HISPARSE_RATIO",
      "hisparseHostToDeviceRatio",
      hisparseRatio,
      `HiSparse host_to_device_ratio = ${hisparseRatio} must be ≥ 1 (the device keeps 1/ratio of the c4 KV)`,
      { hisparseRatio, min: 1 },
    );
  }
  if (args.dsv4AttnBackend === "trtllm") {
    const fail = (field: string, value: unknown, why: string) =>
      error("V-A4", "UNSUPPORTED_ARGUMENT", field, value, `--dsv4-attn-backend trtllm ${why}`, { backend: "trtllm" });
    if (args.platform !== "cuda" || !/^sm10[03]/.test(args.gpuArch))
      fail(
        "gpuArch",
        args.gpuArch,
        `requires a Blackwell SM100/SM103 CUDA GPU (got ${args.platform} ${args.gpuArch}); use the default dsv4 attention backend`,
      );
    if (kvCacheDtype !== "fp8_e4m3") fail("kvCacheDtype", kvCacheDtype, "requires --kv-cache-dtype fp8_e4m3");
    if (args.enableHisparse) fail("enableHisparse", true, "is incompatible with HiSparse; drop --enable-hisparse");
    if (args.prefillContextParallel) fail("prefillContextParallel", true, "is incompatible with context parallelism");
    if (args.disaggregationMode !== "null")
      fail("disaggregationMode", args.disaggregationMode, "is incompatible with PD disaggregation");
    if (args.chunkedPrefillSize != null && args.chunkedPrefillSize <= 0)
      fail("chunkedPrefillSize", args.chunkedPrefillSize, "requires chunked prefill (--chunked-prefill-size > 0)");
  } else if (args.dsv4AttnBackend != null) {
    warn(
      "V-A4",
      "NOT_MODELLED",
      "dsv4AttnBackend",
      args.dsv4AttnBackend,
      `--dsv4-attn-backend ${args.dsv4AttnBackend} is not modelled; sizing uses the default separate-KV CUDA pools`,
      { backend: args.dsv4AttnBackend },
    );
  }
  if (args.enableDeepseekV4Fp4Indexer && args.platform !== "hip") {
    warn(
      "V-K1",
      "NOT_MODELLED",
      "enableDeepseekV4Fp4Indexer",
      true,
      "the FP4 indexer applies to ROCm/HIP only; the FP8 indexer (132 B/token) is sized",
      { platform: args.platform },
    );
  }

  // --- Parallelism, rings and the ring/draft check (V-S8) ---
  const attnDpSize = args.enableDpAttention ? args.dpSize : 1;
  const mrrPerWorker = Math.floor(maxRunningRequests / attnDpSize);
  const extraSlots = args.disaggregationMode === "decode" ? args.disaggregationDecodeExtraSlots : 0;
  const sizing: SizingConfig = {
    model,
    pageSize: effectivePageSize,
    swaFullTokensRatio: swaRatio,
    isSpeculative,
    maxSpeculativeNumDraftTokens: maxDraft,
    maxRunningRequests,
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
  const layers = { total: 0, ratio0: 0, ratio4: 0, ratio128: 0 };
  const ringSizes: DerivedValues["ringSizes"] = { c4: null, c128: null };
  const writePads: DerivedValues["writePads"] = { c4: null, c128: null };
  let maxDraftTokensServed: number | null = null;
  try {
    const stages = stageFacts(sizing);
    for (const s of stages) {
      layers.total += s.layers;
      layers.ratio4 += s.layersC4;
      layers.ratio128 += s.layersC128;
    }
    layers.ratio0 = layers.total - layers.ratio4 - layers.ratio128;
    const ringOptions = { isSpeculative, onlineC128, onlineC128Mtp: true, numDraftTokens };
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
    if (isSpeculative && algorithm != null) {
      const seenRatios = new Set<unknown>();
      for (const s of stages) {
        for (const e of ringDraftViolations(s, maxDraft, onlineC128)) {
          if (seenRatios.has(e.params.ratio)) continue;
          seenRatios.add(e.params.ratio);
          issues.push(ringDraftIssue({ ...e.params, adaptive: args.speculativeAdaptive }));
        }
      }
    }
  } catch (e) {
    if (!MemoryPoolError.isInstance(e)) throw e;
    const pool = e as MemoryPoolError;
    error("V-K1", pool.code, pool.field, pool.value, pool.message, { ...pool.params });
  }
  if (args.ppSize > model.numHiddenLayers)
    error(
      "V-K1",
      "INVALID_ARGUMENT",
      "ppSize",
      args.ppSize,
      `--pp-size ${args.ppSize} exceeds the ${model.numHiddenLayers} layers of ${model.name}`,
      { ppSize: args.ppSize, layers: model.numHiddenLayers },
    );

  const derived: DerivedValues = {
    effectivePageSize,
    isSpeculative,
    speculativeAlgorithm: algorithm,
    speculativeNumSteps: steps,
    speculativeEagleTopk: topk,
    numDraftTokens,
    maxSpeculativeNumDraftTokens: maxDraft,
    adaptiveCandidates,
    allocLenPerDecode: isSpeculative && steps != null && topk != null ? Math.max(steps * topk, maxDraft) : 1,
    ringSizes,
    writePads,
    maxDraftTokensServed,
    attnDpSize,
    mrrPerWorker,
    numReqSlots: mrrPerWorker + extraSlots + 1,
    swaRatio,
    stateDtypeBytes: stateDtypeBytes ?? 4,
    onlineC128,
    onlineC128Mtp: args.onlineC128Mtp,
    hisparseRatio,
    kvCacheDtype,
    contextLen,
    layers,
  };
  return {
    args,
    model: { ...model, contextLen },
    derived,
    notes,
    issues,
    sizing: { ...sizing, model: { ...model, contextLen } },
  };
}

/** What V-S8 is built from: the memory pool's DRAFT_EXCEEDS_RING params, and the advisor's words once known. */
export interface RingDraftParams {
  ratio?: unknown;
  ringSize?: unknown;
  writePad?: unknown;
  draftTokens?: unknown;
  adaptive: boolean;
  advice?: string;
}

/** The V-S8 issue (check.ts rebuilds it with the advisor's ring; matching is on `params.ratio`). */
export function ringDraftIssue(params: RingDraftParams): ConfigIssue {
  const { ratio, ringSize, writePad, draftTokens } = params;
  const adaptive = params.adaptive ? ` (the largest adaptive draft count, ${draftTokens}, is checked)` : "";
  const advice = params.advice === undefined ? "" : `. Advisor: ${params.advice}`;
  return makeIssue({
    rule: "V-S8",
    severity: "error",
    code: "DRAFT_EXCEEDS_RING",
    field: "speculativeNumDraftTokens",
    value: draftTokens,
    text:
      `speculative_num_draft_tokens=${draftTokens} exceeds what the c${ratio} compress state ring can keep resident ` +
      `(ring_size=${ringSize} serves at most ${writePad} draft tokens); lower the draft count to ${writePad} or ` +
      `enlarge the ring${adaptive}${advice}`,
    params: { ...params },
  });
}
