/**
 * One figure of a log's reconciliation: how it is computed (under an arithmetic environment, from the logged
 * figures it depends on), whether the logged value matches at its printed precision, and, when it does not, whether
 * the log cut it or which alternative arithmetic reproduces it (alternatives.ts).
 */
import { GIB } from "@dsv4-kv/memory-pool/internal";
import { type Alternative, type Env, findCause, solvedRatio } from "./alternatives.js";
import type {
  FigureCause,
  FigureComparison,
  FigureRole,
  LoggedNumber,
  LoggedSizingLine,
  TruncatedFigure,
} from "./types.js";

export type Render = (value: number, decimals: number) => string;
export const asInt: Render = (v) => String(v);
export const asGb: Render = (v, d) => (v / GIB).toFixed(d);
export const asDecimal: Render = (v, d) => v.toFixed(d);

/**
 * Where figures go, under the arithmetic environment `E` their specs compute in: V4's `Env` (whose alternatives can
 * explain a difference) or another generation's own (DeepSeek-V4.1: every difference carries a named cause).
 */
export interface FigureSink<E extends { generation: string } = Env> {
  base: E;
  /** Alternatives of this log beyond the fixed list (the other models, for a log without server_args). */
  extra: readonly Alternative[];
  /** Causes found in this section, by figure, logged and computed value: ranks that log the same share one. */
  causes: Map<string, FigureCause>;
  rank: string | null;
  out: FigureComparison[];
  truncated: TruncatedFigure[];
}

export interface FigureSpec<E = Env> {
  line: LoggedSizingLine;
  key: string;
  name: string;
  /** The logged figures it is computed from (`name@line`); empty when only the arguments and the model. */
  derivedFrom: string[];
  /** How it is computed, in words. */
  formula: string;
  compute: (env: E) => { lo: number; hi: number } | null;
  render: Render;
  /** A logged value must be a multiple of this (page-aligned token counts). */
  step?: number;
  /** No alternative arithmetic applies (the budget the check was given). */
  noAlternatives?: string;
  /** The figure depends on the SWA ratio: a cause may be the ratio solved from the logged value. */
  solveRatio?: boolean;
}

export const ref = (line: LoggedSizingLine, name: string) => `${name}@${line.line}`;

export function loggedNumber(line: LoggedSizingLine, key: string): LoggedNumber | null {
  const v = line.fields[key];
  return v != null && typeof v === "object" ? v : null;
}

function shown(v: { lo: number; hi: number }, n: LoggedNumber, render: Render): { lo: string; hi: string } {
  const a = render(v.lo, n.decimals);
  const b = render(v.hi, n.decimals);
  return Number(a) <= Number(b) ? { lo: a, hi: b } : { lo: b, hi: a };
}

const showRange = (s: { lo: string; hi: string }) => (s.lo === s.hi ? s.lo : `${s.lo}…${s.hi}`);

function accepts(n: LoggedNumber, v: { lo: number; hi: number }, spec: { render: Render; step?: number }): boolean {
  const s = shown(v, n, spec.render);
  if (spec.step && n.value % spec.step !== 0) return false;
  if (s.lo === s.hi) return n.text === s.lo || (n.decimals === 0 && n.value === Number(s.lo));
  return n.value >= Number(s.lo) && n.value <= Number(s.hi);
}

type AnySink = FigureSink<{ generation: string }>;

function base(sink: AnySink, spec: { name: string; line: LoggedSizingLine; derivedFrom: string[] }, n: LoggedNumber) {
  return { name: spec.name, rank: sink.rank, line: spec.line.line, logged: n.text, derivedFrom: spec.derivedFrom };
}

/** A logged figure that is listed and not compared: an input, or one with nothing to compute it from. */
function uncompared(sink: AnySink, line: LoggedSizingLine, key: string, name: string, role: FigureRole, why: string) {
  const n = loggedNumber(line, key);
  if (!n) return;
  if (n.truncated) {
    return cutFigure(sink, { line, name, derivedFrom: [] }, n, "the line is cut after this value");
  }
  const figure = { name, rank: sink.rank, line: line.line, logged: n.text, computed: null, match: null };
  sink.out.push({ ...figure, role, derivedFrom: [], why });
}

/** A figure taken from the log as an input: listed, not compared. */
export const inputFigure = (sink: AnySink, line: LoggedSizingLine, key: string, name: string, why: string) =>
  uncompared(sink, line, key, name, "input", why);

/** A figure with nothing logged to compute it from (or of an unmodelled generation): listed with why. */
export const notComputed = (sink: AnySink, line: LoggedSizingLine, key: string, name: string, why: string) =>
  uncompared(sink, line, key, name, "not-computed", why);

