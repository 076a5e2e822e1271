/**
 * Test helper: writes the DSV4 sizing lines a configurator generation prints at start-up, in SGLang's formats, from
 * our own sizing of a check report's budget. Returns the text and the same lines already parsed, so reconciliation
 * tests do not depend on the log parser.
 */
import { GIB, numReqSlots } from "@dsv4-kv/memory-pool/internal";
import { resolveMaxRunningRequests } from "@dsv4-kv/memory-pool";
import {
  type ConfiguratorGenerationId,
  type GenerationSizing,
  finalizedC128StatePoolSize,
  isSwaScopedC128,
  npuStatePoolSize,
  sizeForGeneration,
  sizesFromMaxTokensForGeneration,
} from "@dsv4-kv/memory-pool/internal";
import type { CheckReport } from "../check.js";
import { ServerConfigError } from "../errors.js";
import { sizingConfigOf } from "./reconcile.js";
import type { LoggedNumber, LoggedSizingLine, ParsedSglangLog } from "./types.js";

export interface RenderLogOptions {
  /** Rank prefix of every line (default "TP0"). */
  rank?: string;
  /** Cap mode: the request cap plus headroom the SWA sizing line prints (default 13312). */
  swaCapTokens?: number;
  /** Cap mode: prefix_tails printed on the SWA sizing line (default 16). */
  prefixTails?: number;
}

type Field = [key: string, text: string, unit?: string];
interface Entry {
  kind: string;
  label: string;
  fields: Field[];
  /** How the label and fields are joined: `label: k=v, k=v` or `label with k=v k=v`. */
  style: "colon" | "with" | "bare";
}

const gb = (bytes: number) => (bytes / GIB).toFixed(2);

function memoryLine(generation: ConfiguratorGenerationId, s: GenerationSizing, availableBytes: number): Entry {
  const fields: Field[] = [
    ["bytes_per_full_token", s.bytesPerFullToken.toFixed(2)],
    ["available_bytes", gb(availableBytes), "GB"],
  ];
  if (!isSwaScopedC128(generation)) fields.push(["c128_state_fixed", gb(s.c128StateFixedBytes), "GB"]);
  if (generation === "gen-b-cap") fields.push(["swa_fixed", gb(s.swaFixedBytes), "GB"]);
  fields.push(["full_token", String(s.fullTokens)]);
  const label = generation === "gen-a" ? "DSv4 memory calculation" : "DSV4 memory calculation";

  return { kind: "memory-calculation", label, fields, style: "colon" };
}

function poolSizesLine(s: GenerationSizing): Entry {
  const fields: Field[] = [
    ["full", String(s.fullTokens)],
    ["swa", String(s.swaTokens)],
    ["c4", String(s.c4Size)],
    ["c128", String(s.c128Size)],
    ["c4_state", String(s.c4StatePoolSize)],
    ["c128_state", String(s.c128StatePoolSize)],
  ];
  return { kind: "pool-sizes", label: "DSV4 pool sizes", fields, style: "colon" };
}

