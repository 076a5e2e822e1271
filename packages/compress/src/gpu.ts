// `@dsv4-kv/compress/gpu`: the GPU backend, on its own subpath so the root entry never loads @dsv4-kv/kernels-cuda
// (an optional peer dependency: install it to use this subpath).
export {
  GpuCompressBackend,
  type GpuCompressBackendOptions,
  createGpuCompressBackend,
  probeGpuCompressBackend,
} from "./gpu-backend.js";
