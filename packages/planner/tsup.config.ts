import { defineLibraryConfig } from "@dsv4-kv/tsup-config";

export default defineLibraryConfig({
  entry: ["src/index.ts", "src/internal.ts", "src/testing.ts", "src/gpu.ts", "src/gpu/internal.ts"],
});
