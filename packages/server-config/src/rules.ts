/**
 * Every start-up rule id server-config reports, with the severities it raises and what it checks, in one table
 * (docs/reference/startup-rules.md explains each). A `ConfigIssue`'s message is built here, by `formatMessage`.
 */
import { type ErrorCode, formatMessage } from "@dsv4-kv/errors";

export type Severity = "error" | "warning";

export interface RuleInfo {
  /** The severities the rule raises (V-S2 corrects with a warning and refuses with an error, …). */
  readonly severities: readonly Severity[];
  readonly summary: string;
}

function rule<const S extends readonly Severity[]>(severities: S, summary: string) {
  return { severities, summary };
}

export const RULES = {
  "V-A1": rule(["error"], "the speculative algorithm is EAGLE or DSPARK"),
  "V-A2": rule(["error"], "EAGLE runs with top-k 1"),
  "V-A3": rule(["error"], "the KV cache dtype is fp8_e4m3 (or auto)"),
  "V-A4": rule(["error", "warning"], "the trtllm attention backend's requirements; other backends are not modelled"),
  "V-D1": rule(["error"], "the compress-state dtype is float32 or bfloat16, and float32 with online compress"),
  "V-H1": rule(["error"], "the HiSparse host-to-device ratio is at least 1"),
  "V-K1": rule(["error", "warning"], "the model's pool and layer shape can be built (and the FP4 indexer is HIP only)"),
  "V-M1": rule(["error"], "the weights leave GPU memory for the KV cache under --mem-fraction-static"),
  "V-M2": rule(["error"], "the KV budget holds at least one page of every pool"),
  "V-P2": rule(["error"], "the page size is a multiple of 128"),
  "V-P3": rule(["error"], "the page size is 256 in paged SWA mode"),
  "V-P4": rule(["error"], "the SWA pool holds one request's sliding window plus a page"),
  "V-S0": rule(["warning"], "speculative arguments without an algorithm are ignored"),
  "V-S1": rule(["error"], "DSpark's verify width is its block size + 1"),
  "V-S2": rule(["error", "warning"], "EAGLE has steps >= 1 and verifies steps + 1 draft tokens"),
  "V-S3": rule(["error"], "adaptive steps are one of the candidates"),
  "V-S5": rule(["error"], "the declared maximum draft tokens covers the configured draft tokens"),
  "V-S6": rule(["error"], "online compress runs with speculation only on the experimental EAGLE path"),
  "V-S7": rule(["error", "warning"], "experimental online c128 MTP has a draft count"),
  "V-S8": rule(["error"], "the draft tokens fit every compress-state ring's write pad"),
  "V-W1": rule(["warning"], "the sizing matches what was asked (token cap, running requests, allocation)"),
  R1: rule(["error"], "the ring simulator keeps every committed compress-state position resident"),
} as const satisfies Record<string, RuleInfo>;

export type RuleId = keyof typeof RULES;

/** A severity the rule raises. */
export type SeverityOf<R extends RuleId> = (typeof RULES)[R]["severities"][number];

export interface ConfigIssue {
  /** The start-up rule (V-A1 …) that raised it. */
  rule: RuleId;
  /** The error code (docs/errors.md). */
  code: ErrorCode;
  severity: Severity;
  /** The argument or value at fault (camelCase). */
  field: string;
  value: unknown;
  /** Structured facts behind the message (numbers as numbers). */
  params: Record<string, unknown>;
  /** What is wrong, the values, and what to change. */
  message: string;
}

/** What an issue is made from; `text` states the problem and the fix in the flags' own words. */
export interface IssueData<R extends RuleId> {
  rule: R;
  severity: SeverityOf<R>;
  code: ErrorCode;
  field: string;
  value: unknown;
  text: string;
  params?: Record<string, unknown>;
}

/**
 * The one place an issue's message is built. The text already names the flag and its value as the user wrote
 * them (`--kv-cache-dtype bf16 …`), so the message carries no `field = value:` head.
 */
export function makeIssue<R extends RuleId>(data: IssueData<R>): ConfigIssue {
  const params = data.params ?? {};
  return {
    rule: data.rule,
    code: data.code,
    severity: data.severity,
    field: data.field,
    value: data.value,
    params,
    message: formatMessage({ field: "", value: data.value, rule: data.text, params }),
  };
}

/** The rules that raise issues of severity `S`. */
export type RuleRaising<S extends Severity> = { [R in RuleId]: S extends SeverityOf<R> ? R : never }[RuleId];
