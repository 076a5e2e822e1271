// The generated flag references (docs/reference/sglang-flags.md, vllm-flags.md) write a flag's range alike.
import type { FlagValue } from "../src/index.js";

const big = (v: number) => (v === 2 ** 31 - 1 ? "2^31−1" : v === Number.MAX_SAFE_INTEGER ? "2^53−1" : String(v));

/** A flag's accepted values in words: `switch`, the choices, `text`, or the type with its interval. */
export function rangeText(v: FlagValue): string {
  if (v.type === "bool") return "switch";
  if (v.type === "string") return v.choices ? v.choices.map((c) => `\`${c}\``).join(", ") : "text";
  const low = v.type === "number" && v.minExclusive ? `(${v.min}` : `[${v.min}`;
  return `${v.type === "intList" ? "list of " : ""}${v.type === "number" ? "number" : "integer"} ${low}, ${big(v.max)}]`;
}
