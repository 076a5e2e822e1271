#!/usr/bin/env node
// Builds the two prebuilt addons of this package from ../kernels-cuda (its native/ sources and CMakeLists.txt):
//   dist/cuda/dsv4kv_kernels.node  nvcc build: SASS + PTX per DSV4KV_CUDA_ARCH, static cudart, stripped
//   dist/cpu/dsv4kv_kernels.node   DSV4KV_CUDA=OFF build, stripped
//   dist/manifest.json             per binary: kind, architectures, CUDA version, minimum driver and glibc, size, sha256
// Where no nvcc is found only the CPU binary is built, the manifest says why, and nothing stands in for the CUDA one.
// Runs only through `node tooling/scripts/turbo.mjs run build` (it sets DSV4KV_TOOLCHAIN, part of turbo's cache key).
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { detectToolchain, TOOLCHAIN_ENV, toolchainKey, WRAPPER_COMMAND } from "./toolchain.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const pkgDir = resolve(here, "..");
const sourceDir = resolve(pkgDir, "../kernels-cuda");
const ADDON = "dsv4kv_kernels.node";
/** Minimum Linux driver per CUDA major (minor-version compatibility: any driver of that branch or newer). */
const MIN_DRIVER = { 12: "525.60.13", 13: "580.65.06" };
const require = createRequire(import.meta.url);

function fail(message) {
  console.error(`kernels-cuda-linux-x64 build: ${message}`);
  process.exit(1);
}

function checkToolchainKey(toolchain) {
  const expected = toolchainKey(toolchain);
  const given = process.env[TOOLCHAIN_ENV];
  if (given === expected) return;
  const why = given ? `${TOOLCHAIN_ENV} is "${given}" but this shell has "${expected}"` : `${TOOLCHAIN_ENV} is not set`;
  fail(
    `${why}. turbo keys this build by the CUDA toolchain, so run it through the wrapper that sets it, ` +
      `from the repository root: \`${WRAPPER_COMMAND}\` (or \`pnpm build\`; add --filter=<package> as usual).`,
  );
}

function cmakeJs(args, env) {
  const { bin: bins } = require("cmake-js/package.json");
  const bin = join(dirname(require.resolve("cmake-js/package.json")), bins["cmake-js"]);
  const r = spawnSync(process.execPath, [bin, ...args], { stdio: "inherit", env });
  if (r.status !== 0) fail(`cmake-js ${args[0]} failed (exit ${r.status ?? r.signal})`);
}

/** Configures (always: a changed architecture list must reach CMake) and builds into build/<kind>. */
function buildOne(kind, defines, env) {
  const out = join(pkgDir, "build", kind);
  const common = ["-d", sourceDir, "-O", out, "--parallel", "2", ...defines.map((d) => `--CD${d}`)];
  const t0 = Date.now();
  cmakeJs(["configure", ...common], env);
  cmakeJs(["build", ...common], env);
  const seconds = (Date.now() - t0) / 1000;
  console.log(`kernels-cuda-linux-x64 build: ${kind} addon built in ${seconds.toFixed(0)} s`);
  return { built: join(out, "Release", ADDON), seconds };
}

/** Loads the built file in a child process: what it says it is, never what we asked for. */
function compiledWithCuda(file) {
  const code = `process.stdout.write(String(require(${JSON.stringify(file)}).compiledWithCuda))`;
  const out = execFileSync(process.execPath, ["-e", code], { encoding: "utf8" });
  return out === "true";
}

function minGlibc(file) {
  const dump = execFileSync("objdump", ["-T", file], { encoding: "utf8", maxBuffer: 64 << 20 });
  const versions = [...new Set(dump.match(/GLIBC_[0-9.]+/g) ?? [])].map((v) => v.slice("GLIBC_".length));
  versions.sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
  return versions.at(-1) ?? null;
}

function install(kind, built, extra) {
  const dir = join(pkgDir, "dist", kind);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, ADDON);
  copyFileSync(built, file);
  execFileSync("strip", ["--strip-unneeded", file]);
  const bytes = readFileSync(file);
  return {
    kind,
    file: relative(pkgDir, file),
    ...extra,
    minGlibc: minGlibc(file),
    bytes: bytes.length,
    unstrippedBytes: statSync(built).size,
    sha256: createHash("sha256").update(bytes).digest("hex"),
    builtAt: new Date().toISOString(),
  };
}

/** CMake CUDA_ARCHITECTURES entries ("90-real", "90-virtual", "100") as SASS and PTX lists. */
function architectures(arch) {
  const sass = [];
  const ptx = [];
  for (const entry of arch
    .split(/[;,]/)
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [sm, what] = entry.split("-");
    if (what !== "virtual") sass.push(`sm_${sm}`);
    if (what !== "real") ptx.push(`compute_${sm}`);
  }
  return { sass, ptx };
}

function main() {
  const toolchain = detectToolchain();
  checkToolchainKey(toolchain);
  if (!existsSync(join(sourceDir, "CMakeLists.txt"))) fail(`no CMakeLists.txt in ${sourceDir}`);
  const env = { ...process.env };
  const napiInclude = require("node-addon-api").include.replace(/"/g, "");
  const common = [`NODE_ADDON_API_DIR=${napiInclude}`, "DSV4KV_BENCH_VARIANTS=OFF", "CMAKE_BUILD_TYPE=Release"];
  const binaries = {};
  const buildSeconds = {};

  // Both are built before dist/ is replaced, so a failed build leaves the previous binaries in place.
  const cpu = buildOne("cpu", [...common, "DSV4KV_CUDA=OFF"], env);
  if (compiledWithCuda(cpu.built)) fail(`${cpu.built} says it was compiled with CUDA; expected a CPU-only build`);
  const cuda = toolchain.nvcc
    ? buildOne("cuda", [...common, "DSV4KV_CUDA=ON", `CMAKE_CUDA_COMPILER=${toolchain.nvcc}`], {
        ...env,
        DSV4KV_CUDA_ARCH: toolchain.arch,
      })
    : null;
  if (cuda && !compiledWithCuda(cuda.built)) {
    fail(`${cuda.built} was built without CUDA although nvcc is ${toolchain.nvcc}`);
  }

  rmSync(join(pkgDir, "dist"), { recursive: true, force: true });
  binaries.cpu = install("cpu", cpu.built, { architectures: null, cudaVersion: null, minDriver: null });
  buildSeconds.cpu = cpu.seconds;
  let cudaMissing = null;
  if (cuda) {
    const major = toolchain.cudaVersion.split(".")[0];
    binaries.cuda = install("cuda", cuda.built, {
      architectures: architectures(toolchain.arch),
      cudaVersion: toolchain.cudaVersion,
      cudaRuntime: "static",
      minDriver: MIN_DRIVER[major] ?? null,
    });
    buildSeconds.cuda = cuda.seconds;
  } else {
    cudaMissing = "no nvcc found (CUDACXX, PATH, CUDA_HOME, CUDA_PATH) when this package was built";
    console.warn(
      `kernels-cuda-linux-x64 build: WARNING: ${cudaMissing}: only the CPU-only addon was built; ` +
        "this package must not be published from this build (docs/release.md).",
    );
  }
  const manifest = {
    toolchain: toolchainKey(toolchain),
    cuda: binaries.cuda ?? null,
    cudaMissing,
    cpu: binaries.cpu,
    buildSeconds,
  };
  writeFileSync(join(pkgDir, "dist", "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  console.log(`kernels-cuda-linux-x64 build: ${binaries.cuda ? "CUDA and CPU addons" : "CPU addon only"} in dist/`);
}

main();
