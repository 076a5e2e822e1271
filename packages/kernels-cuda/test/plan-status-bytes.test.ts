/** PLAN_STATUS_BYTES is kept by hand next to the decoder; the addon says its own size (`planStatusBytes`). */
import { expect, test } from "vitest";
import { probe } from "../src/index.js";
import { PLAN_STATUS_BYTES, PLAN_STATUS_RECORD_BYTES } from "../src/internal.js";
import { loadNativeUnchecked } from "../src/testing.js";

const addon = loadNativeUnchecked();

test("the loaded addon's planStatusBytes = PLAN_STATUS_BYTES (CUDA and CPU-only builds alike)", (ctx) => {
  if (!addon) ctx.skip(`no addon loads: ${probe().reason}`);
  expect(addon!.planStatusBytes).toBe(PLAN_STATUS_BYTES);
  expect(addon!.planStatusBytes % PLAN_STATUS_RECORD_BYTES).toBe(0);
});
