/**
 * Every error code of dsv4-kv, in one table: the owning package, what the code means, and the fix a user can
 * apply. `docs/errors.md` is generated from this table (`UPDATE_ERRORS_DOC=1 pnpm --filter @dsv4-kv/errors test`) and a test fails
 * when the two drift. A package adds its codes to its own block; codes are never renamed once published.
 */
export interface ErrorCodeInfo {
  /** The package whose functions raise it ("*" when several do). */
  readonly owner: string;
  /** What the code means, in one sentence. */
  readonly summary: string;
  /** What to change. */
  readonly fix: string;
}

type Entries = Record<string, readonly [summary: string, fix: string]>;

function block<const T extends Entries>(owner: string, entries: T): { readonly [K in keyof T]: ErrorCodeInfo } {
  const out: Record<string, ErrorCodeInfo> = {};
  for (const [code, [summary, fix]] of Object.entries(entries)) out[code] = { owner, summary, fix };
  return out as { readonly [K in keyof T]: ErrorCodeInfo };
}

const shared = block("*", {
  INVALID_ARGUMENT: [
    "A value is outside the range, set or form its parameter accepts (the rule says which).",
    "Pass a value that satisfies the rule named in the message.",
  ],
  INVALID_TYPE: [
    "A value has the wrong type: a string where a number or boolean is expected, a non-array, etc.",
    'Pass the type the field documents; nothing is coerced ("false" is not false).',
  ],
  UNKNOWN_KEY: [
    "An object or a command line carries a key that the receiver does not know.",
    "Remove the key or correct its spelling (the message suggests the closest known key).",
  ],
  NOT_APPLICABLE: [
    "A key is known but does not apply to this kind of input (e.g. `path` on a decode case).",
    "Remove the key; the rule says which kinds accept it.",
  ],
  INVALID_RATIO: [
    "A compression ratio that the function does not serve.",
    "Use ratio 4 or 128 (the memory pool also knows 2 where the model has such layers).",
  ],
  INT32_OVERFLOW: [
    "A value or a derived index does not fit int32, which the kernels and SGLang narrow to.",
    "Keep lengths, pool indices and slots below 2^31.",
  ],
  BATCH_SIZE: [
    "A batch is empty or larger than the path serves.",
    "Pass between 1 and the stated maximum of requests.",
  ],
  INTERNAL: ["A failure inside dsv4-kv that no input should cause.", "Report it with the input that caused it."],
});

const planner = block("@dsv4-kv/planner", {
  INVALID_RING: [
    "A ring size that is not a whole number of chunks or does not divide the SWA page.",
    "Use a ring size that is a multiple of the ratio and divides swaPageSize (c4 16, c128 256 under MTP).",
  ],
  REQ_RING_NEEDS_C4: [
    "useReqRing was set for c128, which always addresses its request ring.",
    "Set useReqRing only with compressRatio 4.",
  ],
  NUM_Q_TOKENS: [
    "numQTokens is outside [sum of extendLens, 65535] (ragged ids are 16 bits).",
    "Pass numQTokens at least the sum of extendLens and at most 65535.",
  ],
  EXTEND_LEN: [
    "An extend length is negative, zero in a prefill, or longer than its sequence.",
    "Give every request 1 <= extendLen <= seqLen.",
  ],
  SEQ_LEN: [
    "A sequence length outside what the planner path accepts.",
    "Pass sequence lengths in the range the rule states.",
  ],
  EXTEND_SUM: [
    "The extend lengths do not add up to numQTokens (host path) or exceed it (device path).",
    "Make numQTokens the sum of extendLens, or larger on the device path under a CUDA graph.",
  ],
  INDEX_OUT_OF_RANGE: [
    "A pool index, token position or table entry points outside its table.",
    "Check reqPoolIndices, reqToToken and fullToState against their shapes.",
  ],
  RECORD_LAYOUT: [
    "Plan bytes whose length is not a whole number of records, or a big-endian host.",
    "Pass whole records (16 B compress/decode, 8 B write) on a little-endian host.",
  ],
  SIMULATION: [
    "A residency scenario that cannot be run as given.",
    "Correct the scenario parameter the message names.",
  ],
  INVALID_CASE: [
    "A plan case (the `dsv4-kv plan` input) that does not match the case format.",
    "See the plan case format in docs/reference/planner.md and the field the message names.",
  ],
});

