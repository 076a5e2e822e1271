// The flag table (server-flags.ts) is the one definition of each server argument; these tests check what derives
// from it: the zod schema's fields, types, bounds and defaults, SGLang's KV flag kinds and the environment switches.
import { describe, expect, it } from "vitest";
import {
  ENV_SWITCHES,
  FLAG_HELP_GROUPS,
  SERVER_ARG_ENTRIES,
  SERVER_ARG_HELP_ORDER,
  SGLANG_FLAGS,
  SGLANG_SERVER_ARGS,
  ServerArgsSchema,
  parseServerArgs,
  serverFlagName,
} from "../src/index.js";

const outside = (field: string, value: unknown) => {
  const r = parseServerArgs({ [field]: value });
  return r.ok ? null : r.errors.map((e) => e.field);
};

describe("the zod schema derives from the flag table", () => {
  it("one schema field per entry, in table order, with the table's defaults", () => {
    expect(Object.keys(ServerArgsSchema.shape)).toEqual(SERVER_ARG_ENTRIES.map(([field]) => field));
    const defaults = ServerArgsSchema.parse({});
    for (const [field, flag] of SERVER_ARG_ENTRIES) expect([field, defaults[field]]).toEqual([field, flag.default]);
  });

  it.each(SERVER_ARG_ENTRIES.filter(([, f]) => f.value.type === "int" && f.judgedBy?.bound !== "both"))(
    "%s: an integer in the flag's range, refused one past either end",
    (field, flag) => {
      const v = flag.value as { min: number; max: number };
      expect(outside(field, v.min)).toBeNull();
      expect(outside(field, v.max)).toBeNull();
      expect(outside(field, v.min - 1)).toEqual([field]);
      const maxJudged = flag.judgedBy?.bound === "max";
      if (v.max < Number.MAX_SAFE_INTEGER) expect(outside(field, v.max + 1)).toEqual(maxJudged ? null : [field]);
      expect(outside(field, v.min + 0.5)).toEqual([field]);
    },
  );

  it.each(SERVER_ARG_ENTRIES.filter(([, f]) => f.value.type === "number" && f.judgedBy === undefined))(
    "%s: a number in the flag's range (an exclusive lower end refused)",
    (field, flag) => {
      const v = flag.value as { min: number; max: number; minExclusive: boolean };
      expect(outside(field, v.max)).toBeNull();
      expect(outside(field, v.min) === null).toBe(!v.minExclusive);
      expect(outside(field, v.max * 1.5 + 1)).toEqual([field]);
    },
  );

  it("a field a rule judges keeps the value for that rule (V-S1, V-H1, V-I1), typed", () => {
    expect(SGLANG_SERVER_ARGS.speculativeDsparkBlockSize.judgedBy).toEqual({ rule: "V-S1", bound: "both" });
    expect(outside("maxTotalTokens", 2 ** 31)).toBeNull();
    expect(outside("speculativeDsparkBlockSize", 0)).toBeNull();
    expect(outside("speculativeDsparkBlockSize", 0.5)).toEqual(["speculativeDsparkBlockSize"]);
    expect(outside("hisparseHostToDeviceRatio", 0.5)).toBeNull();
  });

  it("choices are enums: the flag's and the library's", () => {
    expect(outside("deepepMode", "low_latency")).toBeNull();
    expect(outside("deepepMode", "fast")).toEqual(["deepepMode"]);
    expect(outside("platform", "tpu")).toEqual(["platform"]);
  });
});

describe("SGLang's flag table and the environment switches derive from it", () => {
  it("every KV flag of SGLang's table sets a field of the table, with the field's value kind", () => {
    const kinds = { bool: "bool", int: "int", number: "float", string: "str", intList: "list" } as const;
    const kv = SGLANG_FLAGS.filter((f) => f.effect === "kv");
    expect(kv.length).toBeGreaterThan(40);
    for (const flag of kv) {
      const entry = SGLANG_SERVER_ARGS[flag.field as keyof typeof SGLANG_SERVER_ARGS];
      expect([flag.name, kinds[entry.value.type]]).toEqual([flag.name, flag.kind]);
    }
  });

  it("a field SGLang has is spelled as SGLang spells it, but for the one SGLang names --enable-…", () => {
    const renamed: string[] = [];
    for (const field of new Set(SGLANG_FLAGS.filter((f) => f.effect === "kv").map((f) => f.field!))) {
      const spellings = SGLANG_FLAGS.filter((g) => g.field === field).flatMap((g) => [g.name, ...g.aliases]);
      if (!spellings.includes(serverFlagName(field))) renamed.push(field);
    }
    expect(renamed).toEqual(["prefillContextParallel"]);
  });

  it("the environment switches are the entries with an env variable", () => {
    expect(ENV_SWITCHES).toEqual({
      SGLANG_OPT_USE_ONLINE_COMPRESS: "online-compress",
      SGLANG_EXPERIMENTAL_ONLINE_C128_MTP: "online-c128-mtp",
      SGLANG_DSV4_COMPRESS_STATE_DTYPE: "compress-state-dtype",
      SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK: "deepep-num-max-dispatch-tokens-per-rank",
    });
  });

  it("the help order is the table's, grouped by helpGroup: every field once, the groups in FLAG_HELP_GROUPS' order", () => {
    const fields = SERVER_ARG_ENTRIES.map(([field]) => field);
    expect([...SERVER_ARG_HELP_ORDER].sort()).toEqual([...fields].sort());
    const groupOf = (field: string) =>
      FLAG_HELP_GROUPS.indexOf(SGLANG_SERVER_ARGS[field as "model"].helpGroup ?? "core");
    const ranks = SERVER_ARG_HELP_ORDER.map(groupOf);
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
    for (const group of FLAG_HELP_GROUPS) {
      const inHelp = SERVER_ARG_HELP_ORDER.filter((f) => FLAG_HELP_GROUPS[groupOf(f)] === group);
      expect(inHelp).toEqual(fields.filter((f) => FLAG_HELP_GROUPS[groupOf(f)] === group));
      expect(inHelp.length).toBeGreaterThan(0);
    }
  });
});
