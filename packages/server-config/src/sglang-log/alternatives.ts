/**
 * The arithmetic alternatives real SGLang servers used for DSV4, as variations of one sizing environment: every
 * configurator generation, rings with and without MTP, the draft layer counted as a SWA layer or not, the draft
 * factor, request-scoped versus SWA-scoped c128 state, the state dtype, the FP4 indexer, HiSparse, the page size
 * of the NPU and CUDA pools, the c4-state divisor, the SWA ratio of older defaults, online c128. A figure that
 * differs is recomputed under each (then under each pair); the first that reproduces the logged value is its cause.
 */
import type { SizingConfig } from "@dsv4-kv/memory-pool";
import { type ConfiguratorGenerationId, type GenerationOptions, generationStage } from "@dsv4-kv/memory-pool/internal";

/** What a figure is computed under: the generation's arithmetic, the sizing config, the stage overrides. */
export interface Env {
  generation: ConfiguratorGenerationId;
  config: SizingConfig;
  options: GenerationOptions;
  /** The c4-state divisor: the window (every generation we model) or the page (a later fix). */
  c4StateDivisor: "window" | "page";
  /** The NPU's paged state pools instead of the ring pools. */
  npuStatePools: boolean;
}

export interface Alternative {
  id: string;
  /** The term and its value under this alternative, against the base ("c4/c128 rings 8/128, not 16/256"). */
  term: string;
  apply: (env: Env) => Env | null;
  /** For an alternative whose value is solved for (a ratio): the term with the value it found. */
  describe?: (env: Env) => string;
}

function rings(env: Env): { c4: number; c128: number } {
  const stage = stageOf(env);
  return { c4: stage.ringSizeC4, c128: stage.ringSizeC128 };
}

export const stageOf = (env: Env) => generationStage(env.generation, env.config, env.options);

const withStage = (env: Env, stage: GenerationOptions["stage"]): Env => ({
  ...env,
  options: { ...env.options, stage: { ...env.options.stage, ...stage } },
});
const withConfig = (env: Env, patch: Partial<SizingConfig>): Env => ({ ...env, config: { ...env.config, ...patch } });

function ringAlternative(env: Env, c4: number, c128: number): Env | null {
  const now = rings(env);
  if (now.c4 === c4 && (now.c128 === c128 || now.c128 === 1)) return null;
  return withStage(env, { ringSizeC4: c4, ...(now.c128 === 1 ? {} : { ringSizeC128: c128 }) });
}

function layerAlternative(env: Env, entries: boolean): Env | null {
  const ratios = env.config.model.compressRatios;
  const list = entries ? ratios : ratios.slice(0, env.config.model.numHiddenLayers);
  const layers = list.length;
  if (stageOf(env).layers === layers) return null;
  return withStage(env, {
    layers,
    layersC4: list.filter((r) => r === 4).length,
    layersC128: list.filter((r) => r === 128).length,
  });
}

