/**
 * The anatomy programs (bench/anatomy/: anatomy.cu, copy_floor.cu) are plain executables outside the addon and its
 * CMake build, so nothing else compiles them: after the bench split they named removed files and functions
 * (planner/bench.cu, BenchLaunch, online_mtp's fills) for weeks unseen. Here nvcc's front end checks both on every
 * run where nvcc is on PATH (no GPU needed: `ANATOMY_CHECK=1 build.sh`), and the test says why when it cannot.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";

const BUILD = fileURLToPath(new URL("../bench/anatomy/build.sh", import.meta.url));
const nvcc = spawnSync("nvcc", ["--version"], { encoding: "utf8" });
const noNvcc = nvcc.status === 0 ? null : "no nvcc on PATH: the anatomy programs are not compiled here";

describe("the anatomy bench programs compile", () => {
  test("anatomy.cu and copy_floor.cu pass nvcc's front end with build.sh's flags", { timeout: 600_000 }, (ctx) => {
    if (noNvcc !== null) return ctx.skip(noNvcc);
    const r = spawnSync("bash", [BUILD], { encoding: "utf8", env: { ...process.env, ANATOMY_CHECK: "1" } });
    expect(r.stderr.split("\n").filter((l) => /error/.test(l))).toEqual([]);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("checked bench/anatomy/anatomy.cu and bench/anatomy/copy_floor.cu");
  });
});
