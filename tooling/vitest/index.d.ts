import type { UserConfig } from "vitest/config";
export declare function definePackageConfig(overrides?: UserConfig): UserConfig;
