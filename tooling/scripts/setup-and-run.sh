#!/usr/bin/env bash
# Fresh machine to main job: installs pnpm and the locked dependencies, builds every package, then runs
# `dsv4-kv` on its embedded default configuration. Extra arguments go to dsv4-kv.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tooling/scripts/ensure-pnpm.sh
pnpm install --frozen-lockfile >&2
pnpm exec turbo run build >&2
exec node packages/cli/dist/bin.js "$@"
