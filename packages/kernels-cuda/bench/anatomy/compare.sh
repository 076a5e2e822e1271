#!/usr/bin/env bash
# Same-run comparison of anatomy builds on the GPU machine (no Node needed). Build here first, e.g.
#   BEFORE=HEAD VARIANTS="name:-DFLAG" bash packages/kernels-cuda/bench/anatomy/build.sh
#   mkdir -p .anatomy-pack && tar -cJf .anatomy-pack/bins.tar.xz .anatomy
# then, through the device tool with carry [".anatomy-pack"]:
#   VS="anatomy anatomy-before" bash packages/kernels-cuda/bench/anatomy/compare.sh
# Runs the planner timings of every binary in VS twice, interleaved (A B A B, so drift shows), dumps each binary's
# SASS and, with NCU_ON=1, profiles the four small planner kernels of `anatomy` (ANATOMY_NCU_SMALL: instructions
# executed per SASS line). Writes $OUT/anatomy.txt and $OUT/prof.tgz.
set -u
out="${OUT:-$PWD/anatomy-out}"
mkdir -p "$out" /tmp/prof
[ -f .anatomy-pack/bins.tar.xz ] && tar -xJf .anatomy-pack/bins.tar.xz
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/anatomy.txt"
VS="${VS:-anatomy anatomy-before}"
for r in 1 2; do
  for v in $VS; do
    echo "=== $v run $r" >> "$out/anatomy.txt"
    ANATOMY_PLANNER_ONLY=1 timeout 120 "./.anatomy/$v" >> "$out/anatomy.txt" 2>&1
  done
done
CUOBJ=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
for v in $VS; do "$CUOBJ" --dump-sass "./.anatomy/$v" > "/tmp/prof/sass-$v.txt" 2>&1; done
if [ "${NCU_ON:-0}" = 1 ]; then
  NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || ls /usr/local/cuda/bin/ncu)
  ANATOMY_NCU_SMALL=1 timeout 150 "$NCU" --clock-control none --cache-control none --section SourceCounters --section WarpStateStats \
    --section LaunchStats -k 'regex:PrefillSmall|DecodePaged|DecodeRing' --launch-skip 40 --launch-count 4 -o /tmp/rep-anatomy -f \
    ./.anatomy/anatomy --ncu > /tmp/prof/ncu.log 2>&1
  "$NCU" -i /tmp/rep-anatomy.ncu-rep --page source --csv --print-source sass > /tmp/prof/src-anatomy.csv 2>&1
fi
tar -czf "$out/prof.tgz" -C /tmp prof
ls -la "$out"
