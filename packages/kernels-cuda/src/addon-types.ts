/**
 * The native addon's exports as TypeScript sees them: one interface per native entry point, read off the C++
 * registration code (native/addon.cpp `Init`, native/common.cpp `Context` / `DeviceBuffer`, native/planner/binding.cpp
 * `RegisterPlanner`, native/online_mtp/binding.cpp `RegisterOnlineMtp`, native/compress/binding.cpp
 * `RegisterCompress`; the bench build's native/bench/bench.h `RegisterBench`). Every parameter object lists exactly the
 * keys its binding reads, through one key table per call (planner/binding.cpp `kPrefillKeys`, `kDecodeKeys`;
 * online_mtp/binding.cpp and compress/binding.cpp an integer and a buffer table per call, e.g. `kWritePrefixKeys` +
 * `kWritePrefixBuffers`; the bench entries' `kBenchKeys` in native/bench/), which refuses any other key (UNKNOWN_KEY),
 * and test/binding-keys.test.ts holds those tables and the interfaces below to the same keys. The native side
 * re-checks every value (it refuses a boolean where it reads a 0/1 integer); the types here say what the TS callers
 * pass. native.ts casts the loaded module to `NativeAddon` once; bench-addon.ts casts the bench build to `BenchAddon`.
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
  /** Most requests one prefill plan serves. */
  readonly maxGpuBatch: number;
  /** Bytes of the status region (256 records). */
  readonly planStatusBytes: number;
}

/** The planner's `bench` (bench build only: native/bench/planner_bench.cpp). */
export interface AddonPlannerBench {
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
  /** WRITE_PREFIX_VARIANT scalar (default; the only one without DSV4KV_BENCH_VARIANTS), legacy or vec. */
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
  op:
    | "writePrefix"
    | "mark"
    | "markUpstream"
    | "commit"
    | "commitMark"
    | "decode"
    | "prefill"
    | "empty"
    | "copy"
    | "copyKernel";
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
  /**
   * op `prefill` only (required there): `verify` = `batch` requests of `numVerify` tokens, pre-verify lengths
   * 1024 + [0, 1, 2, 63, 120, 126, 127][b % 7], trailing parts into bank 1, table padded to batch·numVerify rows;
   * `chunk` = one request's `chunkTokens` tokens after `chunkPrefix` (native/online_mtp/binding.cpp
   * PrefillCaseSegments).
   */
  prefillCase?: "verify" | "chunk";
  /** `prefillCase: "chunk"` only (required there): tokens of the chunk, 1 to 262,144. */
  chunkTokens?: number;
  /** `prefillCase: "chunk"` only: committed tokens before the chunk (default 0). */
  chunkPrefix?: number;
}

export interface OnlineMtpBenchResult {
  /** Median over `reps` of (elapsed / iters), microseconds per call. */
  usPerCall: number;
  minUs: number;
  maxUs: number;
  /** The variant and split that ran (-1: the op's default variant). */
  variant: number;
  split: number;
  /** op `prefill`: bytes one call moves (input rows, stored partials read, entries or rows written, records, ape rows). */
  bytes?: number;
  /** op `prefill`: rows of the segment table (padding included). */
  numSegments?: number;
}

/** The raw online-MTP bindings (`exports.onlineMtp`); launches are enqueued on ctx's stream without a sync. */
export interface OnlineMtpNative {
  writePrefix(ctx: GpuContext, args: WritePrefixArgs): void;
  markPending(ctx: GpuContext, args: MarkPendingArgs): void;
  commitPending(ctx: GpuContext, args: CommitPendingArgs): void;
  resetSlots(ctx: GpuContext, args: ResetSlotsArgs): void;
  decode(ctx: GpuContext, args: OnlineDecodeArgs): void;
  prefill(ctx: GpuContext, args: OnlinePrefillArgs): void;
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
}

/** `onlineMtp.bench` and `onlineMtp.benchVariants` (bench build only: native/bench/online_mtp_bench.cpp). */
export interface OnlineMtpBenchNative {
  bench(ctx: GpuContext, args: OnlineMtpBenchArgs): OnlineMtpBenchResult;
  /** Whether the benchmark-only kernel shapes are built in (CMake option DSV4KV_BENCH_VARIANTS). */
  readonly benchVariants: boolean;
}

// ---------------------------------------------------------------------------------------------------------------
// compress/binding.cpp

