#!/usr/bin/env bash
# One full GPU-machine verification (run through .device/run.sh from the repository root, after a build and
# packing the tree onto the GPU machine; docs/reference/engineering.md §4.6): every package's vitest suite with the
# GPU present, compute-sanitizer memcheck over every GPU suite and racecheck over the planner agreement suite, then
# the kernel benchmarks. Results go to $OUT (at most 8 files): summary.txt, env.txt, tests.log, memcheck.log,
# racecheck.log, bench.md (every benchmark's table), bench-compress.json, vitest-reports.json.
# SKIP_BENCH=1 leaves the benchmarks out (a correctness run). Steps run in order of importance
# (tests, benchmarks, sanitizers), each with a timeout, so a run cut at its limit still returns what finished.
#   bash .device/run.sh 'bash tooling/scripts/device-all.sh'
set -uo pipefail
out="${OUT:-$PWD/device-out}"
mkdir -p "$out"
root="$PWD"
CS=/usr/local/cuda/bin/compute-sanitizer
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader; uname -r; node --version; date -u; } > "$out/env.txt" 2>&1
# The suites load the platform package's prebuilt CUDA binary (what `turbo build` made), never a stale
# packages/kernels-cuda/build/Release that the pack may carry; env.txt records which file probe() loaded.
prebuilt="$root/packages/kernels-cuda-linux-x64/dist/cuda/dsv4kv_kernels.node"
if [ -z "${DSV4KV_ADDON_PATH:-}" ] && [ -f "$prebuilt" ]; then export DSV4KV_ADDON_PATH="$prebuilt"; fi
(cd "$root/packages/kernels-cuda" && node -e 'const p=require("./dist/index.cjs").probe();
console.log(`addon: ${JSON.stringify(p.addon)} ok=${p.ok} ${p.reason}`)') >> "$out/env.txt" 2>&1
# shellcheck source=device-lib.sh
source "$root/tooling/scripts/device-lib.sh"
echo "== tests (GPU present)" | tee -a "$out/summary.txt"
for dir in packages/errors packages/planner packages/memory-pool packages/server-config packages/kernels-cuda \
  packages/agreement-tests packages/online-mtp-controller packages/compress; do
  step tests.log 120 "$dir" vitest run
done
# The CLI's browser tests need Chromium, which the GPU machine does not have (.ci/run runs them).
step tests.log 120 packages/cli vitest run --exclude 'test/browser/**'
node tooling/scripts/summarize-vitest.mjs . | tee -a "$out/summary.txt"
# The data-level proof on the GPU backend (docs/reference/compress-kernels.md §10): one line of JSON per scenario.
sim() { echo "simulate compress $* -> $(cd "$root" && timeout 120 node packages/cli/dist/bin.js simulate compress \
  --backend gpu --json "$@" 2>&1 | tr -d '\n' | head -c 1500) rc=${PIPESTATUS[0]}" >> "$out/tests.log"; }
echo "== simulate compress --backend gpu" | tee -a "$out/summary.txt"
sim --ratio 4 --draft-tokens 10 --adaptive --steps 300 --seed 11
sim --ratio 4 --req-ring --draft-tokens 10 --steps 300 --seed 12
sim --ratio 4 --draft-tokens 8 --steps 300 --seed 13 --state-dtype bf16
sim --ratio 128 --draft-tokens 8 --adaptive --steps 300 --seed 14
sim --ratio 128 --online --draft-tokens 8 --adaptive --steps 300 --seed 15
sim --ratio 128 --online --draft-tokens 8 --steps 300 --seed 16 --state-dtype bf16
sim --ratio 4 --draft-tokens 8 --pad-formula pre-fix-device --steps 300 --seed 17
sim --ratio 4 --draft-tokens 11 --steps 300 --seed 18
grep -a '^simulate compress' "$out/tests.log" | sed -E 's/"(backend|ringSize|swaPageSize|padFormula)":[^,]*,//g' \
  | cut -c1-400 | tee -a "$out/summary.txt"
node -e 'const fs=require("fs");const r={};for(const p of fs.readdirSync("packages")){try{r[p]=JSON.parse(fs.readFileSync(`packages/${p}/.vitest/report.json`,"utf8"))}catch{}}fs.writeFileSync(process.argv[1],JSON.stringify(r))' "$out/vitest-reports.json"
echo "== benchmarks" | tee -a "$out/summary.txt"
# The benchmarks run on the bench build (the released addon has no bench entry): build it before packing
# (`pnpm --filter @dsv4-kv/kernels-cuda build:native:bench`) and carry packages/kernels-cuda/build-bench, or name one.
bench_addon="${BENCH_ADDON:-$root/packages/kernels-cuda/build-bench/Release/dsv4kv_kernels.node}"
onbench=(env DSV4KV_ADDON_PATH="$bench_addon")
if [ -z "${SKIP_BENCH:-}" ]; then
  step bench.md 150 packages/compress "${onbench[@]}" node bench/compress.mjs --out "$out/bench-compress.json"
  step bench.md 100 packages/online-mtp-controller "${onbench[@]}" node bench/bench.mjs
  step bench.md 60 packages/planner "${onbench[@]}" node bench/gpu-kernels.bench.mjs
fi
echo "== memcheck" | tee -a "$out/summary.txt"
san=("$CS" --tool memcheck --target-processes all --error-exitcode 9 --print-limit 30)
step memcheck.log 90 packages/kernels-cuda "${san[@]}" vitest run
step memcheck.log 90 packages/agreement-tests env DSV4KV_CAMPAIGN=200 "${san[@]}" vitest run
step memcheck.log 100 packages/online-mtp-controller "${san[@]}" vitest run test/invariants-gpu.test.ts
step memcheck.log 120 packages/compress "${san[@]}" vitest run --exclude 'test/bindings/**'
# kernels-cuda's raw ring compress bindings, tested in compress (plan rows from the planner: docs/decisions.md D47)
step memcheck.log 90 packages/compress "${san[@]}" vitest run test/bindings/compress.test.ts
echo "== racecheck" | tee -a "$out/summary.txt"
step racecheck.log 60 packages/agreement-tests env DSV4KV_CAMPAIGN=100 "$CS" --tool racecheck --target-processes all --error-exitcode 9 --print-limit 30 vitest run test/agreement.test.ts
step racecheck.log 150 packages/kernels-cuda "$CS" --tool racecheck --target-processes all --error-exitcode 9 --print-limit 30 vitest run test/online-mtp.test.ts
step racecheck.log 150 packages/compress "$CS" --tool racecheck --target-processes all --error-exitcode 9 --print-limit 30 vitest run test/bindings/compress.test.ts
step racecheck.log 150 packages/compress "$CS" --tool racecheck --target-processes all --error-exitcode 9 --print-limit 30 vitest run --exclude 'test/bindings/**'
cat "$out/summary.txt"
