/**
 * The release artifact as a consumer sees it: `pnpm -r pack` into a temporary directory, then fresh projects that
 * `npm install` those tarballs (third-party dependencies from the registry) with no nvcc on PATH:
 *   (a) @dsv4-kv/kernels-cuda loads the platform package's CUDA binary, and probe() says why there is no GPU;
 *   (b) a CPU-only consumer installs @dsv4-kv/cli without kernels-cuda (npm skips optional peers), `dsv4-kv check`
 *       passes and the GPU paths answer with the install command.
 * Needs every published package built (this package's turbo.json makes `test` depend on their builds).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, test } from "vitest";

// scripts/toolchain.mjs has no declaration file: the one function used here, typed as its JSDoc says.
const { findNvcc } = (await import(new URL("../scripts/toolchain.mjs", import.meta.url).href)) as {
  findNvcc(env: NodeJS.ProcessEnv): string | null;
};

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const manifest = JSON.parse(readFileSync(join(root, "packages/kernels-cuda-linux-x64/dist/manifest.json"), "utf8")) as {
  cuda: { sha256: string } | null;
  cpu: { sha256: string };
};

/** PATH without any directory that holds an nvcc, and no CUDA variables: a consumer without the toolkit. */
function envWithoutNvcc(): NodeJS.ProcessEnv {
  // The build's own search, one directory at a time (nothing else set): the directories it would find nvcc in.
  const PATH = (process.env.PATH ?? "")
    .split(delimiter)
    .filter((d) => d && findNvcc({ PATH: d }) === null)
    .join(delimiter);
  const env: NodeJS.ProcessEnv = { ...process.env, PATH, npm_config_fund: "false", npm_config_audit: "false" };
  // NODE_PATH: pnpm's bin shims point it into the workspace's store, which would resolve what npm did not install.
  for (const k of ["CUDACXX", "CUDA_HOME", "CUDA_PATH", "DSV4KV_ADDON_PATH", "DSV4KV_FORCE_CPU", "NODE_PATH"]) {
    delete env[k];
  }
  // pnpm's own settings must not leak into the consumer's npm.
  for (const k of Object.keys(env)) if (k.startsWith("npm_") && !k.startsWith("npm_config_")) delete env[k];
  return env;
}

let work: string;
const tarballs = new Map<string, string>();
const env = envWithoutNvcc();

function npmInstall(project: string, packages: readonly string[]): void {
  mkdirSync(project, { recursive: true });
  execFileSync("npm", ["init", "-y"], { cwd: project, env, stdio: "ignore" });
  const files = packages.map((p) => {
    const file = tarballs.get(p);
    if (!file) throw new Error(`no tarball for ${p}`);
    return file;
  });
  execFileSync("npm", ["install", "--no-package-lock", "--loglevel=error", ...files], {
    cwd: project,
    env,
    stdio: ["ignore", "ignore", "inherit"],
  });
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "dsv4kv-tarballs-"));
  const dest = join(work, "tarballs");
  execFileSync("pnpm", ["-r", "pack", "--pack-destination", dest], { cwd: root, stdio: "ignore" });
  for (const f of readdirSync(dest)) {
    // dsv4-kv-kernels-cuda-linux-x64-0.0.0.tgz -> @dsv4-kv/kernels-cuda-linux-x64
    const name = f.replace(/^dsv4-kv-/, "@dsv4-kv/").replace(/-\d+\.\d+\.\d+.*\.tgz$/, "");
    tarballs.set(name, join(dest, f));
  }
}, 120_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

function tarList(pkg: string): string[] {
  return execFileSync("tar", ["-tzf", tarballs.get(pkg)!], { encoding: "utf8" })
    .trim()
    .split("\n");
}

