/**
 * The one boundary between the addon and TypeScript: `guardAddon` wraps every function, class constructor,
 * prototype method and returned promise of the loaded addon so that whatever the native side throws reaches the
 * caller as a `KernelsCudaError`. It reads only the structured properties the addon sets (native/common.h:
 * `code`, `field`, `value`, `rule`, `suggestion`; `cudaCall`, `cudaCode`, `cudaName`, `cudaMessage`, `entry`), never the message.
 */
import { Dsv4KvError, type ErrorCode } from "@dsv4-kv/errors";
import { KernelsCudaError } from "./errors.js";

/** The addon's error codes and the shared codes they stand for. */
const CODE_OF_NATIVE: Readonly<Record<string, ErrorCode>> = {
  ERR_DSV4KV_CUDA: "NATIVE",
  ERR_DSV4KV_NO_CUDA: "GPU_UNAVAILABLE",
  ERR_INVALID_ARG_TYPE: "INVALID_TYPE",
  ERR_OUT_OF_RANGE: "INVALID_ARGUMENT",
  ERR_DSV4KV_ARG: "INVALID_ARGUMENT",
  ERR_DSV4KV_UNKNOWN_KEY: "UNKNOWN_KEY",
  ERR_DSV4KV_ONLINE_MTP: "INVALID_ARGUMENT",
  ERR_DSV4KV_BUFFER: "DEVICE_BUFFER",
  ERR_DSV4KV_CONTEXT: "CONTEXT",
};

type NativeFields = Partial<
  Record<"code" | "field" | "rule" | "suggestion" | "cudaCall" | "cudaName" | "cudaMessage" | "entry", string>
> & {
  value?: unknown;
  cudaCode?: number;
  message?: string;
};

/** The KernelsCudaError a native throw stands for (a dsv4-kv error passes through unchanged). */
export function fromNative(thrown: unknown): unknown {
  if (Dsv4KvError.isInstance(thrown)) return thrown;
  const e = (typeof thrown === "object" && thrown !== null ? thrown : {}) as NativeFields;
  const nativeCode = typeof e.code === "string" ? e.code : "";
  const code = CODE_OF_NATIVE[nativeCode];
  if (code === "NATIVE") return cudaError(e);
  if (code === "GPU_UNAVAILABLE" && typeof e.field === "string") {
    // The entry point (e.g. "new DeviceBuffer()") is the subject of the rule, not an input.
    return new KernelsCudaError(code, "", undefined, `${e.field} ${e.rule}`, { nativeCode, entry: e.field });
  }
  if (code !== undefined && typeof e.field === "string" && typeof e.rule === "string") {
    const params = typeof e.suggestion === "string" ? { nativeCode, suggestion: e.suggestion } : { nativeCode };
    return new KernelsCudaError(code, e.field, e.value, e.rule, params);
  }
  // Not one of the addon's own errors (node-addon-api's argument checks, a V8 error): keep it as the cause.
  const detail = typeof e.message === "string" ? e.message : String(thrown);
  return new KernelsCudaError("NATIVE", "", undefined, `the addon failed: ${detail}`, { nativeCode, cause: thrown });
}

function cudaError(e: NativeFields): KernelsCudaError {
  const where = e.entry ? `${e.entry}: ` : "";
  const rule = `${where}${e.cudaCall} failed: ${e.cudaMessage} (${e.cudaName} = ${e.cudaCode})`;
  return new KernelsCudaError("NATIVE", "", undefined, rule, {
    cudaError: e.cudaCode,
    cudaName: e.cudaName,
    cudaMessage: e.cudaMessage,
    cudaCall: e.cudaCall,
    entry: e.entry,
  });
}

function guardCall<T>(run: () => T): T {
  let out: T;
  try {
    out = run();
  } catch (thrown) {
    throw fromNative(thrown);
  }
  if (out instanceof Promise) return out.catch((thrown: unknown) => Promise.reject(fromNative(thrown))) as T;
  return out;
}

type AnyFunction = (...args: unknown[]) => unknown;

/** A class of the addon (Context, DeviceBuffer): its prototype has methods of its own. */
function isClass(f: AnyFunction): boolean {
  const proto = (f as { prototype?: object }).prototype;
  return proto !== undefined && Object.getOwnPropertyNames(proto).some((k) => k !== "constructor");
}

/**
 * A JS subclass of an addon class whose constructor and methods are guarded. Instances stay the addon's own wrapped
 * objects (the native constructor runs through `super`), so they can be passed back to the addon; the native
 * prototype's methods are read-only, hence a subclass rather than patching them.
 */
function guardClass(Base: AnyFunction): AnyFunction {
  const NativeClass = Base as unknown as new (...args: unknown[]) => object;
  const Guarded = class extends NativeClass {
    constructor(...args: unknown[]) {
      try {
        super(...args);
      } catch (thrown) {
        throw fromNative(thrown);
      }
    }
  };
  for (const key of Object.getOwnPropertyNames(NativeClass.prototype)) {
    const method = Object.getOwnPropertyDescriptor(NativeClass.prototype, key)!.value as unknown;
    if (key === "constructor" || typeof method !== "function") continue;
    Object.defineProperty(Guarded.prototype, key, {
      value(this: object, ...args: unknown[]) {
        return guardCall(() => (method as AnyFunction).apply(this, args));
      },
      writable: true,
      configurable: true,
    });
  }
  Object.defineProperty(Guarded, "name", { value: Base.name });
  return Guarded as unknown as AnyFunction;
}

/** The addon with every entry point guarded (see the top); arrays pass unchanged. Call once per loaded module. */
export function guardAddon<T extends object>(addon: T): T {
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(addon)) {
    if (typeof v === "function") {
      const f = v as AnyFunction;
      out[key] = isClass(f) ? guardClass(f) : (...args: unknown[]) => guardCall(() => f(...args));
    } else if (typeof v === "object" && v !== null && !Array.isArray(v)) {
      out[key] = guardAddon(v);
    } else {
      out[key] = v;
    }
  }
  return out as T;
}
