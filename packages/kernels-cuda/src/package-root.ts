/**
 * This package's root directory, for the loader (native.ts) and the build bin (build-native.ts). No other import, so
 * the bin does not pull in the loader.
 */
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The package root: every bundle (dist/*.js, dist/*.cjs) and source file (src/*.ts) sits one level below it. */
export function packageRoot(): string {
  const here = typeof __dirname === "string" ? __dirname : dirname(fileURLToPath(import.meta.url));
  return resolve(here, "..");
}
