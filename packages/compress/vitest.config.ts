import { definePackageConfig } from "@dsv4-kv/vitest-preset";

export default definePackageConfig();