/**
 * `compress.prefill` (`ParsePrefill`): compress every CompressPlan row (reading the pre-batch ring), then write every
 * WritePlan row. A state / input row holds `(cr === 4 ? 4 : 2) * headDim` floats; bad plan rows are skipped and
 * recorded in `err` (int32[4] = [code, row, value, kernel]: COMPRESS_ERR, COMPRESS_KERNEL).
 */
export interface CompressPrefillArgs {
  /** stateRows rows of fp32 (stateType 0) or bf16 (1). */
  state: DeviceBuffer;
  /** Ragged input rows, fp32. */
  input: DeviceBuffer;
  /** `[window, headDim]` fp32 (window 8 for c4, 128 for c128). */
  ape: DeviceBuffer;
  /** numPlanC CompressPlan rows (16 bytes each). */
  planC: DeviceBuffer;
  /** numPlanW WritePlan rows (8 bytes each). */
  planW: DeviceBuffer;
  /** numPlanC rows of headDim fp32; rows of padding and of bad plan rows are left untouched. */
  out: DeviceBuffer;
  /** int32[4] error word. */
  err: DeviceBuffer;
  stateRows: number;
  inputRows: number;
  numPlanC: number;
  numPlanW: number;
  cr: 4 | 128;
  headDim: 128 | 512;
  stateType: StateType;
}

/** `compress.decode` (`ParseDecode`): write each row's token, then compress the rows whose seqLen % cr is 0. */
export interface CompressDecodeArgs {
  state: DeviceBuffer;
  /** Row b is batch row b's new token (inputRows >= batch). */
  input: DeviceBuffer;
  ape: DeviceBuffer;
  /** batch DecodePlan rows (16 bytes each); seqLen 0xFFFFFFFF marks a padding row. */
  planD: DeviceBuffer;
  /** batch rows of headDim fp32, written only for the rows that compress. */
  out: DeviceBuffer;
  err: DeviceBuffer;
  stateRows: number;
  inputRows: number;
  batch: number;
  cr: 4 | 128;
  headDim: 128 | 512;
  stateType: StateType;
}

/** `compress.bench`'s own keys (`kBenchKeys`, `kBenchStringKeys`), beside its op's args. */
export interface CompressBenchOptions {
  op: "prefill" | "decode";
  /** 1: time a CUDA graph of `iters` calls replayed; 0: `iters` eager launches back to back. */
  graph: Flag;
  iters: number;
  reps: number;
  /** Buffer sets (state, input, out) cycled call by call; 1: the given buffers every call (L2-resident). */
  rotate: number;
}

/** `compress.bench`: the args of one prefill or decode call, timed. */
export type CompressBenchArgs =
  | (CompressPrefillArgs & CompressBenchOptions & { op: "prefill" })
  | (CompressDecodeArgs & CompressBenchOptions & { op: "decode" });

export interface CompressBenchResult {
  /** Median over `reps` of (elapsed / iters), microseconds per call. */
  usPerCall: number;
  minUs: number;
  maxUs: number;
}

/** The raw ring compress bindings (`exports.compress`); launches are enqueued on ctx's stream without a sync. */
export interface CompressNative {
  prefill(ctx: GpuContext, args: CompressPrefillArgs): void;
  decode(ctx: GpuContext, args: CompressDecodeArgs): void;
  /** The head dimensions the kernels take: [128, 512]. */
  readonly headDims: readonly number[];
}

/** `compress.bench` (bench build only: native/bench/compress_bench.cpp). */
export interface CompressBenchNative {
  bench(ctx: GpuContext, args: CompressBenchArgs): CompressBenchResult;
}

// ---------------------------------------------------------------------------------------------------------------
// The whole module

/**
 * The released addon: kernels only (CUDA and CPU-only builds export the same names; CUDA-only calls throw
 * GPU_UNAVAILABLE). No benchmark entry: those are in the bench build's addon (`BenchAddon`).
 */
export interface NativeAddon extends AddonPlanner {
  probe(): AddonProbeResult;
  readonly compiledWithCuda: boolean;
  readonly Context: AddonContextClass;
  readonly DeviceBuffer: AddonDeviceBufferClass;
  readonly onlineMtp: OnlineMtpNative;
  readonly compress: CompressNative;
}

/**
 * The bench build's addon (CMake option DSV4KV_BENCH, `pnpm --filter @dsv4-kv/kernels-cuda build:native:bench`):
 * the released addon's kernels plus the benchmark entries. Only src/bench-addon.ts loads it.
 */
export interface BenchAddon extends NativeAddon, AddonPlannerBench {
  readonly onlineMtp: OnlineMtpNative & OnlineMtpBenchNative;
  readonly compress: CompressNative & CompressBenchNative;
}