describe("the packed tarballs", () => {
  test("the consumer's environment has no nvcc", () => {
    expect(spawnSync("nvcc", ["--version"], { env }).error).toBeDefined();
  });
  test("the platform package carries both binaries and the manifest; kernels-cuda carries sources, no binary", () => {
    const platform = tarList("@dsv4-kv/kernels-cuda-linux-x64");
    expect(platform).toContain("package/dist/cpu/dsv4kv_kernels.node");
    expect(platform).toContain("package/dist/manifest.json");
    if (manifest.cuda) expect(platform).toContain("package/dist/cuda/dsv4kv_kernels.node");
    else expect(platform).not.toContain("package/dist/cuda/dsv4kv_kernels.node");
    const kernels = tarList("@dsv4-kv/kernels-cuda");
    expect(kernels).toContain("package/CMakeLists.txt");
    expect(kernels.some((f) => f.startsWith("package/native/") && f.endsWith(".cu"))).toBe(true);
    expect(kernels).toContain("package/dist/build-native.js");
    expect(kernels.some((f) => f.endsWith(".node"))).toBe(false);
  });
});

describe("(a) a clean project without nvcc installs @dsv4-kv/kernels-cuda", () => {
  let project: string;
  beforeAll(() => {
    project = join(work, "gpu-consumer");
    npmInstall(project, [
      "@dsv4-kv/kernels-cuda",
      "@dsv4-kv/kernels-cuda-linux-x64",
      "@dsv4-kv/errors",
      "@dsv4-kv/planner",
    ]);
  }, 180_000);

  test("probe() says which prebuilt binary loaded and why there is no GPU", () => {
    const code = "process.stdout.write(JSON.stringify(require('@dsv4-kv/kernels-cuda').probe()))";
    const p = JSON.parse(execFileSync(process.execPath, ["-e", code], { cwd: project, env, encoding: "utf8" }));
    const platformRoot = join(project, "node_modules/@dsv4-kv/kernels-cuda-linux-x64");
    const source = join(project, "node_modules/@dsv4-kv/kernels-cuda/build/Release/dsv4kv_kernels.node");
    expect(p.rejected[0]).toEqual({
      source: "source-build",
      path: source,
      reason: "not-found",
      detail: `no file at ${source}`,
    });
    if (manifest.cuda) {
      expect(p.addon).toMatchObject({
        source: "platform-cuda",
        kind: "cuda",
        path: join(platformRoot, "dist/cuda/dsv4kv_kernels.node"),
      });
      expect(p.addon.prebuilt.minDriver).toMatch(/^\d+/);
      expect(p.compiledWithCuda).toBe(true);
    } else {
      // A CPU-only build of the platform package (no nvcc where it was built) says so; it never poses as CUDA.
      expect(p.addon).toMatchObject({ source: "platform-cpu", kind: "cpu" });
      expect(p.rejected[1]).toMatchObject({ source: "platform-cuda", reason: "not-found" });
    }
    if (p.ok) expect(p.noGpu).toBeNull();
    else {
      expect([
        "no-driver",
        "driver-too-old",
        "no-device",
        "unsupported-device",
        "cuda-error",
        "cpu-only-binary",
      ]).toContain(p.noGpu);
      expect(p.reason).not.toBe("");
    }
    console.log(`probe in a clean project: ${JSON.stringify(p)}`);
  });
  test("npx dsv4-kv-kernels-build --cpu builds from the shipped sources; the loader then prefers that build", () => {
    const r = spawnSync("npx", ["--no-install", "dsv4-kv-kernels-build", "--cpu"], {
      cwd: project,
      env,
      encoding: "utf8",
    });
    expect(r.status, r.stderr).toBe(0);
    const code = "process.stdout.write(JSON.stringify(require('@dsv4-kv/kernels-cuda').probe()))";
    const p = JSON.parse(execFileSync(process.execPath, ["-e", code], { cwd: project, env, encoding: "utf8" }));
    const built = join(project, "node_modules/@dsv4-kv/kernels-cuda/build/Release/dsv4kv_kernels.node");
    expect(p.addon).toEqual({ source: "source-build", path: built, kind: "cpu" });
    expect(p.noGpu).toBe("cpu-only-binary");
  }, 120_000);
  test("the prebuilt files are the ones the manifest describes", () => {
    const sha = (f: string) => execFileSync("sha256sum", [f], { encoding: "utf8" }).split(" ")[0];
    const dist = join(project, "node_modules/@dsv4-kv/kernels-cuda-linux-x64/dist");
    expect(sha(join(dist, "cpu/dsv4kv_kernels.node"))).toBe(manifest.cpu.sha256);
    if (manifest.cuda) expect(sha(join(dist, "cuda/dsv4kv_kernels.node"))).toBe(manifest.cuda.sha256);
  });
});

