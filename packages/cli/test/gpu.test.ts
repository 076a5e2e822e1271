import { Dsv4KvError } from "@dsv4-kv/errors";
import { describe, expect, test } from "vitest";
import {
  KERNELS_CUDA_INSTALL,
  KERNELS_CUDA_PACKAGE,
  loadGpuBackend,
  loadGpuPlanner,
  resolveFromCli,
} from "../src/gpu.js";
import { UsageError } from "../src/commands/args.js";

const missing = (name: string) => name !== KERNELS_CUDA_PACKAGE;

async function refusal(p: Promise<unknown>): Promise<UsageError> {
  try {
    await p;
  } catch (e) {
    return e as UsageError;
  }
  throw new Error("expected a refusal");
}

describe("GPU paths without @dsv4-kv/kernels-cuda", () => {
  test("--path gpu: a UsageError naming the package and the install command", async () => {
    const e = await refusal(loadGpuPlanner("--path", "gpu", missing));
    expect(UsageError.isInstance(e) && Dsv4KvError.isInstance(e)).toBe(true);
    expect(e).toMatchObject({ code: "USAGE", field: "--path", value: "gpu" });
    expect(e.params).toEqual({ missingPackage: KERNELS_CUDA_PACKAGE, install: KERNELS_CUDA_INSTALL });
    expect(e.message).toContain("install @dsv4-kv/kernels-cuda (npm install @dsv4-kv/kernels-cuda)");
  });
  test("--backend gpu: the same refusal, before the controller's /gpu subpath is imported", async () => {
    const e = await refusal(loadGpuBackend("--backend", "gpu", missing));
    expect(e).toMatchObject({ code: "USAGE", field: "--backend", value: "gpu" });
    expect(e.message).toContain("npm install @dsv4-kv/kernels-cuda");
  });
  test("installed (the workspace): the modules load", async () => {
    expect(resolveFromCli(KERNELS_CUDA_PACKAGE)).toBe(true);
    expect(typeof (await loadGpuPlanner("--path", "gpu")).createGpuPlanEngine).toBe("function");
    expect(typeof (await loadGpuBackend("--backend", "gpu")).probeGpuBackend).toBe("function");
  });
  test("the resolver says false only for a package that is not found", () => {
    expect(resolveFromCli("@dsv4-kv/no-such-package")).toBe(false);
  });
});
