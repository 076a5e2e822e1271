/**
 * The native addon's exports as TypeScript sees them: one interface per native entry point, read off the C++
 * registration code (native/addon.cpp `Init`, native/common.cpp `Context` / `DeviceBuffer`, native/planner/binding.cpp
 * `RegisterPlanner`, native/online_mtp/binding.cpp `RegisterOnlineMtp`). Every parameter object lists exactly the
 * keys its binding reads, through one key table per call (planner/binding.cpp `kPrefillKeys`, `kDecodeKeys`,
 * `kBenchKeys`; online_mtp/binding.cpp an integer and a buffer table per call, e.g. `kWritePrefixKeys` +
 * `kWritePrefixBuffers`), which refuses any other key (UNKNOWN_KEY), and test/binding-keys.test.ts holds those tables
 * and the interfaces below to the same keys. The native side re-checks every value (it refuses a boolean where it reads
 * a 0/1 integer); the types here say what the TS callers pass. native.ts casts the loaded module to `NativeAddon` once.
 */

/** What the addon copies from or into: a TypedArray, DataView or ArrayBuffer (common.cpp `HostViewOf`). */
export type HostView = ArrayBufferView | ArrayBuffer;

/** A 0/1 flag the bindings read as an integer. */
export type Flag = 0 | 1;

// ---------------------------------------------------------------------------------------------------------------
// addon.cpp

/** `probe()`: never throws for a missing driver or device. */
export interface AddonProbeResult {
  /** The loaded addon was compiled with nvcc (false also when no addon could be loaded). */
  compiledWithCuda: boolean;
  /** CUDA devices visible to the runtime (0 when unknown). */
  deviceCount: number;
  /** Device 0, when one is visible. */
  device?: { name: string; sm: number; memoryBytes: number; multiProcessorCount: number };
  /** The GPU path is usable. */
  ok: boolean;
  /** Why the GPU path is unavailable ("" when ok). */
  reason: string;
  /** CUDA runtime the addon was built with (e.g. 13000), when built with CUDA. */
  runtimeVersion?: number;
  /** CUDA driver version (e.g. 13000), 0 when no driver. */
  driverVersion?: number;
}

// ---------------------------------------------------------------------------------------------------------------
// common.cpp: the classes

/** A device + stream (`new Context(device = 0)`). Plans on one context are serialised on its stream. */
export interface GpuContext {
  readonly device: number;
  synchronize(): void;
  /** Refused while an asynchronous plan call is in flight on the context. */
  destroy(): void;
}

/** Device memory (`new DeviceBuffer(byteLength, ctx?)`); copies and fill are synchronous and quiesce the device. */
export interface DeviceBuffer {
  readonly byteLength: number;
  /** Freed with `free()` (a zero-length buffer never reads as freed). */
  readonly freed: boolean;
  upload(view: HostView, byteOffset?: number): DeviceBuffer;
  download<T extends HostView>(view: T, byteOffset?: number): T;
  /** Sets every byte to `byte`, an integer in [0, 255] (0 when undefined); other values are refused, not wrapped. */
  fill(byte: number): DeviceBuffer;
  free(): void;
}

export interface AddonContextClass {
  new (device?: number): GpuContext;
}

export interface AddonDeviceBufferClass {
  new (byteLength: number, ctx?: GpuContext): DeviceBuffer;
}

// ---------------------------------------------------------------------------------------------------------------
// planner/binding.cpp

/** The slot-mapping keys every plan configuration carries (`ParseSlot`). */
export interface PlanSlotConfig {
  /** Compress ratio: 4 or 128. */
  cr: number;
  /** Ring size (slots per request ring). */
  ring: number;
  /** SWA page size. */
  sps: number;
  reqStyle: Flag;
  legacy: Flag;
  /** Row length of the req_to_token table. */
  r2tStride: number;
  r2tRows: number;
  /** Entries of the full_to_state table (0: none). */
  f2sLen: number;
}

