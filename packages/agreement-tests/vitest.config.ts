import { definePackageConfig } from "@dsv4-kv/vitest-preset";

// One GPU context at a time: forks, no file parallelism.
export default definePackageConfig({ test: { pool: "forks", fileParallelism: false } });
