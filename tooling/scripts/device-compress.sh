#!/usr/bin/env bash
# A focused GPU-machine run for the compress kernels: the kernels-cuda, compress and online-MTP
# controller suites with the GPU present, the compress benchmark, then memcheck and racecheck over the compress and
# online prefill tests (the ring compress binding tests are compress's test/bindings/: docs/decisions.md D47). Same
# conventions as device-all.sh (results under $OUT, at most 8 files).
#   bash .device/run.sh 'bash tooling/scripts/device-compress.sh'
set -uo pipefail
out="${OUT:-$PWD/device-out}"
mkdir -p "$out"
root="$PWD"
CS=/usr/local/cuda/bin/compute-sanitizer
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader; date -u; } > "$out/env.txt" 2>&1
prebuilt="$root/packages/kernels-cuda-linux-x64/dist/cuda/dsv4kv_kernels.node"
if [ -z "${DSV4KV_ADDON_PATH:-}" ] && [ -f "$prebuilt" ]; then export DSV4KV_ADDON_PATH="$prebuilt"; fi
# shellcheck source=device-lib.sh
source "$root/tooling/scripts/device-lib.sh"
for dir in ${SUITES:-packages/kernels-cuda packages/compress packages/online-mtp-controller packages/agreement-tests}; do
  step tests.log 150 "$dir" vitest run
done
# The data-level proof on the GPU backend (docs/reference/compress-kernels.md §10): one line of JSON per scenario.
sim() { echo "simulate compress $* -> $(cd "$root" && timeout 100 node packages/cli/dist/bin.js simulate compress \
  --backend gpu --json "$@" 2>&1 | tr -d '\n' | head -c 1500)" >> "$out/tests.log"; }
if [ -z "${SKIP_SIM:-}" ]; then
  sim --ratio 4 --draft-tokens 10 --adaptive --steps 300 --seed 11
  sim --ratio 128 --online --draft-tokens 8 --adaptive --steps 300 --seed 15
  sim --ratio 4 --draft-tokens 8 --steps 300 --seed 13 --state-dtype bf16
  sim --ratio 4 --draft-tokens 8 --pad-formula pre-fix-device --steps 300 --seed 17
  grep -a '^simulate compress' "$out/tests.log" | cut -c1-600 | tee -a "$out/summary.txt"
fi
# The benchmarks run on the bench build (the released addon has no bench entry): build it before packing
# (`pnpm --filter @dsv4-kv/kernels-cuda build:native:bench`) and carry packages/kernels-cuda/build-bench, or name one.
bench_addon="${BENCH_ADDON:-$root/packages/kernels-cuda/build-bench/Release/dsv4kv_kernels.node}"
onbench=(env DSV4KV_ADDON_PATH="$bench_addon")
if [ -z "${SKIP_BENCH:-}" ]; then
  step bench.md 200 packages/compress "${onbench[@]}" node bench/compress.mjs --reps "${BENCH_REPS:-7}" --parts --out "$out/bench-compress.json"
fi
san=("$CS" --tool memcheck --target-processes all --error-exitcode 9 --print-limit 30)
step memcheck.log 150 packages/kernels-cuda "${san[@]}" vitest run test/online-mtp-prefill.test.ts
step memcheck.log 150 packages/compress "${san[@]}" vitest run test/bindings/compress.test.ts test/gpu-backend.test.ts test/scenario-gpu.test.ts
step memcheck.log 150 packages/online-mtp-controller "${san[@]}" vitest run test/invariants-gpu.test.ts
rc=("$CS" --tool racecheck --target-processes all --error-exitcode 9 --print-limit 30)
step racecheck.log 150 packages/kernels-cuda "${rc[@]}" vitest run test/online-mtp-prefill.test.ts
step racecheck.log 150 packages/compress "${rc[@]}" vitest run test/bindings/compress.test.ts
cat "$out/summary.txt"