/** `planPrefill*` configuration (`ParsePrefill`). */
export interface PrefillPlanConfig extends PlanSlotConfig {
  batch: number;
  numQ: number;
  pad: number;
  tail: Flag;
  hostRules: Flag;
  /** Device calls only: seqLens / extendLens are int64 (default 0). */
  lens64?: Flag;
}

/** `planDecode*` configuration (`ParseDecode`). */
export interface DecodePlanConfig extends PlanSlotConfig {
  batch: number;
  /** Device calls only: seqLens are int64 (default 0). */
  lens64?: Flag;
}

/** Host inputs of `planDecode` / `planDecodeAsync` (`Stage`): every array is exactly the size the config implies. */
export interface DecodePlanInputs {
  seqLens: Int32Array;
  rids?: BigInt64Array;
  /** r2tRows * r2tStride entries. */
  r2t?: Int32Array;
  /** f2sLen entries. */
  f2s?: Int32Array;
}

/** Host inputs of `planPrefill` / `planPrefillAsync`. */
export interface PrefillPlanInputs extends DecodePlanInputs {
  extendLens: Int32Array;
}

/** Device inputs and outputs of `planDecodeDevice` (`PlanDevice`); absent optional tables mean identity maps. */
export interface DecodePlanDeviceBuffers {
  seqLens: DeviceBuffer;
  rids?: DeviceBuffer | undefined;
  r2t?: DeviceBuffer | undefined;
  f2s?: DeviceBuffer | undefined;
  /** batch * 16 bytes. */
  planD: DeviceBuffer;
  /** planStatusBytes. */
  status: DeviceBuffer;
}

/** Device inputs and outputs of `planPrefillDevice`. */
export interface PrefillPlanDeviceBuffers extends Omit<DecodePlanDeviceBuffers, "planD"> {
  extendLens: DeviceBuffer;
  /** numQ * 16 bytes. */
  planC: DeviceBuffer;
  /** numQ * 8 bytes. */
  planW: DeviceBuffer;
}

/** `bench`'s timing options. */
export interface PlanBenchOptions {
  warmup: number;
  reps: number;
  /** Launches per CUDA graph. */
  calls: number;
}

/** `bench`'s result: microseconds per call, eager back-to-back and CUDA-graph replay. */
export interface PlanBenchResult {
  eagerUs: number;
  graphUs: number;
}

/** The planner entry points (see the top of native/planner/binding.cpp). */
export interface AddonPlanner {
  /** Fills `out` (exactly numQ * 24 + planStatusBytes bytes): CompressPlan rows, WritePlan rows, status records. */
  planPrefill(ctx: GpuContext, cfg: PrefillPlanConfig, inputs: PrefillPlanInputs, out: Uint8Array): void;
  planPrefillAsync(ctx: GpuContext, cfg: PrefillPlanConfig, inputs: PrefillPlanInputs, out: Uint8Array): Promise<void>;
  /** Enqueues on ctx's stream without a sync; errors land in `bufs.status`. */
  planPrefillDevice(ctx: GpuContext, cfg: PrefillPlanConfig, bufs: PrefillPlanDeviceBuffers): void;
  /** Fills `out` (exactly batch * 16 + planStatusBytes bytes): DecodePlan rows, status records. */
  planDecode(ctx: GpuContext, cfg: DecodePlanConfig, inputs: DecodePlanInputs, out: Uint8Array): void;
  planDecodeAsync(ctx: GpuContext, cfg: DecodePlanConfig, inputs: DecodePlanInputs, out: Uint8Array): Promise<void>;
  planDecodeDevice(ctx: GpuContext, cfg: DecodePlanConfig, bufs: DecodePlanDeviceBuffers): void;
  bench(
    ctx: GpuContext,
    kind: "prefill",
    cfg: PrefillPlanConfig,
    inputs: PrefillPlanInputs,
    opts: PlanBenchOptions,
  ): PlanBenchResult;
  bench(
    ctx: GpuContext,
    kind: "decode",
    cfg: DecodePlanConfig,
    inputs: DecodePlanInputs,
    opts: PlanBenchOptions,
  ): PlanBenchResult;
  /** The empty kernel: `cfg` and `inputs` are not read. */
  bench(ctx: GpuContext, kind: "empty", cfg: object, inputs: object, opts: PlanBenchOptions): PlanBenchResult;
  /** Most requests one prefill plan serves. */
  readonly maxGpuBatch: number;
  /** Bytes of the status region (256 records). */
  readonly planStatusBytes: number;
}

