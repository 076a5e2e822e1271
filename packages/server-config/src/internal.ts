// What other packages of this repository need from this one; not for users (no semver promise).
export * from "./vllm/index.js";
