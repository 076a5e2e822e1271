/**
 * The opaque handles a backend hands out (`IndexVector`, `MatrixF32`, `StateBuffer`): frozen plain objects whose
 * storage (typed array or device buffer) is kept in a WeakMap, out of the caller's reach. `get` is the provenance
 * check: a handle made elsewhere is refused.
 */
import type { IndexVector, MatrixF32, StateBuffer } from "./backend.js";
import { typeOf } from "@dsv4-kv/errors/internal";
import { check } from "./check.js";

type Handle = IndexVector | MatrixF32 | StateBuffer;

export class HandleStore<D> {
  private readonly storage = new WeakMap<object, D>();

  constructor(private readonly owner: string) {}

  make<T extends Handle>(handle: T, data: D): T {
    Object.freeze(handle);
    this.storage.set(handle, data);
    return handle;
  }

  get(handle: Handle, field: string): D {
    const data = typeof handle === "object" && handle !== null ? this.storage.get(handle) : undefined;
    check(data !== undefined, "BACKEND", field, typeOf(handle), `must come from this ${this.owner}`);
    return data;
  }
}