// ---------------------------------------------------------------------------------------------------------------
// online_mtp/binding.cpp

/** State element type: 0 fp32, 1 bf16. */
export type StateType = 0 | 1;

/** `writePrefix` (`ParseWritePrefix`). */
export interface WritePrefixArgs {
  kvScore: DeviceBuffer;
  seqLens: DeviceBuffer;
  reqPoolIndices: DeviceBuffer;
  ape: DeviceBuffer;
  state: DeviceBuffer;
  batch: number;
  numVerify: number;
  bankStrideRows: number;
  numReqSlots: number;
  stateType: StateType;
  /** WRITE_PREFIX_VARIANT (`./internal`); only `scalar` (the default) without DSV4KV_BENCH_VARIANTS. */
  variant?: number;
  /** Blocks per request: 0 (auto), 1, 2, 4, 8 or 16. */
  split?: number;
  /** int32[4] error word. */
  err?: DeviceBuffer | null;
}

/** `markPending` (`ParseMark`). */
export interface MarkPendingArgs {
  seqLens: DeviceBuffer;
  reqPoolIndices: DeviceBuffer;
  pendingSeqLens: DeviceBuffer;
  pendingWidths: DeviceBuffer;
  batch: number;
  numVerify: number;
  numReqSlots: number;
  clearAll: Flag;
}

/** `commitPending` (`ParseCommit`). */
export interface CommitPendingArgs {
  curSeqLens: DeviceBuffer;
  reqPoolIndices: DeviceBuffer;
  pendingSeqLens: DeviceBuffer;
  pendingWidths: DeviceBuffer;
  state: DeviceBuffer;
  batch: number;
  maxDraftTokens: number;
  clampWidth: number;
  bankStrideRows: number;
  numReqSlots: number;
  consume: Flag;
  /** Fused re-mark: the new pending lengths (null: no mark). */
  markSeqLens?: DeviceBuffer | null;
  /** Checked whenever given; required (and at most maxDraftTokens) with `markSeqLens`. */
  markWidth?: number;
  stateType: StateType;
  /** COMMIT_VARIANT (`./internal`); default and, without DSV4KV_BENCH_VARIANTS, only `regs`. */
  variant?: number;
  err?: DeviceBuffer | null;
}

/** `resetSlots` (`ParseReset`): the pending markers are both given or both left out. */
export interface ResetSlotsArgs {
  state: DeviceBuffer;
  slots: DeviceBuffer;
  pendingSeqLens?: DeviceBuffer | null;
  pendingWidths?: DeviceBuffer | null;
  count: number;
  bankStrideRows: number;
  maxDraftTokens: number;
  numReqSlots: number;
  stateType: StateType;
  err?: DeviceBuffer | null;
}

/** `decode` (`ParseDecode`). */
export interface OnlineDecodeArgs {
  state: DeviceBuffer;
  kvScore: DeviceBuffer;
  ape: DeviceBuffer;
  seqLens: DeviceBuffer;
  reqPoolIndices: DeviceBuffer;
  out: DeviceBuffer;
  batch: number;
  slotOffsetRows: number;
  numReqSlots: number;
  stateType: StateType;
  /** WRITE_PREFIX_VARIANT legacy (default; the only one without DSV4KV_BENCH_VARIANTS), vec or scalar. */
  variant?: number;
  split?: number;
  err?: DeviceBuffer | null;
}

