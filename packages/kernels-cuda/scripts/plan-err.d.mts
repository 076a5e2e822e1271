// Types of scripts/plan-err.mjs (imported by test/plan-err.test.ts).
export interface PlanErrEntry {
  name: string;
  value: number;
  note: string;
}
export declare const HEADER: string;
export declare const GENERATED: string;
export declare function parsePlanErr(header: string): PlanErrEntry[];
export declare function renderPlanErr(header: string): string;
