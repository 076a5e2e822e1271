// Types of run-case.mjs for the TypeScript test that imports it.
export interface GoldenCase {
  name: string;
  args: string[];
  stdin?: string;
  files?: string[];
}
export const REPO_ROOT: string;
export const BIN: string;
export const CASES: GoldenCase[];
export function outputPath(name: string): string;
export function runCase(c: GoldenCase): string;
