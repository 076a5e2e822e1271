#!/usr/bin/env bash
# Runs every test of the workspace on a fresh machine (no pnpm needed beforehand):
# installs pnpm and the locked dependencies, builds (the CUDA addon too when nvcc is present), runs each
# package's vitest suite through turbo, then `pnpm lint`, then prints one line "N passed, N failed, N skipped"
# counted from the vitest JSON reports plus one for lint. Exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
# --- Chromium for the HTML report's browser tests (Debian's package, no browser download). They fail, never skip,
# without it; CI runs as root on a clean Debian machine, so install it there (about a minute), log out of the way.
chromium_bin="${DSV4KV_CHROMIUM:-/usr/bin/chromium}"
if [ ! -x "$chromium_bin" ]; then
  chromium_log="${TMPDIR:-/tmp}/dsv4kv-chromium-install.log"
  if [ -n "${DSV4KV_CHROMIUM:-}" ]; then
    echo "DSV4KV_CHROMIUM=$DSV4KV_CHROMIUM is not an executable: the browser tests will fail" >&2
  elif [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "no Chromium at $chromium_bin and no way to install it here (needs root and apt-get):" \
      "the browser tests will fail; install Debian's chromium or set DSV4KV_CHROMIUM" >&2
  else
    echo "installing Chromium for the browser tests (apt-get install -y chromium, log: $chromium_log)" >&2
    chromium_started=$SECONDS
    if { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; } >"$chromium_log" 2>&1; then
      echo "installed Chromium in $((SECONDS - chromium_started)) s" >&2
    else
      cat "$chromium_log" >&2
      echo "could not install Chromium (apt-get output above): the browser tests will fail" >&2
    fi
  fi
fi
# --- end of the Chromium block
source tooling/scripts/ensure-pnpm.sh
pnpm install --frozen-lockfile >&2 || { echo "0 passed, 1 failed"; exit 1; }
# Old reports must not be counted: turbo restores .vitest/ from its cache for packages it does not rerun.
rm -rf packages/*/.vitest tooling/*/.vitest
# Through the wrapper: it sets DSV4KV_TOOLCHAIN, which keys the prebuilt addons' build by the CUDA toolchain.
node tooling/scripts/turbo.mjs run test --continue --concurrency=2
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
