/**
 * The compress package's error: a `Dsv4KvError` (from @dsv4-kv/errors) with this package's codes (docs/errors.md).
 * `field` names the input at fault with its row (`planC[7].bufferLen`, `planW[3].writeLoc`, `planD[0].seqLen`,
 * `input`, `ape`), `value` is what was given, `rule` the precondition it broke.
 */
import type { ErrorCode } from "@dsv4-kv/errors";
import { FieldError } from "@dsv4-kv/errors/internal";

export type CompressErrorCode = ErrorCode;

export class CompressError extends FieldError {
  static override readonly kind = "CompressError";
}
