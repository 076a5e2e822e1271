import type { TestAPI } from "vitest";
export declare function createGpuTest<T>(
  probe: () => { ok: boolean; reason: string },
  acquire: () => T,
): TestAPI<{ gpu: T }>;
export declare const hex: (b: Uint8Array) => string;
export declare function codeOf(fn: () => unknown): string;
export declare function withForcedCpu<T>(fn: () => T | Promise<T>): Promise<T>;