/** `prefill` (`ParsePrefill`): the error word is required (segment rows are checked on the device). */
export interface OnlinePrefillArgs {
  state: DeviceBuffer;
  kvScore: DeviceBuffer;
  ape: DeviceBuffer;
  /** numSegments rows of 5 int32: [seqLen, lastRow, len, loadRow, storeRow]. */
  segments: DeviceBuffer;
  out: DeviceBuffer;
  err: DeviceBuffer;
  numSegments: number;
  stateType: StateType;
}

export interface OnlineMtpBenchArgs {
  op: "writePrefix" | "mark" | "markUpstream" | "commit" | "commitMark" | "decode" | "empty" | "copy" | "copyKernel";
  batch: number;
  numVerify: number;
  stateType: StateType;
  /** 1: time a CUDA graph of `iters` calls replayed; 0: `iters` eager launches back to back. */
  graph: Flag;
  /** Buffer sets cycled through call by call (1: the same buffers every call, L2-resident). */
  rotate: number;
  iters: number;
  reps: number;
  /** Bytes per call of the `copy` (cudaMemcpyAsync) and `copyKernel` (float4 copy kernel) ops. */
  copyBytes?: number;
  /** Kernel variant (WRITE_PREFIX_VARIANT for writePrefix / decode, COMMIT_VARIANT for commit ops); default per op. */
  variant?: number;
  /** Blocks per request (not `legacy`): 1, 2, 4, 8, 16, or 0 / absent = the op's default (docs/decisions.md D23). */
  split?: number;
}

export interface OnlineMtpBenchResult {
  /** Median over `reps` of (elapsed / iters), microseconds per call. */
  usPerCall: number;
  minUs: number;
  maxUs: number;
  /** The variant and split that ran (-1: the op's default variant). */
  variant: number;
  split: number;
}

/** The raw online-MTP bindings (`exports.onlineMtp`); launches are enqueued on ctx's stream without a sync. */
export interface OnlineMtpNative {
  writePrefix(ctx: GpuContext, args: WritePrefixArgs): void;
  markPending(ctx: GpuContext, args: MarkPendingArgs): void;
  commitPending(ctx: GpuContext, args: CommitPendingArgs): void;
  resetSlots(ctx: GpuContext, args: ResetSlotsArgs): void;
  decode(ctx: GpuContext, args: OnlineDecodeArgs): void;
  prefill(ctx: GpuContext, args: OnlinePrefillArgs): void;
  bench(ctx: GpuContext, args: OnlineMtpBenchArgs): OnlineMtpBenchResult;
  /** Host → device copy ordered on ctx's stream (after the work queued before it); the view may be reused at once. */
  copyToDevice(ctx: GpuContext, buf: DeviceBuffer, view: HostView, byteOffset?: number): void;
  /** Device → host copy ordered on ctx's stream; returns once the bytes are in `view`. */
  copyToHost<V extends HostView>(ctx: GpuContext, buf: DeviceBuffer, view: V, byteOffset?: number): V;
  /** Sets every byte of `buf` to `byte` (an integer in [0, 255]), ordered on ctx's stream. */
  fill(ctx: GpuContext, buf: DeviceBuffer, byte: number): DeviceBuffer;
  /** Channels per head (512). */
  readonly headDim: number;
  /** Most verify tokens per request (8). */
  readonly maxVerifyTokens: number;
  /** Whether the benchmark-only kernel shapes are built in (CMake option DSV4KV_BENCH_VARIANTS). */
  readonly benchVariants: boolean;
}

// ---------------------------------------------------------------------------------------------------------------
// The whole module

/** The loaded addon (CUDA and CPU-only builds export the same names; CUDA-only calls throw GPU_UNAVAILABLE). */
export interface NativeAddon extends AddonPlanner {
  probe(): AddonProbeResult;
  readonly compiledWithCuda: boolean;
  readonly Context: AddonContextClass;
  readonly DeviceBuffer: AddonDeviceBufferClass;
  readonly onlineMtp: OnlineMtpNative;
}
