export {
  type ProbeResult,
  type NativeAddon,
  FORCE_CPU_ENV,
  ADDON_PATH_ENV,
  KernelsCudaUnavailableError,
  probe,
  addonPath,
  loadNative,
  loadNativeUnchecked,
} from "./native.js";
export * from "./online-mtp.js";
