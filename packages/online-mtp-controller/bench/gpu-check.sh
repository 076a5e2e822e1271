#!/usr/bin/env bash
# One GPU-machine run for the online c128 MTP work: binding + controller GPU tests, the benchmark (with --variants
# when VARIANTS=1), then compute-sanitizer memcheck over the GPU tests (fp32 and bf16) and the GPU simulation.
# Run from the repository root (e.g. through .device/run.sh); logs go to $OUT (or ./gpu-check-out).
set -uo pipefail
out="${OUT:-$PWD/gpu-check-out}"
mkdir -p "$out"
root="$PWD"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader | tee "$out/device.txt"
step() { # name, timeout seconds, command...
  local name=$1 t=$2; shift 2
  local t0=$SECONDS
  timeout "$t" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  echo "== $name: rc=$rc in $((SECONDS - t0)) s; $(grep -aE 'Tests +[0-9]|ERROR SUMMARY' "$out/$name.log" | tr -s ' ' | tail -2 | tr '\n' ' ')" | tee -a "$out/summary.txt"
}
cd "$root/packages/kernels-cuda"
step kc-tests 90 vitest run test/online-mtp.test.ts test/probe.test.ts
cd "$root/packages/online-mtp-controller"
step ctl-tests 150 vitest run
# The bench build (build:native:bench, or :variants with VARIANTS=1); BENCH_ADDON names another.
bench_addon="${BENCH_ADDON:-$root/packages/kernels-cuda/build-bench/Release/dsv4kv_kernels.node}"
step bench "${BENCH_TIMEOUT:-150}" env DSV4KV_ADDON_PATH="$bench_addon" node bench/bench.mjs "$out/bench.json" ${VARIANTS:+--variants}
san=(compute-sanitizer --tool memcheck --target-processes all --error-exitcode 9 --print-limit 20)
cd "$root/packages/kernels-cuda"
step memcheck-kc 120 "${san[@]}" vitest run test/online-mtp.test.ts
cd "$root/packages/online-mtp-controller"
step memcheck-ctl "${MEMCHECK_TIMEOUT:-200}" "${san[@]}" vitest run test/invariants-gpu.test.ts
grep -aE "^\| |^Device|^###" "$out/bench.log" | head -400 >"$out/bench.md"
cat "$out/summary.txt"
