/**
 * What changed between the vLLM versions dsv4-kv models, for DeepSeek-V4's KV cache
 * (docs/reference/vllm-kv-cache.md#1-sources-and-versions): which tokens in flight each sliding group reserves, and
 * how the two sizing figures print. A version
 * is named as vLLM prints it (`0.27.1`, `0.31.1rc1.dev50+g554340f3d`) or `main` (the snapshot at 0484480b).
 */
import { ServerConfigError } from "../errors.js";

/** Tokens in flight per sliding group: `concurrentBatches` × max_num_batched_tokens, or the batched tokens alone. */
export type VllmInFlightRule = "concurrentBatches" | "batchedTokens";

export interface VllmVersionBehaviour {
  /** The behaviour's name: the first release it describes (`0.26`), or `main`. */
  id: "0.23" | "0.26" | "0.31" | "main";
  inFlight: VllmInFlightRule;
  /** "two-lines": "GPU KV cache size: …" then "Maximum concurrency …"; "one-line": both, joined by ", ". */
  printFormat: "two-lines" | "one-line";
  /** How sure: log-confirmed, or what is assumed. */
  evidence: string;
  /** False when no public log of this behaviour reproduces (the report then says so, rule VL-V1). */
  confirmed: boolean;
}

export const VLLM_VERSION_BEHAVIOURS: readonly VllmVersionBehaviour[] = [
  {
    id: "0.23",
    inFlight: "batchedTokens",
    printFormat: "two-lines",
    evidence:
      "the older sliding sizing (max_num_batched_tokens alone, 0.23 to 0.25): the 0.25.0 log's concurrency " +
      "reproduces with it; the one 0.23.0 log does not reproduce with any in-flight count, so it is not confirmed",
    confirmed: false,
  },
  {
    id: "0.26",
    inFlight: "concurrentBatches",
    printFormat: "two-lines",
    evidence:
      "vllm-project/vllm#47728 (first released in 0.26.0; vllm-project/vllm#49878 traces a 0.25.1 to 0.26 " +
      "change to it) reserves every concurrent batch's tokens; the 0.26.1rc0 and 0.27.1 logs reproduce every " +
      "printed figure with it",
    confirmed: true,
  },
  {
    id: "0.31",
    inFlight: "concurrentBatches",
    printFormat: "two-lines",
    evidence:
      "the 0.31.1rc1 log (tant2tls, H100 TP 8) reproduces its token figure; it does not show the print layout, " +
      "assumed as 0.27.1's",
    confirmed: true,
  },
  {
    id: "main",
    inFlight: "concurrentBatches",
    printFormat: "one-line",
    evidence: "the code at 0484480b (main branch): the same sizing, both figures on one line",
    confirmed: true,
  },
];

/** The default `--vllm-version`: the newest release a public log confirms. */
export const DEFAULT_VLLM_VERSION = "0.31.1";

const RELEASE = /^v?(\d+)\.(\d+)(?:\.(\d+))?([A-Za-z0-9.+-]*)$/;

/** The behaviours of releases, oldest first: a release behaves as the newest one at or below it. */
const RELEASE_BEHAVIOURS = VLLM_VERSION_BEHAVIOURS.filter((b) => b.id !== "main");

/** The first vLLM release whose DeepSeek-V4 sizing public logs confirm (the 0.26.1rc0 and 0.27.1 logs reproduce). */
export const MODELLED_FROM_VERSION = `${RELEASE_BEHAVIOURS.find((b) => b.confirmed)!.id}.0`;

/** [major, minor, patch] of a release match (a missing patch is 0; pre-release and build tags are not compared). */
const releaseOf = (m: RegExpExecArray) => [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)];

/** Negative, 0 or positive as release `a` is before, the same as or after release `b`. */
function compareReleases(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

/** The behaviour of `version`, refused (ServerConfigError naming `field`) when it is not one dsv4-kv models. */
export function vllmVersionBehaviour(version: string, field = "vllmVersion"): VllmVersionBehaviour {
  if (version === "main" || version === "0484480b") return VLLM_VERSION_BEHAVIOURS.find((b) => b.id === "main")!;
  const m = RELEASE.exec(version);
  if (!m) {
    throw new ServerConfigError(
      "INVALID_ARGUMENT",
      field,
      version,
      "must be a vLLM version as vLLM prints it (0.27.1, 0.31.1rc1) or main",
    );
  }
  const release = releaseOf(m);
  // Each id names the first release of its behaviour (the concurrent-batches reservation, vllm-project/vllm#47728,
  // first shipped in 0.26.0).
  const behaviour = RELEASE_BEHAVIOURS.findLast((b) => compareReleases(release, releaseOf(RELEASE.exec(b.id)!)) >= 0);
  if (behaviour === undefined) {
    const min = RELEASE_BEHAVIOURS[0]!.id;
    throw new ServerConfigError(
      "INVALID_ARGUMENT",
      field,
      version,
      `must be ${min} or later: earlier vLLM has no DeepSeek-V4 support modelled here`,
      { min },
    );
  }
  return behaviour;
}
