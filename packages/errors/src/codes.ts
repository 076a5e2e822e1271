/**
 * Every error code of dsv4-kv, in one table: the owning package, what the code means, and the fix a user can
 * apply. `docs/errors.md` is generated from this table (`pnpm --filter @dsv4-kv/errors gen:docs`) and a test fails
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

const shared = {
  INVALID_ARGUMENT: {
    owner: "*",
    summary: "A value is outside the range, set or form its parameter accepts (the rule says which).",
    fix: "Pass a value that satisfies the rule named in the message.",
  },
  INVALID_TYPE: {
    owner: "*",
    summary: "A value has the wrong type: a string where a number or boolean is expected, a non-array, etc.",
    fix: 'Pass the type the field documents; nothing is coerced ("false" is not false).',
  },
  UNKNOWN_KEY: {
    owner: "*",
    summary: "An object or a command line carries a key that the receiver does not know.",
    fix: "Remove the key or correct its spelling (the message suggests the closest known key).",
  },
  NOT_APPLICABLE: {
    owner: "*",
    summary: "A key is known but does not apply to this kind of input (e.g. `path` on a decode case).",
    fix: "Remove the key; the rule says which kinds accept it.",
  },
  INVALID_RATIO: {
    owner: "*",
    summary: "A compression ratio that the function does not serve.",
    fix: "Use ratio 4 or 128 (the memory pool also knows 2 where the model has such layers).",
  },
  INT32_OVERFLOW: {
    owner: "*",
    summary: "A value or a derived index does not fit int32, which the kernels and SGLang narrow to.",
    fix: "Keep lengths, pool indices and slots below 2^31.",
  },
  BATCH_SIZE: {
    owner: "*",
    summary: "A batch is empty or larger than the path serves.",
    fix: "Pass between 1 and the stated maximum of requests.",
  },
  INTERNAL: {
    owner: "*",
    summary: "A failure inside dsv4-kv that no input should cause.",
    fix: "Report it with the input that caused it.",
  },
} as const satisfies Record<string, ErrorCodeInfo>;

const planner = {
  INVALID_RING: {
    owner: "@dsv4-kv/planner",
    summary: "A ring size that is not a whole number of chunks or does not divide the SWA page.",
    fix: "Use a ring size that is a multiple of the ratio and divides swaPageSize (c4 16, c128 256 under MTP).",
  },
  REQ_RING_NEEDS_C4: {
    owner: "@dsv4-kv/planner",
    summary: "useReqRing was set for c128, which always addresses its request ring.",
    fix: "Set useReqRing only with compressRatio 4.",
  },
  NUM_Q_TOKENS: {
    owner: "@dsv4-kv/planner",
    summary: "numQTokens is outside [sum of extendLens, 65535] (ragged ids are 16 bits).",
    fix: "Pass numQTokens at least the sum of extendLens and at most 65535.",
  },
  EXTEND_LEN: {
    owner: "@dsv4-kv/planner",
    summary: "An extend length is negative, zero in a prefill, or longer than its sequence.",
    fix: "Give every request 1 <= extendLen <= seqLen.",
  },
  SEQ_LEN: {
    owner: "@dsv4-kv/planner",
    summary: "A sequence length outside what the planner path accepts.",
    fix: "Pass sequence lengths in the range the rule states.",
  },
  EXTEND_SUM: {
    owner: "@dsv4-kv/planner",
    summary: "The extend lengths do not add up to numQTokens (host path) or exceed it (device path).",
    fix: "Make numQTokens the sum of extendLens, or larger on the device path under a CUDA graph.",
  },
  INDEX_OUT_OF_RANGE: {
    owner: "@dsv4-kv/planner",
    summary: "A pool index, token position or table entry points outside its table.",
    fix: "Check reqPoolIndices, reqToToken and fullToState against their shapes.",
  },
  RECORD_LAYOUT: {
    owner: "@dsv4-kv/planner",
    summary: "Plan bytes whose length is not a whole number of records, or a big-endian host.",
    fix: "Pass whole records (16 B compress/decode, 8 B write) on a little-endian host.",
  },
  SIMULATION: {
    owner: "@dsv4-kv/planner",
    summary: "A residency scenario that cannot be run as given.",
    fix: "Correct the scenario parameter the message names.",
  },
  INVALID_CASE: {
    owner: "@dsv4-kv/planner",
    summary: "A plan case (the `dsv4-kv plan` input) that does not match the case format.",
    fix: "See the plan case format in docs/reference/planner.md and the field the message names.",
  },
} as const satisfies Record<string, ErrorCodeInfo>;

const memoryPool = {
  ONLINE_C128_MTP: {
    owner: "@dsv4-kv/memory-pool",
    summary: "Online c128 state with speculative decoding in a configuration its kernels do not serve.",
    fix: "Follow the rule in the message (draft-token bound, or disable online c128).",
  },
  ONLINE_RING: {
    owner: "@dsv4-kv/memory-pool",
    summary: "A ring size was asked for online c128, whose state is one row per request (ring 1).",
    fix: "Do not pass a ring for online c128.",
  },
  PAGE_SIZE: {
    owner: "@dsv4-kv/memory-pool",
    summary: "A KV page size that compressed attention cannot use.",
    fix: "Use a page size that is a multiple of 128 (256 on CUDA).",
  },
  SWA_PAGE_SIZE: {
    owner: "@dsv4-kv/memory-pool",
    summary: "An SWA page size that does not hold whole rings.",
    fix: "Use an SWA page size that is a multiple of every ring size.",
  },
  SWA_FLOOR: {
    owner: "@dsv4-kv/memory-pool",
    summary: "The SWA pool cannot hold one request's sliding window plus a page.",
    fix: "Raise --swa-full-tokens-ratio or the KV budget.",
  },
  NO_MEMORY: {
    owner: "@dsv4-kv/memory-pool",
    summary: "The budget left for KV is zero or negative.",
    fix: "Raise --mem-fraction-static or the GPU memory, or lower the weights estimate.",
  },
  NOT_ENOUGH_MEMORY: {
    owner: "@dsv4-kv/memory-pool",
    summary: "The KV budget does not hold one page of every pool.",
    fix: "Raise --mem-fraction-static or the KV budget.",
  },
  DRAFT_EXCEEDS_RING: {
    owner: "@dsv4-kv/memory-pool",
    summary: "More draft tokens per verify than a compress-state ring serves (its write pad).",
    fix: "Lower --speculative-num-draft-tokens to the ring's write pad, or grow the ring.",
  },
  HISPARSE_RATIO: {
    owner: "@dsv4-kv/memory-pool",
    summary: "A HiSparse host-to-device ratio outside what the pool accepts.",
    fix: "Use the ratio range the rule states.",
  },
  STATE_DTYPE: {
    owner: "@dsv4-kv/memory-pool",
    summary: "A compress-state dtype other than float32 or bfloat16.",
    fix: "Use float32 or bfloat16.",
  },
  KV_LAYOUT: {
    owner: "@dsv4-kv/memory-pool",
    summary: "A KV cache layout or dtype the pool does not model.",
    fix: "Use one of the layouts the rule lists.",
  },
  OUT_OF_RANGE: {
    owner: "@dsv4-kv/memory-pool",
    summary: "A slot, page or bank index outside its pool.",
    fix: "Pass an index inside the pool's shape.",
  },
  CAPACITY: {
    owner: "@dsv4-kv/memory-pool",
    summary: "Several capacity errors at once; `params.errors` holds each.",
    fix: "Fix each error listed.",
  },
} as const satisfies Record<string, ErrorCodeInfo>;

const onlineMtp = {
  DRAFT_TOKENS: {
    owner: "@dsv4-kv/online-mtp-controller",
    summary: "A draft-token count or accept length outside [1, draft tokens].",
    fix: "Pass 1 <= accept <= draftTokens and draftTokens within the controller's banks.",
  },
  BANK_STRIDE: {
    owner: "@dsv4-kv/online-mtp-controller",
    summary: "A bank stride that does not separate the state banks of the requests.",
    fix: "Use the bank stride memory-pool's bank math returns.",
  },
  STATE_ROWS: {
    owner: "@dsv4-kv/online-mtp-controller",
    summary: "A state buffer with the wrong number of rows for its banks and requests.",
    fix: "Allocate (banks × stride) rows as memory-pool's bank math says.",
  },
  REQ_INDEX: {
    owner: "@dsv4-kv/online-mtp-controller",
    summary: "A request slot outside the controller's pool.",
    fix: "Pass request slots in [0, numReqSlots).",
  },
  SHAPE: {
    owner: "@dsv4-kv/online-mtp-controller",
    summary: "An array whose length does not match the batch or the row width.",
    fix: "Pass arrays of the length the rule states.",
  },
  DTYPE: {
    owner: "@dsv4-kv/online-mtp-controller",
    summary: "A state dtype the backend does not serve.",
    fix: "Use float32 or bfloat16.",
  },
  DUPLICATE_REQ: {
    owner: "@dsv4-kv/online-mtp-controller",
    summary: "The same request slot twice in one batch.",
    fix: "List every request once per batch.",
  },
  LIFECYCLE: {
    owner: "@dsv4-kv/online-mtp-controller",
    summary: "A controller call out of order (e.g. commit without a verify).",
    fix: "Follow the lifecycle in docs/reference/online-mtp.md.",
  },
  BACKEND: {
    owner: "@dsv4-kv/online-mtp-controller",
    summary: "The chosen backend cannot run the call.",
    fix: "Use the CPU backend, or a GPU backend on a machine where kernels-cuda's probe is ok.",
  },
} as const satisfies Record<string, ErrorCodeInfo>;

const kernelsCuda = {
  GPU_UNAVAILABLE: {
    owner: "@dsv4-kv/kernels-cuda",
    summary: "The GPU path cannot be used: no addon, a CPU-only addon, no driver or device, or it was disabled.",
    fix: "Follow the causes listed in the message; the CPU planner produces the same bytes.",
  },
  NATIVE: {
    owner: "@dsv4-kv/kernels-cuda",
    summary: "The addon or the CUDA runtime reported a failure (allocation, launch, copy).",
    fix: "Read the CUDA error in the message; free device memory or report it.",
  },
} as const satisfies Record<string, ErrorCodeInfo>;

const cli = {
  USAGE: {
    owner: "@dsv4-kv/cli",
    summary: "A command line that cannot be run: unknown command or flag, missing or malformed value.",
    fix: "See `dsv4-kv <command> --help`.",
  },
  INPUT: {
    owner: "@dsv4-kv/cli",
    summary: "Input the CLI could not read: not JSON, too deep, too large, or a missing file.",
    fix: "Pass the input format the command's help describes.",
  },
} as const satisfies Record<string, ErrorCodeInfo>;

/** The table. Keys are the codes. */
export const ERROR_CODES = { ...shared, ...planner, ...memoryPool, ...onlineMtp, ...kernelsCuda, ...cli } as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === "string" && Object.hasOwn(ERROR_CODES, code);
}