const memoryPool = block("@dsv4-kv/memory-pool", {
  ONLINE_C128_MTP: [
    "Online c128 state with speculative decoding in a configuration its kernels do not serve.",
    "Follow the rule in the message (draft-token bound, or disable online c128).",
  ],
  ONLINE_RING: [
    "A ring size was asked for online c128, whose state is one row per request (ring 1).",
    "Do not pass a ring for online c128.",
  ],
  PAGE_SIZE: [
    "A KV page size that compressed attention cannot use.",
    "Use a page size that is a multiple of 128 (256 on CUDA).",
  ],
  SWA_PAGE_SIZE: [
    "An SWA page size that does not hold whole rings.",
    "Use an SWA page size that is a multiple of every ring size.",
  ],
  SWA_FLOOR: [
    "The SWA pool cannot hold one request's sliding window plus a page.",
    "Raise --swa-full-tokens-ratio or the KV budget.",
  ],
  NO_MEMORY: [
    "The budget left for KV is zero or negative.",
    "Raise --mem-fraction-static or the GPU memory, or lower the weights estimate.",
  ],
  NOT_ENOUGH_MEMORY: [
    "The KV budget does not hold one page of every pool.",
    "Raise --mem-fraction-static or the KV budget.",
  ],
  DRAFT_EXCEEDS_RING: [
    "More draft tokens per verify than a compress-state ring serves (its write pad).",
    "Lower --speculative-num-draft-tokens to the ring's write pad, or grow the ring.",
  ],
  HISPARSE_RATIO: [
    "A HiSparse host-to-device ratio outside what the pool accepts.",
    "Use the ratio range the rule states.",
  ],
  STATE_DTYPE: ["A compress-state dtype other than float32 or bfloat16.", "Use float32 or bfloat16."],
  KV_LAYOUT: ["A KV cache layout or dtype the pool does not model.", "Use one of the layouts the rule lists."],
  OUT_OF_RANGE: ["A slot, page or bank index outside its pool.", "Pass an index inside the pool's shape."],
  CAPACITY: ["Several capacity errors at once; `params.errors` holds each.", "Fix each error listed."],
});

const onlineMtp = block("@dsv4-kv/online-mtp-controller", {
  DRAFT_TOKENS: [
    "A draft-token count or accept length outside [1, draft tokens].",
    "Pass 1 <= accept <= draftTokens and draftTokens within the controller's banks.",
  ],
  BANK_STRIDE: [
    "A bank stride that does not separate the state banks of the requests.",
    "Use the bank stride memory-pool's bank math returns.",
  ],
  STATE_ROWS: [
    "A state buffer with the wrong number of rows for its banks and requests.",
    "Allocate (banks × stride) rows as memory-pool's bank math says.",
  ],
  REQ_INDEX: ["A request slot outside the controller's pool.", "Pass request slots in [0, numReqSlots)."],
  SHAPE: [
    "An array whose length does not match the batch or the row width.",
    "Pass arrays of the length the rule states.",
  ],
  DTYPE: [
    "A state dtype the backend does not serve, or a typed array of the wrong element type.",
    "Use fp32 or bf16 state; pass Int32Array indices and Float32Array matrices and rows.",
  ],
  DUPLICATE_REQ: ["The same request slot twice in one batch.", "List every request once per batch."],
  LIFECYCLE: [
    "A controller call out of order (e.g. commit without a verify).",
    "Follow the lifecycle in docs/reference/online-mtp.md.",
  ],
  BACKEND: [
    "The chosen backend cannot run the call.",
    "Use the CPU backend, or a GPU backend on a machine where kernels-cuda's probe is ok.",
  ],
});

