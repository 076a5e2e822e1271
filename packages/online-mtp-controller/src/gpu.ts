// `@dsv4-kv/online-mtp-controller/gpu`: the GPU backend, on its own subpath so the root entry never loads
// @dsv4-kv/kernels-cuda (an optional peer dependency: install it to use this subpath).
export { GpuBackend, createGpuBackend, probeGpuBackend } from "./gpu-backend.js";
