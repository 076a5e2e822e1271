import { expect } from "vitest";
import { createGpuTest } from "@dsv4-kv/vitest-preset/gpu-fixture";
import { probe, getDefaultContext } from "@dsv4-kv/kernels-cuda";
import type { CompressPlanTable, DecodePlanTable, PrefillPlan, WritePlanTable } from "@dsv4-kv/planner";

/** GPU tests: skipped with the probe's reason when there is no usable GPU. */
export const gpuTest = createGpuTest(probe, () => getDefaultContext());

function rowsHex(t: { bytes: Uint8Array; rowCount: number }, rowBytes: number, from: number, to: number): string[] {
  const out: string[] = [];
  for (let i = from; i < to; i++)
    out.push(Buffer.from(t.bytes.subarray(i * rowBytes, (i + 1) * rowBytes)).toString("hex"));
  return out;
}

/**
 * The comparison of docs/reference/planner.md §11 (invariants 7 and 8): counts equal, valid rows equal as sorted
 * multisets, padding rows byte-exact. Then the stronger property of this kernel: the whole tables are byte-identical
 * (it emits the host order).
 */
export function expectSamePrefill(gpu: PrefillPlan, cpu: PrefillPlan, label = ""): void {
  expect(gpu.numCompress, `${label} numCompress`).toBe(cpu.numCompress);
  expect(gpu.numWrite, `${label} numWrite`).toBe(cpu.numWrite);
  expect(gpu.planC.rowCount, `${label} planC rows`).toBe(cpu.planC.rowCount);
  expect(gpu.planW.rowCount, `${label} planW rows`).toBe(cpu.planW.rowCount);
  expect(gpu.writePad).toBe(cpu.writePad);
  expect(gpu.devicePath).toBe(cpu.devicePath);
  const same =
    Buffer.compare(Buffer.from(gpu.planC.bytes), Buffer.from(cpu.planC.bytes)) === 0 &&
    Buffer.compare(Buffer.from(gpu.planW.bytes), Buffer.from(cpu.planW.bytes)) === 0;
  if (same) return;
  expectMultisets(gpu.planC, cpu.planC, gpu.numCompress, 16, `${label} planC`);
  expectMultisets(gpu.planW, cpu.planW, gpu.numWrite, 8, `${label} planW`);
  expect(Buffer.from(gpu.planC.bytes).toString("hex"), `${label} planC bytes`).toBe(
    Buffer.from(cpu.planC.bytes).toString("hex"),
  );
  expect(Buffer.from(gpu.planW.bytes).toString("hex"), `${label} planW bytes`).toBe(
    Buffer.from(cpu.planW.bytes).toString("hex"),
  );
}

function expectMultisets(
  g: CompressPlanTable | WritePlanTable,
  c: CompressPlanTable | WritePlanTable,
  valid: number,
  rowBytes: number,
  label: string,
): void {
  expect(rowsHex(g, rowBytes, 0, valid).sort(), `${label} valid rows (sorted multiset)`).toEqual(
    rowsHex(c, rowBytes, 0, valid).sort(),
  );
  expect(rowsHex(g, rowBytes, valid, g.rowCount), `${label} padding rows`).toEqual(
    rowsHex(c, rowBytes, valid, c.rowCount),
  );
}

export function expectSameDecode(gpu: DecodePlanTable, cpu: DecodePlanTable, label = ""): void {
  expect(gpu.rowCount, label).toBe(cpu.rowCount);
  expect(Buffer.from(gpu.bytes).toString("hex"), label).toBe(Buffer.from(cpu.bytes).toString("hex"));
}

/** Runs fn, expecting a PlannerError; returns its code (or "no error"/"not a PlannerError: ..."). */
export function errorCode(fn: () => unknown): string {
  try {
    fn();
    return "no error";
  } catch (e) {
    const err = e as { name?: string; code?: string; message?: string };
    return err.name === "PlannerError" ? String(err.code) : `not a PlannerError: ${err.name}: ${err.message}`;
  }
}
