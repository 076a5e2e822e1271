#!/usr/bin/env bash
# One device session (run through .device/run.sh from the repo root): the planner's GPU tests, the agreement suite,
# benchmarks (this build, and a previous build when BENCH_BEFORE names its .node), then the GPU tests again under
# compute-sanitizer memcheck and racecheck (smaller random campaign). Logs go to $OUT. Every step has a timeout, so
# the whole session stays inside about 5 minutes. At most 8 files come back: env, tests, bench(-before) .md/.json,
# memcheck, racecheck.
#   bash .device/run.sh 'BENCH_BEFORE=.device/old/dsv4kv_kernels.node bash packages/kernels-cuda/scripts/device-run.sh'
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
CS=/usr/local/cuda/bin/compute-sanitizer
VT="node $PWD/node_modules/vitest/vitest.mjs run"
# The planner's GPU tests live in packages/planner (docs/decisions.md D47); the probe's stays here.
PLANNER_TESTS="test/planner-async.test.ts test/planner-int64.test.ts"
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; uname -r; } > "$OUT/env.txt" 2>&1
echo "== tests"
(cd packages/kernels-cuda && timeout ${KC_TIMEOUT:-60} $VT test/probe.test.ts) > "$OUT/tests.log" 2>&1; echo "kernels-cuda rc=$?" | tee -a "$OUT/tests.log"
(cd packages/planner && timeout ${KC_TIMEOUT:-60} $VT $PLANNER_TESTS) >> "$OUT/tests.log" 2>&1; echo "planner rc=$?" | tee -a "$OUT/tests.log"
(cd packages/agreement-tests && timeout ${AG_TIMEOUT:-120} $VT) >> "$OUT/tests.log" 2>&1; echo "agreement rc=$?" | tee -a "$OUT/tests.log"
grep -E "Tests |Test Files|campaign coverage|FAIL|✗|×|AssertionError" "$OUT/tests.log" | head -30
echo "== bench"
(cd packages/planner && BENCH_OUT="$OUT/bench.json" timeout 40 node bench/gpu-kernels.bench.mjs) > "$OUT/bench.md" 2>&1; echo "bench rc=$?"; cat "$OUT/bench.md"
if [ -n "${BENCH_BEFORE:-}" ] && [ -f "$BENCH_BEFORE" ]; then
  echo "== bench, previous build ($BENCH_BEFORE)"
  (cd packages/planner && DSV4KV_ADDON_PATH="$PWD/../../$BENCH_BEFORE" BENCH_OUT="$OUT/bench-before.json" timeout 40 node bench/gpu-kernels.bench.mjs) > "$OUT/bench-before.md" 2>&1
  echo "bench-before rc=$?"; grep -E "^\| (prefill|decode|empty)" "$OUT/bench-before.md"
fi
for tool in memcheck racecheck; do
  echo "== $tool"
  (cd packages/agreement-tests && DSV4KV_CAMPAIGN=${SAN_CAMPAIGN:-200} timeout ${SAN_TIMEOUT:-90} $CS --tool $tool --target-processes all --print-limit 50 $VT test/validation.test.ts test/agreement.test.ts -t "${SAN_FILTER:-.}") > "$OUT/$tool.log" 2>&1
  echo "$tool agreement rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Tests |not supported|Error" "$OUT/$tool.log" | head -8
  (cd packages/planner && timeout ${SAN_KC_TIMEOUT:-60} $CS --tool $tool --target-processes all --print-limit 50 $VT $PLANNER_TESTS) > "$OUT/$tool-kc.tmp" 2>&1
  echo "$tool planner rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Tests |not supported|Error" "$OUT/$tool-kc.tmp" | head -8
  { echo "===== planner GPU tests"; cat "$OUT/$tool-kc.tmp"; } >> "$OUT/$tool.log"; rm -f "$OUT/$tool-kc.tmp"
done
