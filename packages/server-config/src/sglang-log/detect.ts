/**
 * Which configurator generation wrote a log, from the log's own evidence: which sizing lines exist, the spelling of
 * their labels, their fields, the server_args keys and the environment (docs/reference/configurator-generations.md).
 */
import type { CheckReport } from "../check.js";
import type { ConfiguratorGeneration, LoggedSizingLine, ParsedSglangLog } from "./types.js";

export interface DetectedGeneration {
  generation: ConfiguratorGeneration;
  evidence: string[];
  /** Why the figures cannot be computed (only for "unknown"). */
  unmodelledReason: string | null;
}

const GEN_A_FIELDS = ["bytes_per_full_token", "available_bytes", "full_token"];
const GEN_B_FIELDS = [...GEN_A_FIELDS, "c128_state_fixed"];
const CAP_FIELDS = [...GEN_B_FIELDS, "swa_fixed"];

function sameKeys(line: LoggedSizingLine, expected: readonly string[]): boolean {
  const keys = Object.keys(line.fields);
  return keys.length === expected.length && expected.every((k) => k in line.fields);
}

/** Evidence that the server ran on an Ascend NPU: the device argument, the platform, or Ascend's environment. */
function npuEvidence(log: ParsedSglangLog, report: CheckReport): string | null {
  const device = log.serverArgs?.device;
  if (device === "npu") return "server_args has device='npu'";
  const ascendEnv = Object.keys(log.env).find((k) => k.startsWith("ASCEND_") || k.startsWith("HCCL_"));
  if (ascendEnv) return `the environment sets ${ascendEnv} (Ascend)`;
  if (report.args.platform === "npu") return "the check's arguments say platform npu";
  return null;
}

function unknown(evidence: string[], reason: string): DetectedGeneration {
  return { generation: "unknown", evidence: [...evidence, reason], unmodelledReason: reason };
}

export function detectGeneration(log: ParsedSglangLog, report: CheckReport): DetectedGeneration {
  const evidence: string[] = [];
  const memory = log.sizingLines.filter((l) => l.kind === "memory-calculation");
  const swa = log.sizingLines.filter((l) => l.kind === "swa-sizing");
  if (memory.length === 0) return unknown(evidence, "the log has no DSV4 memory calculation line");
  const first = memory[0]!;
  const keys = Object.keys(first.fields).join(", ");
  evidence.push(`line ${first.line}: "${first.label}" with ${keys}`);
  if (first.label.startsWith("DSv4") && sameKeys(first, GEN_A_FIELDS)) {
    evidence.push("the label is spelt 'DSv4' and there is no c128_state_fixed: the earliest calculator (gen-a)");
    return { generation: "gen-a", evidence, unmodelledReason: null };
  }
  if (first.label.startsWith("DSV4") && sameKeys(first, CAP_FIELDS)) {
    const mode = swa.map((l) => l.fields.mode).find((m) => typeof m === "string");
    if (mode === "cap") {
      evidence.push(`a "DSV4 SWA sizing: mode=cap" line and a swa_fixed field: cap-mode SWA sizing (gen-b-cap)`);
      return { generation: "gen-b-cap", evidence, unmodelledReason: null };
    }
    if (typeof mode === "string" && mode.startsWith("ratio")) {
      evidence.push(`"DSV4 SWA sizing: mode=${mode}": the cap-era configurator in ratio mode prices SWA like Gen B`);
      return { generation: "gen-b", evidence, unmodelledReason: null };
    }
    return unknown(evidence, "a swa_fixed field without a DSV4 SWA sizing line to say which mode sized SWA");
  }
  if (first.label.startsWith("DSV4") && sameKeys(first, GEN_B_FIELDS)) {
    const capLine = swa.find((l) => l.fields.mode === "cap");
    if (capLine) return unknown(evidence, `line ${capLine.line} says mode=cap but the memory line has no swa_fixed`);
    evidence.push("'DSV4' with c128_state_fixed and no swa_fixed: Gen B's configurator");
    const npu = npuEvidence(log, report);
    if (npu) {
      evidence.push(`${npu}: the Ascend NPU pool (page size 128, paged compress state per request slot)`);
      return { generation: "npu", evidence, unmodelledReason: null };
    }
    return { generation: "gen-b", evidence, unmodelledReason: null };
  }
  return unknown(evidence, `the memory calculation line's label and fields (${keys}) match no generation we model`);
}
