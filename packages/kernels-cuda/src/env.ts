/** Environment variable that forces the CPU path (probe().ok === false) when set to 1/true/yes. */
export const FORCE_CPU_ENV = "DSV4KV_FORCE_CPU";
/** Environment variable naming a `.node` file to try first, before the source build and the prebuilt binaries. */
export const ADDON_PATH_ENV = "DSV4KV_ADDON_PATH";
