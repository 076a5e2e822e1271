#!/usr/bin/env bash
# Builds the anatomy binary here (nvcc, sm_90 SASS, static cudart) into .anatomy/ at the repository root.
# ANATOMY_CHECK=1: run only nvcc's front end on the two programs (-cuda, nothing written): names, includes and types
# are checked without a GPU or binaries (test/anatomy-build.test.ts does this wherever nvcc is).
set -euo pipefail
root="$(cd "$(dirname "$0")/../../../.." && pwd)"
pkg="$root/packages/kernels-cuda"
flags=(-O3 -std=c++17 --expt-relaxed-constexpr -lineinfo -DDSV4KV_HAVE_CUDA=1 -gencode arch=compute_90,code=sm_90)
# compile OUT SRC [more nvcc flags]: one program, built, or front-end checked under ANATOMY_CHECK.
compile() {
  local out="$1" src="$2"
  shift 2
  if [ -n "${ANATOMY_CHECK:-}" ]; then
    nvcc "${flags[@]}" "$@" -cuda -o /dev/null "$src"
  else
    nvcc "${flags[@]}" -cudart static "$@" -o "$out" "$src"
  fi
}
if [ -n "${ANATOMY_CHECK:-}" ]; then
  compile - "$pkg/bench/anatomy/anatomy.cu" -I"$pkg/native"
  compile - "$pkg/bench/anatomy/copy_floor.cu" -I"$pkg/native"
  echo "checked bench/anatomy/anatomy.cu and bench/anatomy/copy_floor.cu (nvcc front end)"
  exit 0
fi
mkdir -p "$root/.anatomy"
compile "$root/.anatomy/anatomy" "$pkg/bench/anatomy/anatomy.cu" -I"$pkg/native"
# BEFORE=<git rev>: also build the planner kernels of that revision (.anatomy/anatomy-before), same harness.
if [ -n "${BEFORE:-}" ]; then
  tmp=$(mktemp -d)
  (cd "$root" && git archive "$BEFORE" packages/kernels-cuda/native | tar -x -C "$tmp")
  cp -r "$pkg/native/online_mtp" "$tmp/packages/kernels-cuda/native/"  # the harness's online-MTP part: current
  # and its bench/ harness: the second -I finds the current native/bench/ when that revision has none.
  compile "$root/.anatomy/anatomy-before" "$pkg/bench/anatomy/anatomy.cu" -DANATOMY_BEFORE \
    -I"$tmp/packages/kernels-cuda/native" -I"$pkg/native"
  rm -rf "$tmp"
fi
# VARIANTS="name:-DFLAG[,-DFLAG2] ...": more builds of the current kernels with build-time switches
# (.anatomy/anatomy-name).
for v in ${VARIANTS:-}; do
  flags_v="${v#*:}"
  # shellcheck disable=SC2086  # one word per flag
  compile "$root/.anatomy/anatomy-${v%%:*}" "$pkg/bench/anatomy/anatomy.cu" ${flags_v//,/ } -I"$pkg/native"
done
# The L2-cold copy floor of writePrefix b256 D8 (copy_floor.cu): .anatomy/copy-floor, runs with no arguments.
compile "$root/.anatomy/copy-floor" "$pkg/bench/anatomy/copy_floor.cu" -I"$pkg/native"
echo "built $root/.anatomy/anatomy and $root/.anatomy/copy-floor"
