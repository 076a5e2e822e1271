#!/usr/bin/env node
// Runs turbo with DSV4KV_TOOLCHAIN set to the CUDA toolchain of this shell (nvcc presence and release line,
// CUDACXX, the architecture list). turbo hashes environment variables before any task runs, so the key must exist
// before turbo starts; the platform package's build (packages/kernels-cuda-linux-x64) lists it in its task `env` and
// refuses to run when it is missing or stale, so a CPU-only addon is never replayed where nvcc exists, nor the reverse.
// Usage, from the repository root: node tooling/scripts/turbo.mjs run build [turbo options]
import { spawnSync } from "node:child_process";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { detectToolchain, TOOLCHAIN_ENV, toolchainKey } from "@dsv4-kv/kernels-cuda-linux-x64/scripts/toolchain.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const key = toolchainKey(detectToolchain());
const env = { ...process.env, [TOOLCHAIN_ENV]: key };
const turbo = join(root, "node_modules", ".bin", "turbo");
const r = spawnSync(turbo, process.argv.slice(2), { stdio: "inherit", env, cwd: root });
if (r.error) {
  console.error(`turbo.mjs: could not run ${turbo}: ${r.error.message} (run \`pnpm install\` first)`);
  process.exit(1);
}
process.exit(r.status ?? 1);
