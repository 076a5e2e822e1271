/**
 * Which configurator generation wrote a log, from the log's own evidence: which sizing lines exist, the spelling of
 * their labels, their fields, the server_args keys and the environment (docs/reference/configurator-generations.md).
 */
import type { CheckReport } from "../check.js";
import { detectPlatform } from "./platform.js";
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

/** The line holds only these keys, and every one of them unless the line is cut. */
function fits(line: LoggedSizingLine, expected: readonly string[], needed: readonly string[] = expected): boolean {
  const keys = Object.keys(line.fields);
  if (!keys.every((k) => expected.includes(k))) return false;
  return line.missing.length > 0 || needed.every((k) => k in line.fields);
}

/** Evidence that the server ran on an Ascend NPU: the log's own (platform.ts), or the check's arguments. */
function npuEvidence(log: ParsedSglangLog, report: CheckReport): string | null {
  const platform = detectPlatform(log);
  if (platform.platform === "npu") return platform.evidence.join("; ");
  if (report.args.platform === "npu") return "the check's arguments say platform npu";
  return null;
}

/** Gen B's lines without its memory line (an excerpt): Gen B or the NPU pool, by the platform. */
function withoutMemoryLine(log: ParsedSglangLog, report: CheckReport, evidence: string[]): DetectedGeneration {
  const pools = log.sizingLines.find((l) => l.kind === "pool-sizes");
  const capLine = log.sizingLines.find((l) => l.kind === "swa-sizing" && l.fields.mode === "cap");
  if (capLine) return unknown(evidence, `line ${capLine.line} says mode=cap but the memory line is missing`);
  const c128State = pools?.fields.c128_state;
  if (pools && typeof c128State === "object" && !c128State.truncated && c128State.value > 0) {
    evidence.push(
      `line ${pools.line}: a "DSV4 pool sizes" line whose c128_state is ${c128State.text}, not 0: c128 state priced ` +
        "per SWA token, the calculator after the earliest (gen-a-pools)",
    );
    return { generation: "gen-a-pools", evidence, unmodelledReason: null };
  }
  const poolInit = log.sizingLines.find((l) => l.kind === "pool-init");
  if (!pools && !poolInit)
    return unknown(
      evidence,
      "only the scheduler's max_total_num_tokens line: nothing tells the generation or sizes it",
    );
  if (pools) evidence.push(`line ${pools.line}: a "DSV4 pool sizes" line, which Gen B and later print`);
  else evidence.push("no memory calculation or pool sizes line: Gen B's arithmetic is assumed for the pool lines");
  const npu = npuEvidence(log, report);
  if (npu) {
    evidence.push(`${npu}: the Ascend NPU pool (page size 128, paged compress state per request slot)`);
    return { generation: "npu", evidence, unmodelledReason: null };
  }
  return { generation: "gen-b", evidence, unmodelledReason: null };
}

function unknown(evidence: string[], reason: string): DetectedGeneration {
  return { generation: "unknown", evidence: [...evidence, reason], unmodelledReason: reason };
}

export function detectGeneration(log: ParsedSglangLog, report: CheckReport): DetectedGeneration {
  const evidence: string[] = [];
  const memory = log.sizingLines.filter((l) => l.kind === "memory-calculation");
  const swa = log.sizingLines.filter((l) => l.kind === "swa-sizing");
  if (log.sizingLines.length === 0) return unknown(evidence, "the section has no DSV4 sizing line");
  if (memory.length === 0) return withoutMemoryLine(log, report, evidence);
  const first = memory[0]!;
  const keys = Object.keys(first.fields).join(", ");
  evidence.push(`line ${first.line}: "${first.label}" with ${keys}`);
  const spelt = first.label.startsWith("DSv4") ? "DSv4" : "DSV4";
  if (fits(first, GEN_A_FIELDS) && spelt === "DSv4") {
    evidence.push(
      "the label is spelt 'DSv4' and there is no c128_state_fixed: the earliest calculator (gen-a), which prices " +
        "c128 state per SWA token, counts every compress_ratios entry (the draft layer's too) as a SWA layer, " +
        "and sizes the rings of the other mode (8/128 with MTP on, 16/256 without)",
    );
    return { generation: "gen-a", evidence, unmodelledReason: null };
  }
  if (fits(first, GEN_A_FIELDS) && first.missing.length === 0) {
    const pools = log.sizingLines.find((l) => l.kind === "pool-sizes");
    evidence.push(
      `'DSV4' without c128_state_fixed${pools ? ` and a "DSV4 pool sizes" line (line ${pools.line})` : ""}: the ` +
        "calculator after the earliest (gen-a-pools), which prices c128 state per SWA token with its own rings " +
        "and the target layers",
    );
    return { generation: "gen-a-pools", evidence, unmodelledReason: null };
  }
  if (spelt === "DSV4" && fits(first, CAP_FIELDS, ["swa_fixed"]) && "swa_fixed" in first.fields) {
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
  if (spelt === "DSV4" && fits(first, GEN_B_FIELDS)) {
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
