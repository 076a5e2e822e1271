import type fc from "fast-check";
export declare const hostileValue: fc.Arbitrary<unknown>;
export declare function mutated<T extends object>(
  base: T,
  tame?: Readonly<Record<string, number>>,
): fc.Arbitrary<Record<string, unknown>>;
export declare const FUZZ_MS: number;
export declare const FUZZ_SEED: number;
export declare function fuzzParams(ms?: number): fc.Parameters<unknown>;
export declare function typedOrOk(
  fn: () => unknown,
  isTyped: (e: unknown) => e is { code: string; message: string },
): void;
