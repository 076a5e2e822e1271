// Vite aliases from every workspace package entry (`@dsv4-kv/x`, `@dsv4-kv/x/sub`) to the TypeScript source its
// `exports` map names under the "@dsv4-kv/source" condition, for tests that import packages they do not depend on.
import { join } from "node:path";
import { workspacePackages } from "./workspace.mjs";

/** @param {string} root @returns {{ find: RegExp, replacement: string }[]} */
export function sourceAliases(root) {
  return workspacePackages(root).flatMap(({ dir, manifest }) =>
    Object.entries(manifest.exports ?? {}).flatMap(([subpath, target]) => {
      const source = typeof target === "object" && target !== null ? target["@dsv4-kv/source"] : undefined;
      if (typeof source !== "string") return [];
      const specifier = subpath === "." ? manifest.name : `${manifest.name}${subpath.slice(1)}`;
      return [
        {
          find: new RegExp(`^${specifier.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}$`),
          replacement: join(root, dir, source),
        },
      ];
    }),
  );
}
