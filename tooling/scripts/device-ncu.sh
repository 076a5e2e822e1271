#!/usr/bin/env bash
# Nsight Compute over the compress benchmark's cases (one case per ncu run): per-kernel duration, DRAM / L2 bytes,
# grid, block, registers, achieved occupancy. Verify rows keep the L2 warm (--cache-control none); the L2-cold rows
# flush it before each kernel (--cache-control all). Output: $OUT/ncu.txt.
#   bash .device/run.sh 'bash tooling/scripts/device-ncu.sh'
set -uo pipefail
out="${OUT:-$PWD/device-out}"
mkdir -p "$out"
# The compress benchmark (packages/compress/bench/compress.mjs) runs on the bench build (packages/kernels-cuda build:native:bench; BENCH_ADDON names another).
export DSV4KV_ADDON_PATH="${BENCH_ADDON:-$PWD/packages/kernels-cuda/build-bench/Release/dsv4kv_kernels.node}"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
m=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,launch__grid_size,launch__block_size
m=$m,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,launch__occupancy_limit_registers
cd packages/compress
run_case() { # name, cache-control
  echo "### $1 (cache $2)" >> "$out/ncu.txt"
  timeout 60 "$NCU" --clock-control none --cache-control "$2" --metrics "$m" --csv -c "${NCU_COUNT:-6}" \
    -k 'regex:Compress|Write|Decode|Prefill|Pool' node bench/compress.mjs --reps 5 --iters 1 --only "$1" \
    2>&1 | grep -E '^"' >> "$out/ncu.txt"
}
for c in "c4 verify D=4" "c4 verify D=8" "c128 verify D=4" "c128 verify D=8" "online c128 verify D=4" \
  "online c128 verify D=8" "online c128 decode B=8"; do run_case "$c" none; done
for c in "c4 chunk" "c128 chunk" "online c128 chunk 4096" "c4 decode" "c128 decode" "online c128 decode B=256"; do
  run_case "$c" all
done
