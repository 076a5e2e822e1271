import { describe, expect, it } from "vitest";
import {
  VLLM_ARG_ENTRIES,
  VLLM_ENV_SWITCHES,
  VLLM_OTHER_FLAGS,
  VLLM_SERVER_ARGS,
  vllmFlag,
  vllmFlagByPrefix,
} from "../src/index.js";

describe("vLLM flag table", () => {
  it("keys every KV field by vLLM's dest: the field's snake_case, or the env variable", () => {
    for (const [field, entry] of VLLM_ARG_ENTRIES) {
      const snake = field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
      expect(entry.env ?? snake).toBe(entry.dest);
    }
    expect(VLLM_ENV_SWITCHES.VLLM_USE_V2_MODEL_RUNNER).toBe("useV2ModelRunner");
  });

  it("reads vLLM's spellings: aliases, underscores for dashes", () => {
    expect(vllmFlag("-tp")).toMatchObject({ kind: "kv", field: "tensorParallelSize" });
    expect(vllmFlag("--max_model_len")).toMatchObject({ kind: "kv", field: "maxModelLen" });
    expect(vllmFlag("--gpu-memory-utilization")?.kind).toBe("kv");
    expect(vllmFlag("--host")).toMatchObject({ kind: "other", entry: { effect: "ignored" } });
    expect(vllmFlag("--kv-transfer-config")).toMatchObject({ kind: "other", entry: { effect: "unmodelled" } });
    expect(vllmFlag("--no-such-flag")).toBeNull();
  });

  it("takes an unambiguous prefix as argparse does, and lists the candidates of an ambiguous one", () => {
    expect(vllmFlagByPrefix("--kv-cache-memory").match).toMatchObject({ field: "kvCacheMemoryBytes" });
    const ambiguous = vllmFlagByPrefix("--max-num");
    expect(ambiguous.match).toBeNull();
    expect(ambiguous.candidates).toEqual(expect.arrayContaining(["--max-num-seqs", "--max-num-batched-tokens"]));
  });

  it("builds each entry's zod schema from its range and default", () => {
    expect(VLLM_SERVER_ARGS.gpuMemoryUtilization.schema.parse(undefined)).toBe(0.92);
    expect(() => VLLM_SERVER_ARGS.gpuMemoryUtilization.schema.parse(1.5)).toThrow();
    expect(VLLM_SERVER_ARGS.maxModelLen.schema.parse(-1)).toBe(-1);
    expect(VLLM_SERVER_ARGS.asyncScheduling.schema.parse(undefined)).toBeNull();
    expect(VLLM_OTHER_FLAGS.every((f) => f.spellings[0]!.startsWith("--"))).toBe(true);
  });
});
