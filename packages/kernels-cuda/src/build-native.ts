#!/usr/bin/env node
/**
 * `npx dsv4-kv-kernels-build`: builds the addon from this package's native/ sources and CMakeLists.txt into its
 * build/Release (the loader tries that file before the prebuilt binaries). Works in a consumer's project: cmake-js
 * and node-addon-api are dependencies of this package; cmake >= 3.18 and a C++17 compiler are prerequisites, and
 * nvcc (on PATH, CUDACXX, CUDA_HOME or /usr/local/cuda) for the CUDA build. Options: `--cpu` builds without CUDA
 * (DSV4KV_CUDA=OFF); `--bench` builds the bench addon instead (DSV4KV_BENCH=ON, the kernels plus the benchmark
 * entries, into build-bench/Release: what the bench scripts load); DSV4KV_CUDA_ARCH sets the CUDA architectures
 * (default sm_90 SASS + compute_90 PTX).
 */
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { benchBuildPath, sourceBuildPath } from "./addon-loader.js";
import { packageRoot } from "./package-root.js";

function main(argv: readonly string[]): number {
  const unknown = argv.filter((a) => a !== "--cpu" && a !== "--bench");
  if (unknown.length > 0) {
    console.error(`dsv4-kv-kernels-build: unknown argument ${unknown[0]} (the options are --cpu and --bench)`);
    return 2;
  }
  const bench = argv.includes("--bench");
  const root = packageRoot();
  const require = createRequire(join(root, "package.json"));
  const cmakeJsManifest = require("cmake-js/package.json") as { bin: Record<string, string> };
  const cmakeJs = join(dirname(require.resolve("cmake-js/package.json")), cmakeJsManifest.bin["cmake-js"]!);
  const napi = (require("node-addon-api") as { include: string }).include.replace(/"/g, "");
  const defines = [`--CDNODE_ADDON_API_DIR=${napi}`];
  if (argv.includes("--cpu")) defines.push("--CDDSV4KV_CUDA=OFF");
  if (bench) defines.push("--CDDSV4KV_BENCH=ON");
  const args = [cmakeJs, "rebuild", "-d", root, "-O", join(root, bench ? "build-bench" : "build"), ...defines];
  console.error(`dsv4-kv-kernels-build: building ${bench ? benchBuildPath(root) : sourceBuildPath(root)}`);
  const r = spawnSync(process.execPath, args, { stdio: "inherit" });
  if (r.error) {
    console.error(`dsv4-kv-kernels-build: could not run cmake-js: ${r.error.message}`);
    return 1;
  }
  if (r.status !== 0) {
    console.error(
      "dsv4-kv-kernels-build: the build failed (see above). Prerequisites: cmake >= 3.18 and a C++17 compiler; " +
        "nvcc for the CUDA build (or pass --cpu).",
    );
    return r.status ?? 1;
  }
  console.error(
    bench
      ? "dsv4-kv-kernels-build: done; the bench scripts load this build (useBenchAddon)."
      : "dsv4-kv-kernels-build: done; require('@dsv4-kv/kernels-cuda').probe() now loads this build first.",
  );
  return 0;
}

process.exitCode = main(process.argv.slice(2));
