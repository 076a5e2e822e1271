/**
 * A DeepSeek-V4.1 deployment checked before start (docs/reference/deepseek-v4.1.md §5, §6): the arguments it reads
 * (and what was defaulted), the KV budget, the configurator's figures as SGLang logs them, every pool a rank
 * allocates against what the configurator reserved, both pool init lines, the gaps as warnings with their size, and
 * what is not checked for V4.1 yet. V4's start-up rules and ring residency check do not apply and are not run.
 */
import {
  type V41SizingConfig,
  type V41SizingResult,
  MemoryPoolError,
  kvBudgetFromGpu,
  sizeV41,
} from "@dsv4-kv/memory-pool";
import { DEFAULT_MEM_FRACTION_STATIC } from "../check.js";
import { DEFAULT_DEPLOYMENT } from "../deployments.js";
import { ServerConfigError } from "../errors.js";
import { evaluateV41Rules } from "../rules.js";
import type { ConfigIssue } from "../rules/issue.js";
import { type V41PairRingFacts, type V41PairRingStatus, v41PairRingRule, v41PairRingStatus } from "./pair-ring-rule.js";
import type { V41ModelPreset } from "./presets.js";
import type { V41RuleContext } from "./rules.js";

export interface V41CheckInput {
  model: V41ModelPreset;
  resolvedAs: string;
  /** `--speculative-algorithm`; undefined applies check's V4.1 default (DSPARK), "none" / null runs without. */
  speculativeAlgorithm?: string | null;
  speculativeDsparkBlockSize?: number;
  speculativeNumDraftTokens?: number;
  maxRunningRequests?: number | null;
  swaFullTokensRatio?: number;
  pageSize?: number;
  contextLength?: number;
  maxTotalTokens?: number | null;
  /**
   * Cap mode's SWA tokens (SGLang's `request_cap+headroom`), when known (a log prints it); this check does not
   * compute the cap itself. Null or undefined: ratio mode.
   */
  swaCapTokens?: number | null;
  budget: V41BudgetInput;
  /** The arguments only V4.1's start-up rules read (defaults: off, 1, "null"). */
  rules?: Partial<Omit<V41RuleContext, "speculativeAlgorithm" | "model" | "checkpointBlockSize">>;
  /** How a refusal names an input field (the CLI renders flags: `weightsGiB` → `--weights-gib`). */
  fieldName?: (field: string) => string;
}

export type V41BudgetInput =
  | { kind: "bytes"; kvBudgetBytes: number }
  | {
      kind: "gpu";
      gpuMemoryGiB?: number;
      weightsGiB?: number;
      runtimeGiB?: number;
      memFractionStatic?: number;
      tpSize?: number;
      ppSize?: number;
    };

export interface V41CheckNote {
  field: string;
  value: unknown;
  reason: string;
}

export interface V41CheckReport {
  ok: boolean;
  generation: "V4.1";
  model: { name: string; resolvedAs: string; kvSourceLayerIds: readonly number[]; draftLayers: number };
  notes: V41CheckNote[];
  availableBytes: number;
  budget: Record<string, unknown>;
  /** What was sized; null when a rule refused the arguments first. */
  config: V41SizingConfig | null;
  sizing: V41SizingResult | null;
  /** The ratio-2 pair-state ring against the widest verify block (V41-R1); null when nothing was sized. */
  pairRing: V41PairRingStatus | null;
  /** Sizing refusals (rule null) and the V4.1 start-up rules' errors (rule `V41-…`). */
  errors: { code: string; rule: string | null; field: string; value?: unknown; message: string }[];
  warnings: string[];
  notChecked: string[];
}

export const V41_NOT_CHECKED: readonly string[] = [
  "V4's start-up rules (V-*) and the ring residency check (V4.1's own rules V41-* are run)",
];

const NO_ALGORITHM = ["none", "null", ""];

/** The V4.1 rules' view of the input: the algorithm as given, everything else defaulted as SGLang does. */
function ruleContext(input: V41CheckInput): V41RuleContext {
  const given = input.speculativeAlgorithm;
  const r = input.rules ?? {};
  return {
    speculativeAlgorithm:
      given === undefined ? "DSPARK" : given === null || NO_ALGORITHM.includes(given.toLowerCase()) ? null : given,
    speculativeDsparkBlockSize: input.speculativeDsparkBlockSize ?? null,
    speculativeNumDraftTokens: input.speculativeNumDraftTokens ?? null,
    checkpointBlockSize: input.model.dsparkBlockSize,
    model: input.model.name,
    enableHisparse: r.enableHisparse ?? false,
    dsv4AttnBackend: r.dsv4AttnBackend ?? null,
    ppSize: r.ppSize ?? 1,
    disaggregationMode: r.disaggregationMode ?? "null",
    dpSize: r.dpSize ?? 1,
    enableDpAttention: r.enableDpAttention ?? false,
    prefillContextParallel: r.prefillContextParallel ?? false,
  };
}

