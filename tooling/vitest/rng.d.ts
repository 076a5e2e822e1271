/** A seeded linear congruential generator: the same draws on every run. */
export declare class Rng {
  private s;
  constructor(seed: number);
  /** Uniform in [0, 1). */
  u(): number;
  /** Standard normal. */
  n(): number;
  /** Integer in [lo, hi]. */
  int(lo: number, hi: number): number;
}
