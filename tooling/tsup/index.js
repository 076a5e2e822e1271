// The shared tsup configuration: ESM + CJS + declarations for Node 20, one entry per public subpath.
import { defineConfig } from "tsup";

/**
 * @param {{ entry: string[], shims?: boolean }} options `entry`: the source files of the package's subpaths
 *   (src/index.ts, src/internal.ts, …); `shims`: inject `__dirname`/`import.meta.url` shims (packages that locate
 *   files next to their build).
 */
export function defineLibraryConfig({ entry, shims = false }) {
  return defineConfig({
    entry,
    format: ["esm", "cjs"],
    dts: true,
    sourcemap: true,
    clean: true,
    shims,
    target: "node20",
    platform: "node",
  });
}
