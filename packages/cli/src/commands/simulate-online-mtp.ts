/**
 * `dsv4-kv simulate online-mtp`: the online c128 + MTP controller against a float64 sequential reference.
 */
import { parseArgs } from "node:util";
import type { CommandIO } from "./registry.js";
import { UsageError, intFlag } from "./args.js";

export const help = `Usage: dsv4-kv simulate online-mtp --requests N --steps N --draft-tokens D [--adaptive] [--seed N]
                                   [--backend cpu|gpu] [--state-dtype fp32|bf16] [--lifecycle hardened|upstream]
                                   [--json]

Runs the online c128 MTP controller (state banks, pending markers, lazy commit) through a seeded scenario:
target verifies of random subsets of the running requests with random accept lengths (chunk crossings included),
EXTEND batches of new requests interleaved between verifies, CUDA-graph padding rows, requests finishing right
after a verify, and slot reuse. After every forward, bank 0 of each request in it is compared with the float64
sequential fold of its accepted tokens, and every commit is checked to be the bitwise copy its accept selects.

Options:
  --requests N         concurrent request slots (1..4096)
  --steps N            batches (verify or extend)
  --draft-tokens D     verify width (the maximum with --adaptive), 1..8
  --adaptive           draw each verify's D from [1, D]
  --seed N             random seed (default 1)
  --backend B          cpu (default) or gpu (CUDA kernels; needs a GPU)
  --state-dtype T      fp32 (default, tolerance 2e-4) or bf16 (tolerance 5e-2)
  --lifecycle L        hardened (default) or upstream (upstream's lifecycle, which loses commits)
  --json               print {steps, verifies, commits, lostCommits, maxAbsError, maxRelError}

Exit codes: 0 no lost commit and every error within tolerance, 1 otherwise, 2 bad input.
`;

export async function run(argv: string[], io: CommandIO): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      requests: { type: "string" },
      steps: { type: "string" },
      "draft-tokens": { type: "string" },
      adaptive: { type: "boolean", default: false },
      seed: { type: "string" },
      backend: { type: "string", default: "cpu" },
      "state-dtype": { type: "string", default: "fp32" },
      lifecycle: { type: "string", default: "hardened" },
      json: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
  });
  if (values.help) {
    io.stdout.write(help);
    return 0;
  }
  const need = (name: string, v: number | undefined): number => {
    if (v === undefined) throw new UsageError(`--${name} is required (see --help)`);
    return v;
  };
  const requests = need("requests", intFlag("requests", values.requests, 1, 4096));
  const steps = need("steps", intFlag("steps", values.steps, 0, 1_000_000));
  const draftTokens = need("draft-tokens", intFlag("draft-tokens", values["draft-tokens"], 1, 8));
  const seed = intFlag("seed", values.seed, 0, 0xffffffff) ?? 1;
  const backendName = values.backend;
  if (backendName !== "cpu" && backendName !== "gpu")
    throw new UsageError(`--backend = ${JSON.stringify(backendName)}: must be cpu or gpu`);
  const stateDtype = values["state-dtype"];
  if (stateDtype !== "fp32" && stateDtype !== "bf16")
    throw new UsageError(`--state-dtype = ${JSON.stringify(stateDtype)}: must be fp32 or bf16`);
  const lifecycle = values.lifecycle;
  if (lifecycle !== "hardened" && lifecycle !== "upstream")
    throw new UsageError(`--lifecycle = ${JSON.stringify(lifecycle)}: must be hardened or upstream`);

  const mtp = await import("@dsv4-kv/online-mtp-controller");
  let backend;
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
    adaptive: values.adaptive,
    seed,
    stateDtype,
    lifecycle,
  });
  (backend as { dispose?: () => void }).dispose?.();
  const ok = r.lostCommits === 0 && r.violations === 0;
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
        ok ? "OK" : "FAILED",
        "",
      ].join("\n"),
    );
  }
  return ok ? 0 : 1;
}
