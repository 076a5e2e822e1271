/**
 * Argument checks of the online c128 driver: every input of a step is checked before anything is launched, so a
 * refused step changes no state. Each refusal is a `CompressError` naming the field, the value and the rule.
 */
import { typeOf } from "@dsv4-kv/errors/internal";
import { CHUNK_TOKENS, HEAD_DIM, KV_SCORE_COLS, MAX_VERIFY_TOKENS } from "@dsv4-kv/online-mtp-controller";
import {
  check,
  checkFiniteElements,
  checkFloat32Array,
  checkInt,
  checkKeys,
  checkMethods,
  checkObject,
  checkOneOf,
} from "../check.js";
import type { OnlineC128DriverOptions, OnlineRequestStep, OnlineStepKind } from "./types.js";

const I32_MAX = 0x7fffffff;
const OPTION_KEYS = ["backend", "numReqSlots", "maxDraftTokens", "stateDtype", "ape"];
const STEP_KEYS = ["slot", "prefix", "kind", "tokens", "accept"];
const KINDS: readonly OnlineStepKind[] = ["extend", "verify", "decode"];
const DTYPES = ["fp32", "bf16"];
/** What the driver and its controller call on the backend. */
const BACKEND_METHODS = [
  ...["uploadIndex", "uploadMatrix", "allocMatrix", "allocState", "allocIndex", "readMatrix", "synchronize"],
  ...["writePrefix", "markPending", "commitPending", "resetSlots", "onlinePrefill", "onlineDecode"],
];

/** A request of a step after its checks: `rows` = E, `advance` = tokens committed by the step. */
export interface CheckedRequest {
  slot: number;
  prefix: number;
  rows: number;
  tokens: Float32Array;
  accept: number;
  advance: number;
}

/** A Float32Array of finite values, `rows × cols` long (`rows` free when null: any positive multiple of cols). */
function checkRows(value: unknown, cols: number, rows: number | null, field: string): number {
  checkFloat32Array(value, field);
  const v = value;
  const ok = rows === null ? v.length > 0 && v.length % cols === 0 : v.length === rows * cols;
  const want = rows === null ? `a positive multiple of ${cols} (rows × [kv | score])` : `${rows} × ${cols}`;
  check(ok, "BUFFER_SHAPE", `${field}.length`, v.length, `must be ${want}`);
  checkFiniteElements(v, field);
  return v.length / cols;
}

export function validateOptions(opts: OnlineC128DriverOptions): void {
  checkObject(opts, "options");
  checkKeys(opts, OPTION_KEYS, "options");
  checkObject(opts.backend, "backend");
  checkMethods(opts.backend, BACKEND_METHODS, "backend", "must be a method (an OnlineMtpBackend)");
  const slotsRule = "must be an integer in [2, 2^31 − 1] (slot 0 is the padding slot; requests use 1 .. N − 1)";
  checkInt(opts.numReqSlots, 2, I32_MAX, "numReqSlots", slotsRule, "REQ_INDEX");
  checkInt(opts.maxDraftTokens, 1, MAX_VERIFY_TOKENS, "maxDraftTokens", undefined, "DRAFT_TOKENS");
  checkOneOf(opts.stateDtype, DTYPES, "stateDtype", "STATE_DTYPE");
  checkRows(opts.ape, HEAD_DIM, CHUNK_TOKENS, "ape");
}

