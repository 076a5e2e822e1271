/**
 * Capacity against the draft-token count: the check pipeline rerun for each count (residency runs off: only the
 * sizing and the rings are read), with the ring the advisor names when the current one stops serving. DOM-free.
 */
import { Dsv4KvError } from "@dsv4-kv/errors";
import type { CheckReport } from "@dsv4-kv/server-config";
import type { CheckPipelineInput } from "../../check/pipeline.js";
import { runCheckPipeline } from "../../check/pipeline.js";

export interface CapacityPoint {
  draftTokens: number;
  /** Full tokens (max_total_num_tokens) with the current rings; null when the budget sizes no pools. */
  tokens: number | null;
  /** Requests that fit at full context: min(max running requests, tokens ÷ context length). */
  requestsAtFullContext: number | null;
  /** The c4 ring this count needs: the current one while it serves, else the advisor's (null: none serves). */
  ringC4: number | null;
  /** Whether the current rings serve this count (D ≤ every ring's write pad). */
  currentServes: boolean;
  /** Full tokens with the advisor's c4 ring (when the current one does not serve). */
  tokensAdvised: number | null;
  /** The check's verdict at this count. */
  ok: boolean;
}

/** Counts 1 … `maxDraftTokens` (each a full pipeline run); a count the pipeline refuses is left out. */
export function capacitySweep(input: CheckPipelineInput, maxDraftTokens: number): CapacityPoint[] {
  const points: CapacityPoint[] = [];
  for (let d = 1; d <= maxDraftTokens; d++) {
    const values = { ...input.values, "speculative-num-draft-tokens": d, "residency-steps": 0 };
    let report: CheckReport;
    try {
      report = runCheckPipeline({ ...input, values }).report;
    } catch (error) {
      if (!Dsv4KvError.isInstance(error)) throw error;
      continue;
    }
    points.push(pointOf(report, d));
  }
  return points;
}

function pointOf(report: CheckReport, draftTokens: number): CapacityPoint {
  const d = report.derived;
  const sizing = report.sizing;
  const tokens = sizing?.sizes.maxTotalNumTokens ?? null;
  const c4 = report.advice.find((a) => a.ratio === 4 && !a.currentServes);
  const pads = (["c4", "c128"] as const)
    .filter((k) => d.ringSizes[k] != null && !(k === "c128" && d.onlineC128))
    .map((k) => d.writePads[k]!);
  return {
    draftTokens,
    tokens,
    requestsAtFullContext:
      sizing && tokens !== null ? Math.min(sizing.maxRunningRequests, Math.floor(tokens / d.contextLen)) : null,
    ringC4: c4 ? c4.ringSize : (d.ringSizes.c4 ?? null),
    currentServes: pads.every((pad) => draftTokens <= pad),
    tokensAdvised: c4?.capacityTokensAdvised ?? null,
    ok: report.ok,
  };
}
