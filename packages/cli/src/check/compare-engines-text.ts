/** The text section of `check --compare-engines`: the mapping, both engines' capacity, memory per kind, the causes. */
import type { EnginesComparison } from "@dsv4-kv/server-config";

const n = (v: number): string => Math.round(v).toLocaleString("en-US");
const b2 = (v: number): string => v.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const signed = (v: number): string => `${v >= 0 ? "+" : "−"}${b2(Math.abs(v))}`;
const GIB = 2 ** 30;
const gib = (v: number): string => (v / GIB).toFixed(3);

function mappingLines(m: EnginesComparison["mapping"]): string[] {
  const spec = m.speculative.vllm;
  const vllmSpec = spec ? `{"method":"${spec.method}","num_speculative_tokens":${spec.numSpeculativeTokens}}` : "none";
  return [
    `  model ${m.model}, tp ${m.tpSize} (both engines replicate the one KV head on every rank), pp ${m.pipelineParallelSize}`,
    `  --context-length ${m.contextLength} = --max-model-len; --page-size ${m.blockSize} = --block-size`,
    `  --kv-cache-dtype ${m.kvCacheDtype.sglang} = ${m.kvCacheDtype.vllm}; FP4 indexer ${m.fp4IndexerCache}`,
    `  speculative ${m.speculative.sglang} = --speculative-config ${vllmSpec}`,
    `  vLLM --max-num-batched-tokens ${m.maxNumBatchedTokens} (--compare-max-num-batched-tokens)`,
    `  budget (${m.budget.rule}): ${m.budget.text}`,
  ];
}

function capacityLines(c: EnginesComparison): string[] {
  const s = c.sglang;
  const v = c.vllm;
  const perToken = v.bytesPerToken === null ? "no block" : `${b2(v.bytesPerToken)} B per token`;
  return [
    `  SGLang: ${n(s.tokens)} tokens, ${b2(s.requestsAtContextLength)} requests of ${n(c.mapping.contextLength)} ` +
      `at once (max running ${s.maxRunningRequests}); budget ${n(s.availableBytes)} B, ${b2(s.bytesPerToken)} B per token`,
    `  vLLM:   ${n(v.tokens)} tokens, concurrency ${b2(v.maxConcurrency)}; ${n(v.numGpuBlocks)} blocks of ` +
      `${n(v.blockStrideBytes)} B (${v.groups} groups), ${n(v.blocksPerRequest)} per request; budget ` +
      `${n(v.availableBytes)} B, ${perToken}; start-up check ${v.startupCheckPasses ? "passes" : "FAILS"}`,
    ...v.printed.map((line) => `  vLLM prints: ${line}`),
  ];
}

function kindLines(c: EnginesComparison): string[] {
  const cols = (cells: string[]) =>
    `  ${cells[0]!.padEnd(20)}${cells
      .slice(1)
      .map((x, i) => x.padStart(i === 6 ? 12 : i % 3 === 0 ? 8 : 11))
      .join("")}`;
  const head = cols(["kind", "SGLang", "B/token", "GiB", "vLLM", "B/token", "GiB", "Δ B/token"]);
  const rows = c.kinds.map((k) =>
    cols([
      k.kind,
      `${k.sglang.layers} L`,
      b2(k.sglang.bytesPerToken),
      gib(k.sglang.bytes),
      `${k.vllm.layers} L`,
      b2(k.vllm.bytesPerToken),
      gib(k.vllm.bytes),
      signed(k.deltaBytesPerToken),
    ]),
  );
  const tokensV = c.vllm.maxConcurrency * c.mapping.contextLength;
  const stridePerToken = tokensV > 0 ? b2(c.stridePaddingBytes / tokensV) : "";
  const stride = cols(["page stride", "", "", "", "", stridePerToken, gib(c.stridePaddingBytes), ""]);
  return [head, ...rows, stride];
}

export function formatEnginesComparison(c: EnginesComparison): string {
  const causes = c.causes.map(
    (x) => `  ${signed(x.bytesPerToken).padStart(10)}  ${x.id}${x.kind ? ` (${x.kind})` : ""}: ${x.text}`,
  );
  const total =
    c.deltaBytesPerToken === null
      ? "  vLLM holds no block: its bytes per token are undefined"
      : `  ${signed(c.deltaBytesPerToken).padStart(10)}  in all: vLLM ${b2(c.vllm.bytesPerToken!)} − SGLang ${b2(c.sglang.bytesPerToken)} B per token`;
  return [
    "",
    "Engines compared (SGLang and vLLM, the same deployment; docs/reference/engines-compared.md)",
    ...mappingLines(c.mapping),
    "",
    ...capacityLines(c),
    "",
    "  Memory per kind (bytes per token of each engine's capacity)",
    ...kindLines(c),
    "",
    "  Why they differ (vLLM − SGLang, bytes per token; the causes sum to the difference)",
    ...causes,
    total,
    "",
  ].join("\n");
}