/** The checks of one request that need no other request: fields, types, shape and the kind's own rules. */
function checkRequest(r: OnlineRequestStep, i: number, numReqSlots: number, maxVerify: number): CheckedRequest {
  const at = `requests[${i}]`;
  checkObject(r, at);
  checkKeys(r, STEP_KEYS, at);
  checkOneOf(r.kind, KINDS, `${at}.kind`, "INVALID_ARGUMENT");
  checkInt(r.slot, 1, numReqSlots - 1, `${at}.slot`, `must be a request slot in [1, ${numReqSlots - 1}]`, "REQ_INDEX");
  checkInt(r.prefix, 0, I32_MAX, `${at}.prefix`, "must be a committed length: an int32 >= 0");
  const rows = checkRows(r.tokens, KV_SCORE_COLS, r.kind === "decode" ? 1 : null, `${at}.tokens`);
  check(r.prefix + rows <= I32_MAX, "INVALID_ARGUMENT", `${at}.prefix`, r.prefix, "must leave prefix + E <= 2^31 − 1");
  if (r.kind !== "verify") {
    const rule = "applies to verify steps only (extend and decode commit every token)";
    check(r.accept === undefined, "NOT_APPLICABLE", `${at}.accept`, r.accept, rule);
    return { slot: r.slot, prefix: r.prefix, rows, tokens: r.tokens, accept: rows, advance: rows };
  }
  const dRule = `must be D, the draft tokens, in [1, min(8, maxDraftTokens)] = [1, ${maxVerify}] rows`;
  check(rows <= maxVerify, "DRAFT_TOKENS", `${at}.tokens.length`, r.tokens.length, dRule, { rows, max: maxVerify });
  checkInt(r.accept, 1, rows, `${at}.accept`, `must be the tokens kept, in [1, E] = [1, ${rows}]`, "DRAFT_TOKENS");
  const a = r.accept as number;
  return { slot: r.slot, prefix: r.prefix, rows, tokens: r.tokens, accept: a, advance: a };
}

/**
 * Checks a step's requests; `committed` maps each assigned slot to its committed length (null: reset, nothing
 * committed yet). Returns the kind and the checked requests.
 */
export function validateStep(
  requests: readonly OnlineRequestStep[],
  numReqSlots: number,
  maxDraftTokens: number,
  committed: ReadonlyMap<number, number | null>,
): { kind: OnlineStepKind; batch: CheckedRequest[] } {
  check(Array.isArray(requests), "INVALID_TYPE", "requests", requests, `must be an array (got ${typeOf(requests)})`);
  const maxVerify = Math.min(MAX_VERIFY_TOKENS, maxDraftTokens);
  const batch: CheckedRequest[] = [];
  const seen = new Set<number>();
  let kind: OnlineStepKind = "extend";
  for (const [i, r] of requests.entries()) {
    const c = checkRequest(r, i, numReqSlots, maxVerify);
    const at = `requests[${i}]`;
    if (i === 0) kind = r.kind;
    const sameRule = `must be the kind of requests[0] ("${kind}"): one forward runs one kind`;
    check(r.kind === kind, "INVALID_ARGUMENT", `${at}.kind`, r.kind, sameRule, { expected: kind });
    check(!seen.has(c.slot), "DUPLICATE_REQ", `${at}.slot`, c.slot, "must not repeat a slot of the same step");
    seen.add(c.slot);
    if (kind === "verify") {
      const d = batch[0]?.rows ?? c.rows;
      const rule = `must hold the same D as requests[0] (${d} rows): verify rows are uniform, b·D + i`;
      check(c.rows === d, "BUFFER_SHAPE", `${at}.tokens.length`, r.tokens.length, rule, { rows: c.rows, expected: d });
    }
    checkLifecycle(c, at, committed);
    batch.push(c);
  }
  return { kind, batch };
}

/** The slot is assigned and `prefix` is its committed length (a reset slot starts at a chunk boundary). */
function checkLifecycle(c: CheckedRequest, at: string, committed: ReadonlyMap<number, number | null>): void {
  const known = committed.get(c.slot);
  const unassigned = `has no request: call resetSlot(${c.slot}) when a request is assigned to it`;
  check(known !== undefined, "LIFECYCLE", `${at}.slot`, c.slot, unassigned);
  if (known === null) {
    const rule = `must be a multiple of ${CHUNK_TOKENS} for a slot just reset (its open chunk has no state)`;
    check(c.prefix % CHUNK_TOKENS === 0, "LIFECYCLE", `${at}.prefix`, c.prefix, rule);
    return;
  }
  const rule = `must equal the slot's committed length ${known} (prefix + accepted tokens of its last step)`;
  check(c.prefix === known, "LIFECYCLE", `${at}.prefix`, c.prefix, rule, { expected: known });
}
