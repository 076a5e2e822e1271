/**
 * `check --against-log` on every log of the corpus (packages/server-config/test/fixtures/sglang-logs, public DSV4
 * start-up logs stored verbatim with their sources in manifest.json). Each expectation was derived by reading the
 * log: which lines are SGLang's, how many servers, the generation and platform its lines and text show, which
 * figures the log cuts, and, for every figure that differs from the check (the check takes the log's arguments, or
 * the defaults when the log has none), the alternative arithmetic that explains it. Key figures were recomputed by
 * hand (the notes say which). Exit 2 only for a file with no DSV4 start-up material.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CheckReportJsonSchema } from "@dsv4-kv/server-config";
import { describe, expect, it } from "vitest";
import { cli } from "./cli-helpers.js";

const CORPUS = new URL("../../server-config/test/fixtures/sglang-logs/", import.meta.url).pathname;
const manifest = JSON.parse(readFileSync(join(CORPUS, "manifest.json"), "utf8")) as Array<{ file: string }>;

interface Section {
  generation: string;
  platform: string;
  matched: number;
  /** Differing figures by `name cause` (the alternatives' ids joined by +, or unexplained), with their count. */
  differ?: Record<string, number>;
  truncated: number;
  skipped: number;
  errors?: string[];
  launchOnly?: boolean;
}

