#!/usr/bin/env bash
# Fresh machine to main job: installs pnpm and the locked dependencies, builds every package, then runs
# `dsv4-kv` on its embedded default configuration. Extra arguments go to dsv4-kv. The install and build output
# goes to .setup.log (gitignored) and is shown only when a step fails, so the report is what the screen shows.
set -euo pipefail
cd "$(dirname "$0")/../.."
LOG=.setup.log
: >"$LOG"

# Runs a setup step with its output in the log; on failure shows the end of the log and stops.
step() {
  local what=$1
  shift
  echo "setup: $what" >&2
  if ! "$@" >>"$LOG" 2>&1; then
    echo "setup: $what failed; the last 200 lines of $LOG:" >&2
    tail -n 200 "$LOG" >&2
    exit 1
  fi
}

source tooling/scripts/ensure-pnpm.sh
step "installing the locked dependencies" pnpm install --frozen-lockfile
# `pnpm build` runs turbo through tooling/scripts/turbo.mjs (the CUDA toolchain is part of the cache key).
step "building every package (log: $LOG)" pnpm build
exec node packages/cli/dist/bin.js "$@"
