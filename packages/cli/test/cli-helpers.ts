import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

export const BIN = fileURLToPath(new URL("../dist/bin.js", import.meta.url));

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built dsv4-kv in a child process (the tests depend on `build`, see turbo.json). The caller's colour
 * settings are dropped (an undefined value unsets a variable), so output is plain unless a test asks for colour.
 */
export function cli(args: string[], input?: string, env: NodeJS.ProcessEnv = {}): CliResult {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    input,
    encoding: "utf8",
    env: { ...process.env, FORCE_COLOR: undefined, NO_COLOR: undefined, ...env },
    timeout: 120_000,
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}