function cutFigure(
  sink: AnySink,
  spec: { name: string; line: LoggedSizingLine; derivedFrom: string[] },
  n: LoggedNumber,
  reason: string,
) {
  sink.truncated.push({ line: spec.line.line, name: spec.name, logged: n.text, reason });
  sink.out.push({ ...base(sink, spec, n), computed: null, match: null, role: "truncated", why: reason });
}

/** The logged digits begin some value of ours and the line ends right there: the number was cut. */
function cutDigits(n: LoggedNumber, computed: { lo: string; hi: string }): boolean {
  if (!n.atLineEnd || n.decimals !== 0 || !/^\d+$/.test(n.text)) return false;
  const lo = Number(computed.lo);
  const hi = Number(computed.hi);
  for (let extra = 1; n.text.length + extra <= computed.hi.length; extra++) {
    // The numbers that start with these digits and have `extra` more: [p·10^k, (p+1)·10^k − 1].
    const from = n.value * 10 ** extra;
    const to = (n.value + 1) * 10 ** extra - 1;
    if (from <= hi && to >= lo) return true;
  }
  return false;
}

/** Compares one logged figure with ours; a difference gets its cause. Returns the logged number when it is usable
 * as an anchor for other figures (null when absent or cut). */
export function evaluate<E extends { generation: string } = Env>(
  sink: FigureSink<E>,
  spec: FigureSpec<E>,
): LoggedNumber | null {
  const n = loggedNumber(spec.line, spec.key);
  if (!n) return null;
  if (n.truncated) {
    cutFigure(sink, spec, n, "the line is cut after this value (the keys SGLang prints after it are missing)");
    return null;
  }
  let v: { lo: number; hi: number } | null;
  try {
    v = spec.compute(sink.base);
  } catch {
    v = null;
  }
  if (v === null) {
    sink.out.push({ ...base(sink, spec, n), computed: null, match: null, role: "not-computed", why: spec.formula });
    return n;
  }
  const s = shown(v, n, spec.render);
  const computed = showRange(s);
  if (accepts(n, v, spec)) {
    sink.out.push({ ...base(sink, spec, n), computed, match: true, role: "compared", why: spec.formula });
    return n;
  }
  if (cutDigits(n, s)) {
    cutFigure(sink, spec, n, `the line ends inside the number: the log shows ${n.text}, ours is ${computed}`);
    return null;
  }
  const key = `${spec.name}|${n.text}|${computed}|${sink.base.generation}`;
  const cause = sink.causes.get(key) ?? causeOf(sink, spec, n, s);
  sink.causes.set(key, cause);
  sink.out.push({ ...base(sink, spec, n), computed, match: false, role: "compared", why: spec.formula, cause });
  return n;
}

function residual(n: LoggedNumber, s: { lo: string; hi: string }): string {
  const nearest = Math.abs(n.value - Number(s.lo)) <= Math.abs(n.value - Number(s.hi)) ? s.lo : s.hi;
  const d = n.value - Number(nearest);
  const text = d.toFixed(n.decimals);
  return d > 0 ? `+${text}` : text;
}

/** A V4 sink: its environment carries the sizing config and options the alternatives rewrite. */
const isV4Sink = (sink: AnySink): sink is FigureSink<Env> => "options" in sink.base && "config" in sink.base;

function causeOf<E extends { generation: string }>(
  sink: FigureSink<E>,
  spec: FigureSpec<E>,
  n: LoggedNumber,
  s: { lo: string; hi: string },
): FigureCause {
  if (spec.noAlternatives || !isV4Sink(sink))
    return {
      explained: false,
      alternatives: [],
      text: spec.noAlternatives ?? `no alternative arithmetic is modelled for ${sink.base.generation}`,
      value: null,
      residual: residual(n, s),
    };
  // A V4 sink computes in V4's Env, so its specs do too.
  return v4Cause(sink, spec as unknown as FigureSpec<Env>, n, s);
}

function v4Cause(sink: FigureSink, spec: FigureSpec, n: LoggedNumber, s: { lo: string; hi: string }): FigureCause {
  const ours = showRange(s);
  const extra = spec.solveRatio ? [...sink.extra, solvedRatio(spec.compute, n.value)] : sink.extra;
  const found = findCause(sink.base, spec.compute, (v) => accepts(n, v, spec), extra);
  if (!found) {
    return {
      explained: false,
      alternatives: [],
      text:
        `no alternative arithmetic SGLang used reproduces ${n.text} (ours ${ours}, residual ${residual(n, s)}): ` +
        "check the model and the arguments the server ran with",
      value: null,
      residual: residual(n, s),
    };
  }
  const value = showRange(shown(found.value, n, spec.render));
  const terms = found.alternatives.map((a, i) => (a.describe ? a.describe(found.envs[i]!) : a.term)).join(" and ");
  return {
    explained: true,
    alternatives: found.alternatives.map((a) => a.id),
    text: `${terms}: ${spec.name} ${value}, as logged (ours ${ours}, ${residual(n, s)})`,
    value,
    residual: residual(n, s),
  };
}
