import { readFileSync, readdirSync } from "node:fs";
import { test } from "vitest";
import { MODEL_PRESETS } from "../src/index.js";
import { parseVllmLog, reconcileVllmLog } from "../src/vllm-log/index.js";
const DIR = new URL("./fixtures/vllm-logs/", import.meta.url);
test("probe", () => {
  for (const f of readdirSync(DIR).filter((f) => f.endsWith(".txt"))) {
    const model0 = /0731|nepenth|flycockpit|b300/.test(f) ? "DeepSeek-V4-Flash-0731" : "DeepSeek-V4-Flash";
    const p = parseVllmLog(readFileSync(new URL(f, DIR), "utf8"), { statedModel: model0 });
    const model = model0;
    const c = reconcileVllmLog(p, { model: MODEL_PRESETS[model]!, modelName: model });
    console.log(`== ${f} v=${c.version} ${c.nothingCompared ?? ""}`);
    for (const x of c.figures) console.log(`  ${x.line} ${x.name} ${x.role} logged=${x.logged} ours=${x.computed} ${x.verdict ?? ""} ${x.cause ? `[${x.cause.id}] ${x.cause.text.slice(0, 90)}` : ""}`);
  }
});