export function checkV41Deployment(input: V41CheckInput): V41CheckReport {
  const notes: V41CheckNote[] = [];
  const warnings: string[] = [];
  const errors: V41CheckReport["errors"] = evaluateV41Rules(ruleContext(input)).map(ruleError);
  const { availableBytes, budget } = budgetOf(input, notes);
  const sized = { notes, availableBytes, budget, warnings, errors };
  // A block size V41-S2 refuses cannot be sized; a draft count other than γ + 1 can (V41-R1 then says what the
  // ring sized from that count would lose).
  const badBlock = errors.some((e) => e.rule === "V41-S2" && e.field === "speculativeDsparkBlockSize");
  if (badBlock) return reportOf(input, { ...sized, config: null, sizing: null, pairRing: null });
  const config = sizingConfig(input, notes, warnings);
  let sizing: V41SizingResult | null = null;
  const ring = pairRingFacts(input, config);
  errors.push(...v41PairRingRule(ring).map(ruleError));
  try {
    sizing = sizeV41(config, availableBytes);
  } catch (error) {
    if (!(error instanceof MemoryPoolError) || !["SWA_FLOOR", "NOT_ENOUGH_MEMORY"].includes(error.code)) throw error;
    errors.push({ code: error.code, rule: null, field: error.field, message: error.message });
  }
  if (sizing) warnings.push(...sizing.warnings.map((w) => w.message));
  return reportOf(input, { ...sized, config, sizing, pairRing: v41PairRingStatus(ring) });
}

/** A V4.1 rule's issue as the report lists it. */
function ruleError(i: ConfigIssue): V41CheckReport["errors"][number] {
  return { code: i.code, rule: i.rule, field: i.field, value: i.value, message: i.message };
}

type ReportParts = Pick<
  V41CheckReport,
  "notes" | "availableBytes" | "budget" | "config" | "sizing" | "pairRing" | "errors" | "warnings"
>;

/** The report around what was sized (or refused before sizing: config, sizing and pairRing null). */
function reportOf(input: V41CheckInput, p: ReportParts): V41CheckReport {
  const { name, kvSourceLayerIds, draftLayers } = input.model;
  return {
    ok: p.errors.length === 0,
    generation: "V4.1",
    model: { name, resolvedAs: input.resolvedAs, kvSourceLayerIds, draftLayers },
    notes: p.notes,
    availableBytes: p.availableBytes,
    budget: p.budget,
    config: p.config,
    sizing: p.sizing,
    pairRing: p.pairRing,
    errors: p.errors,
    warnings: p.warnings,
    notChecked: [...V41_NOT_CHECKED],
  };
}

/** What V41-R1 reads of the sized config: the count SGLang sizes the ring from, and the block DSpark verifies. */
function pairRingFacts(input: V41CheckInput, config: V41SizingConfig): V41PairRingFacts {
  const name = input.fieldName ?? String;
  const block = input.speculativeDsparkBlockSize ?? input.model.dsparkBlockSize;
  const dspark = (input.speculativeAlgorithm ?? "DSPARK").toUpperCase() === "DSPARK" && Number.isFinite(block);
  const given = input.speculativeNumDraftTokens;
  const blockSource =
    input.speculativeDsparkBlockSize === undefined
      ? `DSpark block size ${block} (the checkpoint's dspark_block_size)`
      : `${name("speculativeDsparkBlockSize")} ${block}`;
  return {
    isSpeculative: config.isSpeculative,
    ringDraftTokens: config.draftTokens,
    verifyWidth: dspark ? Math.max(block + 1, config.draftTokens) : config.draftTokens,
    ringSource: given === undefined ? "DSpark's block size + 1" : `${name("speculativeNumDraftTokens")} ${given}`,
    widthSource: dspark ? blockSource : `${name("speculativeNumDraftTokens")} ${config.draftTokens}`,
    field: name("speculativeNumDraftTokens"),
    fix:
      `drop ${name("speculativeNumDraftTokens")} (DSpark verifies block size + 1 and the ring is then sized from ` +
      `it) or raise it to ${dspark ? block + 1 : config.draftTokens}`,
  };
}

