#!/usr/bin/env bash
# One device session (run through .device/run.sh from the repo root): GPU tests, benchmarks, then the GPU tests
# again under compute-sanitizer memcheck and racecheck (smaller random campaign). Logs go to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
CS=/usr/local/cuda/bin/compute-sanitizer
VT="node $PWD/node_modules/vitest/vitest.mjs run"
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; uname -r; } > "$OUT/env.txt" 2>&1
echo "== tests" ; (cd packages/kernels-cuda && timeout 120 $VT) > "$OUT/tests.log" 2>&1; echo "kernels-cuda rc=$?" | tee -a "$OUT/tests.log"
(cd packages/agreement-tests && timeout 200 $VT) >> "$OUT/tests.log" 2>&1; echo "agreement rc=$?" | tee -a "$OUT/tests.log"
grep -E "Tests |Test Files|campaign coverage|FAIL|✗|×" "$OUT/tests.log" | head -40
echo "== bench"; (cd packages/kernels-cuda && BENCH_OUT="$OUT/bench.json" timeout 90 node bench/bench.mjs) > "$OUT/bench.md" 2>&1; echo "bench rc=$?"; cat "$OUT/bench.md"
for tool in memcheck racecheck; do
  echo "== $tool"
  (cd packages/agreement-tests && DSV4KV_CAMPAIGN=${SAN_CAMPAIGN:-300} timeout ${SAN_TIMEOUT:-100} $CS --tool $tool --target-processes all --print-limit 50 $VT test/validation.test.ts test/agreement.test.ts -t "${SAN_FILTER:-.}") > "$OUT/$tool.log" 2>&1
  echo "$tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Tests |not supported|Error" "$OUT/$tool.log" | head -12
done
