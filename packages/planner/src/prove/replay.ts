/**
 * Concrete batch sequences: what a counterexample prints, what `simulate residency --replay` reads back, and the
 * prover's self-check (every abstract counterexample must violate R1 in the real simulator, at its last batch).
 */
import { closestMatch } from "@dsv4-kv/errors/internal";
import { PlannerError } from "../errors.js";
import { requireInteger } from "../inputs.js";
import { type ResidencyConfig, type ResidencyViolation, RingResidencySimulator } from "../residency.js";
import type { AbstractStep } from "./search.js";

export type ResidencyBatch =
  | { kind: "prefill"; tokens: number }
  | { kind: "verify"; draftTokens: number; accept: number }
  | { kind: "decode" }
  | { kind: "radixResume"; prefix: number };

export interface ReplayResult {
  /** Batches run (a radix resume is not a batch of its own). */
  steps: number;
  /** False when `control.stop` ended the replay before its last batch. */
  complete: boolean;
  finalPrefix: number;
  violations: number;
  firstViolation: ResidencyViolation | null;
}

const BATCH_KEYS: Record<ResidencyBatch["kind"], readonly string[]> = {
  prefill: ["kind", "tokens"],
  verify: ["kind", "draftTokens", "accept"],
  decode: ["kind"],
  radixResume: ["kind", "prefix"],
};

/** `{ suggestion }` when a known name is close to `given`, else no params. */
function suggestionOf(given: unknown, known: readonly string[]): { suggestion: string } | undefined {
  const suggestion = typeof given === "string" ? closestMatch(given, known) : null;
  return suggestion === null ? undefined : { suggestion };
}

/** What a replay drives: the c4/c128 ring simulator or the ratio-2 pair-ring simulator. */
export interface BatchSimulator {
  readonly prefix: number;
  readonly step: number;
  readonly violationCount: number;
  readonly firstViolation: ResidencyViolation | null;
  run(batch: ResidencyBatch): void;
}

function runBatch(sim: BatchSimulator, b: ResidencyBatch, i: number): void {
  const kind = (b as { kind?: unknown }).kind;
  // Own keys only: `kind in BATCH_KEYS` would accept "constructor" and read an inherited function.
  if (typeof kind !== "string" || !Object.hasOwn(BATCH_KEYS, kind)) {
    const kinds = Object.keys(BATCH_KEYS);
    throw new PlannerError(
      "INVALID_ARGUMENT",
      `batches[${i}].kind`,
      kind,
      `must be one of ${kinds.join(", ")}`,
      suggestionOf(kind, kinds),
    );
  }
  const keys = BATCH_KEYS[kind as ResidencyBatch["kind"]];
  for (const k of Object.keys(b)) {
    if (!keys.includes(k)) {
      const rule = `is not a field of a ${kind} batch`;
      throw new PlannerError("INVALID_ARGUMENT", `batches[${i}].${k}`, k, rule, suggestionOf(k, keys));
    }
  }
  // each field checked under its name in the file, then the simulator runs the batch
  if (b.kind === "prefill") requireInteger(`batches[${i}].tokens`, b.tokens, 1, 65535);
  else if (b.kind === "verify") {
    requireInteger(`batches[${i}].draftTokens`, b.draftTokens, 1, 65535);
    requireInteger(`batches[${i}].accept`, b.accept, 1, b.draftTokens);
  } else if (b.kind === "radixResume") requireInteger(`batches[${i}].prefix`, b.prefix, 0, sim.prefix);
  sim.run(b);
}

/** What a long replay is driven by: progress after each batch, and a stop asked before each (a time limit). */
export interface ReplayControl<S extends BatchSimulator = RingResidencySimulator> {
  /** After each batch: how many ran, of how many, the batch and the simulator after it (to draw the ring). */
  onBatch?: (done: number, total: number, batch: ResidencyBatch, simulator: S) => void;
  stop?: () => boolean;
}

