/**
 * The figures vLLM prints at start-up, computed and rounded as vLLM does (docs/reference/vllm-kv-cache.md §6):
 * concurrency = blocks / blocks per request (a double), tokens = int(concurrency × max_model_len), and the text
 * "GPU KV cache size: {tokens:,} tokens" and "Maximum concurrency for {L:,} tokens per request: {c:.2f}x".
 */

/** Python's `f"{n:,}"` for an integer. */
export function thousands(n: number): string {
  return Math.trunc(n).toLocaleString("en-US", { useGrouping: true, maximumFractionDigits: 0 });
}

/**
 * Python's `"%.2f" % x` / `f"{x:.2f}"`: the exact binary value rounded, an exact tie to even. JS `toFixed` rounds an
 * exact tie up. A double holds a two-decimal tie only as an odd number of eighths (…125, …375, …625, …875): those
 * are rounded here, the rest by `toFixed`, which rounds the exact value as Python does.
 */
export function pythonFixed2(x: number): string {
  const eighths = x * 8;
  if (Number.isInteger(eighths) && eighths % 2 !== 0) {
    const hundredths = Math.floor(x * 100);
    const even = hundredths % 2 === 0 ? hundredths : hundredths + 1;
    return (even / 100).toFixed(2);
  }
  return x.toFixed(2);
}

/** Python's `str(round(x, 2))` as vLLM's GiB figures print ("26.3", "102.62"). */
export function pythonRound2(x: number): string {
  const fixed = pythonFixed2(x);
  const trimmed = fixed.replace(/0$/, "");
  return trimmed.endsWith(".") ? `${trimmed}0` : trimmed;
}

export interface VllmPrintedFigures {
  /** The unrounded concurrency (a double, as vLLM holds it). */
  maxConcurrency: number;
  /** "GPU KV cache size" tokens: int(maxConcurrency × maxModelLen). */
  kvCacheSizeTokens: number;
  /** The printed concurrency text without the "x": two decimals. */
  maxConcurrencyText: string;
  kvCacheSizeLine: string;
  maxConcurrencyLine: string;
}

export function printedFigures(numBlocks: number, blocksPerRequest: number, maxModelLen: number): VllmPrintedFigures {
  const maxConcurrency = numBlocks / blocksPerRequest;
  const kvCacheSizeTokens = Math.trunc(maxConcurrency * maxModelLen);
  const maxConcurrencyText = pythonFixed2(maxConcurrency);
  return {
    maxConcurrency,
    kvCacheSizeTokens,
    maxConcurrencyText,
    kvCacheSizeLine: `GPU KV cache size: ${thousands(kvCacheSizeTokens)} tokens`,
    maxConcurrencyLine: `Maximum concurrency for ${thousands(maxModelLen)} tokens per request: ${maxConcurrencyText}x`,
  };
}
