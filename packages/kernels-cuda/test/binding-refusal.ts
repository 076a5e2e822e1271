/**
 * The refusal a binding call throws for its args, for the key-table tests of the compress and online-MTP bindings
 * (test/compress-keys.test.ts, test/online-mtp-keys.test.ts).
 */
import { expect } from "vitest";
import { KernelsCudaError } from "../src/index.js";

/** What `nat[call]` throws for `args` (ctx is not a Context: reached only past the args). */
export function bindingRefusal<N extends object>(nat: N, call: keyof N & string, args: unknown): KernelsCudaError {
  const run = nat[call] as unknown as (ctx: unknown, args: unknown) => unknown;
  try {
    run.call(nat, {}, args);
  } catch (e) {
    if (KernelsCudaError.isInstance(e)) return e as KernelsCudaError;
    throw e;
  }
  throw new Error(`${call} accepted the call`);
}

/** The parts of a refusal the tests compare: code, field, suggestion. */
export const refusalShape = (e: KernelsCudaError) => ({
  code: e.code,
  field: e.field,
  suggestion: e.params.suggestion,
});

/** The refusal's code and field are `code` and `field` (its suggestion unchecked). */
export function expectRefused(e: KernelsCudaError, code: string, field: string): void {
  expect(refusalShape(e)).toMatchObject({ code, field });
}

/** The refusal's code, field and suggestion are exactly these. */
export function expectRefusedExactly(e: KernelsCudaError, code: string, field: string, suggestion?: string): void {
  expect(refusalShape(e)).toEqual({ code, field, suggestion });
}
