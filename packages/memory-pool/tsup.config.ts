import { defineLibraryConfig } from "@dsv4-kv/tsup-config";

export default defineLibraryConfig({ entry: ["src/index.ts", "src/internal.ts"] });
