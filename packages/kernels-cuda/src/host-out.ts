// The host side of a native call that fills a buffer: allocated here, where Node is a given.

/**
 * The host buffer a native plan call fills. The addon copies the whole device region into it (plan rows and all 256
 * status records; it refuses any other size), so it is not zeroed (docs/decisions.md, "unzeroed plan output"). A
 * plain Uint8Array over a non-pooled allocation, so callers see no Buffer.
 */
export function hostOut(bytes: number): Uint8Array {
  const b = Buffer.allocUnsafeSlow(bytes);
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}
