#!/usr/bin/env bash
# pnpm pinned by package.json's packageManager. corepack's signature check fails on our machines, so install
# with npm. Sourced by the setup and test entry points.
want="$(node -p 'require("./package.json").packageManager.split("@")[1]')"
if ! command -v pnpm >/dev/null 2>&1 || [ "$(pnpm --version 2>/dev/null)" != "$want" ]; then
  echo "installing pnpm@$want with npm" >&2
  npm install -g "pnpm@$want" >&2 || { echo "could not install pnpm@$want" >&2; exit 2; }
fi
