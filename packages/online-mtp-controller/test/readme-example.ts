import {
  CHUNK_TOKENS,
  CpuBackend,
  HEAD_DIM,
  KV_SCORE_COLS,
  OnlineMtpController,
  OnlineMtpError,
  runSimulation,
} from "../src/index.js";

const backend = new CpuBackend(); // or createGpuBackend() from "@dsv4-kv/online-mtp-controller/gpu" on a CUDA machine
const ctrl = new OnlineMtpController({ backend, numReqSlots: 9, maxDraftTokens: 8, numDraftTokens: 4, numLayers: 1 });
ctrl.onRequestSlotsAssigned([1]); // a new request in slot 1: its banks are cleared, no stale marker

// Target verify of request 1 at committed length 300: commits its previous verify (none), marks this one.
const slots = backend.uploadIndex(Int32Array.of(1));
const seqLens = backend.uploadIndex(Int32Array.of(300));
const offset = ctrl.prepareForward("target_verify", slots, seqLens); // O = N + 2 = 11: the verify's state offset
// ... the verify's compression (backend.onlinePrefill, trailing partial in row r + offset), then per c128 layer:
const kvScore = backend.uploadMatrix(new Float32Array(4 * KV_SCORE_COLS).fill(0.5), 4, KV_SCORE_COLS);
const ape = backend.uploadMatrix(new Float32Array(CHUNK_TOKENS * HEAD_DIM), CHUNK_TOKENS, HEAD_DIM);
ctrl.writePrefixStates(0, kvScore, ape, "target_verify"); // banks 1..4: the state after each draft token

// The sampler accepted 3 tokens (seqLens advanced on the device); the next forward with request 1 commits bank 3.
backend.writeIndex(seqLens, Int32Array.of(303));
ctrl.prepareForward("decode", slots, seqLens);
console.log(offset, backend.readIndex(ctrl.pendingSeqLens)[1]); // 11 -1 (the marker was consumed)

try {
  ctrl.prepareForward("target-verify" as never, slots, seqLens);
} catch (e) {
  // prints: INVALID_ARGUMENT mode target_verify
  if (OnlineMtpError.isInstance(e)) console.log(e.code, e.field, e.params.suggestion);
}

const report = runSimulation({ backend: new CpuBackend(), requests: 4, steps: 50, draftTokens: 4, seed: 1 });
console.log(report.lostCommits, report.violations); // 0 0
