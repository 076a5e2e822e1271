/**
 * `dsv4-kv simulate online-mtp`: the online c128 + MTP controller against a float64 sequential reference.
 */
import { paintFor } from "../colour.js";
import { type FlagTable, choice, parseFlags, refuseRest } from "./flags.js";
import type { CommandSpec } from "./help.js";
import type { CommandIO } from "./registry.js";

const FLAGS = {
  requests: { type: "int", min: 1, max: 4096, required: true, help: "concurrent request slots" },
  steps: { type: "int", min: 0, max: 1_000_000, required: true, help: "batches (verify or extend)" },
  "draft-tokens": {
    type: "int",
    min: 1,
    max: 8,
    arg: "D",
    required: true,
    help: "verify width (the maximum with --adaptive)",
  },
  adaptive: { type: "bool", help: "draw each verify's D from [1, D]" },
  seed: { type: "int", min: 0, max: 0xffffffff, default: 1, help: "random seed" },
  backend: choice(["cpu", "gpu"], "cpu or gpu (CUDA kernels; needs a GPU)", "cpu"),
  "state-dtype": choice(["fp32", "bf16"], "fp32 (tolerance 2e-4) or bf16 (tolerance 5e-2)", "fp32"),
  lifecycle: choice(
    ["hardened", "upstream"],
    "hardened or upstream (upstream's lifecycle, which loses commits)",
    "hardened",
  ),
  json: { type: "bool", help: "print {steps, verifies, commits, lostCommits, maxAbsError, maxRelError}" },
} as const satisfies FlagTable;

export const spec: CommandSpec = {
  usage: [
    "--requests N --steps N --draft-tokens D [--adaptive] [--seed N]\n[--backend cpu|gpu] [--state-dtype fp32|bf16] [--lifecycle hardened|upstream]\n[--json]",
  ],
  description: `Runs the online c128 MTP controller (state banks, pending markers, lazy commit) through a seeded scenario:
target verifies of random subsets of the running requests with random accept lengths (chunk crossings included),
EXTEND batches of new requests interleaved between verifies, CUDA-graph padding rows, requests finishing right
after a verify, and slot reuse. After every forward, bank 0 of each request in it is compared with the float64
sequential fold of its accepted tokens, and every commit is checked to be the bitwise copy its accept selects.`,
  flags: FLAGS,
  exitCodes: [
    [0, "no lost commit and every error within tolerance"],
    [1, "otherwise"],
    [2, "bad input"],
  ],
};

export async function run(argv: string[], io: CommandIO): Promise<number> {
  const { values, rest } = parseFlags(argv, FLAGS);
  refuseRest(rest);
  const { requests, steps, "draft-tokens": draftTokens } = values as Required<typeof values>;
  const seed = values.seed ?? 1;
  const backendName = values.backend ?? "cpu";
  const stateDtype = values["state-dtype"] ?? "fp32";
  const lifecycle = values.lifecycle ?? "hardened";

  const mtp = await import("@dsv4-kv/online-mtp-controller");
  let backend: InstanceType<typeof mtp.CpuBackend> | ReturnType<typeof mtp.createGpuBackend>;
  if (backendName === "gpu") {
    const probe = mtp.probeGpuBackend();
    if (!probe.ok) {
      io.stderr.write(`dsv4-kv simulate online-mtp: --backend gpu unavailable: ${probe.reason}\n`);
      return 2;
    }
    backend = mtp.createGpuBackend();
  } else {
    backend = new mtp.CpuBackend();
  }
  const r = mtp.runSimulation({
    backend,
    requests,
    steps,
    draftTokens,
    adaptive: values.adaptive ?? false,
    seed,
    stateDtype,
    lifecycle,
  });
  (backend as { dispose?: () => void }).dispose?.();
  const ok = r.lostCommits === 0 && r.violations === 0;
  const paint = paintFor(io.stdout, io.env);
  if (values.json) {
    io.stdout.write(
      `${JSON.stringify({ steps: r.steps, verifies: r.verifies, commits: r.commits, lostCommits: r.lostCommits, maxAbsError: r.maxAbsError, maxRelError: r.maxRelError })}\n`,
    );
  } else {
    io.stdout.write(
      [
        `online c128 MTP simulation (${r.backend} backend, ${r.stateDtype} state, ${r.lifecycle} lifecycle, seed ${seed})`,
        `  steps          ${r.steps} (${r.verifies} verifies, ${r.extends} extends, ${r.finished} finished requests)`,
        `  commits        ${r.commits}`,
        `  lost commits   ${r.lostCommits}`,
        `  bank 0 vs sequential reference: max abs error ${r.maxAbsError.toExponential(3)}, max rel error ${r.maxRelError.toExponential(3)} (|ref| >= 1e-2)`,
        `  tolerance      |x - ref| <= ${r.tolerance.atol} + ${r.tolerance.rtol}·|ref|: ${r.violations} violations`,
        `  emitted entries ${r.emittedEntries} vs offline pooling: max abs error ${r.maxEmittedAbsError.toExponential(3)}`,
        ok ? paint.ok("OK") : paint.bad("FAILED"),
        "",
      ].join("\n"),
    );
  }
  return ok ? 0 : 1;
}
