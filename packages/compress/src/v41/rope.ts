/**
 * A plain RoPE table in SGLang's `freqs_cis` form ([positions, 64] fp32, (cos, sin) interleaved per rotated pair):
 * pair j turns by position · theta^(−2j/64). SGLang builds V4.1's table with YaRN scaling and compress_rope_theta;
 * the compressors only read the table, so the scenarios and tests use this unscaled one.
 */
import { checkInt, checkNonNegative } from "../check.js";
import { V41_ROPE_DIM } from "./layouts.js";

export function plainRopeTable(positions: number, theta: number): Float32Array {
  checkInt(positions, 1, 1 << 22, "positions");
  checkNonNegative(theta, "theta");
  const out = new Float32Array(positions * V41_ROPE_DIM);
  for (let p = 0; p < positions; p++) {
    for (let j = 0; j < V41_ROPE_DIM / 2; j++) {
      const angle = p * theta ** ((-2 * j) / V41_ROPE_DIM);
      out[p * V41_ROPE_DIM + 2 * j] = Math.cos(angle);
      out[p * V41_ROPE_DIM + 2 * j + 1] = Math.sin(angle);
    }
  }
  return out;
}
