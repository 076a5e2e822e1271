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
 * exact tie up, so the only ties a double can hold at two decimals (a fraction of k/8 with k odd) are handled here.
 */
export function pythonFixed2(x: number): string {
  const eighths = x * 8;
  if (Number.isInteger(eighths) && eighths % 2 !== 0 && Number.isInteger(x * 1000) && (x * 1000) % 10 === 5) {
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
