/**
 * The page's engines comparison: when the settings include --compare-engines, the chart of memory per kind on
 * SGLang and vLLM, rerun with the check (a refusal of the comparison's inputs joins the page's alerts).
 */
import { Dsv4KvError } from "@dsv4-kv/errors";
import type { CheckReport } from "@dsv4-kv/server-config";
import { enginesComparisonOf } from "../../check/compare-engines.js";
import type { CheckPipelineInput } from "../../check/pipeline.js";
import { enginesChart } from "./charts/engines.js";

export function enginesSection(input: CheckPipelineInput, report: CheckReport, errors: Dsv4KvError[]): HTMLElement[] {
  try {
    const comparison = enginesComparisonOf(input.values, report, input.model);
    return comparison ? [enginesChart(comparison)] : [];
  } catch (error) {
    if (!Dsv4KvError.isInstance(error)) throw error;
    errors.push(error as Dsv4KvError);
    return [enginesChart(null)];
  }
}
