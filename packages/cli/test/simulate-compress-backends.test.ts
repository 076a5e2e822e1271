// `simulate compress --backend gpu --online`: when the online backend cannot be made, the ring backend already made
// (device memory) is disposed before the error leaves the command. Both factories are fakes: runs without a GPU.
import { beforeEach, describe, expect, test, vi } from "vitest";
import type { CommandIO } from "../src/commands/registry.js";
import { flagArgs } from "./helpers.js";

const fake = vi.hoisted(() => ({
  failAt: "create" as "load" | "create",
  failure: new Error("the online backend's factory failed"),
  ringsMade: 0,
  ringsDisposed: 0,
}));

vi.mock("../src/gpu.js", async (importOriginal) => ({
  ...(await importOriginal<typeof import("../src/gpu.js")>()),
  requireKernelsCuda: () => {},
  loadGpuBackend: async () => {
    if (fake.failAt === "load") throw fake.failure;
    return {
      createGpuBackend: () => {
        throw fake.failure;
      },
    };
  },
}));

vi.mock("@dsv4-kv/compress/gpu", () => ({
  probeGpuCompressBackend: () => ({ ok: true, reason: "fake" }),
  createGpuCompressBackend: () => {
    fake.ringsMade++;
    return {
      dispose: () => {
        fake.ringsDisposed++;
      },
    };
  },
}));

const { run } = await import("../src/commands/simulate-compress.js");

const io: CommandIO = {
  stdout: { write: () => true },
  stderr: { write: () => true, isTTY: false },
  stdin: (async function* () {})(),
  env: { NO_COLOR: "1" },
};
const argv = flagArgs({ ratio: 128, "draft-tokens": 2, online: true, backend: "gpu", steps: 1, json: true });

describe("simulate compress --backend gpu --online, the online backend failing", () => {
  beforeEach(() => {
    fake.ringsMade = 0;
    fake.ringsDisposed = 0;
  });
  for (const failAt of ["load", "create"] as const) {
    test(`its ${failAt === "load" ? "module load" : "factory"} throws: the ring backend is disposed, the error rethrown`, async () => {
      fake.failAt = failAt;
      await expect(run(argv, io)).rejects.toBe(fake.failure);
      expect([fake.ringsMade, fake.ringsDisposed]).toEqual([1, 1]);
    });
  }
});
