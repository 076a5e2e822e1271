/**
 * What `check --html` puts in the page for a DeepSeek-V4.1 model: the V4.1 report as `--json` prints it and the
 * ratio-2 ring geometry read from the config: per layer group sharing one KV source, the layers, the source, the
 * ring size R₂ and the pair-state rows it allocates (server-config's `v41RingGroups`). The page draws them; nothing
 * is recomputed in the browser.
 */
import {
  type LogComparison,
  type V41CheckReport,
  type V41ModelPreset,
  type V41RingGroup,
  v41RingGroups,
} from "@dsv4-kv/server-config";

export interface V41Payload {
  kind: "check-v41";
  /** `check --json`'s V4.1 object; with --against-log also the reconciled section and every section. */
  report: V41CheckReport & {
    schemaVersion?: number;
    logComparison?: LogComparison;
    sections?: { section: number; ok: boolean; logComparison: LogComparison }[];
  };
  ringGroups: V41RingGroup[];
}

export function v41Payload(report: V41CheckReport, json: Record<string, unknown>, model: V41ModelPreset): V41Payload {
  return { kind: "check-v41", report: { ...json, ...report }, ringGroups: v41RingGroups(model, report) };
}
