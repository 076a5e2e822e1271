/** vLLM version strings as logs print them (`0.25.0`, `0.31.1rc1.dev50+g554340f3d`): compared by release number. */

/** The first vLLM release whose DeepSeek-V4 sizing public logs confirm (the 0.26.1rc0 and 0.27.1 logs reproduce). */
export const MODELLED_FROM_VERSION = "0.26.0";

function release(version: string): number[] {
  const m = /^v?(\d+)\.(\d+)(?:\.(\d+))?/.exec(version);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)] : [];
}

/** Negative when `a` is an earlier release than `b`, 0 when the same (pre-release tags ignored); NaN if unreadable. */
export function compareVersions(a: string, b: string): number {
  const x = release(a);
  const y = release(b);
  if (x.length === 0 || y.length === 0) return Number.NaN;
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return 0;
}
