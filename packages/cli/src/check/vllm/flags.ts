/**
 * The flags of `dsv4-kv check --engine vllm`: vLLM's server arguments as vLLM spells them (derived from
 * server-config's VLLM_SERVER_ARGS: names, types, ranges, help), then the vLLM path's own options (the engine, the
 * version, the budget, the output). The budget flags keep the SGLang path's names where they mean the same.
 */
import { DEFAULT_VLLM_VERSION, VLLM_ARG_ENTRIES, type VllmArgField, type VllmServerFlag } from "@dsv4-kv/server-config";
import type { FlagSpec, FlagTable } from "../../commands/flags.js";
import { CLI_FLAGS, ENGINE_FLAG } from "../flags.js";

const GIB_MAX = 2 ** 20;

/**
 * A vLLM argument's flag spec: the table's type, range and default (shown by the help; a switch's `false` and a
 * default vLLM picks at start-up are not, the help text says those); JSON and sizes are text, read by the parser.
 */
export function vllmFlagSpec(entry: VllmServerFlag): FlagSpec {
  const { value, help, arg } = entry;
  const shown = entry.default === null || value.type === "bool" ? {} : { default: entry.default };
  if (entry.form === "json") return { type: "string", help, arg: arg ?? "JSON", ...shown };
  switch (value.type) {
    case "bool":
      return { type: "bool", help };
    case "string":
      return value.choices
        ? { type: "string", choices: value.choices, help, ...shown }
        : { type: "string", help, arg: arg ?? "S", ...shown };
    case "int":
      return { type: "int", min: value.min, max: value.max, help, ...(arg ? { arg } : {}), ...shown };
    case "number":
      return { type: "number", min: value.min, max: value.max, minExclusive: value.minExclusive, help, ...shown };
    case "intList":
      return { type: "intList", min: value.min, max: value.max, help };
  }
}

/** The option name of a field's flag: vLLM's primary spelling without its dashes. */
export function vllmOptionName(entry: VllmServerFlag): string | null {
  return entry.spellings[0]?.replace(/^--/, "") ?? null;
}

/** vLLM's arguments as flags (env switches have no flag). */
export const VLLM_FLAGS: FlagTable = Object.fromEntries(
  VLLM_ARG_ENTRIES.flatMap(([, entry]) => {
    const name = vllmOptionName(entry);
    return name === null ? [] : [[name, vllmFlagSpec(entry)]];
  }),
);

/** Field of each flag name, for the parser. */
export const VLLM_FIELD_OF_FLAG: Readonly<Record<string, VllmArgField>> = Object.fromEntries(
  VLLM_ARG_ENTRIES.flatMap(([field, entry]) => {
    const name = vllmOptionName(entry);
    return name === null ? [] : [[name, field]];
  }),
);

/** The vLLM path's own options. */
export const VLLM_OPTIONS: FlagTable = {
  engine: ENGINE_FLAG,
  "vllm-version": {
    type: "string",
    help:
      `the vLLM version as vLLM prints it (0.27.1, 0.31.1rc1) or main (default ${DEFAULT_VLLM_VERSION}): picks the ` +
      "tokens in flight each sliding group reserves (0.23–0.25: the batched tokens alone) and the print layout; with " +
      "--against-log, the log's printed version when not given",
    arg: "V",
  },
  "model-config": CLI_FLAGS["model-config"]!,
  "kv-budget-bytes": {
    type: "int",
    min: 1,
    max: Number.MAX_SAFE_INTEGER,
    help: "KV cache bytes per rank as vLLM logs them (Available KV cache memory), instead of the GPU budget",
  },
  "gpu-memory-gib": {
    type: "number",
    min: 0,
    max: GIB_MAX,
    minExclusive: true,
    help: "the device's total memory, GiB (default an H200's 139.8: 150,109,880,320 B)",
  },
  "weights-gib": { type: "number", min: 0, max: GIB_MAX, help: "weights per rank, GiB (default checkpoint / (tp·pp))" },
  "runtime-gib": {
    type: "number",
    min: 0,
    max: GIB_MAX,
    help: "the profile run's other memory (activation peak, outside torch, CUDA graphs), GiB (default 0)",
  },
  json: CLI_FLAGS.json!,
  help: CLI_FLAGS.help!,
};

export const VLLM_ALL_FLAGS: FlagTable = { ...VLLM_FLAGS, ...VLLM_OPTIONS };