const compress = block("@dsv4-kv/compress", {
  BAD_PLAN_ROW: [
    "A plan row the compress kernels refuse (bad seqLen or bufferLen, a state or input row outside the buffers).",
    "Pass the planner's final tables with the state pool and input rows they were planned for (field: the row).",
  ],
  PLAN_TABLE: [
    "A plan table that is not a Uint8Array of whole rows (16 B compress or decode, 8 B write), or of the wrong rows.",
    "Pass the planner's tables as they are (table.bytes), one decode row per batch row.",
  ],
  BUFFER_SHAPE: [
    "An input, ape or state array whose length does not match the geometry (rows × rowElems, window × headDim).",
    "Size the array as the rule states (rowElems = rowBlocks(ratio) × headDim: c4 4, c128 2 blocks).",
  ],
});

const kernelsCuda = block("@dsv4-kv/kernels-cuda", {
  GPU_UNAVAILABLE: [
    "The GPU path cannot be used: no addon, a CPU-only addon, no driver or device, or it was disabled.",
    "Follow the causes listed in the message; the CPU planner produces the same bytes.",
  ],
  NATIVE: [
    "The addon or the CUDA runtime reported a failure (allocation, launch, copy); params name the CUDA call and error.",
    "Read params.cudaName / cudaMessage: free device memory for an allocation failure, otherwise report it.",
  ],
  DEVICE_BUFFER: [
    "A DeviceBuffer that was freed, or that holds fewer bytes than the call needs.",
    "Pass a live buffer of at least the size the rule states (do not use a buffer after free()).",
  ],
  CONTEXT: [
    "A GPU context used after destroy(), or destroyed while asynchronous calls on it are in flight.",
    "Create a new context with createContext(), or await the pending calls before destroy().",
  ],
});