function sizingConfig(input: V41CheckInput, notes: V41CheckNote[], warnings: string[]): V41SizingConfig {
  const { model } = input;
  let algorithm = input.speculativeAlgorithm;
  if (algorithm === undefined) {
    algorithm = "DSPARK";
    notes.push({ field: "speculativeAlgorithm", value: "DSPARK", reason: "check's V4.1 default: its bundled draft" });
  }
  // Another algorithm is refused by V41-S1; the pools are still sized as DSpark's, to show them.
  const speculative = algorithm !== null && !NO_ALGORITHM.includes(algorithm.toLowerCase());
  const block = input.speculativeDsparkBlockSize ?? model.dsparkBlockSize;
  if (speculative && input.speculativeNumDraftTokens === undefined && !Number.isFinite(block))
    throw new ServerConfigError(
      "INVALID_ARGUMENT",
      (input.fieldName ?? String)("speculativeDsparkBlockSize"),
      undefined,
      `is needed: the config of ${model.name} gives no dspark_block_size (or run without speculation)`,
    );
  const given = input.speculativeNumDraftTokens;
  const draftTokens = speculative ? (given ?? block + 1) : 0;
  if (speculative && given === undefined)
    notes.push({ field: "speculativeNumDraftTokens", value: draftTokens, reason: "DSpark block size + 1" });
  if (input.pageSize !== undefined && input.pageSize !== 256)
    notes.push({
      field: "pageSize",
      value: 256,
      reason: `SGLang sets 256 for the dsv4 backend (given ${input.pageSize})`,
    });
  const mrr = input.maxRunningRequests ?? null;
  const swaCapTokens = input.swaCapTokens ?? null;
  if (input.swaFullTokensRatio === undefined && mrr !== null && swaCapTokens === null)
    warnings.push(
      "no --swa-full-tokens-ratio with --max-running-requests: SGLang sizes SWA in cap mode from its request cap, " +
        "which this check does not compute; sized in ratio mode with SGLang's DSV4 default 0.1 instead",
    );
  return {
    model,
    pageSize: 256,
    contextLen: input.contextLength ?? model.contextLen,
    isSpeculative: speculative,
    draftTokens,
    maxRunningRequests: mrr,
    swaCapTokens,
    swaFullTokensRatio: input.swaFullTokensRatio ?? 0.1,
    maxTotalTokens: input.maxTotalTokens ?? null,
  };
}

/** `--kv-budget-bytes`, or the device memory less this rank's share of the weights (the V4 check's rule). */
function budgetOf(input: V41CheckInput, notes: V41CheckNote[]) {
  const b = input.budget;
  if (b.kind === "bytes") return { availableBytes: b.kvBudgetBytes, budget: { ...b } };
  const tp = b.tpSize ?? (DEFAULT_DEPLOYMENT.tpSize.value as number);
  if (b.tpSize === undefined) notes.push({ field: "tpSize", value: tp, reason: DEFAULT_DEPLOYMENT.tpSize.reason });
  const ranks = tp * (b.ppSize ?? 1);
  if (b.weightsGiB === undefined && !Number.isFinite(input.model.checkpointGiB))
    throw new ServerConfigError(
      "INVALID_ARGUMENT",
      (input.fieldName ?? String)("weightsGiB"),
      undefined,
      `is needed: the config of ${input.model.name} gives no checkpoint size (or give a budget in bytes)`,
    );
  const gpuMemoryGiB = b.gpuMemoryGiB ?? DEFAULT_DEPLOYMENT.gpuMemoryGiB;
  const weightsGiB = b.weightsGiB ?? input.model.checkpointGiB / ranks;
  const runtimeGiB = b.runtimeGiB ?? 0;
  const memFractionStatic = b.memFractionStatic ?? DEFAULT_MEM_FRACTION_STATIC;
  const { availableBytes } = kvBudgetFromGpu({
    preFreeGiB: gpuMemoryGiB,
    postFreeGiB: gpuMemoryGiB - weightsGiB - runtimeGiB,
    memFractionStatic,
  });
  const assumption =
    b.weightsGiB === undefined
      ? `each of the ${ranks} rank(s) holds 1/${ranks} of the ${input.model.checkpointGiB.toFixed(2)} GiB checkpoint`
      : "weights as given";
  return {
    availableBytes,
    budget: { kind: "gpu", gpuMemoryGiB, weightsGiB, runtimeGiB, memFractionStatic, availableBytes, assumption },
  };
}
