/**
 * What a rule returns: a `ConfigIssue`, whose message is built here, by `formatMessage`, from the rule's text and
 * params. Kept apart from the RULES table (rules.ts) so that rule modules import it without an import cycle.
 */
import { type ErrorCode, formatMessage } from "@dsv4-kv/errors";
import type { RuleId, Severity, SeverityOf } from "../rules.js";

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

/** A rule's issue builder: `issue("error", code, field, value, text, params)` for rule `R`. */
export function issuesOf<R extends RuleId>(rule: R) {
  const out: ConfigIssue[] = [];
  const add = (
    severity: SeverityOf<R>,
    code: ErrorCode,
    field: string,
    value: unknown,
    text: string,
    params?: Record<string, unknown>,
  ) => {
    out.push(makeIssue({ rule, severity, code, field, value, text, params }));
  };
  return { out, add };
}