const EXPECTED: Record<string, { exit: number; sections?: Section[] }> = {
  // a call-chain diagram and prose quoting the formulas: no log line
  "amd-infera-gmu-callchain-table.log": { exit: 2 },
  // whole raw Gen B log of 8 ranks on MI355X (ROCm named in the text): every figure of every rank
  "amd-infera-gmu-decode-gmu090-mi355x-v4pro-dp8.log": {
    exit: 0,
    sections: [{ generation: "gen-b", platform: "hip", matched: 128, truncated: 0, skipped: 0 }],
  },
  // a report whose memory line is wrapped onto two lines (joined); no server_args, so the check is the default Flash
  // with EAGLE: bpft 13735.04 is V4-Pro at ratio 0.15 without speculation (three terms); the c128 fixed bytes need
  // the per-rank request count too (unexplained, with its residual)
  "amd-infera-gmu-report-mi355x-v4pro-wrapped.log": {
    exit: 1,
    sections: [
      {
        generation: "gen-b",
        platform: "hip",
        matched: 1,
        differ: {
          "bytes_per_full_token swa-ratio-0.15+no-speculation+model-DeepSeek-V4-Pro": 1,
          "c128_state_fixed unexplained": 1,
        },
        truncated: 0,
        skipped: 7,
      },
    ],
  },
  // whole raw log, 'DSV4 memory calculation' without c128_state_fixed and a pool sizes line whose c128_state = swa //
  // 128 × 128: gen-a-pools, every figure
  "amd-infera-mtt-baseline-prefill-gmu085.log": {
    exit: 0,
    sections: [{ generation: "gen-a-pools", platform: "hip", matched: 122, truncated: 0, skipped: 0 }],
  },
  // available_bytes printed negative (-8.21 GB on every rank): the server sized nothing, a difference with its
  // cause (what V-M1 refuses); full_token -269056 = int(avail / 32781.44) // 256 × 256 is not modelled below zero
  "amd-infera-mtt-p-decode-negative-budget.log": {
    exit: 1,
    sections: [
      {
        generation: "gen-a-pools",
        platform: "hip",
        matched: 40,
        differ: { "available_bytes non-positive-budget": 8 },
        truncated: 0,
        skipped: 0,
      },
    ],
  },
  // gen-a-pools with --max-total-tokens 131072 in server_args: the re-sized pool sizes line is compared with the cap
  "amd-infera-mtt-r3-decode-cap131072-mi355x-v4pro.log": {
    exit: 0,
    sections: [{ generation: "gen-a-pools", platform: "hip", matched: 170, truncated: 0, skipped: 0 }],
  },
  // prose with two retyped blocks (blank separators, thousands separators): two servers (the pools grow), each
  // checked against the defaults: ratio 0.15 and the plain rings are named
  "amd-infera-mtt-working-process-prose.log": {
    exit: 1,
    sections: [
      {
        generation: "gen-a-pools",
        platform: "hip",
        matched: 3,
        differ: { "pools.swa swa-ratio-0.15": 1, "pools.c4_state rings-plain": 1, "pools.c128_state rings-plain": 1 },
        truncated: 0,
        skipped: 3,
      },
      {
        generation: "gen-a-pools",
        platform: "hip",
        matched: 3,
        differ: { "pools.swa swa-ratio-0.15": 1, "pools.c4_state rings-plain": 1, "pools.c128_state rings-plain": 1 },
        truncated: 0,
        skipped: 5,
      },
    ],
  },
  // a ledger in prose: max_total_num_tokens only in a sentence
  "hygon-sglang-das-ledger-20260807-dcu-v4flash-prose.log": { exit: 2 },
  // a ledger in prose: no log line
  "hygon-sglang-das-ledger-20260810-dcu-v4flash-relaunch-prose.log": { exit: 2 },
  // a launch command only (checked as a launch): DeepEP's dispatch bound fails (V-E1); the refused env value 0 is
  // listed
  "inferencex-issue-1672-b200-v4pro-k8s-launch-cut.log": {
    exit: 1,
    sections: [
      {
        generation: "unknown",
        platform: "cuda",
        matched: 0,
        truncated: 0,
        skipped: 0,
        errors: ["V-E1"],
        launchOnly: true,
      },
    ],
  },
  // start-up messages only (weights loaded, the error): nothing to reconcile
  "inferencex-issue-2128-h200-tp8-v4pro-no-kv-room.log": {
    exit: 0,
    sections: [{ generation: "unknown", platform: "cuda", matched: 0, truncated: 0, skipped: 0, launchOnly: true }],
  },
  // 'DSv4' lines, two memory lines per rank: gen-a; bpft 15955.85 = rings 8/128 with MTP on and 44 SWA layers (hand-
  // checked)
  "ktransformers-issue-1978-sm80-tp8-dsv4-pool-sizes.log": {
    exit: 0,
    sections: [{ generation: "gen-a", platform: "cuda", matched: 38, truncated: 0, skipped: 1 }],
  },
  // comments in prose: no log line
  "sglang-issue-23602-comments-h20-141gb-v4pro-relaunch-prose.log": { exit: 2 },
  // two launch commands: two sections, each checked as a launch
  "sglang-issue-23602-h800-tp4-two-launch-commands.log": {
    exit: 0,
    sections: [
      { generation: "unknown", platform: "cuda", matched: 0, truncated: 0, skipped: 0, launchOnly: true },
      { generation: "unknown", platform: "cuda", matched: 0, truncated: 0, skipped: 0, launchOnly: true },
    ],
  },
  // a docker launch of a PD decode node with DeepEP: V-E1
  "sglang-issue-23602-pd-decode-docker-launch-tp4.log": {
    exit: 1,
    sections: [
      {
        generation: "unknown",
        platform: "cuda",
        matched: 0,
        truncated: 0,
        skipped: 0,
        errors: ["V-E1"],
        launchOnly: true,
      },
    ],
  },
  // pieces of a ServerArgs repr whose head is cut: read by their pairs, checked as a launch
  "sglang-issue-23602-turn4-cuda-tp8-server-args-wrapped.log": {
    exit: 0,
    sections: [{ generation: "unknown", platform: "cuda", matched: 0, truncated: 0, skipped: 0, launchOnly: true }],
  },
  // a Python traceback only: no DSV4 start-up material
  "sglang-issue-23602-turn71-oom-traceback.log": { exit: 2 },
  // one 'DSv4' memory line of a V4-Pro server checked as the default Flash: the model is named as the cause
  "sglang-issue-24523-hopper-v4pro-pd-prefill-dp8-code-and-log.log": {
    exit: 1,
    sections: [
      {
        generation: "gen-a",
        platform: "cuda",
        matched: 1,
        differ: { "bytes_per_full_token model-DeepSeek-V4-Pro": 1 },
        truncated: 0,
        skipped: 0,
      },
    ],
  },
  // the earliest configurator on MI300X (fnuz KV: ROCm); without its server_args the defaults (EAGLE, ratio 0.1) name
  // ratio 0.8 and rings 16/256 (its exact reconciliation with the arguments is in check-against-log-why)
  "sglang-issue-25118-mi300x-tp4-dp4-earliest-dsv4-assert.log": {
    exit: 1,
    sections: [
      {
        generation: "gen-a",
        platform: "hip",
        matched: 16,
        differ: {
          "bytes_per_full_token rings-mtp+swa-ratio-0.8": 4,
          "pool-init.swa_size swa-ratio-0.8": 4,
          "pool-init.c4_state_pool_size rings-mtp": 4,
          "pool-init.c128_state_pool_size rings-mtp": 4,
        },
        truncated: 0,
        skipped: 1,
      },
    ],
  },
  // HiCache host pool messages only: nothing to reconcile
  "sglang-issue-26783-turn3-h20-3e-v4pro-host-pools.log": {
    exit: 0,
    sections: [{ generation: "unknown", platform: "cuda", matched: 0, truncated: 0, skipped: 0, launchOnly: true }],
  },
  // NPU graph capture messages: platform npu, nothing to reconcile
  "sglang-issue-31938-ascend-a2-dp8-npu-graph-capture.log": {
    exit: 0,
    sections: [{ generation: "unknown", platform: "npu", matched: 0, truncated: 0, skipped: 0, launchOnly: true }],
  },
  // weight loading messages only: nothing to reconcile
  "sglang-issue-32830-part-a-tp4-nextn-load-weight.log": {
    exit: 0,
    sections: [{ generation: "unknown", platform: "cuda", matched: 0, truncated: 0, skipped: 0, launchOnly: true }],
  },
  // pool init lines of a SWA-only pool without a memory or pool sizes line: nothing to compute them from
  "sglang-issue-32830-tp4-swa-only-pool.log": {
    exit: 0,
    sections: [{ generation: "gen-b", platform: "cuda", matched: 0, truncated: 0, skipped: 0 }],
  },
  // a launch with a cut flag (--speculative-algo, left out) and a traceback
  "sglang-pr-23600-v4flash-tp4-eagle-launch-traceback.log": {
    exit: 0,
    sections: [{ generation: "unknown", platform: "cuda", matched: 0, truncated: 0, skipped: 0, launchOnly: true }],
  },
  // a one-line launch command
  "sglang-pr-23686-hopper-v4pro-marlin-eagle-launch-oneline.log": {
    exit: 0,
    sections: [{ generation: "unknown", platform: "cuda", matched: 0, truncated: 0, skipped: 0, launchOnly: true }],
  },
  // a launch with shell variables, PD decode with DeepEP: V-E1
  "sglang-pr-24880-v4pro-pd-hisparse-decode-launch-shellvars.log": {
    exit: 1,
    sections: [
      {
        generation: "unknown",
        platform: "cuda",
        matched: 0,
        truncated: 0,
        skipped: 0,
        errors: ["V-E1"],
        launchOnly: true,
      },
    ],
  },
  // a launch cut mid-flag (--enable-, left out)
  "sglang-pr-26607-h200-pd-v4pro-launch-cut.log": {
    exit: 0,
    sections: [{ generation: "unknown", platform: "cuda", matched: 0, truncated: 0, skipped: 1, launchOnly: true }],
  },
  // wrapped launches with online compress and speculation: V-S6
  "sglang-pr-27831-v4flash-pd-prefill-decode-launches-wrapped.log": {
    exit: 1,
    sections: [
      {
        generation: "unknown",
        platform: "cuda",
        matched: 0,
        truncated: 0,
        skipped: 0,
        errors: ["V-S6"],
        launchOnly: true,
      },
    ],
  },
  // a comment quoting max_total_num_tokens in prose
  "sglang-pr-28620-l20-tp8-prose-max-total-num-tokens.log": { exit: 2 },
  // two lines quoted with '...' for the prefix: start-up messages on MI35x (hip)
  "sglang-pr-29168-mi35x-v4pro-hisparse-unified-ellipsis.log": {
    exit: 0,
    sections: [{ generation: "unknown", platform: "hip", matched: 0, truncated: 0, skipped: 0, launchOnly: true }],
  },
  // environment exports only, cut: no DSV4 start-up material
  "sglang-pr-29187-pd-prefill-env-exports-cut.log": { exit: 2 },
  // a DSpark launch: the Pro preset declares no DSpark block size (V-S1)
  "sglang-pr-32035-v4pro-dspark-launch-prose-full-token.log": {
    exit: 1,
    sections: [
      {
        generation: "unknown",
        platform: "cuda",
        matched: 0,
        truncated: 0,
        skipped: 0,
        errors: ["V-S1"],
        launchOnly: true,
      },
    ],
  },
  // DeepSeek-V4.1 lines (swa_fixed without a SWA sizing line): a generation dsv4-kv does not model
  "v41-local-ai-registry-gb10-tp4-boot-lines.log": {
    exit: 1,
    sections: [{ generation: "unknown", platform: "cuda", matched: 0, truncated: 0, skipped: 0 }],
  },
  // the same V4.1 format: not modelled
  "v41-local-ai-registry-gb10-tp4-tuned-boot-lines.log": {
    exit: 1,
    sections: [{ generation: "unknown", platform: "cuda", matched: 0, truncated: 0, skipped: 0 }],
  },
  // prose about the KV pool: no log line
  "v41-local-ai-registry-pr-55-rtxpro6000-tp4-prose-kv-pool.log": { exit: 2 },
  // a ratio-mode SWA sizing line (its ratio 0.22 is an input) and a pool sizes line cut with '...': swa = int(2499840
  // × 0.22) // 256 × 256 = 549888
  "v41-miaai-issue-27-gb10-tp4-swa-sizing-truncated.log": {
    exit: 0,
    sections: [{ generation: "gen-b", platform: "cuda", matched: 4, truncated: 1, skipped: 0 }],
  },
  // a harness printout with one bare max_total_num_tokens line: nothing tells the generation
  "v41-miaai-tp4-validation-20260925-two-boots.log": {
    exit: 1,
    sections: [{ generation: "unknown", platform: "cuda", matched: 0, truncated: 0, skipped: 1 }],
  },
  // a launch with vLLM flags (left out): checked as a launch
  "v41-vllm-issue-56700-sglang-rtxpro6000-tp8-table.log": {
    exit: 0,
    sections: [{ generation: "unknown", platform: "cuda", matched: 0, truncated: 0, skipped: 0, launchOnly: true }],
  },
  // a capacity table: no log line
  "whn09-p5-h100-v4flash-capacity-table.log": { exit: 2 },
  // a table: no log line
  "whn09-p5-h100-v4flash-prefill-oom-table.log": { exit: 2 },
  // a whole Gen B log of 16 DP ranks: every figure
  "whn09-p5en-h200-v4flash-2node-dp16-nvshmem-fail.log": {
    exit: 0,
    sections: [{ generation: "gen-b", platform: "cuda", matched: 128, truncated: 0, skipped: 0 }],
  },
  // a table: no log line
  "whn09-p5en-h200-v4flash-kv-capacity-table.log": { exit: 2 },
  // SGLang's ServerArgs adjustment messages: nothing to reconcile
  "whn09-readme-serverargs-preflight-output.log": {
    exit: 0,
    sections: [{ generation: "unknown", platform: "cuda", matched: 0, truncated: 0, skipped: 0, launchOnly: true }],
  },
  // the same MI355X Gen B log at gmu 0.80: every figure of every rank
  "amd-infera-gmu-decode-gmu080-mi355x-v4pro-dp8.log": {
    exit: 0,
    sections: [{ generation: "gen-b", platform: "hip", matched: 128, truncated: 0, skipped: 0 }],
  },
  // a launch stored as a JSON argv document (DeepSeek-V4.1, DSpark): checked as a launch; V-S10 fails for the
  // arguments as given
  "v41-local-ai-registry-rtxpro6000-tp4-launch-argv.log": {
    exit: 1,
    sections: [
      {
        generation: "unknown",
        platform: "cuda",
        matched: 0,
        truncated: 0,
        skipped: 0,
        errors: ["V-S10"],
        launchOnly: true,
      },
    ],
  },
};

