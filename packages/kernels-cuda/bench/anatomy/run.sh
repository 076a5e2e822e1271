#!/usr/bin/env bash
# Anatomy run on the GPU machine (no Node needed). Build here first:
#   bash packages/kernels-cuda/bench/anatomy/build.sh      (writes .anatomy/anatomy, ignored by git)
# then, through the device tool with carry [".anatomy"]:
#   bash packages/kernels-cuda/bench/anatomy/run.sh
# Writes $OUT/anatomy.txt (timings) and $OUT/anatomy-ncu.tgz (Nsight Compute details, source counters, SASS).
set -uo pipefail
out="${OUT:-$PWD/anatomy-out}"
bin="${ANATOMY_BIN:-$PWD/.anatomy/anatomy}"
mkdir -p "$out" /tmp/anatomy-ncu
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader; date -u; } > "$out/anatomy.txt"
timeout 240 "$bin" 2>&1 | tee -a "$out/anatomy.txt"
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || ls /usr/local/cuda/bin/ncu)
if [ -n "${NCU:-}" ] && [ "${ANATOMY_NCU:-1}" = 1 ]; then
  # 8 kernels per round in --ncu mode; skip 5 rounds (warm), profile one round of the 7 named kernels.
  timeout 200 "$NCU" --clock-control none --cache-control none \
    --section WarpStateStats --section SchedulerStats --section LaunchStats --section SpeedOfLight --section SourceCounters \
    -k 'regex:DecodeKernel|DecodeMin|PrefillSmall|WritePrefixScalar|MixKernel' --launch-skip 35 --launch-count 7 \
    -o /tmp/anatomy-ncu/rep -f "$bin" --ncu > /tmp/anatomy-ncu/ncu.log 2>&1
  "$NCU" -i /tmp/anatomy-ncu/rep.ncu-rep --page details --csv > /tmp/anatomy-ncu/details.csv 2>&1
  "$NCU" -i /tmp/anatomy-ncu/rep.ncu-rep --page source --csv --print-source sass > /tmp/anatomy-ncu/source.csv 2>&1
  "$NCU" -i /tmp/anatomy-ncu/rep.ncu-rep --page raw --csv --metrics gpu__time_duration.sum,smsp__average_warp_latency_per_inst_issued.ratio > /tmp/anatomy-ncu/raw.csv 2>&1
fi
CUOBJ=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
"$CUOBJ" --dump-sass "$bin" > /tmp/anatomy-ncu/sass.txt 2>&1
tar -czf "$out/anatomy-ncu.tgz" -C /tmp anatomy-ncu
ls -la "$out"
