/**
 * The DeepSeek-V4.1 part of `dsv4-kv check --json` (strict zod): what `checkV41Deployment` returns, with the
 * schema version and, under --against-log, the reconciliation. report-schema.ts joins it to V4's report in the
 * generated check-report.schema.json; `generation: "V4.1"` tells the two apart.
 */
import { z } from "zod";

const count = z.int().nonnegative();
const bytes = z.number().describe("bytes");
/** A JSON number that a custom config may leave unknown (NaN in the library, null in JSON). */
const maybe = z.number().nullable();
const ints = z.array(z.int());

const V41ModelSchema = z
  .strictObject({
    name: z.string(),
    generation: z.literal("V4.1"),
    hfId: z.string().describe("the Hugging Face id; empty for a custom config"),
    numHiddenLayers: count.describe("target layers L"),
    headDim: count,
    qkRopeHeadDim: count,
    qkNopeHeadDim: count,
    indexHeadDim: count,
    slidingWindow: count.describe("SWA window W"),
    compressRatios: ints.describe("one ratio (0, 1, 2) per layer, DSpark stages last"),
    kvSourceLayerIds: ints.describe("layers owning the compressed KV, index keys and pair state"),
    indexSourceLayerIds: ints,
    candidateSourceLayerId: z.int(),
    dsparkTargetLayerIds: ints,
    draftLayers: count.describe("DSpark stages"),
    dsparkBlockSize: maybe.describe("DSpark γ; null when the config has none"),
    maxPositionEmbeddings: count,
    contextLen: count,
    numAttentionHeads: maybe,
    oGroups: maybe,
    nRoutedExperts: maybe,
    moeIntermediateSize: maybe,
    checkpointGiB: maybe.describe("null when the config gives no checkpoint size"),
  })
  .describe("the V4.1 model as sized");

const V41SizingConfigSchema = z
  .strictObject({
    model: V41ModelSchema,
    pageSize: count,
    contextLen: count,
    isSpeculative: z.boolean(),
    draftTokens: count.describe("D: DSpark block size + 1, 0 without speculation"),
    maxRunningRequests: count.nullable(),
    swaCapTokens: count.nullable().describe("cap mode's SWA tokens (from a log); null: ratio mode"),
    swaFullTokensRatio: z.number(),
    maxTotalTokens: count.nullable().optional(),
  })
  .describe("what the configurator was run with");

const LoggedPoolSizesSchema = z
  .strictObject({ full: count, swa: count, c4: count, c128: count, c4State: count, c128State: count })
  .describe("the `DSV4 pool sizes` line");

const ConfiguratorSchema = z
  .strictObject({
    kvBytesPerToken: count,
    indexBytesPerToken: count,
    swaKvBytesPerToken: count,
    draftFactor: z.number().describe("(L + 1) / L with DSpark, else 1"),
    compressedBytesPerFullToken: z.number(),
    bytesPerFullToken: z.number().describe("`bytes_per_full_token` of the memory line"),
    bytesPerSwaToken: z.number(),
    mode: z.enum(["cap", "ratio"]).describe("SWA sizing mode"),
    sources: z.record(z.string(), ints).describe("KV source layers per ratio"),
    pairRingSize: count.describe("R₂: the ratio-2 pair-state ring"),
    pricedMaxRunningRequests: count,
    numReqSlots: count,
    c2StateFixedBytes: bytes,
    swaFixedBytes: bytes,
    fullToken: count.describe("`full_token` of the memory line"),
    pools: LoggedPoolSizesSchema,
    profiledPools: LoggedPoolSizesSchema.describe("the pool sizes before --max-total-tokens"),
  })
  .describe("SGLang's DSV4PoolConfigurator as the dev-dsv41 servers ran it");

const V41PoolSchema = z.strictObject({
  id: z.enum(["swa-kv", "c2-kv", "c2-indexer-k", "c1-kv", "c1-indexer-k", "c2-pair-state", "draft-swa-kv"]),
  name: z.string(),
  dtype: z.string(),
  layers: count,
  shapePerLayer: z.array(count),
  bytesPerLayer: bytes,
  totalBytes: bytes.describe("allocated"),
  unitBytes: bytes,
  estimatedBytes: bytes.describe("reserved by the configurator"),
  gapBytes: bytes.describe("allocated − reserved"),
});

const PoolInitLineSchema = z
  .strictObject({
    worker: z.enum(["target", "draft"]),
    maxNumReqs: count,
    swaSize: count,
    c4Size: count,
    c4LogicalSize: count,
    c128Size: count,
    c4StatePoolSize: count,
    c128StatePoolSize: count,
  })
  .describe("an `Initialize DeepSeekV4TokenToKVPool` line");

const V41SizingSchema = z.strictObject({
  configurator: ConfiguratorSchema,
  maxRunningRequests: count,
  pools: z.array(V41PoolSchema),
  allocatedBytes: bytes,
  reservedBytes: bytes,
  unusedBytes: bytes.describe("budget − allocated: negative when the rank takes more than reserved"),
  poolInitLines: z.array(PoolInitLineSchema),
  warnings: z.array(
    z.strictObject({
      kind: z.enum(["layout-blind-low-ratio", "draft-layers", "swa-padding"]),
      bytes,
      message: z.string(),
    }),
  ),
});

const V41PairRingSchema = z
  .strictObject({
    isSpeculative: z.boolean(),
    ringSize: count.describe("R₂ as SGLang allocates it"),
    verifyWidth: count.describe("the widest block a verify writes (1 without speculation)"),
    servedDraftTokens: count.describe("the widest verify block R₂ serves on SGLang's target-verify writer"),
    ok: z.boolean(),
    counterexample: z.array(z.string()).nullable().describe("a shortest losing batch sequence, when not ok"),
  })
  .describe("the ratio-2 pair-state ring against the verify width (V41-R1)");

const V41ErrorSchema = z.strictObject({
  code: z.string().describe("error code (docs/errors.md)"),
  rule: z.string().nullable().describe("the V4.1 start-up rule (V41-…); null for a sizing refusal"),
  field: z.string(),
  value: z.unknown().optional(),
  message: z.string(),
});

/** The shape of `checkV41Deployment`'s report (and of a V4.1 section's report under --against-log). */
export const v41ReportShape = {
  ok: z.boolean(),
  generation: z.literal("V4.1").describe("a DeepSeek-V4.1 report"),
  model: z.strictObject({
    name: z.string(),
    resolvedAs: z.string(),
    kvSourceLayerIds: ints,
    draftLayers: count,
  }),
  notes: z
    .array(z.strictObject({ field: z.string(), value: z.unknown(), reason: z.string() }))
    .describe("what was defaulted, and why"),
  availableBytes: bytes.describe("the KV budget sized for"),
  budget: z.record(z.string(), z.unknown()).describe("how the budget was built"),
  config: V41SizingConfigSchema.nullable().describe("null when a start-up rule refused the arguments first"),
  sizing: V41SizingSchema.nullable(),
  pairRing: V41PairRingSchema.nullable().describe("null when a start-up rule refused the arguments first"),
  errors: z.array(V41ErrorSchema),
  warnings: z.array(z.string()),
  notChecked: z.array(z.string()).describe("what the V4.1 check does not check yet"),
};
