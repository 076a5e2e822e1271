/**
 * The text report of `check --engine vllm --against-log`: where the log came from, every input and its source, every
 * figure against ours with its verdict and cause, the lines skipped, and a one-line summary.
 */
import type { VllmFigureComparison, VllmLogComparison, VllmVersionUsed } from "@dsv4-kv/server-config";

const FROM: Readonly<Record<string, string>> = {
  "log-args": "the log's arguments",
  "log-line": "a log line",
  flag: "a flag",
  default: "vLLM's default (the log does not state it)",
  "not-modelled": "not modelled",
};

function verdictText(f: VllmFigureComparison): string {
  if (f.role === "input") return "input";
  if (f.role === "not-computed") return "NOT COMPUTED";
  if (f.verdict === "within-rounding") return "within rounding";
  return f.verdict === "different" ? "DIFFERENT" : "equal";
}

function figureRows(c: VllmLogComparison): string[] {
  const rows = c.figures.map((f) => {
    const where = `${f.line}${f.source === "quoted" ? "q" : ""}`.padStart(5);
    const ours = f.computed ?? "-";
    return `  ${where}  ${f.name.padEnd(28)} ${f.logged.padStart(12)}  ${ours.padStart(21)}  ${verdictText(f)}`;
  });
  const causes = new Map<string, string>();
  for (const f of c.figures)
    if (f.cause) causes.set(f.cause.id, `${f.cause.explained ? "explained" : "not explained"}: ${f.cause.text}`);
  return [
    "  line  figure                             logged                   ours  verdict",
    ...rows,
    ...(causes.size > 0 ? ["", "Causes:", ...[...causes].map(([id, text]) => `  [${id}] ${text}`)] : []),
  ];
}

const VERSION_FROM: Readonly<Record<VllmVersionUsed["from"], string>> = {
  flag: "--vllm-version",
  log: "the log's version",
  default: "the default: the log prints no version dsv4-kv models; --vllm-version overrides",
};

function sizingLine(v: VllmVersionUsed): string {
  const inFlight = v.behaviour.inFlight === "batchedTokens" ? "the batched tokens alone" : "every concurrent batch";
  return `sizing: vLLM ${v.version} (${VERSION_FROM[v.from]}): sliding groups reserve ${inFlight}`;
}

export function formatVllmLogComparison(c: VllmLogComparison, path: string, lines: number): string {
  const version = c.version === null ? "version not printed" : `vLLM ${c.version}`;
  const out = [
    `vLLM start-up log ${path} (${lines} lines, ${version})`,
    `model: ${c.model}`,
    sizingLine(c.versionUsed),
    ...(c.versionUsed.warning ? [`  warning [${c.versionUsed.warning.id}]: ${c.versionUsed.warning.text}`] : []),
    ...c.evidence.map((e) => `  evidence: ${e}`),
    "",
    "Inputs (where each came from):",
    ...c.inputs.map(
      (i) => `  ${i.name.padEnd(26)} ${i.value.padEnd(14)} ${FROM[i.from]}${i.line ? ` (line ${i.line})` : ""}`,
    ),
    "",
    "Figures (line: q = quoted in prose or a table; ours at the log's precision):",
    ...figureRows(c),
  ];
  if (c.skipped.length > 0) out.push("", "Skipped:", ...c.skipped.map((s) => `  line ${s.line}: ${s.reason}`));
  const count = (v: string) => c.figures.filter((f) => f.verdict === v).length;
  const missing = c.figures.filter((f) => f.role === "not-computed").length;
  out.push(
    "",
    c.nothingCompared
      ? `Nothing compared: ${c.nothingCompared}`
      : `Summary: ${count("equal")} equal, ${count("within-rounding")} within rounding, ${count("different")} different, ${missing} not computed`,
  );
  return `${out.join("\n")}\n`;
}