const serverConfig = block("@dsv4-kv/server-config", {
  UNSUPPORTED_ARGUMENT: [
    "A server argument value that DeepSeek-V4 on SGLang does not accept (algorithm, top-k, KV dtype, backend, GPU).",
    "Use the value the message names (the start-up rule id says which check it is).",
  ],
  SPECULATIVE_ARGUMENTS: [
    "Speculative-decoding arguments that do not fit together (steps, draft tokens, block size, candidates, maximum).",
    "Set the flags as the message says; docs/reference/startup-rules.md gives each rule.",
  ],
  IGNORED_ARGUMENT: [
    "An argument that has no effect in this configuration (a warning).",
    "Drop the argument, or set what it depends on.",
  ],
  CORRECTED_ARGUMENT: [
    "An argument that SGLang replaces at start-up with a derived value (a warning).",
    "Give the value SGLang derives, or change the arguments it is derived from.",
  ],
  EXPERIMENTAL: ["An experimental path is on (a warning).", "Validate correctness before serving with it."],
  NOT_MODELLED: [
    "A setting whose effect dsv4-kv does not model; sizing assumes the default (a warning).",
    "Treat the sizing as the default path's; drop the setting to match it.",
  ],
  CAPACITY_WARNING: [
    "The sizing fits but differs from what was asked (capped tokens, fewer requests, over-allocation).",
    "Read the warning; raise the budget or lower the request, or use --sizing exact.",
  ],
  RESIDENCY: [
    "The ring simulator finds committed compress-state positions overwritten before they are read (rule R1).",
    "Lower the draft tokens to the ring's write pad, as rule V-S8 says.",
  ],
  CONTEXT_LENGTH: [
    "A --context-length above the model's max_position_embeddings (rule V-C1).",
    "Set --context-length at most the model's positions, or drop it (the model's length is the default).",
  ],
  CONTEXT_EXCEEDS_POOL: [
    "The KV pool cannot hold one request of the context length, so longer prompts are refused at run time (a warning).",
    "Lower --context-length to the pool's tokens, or raise the KV budget (rules V-C2, V-C3 say which pool).",
  ],
  DP_ATTENTION_REQUESTS: [
    "Attention DP divides --max-running-requests so that a rank gets no request, or leaves slots unused (rule V-DP1).",
    "Set --max-running-requests to a multiple of --dp-size, at least --dp-size.",
  ],
  DEEPEP_DISPATCH: [
    "A decode step dispatches more tokens per rank than DeepEP's low-latency buffer holds (rule V-E1).",
    "Raise SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK, lower the running requests, or use --deepep-mode normal.",
  ],
  NO_DRAFT_WEIGHTS: [
    "The speculative algorithm needs draft weights (MTP layers, DSpark stages) the checkpoint does not have (V-S10).",
    "Use a checkpoint with those weights, pass --speculative-draft-model-path, or change the algorithm.",
  ],
  ONLINE_MTP_VERIFY_TOKENS: [
    "Experimental online c128 MTP configured for more than the 8 verify tokens its kernels serve (rule V-S11).",
    "Keep the draft tokens at most 8 (EAGLE steps at most 7), or turn online compress off.",
  ],
  UNKNOWN_MODEL: [
    "A model name that is no preset, Hugging Face id or known variant of one (the message suggests the closest).",
    "Use a preset name or id (DeepSeek-V4-Flash, -Flash-0731, -Pro), a checkpoint folder, or a config.json path.",
  ],
  UNSUPPORTED_MODEL: [
    "A checkpoint config.json dsv4-kv does not model (another architecture, DeepSeek-V4.1's ratios or KV sources).",
    "Use a DeepSeek-V4 checkpoint; the field named is the one of config.json that decided it.",
  ],
  TP_DIVISIBILITY: [
    "The parallel layout does not divide what SGLang splits over it (heads, o_groups, experts, MoE width; V-TP1-3).",
    "Use a --tp-size, --dp-size or --ep-size the message lists (DeepSeek-V4-Flash: attention TP 1, 2, 4 or 8).",
  ],
  SGLANG_LOG: [
    "A server log that is not a whole SGLang DeepSeek-V4 start-up log (empty, no DSV4 sizing line, a line cut off).",
    "Pass the start-up log of one server as SGLang wrote it, up to the KV pool lines; the message names the line.",
  ],
  VLLM_LOG: [
    "A file given as a vLLM start-up log that holds no vLLM DeepSeek-V4 start-up material (empty, binary, too large).",
    "Pass the start-up log of one vLLM server (its non-default args or launch command and its KV cache lines).",
  ],
});

const cli = block("@dsv4-kv/cli", {
  USAGE: [
    "A command line that cannot be run: unknown command or flag, missing or malformed value.",
    "See `dsv4-kv <command> --help`.",
  ],
  INPUT: [
    "Input the CLI could not read: not JSON, too deep, too large, a missing file, or not a regular file (a device, FIFO, socket, directory or link loop).",
    "Pass a regular file in the format the command's help describes, or `-` to read standard input.",
  ],
  WORK_LIMIT: [
    "A run whose estimated state space, time or memory, known before it starts, is beyond the bound it allows.",
    "Raise the flag the message names (--max-states, --time-limit, --max-memory-gib) or give a smaller run.",
  ],
  DUPLICATE_KEY: [
    "An input gives one setting twice: a JSON key twice in one object, or a --config flag in two spellings.",
    "Keep one of the two (the message names both, with where they are); nothing is taken silently.",
  ],
});

/** The table. Keys are the codes. */
export const ERROR_CODES = {
  ...shared,
  ...planner,
  ...memoryPool,
  ...onlineMtp,
  ...compress,
  ...kernelsCuda,
  ...serverConfig,
  ...cli,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === "string" && Object.hasOwn(ERROR_CODES, code);
}