/** Runs a batch sequence on an empty ring in the residency simulator. */
export function replayResidency(
  config: ResidencyConfig,
  batches: readonly ResidencyBatch[],
  control: ReplayControl = {},
): ReplayResult {
  return replayOn(new RingResidencySimulator(config), batches, control);
}

/** Runs a batch sequence on the simulator given (fresh: an empty ring). */
export function replayOn<S extends BatchSimulator>(
  sim: S,
  batches: readonly ResidencyBatch[],
  control: ReplayControl<S> = {},
): ReplayResult {
  if (!Array.isArray(batches)) {
    throw new PlannerError("INVALID_TYPE", "batches", batches, "must be an array of batches");
  }
  let complete = true;
  for (const [i, b] of batches.entries()) {
    if (control.stop?.() === true) {
      complete = false;
      break;
    }
    if (typeof b !== "object" || b === null) {
      throw new PlannerError("INVALID_TYPE", `batches[${i}]`, b, "must be a batch object");
    }
    runBatch(sim, b, i);
    control.onBatch?.(i + 1, batches.length, b, sim);
  }
  return {
    steps: sim.step,
    complete,
    finalPrefix: sim.prefix,
    violations: sim.violationCount,
    firstViolation: sim.firstViolation,
  };
}

/**
 * Makes an abstract path concrete (absolute resume prefixes) and replays it: the violation must show at the
 * last batch and nowhere before, or the prover and the simulator disagree.
 */
export function concretizePath(
  config: ResidencyConfig,
  path: readonly AbstractStep[],
): { batches: ResidencyBatch[]; violation: ResidencyViolation } {
  const sim = new RingResidencySimulator(config);
  return concretizeOn(sim, sim.swaPageSize, path);
}

/** `concretizePath` on the simulator given (fresh); `swaPageSize` places the resumes of paged c4. */
export function concretizeOn(
  sim: BatchSimulator,
  swaPageSize: number,
  path: readonly AbstractStep[],
): { batches: ResidencyBatch[]; violation: ResidencyViolation } {
  const batches: ResidencyBatch[] = [];
  let prefixBefore = 0;
  path.forEach((s, i) => {
    let b: ResidencyBatch;
    if (s.kind === "radixResume") {
      b = { kind: "radixResume", prefix: Math.floor(sim.prefix / swaPageSize) * swaPageSize };
    } else if (s.kind === "radixResumeTo") {
      b = { kind: "radixResume", prefix: prefixBefore + s.end };
    } else {
      prefixBefore = sim.prefix;
      b = s;
    }
    if (i < path.length - 1 && sim.violationCount > 0) disagree(path, batches);
    runBatch(sim, b, i);
    batches.push(b);
  });
  const violation = sim.firstViolation;
  if (violation === null || violation.step !== sim.step) disagree(path, batches);
  return { batches, violation: violation! };
}

function disagree(path: readonly AbstractStep[], batches: readonly ResidencyBatch[]): never {
  throw new PlannerError(
    "SIMULATION",
    "counterexample",
    JSON.stringify(batches),
    `the prover's path of ${path.length} steps does not violate at its last batch in the simulator (prover bug)`,
  );
}

/** Each batch in words, with the prefix it starts at (as the simulator names batches). */
export function describeBatches(batches: readonly ResidencyBatch[]): string[] {
  let prefix = 0;
  return batches.map((b) => {
    const at = prefix;
    if (b.kind === "prefill") {
      prefix += b.tokens;
      return `prefill of ${b.tokens} token${b.tokens === 1 ? "" : "s"} at prefix ${at}`;
    }
    if (b.kind === "verify") {
      prefix += b.accept;
      return `verify of D=${b.draftTokens} at prefix ${at}, accept ${b.accept}`;
    }
    if (b.kind === "decode") {
      prefix += 1;
      return `decode at position ${at}`;
    }
    prefix = b.prefix;
    return `radix resume of a new request at prefix ${b.prefix} (an SWA-page boundary), sharing the pages`;
  });
}
