import type { ErrorCode } from "./codes.js";
import { formatMessage, jsonSafeValue } from "./format.js";

/** The data every dsv4-kv error carries; the message is derived from it by `formatMessage`. */
export interface ErrorData<C extends string = ErrorCode> {
  /** Stable, machine-readable; see docs/errors.md. */
  readonly code: C;
  /** The offending input as the caller named it (`seqLens[3]`, `--tp-size`), or "" when no field applies. */
  readonly field: string;
  /** What was given. */
  readonly value: unknown;
  /** The precondition it broke, in words a user can act on. */
  readonly rule: string;
  /** Structured facts behind the rule (bounds, suggestion, the errors of an aggregate …). */
  readonly params?: Readonly<Record<string, unknown>>;
  readonly cause?: unknown;
}

export interface ErrorJson {
  name: string;
  code: string;
  field: string;
  value: unknown;
  rule: string;
  params: Record<string, unknown>;
  message: string;
}

const BRAND = Symbol.for("dsv4-kv.error");

/**
 * The base of every error dsv4-kv throws. `Dsv4KvError.isInstance(e)` (and each subclass's own `isInstance`)
 * works across duplicate copies of the package (ESM and CJS builds, two versions in one tree), where
 * `instanceof` does not: it tests a `Symbol.for` brand rather than a class identity.
 */
export class Dsv4KvError<C extends string = ErrorCode> extends Error {
  /** The name `isInstance` tests; every subclass sets its own (a class name does not survive minifying). */
  static readonly kind: string = "Dsv4KvError";
  /** Names of the error classes of this error, base first: what subclasses' `isInstance` test. */
  readonly kinds: readonly string[];
  readonly code: C;
  readonly field: string;
  readonly value: unknown;
  readonly rule: string;
  readonly params: Readonly<Record<string, unknown>>;

  constructor(data: ErrorData<C>) {
    super(formatMessage(data), data.cause === undefined ? undefined : { cause: data.cause });
    this.code = data.code;
    this.field = data.field;
    this.value = data.value;
    this.rule = data.rule;
    this.params = data.params ?? {};
    this.kinds = kindsOf(new.target);
    this.name = new.target.kind;
    Object.defineProperty(this, BRAND, { value: true });
  }

  /** True for any dsv4-kv error, from any copy of this package. */
  static isInstance(error: unknown): error is Dsv4KvError<string> {
    return hasBrand(error) && (this === Dsv4KvError || (error as Dsv4KvError<string>).kinds.includes(this.kind));
  }

  toJSON(): ErrorJson {
    const params: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(this.params)) params[key] = paramJson(v);
    const { name, code, field, rule, message } = this;
    return { name, code, field, value: jsonSafeValue(this.value), rule, params, message };
  }
}

function hasBrand(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as Record<symbol, unknown>)[BRAND] === true;
}

function kindsOf(ctor: unknown): string[] {
  const names: string[] = [];
  for (let c = ctor; typeof c === "function" && c !== Error; c = Object.getPrototypeOf(c)) {
    if (Object.hasOwn(c, "kind")) names.unshift((c as unknown as { kind: string }).kind);
  }
  return names;
}

function paramJson(value: unknown): unknown {
  if (hasBrand(value)) return (value as Dsv4KvError<string>).toJSON();
  if (Array.isArray(value)) return value.map(paramJson);
  return typeof value === "object" && value !== null ? value : jsonSafeValue(value);
}

/** Throws `make()` unless `ok`; for preconditions whose error is costly to build. */
export function ensure(ok: boolean, make: () => Dsv4KvError<string>): asserts ok {
  if (!ok) throw make();
}

/**
 * The base of each package's error class: `new PlannerError(code, field, value, rule, params?)`. A subclass only
 * sets its `kind`.
 */
export class FieldError extends Dsv4KvError {
  static override readonly kind: string = "FieldError";

  constructor(
    code: ErrorCode,
    field: string,
    value: unknown,
    rule: string,
    params?: Readonly<Record<string, unknown>>,
  ) {
    super(params === undefined ? { code, field, value, rule } : { code, field, value, rule, params });
  }
}
