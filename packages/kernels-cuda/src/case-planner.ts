/**
 * `dsv4-kv plan --path gpu` hook: the CLI (packages/cli/src/commands/plan.ts) imports `createCasePlanner` and
 * passes its CPU case planner. Each case is first planned by that CPU planner, which parses and validates it (so a
 * malformed or refused case gives exactly the CPU engine's error), then planned again on the GPU; the GPU tables
 * are returned.
 */
import type { CompressPlanTable, DecodePlanTable, WritePlanTable } from "@dsv4-kv/planner";
import { planDecodeGpu, planDecodeLegacyGpu, planPrefillGpu, planPrefillLegacyGpu } from "./planner.js";
import { loadNative } from "./native.js";

/** The CLI's case shape (a structural copy; see packages/cli/src/commands/plan.ts `PlanCase`). */
export interface GpuPlanCase {
  kind: "prefill" | "decode" | "prefill-legacy" | "decode-legacy";
  compressRatio: number;
  ringSize?: number;
  swaPageSize?: number;
  useReqRing?: boolean;
  numQTokens?: number;
  useCudaGraph?: boolean;
  seqLens: number[];
  extendLens?: number[];
  reqPoolIndices?: number[];
  reqToToken?: number[][] | { identity: { tokensPerReq: number } };
  fullToState?: number[] | "identity";
  path?: "host" | "device";
}

export interface GpuCaseTables {
  planC?: CompressPlanTable;
  planW?: WritePlanTable;
  planD?: DecodePlanTable;
}

export type GpuCasePlanner = (c: GpuPlanCase) => GpuCaseTables | Promise<GpuCaseTables>;

export function createCasePlanner(cpuCasePlanner: GpuCasePlanner): GpuCasePlanner {
  loadNative(); // throws KernelsCudaUnavailableError (code ERR_DSV4KV_GPU_UNAVAILABLE) listing causes and fixes
  return async (c) => {
    await cpuCasePlanner(c); // parse + validate exactly as the CPU engine
    const ring = { compressRatio: c.compressRatio, ringSize: c.ringSize as number, swaPageSize: c.swaPageSize as number, useReqRing: c.useReqRing ?? false };
    let reqToToken: { data: Int32Array; stride: number } | { identity: { tokensPerReq: number } } | undefined;
    if (Array.isArray(c.reqToToken)) {
      const stride = c.reqToToken[0]!.length;
      const data = new Int32Array(c.reqToToken.length * stride);
      c.reqToToken.forEach((row, r) => data.set(row, r * stride));
      reqToToken = { data, stride };
    } else {
      reqToToken = c.reqToToken;
    }
    const maps = { reqToToken, fullToState: c.fullToState };
    switch (c.kind) {
      case "prefill": {
        const p = planPrefillGpu({ ...ring, ...maps, seqLens: c.seqLens, extendLens: c.extendLens!, reqPoolIndices: c.reqPoolIndices, numQTokens: c.numQTokens, useCudaGraph: c.useCudaGraph, path: c.path });
        return { planC: p.planC, planW: p.planW };
      }
      case "prefill-legacy": {
        const p = planPrefillLegacyGpu({ compressRatio: c.compressRatio, seqLens: c.seqLens, extendLens: c.extendLens!, reqPoolIndices: c.reqPoolIndices, numQTokens: c.numQTokens, useCudaGraph: c.useCudaGraph });
        return { planC: p.planC, planW: p.planW };
      }
      case "decode":
        return { planD: planDecodeGpu({ ...ring, ...maps, seqLens: c.seqLens, reqPoolIndices: c.reqPoolIndices }) };
      case "decode-legacy":
        return { planD: planDecodeLegacyGpu({ compressRatio: c.compressRatio, seqLens: c.seqLens, reqPoolIndices: c.reqPoolIndices }) };
    }
  };
}
