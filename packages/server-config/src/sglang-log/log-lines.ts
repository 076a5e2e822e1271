/**
 * What one line of a pasted log is: a log line (logging's `[date time TPn] ` prefix, a level such as `INFO`, a
 * container or Ray prefix), a bare message (a log line pasted without its prefix: it starts with one of SGLang's
 * messages), prose, a table row or blank. Only log lines and bare messages are read as SGLang's; prose and tables
 * that merely mention a figure are not (an issue's text, a report's table).
 */
import type { LogRank } from "./types.js";

// biome-ignore lint/suspicious/noControlCharactersInRegex: terminal colour codes are control characters.
export const ANSI = /\x1b\[[0-9;]*[A-Za-z]/g;
/** logging's prefix: date, time, then the process's ranks (`TP0`, `DP1 TP1 EP1`, `PP0 TP3`, …). */
const PREFIX = /\[(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?)((?: [A-Z][A-Z_]*\d+)*)\] ?/g;
const RANK_TOKEN = /^([A-Z][A-Z_]*?)(\d+)$/;
/** What may stand before the message on a log line: a container name, a timestamp, a level, a Ray worker. */
const LEAD = [
  /^[\w.-]+\s+\|\s/, // docker compose: `sglang-1  | `
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z?\s/, // kubectl --timestamps
  /^\((?:[\w-]+ )?pid=\d+(?:, ip=[\d.]+)?\)\s*/, // Ray: `(SchedulerActor pid=123) `
  /^\[?(?:INFO|WARNING|WARN|DEBUG|ERROR)\]?(?::|\s)\s*(?:\d{2}-\d{2}\s[\d:.]+\s)?(?:\[[\w./:-]+\]\s*)?/, // levels
  /^[\w./-]+\.py:\d+\]?\s*(?:-\s*)?/, // a logger location `pool_configurator.py:212 - `
  /^(?:\.\.\.|…)\s+(?=[A-Z])/, // `... Allocating …`: a person elided the prefix of a log line
];
/** SGLang messages a bare line may start with (the sizing labels, server_args, the scheduler's line). */
const BARE_START = new RegExp(
  `^(?:${[
    "DSV4 ",
    "DSv4 ",
    "Initialize [A-Za-z0-9_]*DeepSeekV4",
    "server_args=",
    "max_total_num_tokens=",
    "Load weight",
    "Memory pool end",
    "KV Cache is allocated",
    "Auto-detected DSV4",
    "Use dsv4 attention backend",
  ].join("|")})`,
);

export type LineKind = "log" | "bare" | "prose" | "table" | "blank";

export interface ClassifiedLine {
  kind: LineKind;
  /** The message after every prefix (the line itself for prose). */
  message: string;
  rank: LogRank | null;
}

export function rankOf(label: string): LogRank | null {
  if (label === "") return null;
  const rank = { tp: null as number | null, dp: null as number | null, ep: null as number | null };
  const out = { ...rank, pp: null as number | null };
  for (const token of label.split(" ")) {
    const m = RANK_TOKEN.exec(token);
    if (!m) continue;
    const key = m[1]!.toLowerCase();
    if (key === "tp" || key === "dp" || key === "ep" || key === "pp") out[key] = Number(m[2]);
  }
  return { ...out, label };
}

/** Strips what stands before the message; `true` when something that marks a log line was found. */
function stripLead(text: string): { rest: string; marked: boolean } {
  let rest = text;
  let marked = false;
  for (let changed = true; changed; ) {
    changed = false;
    for (const lead of LEAD) {
      const m = lead.exec(rest);
      if (m && m[0].length > 0) {
        rest = rest.slice(m[0].length);
        marked = changed = true;
      }
    }
  }
  return { rest, marked };
}

export function classifyLine(raw: string): ClassifiedLine {
  const text = raw.replace(/^\s*>\s?/, ""); // a quoted block in an issue
  if (text.trim() === "" || /^\s*(?:```|~~~)/.test(text)) return { kind: "blank", message: "", rank: null };
  if (/^\s*\|/.test(text)) return { kind: "table", message: text.trim(), rank: null };
  const lead = stripLead(text.trimStart());
  PREFIX.lastIndex = 0;
  const prefix = PREFIX.exec(lead.rest);
  if (prefix && prefix.index === 0) {
    const after = stripLead(lead.rest.slice(prefix[0].length)).rest;
    return { kind: "log", message: after, rank: rankOf(prefix[2]!.trim()) };
  }
  if (lead.marked) return { kind: "log", message: lead.rest, rank: null };
  // A log line glued after other output (a progress bar redrawn without a newline): the last prefix starts it.
  PREFIX.lastIndex = 0;
  const glued = [...lead.rest.matchAll(PREFIX)].at(-1);
  if (glued && glued.index > 0)
    return { kind: "log", message: lead.rest.slice(glued.index + glued[0].length), rank: rankOf(glued[2]!.trim()) };
  if (BARE_START.test(lead.rest)) return { kind: "bare", message: lead.rest, rank: null };
  return { kind: "prose", message: text.trim(), rank: null };
}

/** The first 80 characters of a line, for the skipped list. */
export const excerpt = (raw: string) => raw.replace(ANSI, "").trim().slice(0, 80);
