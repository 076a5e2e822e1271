/**
 * The help of `dsv4-kv check --engine vllm` (also docs/cli.md): the forms, what the report shows, the deployment
 * checked when no flag is given, the versions modelled and the options. Every default and version named here is
 * read from the table the vLLM path resolves with (server-config's VLLM_SERVER_ARGS, VLLM_DEFAULTS,
 * VLLM_VERSION_BEHAVIOURS), and the options are the flag table it parses with (VLLM_ALL_FLAGS).
 */
import {
  DEFAULT_VLLM_VERSION,
  VLLM_SERVER_ARGS,
  VLLM_VERSION_BEHAVIOURS,
  type VllmVersionBehaviour,
} from "@dsv4-kv/server-config";
import { DEFAULT_MODEL, VLLM_DEFAULTS } from "@dsv4-kv/server-config/internal";
import { type CommandSpec, renderHelp, wrapParagraph } from "../../commands/help.js";
import { VLLM_ALL_FLAGS } from "./flags.js";

/** Where the full table of vLLM's flags (read, ignored, not modelled) is, generated from server-config's table. */
export const VLLM_FLAGS_DOC = "docs/reference/vllm-flags.md";

const on = (value: boolean) => (value ? "on" : "off");

const REPORT = `Checks a DeepSeek-V4 vLLM server configuration before it starts, per rank (the latent KV head is
replicated on every tensor-parallel rank): vLLM's arguments resolved (what vLLM picks when unset, and why), the layer
specs, the KV cache groups with their page sizes, the page stride of the one block pool, the blocks one request of
max_model_len takes, the budget, the block count, vLLM's start-up check, and the two figures vLLM prints ("GPU KV
cache size: N tokens", "Maximum concurrency for L tokens per request: Cx") as vLLM computes and rounds them, in the
layout of --vllm-version. Then every VL-* rule: vLLM's own refusals (VL-R*, each naming the vLLM code that enforces
it) and the settings vLLM accepts that waste or endanger the cache, with their cost and fix.`;

/** The deployment with no flags: vLLM's own defaults, as args.ts resolves them, on the budget's default device. */
function defaultsParagraph(): string {
  const a = VLLM_SERVER_ARGS;
  return `With no flags: ${DEFAULT_MODEL} on one H200 (--gpu-memory-gib's default) with vLLM's own defaults,
--tensor-parallel-size ${a.tensorParallelSize.default} (unlike the SGLang path's default of one rank of 8×H200:
here each rank loads the checkpoint over TP × PP), --gpu-memory-utilization ${a.gpuMemoryUtilization.default},
--max-model-len the model's length as vLLM derives it (max_position_embeddings, times a rope_scaling factor, and
for YaRN original_max_position_embeddings × factor), --max-num-batched-tokens ${VLLM_DEFAULTS.maxNumBatchedTokens},
--block-size ${VLLM_DEFAULTS.blockSize}, async scheduling ${on(VLLM_DEFAULTS.asyncScheduling)}, prefix caching on,
no speculative decoding, and --kv-cache-dtype ${a.kvCacheDtype.default}, which vLLM refuses for DeepSeek-V4 (VL-R1).
So the check without flags reports that refusal. Give --kv-cache-dtype fp8 and enough ranks for the weights: on one
H200 the whole checkpoint leaves no memory for the cache (VL-R3); --tensor-parallel-size 8 fits.`;
}

function behaviourText(b: VllmVersionBehaviour): string {
  const from = b.id === "main" ? "main" : `from ${b.id}`;
  const reserved = b.inFlight === "batchedTokens" ? "T" : "the concurrent batches × T";
  const printed = b.printFormat === "two-lines" ? "two lines" : "one line";
  const confirmed = b.confirmed ? "" : " (no public log confirms it: warning VL-V1)";
  return `${from}: ${reserved}, ${printed}${confirmed}`;
}

function versionParagraph(): string {
  return `--vllm-version V (default ${DEFAULT_VLLM_VERSION}, the newest release a public log confirms) is the vLLM
modelled, as vLLM prints its version (0.27.1, 0.31.1rc1) or main. A release behaves as the newest modelled one at
or below it. What changes is the tokens each sliding group reserves (T = max_num_batched_tokens) and whether vLLM
prints its two figures on two lines or one: ${VLLM_VERSION_BEHAVIOURS.map(behaviourText).join("; ")}.`;
}

const FLAGS = `Flags are vLLM's, as vLLM's parser takes them: -tp/--tensor-parallel-size, _ or - in names, an
unambiguous prefix (--kv-cache-memory), --no-NAME for switches, JSON arguments whole or by key
(--speculative-config.method mtp --speculative-config.num_speculative_tokens 3), sizes with a k suffix (128k). A
pasted \`vllm serve MODEL …\` after -- may start with NAME=value assignments (VLLM_USE_V2_MODEL_RUNNER and
VLLM_ALLOW_LONG_MAX_MODEL_LEN are read; the rest are listed). Flags that do not change the KV cache are accepted
and listed as ignored; one that may change it and is not modelled is listed as such; an unknown flag is refused
with a suggestion. The full table of vLLM's flags, each with its effect, is ${VLLM_FLAGS_DOC}.`;

const BUDGET = `Budget: --kv-cache-memory-bytes (vLLM's own, used as given), --kv-budget-bytes (a logged "Available
KV cache memory"), or the device's total memory (--gpu-memory-gib, default an H200) × --gpu-memory-utilization less
the weights (--weights-gib, default the checkpoint over TP × PP) and the profile run's other memory (--runtime-gib,
default 0: an upper bound on the cache).`;

const AGAINST_LOG = `--against-log FILE (or - for standard input) reads a vLLM start-up log of DeepSeek-V4 as
people paste it (vLLM's process prefixes, journald or docker prefixes, prose and tables, wrapped lines): its
non-default args or vllm serve command, the version, and every KV line (available memory, GPU KV cache size, maximum
concurrency, blocks, the start-up refusal, block size, layout, indexer). The logged budget is the anchor; every
figure sized from it is recomputed and shown equal, within the print's rounding, or different with a named cause
(an unstated max_num_batched_tokens, async scheduling, FP4 indexer or layer-tuple stride that reproduces it; a
layout, draft or vLLM version not modelled). vLLM flags given here win over the log's. The figures are sized as
the vLLM version the log printed (--vllm-version overrides it, with a warning when the two size differently; a log
without a version gets the default). Exit 0 when no figure differs, 1 when one differs or is not computed, 2 when
the file holds no vLLM DeepSeek-V4 material.`;

export const vllmSpec: CommandSpec = {
  usage: [
    "--engine vllm [--model MODEL | --model-config FILE] [vLLM flags] [--vllm-version V] [--json]",
    "--engine vllm [dsv4-kv options] -- [NAME=value …] vllm serve MODEL [vLLM flags]",
    "--engine vllm --against-log FILE [--model MODEL] [vLLM flags] [--vllm-version V] [--json]",
  ],
  description: [REPORT, defaultsParagraph(), versionParagraph(), FLAGS, BUDGET, AGAINST_LOG]
    .map((paragraph) => wrapParagraph(paragraph))
    .join("\n\n"),
  flags: VLLM_ALL_FLAGS,
  exitCodes: [
    [0, "vLLM starts with this configuration (warnings may remain)"],
    [1, "vLLM refuses it (a VL-R* rule), or it fits nothing"],
    [2, "unusable input"],
  ],
};

export const vllmHelp: string = renderHelp(["check"], vllmSpec);
