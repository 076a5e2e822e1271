/** The error server-config throws or returns for input it cannot use (server arguments, the KV budget). */
import { FieldError } from "@dsv4-kv/errors/internal";

export class ServerConfigError extends FieldError {
  static override readonly kind = "ServerConfigError";
}
