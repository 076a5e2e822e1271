// What other packages of this repository need from this one; not for users (no semver promise).
// Unchecked bf16 steps (@dsv4-kv/compress's CPU backend converts whole rows after validating them).
export { bf16BitsOf, bf16ValueOf } from "./math.js";
