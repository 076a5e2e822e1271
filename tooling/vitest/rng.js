// A seeded linear congruential generator for the GPU tests' random data (kernels-cuda's and those of the packages
// above it that test its raw bindings): the same draws on every run, so a failing case is the same case again.
export class Rng {
  /** @param {number} seed */
  constructor(seed) {
    this.s = seed >>> 0 || 1;
  }
  /** Uniform in [0, 1). */
  u() {
    this.s = (Math.imul(this.s, 1664525) + 1013904223) >>> 0;
    return this.s / 4294967296;
  }
  /** Standard normal. */
  n() {
    return Math.sqrt(-2 * Math.log(this.u() + 1e-12)) * Math.cos(2 * Math.PI * this.u());
  }
  /**
   * Integer in [lo, hi].
   * @param {number} lo
   * @param {number} hi
   */
  int(lo, hi) {
    return lo + Math.floor(this.u() * (hi - lo + 1));
  }
}