/** Every single alternative, in the order a cause is looked for (the likeliest first). */
export const ALTERNATIVES: readonly Alternative[] = [
  { id: "rings-plain", term: "c4/c128 rings 8/128 (without MTP)", apply: (e) => ringAlternative(e, 8, 128) },
  { id: "rings-mtp", term: "c4/c128 rings 16/256 (with MTP)", apply: (e) => ringAlternative(e, 16, 256) },
  {
    id: "draft-layer-counted",
    term: "the draft layer counted as a SWA layer (every compress_ratios entry)",
    apply: (e) => layerAlternative(e, true),
  },
  { id: "target-layers", term: "target layers only (no draft entry)", apply: (e) => layerAlternative(e, false) },
  {
    id: "gen-a",
    term: "the earliest configurator (c128 state priced per SWA token, no fixed bytes)",
    apply: (e) => (e.generation === "gen-a" ? null : { ...e, generation: "gen-a" }),
  },
  {
    id: "gen-a-pools",
    term: "the calculator after the earliest (c128 state per SWA token, its own rings and target layers)",
    apply: (e) => (e.generation === "gen-a-pools" ? null : { ...e, generation: "gen-a-pools", npuStatePools: false }),
  },
  {
    id: "gen-b",
    term: "request-scoped c128 state (Gen B: fixed bytes, c128 state out of the per-token price)",
    apply: (e) => (e.generation === "gen-b" ? null : { ...e, generation: "gen-b", npuStatePools: false }),
  },
  {
    id: "state-bf16",
    term: "compress state in bf16 (2 B)",
    apply: (e) => ((e.config.stateDtypeBytes ?? 4) === 2 ? null : withConfig(e, { stateDtypeBytes: 2 })),
  },
  {
    id: "state-fp32",
    term: "compress state in fp32 (4 B)",
    apply: (e) => ((e.config.stateDtypeBytes ?? 4) === 4 ? null : withConfig(e, { stateDtypeBytes: 4 })),
  },
  {
    id: "fp4-indexer",
    term: "the FP4 indexer (68 B per token, not 132)",
    apply: (e) => (e.config.indexerFp4 ? null : withConfig(e, { indexerFp4: true })),
  },
  {
    id: "fp8-indexer",
    term: "the FP8 indexer (132 B per token, not 68)",
    apply: (e) => (e.config.indexerFp4 ? withConfig(e, { indexerFp4: false }) : null),
  },
  ...[2, 4, 8].map(
    (H): Alternative => ({
      id: `hisparse-${H}`,
      term: `HiSparse with host_to_device_ratio ${H} (c4 = full // ${4 * H})`,
      apply: (e) => ((e.config.hisparseRatio ?? 1) === H ? null : withConfig(e, { hisparseRatio: H })),
    }),
  ),
  {
    id: "no-hisparse",
    term: "no HiSparse (c4 = full // 4)",
    apply: (e) => ((e.config.hisparseRatio ?? 1) === 1 ? null : withConfig(e, { hisparseRatio: 1 })),
  },
  ...[128, 256, 64].map(
    (P): Alternative => ({
      id: `page-${P}`,
      term: `page size ${P}${P === 128 ? " (the NPU pools)" : P === 256 ? " (the CUDA and ROCm pools)" : ""}`,
      apply: (e) => (e.config.pageSize === P ? null : withConfig(e, { pageSize: P })),
    }),
  ),
  {
    id: "npu-state",
    term: "the NPU's paged state pools (per request slot)",
    apply: (e) => (e.npuStatePools ? null : { ...e, npuStatePools: true }),
  },
  {
    id: "ring-state",
    term: "ring-addressed state pools (not the NPU's paged ones)",
    apply: (e) => (e.npuStatePools ? { ...e, npuStatePools: false } : null),
  },
  {
    id: "c4-state-per-page",
    term: "the c4 state divided by the page size, not the window",
    apply: (e) => (e.c4StateDivisor === "page" ? null : { ...e, c4StateDivisor: "page" }),
  },
  ...[0.8, 0.5, 0.2, 0.15, 0.1].map(
    (r): Alternative => ({
      id: `swa-ratio-${r}`,
      term: `swa_full_tokens_ratio ${r}${r === 0.8 ? " (the generic default older SGLang left in place)" : ""}`,
      apply: (e) => (e.config.swaFullTokensRatio === r ? null : withConfig(e, { swaFullTokensRatio: r })),
    }),
  ),
  {
    id: "online-c128",
    term: "online c128 compression (ring 1, 3 A state row)",
    apply: (e) => (e.config.onlineC128 ? null : withConfig(e, { onlineC128: true })),
  },
  {
    id: "offline-c128",
    term: "offline c128 compression (ring 128/256)",
    apply: (e) => (e.config.onlineC128 ? withConfig(e, { onlineC128: false, onlineC128Mtp: false }) : null),
  },
  {
    id: "dp-undivided",
    term: "--max-running-requests not divided by the attention-DP size",
    apply: (e) => ((e.config.attnDpSize ?? 1) > 1 ? withConfig(e, { attnDpSize: 1 }) : null),
  },
  {
    id: "no-speculation",
    term: "no speculative decoding (no draft factor, plain rings)",
    apply: (e) => (e.config.isSpeculative ? withConfig(e, { isSpeculative: false }) : null),
  },
  {
    id: "speculation",
    term: "speculative decoding on (draft factor (L+1)/L, MTP rings)",
    apply: (e) => (e.config.isSpeculative ? null : withConfig(e, { isSpeculative: true })),
  },
];

/** What a figure evaluates to under an environment (a range over the logged precision), or null. */
export type Recompute = (env: Env) => { lo: number; hi: number } | null;

export interface FoundCause {
  alternatives: Alternative[];
  /** The environment after each alternative (for the solved terms' values). */
  envs: Env[];
  value: { lo: number; hi: number };
}

