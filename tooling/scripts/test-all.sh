#!/usr/bin/env bash
# Runs every test of the workspace on a fresh machine (no pnpm needed beforehand):
# installs pnpm and the locked dependencies, builds (the CUDA addon too when nvcc is present), runs each
# package's vitest suite through turbo, then `pnpm lint`, then prints one line "N passed, N failed, N skipped"
# counted from the vitest JSON reports plus one for lint. Exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
source tooling/scripts/ensure-pnpm.sh
pnpm install --frozen-lockfile >&2 || { echo "0 passed, 1 failed"; exit 1; }
# Old reports must not be counted: turbo restores .vitest/ from its cache for packages it does not rerun.
rm -rf packages/*/.vitest tooling/*/.vitest
pnpm exec turbo run test --continue --concurrency=2
turbo_rc=$?
# Lint (Biome, clang-format, typecheck, publint/attw, layer and document-reference checks) counts as one more test.
if pnpm lint --output-logs=errors-only; then lint_status=passed; else lint_status=failed; fi
summary="$(node tooling/scripts/summarize-vitest.mjs . --extra "pnpm lint=$lint_status")"
summary_rc=$?
# The summary line must be the last line printed.
if [ $turbo_rc -ne 0 ] && [ $summary_rc -eq 0 ]; then
  echo "turbo failed (exit $turbo_rc) outside the tests: see above" >&2
  summary_rc=$turbo_rc
fi
printf '%s\n' "$summary"
exit $summary_rc