interface Figure {
  name: string;
  match: boolean | null;
  cause?: { explained: boolean; alternatives: string[] };
}

function outcome(r: { code: number; stdout: string }) {
  if (!r.stdout) return { exit: r.code };
  const json = JSON.parse(r.stdout);
  expect(CheckReportJsonSchema.safeParse(json).success).toBe(true);
  const sections = json.sections.map(
    (s: { report: { errors: { rule: string }[] }; logComparison: Record<string, unknown> & { figures: Figure[] } }) => {
      const c = s.logComparison;
      const differ: Record<string, number> = {};
      for (const f of c.figures.filter((x) => x.match === false)) {
        const key = `${f.name} ${f.cause?.explained ? f.cause.alternatives.join("+") : "unexplained"}`;
        differ[key] = (differ[key] ?? 0) + 1;
      }
      const out: Section = {
        generation: c.generation as string,
        platform: c.platform as string,
        matched: c.figures.filter((x) => x.match === true).length,
        differ,
        truncated: (c.truncated as unknown[]).length,
        skipped: (c.skipped as unknown[]).length,
        errors: s.report.errors.map((e) => e.rule),
      };
      if (Object.keys(differ).length === 0) delete out.differ;
      if (out.errors!.length === 0) delete out.errors;
      if (c.nothingToReconcile) out.launchOnly = true;
      return out;
    },
  );
  return { exit: r.code, sections };
}

describe("the corpus of real DSV4 SGLang logs", () => {
  it("has an expectation for every log of the manifest, and at least 25 logs", () => {
    expect(manifest.length).toBeGreaterThanOrEqual(25);
    expect(Object.keys(EXPECTED).sort()).toEqual(manifest.map((m) => m.file).sort());
  });

  for (const [file, expected] of Object.entries(EXPECTED)) {
    it(`${file}: exit ${expected.exit}`, () => {
      const r = cli(["check", "--against-log", join(CORPUS, file), "--json"]);
      expect(outcome(r)).toEqual(expected);
      if (expected.exit === 2) expect(r.stdout).toBe("");
    });
  }
});