/** Another model's sizing facts (a log without server_args was checked as the default model). */
export function modelAlternative(name: string, model: SizingConfig["model"]): Alternative {
  return {
    id: `model-${name}`,
    term: `the model ${name}`,
    apply: (e) =>
      e.config.model.numHiddenLayers === model.numHiddenLayers &&
      e.config.model.compressRatios.length === model.compressRatios.length
        ? null
        : withConfig(e, { model: { ...model, contextLen: e.config.model.contextLen } }),
  };
}

/**
 * The SWA ratio that reproduces a logged figure, solved for rather than listed: the figure is computed at two
 * ratios, and when it is linear in the ratio (bytes per full token) or a floor of it (SWA tokens), the ratio is
 * the shortest decimal (two or three places, as operators write ratios) in the interval that gives the logged value.
 */
export function solvedRatio(recompute: Recompute, logged: number): Alternative {
  const solve = (env: Env): number | null => {
    const at = (r: number) => recompute(withConfig(env, { swaFullTokensRatio: r }));
    const a = at(0.1);
    const b = at(0.2);
    if (!a || !b || a.lo === b.lo) return null;
    const exactR = 0.1 + ((logged - a.lo) / (b.lo - a.lo)) * 0.1;
    if (!(exactR > 0 && exactR <= 1)) return null;
    for (const digits of [2, 3]) {
      const r = Number(exactR.toFixed(digits));
      for (const c of [r, r + 10 ** -digits, r - 10 ** -digits]) {
        const v = at(Number(c.toFixed(digits)));
        if (v && logged >= Math.min(v.lo, v.hi) && logged <= Math.max(v.lo, v.hi)) return Number(c.toFixed(digits));
      }
    }
    return null;
  };
  return {
    id: "swa-ratio-solved",
    term: "the SWA ratio solved from the logged value",
    apply: (e) => {
      const r = solve(e);
      return r === null || r === e.config.swaFullTokensRatio ? null : withConfig(e, { swaFullTokensRatio: r });
    },
    describe: (e) => `swa_full_tokens_ratio ${e.config.swaFullTokensRatio}`,
  };
}

/** The first single alternative, then pair, then triple under which `recompute` gives what `accepts` takes. */
export function findCause(
  base: Env,
  recompute: Recompute,
  accepts: (v: { lo: number; hi: number }) => boolean,
  extra: readonly Alternative[] = [],
) {
  const singles: Array<{ alt: Alternative; env: Env }> = [];
  for (const alt of [...ALTERNATIVES, ...extra]) {
    const env = safe(() => alt.apply(base));
    if (env === null) continue;
    singles.push({ alt, env });
    const v = safe(() => recompute(env));
    if (v && accepts(v)) return { alternatives: [alt], envs: [env], value: v } satisfies FoundCause;
  }
  const pairs: Array<{ alts: Alternative[]; envs: Env[] }> = [];
  for (let i = 0; i < singles.length; i++) {
    for (let j = i + 1; j < singles.length; j++) {
      const env = safe(() => singles[j]!.alt.apply(singles[i]!.env));
      if (env === null) continue;
      pairs.push({ alts: [singles[i]!.alt, singles[j]!.alt], envs: [singles[i]!.env, env] });
      const v = safe(() => recompute(env));
      if (v && accepts(v))
        return { alternatives: pairs.at(-1)!.alts, envs: pairs.at(-1)!.envs, value: v } satisfies FoundCause;
    }
  }
  // Three terms at once: a log without server_args differs from the defaults in the model, the ratio and more.
  for (const pair of pairs) {
    const last = pair.envs[1]!;
    for (const { alt } of singles) {
      if (
        pair.alts.includes(alt) ||
        singles.findIndex((s) => s.alt === alt) < singles.findIndex((s) => s.alt === pair.alts[1])
      )
        continue;
      const env = safe(() => alt.apply(last));
      if (env === null) continue;
      const v = safe(() => recompute(env));
      if (v && accepts(v))
        return { alternatives: [...pair.alts, alt], envs: [...pair.envs, env], value: v } satisfies FoundCause;
    }
  }
  return null;
}

/** An alternative a model cannot take (a ring the config refuses) is no cause; it is skipped. */
function safe<T>(f: () => T | null): T | null {
  try {
    return f();
  } catch {
    return null;
  }
}
