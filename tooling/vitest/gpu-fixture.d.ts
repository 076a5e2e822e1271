import type { TestAPI } from "vitest";
export declare function createGpuTest<T>(
  probe: () => { ok: boolean; reason: string },
  acquire: () => T,
): TestAPI<{ gpu: T }>;
