/**
 * Contexts (a device and its non-blocking stream) and device buffers: what every GPU call of the packages above runs
 * on. Each goes through `loadNative()`, so without a usable GPU they throw KernelsCudaUnavailableError.
 */
import type { DeviceBuffer, GpuContext } from "./addon-types.js";
import { loadNative } from "./native.js";

export type { DeviceBuffer, GpuContext } from "./addon-types.js";

export interface GpuCallOptions {
  /** Context (device + stream) to run on; default: a shared context on device 0. */
  context?: GpuContext;
}

let defaultContext: GpuContext | undefined;

/** The shared context on device 0 (created on first use). */
export function getDefaultContext(): GpuContext {
  if (!defaultContext) defaultContext = createContext(0);
  return defaultContext;
}

/** A new context (device + non-blocking stream). */
export function createContext(device = 0): GpuContext {
  const addon = loadNative();
  return new addon.Context(device);
}

/** The context a call runs on: the one in `opts`, or the shared default. */
export function contextOf(opts: GpuCallOptions | undefined): GpuContext {
  return opts?.context ?? getDefaultContext();
}

/** `byteLength` bytes of device memory on `context`'s device (default: the shared context's). */
export function createDeviceBuffer(byteLength: number, context?: GpuContext): DeviceBuffer {
  const addon = loadNative();
  return new addon.DeviceBuffer(byteLength, context);
}