function entries(report: CheckReport, generation: ConfiguratorGenerationId, options: RenderLogOptions): Entry[] {
  const budget = report.budget.availableBytes;
  if (budget == null) {
    throw new ServerConfigError(
      "INVALID_ARGUMENT",
      "report.budget.availableBytes",
      null,
      "a log can only be written for a report with a KV budget",
    );
  }
  const config = sizingConfigOf(report, generation);
  const layers = report.derived.layers.total;
  // Gen A scales the budget by L / (L + 1) for the draft worker before sizing and logging it.
  const available =
    generation === "gen-a" && config.isSpeculative ? Math.trunc((budget * layers) / (layers + 1)) : budget;
  const swaCapTokens = options.swaCapTokens ?? 13312;
  const opts = { swaCapTokens };
  const sized = sizeForGeneration(generation, config, available, opts);
  const out: Entry[] = [];
  if (generation === "gen-b-cap") {
    out.push({
      kind: "swa-sizing",
      label: "DSV4 SWA sizing",
      fields: [
        ["mode", "cap"],
        ["swa_tokens", String(swaCapTokens)],
        ["request_cap+headroom", String(swaCapTokens)],
        ["prefix_tails", String(options.prefixTails ?? 16)],
      ],
      style: "colon",
    });
  }
  out.push(memoryLine(generation, sized, available));
  if (generation !== "gen-a") out.push(poolSizesLine(sized));
  let final = sized;
  const T = config.maxTotalTokens;
  // The earliest calculator logs no re-sizing: its lines are written for the budget alone.
  if (T != null && T < sized.fullTokens && generation !== "gen-a") {
    final = sizesFromMaxTokensForGeneration(generation, config, T, opts);
    out.push(poolSizesLine(final));
  }
  // The earliest calculator gives every worker the whole --max-running-requests (no attention-DP split).
  const mrr = resolveMaxRunningRequests(
    generation === "gen-a" ? { ...config, attnDpSize: 1 } : config,
    final.fullTokens,
  );
  const slots = numReqSlots(config, mrr);
  const P = config.pageSize;
  const c4State = generation === "npu" ? npuStatePoolSize(4, P, mrr) : final.c4StatePoolSize;
  const c128State =
    generation === "npu"
      ? npuStatePoolSize(128, P, mrr)
      : isSwaScopedC128(generation)
        ? final.c128StatePoolSize
        : finalizedC128StatePoolSize(config, slots);
  out.push({
    kind: "pool-init",
    label: "Initialize DeepSeekV4TokenToKVPool",
    fields: [
      ["max_num_reqs", String(mrr)],
      ["swa_size", String(final.swaTokens)],
      ["c4_size", String(final.c4Size)],
      ...(generation === "gen-a" ? [] : ([["c4_logical_size", String(final.c4LogicalSize)]] as Field[])),
      ["c128_size", String(final.c128Size)],
      ["c4_state_pool_size", String(c4State)],
      ["c128_state_pool_size", String(c128State)],
    ],
    style: "with",
  });
  out.push({
    kind: "max-total-tokens",
    label: "",
    fields: [
      ["max_total_num_tokens", String(final.fullTokens)],
      ["max_running_requests", String(mrr)],
    ],
    style: "bare",
  });
  return out;
}

function renderEntry(e: Entry): string {
  const pair = ([k, v, unit]: Field) => `${k}=${v}${unit ? ` ${unit}` : ""}`;
  if (e.style === "with") return `${e.label} with ${e.fields.map(pair).join(" ")}`;
  if (e.style === "bare") return e.fields.map(pair).join(", ");
  return `${e.label}: ${e.fields.map(pair).join(", ")}`;
}

function logged(text: string, unit = ""): LoggedNumber | string {
  if (!/^-?\d+(\.\d+)?$/.test(text)) return text;
  const dot = text.indexOf(".");
  return { text, value: Number(text), decimals: dot < 0 ? 0 : text.length - dot - 1, unit };
}

/** The sizing lines `generation` prints for the report's budget: text (one line each) and parsed. */
export function renderSglangSizingLog(
  report: CheckReport,
  generation: ConfiguratorGenerationId,
  options: RenderLogOptions = {},
): { text: string; log: ParsedSglangLog } {
  const rank = options.rank ?? "TP0";
  const list = entries(report, generation, options);
  // The NPU pool is told apart by the server's device argument, which its server_args line carries.
  const serverArgs = generation === "npu" ? { device: "npu" } : null;
  const head = serverArgs ? [`[2026-05-15 09:09:50] server_args=ServerArgs(device='npu')`] : [];
  const lines = [...head, ...list.map((e) => `[2026-05-15 09:09:53 ${rank}] ${renderEntry(e)}`)];
  const tp = /TP(\d+)/.exec(rank);
  const sizingLines: LoggedSizingLine[] = list.map((e, i) => ({
    kind: e.kind,
    line: head.length + i + 1,
    rank: { tp: tp ? Number(tp[1]) : null, dp: null, ep: null, pp: null, label: rank },
    label: e.label,
    fields: Object.fromEntries(e.fields.map(([k, v, unit]) => [k, logged(v, unit)])),
    missing: [],
    joined: [],
  }));
  return {
    text: `${lines.join("\n")}\n`,
    log: {
      section: 1,
      firstLine: 1,
      lastLine: lines.length,
      startedBy: serverArgs ? "server_args" : "file-start",
      skipped: [],
      platformHints: [],
      serverArgs,
      serverArgsLine: serverArgs ? 1 : null,
      env: {},
      launchCommand: null,
      sizingLines,
      startupLines: [],
    },
  };
}
