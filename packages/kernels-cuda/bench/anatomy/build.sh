#!/usr/bin/env bash
# Builds the anatomy binary here (nvcc, sm_90 SASS, static cudart) into .anatomy/ at the repository root.
set -euo pipefail
root="$(cd "$(dirname "$0")/../../../.." && pwd)"
pkg="$root/packages/kernels-cuda"
mkdir -p "$root/.anatomy"
nvcc -O3 -std=c++17 --expt-relaxed-constexpr -lineinfo -DDSV4KV_HAVE_CUDA=1 -gencode arch=compute_90,code=sm_90 \
  -cudart static -I"$pkg/native" -o "$root/.anatomy/anatomy" "$pkg/bench/anatomy/anatomy.cu"
# BEFORE=<git rev>: also build the planner kernels of that revision (.anatomy/anatomy-before), same harness.
if [ -n "${BEFORE:-}" ]; then
  tmp=$(mktemp -d)
  (cd "$root" && git archive "$BEFORE" packages/kernels-cuda/native | tar -x -C "$tmp")
  cp -r "$pkg/native/online_mtp" "$tmp/packages/kernels-cuda/native/"  # the harness's online-MTP part: current
  nvcc -O3 -std=c++17 --expt-relaxed-constexpr -lineinfo -DDSV4KV_HAVE_CUDA=1 -DANATOMY_BEFORE -gencode arch=compute_90,code=sm_90 \
    -cudart static -I"$tmp/packages/kernels-cuda/native" -o "$root/.anatomy/anatomy-before" "$pkg/bench/anatomy/anatomy.cu"
  rm -rf "$tmp"
fi
# VARIANTS="name:-DFLAG[,-DFLAG2] ...": more builds of the current kernels with build-time switches
# (.anatomy/anatomy-name).
for v in ${VARIANTS:-}; do
  flags="${v#*:}"
  # shellcheck disable=SC2086  # one word per flag
  nvcc -O3 -std=c++17 --expt-relaxed-constexpr -lineinfo -DDSV4KV_HAVE_CUDA=1 ${flags//,/ } -gencode arch=compute_90,code=sm_90 \
    -cudart static -I"$pkg/native" -o "$root/.anatomy/anatomy-${v%%:*}" "$pkg/bench/anatomy/anatomy.cu"
done
# The L2-cold copy floor of writePrefix b256 D8 (copy_floor.cu): .anatomy/copy-floor, runs with no arguments.
nvcc -O3 -std=c++17 --expt-relaxed-constexpr -lineinfo -DDSV4KV_HAVE_CUDA=1 -gencode arch=compute_90,code=sm_90 \
  -cudart static -I"$pkg/native" -o "$root/.anatomy/copy-floor" "$pkg/bench/anatomy/copy_floor.cu"
echo "built $root/.anatomy/anatomy and $root/.anatomy/copy-floor"