describe("(b) a CPU-only consumer installs @dsv4-kv/cli without kernels-cuda", () => {
  let project: string;
  const dsv4kv = (args: string[], input?: string) => {
    const r = spawnSync(join(project, "node_modules/.bin/dsv4-kv"), args, {
      cwd: project,
      env,
      input,
      encoding: "utf8",
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  beforeAll(() => {
    project = join(work, "cpu-consumer");
    npmInstall(project, [
      "@dsv4-kv/cli",
      "@dsv4-kv/errors",
      "@dsv4-kv/planner",
      "@dsv4-kv/memory-pool",
      "@dsv4-kv/server-config",
      "@dsv4-kv/online-mtp-controller",
      "@dsv4-kv/compress",
    ]);
  }, 180_000);

  test("npm did not install the optional peer", () => {
    expect(existsSync(join(project, "node_modules/@dsv4-kv/cli"))).toBe(true);
    expect(existsSync(join(project, "node_modules/@dsv4-kv/kernels-cuda"))).toBe(false);
    expect(existsSync(join(project, "node_modules/@dsv4-kv/kernels-cuda-linux-x64"))).toBe(false);
  });
  test("dsv4-kv check passes", () => {
    const r = dsv4kv(["check"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  });
  test("plan --path cpu works; plan --path gpu names the install command (exit 2)", () => {
    const ex = { kind: "prefill", compressRatio: 4, ringSize: 16, swaPageSize: 256, seqLens: [518], extendLens: [6] };
    expect(dsv4kv(["plan", "--path", "cpu"], JSON.stringify(ex)).code).toBe(0);
    const r = dsv4kv(["plan", "--path", "gpu"], JSON.stringify(ex));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("install @dsv4-kv/kernels-cuda (npm install @dsv4-kv/kernels-cuda)");
  });
  test("simulate online-mtp --backend gpu names the install command (exit 2); the CPU backend runs", () => {
    const args = ["simulate", "online-mtp", "--requests", "2", "--steps", "5", "--draft-tokens", "2"];
    expect(dsv4kv(args).code).toBe(0);
    const r = dsv4kv([...args, "--backend", "gpu"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("npm install @dsv4-kv/kernels-cuda");
  });
  test("simulate compress --backend gpu names the install command (exit 2); the CPU backend runs", () => {
    const args = ["simulate", "compress", "--ratio", "4", "--draft-tokens", "4", "--steps", "5", "--head-dim", "128"];
    expect(dsv4kv(args).code).toBe(0);
    const r = dsv4kv([...args, "--backend", "gpu"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("npm install @dsv4-kv/kernels-cuda");
  });
  test("the compress package's root entry loads without kernels-cuda; its /gpu subpath needs it", () => {
    const load = (spec: string) =>
      spawnSync(process.execPath, ["-e", `require(${JSON.stringify(spec)})`], { cwd: project, env, encoding: "utf8" });
    expect(load("@dsv4-kv/compress").status).toBe(0);
    expect(load("@dsv4-kv/compress/gpu").status).not.toBe(0);
  });
  test("the controller's root entry loads without kernels-cuda; its /gpu subpath needs it", () => {
    const load = (spec: string) =>
      spawnSync(process.execPath, ["-e", `require(${JSON.stringify(spec)})`], { cwd: project, env, encoding: "utf8" });
    expect(load("@dsv4-kv/online-mtp-controller").status).toBe(0);
    const gpu = load("@dsv4-kv/online-mtp-controller/gpu");
    expect(gpu.status).not.toBe(0);
    expect(gpu.stderr).toContain("@dsv4-kv/kernels-cuda");
  });
});
